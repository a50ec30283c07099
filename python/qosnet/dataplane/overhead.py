"""The rate-control mechanism's overhead, measured as document 004 §5.2 does: ping-pong
round-trip latency and streaming bandwidth (N messages pumped, the time until the receiver
has them all) over message sizes, with rate control and without (the same agents and
transport, flows unreserved). Runs on the loopback or between two hosts of a namespace
cluster (`cluster`). The agent's CPU is its dispatcher thread's, per Gb/s moved.

With rate control the flows are reserved at ten times what the path can carry (100 Gb/s on
the loopback, 10x the veth links), so the scheduler's IDT/NDT path runs on every packet but
never throttles: this measures the mechanism, as the document's Figs. 9-10 do, not pacing at
the link's nominal rate (which tc's token bucket, with its burst allowance, does not keep).

Runs with and without alternate, and each configuration keeps its best repetition (the
least disturbed by other work on the machine); the spread between repetitions is reported
as the noise against which an overhead of 1% can or cannot be seen.

Nothing here is asserted: the numbers are a benchmark's (`qosnet net bench`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from qosnet.dataplane.cluster import Cluster, HostProcess, available

__all__ = ["BW_SIZES", "PING_SIZES", "Pair", "bandwidth", "local_pair", "ping_pong", "veth_pair"]

PING_SIZES = (4, 64, 1024, 4096, 16384, 65536, 262144, 1048576)
BW_SIZES = (4096, 16384, 65536, 262144, 1048576)


@dataclass
class Pair:
    """A sender and a receiver host, and the reservation rate meaning "at the peak"."""

    tx: HostProcess
    rx: HostProcess
    peak_bps: float
    where: str


@contextmanager
def local_pair(rate_control: bool, echo: bool) -> Iterator[Pair]:
    opts = {"open": True, "send_buffer": 0}
    tx = HostProcess.local(opts)
    rx = HostProcess.local({**opts, "echo": echo, "deliver": echo})
    try:
        pair = Pair(tx, rx, 100e9, "loopback")
        _reserve(pair, rate_control, echo)
        yield pair
    finally:
        tx.close()
        rx.close()


@contextmanager
def veth_pair(rate_control: bool, echo: bool, link_bps: float = 1e9) -> Iterator[Pair]:
    with Cluster(2, link_bps=link_bps) as c:
        tx = c.host(0, open=True)
        rx = c.host(1, open=True, echo=echo, deliver=echo)
        pair = Pair(tx, rx, 10 * link_bps, f"veth at {link_bps / 1e9:g} Gb/s")
        _reserve(pair, rate_control, echo)
        yield pair


def _reserve(pair: Pair, rate_control: bool, echo: bool) -> None:
    if rate_control:
        pair.tx.call("reserve", dst=pair.rx.endpoint, bps=pair.peak_bps)
        if echo:
            pair.rx.call("reserve", dst=pair.tx.endpoint, bps=pair.peak_bps)


def ping_pong(pair: Pair, size: int, count: int) -> float:
    """Median round trip, seconds (after a warm-up tenth)."""
    rtts = pair.tx.call("ping_pong", dst=pair.rx.endpoint, size=size, count=count)["rtt"]
    return float(statistics.median(rtts[count // 10 :]))


def bandwidth(pair: Pair, size: int, total_bytes: int) -> dict[str, float]:
    """Pump `total_bytes` in `size`-byte messages: payload bits/s, and dispatcher CPU per Gb/s."""
    count = max(1, total_bytes // size)
    cpu0 = pair.tx.call("cpu")
    base = pair.rx.call("received", src=pair.tx.endpoint)["bytes"]
    pair.rx.request("expect", src=pair.tx.endpoint, bytes=base + count * size)
    start = pair.tx.call("pump", dst=pair.rx.endpoint, size=size, count=count)["start"]
    end = pair.rx.reply()["end"]
    cpu1 = pair.tx.call("cpu")
    secs = end - start
    bps = count * size * 8 / secs
    return {
        "bps": bps,
        "dispatch_cpu_per_gbps": (cpu1["dispatch"] - cpu0["dispatch"]) / secs / (bps / 1e9),
    }


def run(
    where: str = "loopback",
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Rows (kind, size, with, without, overhead) for ping-pong and bandwidth; `where` is
    "loopback" or "veth" (the latter needs namespaces)."""
    if where == "veth":
        ok, why = available()
        if not ok:
            raise RuntimeError(f"veth: {why}")
    make: Any = veth_pair if where == "veth" else local_pair
    reps = 2 if quick else 5
    pings = 200 if quick else 1000
    total = (16 if quick else 64) * (1 << 20)
    if where == "veth":
        total //= 4
    rows: list[dict[str, Any]] = []
    # With and without alternate, so drift in the machine's load falls on both alike.
    lat: dict[tuple[int, bool], list[float]] = {}
    bw: dict[tuple[int, bool], list[dict[str, float]]] = {}
    for rep in range(reps):
        for rc in (True, False):
            if progress:
                progress(f"ping-pong {'with' if rc else 'without'} rate control, {rep + 1}/{reps}")
            with make(rc, echo=True) as pair:
                for s in PING_SIZES:
                    lat.setdefault((s, rc), []).append(ping_pong(pair, s, pings))
            if progress:
                progress(f"bandwidth {'with' if rc else 'without'} rate control, {rep + 1}/{reps}")
            with make(rc, echo=False) as pair:
                for s in BW_SIZES:
                    bw.setdefault((s, rc), []).append(bandwidth(pair, s, total))

    def spread(xs: list[float]) -> float:
        return (max(xs) - min(xs)) / statistics.median(xs)

    for s in PING_SIZES:
        # Best of the repetitions: the least disturbed run of each configuration.
        w, wo = min(lat[(s, True)]), min(lat[(s, False)])
        rows.append({"test": "ping-pong RTT (us)", "size": s, "with": w * 1e6, "without": wo * 1e6,
                     "overhead": (w - wo) / wo, "noise": spread(lat[(s, False)]),
                     "dispatch_cpu_per_gbps": None})  # fmt: skip
    for s in BW_SIZES:
        w = max(r["bps"] for r in bw[(s, True)])
        wo = max(r["bps"] for r in bw[(s, False)])
        cpu = statistics.median(r["dispatch_cpu_per_gbps"] for r in bw[(s, True)])
        rows.append({"test": "bandwidth (Gb/s)", "size": s, "with": w / 1e9, "without": wo / 1e9,
                     "overhead": (wo - w) / wo, "noise": spread([r["bps"] for r in bw[(s, False)]]),
                     "dispatch_cpu_per_gbps": cpu})  # fmt: skip
    return rows

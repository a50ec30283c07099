"""The rate-control mechanism's overhead, measured as document 004 §5.2 does: ping-pong
round-trip latency and streaming bandwidth (N messages pumped, the time until the receiver
has them all) over message sizes, with rate control and without (the same agents and
transport, flows unreserved). Runs on the loopback or between two hosts of a namespace
cluster (`cluster`). The agent's CPU is its scheduling threads' (dispatcher and drain),
per Gb/s moved; the sending process's whole CPU per Gb/s, with and without rate control,
is given beside it.

With rate control the flows are reserved at ten times what the path can carry (100 Gb/s on
the loopback, 10x the veth links), so the scheduler's IDT/NDT path runs on every packet but
never throttles: this measures the mechanism, as the document's Figs. 9-10 do, not pacing at
the link's nominal rate (which tc's token bucket, with its burst allowance, does not keep).

The machine is shared and loaded: runs with and without rate control alternate (in
alternating order), many times, and each repetition's paired difference is the overhead
measured; medians and quartiles over repetitions are reported, and the verdict against
document 004's 1% says "unresolved" when the quartiles straddle it (`verdicts`).

Nothing here is asserted: the numbers are a benchmark's (`qosnet net bench`).
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from qosnet.dataplane.cluster import Cluster, HostProcess, available

__all__ = [
    "BW_SIZES",
    "PING_SIZES",
    "TARGET",
    "Pair",
    "bandwidth",
    "confidence_interval",
    "interleaved",
    "ratio_interval",
    "interleaved_verdicts",
    "local_pair",
    "ping_pong",
    "run",
    "veth_pair",
    "verdicts",
]

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
    """Pump `total_bytes` in `size`-byte messages: payload bits/s, and CPU per Gb/s of the
    sender's agent threads and of its whole process (application, framing, sockets)."""
    count = max(1, total_bytes // size)
    cpu0 = pair.tx.call("cpu")
    base = pair.rx.call("received", src=pair.tx.endpoint)["bytes"]
    pair.rx.request("expect", src=pair.tx.endpoint, bytes=base + count * size)
    start = pair.tx.call("pump", dst=pair.rx.endpoint, size=size, count=count)["start"]
    end = pair.rx.reply()["end"]
    cpu1 = pair.tx.call("cpu")
    secs = end - start
    bps = count * size * 8 / secs
    gbit = count * size * 8 / 1e9
    return {
        "bps": bps,
        "dispatch_cpu_per_gbps": (cpu1["dispatch"] - cpu0["dispatch"]) / gbit,
        "process_cpu_per_gbps": (cpu1["process"] - cpu0["process"]) / gbit,
    }


def _quantiles(xs: list[float]) -> tuple[float, float, float]:
    """25th, 50th and 75th percentiles."""
    if len(xs) == 1:
        return xs[0], xs[0], xs[0]
    q = statistics.quantiles(xs, n=4, method="inclusive")
    return q[0], q[1], q[2]


def run(
    where: str = "loopback",
    quick: bool = False,
    progress: Callable[[str], None] | None = None,
    reps: int | None = None,
) -> list[dict[str, Any]]:
    """Rows per test and size, `where` "loopback" or "veth" (the latter needs namespaces).

    Each repetition runs both configurations on fresh hosts, in alternating order (with
    first on even repetitions, without first on odd ones), so that drift in the machine's
    load falls on both alike; the overhead of a repetition is the paired relative
    difference (with - without) / without (for bandwidth, the loss: (without - with) /
    without). A row gives the median over repetitions of each configuration, and the
    median and quartiles of the paired overheads: the spread against which 1% can or cannot
    be seen (`verdicts`)."""
    if where == "veth":
        ok, why = available()
        if not ok:
            raise RuntimeError(f"veth: {why}")
    make: Any = veth_pair if where == "veth" else local_pair
    reps = reps or (3 if quick else 15)
    pings = 200 if quick else 1000
    total = (16 if quick else 64) * (1 << 20)
    if where == "veth":
        total //= 4
    lat: dict[tuple[int, bool], list[float]] = {}
    bw: dict[tuple[int, bool], list[dict[str, float]]] = {}
    for rep in range(reps):
        for rc in (True, False) if rep % 2 == 0 else (False, True):
            label = f"{'with' if rc else 'without'} rate control, {rep + 1}/{reps}"
            if progress:
                progress(f"ping-pong {label}")
            with make(rc, echo=True) as pair:
                for s in PING_SIZES:
                    lat.setdefault((s, rc), []).append(ping_pong(pair, s, pings))
            if progress:
                progress(f"bandwidth {label}")
            with make(rc, echo=False) as pair:
                for s in BW_SIZES:
                    bw.setdefault((s, rc), []).append(bandwidth(pair, s, total))
    rows: list[dict[str, Any]] = []
    for s in PING_SIZES:
        w, wo = lat[(s, True)], lat[(s, False)]
        paired = [(a - b) / b for a, b in zip(w, wo, strict=True)]
        rows.append(_row("ping-pong RTT (us)", s, [x * 1e6 for x in w], [x * 1e6 for x in wo],
                         paired, None))  # fmt: skip
    for s in BW_SIZES:
        w = [r["bps"] / 1e9 for r in bw[(s, True)]]
        wo = [r["bps"] / 1e9 for r in bw[(s, False)]]
        paired = [(b - a) / b for a, b in zip(w, wo, strict=True)]
        cpu = {
            "dispatch_cpu_per_gbps": statistics.median(
                r["dispatch_cpu_per_gbps"] for r in bw[(s, True)]
            ),
            "process_cpu_per_gbps_with": statistics.median(
                r["process_cpu_per_gbps"] for r in bw[(s, True)]
            ),
            "process_cpu_per_gbps_without": statistics.median(
                r["process_cpu_per_gbps"] for r in bw[(s, False)]
            ),
        }
        rows.append(_row("bandwidth (Gb/s)", s, w, wo, paired, cpu))
    return rows


def _row(
    test: str,
    size: int,
    with_: list[float],
    without: list[float],
    paired: list[float],
    cpu: dict[str, float] | None,
) -> dict[str, Any]:
    p25, med, p75 = _quantiles(paired)
    q_without, q_with = _quantiles(without), _quantiles(with_)
    return {
        "test": test,
        "size": size,
        "reps": len(paired),
        "with": statistics.median(with_),
        "without": statistics.median(without),
        "overhead": med,
        "overhead_p25": p25,
        "overhead_p75": p75,
        # the runs' own spread without rate control: interquartile range / median
        "noise": (q_without[2] - q_without[0]) / q_without[1] if q_without[1] else 0.0,
        "noise_with": (q_with[2] - q_with[0]) / q_with[1] if q_with[1] else 0.0,
        "dispatch_cpu_per_gbps": cpu["dispatch_cpu_per_gbps"] if cpu else None,
        "process_cpu_per_gbps_with": cpu["process_cpu_per_gbps_with"] if cpu else None,
        "process_cpu_per_gbps_without": cpu["process_cpu_per_gbps_without"] if cpu else None,
    }


#: Document 004 §5.2's target: under 1% on average (latency overhead, bandwidth loss).
TARGET = 0.01


def verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per test: the mean over sizes of the median paired overheads, the means of their
    quartiles, the worst size, and a verdict against `TARGET` that claims no more than
    the spread allows: "met" if even the mean upper quartile is below 1%, "not met" if even
    the mean lower quartile is above it, else "unresolved at this noise"."""
    out = []
    for test in dict.fromkeys(r["test"] for r in rows):
        rs = [r for r in rows if r["test"] == test]
        mean = statistics.fmean(r["overhead"] for r in rs)
        lo = statistics.fmean(r["overhead_p25"] for r in rs)
        hi = statistics.fmean(r["overhead_p75"] for r in rs)
        worst = max(rs, key=lambda r: r["overhead"])
        if hi < TARGET:
            verdict = "met"
        elif lo > TARGET:
            verdict = "not met"
        else:
            verdict = "unresolved at this noise"
        out.append({"test": test, "mean": mean, "mean_p25": lo, "mean_p75": hi,
                    "worst": worst["overhead"], "worst_size": worst["size"],
                    "verdict": verdict})  # fmt: skip
    return out


# --- interleaved blocks: both configurations alive at once -------------------------------


def confidence_interval(
    xs: list[float], level: float = 0.95, resamples: int = 4000, seed: int = 0
) -> tuple[float, float]:
    """A bootstrap percentile interval of the mean of `xs` (paired differences): no
    assumption of normality, which these heavy-tailed samples do not meet. Seeded, so that
    a report is reproducible from its samples."""
    if len(xs) < 2:
        return xs[0], xs[0]
    rng = random.Random(seed)
    n = len(xs)
    means = sorted(statistics.fmean(rng.choices(xs, k=n)) for _ in range(resamples))
    lo = means[int((1 - level) / 2 * resamples)]
    hi = means[min(resamples - 1, int((1 + level) / 2 * resamples))]
    return lo, hi


def ratio_interval(
    with_: list[float], without: list[float], level: float = 0.95, resamples: int = 4000
) -> tuple[float, float, float]:
    """sum(with) / sum(without) - 1 over paired blocks, and a bootstrap interval of it
    (blocks resampled in pairs). For CPU per round trip or per Gb: a ratio of totals is not
    carried away by the few blocks whose small denominator makes a paired ratio huge, as a
    mean of paired ratios is."""
    ratio = sum(with_) / sum(without) - 1
    if len(with_) < 2:
        return ratio, ratio, ratio
    rng = random.Random(0)
    idx = range(len(with_))
    rs = []
    for _ in range(resamples):
        pick = rng.choices(idx, k=len(with_))
        rs.append(sum(with_[i] for i in pick) / sum(without[i] for i in pick) - 1)
    rs.sort()
    return (
        ratio,
        rs[int((1 - level) / 2 * resamples)],
        rs[min(resamples - 1, int((1 + level) / 2 * resamples))],
    )


@contextmanager
def _four_hosts(where: str, link_bps: float = 1e9) -> Iterator[tuple[HostProcess, ...]]:
    """Two senders (the first to be reserved), an echoing receiver and a counting sink,
    all alive at once; on the loopback or between two namespace hosts."""
    opts = {"open": True, "send_buffer": 0}
    if where == "veth":
        with Cluster(2, link_bps=link_bps) as c:
            yield (c.host(0, **opts), c.host(0, **opts), c.host(1, **opts, echo=True, deliver=True),
                   c.host(1, **opts, echo=False, deliver=False))  # fmt: skip
        return
    procs = [
        HostProcess.local(opts),
        HostProcess.local(opts),
        HostProcess.local({**opts, "echo": True, "deliver": True}),
        HostProcess.local({**opts, "echo": False, "deliver": False}),
    ]
    try:
        yield tuple(procs)
    finally:
        for p in procs:
            p.close()


def _roles(
    rc_tx: HostProcess, plain_tx: HostProcess, echo: HostProcess, sink: HostProcess, peak: float
) -> None:
    """Reserve `rc_tx`'s flows (and the echo back to it) above the path's capacity; leave
    `plain_tx`'s unreserved (the agents are open: they go on unregulated)."""
    for dst in (echo, sink):
        plain_tx.call("release", dst=dst.endpoint)
        rc_tx.call("reserve", dst=dst.endpoint, bps=peak)
    echo.call("release", dst=plain_tx.endpoint)
    echo.call("reserve", dst=rc_tx.endpoint, bps=peak)


def interleaved(
    where: str = "loopback",
    blocks: int = 40,
    pings: int = 200,
    total_bytes: int = 8 << 20,
    ping_sizes: tuple[int, ...] = (4, 1024, 16384, 65536),
    bw_sizes: tuple[int, ...] = (4096, 65536, 1048576),
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Rate control's overhead from many short paired blocks rather than few long runs.

    Both senders live for the whole measurement, one with its flows reserved above the
    path's capacity (the IDT/NDT path on every packet, never throttling), one unreserved,
    to the same echoing receiver (which reserves its echo to the reserved one) and the same
    sink; they swap roles every block, so that what is the process's own (the core it
    shares, say) is not taken for rate control's. Block after block, each size is measured
    on both, in alternating order: `pings` round
    trips (their median), or `total_bytes` streamed; and the sender's process CPU per round
    trip or per Gb. A block's paired difference is one sample; slow drift in the machine's
    load falls on both halves of a block alike, so the samples' spread is the fast noise
    only. A row gives, per size, the samples' mean, median and a 95% bootstrap interval of
    the mean for time, and for CPU the ratio of the totals with its interval
    (`ratio_interval`) and the paired ratios' median."""
    if where == "veth":
        ok, why = available()
        if not ok:
            raise RuntimeError(f"veth: {why}")
    peak = 100e9 if where == "loopback" else 10e9
    rtt: dict[tuple[int, bool], list[float]] = {}
    bw: dict[tuple[int, bool], list[float]] = {}
    cpu: dict[tuple[str, int, bool], list[float]] = {}
    agent_cpu: dict[tuple[int, bool], list[float]] = {}
    with _four_hosts(where) as (one, other, echo, sink):
        for tx in (one, other):  # connect, and warm up, outside the samples
            tx.call("ping_pong", dst=echo.endpoint, size=4, count=50)
            bandwidth(Pair(tx, sink, peak, where), 65536, 1 << 20)
        for b in range(blocks):
            if progress:
                progress(f"block {b + 1}/{blocks}")
            # The two processes swap roles every block (one reserved, the other not), so a
            # process's own luck (the core it shares, its cache) falls on both
            # configurations alike; the order within a block alternates every two blocks.
            rc_tx, plain_tx = (one, other) if b % 2 == 0 else (other, one)
            _roles(rc_tx, plain_tx, echo, sink, peak)
            senders = {True: rc_tx, False: plain_tx}
            order = (True, False) if (b // 2) % 2 == 0 else (False, True)
            for size in ping_sizes:
                for rc in order:
                    tx = senders[rc]
                    c0 = tx.call("cpu")["process"]
                    got = tx.call("ping_pong", dst=echo.endpoint, size=size, count=pings)["rtt"]
                    c1 = tx.call("cpu")["process"]
                    rtt.setdefault((size, rc), []).append(float(statistics.median(got)))
                    cpu.setdefault(("rtt", size, rc), []).append((c1 - c0) / pings)
            for size in bw_sizes:
                for rc in order:
                    r = bandwidth(Pair(senders[rc], sink, peak, where), size, total_bytes)
                    bw.setdefault((size, rc), []).append(r["bps"])
                    cpu.setdefault(("bw", size, rc), []).append(r["process_cpu_per_gbps"])
                    agent_cpu.setdefault((size, rc), []).append(r["dispatch_cpu_per_gbps"])
    rows = []
    for test, sizes, got in (("rtt", ping_sizes, rtt), ("bw", bw_sizes, bw)):
        for size in sizes:
            w, wo = got[(size, True)], got[(size, False)]
            # latency overhead (w - wo) / wo; bandwidth loss (wo - w) / wo
            d = [((a - b) if test == "rtt" else (b - a)) / b for a, b in zip(w, wo, strict=True)]
            cw, cwo = cpu[(test, size, True)], cpu[(test, size, False)]
            dc = [(a - b) / b for a, b in zip(cw, cwo, strict=True) if b > 0]
            lo, hi = confidence_interval(d)
            cratio, clo, chi = ratio_interval(cw, cwo)
            scale = 1e6 if test == "rtt" else 1e-9
            rows.append({
                "test": "ping-pong RTT (us)" if test == "rtt" else "bandwidth (Gb/s)",
                "size": size, "blocks": len(d), "where": where,
                "with": statistics.median(w) * scale, "without": statistics.median(wo) * scale,
                "mean": statistics.fmean(d), "median": statistics.median(d),
                "ci95": [lo, hi],
                # CPU: seconds per round trip (x1e6: us) or per Gb, the sender's process
                "cpu_with": statistics.median(cw) * (1e6 if test == "rtt" else 1.0),
                "cpu_without": statistics.median(cwo) * (1e6 if test == "rtt" else 1.0),
                # CPU: the ratio of the totals (with / without - 1), its interval; the
                # median of the paired ratios beside it
                "cpu_mean": cratio, "cpu_median": statistics.median(dc),
                "cpu_ci95": [clo, chi],
                # the agent's scheduling threads (dispatcher, drain), s per Gb, 10 ms ticks
                "agent_cpu_per_gb": statistics.fmean(agent_cpu[(size, True)])
                if test == "bw" else None,
            })  # fmt: skip
    return rows


def interleaved_verdicts(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per test: the mean over sizes of the paired means, the mean of the 95% intervals'
    ends, the worst size, and a verdict against `TARGET` from the intervals: "under 1%"
    when even the upper end is below it, "over 1%" when even the lower end is above it,
    else "unresolved at this noise"; the same for CPU."""
    out = []

    def verdict(lo: float, hi: float) -> str:
        if hi < TARGET:
            return "under 1%"
        if lo > TARGET:
            return "over 1%"
        return "unresolved at this noise"

    for test in dict.fromkeys(r["test"] for r in rows):
        rs = [r for r in rows if r["test"] == test]
        lo = statistics.fmean(r["ci95"][0] for r in rs)
        hi = statistics.fmean(r["ci95"][1] for r in rs)
        clo = statistics.fmean(r["cpu_ci95"][0] for r in rs)
        chi = statistics.fmean(r["cpu_ci95"][1] for r in rs)
        worst = max(rs, key=lambda r: r["mean"])
        out.append({
            "test": test, "mean": statistics.fmean(r["mean"] for r in rs),
            "median": statistics.fmean(r["median"] for r in rs), "ci95": [lo, hi],
            "worst": worst["mean"], "worst_ci95": worst["ci95"], "worst_size": worst["size"],
            "verdict": verdict(lo, hi),
            "cpu_mean": statistics.fmean(r["cpu_mean"] for r in rs), "cpu_ci95": [clo, chi],
            "cpu_verdict": verdict(clo, chi),
        })  # fmt: skip
    return out

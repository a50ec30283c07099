"""Document 004 §5.4's sharing experiments on a real bottleneck (`qosnet reproduce
seed004-real`).

On a namespace cluster (`cluster`) whose links run at `link_rate`, backlogged flows of 4 KB
packets are given IDTs in units of T, the time to send one packet at the link rate
(§3.3-3.4: idt = T · Bpeak / Breq):

- `one_source_1_2` (Fig. 12a): two flows from one host to two hosts, IDTs 2T and 4T;
- `one_source_1_2_4` (Fig. 12b): three flows from one host, IDTs 2T, 4T and 8T;
- `two_sources_1_2` (Fig. 12c): two hosts to one host, IDTs 2T and 4T; the flows share the
  switch's output port towards the destination.

Each runs with rate control (the flows reserved in their agents) by each back end, `agent`
(document 004's scheduler in user space) and `kernel` (the socket's SO_MAX_PACING_RATE),
and without (agents open, no reservation: one source interleaves its flows, two sources are
left to TCP). A flow's
share is its bytes received in a steady window over all the experiment's bytes; the
document's claim is share_i = (1/idt_i) / sum_j(1/idt_j). The reserved sums stay below the
link's payload capacity (admission, §3.4), so each flow also gets its reserved rate.

Where namespaces cannot be built, the same flows run between agents on the loopback: there
is no shared bottleneck there, only the agents' own pacing, and the report says so.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qosnet._core import parse_bandwidth
from qosnet.dataplane.cluster import Cluster, HostProcess, available

__all__ = ["SCENARIOS", "Scenario", "run"]

PACKET_BYTES = 4096


@dataclass(frozen=True)
class Scenario:
    name: str
    figure: str
    hosts: int
    #: (source host, destination host, IDT in units of T)
    flows: tuple[tuple[int, int, float], ...]


SCENARIOS = (
    Scenario("one_source_1_2", "Fig. 12a", 3, ((0, 1, 2.0), (0, 2, 4.0))),
    Scenario("one_source_1_2_4", "Fig. 12b", 4, ((0, 1, 2.0), (0, 2, 4.0), (0, 3, 8.0))),
    Scenario("two_sources_1_2", "Fig. 12c", 3, ((0, 2, 2.0), (1, 2, 4.0))),
)


def _received(hosts: list[HostProcess], srcs: list[str], dsts: list[int]) -> list[int]:
    """Bytes each flow (by index) has delivered at its destination."""
    out = []
    stats = {d: hosts[d].call("stats") for d in set(dsts)}
    for src, d in zip(srcs, dsts, strict=True):
        got = [r["bytes"] for r in stats[d]["received"] if r["src"] == src]
        out.append(sum(got))
    return out


def _one(
    sc: Scenario,
    rate_control: bool,
    link_bps: float,
    make_hosts: Any,
    warmup: float,
    window: float,
    backend: str = "agent",
) -> list[dict[str, Any]]:
    t_seconds = PACKET_BYTES * 8 / link_bps
    hosts: list[HostProcess] = make_hosts(sc.hosts, open_=not rate_control, backend=backend)
    srcs = [hosts[s].endpoint for s, _, _ in sc.flows]
    dsts = [d for _, d, _ in sc.flows]
    for s, d, idt in sc.flows:
        if rate_control:
            # What the control plane installs for an admitted flow: the reservation at the
            # source and the admission at the destination (004 §3.4 (a) and (c)).
            hosts[s].call("reserve", dst=hosts[d].endpoint, bps=link_bps / idt, priority=0)
            hosts[d].call("admit", src=hosts[s].endpoint, priority=0)
    for s, d, _ in sc.flows:
        hosts[s].call("stream", dst=hosts[d].endpoint, size=64 * 1024, priority=0)
    time.sleep(warmup)
    b0 = _received(hosts, srcs, dsts)
    t0 = time.monotonic()
    time.sleep(window)
    b1 = _received(hosts, srcs, dsts)
    elapsed = time.monotonic() - t0
    errors: dict[str, str] = {}
    for s in {s for s, _, _ in sc.flows}:
        hosts[s].call("stop")
        errors |= hosts[s].call("stats")["stream_errors"]
    got = [b - a for a, b in zip(b0, b1, strict=True)]
    total = sum(got) or 1
    inv = [1 / idt for _, _, idt in sc.flows]
    rows = []
    for k, ((s, d, idt), g) in enumerate(zip(sc.flows, got, strict=True)):
        expected = inv[k] / sum(inv)
        share = g / total
        rows.append(
            {
                "scenario": sc.name,
                "figure": sc.figure,
                "rate_control": rate_control,
                "backend": backend if rate_control else "-",
                "flow": f"h{s}->h{d}",
                "idt_T": idt,
                "idt_us": idt * t_seconds * 1e6,
                "reserved_mbps": link_bps / idt / 1e6 if rate_control else None,
                "mbps": g * 8 / elapsed / 1e6,
                "share": share,
                "expected_share": expected,
                "share_error": (share - expected) / expected,
                "errors": "; ".join(errors.values()),
            }
        )
    return rows


def _on_loopback(
    sc: Scenario,
    rate_control: bool,
    link_bps: float,
    warmup: float,
    window: float,
    backend: str = "agent",
) -> list[dict[str, Any]]:
    procs: list[HostProcess] = []

    def make(n: int, open_: bool, backend: str) -> list[HostProcess]:
        procs.extend(
            HostProcess.local(
                {"open": open_, "send_buffer": 256 * 1024, "backend": backend, "deliver": False}
            )
            for _ in range(n)
        )
        return procs

    try:
        return _one(sc, rate_control, link_bps, make, warmup, window, backend)
    finally:
        for p in procs:
            p.close()


def run(
    quick: bool = False,
    link_rate: str = "100 Mb/s",
    only: list[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[dict[str, Any]], str]:
    """Run the scenarios; (rows, where: "namespaces" or the loopback fallback's reason)."""
    link_bps = parse_bandwidth(link_rate)
    warmup, window = (0.5, 1.5) if quick else (1.0, 5.0)
    ok, why = available()
    rows: list[dict[str, Any]] = []
    for sc in SCENARIOS:
        if only and sc.name not in only:
            continue
        for rc, backend in ((True, "agent"), (True, "kernel"), (False, "agent")):
            if progress:
                how = f"with rate control ({backend})" if rc else "without rate control"
                progress(f"{sc.name} {how}")
            if ok:
                with Cluster(sc.hosts, link_bps=link_bps) as cluster:

                    def make(
                        n: int, open_: bool, backend: str, c: Cluster = cluster
                    ) -> list[HostProcess]:
                        # Sinks: an inbox nobody reads would fill and hold the flows back.
                        opts = {
                            "open": open_,
                            "send_buffer": 256 * 1024,
                            "backend": backend,
                            "deliver": False,
                        }
                        return [c.host(i, **opts) for i in range(n)]

                    rows += _one(sc, rc, link_bps, make, warmup, window, backend)
            else:
                rows += _on_loopback(sc, rc, link_bps, warmup, window, backend)
    return rows, "namespaces" if ok else f"loopback (no shared bottleneck: {why})"

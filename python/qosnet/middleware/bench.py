"""Speed of admission decisions (issue 5's benchmark): decisions per second and p50/p99
latency on a loaded cluster, by default the 281-node avakas fabric with 1,000 active
reservations (`configs/clusters/avakas.toml`).

The cluster is first loaded with `reservations` flows between random distinct nodes, each
asking a random 1-10% of its source's capacity (refused ones are redrawn), so decisions
run against a fabric whose ports carry real, uneven sums. Then, with that load held:

- `flow check`: the engine's call admission (document 004 §3.4) deciding one flow,
  `CallAdmission.check`, through the Python bindings;
- `flow admit+release`: admitting a flow and releasing it again (two engine calls);
- `job allocate`: the resource allocator (document 001 §3.4) choosing nodes for a whole job
  and reserving every flow of its pattern all-or-nothing, then releasing it; one row per
  job shape (a 4-node ring, an 8-node hypercube, a 16-node all-to-all).

Latency is wall time per decision (`time.perf_counter_ns`), single thread; decisions/s is
the inverse of the mean.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import qosnet
from qosnet.middleware.allocator import AllocationRefused, ResourceAllocator
from qosnet.middleware.cluster import Cluster
from qosnet.middleware.patterns import Pattern

__all__ = ["DecisionSpeed", "JOB_SHAPES", "bench_admission"]

#: The whole-job decisions measured: (nodes, pattern, bandwidth per flow as a fraction of a
#: node's capacity).
JOB_SHAPES: tuple[tuple[int, Pattern, float], ...] = (
    (4, Pattern.RING, 0.02),
    (8, Pattern.HYPERCUBE, 0.02),
    (16, Pattern.ALL_TO_ALL, 0.002),
)


@dataclass(frozen=True)
class DecisionSpeed:
    """How fast one kind of decision is."""

    cluster: str
    nodes: int
    reservations: int
    decision: str
    count: int
    admitted: int
    p50_us: float
    p99_us: float
    max_us: float
    per_second: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def bench_admission(
    cluster: Cluster,
    reservations: int = 1000,
    decisions: int = 20_000,
    jobs: int = 200,
    seed: int = 1,
) -> list[DecisionSpeed]:
    """Measure admission decisions on `cluster` holding `reservations` random flows:
    `decisions` flow-level decisions of each kind and `jobs` allocations of each shape in
    `JOB_SHAPES`. ValueError if the cluster cannot hold that many reservations."""
    for name, value, least in (
        ("reservations", reservations, 0),
        ("decisions", decisions, 1),
        ("jobs", jobs, 1),
    ):
        if not isinstance(value, int) or value < least:
            raise ValueError(f"{name}: must be an integer >= {least}, got {value!r}")
    if cluster.nodes < 2:
        raise ValueError(f"cluster: needs at least 2 nodes, has {cluster.nodes}")
    rng = np.random.default_rng(seed)
    engine = cluster.admission()
    capacity = [engine.node(n)[2] for n in range(cluster.nodes)]
    _load(engine, capacity, reservations, rng)

    def row(decision: str, ns: list[int], admitted: int) -> DecisionSpeed:
        us = np.asarray(ns, dtype=np.float64) / 1e3
        return DecisionSpeed(
            cluster=cluster.name,
            nodes=cluster.nodes,
            reservations=reservations,
            decision=decision,
            count=len(ns),
            admitted=admitted,
            p50_us=float(np.percentile(us, 50)),
            p99_us=float(np.percentile(us, 99)),
            max_us=float(us.max()),
            per_second=float(1e6 / us.mean()),
        )

    flows = _random_flows(rng, cluster.nodes, capacity, decisions)
    clock = time.perf_counter_ns
    ns, admitted = [], 0
    for s, d, bps in flows:
        t0 = clock()
        refusal = engine.check(s, d, bps)
        ns.append(clock() - t0)
        admitted += refusal is None
    out = [row("flow check", ns, admitted)]

    ns, admitted = [], 0
    for s, d, bps in flows:
        t0 = clock()
        try:
            engine.release(engine.admit(s, d, bps))
            admitted += 1
        except qosnet.AdmissionRefused:
            pass
        ns.append(clock() - t0)
    out.append(row("flow admit+release", ns, admitted))

    allocator = ResourceAllocator(cluster, admission=engine)
    allocator.grantable(2, Pattern.RING, 1.0)  # distances computed once, outside the timing
    smallest = min(capacity) / 8  # bytes/s
    for nodes, pattern, share in JOB_SHAPES:
        if nodes > cluster.nodes:
            continue
        ns, admitted = [], 0
        for i in range(jobs):
            t0 = clock()
            try:
                allocator.allocate(f"bench-{i}", nodes, pattern, smallest * share)
                allocator.release(f"bench-{i}")
                admitted += 1
            except AllocationRefused:
                pass
            ns.append(clock() - t0)
        out.append(row(f"job allocate+release ({nodes}-node {pattern.value})", ns, admitted))
    return out


def _random_flows(
    rng: np.random.Generator, nodes: int, capacity: list[float], count: int
) -> list[tuple[int, int, float]]:
    """`count` flows between random distinct nodes, each asking 1-10% of its source's
    capacity (whole bits/s)."""
    src = rng.integers(0, nodes, count)
    dst = (src + rng.integers(1, nodes, count)) % nodes  # never the source
    share = rng.uniform(0.01, 0.10, count)
    return [
        (int(s), int(d), float(round(capacity[s] * f)))
        for s, d, f in zip(src, dst, share, strict=True)
    ]


def _load(
    engine: qosnet.CallAdmission,
    capacity: list[float],
    reservations: int,
    rng: np.random.Generator,
) -> None:
    """Admit `reservations` random flows, redrawing refused ones; ValueError once
    `_FULL` draws in a row are refused (the cluster is full for such flows)."""
    held, refused = 0, 0
    while held < reservations:
        for s, d, bps in _random_flows(rng, len(capacity), capacity, reservations - held):
            try:
                engine.admit(s, d, bps)
                held, refused = held + 1, 0
            except qosnet.AdmissionRefused:
                refused += 1
                if refused == _FULL:
                    raise ValueError(
                        f"reservations: the cluster holds only {held} random flows of 1-10% "
                        f"of a node's capacity, {reservations} asked"
                    ) from None


_FULL = 1000

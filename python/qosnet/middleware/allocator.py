"""The resource allocator of document 001 §3.4: nodes and reserved bandwidth for jobs.

A job gets `nodes` nodes for its exclusive use (§1.3: resources reserved by an application
"are for its exclusive use only") and `bandwidth` bytes/s on every flow of its pattern
among them. The flows are reserved in the Rust engine's call admission (document 004 §3.4:
the source node, every switch output port on the flow's deterministic path, and the
destination node), all or none (`CallAdmission.admit_all`); routes and link sums are the
engine's, the one implementation the simulator uses too. Each reserved flow carries the
inter-dispatch time its source NIC's rate control needs (document 004 §3.4:
idt = T x Bpeak / Breq), so that "the application can make the reservation call to the
rate-control agents at the NIC" (document 001 §3.5.3).

Choosing the nodes (§3.4). The document keeps "a list of indices that denote the links
with the highest available bandwidth so that allocations are spread evenly across all
nodes", allocating greedily. Here that list is rebuilt from the engine's numbers on every
call (`_score`: a node's own link, both ways, then the free share of its switch's
switch-to-switch ports), and the allocator weighs a few candidate sets of free nodes:

- the `nodes` freest nodes, the list of §3.4 taken literally;
- around each free node (the freest first, at most `MAX_SEEDS`), the free nodes nearest to
  it and then to each other (path lengths from the engine; ties to the freest): compact
  groups, whose flows cross few shared switch-to-switch links.

Each set is tried with ranks in node order and in a nearest-neighbour chain (a ring wants
the chain, a hypercube node order on a mesh). For every candidate the largest bandwidth per
flow it can take now is the engine's own answer (`CallAdmission.grantable`: over every node
and switch port the flows use, the least residual / flows through it). The allocator picks
the candidate with the most bandwidth available (spreading load, §3.4), then the one using
fewest ports (the "minimum set of resources", §3.4), then the freest. `grantable` answers
with the same candidates, so whatever it returns, `allocate` then grants, and any bandwidth
below it too (the translator's `Allocator` contract). The best over *all* subsets of free nodes is a
combinatorial search; these candidates are the document's greedy choice plus compact ones.

Bidirectional links. The engine accounts each direction of a link on its own: a node may
send its link's bandwidth and receive as much. Document 001 §4.2.1 divides its 210 MB/s
"bi-directional bandwidth" among a node's outgoing and incoming flows together; every
pattern here is symmetric (as many flows into a node as out of it), so that reading is the
engine's with links of half the bandwidth, which is what `DOCUMENT_001_TESTBED` has
(105 MB/s each way; see `cluster`).

Every public method holds one lock: the service calls from a thread pool, and `grantable`
followed by `allocate` are two calls, so `allocate` checks everything again. `restore`
reserves a persisted allocation on exactly its nodes (a restart), checked like a new one.

Single flows. `reserve_flow` reserves one flow (source node, destination node, bandwidth)
outside any job, as document 004's data plane asks for one (an application's flow to a
peer): admitted by the same engine against the same capacities (its source, every switch
port on its path, its destination), so jobs and flows never overbook each other. A flow
takes no node: document 001's exclusive use is of a job's nodes, and a flow between busy
nodes takes only bandwidth.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

import qosnet
from qosnet.middleware.cluster import Cluster
from qosnet.middleware.patterns import Pattern
from qosnet.middleware.units import MB
from qosnet.middleware.wire import on_the_wire

__all__ = [
    "Allocation",
    "AllocationRefused",
    "FlowReservation",
    "LinkUsage",
    "NodeUsage",
    "RefusedReason",
    "ResourceAllocator",
]

RefusedReason = Literal[
    "not_enough_nodes", "not_enough_bandwidth", "unknown_job", "duplicate_job", "invalid"
]

#: Candidate node sets are grown around at most this many seeds (the freest free nodes),
#: bounding the work on large clusters.
MAX_SEEDS = 64

# The engine admits up to capacity x (1 + 1e-9) (rounding); a candidate whose exact room
# is within this of the request is worth asking the engine about.
_SLACK = 1e-9

_NEVER = np.iinfo(np.int64).max  # a key no free node has

Hop = tuple[int, int]


@dataclass(frozen=True)
class FlowReservation:
    """One reserved flow of a job: `bandwidth` bytes/s from node `src` to node `dst`.

    `idt` is the inter-dispatch time the source NIC's rate control uses, in periods T:
    Bpeak / Breq with Bpeak the source node's capacity (document 004 §3.4). `path` lists
    the (switch, output port) hops, the last one the port to `dst`.
    """

    src: int
    dst: int
    bandwidth: float
    idt: float
    path: tuple[Hop, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "src": self.src,
            "dst": self.dst,
            "bandwidth": self.bandwidth,
            "idt": self.idt,
            "path": [list(hop) for hop in self.path],
        }


@dataclass(frozen=True)
class Allocation:
    """A job's allocation: its nodes in rank order, its pattern and its reserved flows."""

    job: str
    nodes: tuple[int, ...]
    pattern: Pattern
    bandwidth: float
    flows: tuple[FlowReservation, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able data; `from_dict` reads it back."""
        return {
            "job": self.job,
            "nodes": list(self.nodes),
            "pattern": self.pattern.value,
            "bandwidth": self.bandwidth,
            "flows": [f.to_dict() for f in self.flows],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Allocation:
        """An allocation from `to_dict`'s data; ValueError naming the field if malformed.

        Only the shape is checked here; whether it fits the cluster is `restore`'s job.
        """
        d = _Reader(data, "")
        flows = []
        for i, item in enumerate(d.sequence("flows")):
            f = _Reader(item, f"flows[{i}]")
            hops = enumerate(f.sequence("path"))
            path = tuple(_hop(hop, f"flows[{i}].path[{j}]") for j, hop in hops)
            flows.append(
                FlowReservation(
                    src=f.integer("src"),
                    dst=f.integer("dst"),
                    bandwidth=f.number("bandwidth"),
                    idt=f.number("idt"),
                    path=path,
                )
            )
        try:
            pattern = Pattern(d.get("pattern"))
        except ValueError:
            raise ValueError(
                f"pattern: must be one of {[p.value for p in Pattern]}, got {d.get('pattern')!r}"
            ) from None
        job = d.get("job")
        if not isinstance(job, str):
            raise ValueError(f"job: must be a string, got {job!r}")
        nodes = tuple(_int(n, f"nodes[{i}]") for i, n in enumerate(d.sequence("nodes")))
        return cls(job, nodes, pattern, d.number("bandwidth"), tuple(flows))


class AllocationRefused(Exception):
    """The allocator cannot do what was asked; nothing was changed.

    `reason` is a short code (`RefusedReason`); `detail` says which resource, in words;
    `refusal` is the engine's refusal (criterion, resource, numbers in bits/s) when call
    admission refused.
    """

    def __init__(
        self, reason: RefusedReason, detail: str, refusal: dict[str, Any] | None = None
    ) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason: RefusedReason = reason
        self.detail = detail
        self.refusal = refusal


@dataclass(frozen=True)
class LinkUsage:
    """A switch output port: where it leads (`to` "router" or "node", `to_id`), its
    capacity and what is reserved on it, bytes/s."""

    router: int
    port: int
    to: str
    to_id: int
    capacity: float
    reserved: float


@dataclass(frozen=True)
class NodeUsage:
    """A node's NIC: its capacity and the bandwidth reserved from it (`sourced`, which no
    switch port shows) and to it (`sunk`), bytes/s."""

    node: int
    capacity: float
    sourced: float
    sunk: float


@dataclass(frozen=True)
class _Job:
    allocation: Allocation
    ids: tuple[int, ...]


@dataclass(frozen=True)
class _Candidate:
    nodes: tuple[int, ...]  # in rank order
    room: float  # the largest bandwidth per flow the nodes take now, bits/s
    hops: int  # switch output ports the job's flows cross, counted per flow
    order: int  # preference among equals: the freest-first set first


class ResourceAllocator:
    """Nodes and bandwidth for jobs on one cluster (document 001 §3.4); implements the
    translator's `Allocator` protocol.

    `admission` is the engine object to account in, by default a fresh one from the
    cluster; pass one to start from reservations made elsewhere (background flows,
    lowered capacities). The allocator must then be its only user.
    `payload_fraction` scales a fresh engine's capacities to the payload the links carry
    (`wire.on_the_wire`; the service gives `Settings.payload_fraction`).
    """

    def __init__(
        self,
        cluster: Cluster,
        admission: qosnet.CallAdmission | None = None,
        payload_fraction: float = 1.0,
    ) -> None:
        self._cluster = cluster
        # Admission on the wire (`wire`): a fresh engine's capacities are the payload the
        # links carry; a given engine is taken as it is.
        self._engine = (
            on_the_wire(cluster.admission(), payload_fraction) if admission is None else admission
        )
        if self._engine.nodes != cluster.nodes:
            raise ValueError(
                f"admission: must describe the cluster's {cluster.nodes} nodes, "
                f"got {self._engine.nodes}"
            )
        self._lock = threading.Lock()
        self._jobs: dict[str, _Job] = {}
        self._flows: dict[str, tuple[FlowReservation, tuple[int, ...]]] = {}
        self._busy: set[int] = set()
        self._paths: dict[tuple[int, int], tuple[Hop, ...]] = {}
        self._distance: npt.NDArray[np.int64] | None = None
        ports = self._engine.ports()
        self._ejection: dict[int, Hop] = {}  # node -> the switch port leading to it
        self._trunks: dict[int, list[Hop]] = {}  # switch -> its ports to other switches
        for r, p, to, to_id in zip(
            ports["router"], ports["port"], ports["to"], ports["to_id"], strict=True
        ):
            if to == "node":
                self._ejection[to_id] = (r, p)
            else:
                self._trunks.setdefault(r, []).append((r, p))

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    # -- the translator's question -------------------------------------------------------

    def grantable(self, nodes: int, pattern: Pattern, wanted: float) -> float:
        """The largest bandwidth per flow, at most `wanted` bytes/s, that `allocate` would
        grant now to `pattern` on `nodes` nodes (0.0 if none: too few free nodes, links
        full). Changes nothing. ValueError for a malformed question."""
        pattern = _pattern(pattern)
        _check_nodes(nodes, pattern)
        if not (isinstance(wanted, int | float) and math.isfinite(wanted) and wanted >= 0):
            raise ValueError(f"wanted: must be a finite number >= 0, got {wanted!r}")
        with self._lock:
            if nodes > self._cluster.nodes - len(self._busy) or wanted == 0:
                return 0.0
            best = max(c.room for c in self._candidates(nodes, pattern))
            # the engine reserves whole bits per second: never offer a fraction above that
            # (a job without flows has infinite room)
            room = best if math.isinf(best) else math.floor(best)
            return float(min(wanted, room / 8))

    # -- allocations ---------------------------------------------------------------------

    def allocate(self, job: str, nodes: int, pattern: Pattern, bandwidth: float) -> Allocation:
        """Reserve `bandwidth` bytes/s on every flow of `pattern` among `nodes` free nodes
        chosen as the module docstring says, for `job`; AllocationRefused (changing
        nothing) if the job exists, the request is malformed, or it does not fit now."""
        pattern = _refuse_invalid(_pattern, pattern)
        _refuse_invalid(_check_nodes, nodes, pattern)
        _refuse_invalid(_check_job, job)
        # The engine reserves whole bits per second; the allocation records what it holds.
        bps = self._bits(bandwidth)
        bandwidth = bps / 8
        with self._lock:
            if job in self._jobs or job in self._flows:
                raise AllocationRefused("duplicate_job", f"job {job!r} already has an allocation")
            free = self._cluster.nodes - len(self._busy)
            if nodes > free:
                raise AllocationRefused(
                    "not_enough_nodes",
                    f"{nodes} nodes wanted, {free} of the cluster's {self._cluster.nodes} free",
                )
            ranked = sorted(
                self._candidates(nodes, pattern),
                key=lambda c: (-_quantise(c.room), c.hops, c.order),
            )
            fitting = [c for c in ranked if c.room >= bps * (1 - _SLACK)]
            refusal: dict[str, Any] = {}
            # The engine has the last word: ask it about every candidate that should fit,
            # or about the best one, to say why not.
            for candidate in fitting or ranked[:1]:
                flows = [(s, d, bps) for s, d in _flows(pattern, candidate.nodes)]
                try:
                    ids = self._engine.admit_all(flows)
                except qosnet.AdmissionRefused as refused:
                    refusal = refused.refusal
                    continue
                allocation = self._allocation(job, candidate.nodes, pattern, bandwidth)
                self._record(allocation, ids)
                return allocation
            best = ranked[0]
            raise AllocationRefused(
                "not_enough_bandwidth",
                f"{bandwidth / MB:g} MB/s per flow of {pattern.value} on {nodes} nodes: the "
                f"best choice, nodes {list(best.nodes)}, takes at most "
                f"{best.room / 8 / MB:g} MB/s ({refusal.get('message', 'no route')})",
                refusal or None,
            )

    def restore(self, allocation: Allocation) -> None:
        """Reserve a persisted allocation again on exactly its nodes (a service restart);
        AllocationRefused, changing nothing, if it is malformed or no longer fits."""
        a = allocation
        pattern = _refuse_invalid(_pattern, a.pattern)
        _refuse_invalid(_check_job, a.job)
        _refuse_invalid(_check_nodes, len(a.nodes), pattern)
        _refuse_invalid(_check_bandwidth, a.bandwidth)
        with self._lock:
            if a.job in self._jobs:
                raise AllocationRefused("duplicate_job", f"job {a.job!r} already has an allocation")
            bad = [n for n in a.nodes if not (isinstance(n, int) and 0 <= n < self._cluster.nodes)]
            if bad or len(set(a.nodes)) != len(a.nodes):
                raise AllocationRefused(
                    "invalid",
                    f"nodes: must be distinct nodes in 0..{self._cluster.nodes - 1}, "
                    f"got {list(a.nodes)}",
                )
            expected = [(s, d, a.bandwidth) for s, d in _flows(pattern, a.nodes)]
            if [(f.src, f.dst, f.bandwidth) for f in a.flows] != expected:
                raise AllocationRefused(
                    "invalid",
                    f"flows: must be the {pattern.value} flows among nodes {list(a.nodes)} at "
                    f"{a.bandwidth!r} bytes/s each",
                )
            taken = sorted(set(a.nodes) & self._busy)
            if taken:
                owners = {n: j for j, rec in self._jobs.items() for n in rec.allocation.nodes}
                raise AllocationRefused(
                    "not_enough_nodes",
                    ", ".join(f"node {n} is allocated to job {owners[n]!r}" for n in taken),
                )
            try:
                ids = self._engine.admit_all([(s, d, b * 8) for s, d, b in expected])
            except qosnet.AdmissionRefused as refused:
                raise AllocationRefused(
                    "not_enough_bandwidth", refused.refusal["message"], refused.refusal
                ) from None
            self._record(self._allocation(a.job, a.nodes, pattern, a.bandwidth), ids)

    def release(self, job: str) -> bool:
        """Return a job's nodes and bandwidth; False if there is no such job."""
        with self._lock:
            record = self._jobs.pop(job, None)
            if record is None:
                return False
            for i in record.ids:
                self._engine.release(i)
            self._busy.difference_update(record.allocation.nodes)
            return True

    # -- single flows --------------------------------------------------------------------

    def reserve_flow(self, key: str, src: int, dst: int, bandwidth: float) -> FlowReservation:
        """Reserve `bandwidth` bytes/s from node `src` to node `dst` under `key` (module
        docstring); AllocationRefused, changing nothing, if the key exists, the request is
        malformed, or the flow does not fit now (with the engine's reason)."""
        _refuse_invalid(_check_job, key)
        bps = self._bits(bandwidth)
        with self._lock:
            if key in self._flows or key in self._jobs:
                raise AllocationRefused("duplicate_job", f"{key!r} already has a reservation")
            self._check_pair(src, dst)
            try:
                ids = self._engine.admit_all([(src, dst, bps)])
            except qosnet.AdmissionRefused as refused:
                r = refused.refusal
                raise AllocationRefused(
                    "not_enough_bandwidth",
                    f"{bps / 8 / MB:g} MB/s from node {src} to node {dst}: {r['message']}",
                    r,
                ) from None
            flow = self._flow(src, dst, bps / 8)
            self._flows[key] = (flow, tuple(ids))
            return flow

    def restore_flow(self, key: str, flow: FlowReservation) -> None:
        """Reserve a persisted single flow again (a restart); AllocationRefused if it no
        longer fits or is malformed."""
        restored = self.reserve_flow(key, flow.src, flow.dst, flow.bandwidth)
        if restored.bandwidth != flow.bandwidth:
            self.release_flow(key)
            raise AllocationRefused(
                "invalid", f"bandwidth: {flow.bandwidth!r} B/s is not a whole bit rate"
            )

    def release_flow(self, key: str) -> bool:
        """Return a single flow's bandwidth; False if there is no such flow."""
        with self._lock:
            record = self._flows.pop(key, None)
            if record is None:
                return False
            for i in record[1]:
                self._engine.release(i)
            return True

    def flows(self) -> dict[str, FlowReservation]:
        """The single flows reserved now, by key."""
        with self._lock:
            return {k: f for k, (f, _) in self._flows.items()}

    @staticmethod
    def _bits(bandwidth: float) -> float:
        """`bandwidth` bytes/s as the whole bits per second the engine reserves."""
        _refuse_invalid(_check_bandwidth, bandwidth)
        bits = bandwidth * 8
        bps = float(round(bits)) if math.isfinite(bits) else 0.0
        if not 1 <= bps < 2**53:
            raise AllocationRefused(
                "invalid", f"bandwidth: must be 1 b/s to 2^53 b/s, got {bandwidth!r} B/s"
            )
        return bps

    def _check_pair(self, src: int, dst: int) -> None:
        n = self._cluster.nodes
        for name, v in (("src", src), ("dst", dst)):
            if not (isinstance(v, int) and not isinstance(v, bool) and 0 <= v < n):
                raise AllocationRefused(
                    "invalid", f"{name}: must be a node in 0..{n - 1}, got {v!r}"
                )
        if src == dst:
            raise AllocationRefused("invalid", f"dst: must differ from src, got {dst} twice")

    def _flow(self, src: int, dst: int, bandwidth: float) -> FlowReservation:
        # document 004 §3.4: idt = T x Bpeak / Breq, from the engine
        idt = self._engine.idt(src, bandwidth * 8)
        return FlowReservation(src, dst, bandwidth, idt, self._path(src, dst))

    # -- state ---------------------------------------------------------------------------

    def allocation(self, job: str) -> Allocation | None:
        with self._lock:
            record = self._jobs.get(job)
            return None if record is None else record.allocation

    def allocations(self) -> list[Allocation]:
        """Every current allocation, oldest first."""
        with self._lock:
            return [r.allocation for r in self._jobs.values()]

    def free_nodes(self) -> frozenset[int]:
        with self._lock:
            return frozenset(range(self._cluster.nodes)) - self._busy

    def utilisation(self) -> list[LinkUsage]:
        """Every switch output port with its capacity and reservations, bytes/s."""
        with self._lock:
            ports = self._engine.ports()
        return [
            LinkUsage(r, p, to, to_id, cap / 8, reserved / 8)
            for r, p, to, to_id, cap, reserved in zip(
                ports["router"],
                ports["port"],
                ports["to"],
                ports["to_id"],
                ports["capacity_bps"],
                ports["reserved_bps"],
                strict=True,
            )
        ]

    def node_utilisation(self) -> list[NodeUsage]:
        """Every node's NIC with its capacity and reservations, bytes/s."""
        with self._lock:
            rows = [self._engine.node(n) for n in range(self._cluster.nodes)]
        return [NodeUsage(n, cap / 8, out / 8, into / 8) for n, (out, into, cap) in enumerate(rows)]

    # -- inside the lock -----------------------------------------------------------------

    def _path(self, src: int, dst: int) -> tuple[Hop, ...]:
        key = (src, dst)
        if key not in self._paths:
            self._paths[key] = tuple(self._engine.path(src, dst))
        return self._paths[key]

    def _distances(self) -> npt.NDArray[np.int64]:
        """Path lengths there and back between every pair of nodes (routes never change;
        computed once, in the engine)."""
        if self._distance is None:
            hops = np.asarray(self._engine.hop_counts(), dtype=np.int64)
            self._distance = hops + hops.T
        return self._distance

    def _candidates(self, nodes: int, pattern: Pattern) -> list[_Candidate]:
        """The node sets worth considering (module docstring), each with its room."""
        room = _Residual(self._engine)
        free = [n for n in range(self._cluster.nodes) if n not in self._busy]
        score = {n: self._score(n, room) for n in free}
        freest = sorted(free, key=lambda n: (-score[n][0], -score[n][1], n))
        sets = [tuple(sorted(freest[:nodes]))]
        if nodes > 1:
            grow = _Growth(self._distances(), freest, score, self._cluster.nodes)
            sets += [grow.around(seed, nodes) for seed in freest[:MAX_SEEDS]]
        seen: set[tuple[int, ...]] = set()
        out: list[_Candidate] = []
        for group in sets:
            for ranks in (group, self._chain(group)):
                if ranks not in seen:
                    seen.add(ranks)
                    out.append(self._evaluate(ranks, pattern, len(out)))
        return out

    def _score(self, node: int, room: _Residual) -> tuple[float, float]:
        """How free a node's links are (§3.4): the least room on its own link, either way
        (its NIC sending and receiving, the switch port to it), then the free share of its
        switch's ports to other switches, which its flows must cross to leave."""
        own = min(room.source[node], room.sink[node], room.ports[self._ejection[node]])
        trunks = self._trunks.get(self._ejection[node][0], [])
        if not trunks:  # a star: no shared links
            return own, 1.0
        return own, sum(room.ports[h] / room.capacity[h] for h in trunks) / len(trunks)

    def _chain(self, group: tuple[int, ...]) -> tuple[int, ...]:
        """The group as a nearest-neighbour chain from its first node: neighbouring ranks
        on nearby nodes, which suits a ring."""
        distance = self._distances()
        chain = [group[0]]
        rest = list(group[1:])
        while rest:
            row = distance[chain[-1]]
            nearest = min(rest, key=lambda n: (row[n], n))
            rest.remove(nearest)
            chain.append(nearest)
        return tuple(chain)

    def _evaluate(self, ranks: tuple[int, ...], pattern: Pattern, order: int) -> _Candidate:
        """The largest bandwidth per flow every resource the job's flows cross can still
        take: min over sources, switch ports and destinations of room / flows through it."""
        flows = _flows(pattern, ranks)
        # (the engine's call admission answers from its own accounting, `grantable`)
        best = self._engine.grantable(flows)
        hops = sum(len(self._path(s, d)) for s, d in flows)
        return _Candidate(ranks, best, hops, order)

    def _allocation(
        self, job: str, nodes: Sequence[int], pattern: Pattern, bandwidth: float
    ) -> Allocation:
        flows = tuple(self._flow(s, d, bandwidth) for s, d in _flows(pattern, nodes))
        return Allocation(job, tuple(nodes), pattern, bandwidth, flows)

    def _record(self, allocation: Allocation, ids: Iterable[int]) -> None:
        self._jobs[allocation.job] = _Job(allocation, tuple(ids))
        self._busy.update(allocation.nodes)


class _Growth:
    """Compact groups of free nodes grown around seeds (`_candidates`), vectorised: one
    argmin over the free nodes per node added, on a single integer key that orders them
    as (distance to the seed, sum of distances to the group so far, freest first, the
    next node number after the seed)."""

    def __init__(
        self,
        distance: npt.NDArray[np.int64],
        freest: list[int],
        score: dict[int, tuple[float, float]],
        nodes: int,
    ) -> None:
        self._distance = distance
        self._free = np.array(sorted(freest), dtype=np.int64)
        # freest first: a rank per free node, equal scores sharing a rank
        ranks: dict[tuple[float, float], int] = {}
        for n in freest:
            ranks.setdefault(score[n], len(ranks))
        self._rank = np.array([ranks[score[n]] for n in self._free], dtype=np.int64)
        self._nodes = nodes
        # the key's fields, most significant first, each below its radix
        self._radix_rank = len(ranks)
        self._radix_next = nodes

    def around(self, seed: int, size: int) -> tuple[int, ...]:
        """`size` free nodes around `seed`: the nearest to it first, then those nearest to
        the group so far (a 2x2 square rather than an L on a mesh), then the freest."""
        free = self._free
        to_seed = self._distance[seed, free]
        spread = np.zeros(len(free), dtype=np.int64)
        taken = free == seed
        radix_spread = int(self._distance.max(initial=0)) * size + 1
        # the constant part of the key: distance to the seed, then rank, then next number
        tail = self._rank * self._radix_next + (free - seed) % self._nodes
        head = to_seed * radix_spread
        low = self._radix_rank * self._radix_next
        group = [seed]
        while len(group) < size:
            spread += self._distance[group[-1], free]
            key = (head + spread) * low + tail
            key[taken] = _NEVER
            i = int(np.argmin(key))
            taken[i] = True
            group.append(int(free[i]))
        return tuple(sorted(group))


class _Residual:
    """The room left on every resource now, bits/s, from the engine's own numbers."""

    def __init__(self, engine: qosnet.CallAdmission) -> None:
        ports = engine.ports()
        self.ports: dict[Hop, float] = {}
        self.capacity: dict[Hop, float] = {}
        columns = ports["router"], ports["port"], ports["capacity_bps"], ports["reserved_bps"]
        for r, p, cap, reserved in zip(*columns, strict=True):
            self.ports[r, p] = cap - reserved
            self.capacity[r, p] = cap
        self.source: list[float] = []
        self.sink: list[float] = []
        for n in range(engine.nodes):
            sourced, sunk, cap = engine.node(n)
            self.source.append(cap - sourced)
            self.sink.append(cap - sunk)


def _flows(pattern: Pattern, ranks: Sequence[int]) -> list[tuple[int, int]]:
    """The pattern's flows between ranks, as flows between the nodes holding them."""
    return [(ranks[f.src], ranks[f.dst]) for f in pattern.flows(len(ranks))]


def _quantise(bps: float) -> float:
    # Rooms that differ by rounding only (209999999.99999997) count as equal.
    return bps if math.isinf(bps) else round(bps)


def _pattern(pattern: Pattern | str) -> Pattern:
    try:
        return Pattern(pattern)
    except ValueError:
        raise ValueError(
            f"pattern: must be one of {[p.value for p in Pattern]}, got {pattern!r}"
        ) from None


def _check_nodes(nodes: int, pattern: Pattern) -> None:
    if not isinstance(nodes, int) or isinstance(nodes, bool):
        raise ValueError(f"nodes: must be an integer, got {nodes!r}")
    problem = pattern.nodes_problem(nodes)
    if problem:
        raise ValueError(f"nodes: {problem}, got {nodes!r}")


def _check_bandwidth(bandwidth: float) -> None:
    ok = isinstance(bandwidth, int | float) and not isinstance(bandwidth, bool)
    if not (ok and math.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"bandwidth: must be a finite number > 0, got {bandwidth!r}")


def _check_job(job: str) -> None:
    if not (isinstance(job, str) and job):
        raise ValueError(f"job: must be a non-empty string, got {job!r}")


def _refuse_invalid(check: Any, *args: Any) -> Any:
    """`check(*args)`, its ValueError as AllocationRefused('invalid')."""
    try:
        return check(*args)
    except ValueError as error:
        raise AllocationRefused("invalid", str(error)) from None


class _Reader:
    """Fields of a mapping, ValueError naming the field when one is missing or wrong."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise ValueError(f"{where or 'allocation'}: must be an object, got {data!r}")
        self.data = data
        self.where = where

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def get(self, key: str) -> Any:
        if key not in self.data:
            raise ValueError(f"{self._name(key)}: is required")
        return self.data[key]

    def sequence(self, key: str) -> list[Any]:
        value = self.get(key)
        if not isinstance(value, list | tuple):
            raise ValueError(f"{self._name(key)}: must be a list, got {value!r}")
        return list(value)

    def integer(self, key: str) -> int:
        return _int(self.get(key), self._name(key))

    def number(self, key: str) -> float:
        value = self.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{self._name(key)}: must be a number, got {value!r}")
        return float(value)


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{where}: must be an integer, got {value!r}")
    return value


def _hop(value: Any, where: str) -> Hop:
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise ValueError(f"{where}: must be a [switch, port] pair, got {value!r}")
    return _int(value[0], f"{where}[0]"), _int(value[1], f"{where}[1]")

"""A fluid model of document 001's cluster, with and without the QoS middleware (§4.3-4.4).

`qosnet reproduce seed001` now runs the jobs on the engine (`engine_eval`); of this module
it uses only `run_qos` (the middleware's decisions on a request stream) and `idle_choice`.
The fluid model (`run_noqos`, max-min sharing) stays as a cross-check of the engine's runs.

Document 001 §4.4 runs the same request stream (`workload`) twice on its 16-node testbed:
once through the middleware, once without it. This module replaces the testbed by an
event-driven fluid model whose events are job arrivals and job completions.

With the middleware (`run_qos`). Each request goes to the translator and the resource
allocator on arrival (§3.5.2 `Schedule`). Admitted, the job holds its nodes and reserved
bandwidth, which the NIC rate control guarantees (§2, §4.2.3: "behaves as if it is running
on an exclusive virtual network"), so it takes exactly its profiled time, then releases
them. Refused, it is counted and dropped: §4.4.1 shows refused requests as "not allowed to
execute", and the admission rate (§4.4.3) is admitted / submitted; the retry of §3.4
scenario 1 is the client's option, not part of the evaluation.

Without it (`run_noqos`). Every request runs. Nothing reserves bandwidth, so the flows of
all running jobs share every resource they cross max-min fairly (progressive filling): the
source NIC, each switch output port on the engine's deterministic path, the destination
NIC; capacities are the engine's (`CallAdmission.ports`, `.node`). A flow never takes
more than the largest bandwidth its job's profile has (more would not make it faster, the
curve being clamped there). A job is bulk-synchronous (§4.2.1: "applications that
interact frequently"), so its pace is set by its slowest flow: at per-flow bandwidth b it
would take T(b) seconds, the profile curve interpolated linearly in b between profiled
points and clamped at the ends. It advances its remaining work fraction at 1/T(b) per
second, recomputed at every arrival and completion. Only the network is shared: document
001 §4.2.2 argues the interference between jobs on its SMP nodes is "solely at the network
level", and the profiles say nothing about CPU sharing.

Which configuration a job runs with without the middleware, and where, document 001 does
not say. Here (`NoQosConfig`): by default a job admitted with the middleware runs the same
curve (parameters and N) without it, so the two times compare one configuration with and
without contention, as §4.4.2 reads them ("performance of existing applications improve
due to the lack of contention"); a refused job runs with what the translator would pick on
an idle cluster, the best the user could ask for. Ranks go to the N nodes with the fewest
running ranks (ties: lowest index), in node order, as a simple launcher would spread them.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from qosnet.middleware.allocator import ResourceAllocator
from qosnet.middleware.cluster import Cluster
from qosnet.middleware.patterns import Pattern
from qosnet.middleware.profiles import Curve, ProfileStore
from qosnet.middleware.translator import Alternative, Refusal, Request, translate
from qosnet.reproduce.seed001.workload import Subtask

__all__ = [
    "Network",
    "NoQosConfig",
    "NoQosOutcome",
    "QosOutcome",
    "idle_choice",
    "max_min_fair",
    "profile_time",
    "run_noqos",
    "run_qos",
]

# Relative tolerance for "this job has finished" and "this resource is full".
_EPS = 1e-12


def profile_time(curve: Curve, bandwidth: float) -> float:
    """The execution time the profile gives at `bandwidth` bytes/s per flow: linear in
    bandwidth between profiled points, clamped to the first and last points outside them."""
    bw = [p.bandwidth for p in curve.points]
    t = [p.time for p in curve.points]
    return float(np.interp(bandwidth, bw, t))


def max_min_fair(
    flows: Sequence[Sequence[Hashable]],
    capacity: Mapping[Hashable, float],
    demand: Sequence[float] | None = None,
) -> np.ndarray:
    """Max-min fair rates by progressive filling: every unfrozen flow's rate grows at the
    same pace until a resource it crosses is full or it reaches its demand; then it is
    frozen. `flows[i]` lists the resources flow i crosses (each once), `capacity` their
    capacities, `demand[i]` the most flow i wants (default unbounded)."""
    n = len(flows)
    rate = np.zeros(n)
    if n == 0:
        return rate
    names = sorted({r for f in flows for r in f}, key=repr)
    index = {r: i for i, r in enumerate(names)}
    cross = np.zeros((len(names), n))
    for j, f in enumerate(flows):
        for r in f:
            cross[index[r], j] = 1.0
    left = np.array([float(capacity[r]) for r in names])
    scale = np.maximum(left, 1.0)
    want = np.full(n, math.inf) if demand is None else np.asarray(demand, dtype=float)
    active = want > 0
    while active.any():
        users = cross @ active  # unfrozen flows per resource
        used = users > 0
        step = math.inf
        if used.any():
            step = float(np.min(left[used] / users[used]))
        step = min(step, float(np.min(want[active] - rate[active])))
        if math.isinf(step):
            raise ValueError("a flow crosses no resource and has no demand: its rate is unbounded")
        rate[active] += step
        left -= step * users
        full = used & (left <= _EPS * scale)
        left[full] = 0.0
        blocked = (cross[full].sum(axis=0) > 0) if full.any() else np.zeros(n, bool)
        active &= ~blocked & (rate < want * (1 - _EPS))
    return rate


class Network:
    """The cluster's resources for the fluid model, from the engine: every node's NIC in
    each direction and every switch output port, with capacities in bytes/s, and the
    resources each flow crosses."""

    def __init__(self, cluster: Cluster) -> None:
        engine = cluster.admission()
        self.nodes = engine.nodes
        self.capacity: dict[Hashable, float] = {}
        for n in range(self.nodes):
            cap = engine.node(n)[2] / 8
            self.capacity["src", n] = cap
            self.capacity["dst", n] = cap
        ports = engine.ports()
        for r, p, cap in zip(ports["router"], ports["port"], ports["capacity_bps"], strict=True):
            self.capacity["port", r, p] = cap / 8
        self._route: dict[tuple[int, int], tuple[Hashable, ...]] = {}
        for s in range(self.nodes):
            for d in range(self.nodes):
                if s != d:
                    hops = tuple(("port", r, p) for r, p in engine.path(s, d))
                    self._route[s, d] = (("src", s), *hops, ("dst", d))

    def route(self, src: int, dst: int) -> tuple[Hashable, ...]:
        """The resources a flow from node `src` to node `dst` crosses."""
        return self._route[src, dst]


@dataclass(frozen=True)
class QosOutcome:
    """A request's fate with the middleware."""

    job: str
    admitted: bool
    curve: Curve | None  # the curve it runs on, if admitted
    bandwidth: float  # reserved per flow, bytes/s (0 if refused)
    nodes: tuple[int, ...]
    start: float
    time: float  # its profiled time, s: exact under reservation (nan if refused)
    refusal: str = ""


@dataclass(frozen=True)
class NoQosOutcome:
    """A request's run without the middleware."""

    job: str
    curve: Curve
    nodes: tuple[int, ...]
    start: float
    time: float  # s
    bandwidth: float  # time-averaged bandwidth of its slowest flow, bytes/s


@dataclass(frozen=True)
class NoQosConfig:
    """How jobs run without the middleware (module docstring).

    `configuration`: "same" runs an admitted job on the curve the middleware gave it and a
    refused one on the idle cluster's choice; "idle" runs every job on the idle cluster's
    choice.
    """

    configuration: Literal["same", "idle"] = "same"


def _request(s: Subtask) -> Request:
    # §3.5.1: t1 = 0, t2 the requested time, the parameters fixed, N free.
    return Request(application=s.application, parameters=s.parameters, t2=s.t2)


def run_qos(subtasks: Sequence[Subtask], store: ProfileStore, cluster: Cluster) -> list[QosOutcome]:
    """Every request through the translator and the allocator on arrival (module
    docstring); outcomes in the order of `subtasks`."""
    allocator = ResourceAllocator(cluster)
    order = sorted(range(len(subtasks)), key=lambda i: (subtasks[i].arrival, i))
    ends: list[tuple[float, int, str]] = []  # (finish time, sequence, job) to release
    out: dict[int, QosOutcome] = {}
    for i in order:
        s = subtasks[i]
        # Completions at or before this arrival free their resources first.
        while ends and ends[0][0] <= s.arrival:
            allocator.release(heapq.heappop(ends)[2])
        result = translate(store, _request(s), allocator)
        if isinstance(result, Refusal):
            out[i] = QosOutcome(s.job, False, None, 0.0, (), s.arrival, math.nan, str(result))
            continue
        allocation = allocator.allocate(s.job, result.nodes, _pattern(store, s), result.bandwidth)
        heapq.heappush(ends, (s.arrival + result.time, i, s.job))
        out[i] = QosOutcome(
            s.job,
            True,
            result.curve,
            allocation.bandwidth,
            allocation.nodes,
            s.arrival,
            result.time,
        )
    return [out[i] for i in range(len(subtasks))]


def idle_choice(store: ProfileStore, cluster: Cluster, s: Subtask) -> Alternative:
    """What the translator gives the request on an idle cluster."""
    result = translate(store, _request(s), ResourceAllocator(cluster))
    if isinstance(result, Refusal):
        raise ValueError(f"{s.job}: refused even on an idle cluster: {result}")
    return result


@dataclass
class _Running:
    index: int
    curve: Curve
    nodes: tuple[int, ...]
    flows: list[tuple[Hashable, ...]]
    cap: float  # the most bandwidth a flow of it takes: its curve's largest, bytes/s
    start: float
    left: float = 1.0  # remaining work fraction
    rate: float = 0.0  # per-flow bandwidth of its slowest flow now, bytes/s
    bw_integral: float = 0.0


def run_noqos(
    subtasks: Sequence[Subtask],
    store: ProfileStore,
    cluster: Cluster,
    qos: Sequence[QosOutcome] | None = None,
    config: NoQosConfig | None = None,
    network: Network | None = None,
) -> list[NoQosOutcome]:
    """Every request runs, sharing the network max-min fairly (module docstring);
    outcomes in the order of `subtasks`. `qos` (from `run_qos`) is needed for the
    "same" configuration."""
    config = config or NoQosConfig()
    net = network or Network(cluster)
    curves: list[Curve] = []
    idle: dict[tuple[str, tuple[tuple[str, object], ...], float], Curve] = {}
    for i, s in enumerate(subtasks):
        if config.configuration == "same" and qos is not None and qos[i].curve is not None:
            curves.append(qos[i].curve)  # type: ignore[arg-type]
            continue
        if config.configuration == "same" and qos is None:
            raise ValueError("configuration 'same' needs the QoS outcomes")
        key = (s.application, tuple(sorted(s.parameters.items())), s.t2)
        if key not in idle:
            idle[key] = idle_choice(store, cluster, s).curve
        curves.append(idle[key])

    order = sorted(range(len(subtasks)), key=lambda i: (subtasks[i].arrival, i))
    ranks = [0] * net.nodes  # running ranks per node, for placement
    running: list[_Running] = []
    out: dict[int, NoQosOutcome] = {}
    now = 0.0
    k = 0  # next arrival in `order`
    while k < len(order) or running:
        _share(running, net)
        # Next event: the earliest completion or the next arrival.
        finish = min((r.left / _speed(r) for r in running), default=math.inf)
        arrival = subtasks[order[k]].arrival - now if k < len(order) else math.inf
        dt = max(0.0, min(finish, arrival))
        for r in running:
            r.left -= dt * _speed(r)
            r.bw_integral += dt * r.rate
        now += dt
        done = [r for r in running if r.left <= _EPS * 1e3]
        for r in done:
            running.remove(r)
            for n in r.nodes:
                ranks[n] -= 1
            time = now - r.start
            mean_bw = r.bw_integral / time if time > 0 else r.rate
            s = subtasks[r.index]
            out[r.index] = NoQosOutcome(s.job, r.curve, r.nodes, r.start, time, mean_bw)
        if done:
            continue  # recompute the shares before admitting arrivals at the same instant
        while k < len(order) and subtasks[order[k]].arrival <= now:
            i = order[k]
            k += 1
            curve = curves[i]
            nodes = tuple(
                sorted(sorted(range(net.nodes), key=lambda n: (ranks[n], n))[: curve.nodes])
            )
            for n in nodes:
                ranks[n] += 1
            pattern = _pattern(store, subtasks[i])
            flows = [net.route(nodes[f.src], nodes[f.dst]) for f in pattern.flows(len(nodes))]
            running.append(
                _Running(i, curve, nodes, flows, curve.points[-1].bandwidth, subtasks[i].arrival)
            )
    return [out[i] for i in range(len(subtasks))]


def _share(running: list[_Running], net: Network) -> None:
    """Give every running job the per-flow rate of its slowest flow under max-min."""
    flows = [f for r in running for f in r.flows]
    demand = [r.cap for r in running for _ in r.flows]
    rates = max_min_fair(flows, net.capacity, demand)
    j = 0
    for r in running:
        count = len(r.flows)
        r.rate = float(rates[j : j + count].min()) if count else r.cap
        j += count


def _speed(r: _Running) -> float:
    """Work fraction per second at the job's current bandwidth."""
    return 1.0 / profile_time(r.curve, r.rate)


def _pattern(store: ProfileStore, s: Subtask) -> Pattern:
    return store.application(s.application).pattern

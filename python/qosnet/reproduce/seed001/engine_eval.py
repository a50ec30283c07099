"""Document 001 §4.3-4.4 on the engine: the middleware's decisions, then every job run
packet by packet with and without it.

The request stream is `workload`'s (§4.3). With the middleware, each request is submitted
on arrival to the service's request handler (`launcher`: the translator and the resource
allocator; nodes exclusive, bandwidth reserved), and each admitted job's reservation is
released when it ends, under two policies: at its *promised* end (arrival plus the profiled
time of the point granted: what the evaluation did before) and at the end the engine
*measured* (a fixed point of decisions and engine runs, `launcher.decide_measured`). One
engine run holds every admitted job as an application model (`qosnet.profiler.models`) on
its allocated nodes from its arrival, each flow reserved at the granted bandwidth and
dispatched by NIC rate control: T_qos is the job's completion time there. Without the
middleware, a second engine run holds *every* request (none refused), an admitted one on
the same curve and nodes, a refused one on the idle cluster's choice placed on the
least-loaded nodes (counting jobs until their profiled best time), with no reservation and
GM's round robin over flows: T_noqos. Where that puts several jobs' ranks on one node they
share its processors (`PROCESSORS`: §4.3.1's "Dual Pentium III" nodes; the engine's
`endpoint.processors`); with the middleware a job's nodes are its own (§1.3: "for its
exclusive use only"), so its ranks never wait for a processor. The document does not say
where jobs run without the middleware; `PLACEMENTS` are the readings run here. A third kind
of run takes each curve alone, unreserved (T_alone_noqos), to take the improvement apart
into what the reservation costs a job (cap factor) and what the other jobs cost it without
the middleware (contention factor). T_expected is the profiled time the middleware
promised; the profiles are the profiler's (`qosnet.profiler`), measured on this same
engine, so "within x% of expected" is a statement about interference, not about a model
agreeing with itself by construction.
The offered load (`offered_load`) states how much the stream asks of the cluster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.profiles import Curve, ParamValue, ProfileStore
from qosnet.middleware.translator import Alternative
from qosnet.middleware.units import MB
from qosnet.profiler import engine_config, model, reserve, run_job, run_jobs
from qosnet.reproduce.seed001.fluid import idle_choice
from qosnet.reproduce.seed001.launcher import Decision, Key, decide, decide_measured
from qosnet.reproduce.seed001.workload import Subtask, generate

__all__ = ["PLACEMENTS", "PROCESSORS", "offered_load", "run_setting"]

#: Processors per node of the middleware's testbed (document 001 §4.3.1: "sixteen 1GHz Dual
#: Pentium III processors", sixteen dual-processor nodes).
PROCESSORS = 2

#: Where jobs run without the middleware (document 001 does not say):
#: - "least_loaded": an admitted job on the nodes the middleware granted it, a refused one
#:   on the nodes with the fewest jobs (counted until each job's profiled best time): a
#:   launcher that spreads jobs, though it reserves nothing;
#: - "first": every job on nodes 0..N-1, as `mpirun -np N` over the cluster's machine file
#:   starts it when nothing chooses nodes.
PLACEMENTS = ("least_loaded", "first")


def _app(
    curve: Curve, nodes: Sequence[int], start: float, bandwidth: float | None, job: str
) -> dict[str, Any]:
    values = {k: int(v) for k, v in curve.parameters.items()}
    app = model(curve.application).application(values, curve.nodes)
    app.update(name=job, nodes=list(nodes), start=f"{start!r} s")
    if bandwidth is not None:
        app["reserve"] = reserve(bandwidth)
    return app


def _noqos_placement(
    subtasks: Sequence[Subtask], curves: Sequence[Curve], qos: Sequence[Decision], nodes: int
) -> list[tuple[int, ...]]:
    """Without the middleware, "least_loaded" (`PLACEMENTS`): an admitted job on its granted
    nodes, a refused one on the least-loaded nodes (jobs counted from arrival to arrival +
    its curve's best time)."""
    busy: list[tuple[float, tuple[int, ...]]] = []
    out: list[tuple[int, ...]] = [()] * len(subtasks)
    for i in sorted(range(len(subtasks)), key=lambda i: (subtasks[i].arrival, i)):
        s = subtasks[i]
        busy = [(end, ns) for end, ns in busy if end > s.arrival]
        if qos[i].admitted:
            chosen = tuple(qos[i].nodes)
        else:
            load = [0] * nodes
            for _, ns in busy:
                for n in ns:
                    load[n] += 1
            chosen = tuple(
                sorted(sorted(range(nodes), key=lambda n: (load[n], n))[: curves[i].nodes])
            )
        busy.append((s.arrival + curves[i].points[-1].time, chosen))
        out[i] = chosen
    return out


def offered_load(subtasks: Sequence[Subtask], idle: Sequence[Alternative], nodes: int) -> float:
    """The work offered relative to the cluster's capacity: every request's nodes x time as
    an idle cluster would grant it (the translator's choice with nothing else running),
    over the cluster's nodes x the time over which requests arrive. Above 1 the requests
    cannot all run on exclusive nodes even packed perfectly."""
    if not subtasks:
        return math.nan
    span = max(s.arrival for s in subtasks)
    work = sum(a.nodes * a.time for a in idle)
    return work / (nodes * span) if span > 0 else math.inf


class _Engine:
    """The engine runs of one request stream: with the middleware (admitted jobs on their
    nodes, reserved, rate controlled), without it (every request, unreserved), and each
    curve alone without reservation; each run once per distinct set of decisions."""

    def __init__(
        self,
        subtasks: Sequence[Subtask],
        idle: Sequence[Alternative],
        cluster_text: str,
        seed: int,
        processors: int | None = PROCESSORS,
        placement: str = PLACEMENTS[0],
    ) -> None:
        if placement not in PLACEMENTS:
            raise ValueError(
                f"placement: must be one of {', '.join(PLACEMENTS)}, got {placement!r}"
            )
        self.subtasks = subtasks
        self.idle = idle
        self.cluster_text = cluster_text
        self.nodes = Cluster.from_toml(cluster_text).nodes
        self.seed = seed
        self.processors = processors
        self.placement = placement
        self.passes = 0
        #: per admitted job (its decision's key), the compute each of its ranks lost to
        #: shared processors with the middleware, s (0: its nodes are its own)
        self.qos_stretch: dict[Key, float] = {}
        self._noqos: dict[tuple[tuple[bool, Key], ...], tuple[list[float], list[float]]] = {}
        self._alone: dict[tuple[str, tuple[tuple[str, ParamValue], ...], int], float] = {}

    def qos(self, decisions: Sequence[Decision]) -> list[float]:
        """T_qos: every admitted job from its arrival, reserved at its grant."""
        self.passes += 1
        out = [math.nan] * len(decisions)
        admitted = [i for i, d in enumerate(decisions) if d.admitted]
        if not admitted:
            return out
        apps = []
        for i in admitted:
            d = decisions[i]
            assert d.curve is not None
            apps.append(_app(d.curve, d.nodes, d.start, d.bandwidth, d.job))
        cfg = engine_config(apps, self.cluster_text, seed=self.seed, processors=self.processors)
        jobs = run_jobs(cfg)
        per_rank = jobs["compute_stretch_s"] / jobs["ranks"]
        for i, t, lost in zip(admitted, jobs["time_s"], per_rank, strict=True):
            out[i] = float(t)
            self.qos_stretch[decisions[i].key] = float(lost)
        return out

    def curves(self, decisions: Sequence[Decision]) -> list[Curve]:
        """What each request runs without the middleware: the admitted one its granted
        curve, a refused one the idle cluster's choice."""
        return [
            d.curve if d.curve is not None else a.curve
            for d, a in zip(decisions, self.idle, strict=True)
        ]

    def noqos(self, decisions: Sequence[Decision]) -> tuple[list[float], list[float]]:
        """T_noqos: every request, unreserved, GM's interleaved queues; and the compute
        each job's ranks lost to shared processors (s per rank)."""
        key = tuple((d.admitted, d.key) for d in decisions)
        if key not in self._noqos:
            curves = self.curves(decisions)
            if self.placement == "first":
                placement = [tuple(range(c.nodes)) for c in curves]
            else:
                placement = _noqos_placement(self.subtasks, curves, decisions, self.nodes)
            apps = [
                _app(curves[i], placement[i], s.arrival, None, s.job)
                for i, s in enumerate(self.subtasks)
            ]
            cfg = engine_config(
                apps,
                self.cluster_text,
                rate_control=False,
                seed=self.seed,
                processors=self.processors,
            )
            if apps:
                jobs = run_jobs(cfg)
                lost = jobs["compute_stretch_s"] / jobs["ranks"]
                self._noqos[key] = ([float(t) for t in jobs["time_s"]], [float(x) for x in lost])
            else:
                self._noqos[key] = ([], [])
        return self._noqos[key]

    def alone(self, curve: Curve) -> float:
        """The curve's job alone on the cluster (ranks on nodes 0..N-1), unreserved: what
        it takes with nothing to share the network with and no reservation to cap it."""
        key = (curve.application, tuple(sorted(curve.parameters.items())), curve.nodes)
        if key not in self._alone:
            app = _app(curve, range(curve.nodes), 0.0, None, "alone")
            cfg = engine_config([app], self.cluster_text, rate_control=False, seed=self.seed)
            self._alone[key] = run_job(cfg)[0]
        return self._alone[key]


def run_setting(
    setting: Any,
    seed: int,
    store: ProfileStore,
    cluster_text: str = DOCUMENT_001_TESTBED,
    processors: int | None = PROCESSORS,
    placement: str = PLACEMENTS[0],
) -> pd.DataFrame:
    """One run of a `Setting` (`evaluation`): its workload drawn with `seed`, the
    middleware's decisions with releases at the promised ends and at the measured ends
    (`launcher`), and the engine runs of each; one row per request and release policy.
    `processors` per node (None: a processor per rank) and the `placement` of jobs without
    the middleware (`PLACEMENTS`) are the engine's host model."""
    cluster = Cluster.from_toml(cluster_text, name="document 001 testbed")
    subtasks = generate(setting.workload, store, seed)
    idle = [idle_choice(store, cluster, s) for s in subtasks]
    engine = _Engine(subtasks, idle, cluster_text, seed, processors, placement)
    promised = decide(subtasks)
    t_promised = engine.qos(promised)
    settled = decide_measured(subtasks, engine.qos, first=(promised, t_promised))
    load = offered_load(subtasks, idle, cluster.nodes)
    frames = [
        _rows(setting, seed, subtasks, "promised", promised, t_promised, engine, load, 1, True),
        _rows(
            setting,
            seed,
            subtasks,
            "measured",
            settled.decisions,
            settled.times,
            engine,
            load,
            settled.passes,
            settled.converged,
        ),
    ]
    return pd.concat(frames, ignore_index=True)


def _rows(
    setting: Any,
    seed: int,
    subtasks: Sequence[Subtask],
    release: str,
    decisions: Sequence[Decision],
    t_qos: Sequence[float],
    engine: _Engine,
    load: float,
    passes: int,
    converged: bool,
) -> pd.DataFrame:
    """One row per request under one release policy, with §4.4.3's metrics."""
    curves = engine.curves(decisions)
    t_noqos, noqos_stretch = engine.noqos(decisions)
    rows = []
    for i, (s, q) in enumerate(zip(subtasks, decisions, strict=True)):
        rows.append(
            {
                "application": setting.application,
                "max_interarrival": setting.max_interarrival,
                "image_ratio": setting.image_ratio,
                "interleaving_ratio": setting.interleaving_ratio,
                "seed": seed,
                "release": release,
                "processors": engine.processors or 0,
                "placement": engine.placement,
                "offered_load": load,
                "passes": passes,
                "converged": converged,
                "job": s.job,
                "arrival": s.arrival,
                **{f"param_{k}": v for k, v in s.parameters.items()},
                "t_requested": s.t2,
                "t_best": s.t_best,
                "admitted": q.admitted,
                "qos_nodes": len(q.nodes) if q.admitted else 0,
                "qos_bandwidth_MBps": q.bandwidth / MB,
                "t_expected": q.time,
                "released": q.released,
                "t_qos": t_qos[i],
                "noqos_nodes": curves[i].nodes,
                "t_noqos": t_noqos[i],
                "t_alone_noqos": engine.alone(curves[i]),
                # compute each rank lost to processors shared with other jobs' ranks
                "qos_cpu_stretch_s": engine.qos_stretch.get(q.key, math.nan)
                if q.admitted
                else math.nan,
                "noqos_cpu_stretch_s": noqos_stretch[i],
                "refusal": q.refusal,
            }
        )
    df = pd.DataFrame(rows)
    adm = df["admitted"] if len(df) else pd.Series(dtype=bool)

    def pct(a: str, b: str) -> Any:
        return np.where(adm, 100 * (df[a] - df[b]) / df[b], np.nan)

    if len(df):
        # §4.4.3 metric 1, admitted jobs only
        df["improvement_pct"] = pct("t_noqos", "t_qos")
        # metric 2: against the promised (expected) time, and against the requested bound
        df["qos_vs_expected_pct"] = pct("t_qos", "t_expected")
        df["noqos_vs_expected_pct"] = pct("t_noqos", "t_expected")
        df["qos_vs_requested_pct"] = pct("t_qos", "t_requested")
        df["noqos_vs_requested_pct"] = pct("t_noqos", "t_requested")
        # metric 1 taken apart: (1 + improvement) = cap x contention, where cap is what the
        # reservation costs the job alone (unreserved alone / reserved) and contention what
        # the other jobs cost it without the middleware (with them / alone, unreserved)
        df["cap_factor"] = np.where(adm, df["t_alone_noqos"] / df["t_qos"], np.nan)
        df["contention_factor"] = np.where(adm, df["t_noqos"] / df["t_alone_noqos"], np.nan)
    return df

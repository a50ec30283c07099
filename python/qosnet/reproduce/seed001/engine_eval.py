"""Document 001 §4.3-4.4 on the engine: the middleware's decisions, then every job run
packet by packet with and without it.

The request stream is `workload`'s (§4.3). With the middleware, each request goes through
the translator and the resource allocator on arrival (`fluid.run_qos`: nodes exclusive,
bandwidth reserved; a job's resources are released at its *promised* end, arrival plus the
profiled time of the point it was granted — the engine's jobs are not fed back into the
allocator). Then one engine run holds every admitted job as an application model
(`qosnet.profiler.models`) on its allocated nodes from its arrival, each flow reserved at the
granted bandwidth and dispatched by NIC rate control: T_qos is the job's completion time
there. Without the middleware, a second engine run holds *every* request (none refused), an
admitted one on the same curve and nodes, a refused one on the idle cluster's choice placed
on the least-loaded nodes (counting jobs until their profiled best time), with no
reservation and GM's round robin over flows: T_noqos. T_expected is the profiled time the
middleware promised; the profiles are the profiler's (`qosnet.profiler`), measured on this
same engine, so "within x% of expected" is a statement about interference, not about a
model agreeing with itself by construction.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.profiles import Curve, ProfileStore
from qosnet.middleware.units import MB
from qosnet.profiler import engine_config, model, reserve, run_job
from qosnet.reproduce.seed001.fluid import QosOutcome, idle_choice, run_qos
from qosnet.reproduce.seed001.workload import Subtask, generate

__all__ = ["run_setting"]


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
    subtasks: Sequence[Subtask], curves: Sequence[Curve], qos: Sequence[QosOutcome], nodes: int
) -> list[tuple[int, ...]]:
    """Without the middleware: an admitted job on its granted nodes, a refused one on the
    least-loaded nodes (jobs counted from arrival to arrival + its curve's best time)."""
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


def run_setting(
    setting: Any, seed: int, store: ProfileStore, cluster_text: str = DOCUMENT_001_TESTBED
) -> pd.DataFrame:
    """One run of a `Setting` (`evaluation`): its workload drawn with `seed`, the middleware's
    decisions, and both engine runs; one row per request."""
    cluster = Cluster.from_toml(cluster_text, name="document 001 testbed")
    subtasks = generate(setting.workload, store, seed)
    qos = run_qos(subtasks, store, cluster)
    curves = [
        q.curve if q.curve is not None else idle_choice(store, cluster, s).curve
        for s, q in zip(subtasks, qos, strict=True)
    ]
    placement = _noqos_placement(subtasks, curves, qos, cluster.nodes)
    admitted = [i for i, q in enumerate(qos) if q.admitted]
    t_qos = [math.nan] * len(subtasks)
    if admitted:
        apps = [
            _app(curves[i], qos[i].nodes, subtasks[i].arrival, qos[i].bandwidth, subtasks[i].job)
            for i in admitted
        ]
        for i, t in zip(
            admitted, run_job(engine_config(apps, cluster_text, seed=seed)), strict=True
        ):
            t_qos[i] = t
    t_noqos = [math.nan] * len(subtasks)
    if subtasks:
        apps = [
            _app(curves[i], placement[i], s.arrival, None, s.job) for i, s in enumerate(subtasks)
        ]
        t_noqos = run_job(engine_config(apps, cluster_text, rate_control=False, seed=seed))
    rows = []
    for i, (s, q) in enumerate(zip(subtasks, qos, strict=True)):
        rows.append(
            {
                "application": setting.application,
                "max_interarrival": setting.max_interarrival,
                "image_ratio": setting.image_ratio,
                "interleaving_ratio": setting.interleaving_ratio,
                "seed": seed,
                "job": s.job,
                "arrival": s.arrival,
                **{f"param_{k}": v for k, v in s.parameters.items()},
                "t_requested": s.t2,
                "t_best": s.t_best,
                "admitted": q.admitted,
                "qos_nodes": len(q.nodes) if q.admitted else 0,
                "qos_bandwidth_MBps": q.bandwidth / MB,
                "t_expected": q.time,
                "t_qos": t_qos[i],
                "noqos_nodes": curves[i].nodes,
                "t_noqos": t_noqos[i],
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
    return df

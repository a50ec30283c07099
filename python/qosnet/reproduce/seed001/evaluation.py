"""Document 001's evaluation as a `qosnet reproduce` set, on the packet-level engine:
§4.2's rate-control experiments (`rate_control`: Figs. 4.1-4.2, 4.4, 4.6-4.7) and §4.3-4.4's
middleware evaluation, its settings (§4.3), one run per setting and seed (the request
stream through the middleware's decisions, then every job on the engine with and without
the middleware: `engine_eval`), the three metrics (§4.4.3) and the report beside Tables
4.1-4.2 and Figures 4.9-4.17. The profiles are the profiler's (`qosnet.profiler`, shipped
as `middleware/data/profiled.json`), measured on the same engine.

The command-line `reproduce` runs a module with `SELF_RUN = True` through its own `run`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.profile_io import load_profiled
from qosnet.middleware.profiles import ProfileStore
from qosnet.reproduce.report import claim_section, report_head, write_report
from qosnet.reproduce.runner import Experiment
from qosnet.reproduce.seed001 import claims, document_times, engine_eval, rate_control
from qosnet.reproduce.seed001.rate_control import rate_control_lines
from qosnet.reproduce.seed001.workload import (
    POLYGON_IMAGE_SIZES,
    RAY_TRACING_RATIOS,
    WorkloadConfig,
    ray_tracing_mix,
)
from qosnet.tables import markdown, write

#: This set runs its own experiments: the CLI calls `run`, not `run_experiments`.
SELF_RUN = True

#: §4.3 item 1: the maximum interval between tasks, seconds.
INTERVALS = (10.0, 20.0, 50.0)
#: The same knob pushed further (the `load` experiment): with our models' run times the
#: document's intervals offer the cluster little work (`engine_eval.offered_load`), so
#: these shorter intervals show what heavier loads do. Not the document's values.
LOAD_INTERVALS = (1.0, 2.0, 5.0)
#: Seeds per setting (document 001 names two, "SEED #1" and "#2", for Table 4.2).
SEEDS_FULL = 3
SEEDS_QUICK = 1
TASKS_QUICK = 2
#: Tasks per run in the full set (the document gives no number; its Figures 4.9-4.14 plot
#: a few tens of requests each). 15 tasks of 1-12 renderings: about 100 requests a run.
TASKS_FULL = 15

#: Document 001 Table 4.1: (interval, 512:1024, 0:2) -> (max %, average %).
TABLE_4_1: dict[tuple[float, str, str], tuple[float, float]] = {
    (10.0, "50:50", "50:50"): (34.45, 9.29),
    (20.0, "50:50", "50:50"): (45.27, 7.48),
    (50.0, "50:50", "50:50"): (43.23, 3.05),
    (10.0, "30:70", "50:50"): (43.68, 13.68),
    (20.0, "30:70", "50:50"): (52.57, 7.57),
    (50.0, "30:70", "50:50"): (4.43, 0.39),
    (10.0, "70:30", "50:50"): (31.30, 10.92),
    (20.0, "70:30", "50:50"): (20.51, 5.72),
    (50.0, "70:30", "50:50"): (3.57, 0.49),
    (10.0, "50:50", "30:70"): (64.86, 17.53),
    (20.0, "50:50", "30:70"): (17.23, 3.75),
    (50.0, "50:50", "30:70"): (6.66, 0.559),
    (10.0, "50:50", "70:30"): (39.76, 15.49),
    (20.0, "50:50", "70:30"): (49.94, 11.04),
    (50.0, "50:50", "70:30"): (6.86, 0.725),
}
#: Document 001 Table 4.2: (interval, seed #) -> (max %, average %).
TABLE_4_2: dict[tuple[float, int], tuple[float, float]] = {
    (10.0, 1): (80.99, 43.06),
    (20.0, 1): (35.11, 11.80),
    (10.0, 2): (74.67, 37.25),
    (20.0, 2): (44.52, 13.48),
}

CLAIMS = {
    "rate_control": (
        "As the bandwidth reserved for each flow rises, the execution time falls (Figs. 4.1-4.2, "
        "4 and 8 nodes, up to 210/6 = 35 and 210/14 = 15 MB/s per flow); IS takes 0.1404 s at "
        "5 MB/s and 0.0925 s at 8 MB/s on 4 nodes (§4.2.3's reading of Fig. 4.1)."
    ),
    "background": (
        "With QoS the application's time is predictable in the presence of 2 and 3 "
        "bandwidth-hungry background flows on one of its nodes; without QoS the background "
        "flows, treated equal to the application's, interfere (Fig. 4.4)."
    ),
    "multiple_jobs": (
        "Two and three applications at once, each with its own reservation, take the same "
        "time as alone at that reservation (Figs. 4.6-4.7: IS at (5, 8) MB/s takes (0.1404, "
        "0.09175) s, alone 0.1404 and 0.0925)."
    ),
    "ray_tracing": (
        "Up to 64% improvement for ray tracing (Table 4.1); averages 0.39-17.53%, falling "
        "as the maximum inter-arrival time grows from 10 to 50 s. Ray tracing gains less "
        "than polygon rendering because it communicates less for its computation (§4.4.3). "
        "Admission falls below 40% at the heaviest load (Figure 4.17)."
    ),
    "node_sharing": (
        "Without the middleware jobs contend for the cluster; the document's testbed nodes "
        "are dual processors (§4.3.1) and it does not say where jobs run without the "
        "middleware. Here: Table 4.1's first row and Table 4.2's 10 s row (seed 1) with 1 "
        "and 2 processors per node and none modelled (a processor per rank), and with jobs "
        "placed without the middleware on the least-loaded nodes or all on nodes 0..N-1."
    ),
    "load": (
        "As the inter-arrival time gets larger, the contention and load in the system "
        "decrease, and so do the differences between the expected and actual times; the "
        "admission rate rises (§4.4.3, Figure 4.17). Here: the same request streams at "
        "shorter intervals than the document's, with the offered load stated."
    ),
    "polygon_rendering": (
        "Up to 80% improvement for polygon rendering (Table 4.2: 74.67-80.99% max, "
        "37.25-43.06% average at 10 s; 11.8-13.48% average at 20 s). The excess over the "
        "expected time without the middleware is as high as 117% at 10 s, within 7% with "
        "it (§4.4.3, §5). Admission below 60% at the heaviest load, almost 100% at the "
        "lightest (Figure 4.17)."
    ),
}


@dataclass(frozen=True)
class Setting:
    """One row of the evaluation: an application, its parameter mix and the interval."""

    application: str
    max_interarrival: float
    image_ratio: str  # "50:50" (512:1024) for ray tracing, "1:1:1" for polygon rendering
    interleaving_ratio: str  # "50:50" (0:2); "" for polygon rendering
    workload: WorkloadConfig


def _ratio(r: tuple[int, int]) -> str:
    return f"{r[0]}:{r[1]}"


def settings(application: str, quick: bool = False) -> list[Setting]:
    """The settings of one experiment: Table 4.1's 15 rows for ray tracing; the three
    intervals for polygon rendering (Table 4.2 has 10 and 20 s; Figure 4.17 all three);
    for `load`, both applications' default mixes at `LOAD_INTERVALS`."""
    if application == "load":
        return [
            s
            for app, ratios in (("ray_tracing", RAY_TRACING_RATIOS[:1]), ("polygon_rendering", ()))
            for s in _settings(app, quick, LOAD_INTERVALS, ratios)
        ]
    return _settings(application, quick, INTERVALS, RAY_TRACING_RATIOS)


def _settings(
    application: str,
    quick: bool,
    intervals: Sequence[float],
    ratios: Sequence[tuple[tuple[int, int], tuple[int, int]]],
) -> list[Setting]:
    extra: dict[str, Any] = {"tasks": TASKS_QUICK if quick else TASKS_FULL}
    out: list[Setting] = []
    if application == "ray_tracing":
        for image, inter in ratios:
            for interval in intervals:
                cfg = WorkloadConfig(
                    application=application,
                    max_interarrival=interval,
                    mix=ray_tracing_mix(image, inter),
                    **extra,
                )
                out.append(Setting(application, interval, _ratio(image), _ratio(inter), cfg))
    elif application == "polygon_rendering":
        for interval in intervals:
            cfg = WorkloadConfig(
                application=application,
                max_interarrival=interval,
                mix={"image_size": POLYGON_IMAGE_SIZES},
                **extra,
            )
            out.append(Setting(application, interval, "1:1:1", "", cfg))
    else:
        raise ValueError(
            f"application: must be ray_tracing, polygon_rendering or load, got {application!r}"
        )
    return out


def experiments(quick: bool = False) -> list[Experiment]:
    """The set's experiments. They carry no engine runs (`runs` is empty): `run` executes
    them itself (`rate_control`, and `settings` through `engine_eval`)."""
    return [
        Experiment(
            "rate_control",
            "Execution time against reservation (Figs. 4.1-4.2)",
            CLAIMS["rate_control"],
        ),
        Experiment(
            "background",
            "Guaranteed response time with background flows (Fig. 4.4)",
            CLAIMS["background"],
        ),
        Experiment(
            "multiple_jobs",
            "Jobs at once on exclusive virtual networks (Figs. 4.6-4.7)",
            CLAIMS["multiple_jobs"],
        ),
        Experiment(
            "ray_tracing",
            "Ray tracing: Table 4.1, Figures 4.11-4.15 and 4.17",
            CLAIMS["ray_tracing"],
        ),
        Experiment(
            "polygon_rendering",
            "Polygon rendering: Table 4.2, Figures 4.9-4.10, 4.16 and 4.17",
            CLAIMS["polygon_rendering"],
        ),
        Experiment(
            "load",
            "Heavier offered loads than the document's intervals give here (Figure 4.17's trend)",
            CLAIMS["load"],
        ),
    ] + (
        []
        if quick
        else [
            Experiment(
                "node_sharing",
                "Shared processors and placement without the middleware (sensitivity)",
                CLAIMS["node_sharing"],
            )
        ]
    )


#: The `node_sharing` experiment's host models: processors per node (None: a processor per
#: rank) x where jobs run without the middleware (`engine_eval.PLACEMENTS`), the document's
#: own (2, least_loaded) left out: the report takes those rows from the tables' seed-1 runs.
NODE_SHARING = tuple(
    (p, placement)
    for p in (None, 1, engine_eval.PROCESSORS)
    for placement in engine_eval.PLACEMENTS
    if (p, placement) != (engine_eval.PROCESSORS, engine_eval.PLACEMENTS[0])
)


#: The §4.2 experiments, run by `rate_control`.
RATE_CONTROL = ("rate_control", "background", "multiple_jobs")


@cache
def _world() -> tuple[ProfileStore, Cluster]:
    cluster = Cluster.from_toml(DOCUMENT_001_TESTBED, name="document 001 testbed")
    return load_profiled(), cluster


def run_setting(
    setting: Setting,
    seed: int,
    processors: int | None = engine_eval.PROCESSORS,
    placement: str = engine_eval.PLACEMENTS[0],
) -> pd.DataFrame:
    """One run: a workload of `setting` drawn with `seed`, the middleware's decisions, and
    the jobs on the engine with and without it (`engine_eval`, with its host model:
    `processors` per node, `placement` without the middleware); one row per request."""
    store, _ = _world()
    return engine_eval.run_setting(setting, seed, store, processors=processors, placement=placement)


Work = tuple[Setting, int, int | None, str]


def _one(args: Work) -> pd.DataFrame:
    return run_setting(*args)


def _work(name: str, quick: bool) -> list[Work]:
    """The runs of middleware experiment `name`: each setting x seed (quick: the first
    setting, `SEEDS_QUICK` seeds), on the document's host model; `node_sharing`: the first
    setting of each application, seed 1, under every `NODE_SHARING` host model."""
    if name == "node_sharing":
        first = [settings("ray_tracing")[0], settings("polygon_rendering")[0]]
        return [(s, 1, p, placement) for s in first for p, placement in NODE_SHARING]
    seeds = range(1, (SEEDS_QUICK if quick else SEEDS_FULL) + 1)
    default = (engine_eval.PROCESSORS, engine_eval.PLACEMENTS[0])
    return [
        (s, seed, *default) for s in settings(name, quick)[: 1 if quick else None] for seed in seeds
    ]


def run_all(
    experiments: Sequence[Experiment], quick: bool = False, jobs: int | None = None
) -> dict[str, pd.DataFrame]:
    """Every experiment: §4.2's through `rate_control`; for the middleware's, every setting
    `SEEDS_FULL` (quick: `SEEDS_QUICK`) seeds each, on `jobs` processes (default: one per
    core), one row per request. Seeds are 1, 2, ... so that document 001's "SEED #1", "#2"
    line up by name only. Quick runs one setting per application."""
    out: dict[str, pd.DataFrame] = {}
    functions = {
        "rate_control": rate_control.sweep,
        "background": rate_control.background,
        "multiple_jobs": rate_control.multiple,
    }
    for e in experiments:
        if e.name in functions:
            out[e.name] = functions[e.name](quick, jobs)
    work = [
        (e.name, w) for e in experiments if e.name not in functions for w in _work(e.name, quick)
    ]
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(work) <= 1:
        frames = [_one(w) for _, w in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            frames = list(pool.map(_one, [w for _, w in work]))
    for e in experiments:
        mine = [f for (name, _), f in zip(work, frames, strict=True) if name == e.name]
        if mine:
            out[e.name] = pd.concat(mine, ignore_index=True)
    return out


def run(
    experiments: Sequence[Experiment], quick: bool = False, jobs: int | None = None
) -> dict[str, pd.DataFrame]:
    """The CLI's entry point for a `SELF_RUN` set: `run_all`, timed (the report states it)."""
    start = time.perf_counter()
    out = run_all(experiments, quick=quick, jobs=jobs)
    out["_runtime"] = pd.DataFrame([{"seconds": time.perf_counter() - start}])
    return out


KEYS = ["application", "max_interarrival", "image_ratio", "interleaving_ratio"]
#: The release policy the tables report (`launcher`): at the end the engine measured.
RELEASE = "measured"


def summarise(jobs: pd.DataFrame, by_seed: bool = False) -> pd.DataFrame:
    """The three metrics per setting and release policy (and per seed if asked):
    admission rate, max and average improvement over admitted jobs (pooled over seeds),
    the differences from the expected and requested times, the improvement's two factors,
    the offered load (mean over seeds) and how the measured-release fixed point went."""
    keys = [*KEYS, "release"] + (["seed"] if by_seed else [])
    rows = [
        {**dict(zip(keys, key, strict=True)), **_metrics(g)}
        for key, g in jobs.groupby(keys, sort=False)
    ]
    return pd.DataFrame(rows)


def _metrics(g: pd.DataFrame) -> dict[str, float]:
    """`summarise`'s columns for one group of requests."""
    a = g[g["admitted"]]
    return {
        "requests": len(g),
        "admitted": len(a),
        "offered_load": float(g.groupby("seed")["offered_load"].first().mean()),
        "admission_rate_pct": 100 * len(a) / len(g),
        "max_improvement_pct": a["improvement_pct"].max(),
        "avg_improvement_pct": a["improvement_pct"].mean(),
        "cap_factor": a["cap_factor"].mean(),
        "contention_factor": a["contention_factor"].mean(),
        # compute a rank lost to processors shared with other jobs, as a share of the job's
        # time without the middleware (with it: the most any admitted job lost, s)
        "noqos_cpu_share": (a["noqos_cpu_stretch_s"] / a["t_noqos"]).mean(),
        "qos_cpu_stretch_max_s": a["qos_cpu_stretch_s"].max(),
        "qos_vs_expected_pct": a["qos_vs_expected_pct"].mean(),
        "noqos_vs_expected_pct": a["noqos_vs_expected_pct"].mean(),
        "noqos_vs_expected_max_pct": a["noqos_vs_expected_pct"].max(),
        "qos_vs_requested_pct": a["qos_vs_requested_pct"].mean(),
        "noqos_vs_requested_pct": a["noqos_vs_requested_pct"].mean(),
        "passes": int(g["passes"].max()),
        "converged": bool(g["converged"].all()),
    }


def spread(jobs: pd.DataFrame, keys: Sequence[str] = (*KEYS, "release")) -> pd.DataFrame:
    """Per `keys`: each seed's admission rate and average improvement, then their mean and
    standard deviation over seeds (and the seeds' least and greatest average), the
    improvement's factors, and the offered load."""
    per = pd.DataFrame(
        [
            {**dict(zip([*keys, "seed"], key, strict=True)), **_metrics(g)}
            for key, g in jobs.groupby([*keys, "seed"], sort=False)
        ]
    )
    out = (
        per.groupby(list(keys), sort=False)
        .agg(
            seeds=("seed", "nunique"),
            requests=("requests", "sum"),
            offered_load=("offered_load", "mean"),
            admission_rate_pct=("admission_rate_pct", "mean"),
            admission_sd=("admission_rate_pct", "std"),
            avg_improvement_pct=("avg_improvement_pct", "mean"),
            avg_improvement_sd=("avg_improvement_pct", "std"),
            avg_improvement_min=("avg_improvement_pct", "min"),
            avg_improvement_max=("avg_improvement_pct", "max"),
            cap_factor=("cap_factor", "mean"),
            contention_factor=("contention_factor", "mean"),
            noqos_cpu_share=("noqos_cpu_share", "mean"),
            qos_cpu_stretch_max_s=("qos_cpu_stretch_max_s", "max"),
            passes=("passes", "max"),
            converged=("converged", "all"),
        )
        .reset_index()
    )
    pooled = jobs[jobs["admitted"]].groupby(list(keys), sort=False)["improvement_pct"].max()
    return out.merge(pooled.rename("max_improvement_pct").reset_index(), how="left", on=list(keys))


# -- report ---------------------------------------------------------------------------------


def _beside_document(
    summary: pd.DataFrame, keys: list[str], document: dict[Any, tuple[float, float]]
) -> pd.DataFrame:
    """The model's improvements and admission rate per `keys` (with their spread over
    seeds where `summary` has it), and the document's max and average improvement for the
    same keys (NaN where it gives none)."""
    cols = [
        "offered_load",
        "admission_rate_pct",
        "max_improvement_pct",
        "avg_improvement_pct",
        "avg_improvement_sd",
        "cap_factor",
        "contention_factor",
        "noqos_cpu_share",
    ]
    t = summary[[*keys, *[c for c in cols if c in summary]]].copy()
    doc = [document.get(key, (np.nan, np.nan)) for key in t[keys].itertuples(index=False)]
    t["doc_max_improvement_pct"] = [d[0] for d in doc]
    t["doc_avg_improvement_pct"] = [d[1] for d in doc]
    return t


def _table_4_1(jobs: pd.DataFrame) -> pd.DataFrame:
    keys = ["max_interarrival", "image_ratio", "interleaving_ratio"]
    s = spread(jobs[jobs["release"] == RELEASE])
    return _beside_document(s, keys, TABLE_4_1)  # in the settings' order, Table 4.1's


def _table_4_2(jobs: pd.DataFrame) -> pd.DataFrame:
    by_seed = summarise(jobs[jobs["release"] == RELEASE], by_seed=True)
    t = _beside_document(by_seed, ["max_interarrival", "seed"], TABLE_4_2)
    return t.sort_values(["seed", "max_interarrival"], kind="stable")


def _by_release(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per interval, the two release policies side by side: admission rate and average
    improvement (mean over seeds), engine passes and whether the fixed point was reached."""
    t = spread(jobs, ("application", "max_interarrival", "release"))
    return t[
        [
            "application",
            "max_interarrival",
            "release",
            "offered_load",
            "admission_rate_pct",
            "admission_sd",
            "avg_improvement_pct",
            "avg_improvement_sd",
            "passes",
            "converged",
        ]
    ]


def _cell(col: str, v: object) -> str:
    """The report's numbers: 3 significant digits, one decimal from 10 up."""
    if isinstance(v, float):
        return "–" if np.isnan(v) else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def _default_host_rows(results: dict[str, pd.DataFrame]) -> list[pd.DataFrame]:
    """The `node_sharing` runs the tables already made: each application's first setting,
    seed 1, on the document's host model."""
    out = []
    for name in ("ray_tracing", "polygon_rendering"):
        if name in results:
            first = settings(name)[0]
            t = results[name]
            mine = (
                (t["seed"] == 1)
                & (t["max_interarrival"] == first.max_interarrival)
                & (t["image_ratio"] == first.image_ratio)
                & (t["interleaving_ratio"] == first.interleaving_ratio)
            )
            out.append(t[mine])
    return out


def _by_interval(jobs: pd.DataFrame) -> pd.DataFrame:
    """Per interval, pooled over mixes and seeds, releases at the measured end: metric 2
    and 3 for Figures 4.15-4.17, the mean improvement last (the column order of the
    shipped `*_by_interval.csv`)."""
    jobs = jobs[jobs["release"] == RELEASE]
    rows = [{"max_interarrival": i, **_metrics(g)} for i, g in jobs.groupby("max_interarrival")]
    drop = ["admitted", "max_improvement_pct", "passes", "converged"]
    per = pd.DataFrame(rows).drop(columns=drop)
    return per[[c for c in per.columns if c != "avg_improvement_pct"] + ["avg_improvement_pct"]]


def _fig_difference(per: dict[str, pd.DataFrame], path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(per), figsize=(5.5 * len(per), 4), squeeze=False)
    for ax, (name, t) in zip(axes[0], per.items(), strict=True):
        x = np.arange(len(t))
        w = 0.38
        ax.bar(x - w / 2, t["qos_vs_expected_pct"], w, label="with middleware (QoS)")
        ax.bar(x + w / 2, t["noqos_vs_expected_pct"], w, label="without middleware")
        ax.set_xticks(x, [f"{v:g}" for v in t["max_interarrival"]])
        ax.set_xlabel("maximum inter-arrival time between tasks (s)")
        ax.set_ylabel("mean (T_actual - T_expected) / T_expected (%)")
        ax.set_title(name.replace("_", " "))
        ax.axhline(0, color="black", lw=0.8)
        ax.legend()
    fig.suptitle("Excess over the expected time, admitted jobs (cf. Figs. 4.15-4.16)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fig_admission(per: dict[str, pd.DataFrame], path: Path) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, t in per.items():
        ax.plot(t["max_interarrival"], t["admission_rate_pct"], "o-", label=name.replace("_", " "))
    ax.set_xlabel("maximum inter-arrival time between tasks (s)")
    ax.set_ylabel("admission rate N_admitted / N_total (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Admission rate (cf. Fig. 4.17)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fig_improvement(t41: pd.DataFrame, path: Path) -> None:
    import matplotlib.pyplot as plt

    labels = [
        f"{r.max_interarrival:g}s\n{r.image_ratio}\n{r.interleaving_ratio}"
        for r in t41.itertuples()
    ]
    x = np.arange(len(t41))
    w = 0.38
    fig, ax = plt.subplots(figsize=(max(8, 0.7 * len(t41)), 4.5))
    ax.bar(x - w / 2, t41["avg_improvement_pct"], w, label="engine (profiled application models)")
    ax.bar(x + w / 2, t41["doc_avg_improvement_pct"], w, label="document 001, Table 4.1")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_xlabel("max inter-arrival / image 512:1024 / interleaving 0:2")
    ax.set_ylabel("average improvement (T_noqos - T_qos) / T_qos (%)")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_title("Ray tracing: average improvement of admitted jobs (Table 4.1)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _fig_requests(jobs: pd.DataFrame, title: str, path: Path, first: int = 40) -> None:
    """Per request, execution time with and without the middleware (cf. Figs. 4.9-4.14):
    refused requests have no QoS bar."""
    import matplotlib.pyplot as plt

    g = jobs[jobs["release"] == RELEASE].sort_values("arrival").head(first)
    x = np.arange(len(g))
    w = 0.4
    fig, ax = plt.subplots(figsize=(max(8, 0.25 * len(g)), 4))
    ax.bar(x - w / 2, g["t_qos"].fillna(0), w, label="with middleware (absent: refused)")
    ax.bar(x + w / 2, g["t_noqos"], w, label="without middleware")
    ax.set_xlabel("incoming request (arrival order)")
    ax.set_ylabel("execution time (s)")
    ax.set_title(title)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _document_times_lines(out: Path) -> list[str]:
    """The document's stated execution times beside the profiled models' (`document_times`)."""
    t = document_times.compare(_world()[0])
    write(t, out / "document_times.csv")
    return [
        "## Run times: the document's against the models'",
        "",
        "Every execution time document 001's text states (its Figures 3.2-3.3 and 4.1-4.2 are "
        "plots we have only as captions), beside the profile the middleware uses. MB/s per "
        "flow; `model` on the profiled grid (1-5, then every 5 MB/s). The IS model was sized "
        "near the two IS times: those rows are calibration, not a result.",
        "",
        markdown(t, _cell),
        "",
    ]


def report(
    experiments: Sequence[Experiment],
    results: dict[str, pd.DataFrame],
    out: Path,
    quick: bool = False,
) -> Path:
    """Write the per-request table, Tables 4.1/4.2 (CSV), figures (PNG), report.md and
    FINDINGS.md (its verdicts scored from those tables: `claims`); return the report."""
    path = _report(experiments, results, out, quick)
    claims.score(out, quick)
    return path


def _report(
    experiments: Sequence[Experiment],
    results: dict[str, pd.DataFrame],
    out: Path,
    quick: bool = False,
) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    out.mkdir(parents=True, exist_ok=True)
    claims = {e.name: e for e in experiments}
    lines = report_head(
        "Document 001 (QoS-aware middleware), §4.2-4.4 reproduced on the packet-level engine",
        quick,
        f"{TASKS_QUICK} tasks per run, one setting per application; numbers without weight",
    )
    cfg = WorkloadConfig(tasks=TASKS_QUICK if quick else TASKS_FULL)
    runtime = results.get("_runtime")
    if runtime is not None:
        lines += [
            f"Runtime: {float(runtime['seconds'].iloc[0]):.0f} s (wall clock, this machine).",
            "",
        ]
    lines += [
        "Everything here runs on the engine: application models (`qosnet.profiler.models`: "
        "compute phases and binary-swap or all-to-all communication phases, parameters "
        "chosen, not measured) on GM-style NICs with rate control (document 004's IDT/NDT "
        "scheduler), 4 KB packets of 64-byte flits, links of 210 MB/s bi-directional (105 "
        "MB/s each way). §4.2: 8 nodes on one 8-port switch (§4.1.1). §4.3-4.4: 16 nodes on "
        "8-port switches, assumed a 4-ary 2-tree (8 switches) with D-mod-K routing; the "
        "profiles the middleware uses are the profiler's, measured on the same engine with "
        "each job alone (`middleware/data/profiled.json`).",
        "",
        "Middleware evaluation (`engine_eval`, `launcher`): each request is submitted on "
        "arrival to the service's request handler (`RequestHandler`, the translator and "
        "resource allocator behind `qosnet serve`), on a clock set to simulated time. Each "
        "admitted job's reservation is released through the same handler when its job ends "
        "on the engine (`release = measured`: a fixed point of decisions and engine runs), "
        "or, as before, at its promised end (`release = promised`: arrival + profiled time). "
        "One engine run holds every admitted job on its nodes with its reservation (T_qos), "
        "another every request with no reservation and GM's interleaved queues (T_noqos; a "
        "refused request on the idle cluster's choice, on the least-loaded nodes), and each "
        "node's two processors (§4.3.1: dual Pentium III) are shared by the ranks computing "
        "on it: k ranks at once each run at min(1, 2/k) (engine `endpoint.processors`; with "
        "the middleware a job's nodes are its own, so only T_noqos can be slowed so). Each "
        "curve runs once alone without reservation (T_alone). The improvement "
        "(T_noqos - T_qos) / T_qos is cap x contention - 1 with cap = T_alone / T_qos (what "
        "the reservation costs the job) and contention = T_noqos / T_alone (what the other "
        "jobs cost it without the middleware).",
        "",
        f"Workload (§4.3; values not in the document are choices): {cfg.tasks} tasks per run, "
        f"task interval uniform on [0, 10 | 20 | 50] s (the `load` experiment: "
        f"{' | '.join(f'{i:g}' for i in LOAD_INTERVALS)} s), "
        f"{cfg.subtasks[0]}-{cfg.subtasks[1]} subtasks per task, gaps uniform on "
        f"[0, {cfg.max_subtask_gap:g}] s, requested time t2 = slack x the best knee time of "
        f"the request's curves with slack uniform on [{cfg.slack[0]:g}, {cfg.slack[1]:g}]; "
        f"{SEEDS_QUICK if quick else SEEDS_FULL} seed(s) per setting: averages are the mean "
        "over seeds of each seed's average, `_sd` their standard deviation over seeds. "
        "Offered load: the requests' nodes x time as an idle cluster would grant them, over "
        "16 nodes x the span of the arrivals (1 = the cluster's whole capacity).",
        "",
    ]
    results = {k: v for k, v in results.items() if not k.startswith("_")}
    for name in RATE_CONTROL:
        if name in results:
            e = claims[name]
            lines += claim_section(e, "Document 001")
            t = results[name]
            write(t, out / f"{name}.csv")
            lines += rate_control_lines(name, t, out)
    lines += _document_times_lines(out)
    results = {k: v for k, v in results.items() if k not in RATE_CONTROL}
    if not results:
        return write_report(out, lines)
    # (the node_sharing runs vary the host model: kept out of the per-setting summary)
    jobs_all = pd.concat([v for k, v in results.items() if k != "node_sharing"], ignore_index=True)
    # every request of every run: Parquet keeps the full table small enough to ship
    write(jobs_all, out / "requests.parquet")
    write(spread(jobs_all), out / "summary.csv")
    per_interval: dict[str, pd.DataFrame] = {}
    for name, jobs in results.items():
        e = claims[name]
        lines += claim_section(e, "Document 001")
        if name == "node_sharing":
            keys = ("application", "max_interarrival", "processors", "placement", "release")
            jobs = pd.concat([jobs, *_default_host_rows(results)], ignore_index=True)
            t = spread(jobs, keys).sort_values(
                ["application", "processors", "placement"], kind="stable"
            )
            t = t[t["release"] == RELEASE].drop(columns=["release", "avg_improvement_sd"])
            write(t, out / "node_sharing.csv")
            write(jobs, out / "node_sharing_requests.parquet")
            lines += [
                "Seed 1, releases at the measured end; `processors` 0: a processor per rank "
                "(jobs meet only in the network); `noqos_cpu_share`: the share of an admitted "
                "job's time without the middleware its ranks spent waiting for a processor "
                "(mean); `qos_cpu_stretch_max_s`: the most any admitted job lost to that with "
                "the middleware (its nodes are its own: 0).",
                "",
                markdown(t, _cell),
                "",
            ]
            continue
        if name == "load":
            t = spread(jobs, ("application", "max_interarrival", "release"))
            t = t[t["release"] == RELEASE].drop(columns=["release"])
            write(t, out / "load.csv")
            lines += [
                "Releases at the measured end; mean over seeds (`_sd`: their spread):",
                "",
                markdown(t, _cell),
                "",
            ]
            continue
        per = _by_interval(jobs)
        per_interval[name] = per
        write(per, out / f"{name}_by_interval.csv")
        if name == "ray_tracing":
            t = _table_4_1(jobs)
            write(t, out / "table_4_1_ray_tracing.csv")
            _fig_improvement(t, out / "table_4_1_improvement.png")
            lines += [
                "Table 4.1 (model beside document, %; releases at the measured end; "
                "averages the mean over seeds, `_sd` their spread):",
                "",
                markdown(t, _cell),
                "",
            ]
            lines += ["![improvement](table_4_1_improvement.png)", ""]
        else:
            t = _table_4_2(jobs)
            write(t, out / "table_4_2_polygon_rendering.csv")
            lines += [
                "Table 4.2 (model beside document, %; seeds by number only; releases at "
                "the measured end):",
                "",
                markdown(t, _cell),
                "",
                "Over seeds:",
                "",
                markdown(spread(jobs[jobs["release"] == RELEASE]).drop(columns=KEYS[2:]), _cell),
                "",
            ]
        releases = _by_release(jobs)
        write(releases, out / f"{name}_by_release.csv")
        lines += [
            "Release at the promised end against release at the end the engine measured "
            "(admission and average improvement, mean over seeds; `passes`: engine runs to "
            "the fixed point):",
            "",
            markdown(releases, _cell),
            "",
        ]
        lines += ["Per interval, pooled (metrics 2 and 3, %):", "", markdown(per, _cell), ""]
        first = jobs[(jobs["max_interarrival"] == INTERVALS[0]) & (jobs["seed"] == 1)]
        if "image_ratio" in first and len(first):
            first = first[first["image_ratio"] == first["image_ratio"].iloc[0]]
            first = first[first["interleaving_ratio"] == first["interleaving_ratio"].iloc[0]]
        fig = f"{name}_requests_10s.png"
        _fig_requests(
            first,
            f"{name.replace('_', ' ')}: max inter-arrival {INTERVALS[0]:g} s, seed 1 "
            "(cf. Figs. 4.9, 4.11)",
            out / fig,
        )
        lines += [f"![requests]({fig})", ""]
    if per_interval:
        _fig_difference(per_interval, out / "fig_4_15_16_difference.png")
        _fig_admission(per_interval, out / "fig_4_17_admission.png")
        lines += [
            "## Expected versus actual time and admission (Figures 4.15-4.17)",
            "",
            "**Document 001:** with the middleware within 7% of the expected time, without "
            "it up to 117% over (polygon rendering, 10 s); the admission rate rises with the "
            "inter-arrival time, below 40% (ray tracing) and 60% (polygon rendering) at the "
            "heaviest load, almost 100% for polygon rendering at the lightest.",
            "",
            "![difference](fig_4_15_16_difference.png)",
            "",
            "![admission](fig_4_17_admission.png)",
            "",
        ]
    return write_report(out, lines)

"""Run labelled configurations, in parallel, and gather their tables.

Each `Run` is a configuration file plus `path=value` overrides and a label (a dict such as
`{"router": "P", "load": 0.8}`). Runs are independent, so they go to the pool `qosnet
sweep` uses (`qosnet.pool`: local processes, one per core by default, or a Dask cluster);
results come back as DataFrames with the label's keys as leading columns, in the order the
runs were listed (not the order they finished), so the output does not depend on scheduling.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from qosnet.pool import Pool, map_unordered

if TYPE_CHECKING:
    from qosnet.reproduce.run_cache import RunCache

__all__ = [
    "Experiment",
    "Run",
    "Timing",
    "configs_dir",
    "record_timing",
    "load_gathered",
    "run_experiments",
    "with_seeds",
]

#: Tables gathered from every run.
GATHERED = ("classes", "phases", "streams", "flows", "admission", "congestion", "link_series")


def configs_dir(name: str) -> Path:
    """`configs/NAME` of the repository: under the working directory or above this package."""
    here = Path(__file__).resolve()
    for base in (Path.cwd(), *here.parents):
        candidate = base / "configs" / name
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"configs/{name} (run from the repository, or pass --configs)")


@dataclass(frozen=True)
class Run:
    label: dict[str, Any]
    config: Path
    overrides: tuple[str, ...] = ()


@dataclass
class Experiment:
    """A named group of runs compared in one figure or table."""

    name: str
    title: str
    claim: str
    runs: list[Run] = field(default_factory=list)


@dataclass
class Gathered:
    """Every run's summary and tables, labelled."""

    summaries: pd.DataFrame
    tables: dict[str, pd.DataFrame]


def _one(run: Run) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    from qosnet.api import run as run_config

    result = run_config(run.config, run.overrides)
    summary = {k: v for k, v in result.summary.items() if not isinstance(v, dict)}
    summary["latency_mean"] = result.summary["latency"]["mean"]
    summary["wall_seconds"] = result.wall_seconds
    tables = {}
    for name in GATHERED:
        frame = getattr(result, name, None)
        if frame is not None:
            tables[name] = frame
    return summary, tables


def _labelled(label: dict[str, Any], frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for i, (k, v) in enumerate(label.items()):
        out.insert(i, k, v)
    return out


def with_seeds(experiments: Sequence[Experiment], seeds: Sequence[int]) -> list[Experiment]:
    """Every run once per seed: its label gains `seed` (last) and its overrides
    `simulation.seed` (first, so a run's own overrides and `--set` still win). A claim is
    scored across these repetitions (`qosnet.reproduce.scoring`); runs of one seed share
    their traffic's random draws, so the sides of a comparison are paired by seed."""
    return [
        replace(
            e,
            runs=[
                Run({**r.label, "seed": s}, r.config, (f"simulation.seed={s}", *r.overrides))
                for r in e.runs
                for s in seeds
            ],
        )
        for e in experiments
    ]


def load_gathered(directory: Path, names: Sequence[str]) -> dict[str, Gathered]:
    """The tables a reproduction wrote (`NAME_summary.csv`, `NAME_TABLE.csv`) read back,
    so its report and verdicts can be written again without re-running: scoring changes
    are cheap, the runs are not."""
    out: dict[str, Gathered] = {}
    for name in names:
        summary = directory / f"{name}_summary.csv"
        if not summary.is_file():
            continue
        tables = {}
        for t in GATHERED:
            path = directory / f"{name}_{t}.csv"
            if path.is_file():
                tables[t] = pd.read_csv(path)
        out[name] = Gathered(summaries=pd.read_csv(summary), tables=tables)
    return out


#: The wall-time record a reproduction keeps beside its tables (a row per invocation).
WALL_TIME = "wall_time.csv"


def record_timing(out: Path, name: str, timing: Timing, pool: str, quick: bool) -> Path:
    """Append this invocation's cost to `out`/wall_time.csv (FINDINGS reports it): when,
    the set, runs executed and read back, the pool, elapsed wall seconds and the executed
    runs' own wall seconds summed."""
    import csv
    import datetime

    out.mkdir(parents=True, exist_ok=True)
    path = out / WALL_TIME
    new = not path.is_file()
    with path.open("a", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        if new:
            w.writerow(
                ["finished_utc", "set", "quick", "ran", "reused", "pool", "elapsed_s", "runs_s"]
            )
        when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M")
        w.writerow(
            [
                when,
                name,
                quick,
                timing.ran,
                timing.reused,
                pool,
                f"{timing.elapsed_seconds:.0f}",
                f"{timing.run_seconds:.0f}",
            ]
        )
    return path


class RunFailed(RuntimeError):
    """Runs of a reproduction failed (each with its label and error)."""


@dataclass
class Timing:
    """What a call of `run_experiments` cost: runs executed and read back from the cache,
    the wall time it took, and the sum of the executed runs' own wall times (one core's
    time each; their ratio is the pool's parallelism)."""

    ran: int = 0
    reused: int = 0
    elapsed_seconds: float = 0.0
    run_seconds: float = 0.0


def run_experiments(
    experiments: Sequence[Experiment],
    jobs: int | None = None,
    on_done: Callable[[Experiment, Run], None] | None = None,
    pool: Pool | None = None,
    cache: RunCache | None = None,
    timing: Timing | None = None,
) -> dict[str, Gathered]:
    """Run every experiment's runs on `pool` (default: `jobs` local processes, one per
    core). Every run is attempted; if any failed, RunFailed names them all. `cache`: each
    finished run is written there as it finishes, and with its `reuse` on, runs found
    there are read back instead of run (`qosnet.reproduce.run_cache`). `timing`, if
    given, is filled in."""
    import time

    start = time.monotonic()
    pool = pool or Pool(jobs=jobs)
    flat = [(e, r) for e in experiments for r in e.runs]
    done: dict[int, tuple[dict[str, Any], dict[str, pd.DataFrame]]] = {}
    if cache is not None:
        for i, (e, r) in enumerate(flat):
            found = cache.load(r.config, r.overrides)
            if found is not None:
                done[i] = found
                if on_done:
                    on_done(e, r)
    todo = [i for i in range(len(flat)) if i not in done]
    failures = []
    run_seconds = 0.0
    for j, outcome in map_unordered(_one, [flat[i][1] for i in todo], pool):
        i = todo[j]
        e, r = flat[i]
        if outcome.ok:
            summary, produced = outcome.value
            run_seconds += float(summary.get("wall_seconds") or 0.0)
            if cache is not None:
                cache.store(r.config, r.overrides, r.label, summary, produced)
                produced = cache.keep(produced)
            done[i] = (summary, produced)
        else:
            failures.append(f"{e.name} {r.label}: {outcome.error}")
        if on_done:
            on_done(e, r)
    if timing is not None:
        timing.ran += len(todo) - len(failures)
        timing.reused += len(flat) - len(todo)
        timing.elapsed_seconds += time.monotonic() - start
        timing.run_seconds += run_seconds
    if failures:
        raise RunFailed(f"{len(failures)} of {len(flat)} runs failed: " + "; ".join(failures))
    results = [done[i] for i in range(len(flat))]
    gathered: dict[str, Gathered] = {}
    i = 0
    for e in experiments:
        rows: list[dict[str, Any]] = []
        tables: dict[str, list[Any]] = {name: [] for name in GATHERED}
        for r in e.runs:
            summary, t = results[i]
            i += 1
            rows.append({**r.label, **summary})
            for name, frame in t.items():
                tables[name].append(_labelled(r.label, frame))
        gathered[e.name] = Gathered(
            summaries=pd.DataFrame(rows),
            tables={k: pd.concat(v, ignore_index=True) for k, v in tables.items() if v},
        )
    return gathered

"""Run a sweep's points once each, cached by the hash of their resolved configuration.

A point's key is the SHA-256 of qosnet's version, the configuration the engine resolved
(every default filled in, the seed included) and the contents of the files it names (video
traces, a fabric's dump and forwarding tables), so two points that differ only in how they
were written share a run, and a point whose configuration or data changed runs again. Its run
directory is `OUT/runs/KEY16/` (the first 16 hex digits), written under a temporary name
and renamed when complete: a directory that exists is a finished run, so an interrupted
sweep resumes with exactly the points that had not finished.

The sweep table (`sweep.parquet`) is built from the run directories on disk, never from
results in memory, so a table of cached points and one of fresh points are the same bytes,
whichever pool (local processes or Dask) ran them and in whichever order they finished.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet import __version__
from qosnet.config import load_config, simulation
from qosnet.pool import Outcome, Pool, map_unordered
from qosnet.results import RunResult
from qosnet.sweep.spec import Point, Sweep
from qosnet.tables import write, write_text

__all__ = ["Planned", "SweepOutcome", "plan", "run_points", "run_sweep", "table"]

#: Summary entries every row of the sweep table repeats (the run's, not the class's).
RUN_COLUMNS = (
    "saturated",
    "drain_complete",
    "cycles",
    "cycle_time_ns",
    "offered_flits_per_node_cycle",
    "accepted_flits_per_node_cycle",
    "dmp",
    "dmt_ms",
)


@dataclass(frozen=True)
class Task:
    """What a worker receives: the base configuration's path and the point's overrides."""

    config: str
    overrides: tuple[str, ...]


def run_task(task: Task) -> RunResult:
    """Simulate one point (in a worker process)."""
    from qosnet.api import run

    return run(task.config, task.overrides)


@dataclass(frozen=True)
class Planned:
    """A point with its overrides and its key (the hash of its resolved configuration)."""

    point: Point
    overrides: tuple[str, ...]
    key: str

    @property
    def directory(self) -> str:
        return self.key[:16]


#: Configuration keys whose values name files (or, `routes`, a directory of them).
FILE_KEYS = ("file", "routes", "traces")


def config_key(resolved_toml: str, base_dir: Path, digests: dict[Path, str] | None = None) -> str:
    """The key of a resolved configuration whose relative file names are read from
    `base_dir`; `digests` caches the files' hashes across the points of one sweep."""
    h = hashlib.sha256(f"qosnet {__version__}\n{resolved_toml}".encode())
    for name in sorted(set(_named_files(tomllib.loads(resolved_toml)))):
        h.update(
            f"\n{name}: {_digest(base_dir / name, {} if digests is None else digests)}".encode()
        )
    return h.hexdigest()


def _named_files(value: Any, key: str = "") -> list[str]:
    if isinstance(value, dict):
        return [n for k, v in value.items() for n in _named_files(v, k)]
    if isinstance(value, list):
        return [n for v in value for n in _named_files(v, key)]
    return [value] if isinstance(value, str) and key in FILE_KEYS else []


def _digest(path: Path, cache: dict[Path, str]) -> str:
    path = path.resolve()
    if path not in cache:
        h = hashlib.sha256()
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        for f in files:
            h.update(f.relative_to(path).as_posix().encode() if f != path else b"")
            h.update(f.read_bytes() if f.is_file() else b"(missing)")
        cache[path] = h.hexdigest()
    return cache[path]


def plan(sweep: Sweep, points: Sequence[Point]) -> list[Planned]:
    """Resolve every point's configuration (ConfigError names the point's overrides)."""
    out = []
    digests: dict[Path, str] = {}
    for p in points:
        overrides = p.overrides(sweep.shared)
        resolved = simulation(load_config(sweep.base, overrides)).resolved_config()
        out.append(Planned(p, overrides, config_key(resolved, sweep.base.parent, digests)))
    return out


@dataclass
class SweepOutcome:
    """How many points ran, came from the cache, or failed (key -> the error)."""

    ran: int = 0
    cached: int = 0
    failed: dict[str, tuple[Planned, Outcome]] = field(default_factory=dict)


def run_points(
    sweep: Sweep,
    planned: Sequence[Planned],
    out: Path,
    pool: Pool,
    use_cache: bool = True,
    on_done: Callable[[Planned, Outcome | None], None] | None = None,
) -> SweepOutcome:
    """Run the planned points whose run directories are missing; write each as it finishes.
    `on_done(point, outcome)` after each (outcome None: from the cache)."""
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    result = SweepOutcome()
    todo: dict[str, Planned] = {}
    seen: set[str] = set()
    for p in planned:
        if p.key in seen:
            continue  # the same configuration twice: one run serves both
        seen.add(p.key)
        if use_cache and (runs / p.directory / "summary.json").is_file():
            result.cached += 1
            if on_done:
                on_done(p, None)
        else:
            todo[p.key] = p
    pending = list(todo.values())
    tasks = [Task(str(sweep.base), p.overrides) for p in pending]
    for i, outcome in map_unordered(run_task, tasks, pool):
        p = pending[i]
        if outcome.ok:
            _store(outcome.value, runs / p.directory)
            result.ran += 1
        else:
            result.failed[p.key] = (p, outcome)
        if on_done:
            on_done(p, outcome)
    return result


def _store(run: RunResult, directory: Path) -> None:
    # complete or absent: written beside, then renamed into place
    staging = directory.with_name(f".{directory.name}.partial")
    if staging.exists():
        shutil.rmtree(staging)
    run.write(staging)
    if directory.exists():
        shutil.rmtree(directory)
    staging.rename(directory)


def table(
    sweep: Sweep, planned: Sequence[Planned], out: Path, extra: Sequence[str] = ()
) -> pd.DataFrame:
    """The tidy table: one row per point and class, the axes (and `extra` label keys) as
    the leading columns, then the seed, the run's directory, the class's metrics and the
    run's summary (`RUN_COLUMNS`). Points whose run failed are left out."""
    frames = []
    for index, p in enumerate(planned):
        directory = out / "runs" / p.directory
        if not (directory / "summary.json").is_file():
            continue
        run = RunResult.read(directory)
        classes = run.classes.copy()
        label: dict[str, Any] = {a.column: None for a in sweep.axes}
        label.update({k: None for k in extra})
        label.update(p.point.label())
        label["seed"] = tomllib.loads(run.config_toml)["simulation"]["seed"]
        label["point"] = index
        label["run"] = f"runs/{p.directory}"
        for i, (k, v) in enumerate(label.items()):
            classes.insert(i, k, v)
        for k in RUN_COLUMNS:
            v = run.summary.get(k)
            classes[f"run_{k}"] = float("nan") if v is None else v
        frames.append(classes)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def write_sweep_file(sweep: Sweep, path: Path) -> None:
    """The sweep as run, with its base's absolute path: what `--resume` reads back."""
    import tomli_w

    s: dict[str, Any] = {"base": str(sweep.base), "mode": sweep.mode}
    if sweep.seeds:
        s["seeds"] = list(sweep.seeds)
    if sweep.shared:
        s["set"] = list(sweep.shared)
    s["axes"] = {a.path: list(a.values) for a in sweep.axes}
    if sweep.saturation is not None:
        sat = sweep.saturation
        s["saturation"] = {
            "axis": sat.axis,
            "low": sat.low,
            "high": sat.high,
            "tolerance": sat.tolerance,
        }
    write_text(path, tomli_w.dumps({"sweep": s}))


def run_sweep(
    sweep: Sweep,
    out: Path,
    pool: Pool,
    use_cache: bool = True,
    on_planned: Callable[[int], None] | None = None,
    on_done: Callable[[Planned, Outcome | None], None] | None = None,
) -> tuple[SweepOutcome, Path]:
    """Run every point of `sweep` into `out` and write `out/sweep.parquet`."""
    out.mkdir(parents=True, exist_ok=True)
    write_sweep_file(sweep, out / "sweep.toml")
    planned = plan(sweep, sweep.points())
    if on_planned:
        on_planned(len(planned))
    outcome = run_points(sweep, planned, out, pool, use_cache, on_done)
    tidy = table(sweep, planned, out)
    path = write(tidy, out / "sweep.parquet")
    _write_aggregated(sweep, tidy, out / "aggregated.parquet")
    _write_failures(outcome, out / "failed.json")
    return outcome, path


def _write_aggregated(sweep: Sweep, tidy: pd.DataFrame, path: Path) -> None:
    """With several seeds, the repetitions of each point aggregated (`aggregate`)."""
    if len(tidy) == 0 or tidy["seed"].nunique() < 2:
        path.unlink(missing_ok=True)
        return
    from qosnet.sweep.aggregate import aggregate

    write(aggregate(tidy, [*(a.column for a in sweep.axes), "class"]), path)


def _write_failures(outcome: SweepOutcome, path: Path) -> None:
    if not outcome.failed:
        path.unlink(missing_ok=True)
        return
    failures = [
        {"overrides": list(p.overrides), "error": o.error, "detail": o.detail}
        for p, o in outcome.failed.values()
    ]
    write_text(path, json.dumps(failures, indent=2) + "\n")

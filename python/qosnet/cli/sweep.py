"""`qosnet sweep`: run a sweep (`qosnet.sweep`) on local processes or a Dask cluster."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from qosnet.cli.common import SetOption, err, plural, user_errors

__all__ = ["sweep", "runs_progress", "pool_options"]

JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Local processes (default: one per core).",
        show_default=False,
    ),
]
SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="Run on this Dask distributed scheduler's workers instead of local processes "
        "(default: $DASK_SCHEDULER_ADDRESS, unless -j is given). Workers need qosnet and the "
        "configuration's files at the same paths.",
        show_default=False,
    ),
]


def pool_options(jobs: int | None, scheduler: str | None) -> Any:
    from qosnet.pool import Pool

    try:
        return Pool.from_options(jobs, scheduler)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--jobs / --scheduler") from None


#: Seconds between progress lines without a terminal (`runs_progress`).
LOG_EVERY = 30.0


@contextmanager
def runs_progress(description: str, total: int = 0) -> Iterator[Any]:
    """A bar of finished runs with its ETA on stderr, as `advance(n=1)` and `grow(n)`.
    Without a terminal (a log, CI, a background job), a line on stderr every
    `LOG_EVERY` seconds instead, so that a long run is never silent for long."""
    console = Console(stderr=True)

    class Bar:
        def __init__(self, progress: Any = None) -> None:
            self.progress = progress
            self.task = progress.add_task(description, total=total) if progress else None
            self.done, self.total = 0, total
            self.start = self.last = time.monotonic()

        def advance(self, n: int = 1) -> None:
            self.done += n
            if self.progress is not None:
                self.progress.advance(self.task, n)
                return
            now = time.monotonic()
            if now - self.last >= LOG_EVERY:
                self.last = now
                of = f" of {self.total}" if self.total else ""
                print(
                    f"{description}: {self.done}{of} runs done, {now - self.start:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )

        def grow(self, n: int) -> None:
            self.total += n
            if self.progress is not None:
                t = self.progress.tasks[0]
                self.progress.update(self.task, total=(t.total or 0) + n)

    if not console.is_terminal:
        yield Bar()
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("runs"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        yield Bar(progress)


def sweep(
    spec: Annotated[
        Path | None,
        typer.Argument(
            help="A sweep file (TOML with a \\[sweep] table) or a configuration to sweep with "
            "--axis. With --resume, may be left out: OUTPUT/sweep.toml is used.",
            show_default=False,
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Sweep directory: sweep.parquet, sweep.toml and runs/ (default: runs/sweep/NAME).",
            show_default=False,
        ),
    ] = None,
    axes: Annotated[
        list[str] | None,
        typer.Option(
            "--axis",
            "-a",
            metavar="PATH=VALUES",
            help="An axis: PATH=V1,V2,... or PATH=START..STOP/N (N values, ends included), "
            "e.g. 'traffic[0].load=0.1..0.9/9' or router.kind=traditional,preemptive. "
            "Repeatable; added to the sweep file's.",
            show_default=False,
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            metavar="S1,S2,...",
            help="Seeds of every point (default: the sweep file's, else the configuration's).",
            show_default=False,
        ),
    ] = None,
    zip_axes: Annotated[
        bool,
        typer.Option("--zip", help="Pair the axes' i-th values instead of every combination."),
    ] = False,
    sets: SetOption = None,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Continue the sweep in OUTPUT (its sweep.toml): only unfinished points run.",
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option("--no-cache", help="Run every point again, even those already finished."),
    ] = False,
    find_saturation: Annotated[
        bool,
        typer.Option(
            "--find-saturation",
            help="Also find each curve's saturation load by bisection on --saturation-axis "
            "(saturation.parquet).",
        ),
    ] = False,
    saturation_axis: Annotated[
        str | None,
        typer.Option(
            "--saturation-axis",
            metavar="PATH",
            help="The load searched (default: the sweep file's, else traffic[0].load).",
            show_default=False,
        ),
    ] = None,
    bracket: Annotated[
        str | None,
        typer.Option(
            "--bracket",
            metavar="LOW..HIGH/TOL",
            help="Search interval and tolerance, in flits/node/cycle (default: 0.05..1.0/0.01).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Run every point of a sweep once (cached) and write one tidy table.

    The table (OUTPUT/sweep.parquet) has one row per point and class: the axes, the seed,
    the run's directory (runs/KEY), the class's metrics and the run's summary. A point is
    keyed by the hash of its resolved configuration: a second invocation runs only new or
    changed points.
    """
    from dataclasses import replace

    from qosnet.sweep import Saturation, SweepError, parse_axis, read_sweep
    from qosnet.sweep.spec import Sweep, is_sweep_file

    pool = pool_options(jobs, scheduler)
    try:
        if spec is None:
            if not (resume and output is not None):
                raise typer.BadParameter("give a sweep file or configuration", param_hint="SPEC")
            base_sweep = read_sweep(output / "sweep.toml")
        elif is_sweep_file(spec):
            base_sweep = read_sweep(spec)
        else:
            base_sweep = Sweep(base=spec.resolve())
        if spec is not None and resume and output is not None and (output / "sweep.toml").is_file():
            previous = read_sweep(output / "sweep.toml")
            if previous != base_sweep and not axes:
                err(f"note: {output}/sweep.toml differs from {spec}; running {spec}")
        extra = tuple(parse_axis(a) for a in axes or ())
        s = replace(
            base_sweep, axes=(*base_sweep.axes, *extra), shared=(*base_sweep.shared, *(sets or ()))
        )
        if seeds:
            s = replace(s, seeds=tuple(int(x) for x in seeds.split(",") if x.strip()))
        if zip_axes:
            s = replace(s, mode="zip")
        if find_saturation or saturation_axis or bracket:
            sat = s.saturation or Saturation(axis=saturation_axis or "traffic[0].load")
            if saturation_axis:
                sat = replace(sat, axis=saturation_axis)
            if bracket:
                span, _, tol = bracket.partition("/")
                lo, _, hi = span.partition("..")
                sat = replace(
                    sat, low=float(lo), high=float(hi), tolerance=float(tol or sat.tolerance)
                )
            s = replace(s, saturation=sat)
        s.check()
    except (SweepError, ValueError) as e:
        raise typer.BadParameter(str(e), param_hint="SPEC / --axis / --seeds / --bracket") from None
    if not s.axes and not find_saturation:
        raise typer.BadParameter("no axes: give --axis or a sweep file with [sweep.axes]")
    name = spec.stem if spec is not None else "sweep"
    out = output or Path("runs") / "sweep" / name
    console = Console(stderr=True)
    failed: dict[str, Any] = {}
    with user_errors(s.base):
        from qosnet.sweep import find_saturation as search
        from qosnet.sweep import run_sweep

        ran = cached = 0
        # (--find-saturation over the one axis searched: no grid to run first)
        searched = s.saturation.axis if find_saturation and s.saturation else None
        grid = bool(s.axes) and not (searched and all(a.path == searched for a in s.axes))
        if grid:
            with runs_progress(f"sweep {name}") as bar:
                outcome, path = run_sweep(
                    s,
                    out,
                    pool,
                    use_cache=not no_cache,
                    on_planned=bar.grow,
                    on_done=lambda p, o: bar.advance(),
                )
            ran, cached = outcome.ran, outcome.cached
            failed.update(outcome.failed)
            typer.echo(f"wrote {path} ({_rows(path)} rows)")
        elif find_saturation:
            from qosnet.sweep.run import write_sweep_file

            out.mkdir(parents=True, exist_ok=True)
            write_sweep_file(s, out / "sweep.toml")
        if find_saturation:
            with runs_progress(f"saturation {name}") as bar:
                outcome, path = search(
                    s,
                    out,
                    pool,
                    use_cache=not no_cache,
                    on_round=lambda r, n: bar.grow(n),
                    on_done=lambda p, o: bar.advance(),
                )
            ran, cached = ran + outcome.ran, cached + outcome.cached
            failed.update(outcome.failed)
            typer.echo(f"wrote {path}")
            _print_saturation(path)
    console.print(
        f"{plural(ran, 'point')} run, {cached} from the cache, {len(failed)} failed "
        f"({pool.describe()})"
    )
    for p, o in failed.values():
        err(f"  failed: {' '.join(p.overrides)}: {o.error}")
    if failed:
        err(f"  details in {out / 'failed.json'}")
        raise typer.Exit(1)


def _rows(path: Path) -> int:
    import pyarrow.parquet as pq

    return pq.ParquetFile(path).metadata.num_rows


def _print_saturation(path: Path) -> None:
    import pandas as pd

    frame = pd.read_parquet(path)
    for row in frame.to_dict("records"):
        label = ", ".join(
            f"{k}={v}"
            for k, v in row.items()
            if k not in ("saturation", "low", "high", "status", "runs", "tolerance")
        )
        if row["status"] == "found":
            typer.echo(
                f"  {label}: saturation at {row['saturation']:.4g} flits/node/cycle "
                f"(between {row['low']:.4g} and {row['high']:.4g}, {row['runs']} runs)"
            )
        else:
            typer.echo(f"  {label}: {row['status']} ({row['low']:.4g}..{row['high']:.4g})")

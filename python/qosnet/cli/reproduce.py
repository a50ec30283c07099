"""`qosnet reproduce NAME`: re-run a document's experiments (`qosnet.reproduce`) and write
their tables, figures and report."""

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from qosnet.cli.common import SetOption, err, user_errors
from qosnet.cli.sweep import SchedulerOption, pool_options, runs_progress
from qosnet.reproduce import SETS

__all__ = ["reproduce"]


def reproduce(
    name: Annotated[
        str,
        typer.Argument(
            help="Experiment set: "
            + "; ".join(f"{name} ({what})" for name, (_, what) in SETS.items())
            + ".",
            show_default=False,
        ),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Directory for tables, figures and report.md (default: runs/reproduce/NAME).",
            show_default=False,
        ),
    ] = None,
    quick: Annotated[
        bool, typer.Option("--quick", help="Shortened simulated time: a smoke run, not results.")
    ] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", min=1, help="Parallel runs (default: one per core).", show_default=False
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only", help="Run only these experiments of the set (repeatable).", show_default=False
        ),
    ] = None,
    seeds: Annotated[
        str | None,
        typer.Option(
            "--seeds",
            metavar="S1,S2,...",
            help="Run every configuration once per seed; verdicts are scored across them "
            "(default: the set's own, three seeds for a full run of a scored set).",
            show_default=False,
        ),
    ] = None,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore",
            help="Run nothing: read the tables already in OUTPUT and write the report and "
            "verdicts again.",
        ),
    ] = False,
    resume: Annotated[
        bool,
        typer.Option(
            "--resume",
            help="Read back the runs already finished in OUTPUT/runs/ (each run is written "
            "there as it finishes) and run only the rest. A run is known by its configuration "
            "and overrides, not by the engine's code: after changing the engine, run without "
            "it (or delete OUTPUT/runs/).",
        ),
    ] = False,
    where: Annotated[
        list[str] | None,
        typer.Option(
            "--where",
            metavar="LABEL=VALUE",
            help="Run only the runs whose label has this value (e.g. deadline=arrival, "
            "router=P; repeatable, all must match); the set's other runs already finished "
            "in OUTPUT/runs/ are read back into the report.",
            show_default=False,
        ),
    ] = None,
    finished: Annotated[
        bool,
        typer.Option(
            "--finished",
            help="Run nothing: report the runs already finished in OUTPUT/runs/ (with "
            "--where, those matching), the set's other experiments from their tables; for "
            "a set stopped part way.",
        ),
    ] = False,
    sets: SetOption = None,
    scheduler: SchedulerOption = None,
) -> None:
    """Re-run a document's experiments and write tables, figures and a report."""
    import importlib
    from dataclasses import replace

    from qosnet.reproduce import run_experiments
    from qosnet.reproduce.run_cache import RunCache, run_key
    from qosnet.reproduce.runner import (
        GATHERED,
        RunFailed,
        Timing,
        load_gathered,
        record_timing,
        with_seeds,
    )

    if name not in SETS:
        raise typer.BadParameter(
            f"must be one of {', '.join(sorted(SETS))}, got {name!r}", param_hint="NAME"
        )
    module = importlib.import_module(SETS[name][0])
    out = output or Path("runs") / "reproduce" / name
    with user_errors():
        experiments = module.experiments(quick=quick)
        every = list(experiments)
        if only:
            known = {e.name for e in experiments}
            unknown = sorted(set(only) - known)
            if unknown:
                raise typer.BadParameter(
                    f"unknown experiment(s) {', '.join(unknown)}; the set has "
                    f"{', '.join(e.name for e in experiments)}",
                    param_hint="--only",
                )
            experiments = [e for e in experiments if e.name in only]
        self_run = getattr(module, "SELF_RUN", False)
        if seeds and self_run:
            raise typer.BadParameter(
                f"{name} runs no engine configurations; --seeds does not apply",
                param_hint="--seeds",
            )
        # (a set scored across seeds names its own: SEEDS, QUICK_SEEDS)
        default = getattr(module, "QUICK_SEEDS" if quick else "SEEDS", None)
        chosen = _seeds(seeds) if seeds else default
        if chosen and not self_run:
            experiments = with_seeds(experiments, chosen)
        if sets and self_run:
            raise typer.BadParameter(
                f"{name} runs no engine configurations; --set does not apply", param_hint="--set"
            )
        if sets:
            # applied after each run's own overrides, so they win
            for e in experiments:
                e.runs = [replace(r, overrides=(*r.overrides, *sets)) for r in e.runs]
        if rescore and self_run:
            # (a set running its own experiments rewrites its verdicts from its own tables)
            if not hasattr(module, "rescore"):
                raise typer.BadParameter(f"{name} cannot be rescored", param_hint="--rescore")
            typer.echo(f"wrote {module.rescore(out, quick)}")
            return
        if rescore:
            results = load_gathered(out, [e.name for e in experiments])
            missing = [e.name for e in experiments if e.name not in results]
            if missing:
                raise typer.BadParameter(
                    f"{out} has no tables of {', '.join(missing)}", param_hint="--rescore"
                )
        elif self_run:
            # the module runs its own experiments (document 001's fluid model, not the engine)
            if scheduler:
                raise typer.BadParameter(
                    f"{name} runs no engine configurations", param_hint="--scheduler"
                )
            results = module.run(experiments, quick=quick, jobs=jobs)
        else:
            if only:
                _check_kept_tables(module, name, out, [e.name for e in every if e.name not in only])
            pool = pool_options(jobs, scheduler)
            cache = RunCache(out / "runs", getattr(module, "CACHED_TABLES", GATHERED), resume)
            if where or finished:
                cache = _select(experiments, _labels(where or []), cache, run_key, finished)
            total = sum(len(e.runs) for e in experiments)
            timing = Timing()
            try:
                with runs_progress(name, total) as bar:
                    results = run_experiments(
                        experiments,
                        pool=pool,
                        on_done=lambda e, r: _done(bar, e, r),
                        cache=cache,
                        timing=timing,
                    )
            except RunFailed as e:
                err(f"error: {e}")
                raise typer.Exit(1) from None
            if timing.ran:
                record_timing(out, name, timing, pool.describe(), quick)
            if only or where or finished:
                # (the set's other experiments keep the tables already in OUTPUT, so its
                # report and verdicts stay whole)
                rest = [e.name for e in every if e.name not in results]
                results = {**load_gathered(out, rest), **results}
                experiments = [
                    next((x for x in experiments if x.name == e.name), e)
                    for e in every
                    if e.name in results
                ]
        path = module.report(experiments, results, out, quick=quick)
    typer.echo(f"wrote {path}")


def _check_kept_tables(module: Any, name: str, out: Path, rest: list[str]) -> None:
    """Before --only runs anything: the set's other experiments are reported from the tables
    OUTPUT keeps, and a report that draws on a run table OUTPUT does not keep (a set's
    `REPORT_TABLES`: experiment -> tables) would fail after the runs."""
    from qosnet.reproduce.runner import load_gathered

    needs = getattr(module, "REPORT_TABLES", {})
    kept = load_gathered(out, rest)
    missing = [
        f"{e} ({', '.join(t for t in needs[e] if t not in kept[e].tables)})"
        for e in rest
        if e in needs and e in kept and any(t not in kept[e].tables for t in needs[e])
    ]
    if missing:
        raise typer.BadParameter(
            f"{name}'s report draws on run tables {out} does not keep: {'; '.join(missing)}. "
            "Add those experiments to --only, or run the whole set with --resume (finished "
            "runs are read back from OUTPUT/runs/)",
            param_hint="--only",
        )


def _done(bar: Any, e: Any, r: Any) -> None:
    bar.advance()
    if not sys.stderr.isatty():
        # (a run in the background, logged to a file: a line per finished run)
        err(f"done: {e.name} {r.label}")


def _labels(where: list[str]) -> dict[str, str]:
    out = {}
    for w in where:
        key, eq, value = w.partition("=")
        if not eq or not key.strip():
            raise typer.BadParameter(f"LABEL=VALUE, got {w!r}", param_hint="--where")
        out[key.strip()] = value.strip()
    return out


def _select(
    experiments: list[Any], want: dict[str, str], cache: Any, key: Any, finished: bool = False
) -> Any:
    """Keep the runs whose labels match `want` (compared as text), and the others already
    finished in the cache (read back whatever --resume says); return the cache that does.
    `finished`: keep only runs already finished (matching `want`), all read back."""
    from dataclasses import replace

    known = {k for e in experiments for r in e.runs for k in r.label}
    unknown = sorted(set(want) - known)
    if unknown:
        raise typer.BadParameter(
            f"no run has the label {', '.join(unknown)}; labels: {', '.join(sorted(known))}",
            param_hint="--where",
        )
    done = set()
    for e in experiments:
        kept = []
        for r in e.runs:
            matches = all(str(r.label.get(k)) == v for k, v in want.items())
            there = cache.path(r.config, r.overrides).is_file()
            if matches and not finished:
                kept.append(r)
            elif there and (matches or not want):
                kept.append(r)
                done.add(key(r.config, r.overrides))
            elif there and not finished:
                kept.append(r)
                done.add(key(r.config, r.overrides))
        e.runs = kept
    if not any(e.runs for e in experiments):
        what = f"matches {want}" if want else "has finished"
        raise typer.BadParameter(f"no run {what}", param_hint="--where / --finished")
    experiments[:] = [e for e in experiments if e.runs]
    return replace(cache, reuse_keys=frozenset(done))


def _seeds(text: str) -> list[int]:
    try:
        seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise typer.BadParameter(
            f"seeds are integers, got {text!r}", param_hint="--seeds"
        ) from None
    if not seeds or len(set(seeds)) != len(seeds):
        raise typer.BadParameter(f"distinct seeds, got {text!r}", param_hint="--seeds")
    return seeds

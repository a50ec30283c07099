"""`qosnet reproduce NAME`: re-run a document's experiments (`qosnet.reproduce`) and write
their tables, figures and report."""

from pathlib import Path
from typing import Annotated

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
    sets: SetOption = None,
    scheduler: SchedulerOption = None,
) -> None:
    """Re-run a document's experiments and write tables, figures and a report."""
    import importlib
    from dataclasses import replace

    from qosnet.reproduce import run_experiments
    from qosnet.reproduce.runner import RunFailed, load_gathered, with_seeds

    if name not in SETS:
        raise typer.BadParameter(
            f"must be one of {', '.join(sorted(SETS))}, got {name!r}", param_hint="NAME"
        )
    module = importlib.import_module(SETS[name][0])
    out = output or Path("runs") / "reproduce" / name
    with user_errors():
        experiments = module.experiments(quick=quick)
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
            pool = pool_options(jobs, scheduler)
            total = sum(len(e.runs) for e in experiments)
            try:
                with runs_progress(name, total) as bar:
                    results = run_experiments(
                        experiments, pool=pool, on_done=lambda e, r: bar.advance()
                    )
            except RunFailed as e:
                err(f"error: {e}")
                raise typer.Exit(1) from None
        path = module.report(experiments, results, out, quick=quick)
    typer.echo(f"wrote {path}")


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

"""`qosnet crosscheck`: qosnet beside BookSim2 on the matched configurations of
configs/validation (the measuring is `qosnet.crosscheck`; this module parses the options and
prints the table)."""

import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table

from qosnet.cli.common import booksim_program, err, stdout_console, user_errors
from qosnet.cli.sweep import JobsOption, SchedulerOption, pool_options, runs_progress

__all__ = ["crosscheck"]


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:+.1%}"


def _diff(row: dict[str, Any], metric: str) -> str:
    """qosnet's difference from BookSim2; over seeds with its interval and the verdict of
    "within 5%"."""
    from qosnet.crosscheck import WITHIN

    text = _pct(row[f"{metric}_difference"])
    low, high = row.get(f"{metric}_difference_low"), row.get(f"{metric}_difference_high")
    if low is not None and high is not None and not (math.isnan(low) or math.isnan(high)):
        text += f" [{low:+.1%}, {high:+.1%}] {row[f'{metric}_{WITHIN}']}"
    return text


def _num(x: Any, fmt: str) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, fmt)


def crosscheck(
    config: Annotated[
        Path | None,
        typer.Argument(
            help="A BookSim2 configuration file to run as one case, on qosnet (converted) "
            "and on BookSim2 as it is (default: the cases of cases.toml).",
            show_default=False,
        ),
    ] = None,
    booksim: Annotated[
        Path | None,
        typer.Option(
            "--booksim",
            help="BookSim2 binary you built (not shipped); without it only qosnet runs, "
            "shown beside the recorded BookSim2 numbers (results/crosscheck/crosscheck.csv).",
            show_default=False,
        ),
    ] = None,
    cases: Annotated[
        list[str] | None,
        typer.Option(
            "--case",
            "-c",
            metavar="TEXT",
            help="Run the cases whose name contains TEXT (e.g. mesh4x4-16vc, -uniform). "
            "Repeatable; default: every case of cases.toml. A TEXT no case name contains "
            "is an error listing the names.",
            show_default=False,
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Directory with cases.toml, the qosnet configurations and booksim2/ inputs "
            "(default: configs/validation under the working directory or the repository).",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Directory for crosscheck.csv and runs.csv."),
    ] = Path("crosscheck"),
    seeds: Annotated[
        int,
        typer.Option(
            "--seeds",
            min=1,
            help="Searches a side per case, with seeds 1..N on both simulators (1: the "
            "configurations' own seeds, as the recorded rows). With 2 or more the table "
            "gives each side's mean, the difference's 95% interval and whether the two "
            "agree within 5% (holds, tie or not).",
        ),
    ] = 1,
    jobs: JobsOption = None,
    scheduler: SchedulerOption = None,
) -> None:
    """Zero-load latency and saturation load of qosnet and BookSim2, side by side, on the
    matched configurations (configs/validation/README.md says how each parameter of
    BookSim2's `iq` router is matched), or on a BookSim2 file given as CONFIG. Writes one
    row per case with qosnet's difference from BookSim2, and every run the saturation
    searches made, updated as each search ends."""
    from qosnet.crosscheck import (
        Limits,
        Plan,
        file_case,
        load_plan,
        points_table,
        recorded_booksim,
        run_plan,
        summarise,
        with_recorded,
    )
    from qosnet.reproduce.runner import configs_dir
    from qosnet.tables import write

    with user_errors(config):
        try:
            found = directory or configs_dir("validation")
        except FileNotFoundError:
            found = None
        cases_file = found / "cases.toml" if found is not None else None
        if cases_file is not None and not cases_file.is_file():
            cases_file = None
        if config is None and cases_file is None:
            err("error: no configs/validation/cases.toml found; pass --dir")
            raise typer.Exit(1)
        if booksim is not None:
            booksim = booksim_program(booksim)
        try:
            if config is not None:
                # (a file's case is measured as the matched cases are: by cases.toml's
                # [measure] when there is one)
                limits = load_plan(cases_file.parent).limits if cases_file else Limits()
                plan = Plan([file_case(config)], limits)
            else:
                assert cases_file is not None
                plan = load_plan(cases_file.parent, cases or ())
        except ValueError as e:
            err(f"error: {e}")
            raise typer.Exit(1) from None
        if not plan.cases:
            err(f"error: no case of {cases_file} matches {cases}")
            raise typer.Exit(1)
        # (without BookSim2, the recorded columns of the same cases stand beside the new
        # qosnet run: a user sees the comparison, labelled as recorded, not qosnet alone)
        recorded = (
            recorded_booksim(cases_file.parent)
            if booksim is None and config is None and cases_file is not None
            else None
        )
        if recorded is not None:
            stdout_console().print(recorded.describe(), markup=False, highlight=False)
        elif booksim is None:
            stdout_console().print(
                "no recorded BookSim2 numbers for these cases: qosnet alone "
                "(pass --booksim to run BookSim2)"
            )
        pool = pool_options(jobs, scheduler)
        n = len(plan.cases) * (2 if booksim else 1) * seeds
        failed: list[str] = []
        finished: list[Any] = []
        out.mkdir(parents=True, exist_ok=True)

        def save() -> Any:
            # (rewritten as each search ends: a long run interrupted keeps what it measured)
            table = summarise(finished, plan.limits)
            if recorded is not None:
                table = with_recorded(table, recorded)
            write(table, out / "crosscheck.csv")
            write(points_table(finished), out / "runs.csv")
            return table

        with runs_progress("crosscheck", total=n) as bar:

            def done(search: Any, outcome: Any) -> None:
                if not outcome.ok:
                    failed.append(outcome.error)
                else:
                    finished.append(search)
                    save()
                bar.advance()

            run_plan(plan, booksim, pool, on_done=done, repetitions=seeds)
        table = save()
        _print(table, "BookSim2" if booksim else "BookSim2 (recorded)" if recorded else None)
        for line in failed:
            err(f"failed: {line}")
        stdout_console().print(f"wrote {out / 'crosscheck.csv'} and {out / 'runs.csv'}")
        if failed:
            raise typer.Exit(1)


def _print(table: Any, booksim_label: str | None) -> None:
    """The table; `booksim_label`: the BookSim2 columns' heading (None: qosnet alone)."""
    t = Table(
        box=box.SIMPLE_HEAD, title="zero-load latency (cycles) and saturation (flits/node/cycle)"
    )
    t.add_column("case")
    t.add_column("latency qosnet", justify="right")
    if booksim_label is not None:
        t.add_column(booksim_label, justify="right")
        t.add_column("diff", justify="right")
    t.add_column("saturation qosnet", justify="right")
    if booksim_label is not None:
        t.add_column(booksim_label, justify="right")
        t.add_column("diff", justify="right")
    for row in table.to_dict("records"):
        cells = [row["case"], _num(row.get("qosnet_zero_load_latency"), ".2f")]
        if booksim_label is not None:
            cells += [
                _num(row.get("booksim2_zero_load_latency"), ".2f"),
                _diff(row, "zero_load_latency"),
            ]
        sat = row.get("qosnet_saturation")
        cells.append(_num(sat, ".3f") if not math.isnan(sat) else row.get("qosnet_status", "-"))
        if booksim_label is not None:
            bsat = row.get("booksim2_saturation", math.nan)
            cells += [
                _num(bsat, ".3f") if not math.isnan(bsat) else _num(row.get("booksim2_status"), ""),
                _diff(row, "saturation"),
            ]
        t.add_row(*cells)
    stdout_console().print(t)

"""`qosnet run` and `qosnet validate`: simulate one configuration, or only check it.

pandas and pyarrow are imported only by `run`, so `qosnet validate` starts quickly.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from qosnet._core import ConfigError
from qosnet.cli.common import (
    ConfigArg,
    SetOption,
    err,
    format_error,
    progress_bar,
    stdout_console,
    user_errors,
)
from qosnet.config import check as check_config
from qosnet.metrics import unit_of

__all__ = ["run", "validate"]


def _number(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _flatten(d: dict[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _flatten(v, f"{prefix}{k}.")
        else:
            yield f"{prefix}{k}", v


def run(
    config: ConfigArg,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the run directory here: config.toml, summary.json, timing.json and "
            "the tables (Parquet unless --csv).",
            show_default=False,
        ),
    ] = None,
    sets: SetOption = None,
    csv: Annotated[bool, typer.Option("--csv", help="Write tables as CSV, not Parquet.")] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print only the summary, as JSON.")
    ] = False,
    record_messages: Annotated[
        bool,
        typer.Option("--record-messages", help="Record every measured message (messages table)."),
    ] = False,
) -> None:
    """Simulate CONFIG and print its summary."""
    if csv and output is None:
        raise typer.BadParameter("--csv only applies with --output DIR", param_hint="--csv")
    stopped = None
    with user_errors(config):
        from qosnet.api import TimeLimitError
        from qosnet.api import run as run_config

        try:
            with progress_bar(enabled=not json_out) as progress:
                result = run_config(
                    config,
                    sets or (),
                    progress=progress,
                    record_messages=True if record_messages else None,
                )
        except TimeLimitError as e:
            # (the partial results are written and shown, then the run fails)
            result, stopped = e.result, str(e)
        if output is not None:
            result.write(output, fmt="csv" if csv else "parquet")
    if json_out:
        typer.echo(result.summary_json(), nl=False)
        if stopped is not None:
            err(f"error: {stopped}")
            raise typer.Exit(1)
        return
    console = stdout_console()
    table = Table(title=escape(config.name), show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("unit")
    for key, value in _flatten(result.summary):
        table.add_row(escape(key), _number(value), unit_of(key))
    table.add_row("wall time", f"{result.wall_seconds:.3f}", "s")
    table.add_row("simulated", f"{result.cycles_per_second:,.0f}", "cycles/s")
    console.print(table)
    if len(result.classes) > 1 and "class" in result.classes:
        by_class = Table(title="per class")
        by_class.add_column("metric")
        for name in result.classes["class"].tolist():
            by_class.add_column(escape(str(name)), justify="right")
        by_class.add_column("unit")
        for column in result.classes.columns:
            if column != "class":
                values = (_number(v) for v in result.classes[column].tolist())
                by_class.add_row(column, *values, unit_of(column))
        console.print(by_class)
    _warn(result.summary)
    _booksim_notes(config)
    if output is not None:
        written = sorted(p.name for p in output.iterdir() if p.is_file())
        console.print(f"wrote {escape(str(output))}/: {', '.join(written)}")
    if stopped is not None:
        err(f"error: {stopped}")
        raise typer.Exit(1)


def _warn(summary: dict[str, Any]) -> None:
    """Loud, on stderr: a saturated run or an incomplete drain makes its latencies a function
    of how long it ran, not of the network (README "Measurement")."""
    from rich.console import Console
    from rich.panel import Panel

    lines = []
    offered = summary.get("offered_flits_per_node_cycle", 0.0)
    accepted = summary.get("accepted_flits_per_node_cycle", 0.0)
    if summary.get("saturated"):
        lines.append(
            f"SATURATED: accepted {accepted:.4g} of the offered {offered:.4g} "
            "flits/node/cycle (more than 5% short, or the drain did not complete): "
            "latencies grow with the run's length; compare loads below saturation."
        )
    if not summary.get("drain_complete", True):
        lines.append(
            f"DRAIN INCOMPLETE: {summary.get('messages_delivered', 0):,} of "
            f"{summary.get('messages_measured', 0):,} measured messages were delivered "
            "before simulation.drain_limit; the latencies leave the others out."
        )
    if lines:
        Console(stderr=True).print(
            Panel("\n".join(lines), title="warning", border_style="bold red", style="bold")
        )


def validate(config: ConfigArg, sets: SetOption = None) -> None:
    """Check CONFIG without running it; print every problem as `path: message`.

    Exits 1 when there is any problem, 0 when there is none, printing "ok" and the memory a
    run needs (refused over the limit: simulation.memory_limit, QOSNET_MEMORY_LIMIT or the
    machine's available memory).
    """
    with user_errors():
        checked = check_config(config, sets or ())
    for path, message in checked.errors:
        typer.echo(format_error(path, message))
    if checked.errors or checked.memory is None or checked.cost is None:
        raise typer.Exit(1)
    typer.echo("ok")
    typer.echo(f"memory: {checked.memory}")
    typer.echo(f"cost: {checked.cost}")
    _booksim_notes(config)


def _booksim_notes(config: Path) -> None:
    """A BookSim2 file's keys that change nothing in qosnet's run, named on stderr: the
    file gave them, so they are not passed over in silence (`qosnet convert` says why)."""
    from qosnet import booksim_cfg

    try:
        text = config.read_text(encoding="utf-8")
        if not booksim_cfg.is_booksim(config.name, text):
            return
        ignored = booksim_cfg.convert(text, str(config)).ignored
    except (OSError, UnicodeDecodeError, ConfigError):
        return  # (the run or the check has reported it)
    if ignored:
        names = ", ".join(key for key, _, _ in ignored)
        err(
            f"note: BookSim2 keys that change nothing in qosnet's run: {names} "
            f"(qosnet convert {config} says why)"
        )

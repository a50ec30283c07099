"""`qosnet run` and `qosnet validate`: simulate one configuration, or only check it.

pandas and pyarrow are imported only by `run`, so `qosnet validate` starts quickly.
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from qosnet.cli.common import (
    ConfigArg,
    SetOption,
    format_error,
    progress_bar,
    stdout_console,
    user_errors,
)
from qosnet.config import estimate_memory
from qosnet.config import validate as validate_config

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
    with user_errors(config):
        from qosnet.api import run as run_config

        with progress_bar(enabled=not json_out) as progress:
            result = run_config(
                config,
                sets or (),
                progress=progress,
                record_messages=True if record_messages else None,
            )
        if output is not None:
            result.write(output, fmt="csv" if csv else "parquet")
    if json_out:
        typer.echo(result.summary_json(), nl=False)
        return
    console = stdout_console()
    table = Table(title=escape(config.name), show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key, value in _flatten(result.summary):
        table.add_row(escape(key), _number(value))
    table.add_row("wall time (s)", f"{result.wall_seconds:.3f}")
    table.add_row("simulated cycles/s", f"{result.cycles_per_second:,.0f}")
    console.print(table)
    if len(result.classes) > 1 and "class" in result.classes:
        by_class = Table(title="per class")
        by_class.add_column("metric")
        for name in result.classes["class"].tolist():
            by_class.add_column(escape(str(name)), justify="right")
        for column in result.classes.columns:
            if column != "class":
                by_class.add_row(column, *(_number(v) for v in result.classes[column].tolist()))
        console.print(by_class)
    if output is not None:
        console.print(f"wrote {output}")


def validate(config: ConfigArg, sets: SetOption = None) -> None:
    """Check CONFIG without running it; print every problem as `path: message`.

    Exits 1 when there is any problem, 0 when there is none, printing "ok" and the memory a
    run needs (refused over the limit: simulation.memory_limit, QOSNET_MEMORY_LIMIT or the
    machine's available memory).
    """
    with user_errors():
        errors = validate_config(config, sets or ())
        estimate = None if errors else estimate_memory(config, sets or ())
    for path, message in errors:
        typer.echo(format_error(path, message))
    if errors or estimate is None:
        raise typer.Exit(1)
    typer.echo("ok")
    typer.echo(f"memory: {estimate}")

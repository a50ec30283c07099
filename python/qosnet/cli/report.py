"""`qosnet report DIR`: a self-contained HTML page of a run or sweep directory
(`qosnet.report`)."""

from pathlib import Path
from typing import Annotated

import typer

from qosnet.cli.common import user_errors

__all__ = ["report"]


def report(
    directory: Annotated[
        Path,
        typer.Argument(
            help="A run directory (qosnet run -o) or a sweep directory (qosnet sweep -o).",
            show_default=False,
        ),
    ],
) -> None:
    """Write DIRECTORY/report.html: one page, plots embedded, viewable offline."""
    from rich.console import Console

    console = Console(stderr=True)
    # (drawing the plots takes seconds to a minute: say so at once, and spin meanwhile)
    console.print(f"writing {directory}/report.html: reading the tables, drawing the plots")
    with user_errors(), console.status("drawing the plots"):
        from qosnet.report import write_report

        path = write_report(directory)
    typer.echo(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, self-contained)")

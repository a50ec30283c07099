"""`qosnet convert`: a BookSim2 configuration file as the equivalent qosnet TOML
(`qosnet.booksim_cfg` does the reading and the mapping)."""

from pathlib import Path
from typing import Annotated

import typer

from qosnet.cli.common import stdout_console, user_errors

__all__ = ["convert"]


def convert(
    config: Annotated[
        Path,
        typer.Argument(help="A BookSim2 configuration file.", show_default=False),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the TOML here instead of printing it.", show_default=False
        ),
    ] = None,
) -> None:
    """Print the qosnet configuration (TOML) equivalent to a BookSim2 configuration file:
    BookSim2's defaults for the keys it leaves out, its keys that change nothing in a run
    listed in a comment, and every key qosnet cannot honour refused by name."""
    from qosnet import booksim_cfg

    with user_errors(config):
        text = config.read_text(encoding="utf-8")
        toml = booksim_cfg.to_toml(booksim_cfg.convert(text, str(config)), config.name)
        if output is None:
            typer.echo(toml, nl=False)
            return
        output.write_text(toml, encoding="utf-8")
    stdout_console().print(f"wrote {output}")

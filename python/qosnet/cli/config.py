"""`qosnet config`: the configuration's reference and JSON Schema, generated from the
engine's configuration types (`qosnet.config_reference`)."""

from pathlib import Path
from typing import Annotated

import typer

from qosnet.cli.common import stdout_console

__all__ = ["config_app"]

config_app = typer.Typer(
    help="The configuration's reference and JSON Schema, from the engine's own types.",
    no_args_is_help=True,
)

OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Write to this file instead of printing.", show_default=False
    ),
]


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


@config_app.command("reference")
def reference(
    key: Annotated[
        str | None,
        typer.Argument(
            help="A section or key (router, router.vcs, traffic.pattern); without it, all.",
            show_default=False,
        ),
    ] = None,
    output: OutputOption = None,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print Markdown source, not rendered text.")
    ] = False,
) -> None:
    """Print the configuration reference (docs/configuration.md), or one KEY's entry: its
    type, default, units or allowed values, and what it models."""
    from qosnet.config_reference import render, render_markdown

    if key is None:
        text = render_markdown()
    else:
        try:
            text = render(key)
        except KeyError as e:
            typer.echo(f"error: {e.args[0]}", err=True)
            raise typer.Exit(2) from None
    if output is not None or markdown:
        _write(text, output)
    else:
        from rich.markdown import Markdown

        stdout_console().print(Markdown(text))


@config_app.command("schema")
def schema(output: OutputOption = None) -> None:
    """Print the configuration's JSON Schema (for editors: Taplo, VS Code's Even Better
    TOML), as docs/qosnet-config.schema.json holds it."""
    from qosnet import _core

    _write(_core.config_schema() + "\n", output)

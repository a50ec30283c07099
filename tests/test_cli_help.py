"""`--help` renders right with the typer the project pins (issue 25: flags had shown as
`--csv <bool>` and arguments as `{config}`), for every command; and shell completion is on."""

import re

import click
import pytest
import typer.main
from typer.testing import CliRunner

from qosnet.cli import app


def commands() -> list[list[str]]:
    root = typer.main.get_command(app)
    out: list[list[str]] = [[]]

    def walk(group: click.Command, path: list[str]) -> None:
        for name, cmd in getattr(group, "commands", {}).items():
            out.append([*path, name])
            walk(cmd, [*path, name])

    walk(root, [])
    return out


@pytest.mark.parametrize("path", commands(), ids=lambda p: " ".join(p) or "qosnet")
def test_help_renders(path: list[str]):
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="qosnet", env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    text = result.output
    assert "<bool>" not in text and "BOOLEAN" not in text, text
    usage = re.search(r"Usage: (.*)", text)
    assert usage and "{" not in usage.group(1), text
    # a flag's row names no value
    for flag in ("--help",):
        row = next(line for line in text.splitlines() if flag in line)
        assert re.search(rf"{flag}\s+Show this message", row), row


def test_run_help_shows_flags_plain_and_arguments_by_name():
    text = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "120"}).output
    assert re.search(r"Usage: \S+ run \[OPTIONS\] CONFIG", text), text
    assert re.search(r"--csv\s+Write tables as CSV", text), text
    assert re.search(r"--output\s+-o\s+PATH", text), text


def test_shell_completion_is_on():
    text = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"}).output
    assert "--install-completion" in text and "--show-completion" in text
    done = CliRunner().invoke(
        app,
        [],
        prog_name="qosnet",
        env={"_QOSNET_COMPLETE": "complete_bash", "COMP_WORDS": "qosnet sw", "COMP_CWORD": "1"},
    )
    assert done.output.split() == ["sweep"], done.output


def test_every_reproduction_set_is_named_in_the_help_and_the_readme():
    # (seed002 had been missing from both: the list was written by hand)
    from pathlib import Path

    from qosnet.reproduce import SETS

    text = CliRunner().invoke(app, ["reproduce", "--help"], env={"COLUMNS": "200"}).output
    flat = " ".join(text.replace("│", " ").split())
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    usage = readme[readme.index("qosnet reproduce SET") : readme.index("qosnet profile")]
    for name in SETS:
        assert re.search(rf"\b{re.escape(name)} \(", flat), (name, flat)
        assert re.search(rf"\b{re.escape(name)} \(", usage), (name, usage)

"""What every `qosnet` command shares: the common arguments and options, errors turned into
messages and exit statuses, the progress bar and the console tables print to.

Every error a user can cause (a bad configuration or override, a missing file, a deadlock)
is printed on stderr with a non-zero exit status, never as a traceback.
"""

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from qosnet import _core

__all__ = [
    "ConfigArg",
    "booksim_program",
    "IdOption",
    "JsonOption",
    "SetOption",
    "err",
    "format_error",
    "progress_bar",
    "stdout_console",
    "user_errors",
    "when",
]

ConfigArg = Annotated[
    Path,
    typer.Argument(
        help="Configuration file (TOML, JSON ending in .json, or a BookSim2 file: *.cfg, "
        "or `name = value;` lines).",
        show_default=False,
    ),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        "-s",
        metavar="PATH=VALUE",
        help="Override a configuration value, e.g. traffic[0].load=0.5, router.vcs=8 or "
        "topology.kind=torus (the value is read as TOML, else as a string). Repeatable.",
        show_default=False,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON only, for scripts.")]
IdOption = Annotated[
    bool,
    typer.Option(
        "--id", help="Print only the new id (job-0594f7b2f8edef64), for scripts: JOB=$(... --id)."
    ),
]


def booksim_program(path: Path) -> Path:
    """`--booksim`: a path, or a command name on PATH, that is an executable file."""
    found = path if path.is_file() else Path(shutil.which(str(path)) or path)
    if not (found.is_file() and os.access(found, os.X_OK)):
        raise typer.BadParameter(f"{path} is not an executable file", param_hint="--booksim")
    return found


def plural(n: int, noun: str) -> str:
    """ "1 active job", "2 active jobs", "0 points"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def err(line: str) -> None:
    typer.echo(line, err=True)


def format_error(path: str, message: str) -> str:
    """`path: message`, continuation lines of a multi-line message indented."""
    return f"{path}: " + message.replace("\n", "\n    ")


@contextmanager
def user_errors(config: Path | None = None) -> Iterator[None]:
    """Turn the errors a user can cause into a message on stderr and an exit status."""
    try:
        yield
    except _core.ConfigError as e:
        errors = getattr(e, "errors", None) or [("<root>", str(e))]
        err(f"error: invalid configuration{f' {config}' if config else ''}")
        for path, message in errors:
            err("  " + format_error(path, message))
        raise typer.Exit(1) from None
    except _core.DeadlockError as e:
        # The engine's message, a part per line ("deadlock at ...; wait-for cycle: ...;
        # stuck: ..."); only the list of stuck VCs is cut short (a large network has
        # thousands).
        head, *parts = str(e).split("; ")
        err(f"error: {head}")
        stuck = list(getattr(e, "stuck", []))
        for part in parts:
            if part.startswith("stuck: ") and len(stuck) > 10:
                part = f"stuck: {', '.join(stuck[:10])} (and {len(stuck) - 10} more)"
            err(f"  {part}")
        raise typer.Exit(1) from None
    except _core.QosnetError as e:
        err(f"error: {e}")
        raise typer.Exit(1) from None
    except OSError as e:
        what = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        err(f"error: {what}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err("interrupted")
        raise typer.Exit(130) from None


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    """A progress callback drawing a bar on stderr, or None when disabled."""
    console = Console(stderr=True)
    if not (enabled and console.is_terminal):
        yield None
        return
    from rich.progress import (
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        TextColumn("{task.completed:>12,.0f} / {task.total:,.0f} cycles"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: list[Any] = []  # added on the first call, once the target is known

        def update(now: int, target: int) -> None:
            phase = "draining" if now >= target else "simulating"
            if not tasks:
                tasks.append(bar.add_task(phase, total=target))
            bar.update(tasks[0], completed=min(now, target), description=phase)

        yield update


def stdout_console() -> Console:
    """Rich console on stdout; when piped, wide enough that tables are never truncated."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=200)


def when(t: Any) -> str:
    """A time stamp of the service (tokens, leases) as tables show it; empty for none."""
    return t.strftime("%Y-%m-%d %H:%M:%S") if t is not None else ""

"""The `qosnet` command: run, validate and benchmark configurations.

Every error a user can cause (a bad configuration or override, a missing file, a deadlock)
is printed on stderr with a non-zero exit status, never as a traceback. pandas and pyarrow
are imported only by the commands that need them, so `qosnet validate` starts quickly.
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from qosnet import __version__, _core
from qosnet.config import validate as validate_config

app = typer.Typer(
    name="qosnet",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

ConfigArg = Annotated[
    Path,
    typer.Argument(help="Configuration file (TOML, or JSON ending in .json).", show_default=False),
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


def _version(value: bool) -> None:
    if value:
        typer.echo(f"qosnet {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Flit-level simulator of QoS-capable cluster interconnects.

    Exit status: 0 ok; 1 invalid configuration, missing file or failed simulation;
    2 usage error; 130 interrupted.
    """


def _err(line: str) -> None:
    typer.echo(line, err=True)


def _format_error(path: str, message: str) -> str:
    """`path: message`, continuation lines of a multi-line message indented."""
    return f"{path}: " + message.replace("\n", "\n    ")


@contextmanager
def _user_errors(config: Path | None = None) -> Iterator[None]:
    """Turn the errors a user can cause into a message on stderr and an exit status."""
    try:
        yield
    except _core.ConfigError as e:
        errors = getattr(e, "errors", None) or [("<root>", str(e))]
        _err(f"error: invalid configuration{f' {config}' if config else ''}")
        for path, message in errors:
            _err("  " + _format_error(path, message))
        raise typer.Exit(1) from None
    except _core.DeadlockError as e:
        stuck = list(getattr(e, "stuck", []))
        _err(f"error: {str(e).split('; stuck:')[0]}")
        if stuck:
            more = f" (and {len(stuck) - 10} more)" if len(stuck) > 10 else ""
            _err(f"  stuck: {', '.join(stuck[:10])}{more}")
        raise typer.Exit(1) from None
    except _core.QosnetError as e:
        _err(f"error: {e}")
        raise typer.Exit(1) from None
    except OSError as e:
        what = f"{e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        _err(f"error: {what}")
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        _err("interrupted")
        raise typer.Exit(130) from None


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Any]:
    """A progress callback drawing a bar on stderr, or None when disabled."""
    console = Console(stderr=True)
    if not (enabled and console.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description:<10}"),
        BarColumn(),
        TextColumn("{task.completed:>12,.0f} / {task.total:,.0f} cycles"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        tasks: list[Any] = []  # added on the first call, once the target is known

        def update(now: int, target: int) -> None:
            phase = "draining" if now >= target else "simulating"
            if not tasks:
                tasks.append(bar.add_task(phase, total=target))
            bar.update(tasks[0], completed=min(now, target), description=phase)

        yield update


def _stdout() -> Console:
    """Rich console on stdout; when piped, wide enough that tables are never truncated."""
    console = Console(highlight=False)
    return console if console.is_terminal else Console(highlight=False, width=200)


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


@app.command()
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
    with _user_errors(config):
        from qosnet.api import run as run_config

        with _progress_bar(enabled=not json_out) as progress:
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
    console = _stdout()
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


@app.command()
def validate(config: ConfigArg, sets: SetOption = None) -> None:
    """Check CONFIG without running it; print every problem as `path: message`.

    Exits 1 when there is any problem, 0 (printing "ok") when there is none.
    """
    with _user_errors():
        errors = validate_config(config, sets or ())
    for path, message in errors:
        typer.echo(_format_error(path, message))
    if errors:
        raise typer.Exit(1)
    typer.echo("ok")


def _si(v: float) -> str:
    for scale, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= scale:
            return f"{v / scale:.3g}{suffix}"
    return f"{v:.3g}"


@app.command()
def bench(
    configs: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="CONFIG",
            help="Configurations to benchmark (default: every *.toml in --dir).",
            show_default=False,
        ),
    ] = None,
    cycles: Annotated[
        int | None,
        typer.Option(
            "--cycles",
            min=1,
            metavar="N",
            help="Stop each run after N cycles (default: warm-up, window and drain, as `run`).",
            show_default=False,
        ),
    ] = None,
    directory: Annotated[
        Path | None,
        typer.Option(
            "--dir",
            help="Directory of benchmark configurations (default: configs/bench under the "
            "working directory, else under the repository holding this package).",
            show_default=False,
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Measure simulated cycles/s, delivered flits/s, flit-hops/s (hops/s) and peak memory.

    Each configuration runs in a process of its own, so peak memory is its own.
    """
    from qosnet.bench import bench_one, default_configs

    if configs and directory is not None:
        raise typer.BadParameter("give CONFIG files or --dir, not both", param_hint="--dir")
    with _user_errors():
        paths = list(configs) if configs else default_configs(directory)
        if not paths:
            _err(f"error: no *.toml configurations in {directory or 'configs/bench'}")
            raise typer.Exit(1)
    status = Console(stderr=True)
    results = []
    for path in paths:
        with _user_errors(path):
            if status.is_terminal and not json_out:
                with status.status(f"benchmarking {path.name}"):
                    results.append(bench_one(path, cycles))
            else:
                results.append(bench_one(path, cycles))
    if json_out:
        typer.echo(json.dumps([r.to_dict() for r in results], indent=2))
        return
    table = Table(title="qosnet bench", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("config", no_wrap=True)
    for name in ("cycles", "wall s", "cycles/s", "flits/s", "hops/s", "peak MiB"):
        table.add_column(name, justify="right", no_wrap=True)
    for r in results:
        table.add_row(
            Path(r.config).stem,
            str(r.cycles),
            f"{r.wall_seconds:.3f}",
            _si(r.cycles_per_second),
            _si(r.flits_per_second),
            _si(r.flit_hops_per_second),
            f"{r.peak_rss_bytes / 2**20:.0f}",
        )
    _stdout().print(table)


@app.command()
def reproduce(
    name: Annotated[
        str,
        typer.Argument(help="Experiment set: seed003, seed003-nic or seed004.", show_default=False),
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
    sets: SetOption = None,
) -> None:
    """Re-run a document's experiments and write tables, figures and a report."""
    import importlib
    from dataclasses import replace

    from qosnet.reproduce import SETS, run_experiments

    if name not in SETS:
        raise typer.BadParameter(
            f"must be one of {', '.join(sorted(SETS))}, got {name!r}", param_hint="NAME"
        )
    module = importlib.import_module(SETS[name])
    out = output or Path("runs") / "reproduce" / name
    with _user_errors():
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
        if sets:
            # applied after each run's own overrides, so they win
            for e in experiments:
                e.runs = [replace(r, overrides=(*r.overrides, *sets)) for r in e.runs]
        total = sum(len(e.runs) for e in experiments)
        console = Console(stderr=True)
        if console.is_terminal:
            from rich.progress import Progress

            with Progress(console=console, transient=True) as bar:
                task = bar.add_task(f"{name}: {total} runs", total=total)
                results = run_experiments(
                    experiments, jobs=jobs, on_done=lambda e, r: bar.advance(task)
                )
        else:
            results = run_experiments(experiments, jobs=jobs)
        path = module.report(experiments, results, out, quick=quick)
    typer.echo(f"wrote {path}")

"""The `qosnet` command: run, validate and benchmark configurations.

Every error a user can cause (a bad configuration or override, a missing file, a deadlock)
is printed on stderr with a non-zero exit status, never as a traceback. pandas and pyarrow
are imported only by the commands that need them, so `qosnet validate` starts quickly.
"""

import json
import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
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

    Exit status: 0 ok; 1 invalid configuration, missing file, failed simulation or an
    error from the service; 2 usage error; 3 job refused; 130 interrupted.
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
        # The engine's message, a part per line ("deadlock at ...; wait-for cycle: ...;
        # stuck: ..."); only the list of stuck VCs is cut short (a large network has
        # thousands).
        head, *parts = str(e).split("; ")
        _err(f"error: {head}")
        stuck = list(getattr(e, "stuck", []))
        for part in parts:
            if part.startswith("stuck: ") and len(stuck) > 10:
                part = f"stuck: {', '.join(stuck[:10])} (and {len(stuck) - 10} more)"
            _err(f"  {part}")
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
    admission: Annotated[
        bool,
        typer.Option(
            "--admission",
            help="Measure admission decisions instead: CONFIG files are cluster descriptions "
            "(default: configs/clusters/avakas.toml, 281 nodes) loaded with --reservations "
            "random flows; reports decisions/s and p50/p99 latency.",
        ),
    ] = False,
    reservations: Annotated[
        int,
        typer.Option("--reservations", min=0, metavar="N", help="With --admission: flows held."),
    ] = 1000,
    booksim: Annotated[
        Path | None,
        typer.Option(
            "--booksim",
            metavar="PATH",
            help="A BookSim2 binary (built by you; not shipped): after each configuration with a "
            "BookSim2 input beside it (booksim2/NAME.cfg), run BookSim2 on the same network and "
            "report its speed and qosnet's multiple of it (of its cycles/s: on the same network "
            "and load both deliver the same flits per cycle, which the flits/s columns show).",
            show_default=False,
        ),
    ] = None,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            min=1,
            metavar="N",
            help="Run each configuration N times (with --booksim, BookSim2 after each) and "
            "report the run of median speed and the median of the rounds' multiples of "
            "BookSim2, with their range.",
        ),
    ] = 1,
    sets: SetOption = None,
    json_out: JsonOption = False,
) -> None:
    """Measure simulated cycles/s, delivered flits/s, flit-hops/s (hops/s) and peak memory,
    or with --admission the speed of admission decisions.

    Each configuration runs in a process of its own, so peak memory is its own. With
    --booksim, BookSim2 runs right after it, so both are measured in the same minutes, and
    --set may change only simulation.* (e.g. simulation.measure=300000). This machine's
    speed drifts from hour to hour: --rounds 3 or more gives a steadier multiple.
    """
    from qosnet.bench import compare, default_configs

    if configs and directory is not None:
        raise typer.BadParameter("give CONFIG files or --dir, not both", param_hint="--dir")
    if booksim is not None:
        # a path, or a command name on PATH
        found = booksim if booksim.is_file() else Path(shutil.which(str(booksim)) or booksim)
        if not (found.is_file() and os.access(found, os.X_OK)):
            raise typer.BadParameter(f"{booksim} is not an executable file", param_hint="--booksim")
        booksim = found
    if booksim is not None and any(not s.startswith("simulation.") for s in sets or ()):
        raise typer.BadParameter(
            "with --booksim only simulation.* may be overridden (BookSim2's inputs are fixed: "
            "the same network and load on both sides)",
            param_hint="--set",
        )
    if admission and sets:
        raise typer.BadParameter("--admission takes no --set", param_hint="--set")
    if admission:
        _bench_admission(configs or [], directory, reservations, json_out)
        return
    with _user_errors():
        paths = list(configs) if configs else default_configs(directory)
        if not paths:
            _err(f"error: no *.toml configurations in {directory or 'configs/bench'}")
            raise typer.Exit(1)
    status = Console(stderr=True)
    quiet = not status.is_terminal or json_out
    compared = []
    for path in paths:
        with _user_errors(path), nullcontext() if quiet else status.status("") as spinner:
            step = None if spinner is None else spinner.update
            compared.append(compare(path, rounds, cycles, sets or (), booksim, on_step=step))
    if json_out:
        typer.echo(json.dumps([c.to_dict() for c in compared], indent=2))
        return
    title = "qosnet bench" + (f" (median of {rounds} rounds)" if rounds > 1 else "")
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("config", no_wrap=True)
    columns = ["cycles", "wall s", "cycles/s", "flits/s", "hops/s", "peak MiB"]
    if booksim is not None:
        columns += ["BookSim2 cycles/s", "BookSim2 flits/s", "× BookSim2"]
    for name in columns:
        table.add_column(name, justify="right", no_wrap=True)
    for c in compared:
        r, b, m = c.run, c.rival, c.multiples
        row = [
            Path(r.config).stem,
            str(r.cycles),
            f"{r.wall_seconds:.3f}",
            _si(r.cycles_per_second),
            _si(r.flits_per_second),
            _si(r.flit_hops_per_second),
            f"{r.peak_rss_bytes / 2**20:.0f}",
        ]
        if booksim is not None:
            spread = f" ({min(m):.1f}-{max(m):.1f})" if m and len(m) > 1 else ""
            row += (
                [_si(b.cycles_per_second), _si(b.flits_per_second), f"{c.multiple:.1f}×{spread}"]
                if b and m
                else ["—"] * 3
            )
        table.add_row(*row)
    _stdout().print(table)


def _bench_admission(
    configs: list[Path], directory: Path | None, reservations: int, json_out: bool
) -> None:
    from qosnet.bench import find_bench_dir
    from qosnet.middleware.bench import bench_admission
    from qosnet.middleware.cluster import Cluster

    if not configs:
        bench_dir = find_bench_dir()
        found = bench_dir.parent / "clusters" / "avakas.toml" if bench_dir else None
        if directory is not None or found is None or not found.is_file():
            _err("error: name the clusters to benchmark (no configs/clusters/avakas.toml)")
            raise typer.Exit(1)
        configs = [found]
    status = Console(stderr=True)
    rows = []
    for path in configs:
        with _user_errors(path):
            cluster = Cluster.from_file(path)
            try:
                if status.is_terminal and not json_out:
                    with status.status(f"benchmarking admission on {path.name}"):
                        rows += bench_admission(cluster, reservations=reservations)
                else:
                    rows += bench_admission(cluster, reservations=reservations)
            except ValueError as e:
                raise typer.BadParameter(str(e), param_hint="--reservations") from None
    if json_out:
        typer.echo(json.dumps([r.to_dict() for r in rows], indent=2))
        return
    table = Table(title="qosnet bench --admission", box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("cluster", "decision"):
        table.add_column(name, no_wrap=True)
    for name in ("nodes", "held", "count", "admitted", "p50 µs", "p99 µs", "decisions/s"):
        table.add_column(name, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(
            r.cluster,
            r.decision,
            str(r.nodes),
            str(r.reservations),
            str(r.count),
            str(r.admitted),
            f"{r.p50_us:.3g}",
            f"{r.p99_us:.3g}",
            _si(r.per_second),
        )
    _stdout().print(table)


@app.command()
def reproduce(
    name: Annotated[
        str,
        typer.Argument(
            help="Experiment set: seed001, seed003, seed003-nic or seed004.", show_default=False
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
        self_run = getattr(module, "SELF_RUN", False)
        if sets and self_run:
            raise typer.BadParameter(
                f"{name} runs no engine configurations; --set does not apply", param_hint="--set"
            )
        if sets:
            # applied after each run's own overrides, so they win
            for e in experiments:
                e.runs = [replace(r, overrides=(*r.overrides, *sets)) for r in e.runs]
        if self_run:
            # the module runs its own experiments (document 001's fluid model, not the engine)
            results = module.run(experiments, quick=quick, jobs=jobs)
        else:
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


# --------------------------------------------------------------------------------------
# the request handler service (document 001's QoS middleware): serve, token, job

DEFAULT_URL = "http://127.0.0.1:8000"

DbOption = Annotated[
    str,
    typer.Option(
        "--db",
        envvar="QOSNET_DB",
        help="Database: a SQLite file (path or sqlite:///path.db) or a PostgreSQL URL "
        "(postgresql+psycopg://user:pass@host/db).",
    ),
]
UrlOption = Annotated[
    str, typer.Option("--url", envvar="QOSNET_URL", help="The service (`qosnet serve`).")
]
TokenOption = Annotated[
    str | None,
    typer.Option("--token", envvar="QOSNET_TOKEN", help="API token.", show_default=False),
]

token_app = typer.Typer(
    help="API tokens of the service, straight in its database (run where it runs).",
    no_args_is_help=True,
)
job_app = typer.Typer(
    help="Jobs on a running service: submit, renew, release, list.", no_args_is_help=True
)
app.add_typer(token_app, name="token")
app.add_typer(job_app, name="job")


@contextmanager
def _service_errors() -> Iterator[None]:
    """The errors of the service's database and settings, as messages."""
    from sqlalchemy.exc import SQLAlchemyError

    with _user_errors():
        try:
            yield
        except SQLAlchemyError as e:
            _err(f"error: database: {str(e).splitlines()[0]}")
            raise typer.Exit(1) from None
        except (ValueError, RuntimeError) as e:
            _err(f"error: {e}")
            raise typer.Exit(1) from None


@app.command()
def serve(
    db: DbOption = "qosnet.db",
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8000,
    lease: Annotated[
        float, typer.Option("--lease", min=0.001, metavar="SECONDS", help="Default job lease.")
    ] = 300.0,
    max_lease: Annotated[
        float,
        typer.Option("--max-lease", metavar="SECONDS", help="Longest lease a request may ask."),
    ] = 86_400.0,
    sweep: Annotated[
        float | None,
        typer.Option(
            "--sweep",
            min=0,
            metavar="SECONDS",
            help="Expiry sweeper period (default: lease/10 within 1-30 s; 0: none).",
            show_default=False,
        ),
    ] = None,
    cluster: Annotated[
        Path | None,
        typer.Option(
            "--cluster",
            help="Network to install (qosnet TOML); default: the stored one, else "
            "document 001's testbed.",
            show_default=False,
        ),
    ] = None,
    profiles: Annotated[
        Path | None,
        typer.Option(
            "--profiles",
            help="Profiles to install (JSON); default: the stored ones, else the examples.",
            show_default=False,
        ),
    ] = None,
    init_admin: Annotated[
        bool,
        typer.Option(
            "--init-admin", help="Create an admin token if there is none and print it once."
        ),
    ] = False,
    log_level: Annotated[str, typer.Option("--log-level", help="uvicorn's log level.")] = "info",
) -> None:
    """Run the request handler service (HTTP API; OpenAPI docs at /docs)."""
    import logging

    from qosnet.service.handler import RequestHandler
    from qosnet.service.settings import Settings

    logging.basicConfig(level=log_level.upper(), format="%(levelname)s: %(name)s: %(message)s")
    with _service_errors():
        settings = Settings(
            db_url=db,
            lease_seconds=lease,
            max_lease_seconds=max(max_lease, lease),
            sweep_seconds=sweep,
            cluster_file=cluster,
            profiles_file=profiles,
        )
        handler = RequestHandler(settings)
        handler.start()
        if init_admin:
            secret = handler.ensure_admin_token()
            if secret is None:
                _err("an admin token exists already; `qosnet token create` makes another")
            else:
                typer.echo(f"admin token (shown once): {secret}")
        sys.stdout.flush()
        import uvicorn

        from qosnet.service.app import create_app

        uvicorn.run(
            create_app(settings, handler=handler), host=host, port=port, log_level=log_level
        )


def _handler_for(db: str) -> Any:
    from qosnet.service.handler import RequestHandler
    from qosnet.service.settings import Settings

    handler = RequestHandler(Settings(db_url=db, sweep_seconds=0))
    handler.start()
    return handler


@token_app.command("create")
def token_create(
    name: Annotated[str, typer.Option("--name", help="Who holds it (a tenant's name).")],
    role: Annotated[str, typer.Option("--role", help="admin or tenant.")] = "tenant",
    db: DbOption = "qosnet.db",
) -> None:
    """Create a token and print it (once: only its hash is stored)."""
    from pydantic import ValidationError

    from qosnet.service.schemas import TokenCreate

    try:
        TokenCreate(name=name, role=role)  # type: ignore[arg-type]
    except ValidationError as e:
        err = e.errors()[0]
        raise typer.BadParameter(err["msg"], param_hint=f"--{err['loc'][0]}") from None
    from qosnet.service.handler import ServiceError

    with _service_errors():
        try:
            out, secret = _handler_for(db).create_token(name, role)
        except ServiceError as e:
            _err(f"error: {e.detail}")
            raise typer.Exit(1) from None
    _err(f"token {out.id} for {name} ({role}); it is shown only now:")
    typer.echo(secret)


@token_app.command("list")
def token_list(db: DbOption = "qosnet.db") -> None:
    """List the tokens (never their secrets)."""
    with _service_errors():
        tokens = _handler_for(db).tokens()
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "name", "role", "prefix", "created", "revoked"):
        table.add_column(column)
    for t in tokens:
        table.add_row(
            str(t.id), escape(t.name), t.role, t.prefix + "...", _when(t.created_at), str(t.revoked)
        )
    _stdout().print(table)


@token_app.command("revoke")
def token_revoke(
    token_id: Annotated[int, typer.Argument(metavar="ID", help="Token id (`token list`).")],
    db: DbOption = "qosnet.db",
) -> None:
    """Revoke a token."""
    from qosnet.service.handler import ServiceError

    with _service_errors():
        try:
            _handler_for(db).revoke_token(token_id)
        except ServiceError as e:
            _err(f"error: {e.detail}")
            raise typer.Exit(1) from None
    typer.echo(f"revoked token {token_id}")


def _when(t: Any) -> str:
    return t.strftime("%Y-%m-%d %H:%M:%S") if t is not None else ""


def _param(text: str) -> tuple[str, Any]:
    import tomllib

    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise typer.BadParameter(f"must be NAME=VALUE, got {text!r}", param_hint="--param")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        value = raw
    return name.strip(), value


@contextmanager
def _client(url: str, token: str | None) -> Iterator[Any]:
    """A Client, its errors turned into messages (exit 3 for a refused job, else 1)."""
    import httpx

    from qosnet.client import ApiError, Client, Invalid, Refused, Unauthorized

    try:
        with Client(url, token) as client:
            yield client
    except Refused as e:
        _err(f"refused ({e.reason}): {e.detail.removeprefix('refused: ')}")
        raise typer.Exit(3) from None
    except Invalid as e:
        _err(f"error: invalid request: {e.detail}")
        raise typer.Exit(1) from None
    except Unauthorized as e:
        hint = "" if token else " (give --token or set QOSNET_TOKEN)"
        _err(f"error: {e.detail}{hint}")
        raise typer.Exit(1) from None
    except ApiError as e:
        _err(f"error: {e.status}: {e.detail}")
        raise typer.Exit(1) from None
    except httpx.HTTPError as e:
        _err(f"error: cannot reach {url}: {e}")
        raise typer.Exit(1) from None


def _print_job(job: Any, flows: bool = True) -> None:
    from qosnet.middleware.units import MB

    console = _stdout()
    table = Table(title=f"job {job.id}", show_header=False, box=box.SIMPLE_HEAD)
    table.add_column("field")
    table.add_column("value")
    rows = [
        ("state", job.state + (f" ({job.end_reason})" if job.end_reason else "")),
        ("owner", job.owner),
        ("application", job.application),
        ("parameters", ", ".join(f"{k}={v}" for k, v in job.parameters.items())),
        ("nodes", f"{job.node_count}: {', '.join(map(str, job.nodes))}"),
        ("pattern", job.pattern),
        ("bandwidth per flow", f"{job.bandwidth / MB:g} MB/s"),
        ("expected time", f"{job.expected_time:g} s"),
        ("flows", str(len(job.flows))),
        ("lease expires (UTC)", _when(job.lease_expires)),
    ]
    for k, v in rows:
        table.add_row(k, escape(str(v)))
    console.print(table)
    if flows and job.flows:
        ft = Table(title="flows (NIC rate control)", box=box.SIMPLE_HEAD, pad_edge=False)
        for column in ("src", "dst", "MB/s", "IDT (T)", "hops"):
            ft.add_column(column, justify="right")
        for f in job.flows:
            ft.add_row(
                str(f.src), str(f.dst), f"{f.bandwidth / MB:g}", f"{f.idt:.6g}", str(len(f.path))
            )
        console.print(ft)


@job_app.command("submit")
def job_submit(
    application: Annotated[str, typer.Argument(help="Application (`ray_tracing`, ...).")],
    params: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            "-p",
            metavar="NAME=VALUE",
            help="Fix an application parameter, e.g. image_size=512. Repeatable.",
            show_default=False,
        ),
    ] = None,
    t1: Annotated[
        float | None,
        typer.Option("--t1", metavar="SECONDS", help="Lower time bound.", show_default=False),
    ] = None,
    t2: Annotated[
        float | None,
        typer.Option(
            "--t2", metavar="SECONDS", help="Upper time bound (response time).", show_default=False
        ),
    ] = None,
    nodes: Annotated[
        int | None, typer.Option("--nodes", min=1, help="Fix N.", show_default=False)
    ] = None,
    lease: Annotated[
        float | None,
        typer.Option("--lease", metavar="SECONDS", help="Lease to ask for.", show_default=False),
    ] = None,
    idempotency_key: Annotated[
        str | None,
        typer.Option(
            "--idempotency-key",
            help="Retries with this key return the same job.",
            show_default=False,
        ),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
    json_out: JsonOption = False,
) -> None:
    """Ask for a job; print its allocation (exit 0) or why it was refused (exit 3)."""
    parameters = dict(_param(p) for p in params or ())
    with _client(url, token) as client:
        job = client.submit(
            application,
            parameters,
            t1=t1,
            t2=t2,
            nodes=nodes,
            lease_seconds=lease,
            idempotency_key=idempotency_key,
        )
    if json_out:
        typer.echo(job.model_dump_json(indent=2))
    else:
        _print_job(job)


@job_app.command("release")
def job_release(
    job_id: Annotated[str, typer.Argument(metavar="ID")],
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Release a job's reservation."""
    with _client(url, token) as client:
        job = client.release(job_id)
    typer.echo(f"{job.id} {job.state}")


@job_app.command("renew")
def job_renew(
    job_id: Annotated[str, typer.Argument(metavar="ID")],
    lease: Annotated[
        float | None,
        typer.Option("--lease", metavar="SECONDS", help="New lease from now.", show_default=False),
    ] = None,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
) -> None:
    """Extend a job's lease."""
    with _client(url, token) as client:
        job = client.renew(job_id, lease)
    typer.echo(f"{job.id} lease expires {_when(job.lease_expires)} UTC")


@job_app.command("show")
def job_show(
    job_id: Annotated[str, typer.Argument(metavar="ID")],
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
    json_out: JsonOption = False,
) -> None:
    """A job with its flows and their IDTs."""
    with _client(url, token) as client:
        job = client.job(job_id)
    if json_out:
        typer.echo(job.model_dump_json(indent=2))
    else:
        _print_job(job)


@job_app.command("list")
def job_list(
    state: Annotated[
        str | None,
        typer.Option("--state", help="active, released or expired.", show_default=False),
    ] = None,
    owner: Annotated[
        str | None, typer.Option("--owner", help="Only this owner's (admin).", show_default=False)
    ] = None,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
    json_out: JsonOption = False,
) -> None:
    """List jobs, newest first (a tenant sees its own)."""
    from qosnet.middleware.units import MB

    if state is not None and state not in ("active", "released", "expired"):
        raise typer.BadParameter(
            f"must be active, released or expired, got {state!r}", param_hint="--state"
        )
    with _client(url, token) as client:
        jobs = client.jobs(state=state, owner=owner)  # type: ignore[arg-type]
    if json_out:
        typer.echo(json.dumps([j.model_dump(mode="json") for j in jobs], indent=2))
        return
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in ("id", "owner", "state", "application", "nodes", "MB/s", "time s", "until (UTC)"):
        table.add_column(
            column, justify="right" if column in ("nodes", "MB/s", "time s") else "left"
        )
    for j in jobs:
        table.add_row(
            j.id,
            escape(j.owner),
            j.state,
            escape(j.application),
            str(j.node_count),
            f"{j.bandwidth / MB:g}",
            f"{j.expected_time:g}",
            _when(j.lease_expires if j.state == "active" else j.ended_at),
        )
    _stdout().print(table)


@job_app.command("utilisation")
def job_utilisation(
    url: UrlOption = DEFAULT_URL, token: TokenOption = None, json_out: JsonOption = False
) -> None:
    """Reserved bandwidth per link, and the free nodes."""
    from qosnet.middleware.units import MB

    with _client(url, token) as client:
        use = client.utilisation()
    if json_out:
        typer.echo(use.model_dump_json(indent=2))
        return
    table = Table(
        title=f"{use.active_jobs} active jobs, {len(use.free_nodes)}/{use.nodes} nodes free",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for column in ("router", "port", "to", "capacity MB/s", "reserved MB/s", "use"):
        table.add_column(column, justify="right")
    for link in use.links:
        if link.reserved > 0:
            table.add_row(
                str(link.router),
                str(link.port),
                f"{link.to} {link.to_id}",
                f"{link.capacity / MB:g}",
                f"{link.reserved / MB:g}",
                f"{link.utilisation:.0%}",
            )
    _stdout().print(table)

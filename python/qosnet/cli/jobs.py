"""`qosnet job`: the job client of the request handler service (`qosnet serve`): submit a
job, renew or release its lease, show and list jobs, the links' reserved bandwidth. It
talks HTTP through `qosnet.client.Client`; httpx is imported only when a command runs."""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from qosnet.cli.common import JsonOption, err, stdout_console, when

__all__ = ["job_app"]

DEFAULT_URL = "http://127.0.0.1:8000"

UrlOption = Annotated[
    str, typer.Option("--url", envvar="QOSNET_URL", help="The service (`qosnet serve`).")
]
TokenOption = Annotated[
    str | None,
    typer.Option("--token", envvar="QOSNET_TOKEN", help="API token.", show_default=False),
]

job_app = typer.Typer(
    help="Jobs on a running service: submit, renew, release, list.", no_args_is_help=True
)


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
        err(f"refused ({e.reason}): {e.detail.removeprefix('refused: ')}")
        raise typer.Exit(3) from None
    except Invalid as e:
        err(f"error: invalid request: {e.detail}")
        raise typer.Exit(1) from None
    except Unauthorized as e:
        hint = "" if token else " (give --token or set QOSNET_TOKEN)"
        err(f"error: {e.detail}{hint}")
        raise typer.Exit(1) from None
    except ApiError as e:
        err(f"error: {e.status}: {e.detail}")
        raise typer.Exit(1) from None
    except httpx.HTTPError as e:
        err(f"error: cannot reach {url}: {e}")
        raise typer.Exit(1) from None


def _print_job(job: Any, flows: bool = True) -> None:
    from qosnet.middleware.units import MB

    console = stdout_console()
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
        ("lease expires (UTC)", when(job.lease_expires)),
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
    typer.echo(f"{job.id} lease expires {when(job.lease_expires)} UTC")


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
            when(j.lease_expires if j.state == "active" else j.ended_at),
        )
    stdout_console().print(table)


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
    stdout_console().print(table)

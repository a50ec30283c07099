"""`qosnet job`: the job client of the request handler service (`qosnet serve`): submit a
job, renew or release its lease, show and list jobs, the links' reserved bandwidth. It
talks HTTP through `qosnet.client.Client`; httpx is imported only when a command runs."""

from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from qosnet.cli.common import IdOption, JsonOption, plural, stdout_console, when
from qosnet.cli.remote import (
    DEFAULT_URL,
    LeaseOption,
    TokenOption,
    UrlOption,
    add_lease_commands,
    lease_app,
    print_one,
    service_client,
)
from qosnet.lease_kinds import JOB

__all__ = ["job_app"]

job_app = lease_app(JOB)


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
    lease: LeaseOption = None,
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
    id_only: IdOption = False,
) -> None:
    """Ask for a job; print its allocation (exit 0) or why it was refused (exit 3)."""
    parameters = dict(_param(p) for p in params or ())
    with service_client(url, token) as client:
        job = client.submit(
            application,
            parameters,
            t1=t1,
            t2=t2,
            nodes=nodes,
            lease_seconds=lease,
            idempotency_key=idempotency_key,
        )
    print_one(job, json_out, _print_job, id_only)


def _print_jobs(jobs: list[Any]) -> None:
    from qosnet.middleware.units import MB

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


add_lease_commands(
    job_app,
    JOB,
    show=_print_job,
    show_help="A job with its flows and their IDTs.",
    table=_print_jobs,
)


@job_app.command("utilisation")
def job_utilisation(
    url: UrlOption = DEFAULT_URL, token: TokenOption = None, json_out: JsonOption = False
) -> None:
    """Reserved bandwidth per link, and the free nodes."""
    from qosnet.middleware.units import MB

    with service_client(url, token) as client:
        use = client.utilisation()
    if json_out:
        typer.echo(use.model_dump_json(indent=2))
        return
    table = Table(
        title=(
            f"{plural(use.active_jobs, 'active job')}, {len(use.free_nodes)}/{use.nodes} nodes free"
        ),
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

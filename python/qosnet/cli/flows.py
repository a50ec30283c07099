"""`qosnet flow`: single-flow reservations on a running service (`POST /v1/flows`, the data
plane's flows outside any job, document 004 §3.4): reserve one flow between two nodes'
agents, list, show, renew or release it. Bandwidths are typed in physical units ("50 MB/s",
"400 Mb/s"); the service stores bytes/s. The hosts' agents install an admitted flow
(`qosnet agent --service`)."""

from typing import Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from qosnet.cli.common import IdOption, JsonOption, stdout_console, when
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
from qosnet.lease_kinds import FLOW

__all__ = ["flow_app"]

flow_app = lease_app(FLOW)


def _bytes_per_second(text: str) -> float:
    """BANDWIDTH in physical units (bits or bytes per second), as bytes/s."""
    from qosnet._core import parse_bandwidth

    try:
        bps = parse_bandwidth(text)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="BANDWIDTH") from None
    if not bps > 0:
        raise typer.BadParameter(f"must be > 0, got {text!r}", param_hint="BANDWIDTH")
    return bps / 8


def _rate(bytes_per_second: float) -> str:
    """A reserved rate as the tables show it: MB/s (the service's unit) and Mb/s."""
    from qosnet.middleware.units import MB

    return f"{bytes_per_second / MB:g} MB/s ({bytes_per_second * 8 / 1e6:g} Mb/s)"


def _endpoint(node: int, port: int) -> str:
    return f"node {node}" + (f" port {port}" if port else "")


def _print_flow(f: Any) -> None:
    table = Table(title=f"flow {f.id}", show_header=False, box=box.SIMPLE_HEAD)
    table.add_column("field")
    table.add_column("value")
    rows = [
        ("state", f.state + (f" ({f.end_reason})" if f.end_reason else "")),
        ("owner", f.owner),
        ("from", _endpoint(f.src, f.src_port)),
        ("to", _endpoint(f.dst, f.dst_port)),
        ("priority", str(f.priority)),
        ("bandwidth", _rate(f.bandwidth)),
        ("IDT (T)", f"{f.idt:.6g}"),
        ("hops", " ".join(f"{r}:{p}" for r, p in f.path)),
        ("lease expires (UTC)", when(f.lease_expires) if f.state == "active" else ""),
        ("renewals", str(f.renewals)),
    ]
    for k, v in rows:
        table.add_row(k, escape(v))
    stdout_console().print(table)


@flow_app.command("reserve")
def flow_reserve(
    src: Annotated[
        int, typer.Argument(min=0, metavar="SRC", help="Source node.", show_default=False)
    ],
    dst: Annotated[
        int, typer.Argument(min=0, metavar="DST", help="Destination node.", show_default=False)
    ],
    bandwidth: Annotated[
        str,
        typer.Argument(metavar="BANDWIDTH", help="Rate to reserve, e.g. '50 MB/s' or '400 Mb/s'."),
    ],
    src_port: Annotated[
        int, typer.Option("--src-port", min=0, help="Source agent's local port.")
    ] = 0,
    dst_port: Annotated[
        int, typer.Option("--dst-port", min=0, help="Destination agent's local port.")
    ] = 0,
    priority: Annotated[int, typer.Option("--priority", min=0, max=255)] = 0,
    lease: LeaseOption = None,
    url: UrlOption = DEFAULT_URL,
    token: TokenOption = None,
    json_out: JsonOption = False,
    id_only: IdOption = False,
) -> None:
    """Reserve BANDWIDTH from node SRC to node DST; print the flow or why it was refused.

    Exit status 0 when admitted (the flow with its IDT), 3 when refused (the reason).
    """
    rate = _bytes_per_second(bandwidth)
    with service_client(url, token) as client:
        flow = client.reserve_flow(
            src, dst, rate, src_port=src_port, dst_port=dst_port, priority=priority,
            lease_seconds=lease,
        )  # fmt: skip
    print_one(flow, json_out, _print_flow, id_only)


def _print_flows(flows: list[Any]) -> None:
    from qosnet.middleware.units import MB

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    right = ("src", "dst", "prio", "MB/s", "IDT (T)")
    for column in ("id", "owner", "state", "src", "dst", "prio", "MB/s", "IDT (T)", "until (UTC)"):
        table.add_column(column, justify="right" if column in right else "left")
    for f in flows:
        table.add_row(
            f.id,
            escape(f.owner),
            f.state,
            f"{f.src}" + (f"/{f.src_port}" if f.src_port else ""),
            f"{f.dst}" + (f"/{f.dst_port}" if f.dst_port else ""),
            str(f.priority),
            f"{f.bandwidth / MB:g}",
            f"{f.idt:.6g}",
            when(f.lease_expires if f.state == "active" else f.ended_at),
        )
    stdout_console().print(table)


add_lease_commands(
    flow_app,
    FLOW,
    show=_print_flow,
    show_help="A flow reservation, its IDT and path.",
    table=_print_flows,
)

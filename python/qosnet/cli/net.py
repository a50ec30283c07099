"""`qosnet agent` (a host's rate-control agent) and `qosnet net send/recv/bench` (the data
plane's tools): `qosnet.dataplane`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from qosnet.cli.common import JsonOption, err, stdout_console, user_errors

__all__ = ["agent", "net_app"]

net_app = typer.Typer(
    name="net",
    no_args_is_help=True,
    help="Move real bytes through rate-controlled agents: send, recv, bench.",
)

Listen = Annotated[
    str, typer.Option("--listen", "-l", help="Address to listen on (host:port; port 0 picks one).")
]
Backend = Annotated[
    str,
    typer.Option(
        "--backend",
        help="agent: document 004's scheduler in user space; kernel: the socket's "
        "SO_MAX_PACING_RATE (TCP pacing, fq).",
    ),
]
PacketSize = Annotated[
    int, typer.Option("--packet-size", min=1, max=1 << 20, help="Packet size, bytes (GM: 4096).")
]


@contextmanager
def _errors() -> Iterator[None]:
    """`user_errors`, and the data plane's bad arguments (a listen address that cannot be
    bound, a bad host file) as messages, not tracebacks."""
    with user_errors():
        try:
            yield
        except (ValueError, TimeoutError) as e:
            err(f"error: {e}")
            raise typer.Exit(1) from None


def _bps(text: str, option: str) -> float:
    from qosnet._core import parse_bandwidth

    try:
        return parse_bandwidth(text)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint=option) from None


def _flow_table(stats: dict[str, Any], elapsed: float | None = None) -> Any:
    from rich.table import Table

    t = Table(title=f"agent {stats['endpoint']}")
    for c in ("to", "prio", "reserved Mb/s", "IDT µs", "sent MB", "messages", "Mb/s", "state"):
        t.add_column(c, justify="left" if c in ("to", "state") else "right")
    for f in stats["flows"]:
        rate = f"{f['bytes_sent'] * 8 / elapsed / 1e6:.2f}" if elapsed else ""
        t.add_row(
            f["dst"],
            str(f["priority"]),
            f"{f['reserved_bps'] / 1e6:.2f}" if f["reserved_bps"] else "-",
            f"{f['idt_ns'] / 1e3:.1f}" if f["idt_ns"] else "-",
            f"{f['bytes_sent'] / 1e6:.2f}",
            str(f["messages_sent"]),
            rate,
            f["failed"] or "ok",
        )
    return t


def _recv_table(stats: dict[str, Any], elapsed: float | None = None) -> Any:
    from rich.table import Table

    t = Table(title=f"received at {stats['endpoint']}")
    for c in ("from", "prio", "MB", "messages", "Mb/s"):
        t.add_column(c, justify="left" if c == "from" else "right")
    for r in stats["received"]:
        rate = f"{r['bytes'] * 8 / elapsed / 1e6:.2f}" if elapsed else ""
        t.add_row(r["src"], str(r["priority"]), f"{r['bytes'] / 1e6:.2f}", str(r["messages"]), rate)
    t.caption = (
        f"malformed frames refused: {stats['malformed_frames']}; refused sends: "
        f"{stats['refused_sends']}; leases expired: {stats['expired_leases']}"
    )
    return t


def agent(
    listen: Listen = "0.0.0.0:7400",
    backend: Backend = "agent",
    open_: Annotated[
        bool, typer.Option("--open", help="Let unreserved flows send (unregulated).")
    ] = False,
    packet_size: PacketSize = 4096,
    echo: Annotated[bool, typer.Option("--echo", help="Send every message back.")] = False,
    service: Annotated[
        str | None,
        typer.Option("--service", help="URL of `qosnet serve`: install its admitted flows."),
    ] = None,
    node: Annotated[
        int | None, typer.Option("--node", help="This host's node number in the service.")
    ] = None,
    hosts: Annotated[
        Path | None,
        typer.Option("--hosts", help="Host file: one `NODE HOST:PORT` per line (agents)."),
    ] = None,
    token: Annotated[
        str | None, typer.Option("--token", envvar="QOSNET_TOKEN", help="Service API token.")
    ] = None,
    interval: Annotated[
        float, typer.Option("--interval", min=0.1, help="Seconds between status lines.")
    ] = 5.0,
    duration: Annotated[
        float | None, typer.Option("--duration", min=0, help="Stop after this many seconds.")
    ] = None,
) -> None:
    """Run this host's rate-control agent (document 004's NIC firmware) until interrupted.

    With --service, --node and --hosts it follows the service: every admitted flow sourced
    at this node is reserved here (its IDT from the reserved bandwidth), and a flow released
    or whose lease expired is removed; flows the service did not admit are refused unless
    --open.
    """
    from qosnet.dataplane import Agent
    from qosnet.dataplane.control import ServiceLink, read_hosts

    if (service is None) != (node is None) or (service is not None and hosts is None):
        raise typer.BadParameter(
            "--service, --node and --hosts go together", param_hint="--service"
        )
    with _errors():
        a = Agent(
            listen=listen, backend=backend, packet_bytes=packet_size, open=open_, echo=echo,
            deliver=False,
        )  # fmt: skip
        link = None
        if service is not None and node is not None and hosts is not None:
            link = ServiceLink(a, service, node, read_hosts(hosts), token=token)
        err(f"agent {a.endpoint} ({backend}{', open' if open_ else ''}) running; Ctrl-C stops")
        t0 = time.monotonic()
        last = t0
        try:
            while duration is None or time.monotonic() - t0 < duration:
                if link is not None:
                    link.sync()
                time.sleep(min(interval, link.interval if link else interval))
                if time.monotonic() - last >= interval:
                    last = time.monotonic()
                    s = a.stats()
                    sent = sum(f["bytes_sent"] for f in s["flows"])
                    got = sum(r["bytes"] for r in s["received"])
                    err(
                        f"{last - t0:8.1f} s  flows {len(s['flows'])}  sent {sent / 1e6:.1f} MB  "
                        f"received {got / 1e6:.1f} MB  malformed {s['malformed_frames']}"
                    )
        finally:
            s = a.stats()
            a.close()
            console = stdout_console()
            console.print(_flow_table(s))
            console.print(_recv_table(s))


@net_app.command()
def send(
    dst: Annotated[list[str], typer.Argument(help="Destination agents (host:port).")],
    rate: Annotated[
        list[str] | None,
        typer.Option(
            "--rate",
            "-r",
            help="Reserve the flow to each DST at this rate ('50 Mb/s'), in order; without "
            "--rate the flows are unregulated (the agent is open).",
        ),
    ] = None,  # fmt: skip
    size: Annotated[int, typer.Option("--size", min=0, help="Message size, bytes.")] = 65536,
    count: Annotated[int, typer.Option("--count", "-n", min=1, help="Messages per flow.")] = 1000,
    priority: Annotated[int, typer.Option("--priority", min=0, max=255)] = 0,
    listen: Listen = "0.0.0.0:0",
    backend: Backend = "agent",
    packet_size: PacketSize = 4096,
    json_out: JsonOption = False,
) -> None:
    """Send COUNT messages of SIZE bytes on a flow to each DST, with a progress bar and a
    summary table (Mb/s per flow)."""
    import threading

    from rich.progress import Progress

    from qosnet.dataplane import Agent

    rates = [_bps(r, "--rate") for r in rate or []]
    if rates and len(rates) != len(dst):
        raise typer.BadParameter(
            f"give one --rate per DST ({len(dst)}), got {len(rates)}", param_hint="--rate"
        )
    with _errors():
        a = Agent(listen=listen, backend=backend, packet_bytes=packet_size, open=not rates)
        for d, r in zip(dst, rates, strict=False):
            a.reserve(d, r, priority)
        errors: list[str] = []

        def flow(d: str) -> None:
            try:
                a.send_many(d, size, count, priority)
                a.flush(d, priority, timeout=3600)
            except Exception as e:  # noqa: BLE001 - reported in the summary
                errors.append(f"{d}: {e}")

        t0 = time.monotonic()
        threads = [threading.Thread(target=flow, args=(d,), daemon=True) for d in dst]
        for t in threads:
            t.start()
        total = len(dst) * count * size
        with Progress(transient=True, disable=json_out) as bar:
            task = bar.add_task("sending", total=total or 1)
            while any(t.is_alive() for t in threads):
                sent = sum(f["bytes_sent"] for f in a.stats()["flows"])
                bar.update(task, completed=sent)
                time.sleep(0.1)
        elapsed = time.monotonic() - t0
        s = a.stats()
        a.close()
    if json_out:
        typer.echo(json.dumps({"elapsed": elapsed, **s, "errors": errors}))
    else:
        stdout_console().print(_flow_table(s, elapsed))
    for e in errors:
        err(f"error: {e}")
    if errors:
        raise typer.Exit(1)


@net_app.command()
def recv(
    listen: Listen = "0.0.0.0:7401",
    count: Annotated[
        int | None, typer.Option("--count", "-n", min=1, help="Stop after this many messages.")
    ] = None,
    duration: Annotated[
        float | None, typer.Option("--duration", min=0, help="Stop after this many seconds.")
    ] = None,
    echo: Annotated[bool, typer.Option("--echo", help="Send every message back.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Receive messages (counted, not kept) until COUNT messages, DURATION seconds or Ctrl-C,
    then print what arrived from each source."""
    from qosnet.dataplane import Agent

    with _errors():
        a = Agent(listen=listen, open=True, echo=echo, deliver=False)
        err(f"receiving at {a.endpoint}")
        t0 = time.monotonic()
        try:
            while duration is None or time.monotonic() - t0 < duration:
                if count is not None and sum(r["messages"] for r in a.stats()["received"]) >= count:
                    break
                time.sleep(0.05)
        finally:
            elapsed = time.monotonic() - t0
            s = a.stats()
            a.close()
            if json_out:
                typer.echo(json.dumps({"elapsed": elapsed, **s}))
            else:
                stdout_console().print(_recv_table(s, elapsed))


@net_app.command()
def bench(
    where: Annotated[
        str,
        typer.Option(
            "--where", help="loopback, or veth (two namespace hosts on 1 Gb/s links; root)."
        ),
    ] = "loopback",
    quick: Annotated[bool, typer.Option("--quick", help="Fewer repetitions.")] = False,
    json_out: JsonOption = False,
) -> None:
    """Rate control's overhead (document 004 §5.2): ping-pong round trips and streaming
    bandwidth over message sizes, with and without rate control, on the same transport."""
    from rich.table import Table

    from qosnet.dataplane import overhead

    if where not in ("loopback", "veth"):
        raise typer.BadParameter(f"must be loopback or veth, got {where!r}", param_hint="--where")
    with _errors():
        try:
            rows = overhead.run(where, quick=quick, progress=None if json_out else err)
        except RuntimeError as e:
            err(f"error: {e}")
            raise typer.Exit(1) from None
    if json_out:
        typer.echo(json.dumps(rows))
        return
    t = Table(title=f"rate control overhead, {where}")
    for c in (
        "test",
        "size B",
        "with RC",
        "without RC",
        "overhead",
        "noise",
        "dispatcher CPU/Gb/s",
    ):
        t.add_column(c, justify="left" if c == "test" else "right")
    for r in rows:
        cpu = r["dispatch_cpu_per_gbps"]
        t.add_row(
            r["test"], str(r["size"]), f"{r['with']:.3f}", f"{r['without']:.3f}",
            f"{r['overhead']:+.2%}", f"{r['noise']:.1%}", f"{cpu:.3f}" if cpu is not None else "-",
        )  # fmt: skip
    for test in ("ping-pong RTT (us)", "bandwidth (Gb/s)"):
        rs = [r["overhead"] for r in rows if r["test"] == test]
        t.add_row(f"{test}: mean", "", "", "", f"{sum(rs) / len(rs):+.2%}", "", "")
        t.add_row(f"{test}: worst", "", "", "", f"{max(rs):+.2%}", "", "")
    stdout_console().print(t)

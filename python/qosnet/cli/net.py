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
def _errors(*also: type[Exception]) -> Iterator[None]:
    """`user_errors`, and the data plane's bad arguments (a listen address that cannot be
    bound, a bad host file) as messages, not tracebacks; `also`: more exception types the
    caller reports the same way (a benchmark's failed measurement)."""
    reported: tuple[type[Exception], ...] = (ValueError, TimeoutError, *also)
    with user_errors():
        try:
            yield
        except reported as e:
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


AgentSocket = Annotated[
    Path | None,
    typer.Option(
        "--agent-socket",
        envvar="QOSNET_AGENT_SOCKET",
        help="Go through this host's agent daemon (`qosnet agent`) at this Unix socket, as "
        "an application on the host does; without it, run an agent in this process.",
    ),
]


def _parse_mode(text: str) -> int:
    try:
        mode = int(text, 8)
    except ValueError:
        mode = -1
    if not 0 <= mode <= 0o777:
        raise typer.BadParameter(f"must be octal permission bits (e.g. 660), got {text!r}")
    return mode


def agent(
    socket_path: Annotated[
        Path,
        typer.Option(
            "--socket",
            envvar="QOSNET_AGENT_SOCKET",
            help="The Unix socket local applications reach the daemon at.",
        ),
    ] = Path("/run/qosnet/agent.sock"),
    mode: Annotated[
        str,
        typer.Option(
            "--mode", help="Permission bits of the socket (octal): who may send through it."
        ),
    ] = "660",
    trusted_uid: Annotated[
        list[int] | None,
        typer.Option(
            "--trusted-uid",
            help="A user (besides root and the daemon's own) that may reserve and release "
            "through the socket; repeatable.",
        ),
    ] = None,
    listen: Listen = "0.0.0.0:7400",
    backend: Backend = "agent",
    open_: Annotated[
        bool,
        typer.Option(
            "--open", help="Let unreserved flows send (unregulated), take in unadmitted ones."
        ),
    ] = False,
    packet_size: PacketSize = 4096,
    key_file: Annotated[
        Path | None,
        typer.Option(
            "--key-file",
            envvar="QOSNET_KEY_FILE",
            help="The cluster key (mode 600, at least 32 bytes; the same file on every host): "
            "peer agents prove it at every connection, so a process that is not an agent "
            "cannot reach this one. Required unless --open.",
        ),
    ] = None,
    hello_timeout: Annotated[
        float,
        typer.Option(
            "--hello-timeout",
            help="Seconds a peer may take to accept a connection and answer its hello "
            "before the flow's send fails.",
        ),
    ] = 2.0,
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
    token_file: Annotated[
        Path | None,
        typer.Option(
            "--token-file",
            envvar="QOSNET_TOKEN_FILE",
            help="File holding the service's API token (an admin token: it must see every "
            "tenant's reservations). Or set QOSNET_TOKEN; never on the command line, where "
            "`ps` shows it.",
        ),
    ] = None,
    link_rate: Annotated[
        str | None,
        typer.Option(
            "--link-rate",
            help="The host's link rate (e.g. '10 Gb/s'): the agent dispatches no faster in "
            "all, reserved flows by their IDTs and unreserved ones in what is left. Default: "
            "the node's NIC capacity from the service, if it answers at start.",
        ),
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option(
            "--metrics",
            help="Serve Prometheus metrics at http://HOST:PORT/metrics (e.g. 127.0.0.1:9474).",
        ),
    ] = None,
    drain: Annotated[
        float,
        typer.Option(
            "--drain",
            min=0,
            help="On SIGTERM/SIGINT, seconds to keep sending what is queued before dropping it.",
        ),
    ] = 5.0,
    interval: Annotated[
        float, typer.Option("--interval", min=0.1, help="Seconds between status lines.")
    ] = 5.0,
    duration: Annotated[
        float | None, typer.Option("--duration", min=0, help="Stop after this many seconds.")
    ] = None,
) -> None:
    """Run this host's rate-control agent daemon (document 004's NIC firmware) until
    SIGTERM or SIGINT: it owns the host's link, its connections to other agents and its one
    scheduler, and local applications send and receive through it at --socket
    (`Agent.connect`, `qosnet net send --agent-socket`), so none can pass its pacing by.

    With --service, --node and --hosts it follows the service: every admitted flow sourced
    at this node is reserved here (its IDT from the reserved bandwidth), every one destined
    to it admitted here, and a flow released or whose lease expired is removed; flows the
    service did not admit are refused, sent or received, unless --open. If the service
    cannot be reached (at start or later) the installed reservations are kept until their
    leases end and the daemon retries with back-off; it does not exit.

    On SIGTERM or SIGINT it sends what is queued for at most --drain seconds (a second
    signal drops it), prints the final flow table and removes its socket.

    Peer agents authenticate each other with the cluster key (--key-file, HMAC
    challenge-response at every connection's hello): a closed daemon does not start without
    it, and refuses (and counts) any connection that cannot prove it.
    """
    import os

    from qosnet.dataplane import Daemon
    from qosnet.dataplane.control import ServiceLink, read_hosts
    from qosnet.dataplane.metrics import AgentCollector, serve
    from qosnet.dataplane.supervise import Supervisor

    if (service is None) != (node is None) or (service is not None and hosts is None):
        raise typer.BadParameter(
            "--service, --node and --hosts go together", param_hint="--service"
        )
    bits = _parse_mode(mode)
    link_bps = _bps(link_rate, "--link-rate") if link_rate is not None else None

    def log(text: str) -> None:
        err(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} {text}")

    with _errors(OSError):
        token = _token(token_file)
        link = None
        if service is not None and node is not None and hosts is not None:
            table = read_hosts(hosts)
            if link_bps is None:
                link_bps = _nic_rate(service, token, node, log)
        a = Daemon(
            socket_path, listen=listen, backend=backend, packet_bytes=packet_size, open=open_,
            mode=bits, trusted_uids=trusted_uid or [], key_file=key_file,
            hello_timeout=hello_timeout, link_bps=link_bps,
        )  # fmt: skip
        if service is not None and node is not None:
            link = ServiceLink(a, service, node, table, token=token)
        sup = Supervisor(a, link, log, status_every=interval, drain=drain, duration=duration)
        sup.install_signals()
        server = serve(metrics, AgentCollector(a.stats, sup.link_state)) if metrics else None
        s = a.stats()
        rate = (
            f"link {link_bps / 1e6:g} Mb/s, {s['payload_fraction']:.1%} payload"
            if link_bps
            else "link rate unknown (--link-rate): unreserved flows are not held back"
        )
        log(
            f"agent {a.endpoint} ({backend}{', open' if open_ else ''}) serving {a.socket} "
            f"(mode {bits:o}); {rate}"
            + (f"; metrics at http://{metrics}/metrics" if metrics else "")
            + f"; pid {os.getpid()}"
        )
        try:
            sup.run()
        finally:
            s = a.stats()
            a.close()
            if server is not None:
                server[0].shutdown()
            console = stdout_console()
            console.print(_flow_table(s))
            console.print(_recv_table(s))
            if sup.signal:
                log(f"stopped by {sup.signal}")


def _token(path: Path | None) -> str | None:
    """The service token: from `path` (its first line), else QOSNET_TOKEN, else None."""
    import os

    if path is None:
        return os.environ.get("QOSNET_TOKEN") or None
    try:
        text = path.read_text().strip()
    except OSError as e:
        raise ValueError(f"--token-file: cannot read {path}: {e.strerror}") from None
    if not text:
        raise ValueError(f"--token-file: {path} is empty")
    return text.splitlines()[0].strip()


def _nic_rate(service: str, token: str | None, node: int, log: Any) -> float | None:
    """Node `node`'s NIC capacity from the service's cluster (bits/s), or None (logged) if
    the service does not answer now."""
    from qosnet.client import Client

    try:
        u = Client(service, token=token, retries=0).utilisation()
    except Exception as e:  # unreachable at start: the daemon starts anyway
        log(f"link rate: the service did not answer ({type(e).__name__}); give --link-rate")
        return None
    nic = next((n for n in u.nics if n.node == node), None)
    return nic.capacity * 8 if nic is not None else u.link_bandwidth * 8


def _mine(stats: dict[str, Any], endpoint: str) -> list[dict[str, Any]]:
    """The flows of this handle's port (a daemon's counters list every application's)."""
    port = int(endpoint.rsplit("/", 1)[1]) if "/" in endpoint else 0
    return [f for f in stats["flows"] if f.get("port", 0) == port]


def _handle(socket_path: Path | None, **options: Any) -> Any:
    """This command's agent: the host's daemon if a socket is given, else one in-process."""
    from qosnet.dataplane import Agent

    if socket_path is not None:
        return Agent.connect(socket_path)
    return Agent(**options)


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
    agent_socket: AgentSocket = None,
    json_out: JsonOption = False,
) -> None:
    """Send COUNT messages of SIZE bytes on a flow to each DST, with a progress bar and a
    summary table (Mb/s per flow). With --agent-socket the messages go through the host's
    daemon (a --rate is then installed through it, which only a trusted user may do)."""
    import threading

    from rich.progress import Progress

    rates = [_bps(r, "--rate") for r in rate or []]
    if rates and len(rates) != len(dst):
        raise typer.BadParameter(
            f"give one --rate per DST ({len(dst)}), got {len(rates)}", param_hint="--rate"
        )
    with _errors():
        a = _handle(
            agent_socket, listen=listen, backend=backend, packet_bytes=packet_size,
            open=not rates,
        )  # fmt: skip
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
                sent = sum(f["bytes_sent"] for f in _mine(a.stats(), a.endpoint))
                bar.update(task, completed=sent)
                time.sleep(0.1)
        elapsed = time.monotonic() - t0
        s = a.stats()
        s["flows"] = _mine(s, a.endpoint)
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
    agent_socket: AgentSocket = None,
    json_out: JsonOption = False,
) -> None:
    """Receive messages (counted, not kept) until COUNT messages, DURATION seconds or Ctrl-C,
    then print what arrived from each source. With --agent-socket they arrive at a port of
    the host's daemon (its endpoint is printed first)."""
    from qosnet.dataplane import Agent

    with _errors():
        if agent_socket is not None:
            a = Agent.connect(agent_socket)
        else:
            a = Agent(listen=listen, open=True, echo=echo, deliver=False)
        err(f"receiving at {a.endpoint}")
        got: dict[tuple[str, int], list[int]] = {}
        t0 = time.monotonic()
        try:
            while duration is None or time.monotonic() - t0 < duration:
                if agent_socket is None:
                    n = sum(r["messages"] for r in a.stats()["received"])
                    time.sleep(0.05)
                else:
                    # The daemon's counters are the host's: this port counts its own.
                    try:
                        src, prio, data = a.recv(timeout=0.05)
                    except TimeoutError:
                        continue
                    if echo:
                        a.send(src, data, prio)
                    c = got.setdefault((src, prio), [0, 0])
                    c[0] += len(data)
                    c[1] += 1
                    n = sum(m for _, m in got.values())
                if count is not None and n >= count:
                    break
        finally:
            elapsed = time.monotonic() - t0
            s = a.stats()
            if agent_socket is not None:
                s["endpoint"] = a.endpoint
                s["received"] = [
                    {"src": k[0], "priority": k[1], "bytes": v[0], "messages": v[1]}
                    for k, v in sorted(got.items())
                ]
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
    reps: Annotated[
        int | None,
        typer.Option("--reps", min=1, help="Repetitions of each configuration (default 15)."),
    ] = None,
    daemon: Annotated[
        bool,
        typer.Option(
            "--daemon",
            help="The daemon's own overhead instead (loopback): no rate control, library "
            "mode and the daemon, with CPU per round trip and per Gb.",
        ),
    ] = False,
    interleaved: Annotated[
        bool,
        typer.Option(
            "--interleaved",
            help="Rate control's overhead from many short paired blocks, both senders alive "
            "at once (--reps blocks, default 40): mean, median and a 95% interval of the "
            "paired difference, in time and in the sender's CPU.",
        ),
    ] = False,
    json_out: JsonOption = False,
) -> None:
    """Rate control's overhead (document 004 §5.2): ping-pong round trips and streaming
    bandwidth over message sizes, with and without rate control, on the same transport;
    the two alternate, repeated, and each row gives medians and the quartiles of the paired
    overheads, with a verdict against the 1% target that says "unresolved" when the spread
    does not allow one."""
    from rich.table import Table

    from qosnet.dataplane import overhead

    if where not in ("loopback", "veth"):
        raise typer.BadParameter(f"must be loopback or veth, got {where!r}", param_hint="--where")
    if daemon and interleaved:
        raise typer.BadParameter("choose --daemon or --interleaved", param_hint="--interleaved")
    if daemon:
        if where != "loopback":
            raise typer.BadParameter("--daemon runs on the loopback only", param_hint="--where")
        _bench_daemon(quick, reps, json_out)
        return
    if interleaved:
        _bench_interleaved(where, quick, reps, json_out)
        return
    with _errors(RuntimeError):
        rows = overhead.run(where, quick=quick, progress=None if json_out else err, reps=reps)
    summary = overhead.verdicts(rows)
    if json_out:
        typer.echo(json.dumps({"rows": rows, "verdicts": summary}))
        return
    t = Table(title=f"rate control overhead, {where} (medians of {rows[0]['reps']} runs)")
    for c in (
        "test", "size B", "with RC", "without RC", "overhead", "quartiles", "noise",
        "agent CPU s/Gb", "process CPU s/Gb with/without",
    ):  # fmt: skip
        t.add_column(c, justify="left" if c == "test" else "right")
    for r in rows:
        cpu = r["dispatch_cpu_per_gbps"]
        proc = (
            f"{r['process_cpu_per_gbps_with']:.3f}/{r['process_cpu_per_gbps_without']:.3f}"
            if cpu is not None
            else "-"
        )
        t.add_row(
            r["test"], str(r["size"]), f"{r['with']:.3f}", f"{r['without']:.3f}",
            f"{r['overhead']:+.2%}", f"{r['overhead_p25']:+.2%}..{r['overhead_p75']:+.2%}",
            f"{r['noise']:.1%}", f"{cpu:.3f}" if cpu is not None else "-", proc,
        )  # fmt: skip
    for v in summary:
        t.add_row(
            f"{v['test']}: mean", "", "", "", f"{v['mean']:+.2%}",
            f"{v['mean_p25']:+.2%}..{v['mean_p75']:+.2%}", "", "", v["verdict"],
        )  # fmt: skip
        t.add_row(f"{v['test']}: worst", str(v["worst_size"]), "", "", f"{v['worst']:+.2%}",
                  "", "", "", "")  # fmt: skip
    stdout_console().print(t)


def _bench_interleaved(where: str, quick: bool, reps: int | None, json_out: bool) -> None:
    """`qosnet net bench --interleaved`: paired blocks, intervals of the mean."""
    from rich.table import Table

    from qosnet.dataplane import overhead

    blocks = reps or (6 if quick else 40)
    with _errors(RuntimeError):
        rows = overhead.interleaved(where, blocks=blocks, progress=None if json_out else err)
    summary = overhead.interleaved_verdicts(rows)
    if json_out:
        typer.echo(json.dumps({"rows": rows, "verdicts": summary}))
        return
    pct = "{:+.2%}".format
    t = Table(title=f"rate control overhead, {where}, {blocks} interleaved paired blocks")
    for c in ("test", "size B", "with", "without", "mean", "median", "95% interval",
              "CPU with/without", "CPU mean (95%)"):  # fmt: skip
        t.add_column(c, justify="left" if c == "test" else "right")
    for r in rows:
        t.add_row(
            r["test"], str(r["size"]), f"{r['with']:.3f}", f"{r['without']:.3f}",
            pct(r["mean"]), pct(r["median"]), f"{pct(r['ci95'][0])}..{pct(r['ci95'][1])}",
            f"{r['cpu_with']:.3g}/{r['cpu_without']:.3g}",
            f"{pct(r['cpu_mean'])} ({pct(r['cpu_ci95'][0])}..{pct(r['cpu_ci95'][1])})",
        )  # fmt: skip
    for v in summary:
        t.add_row(
            f"{v['test']}: mean", "", "", "", pct(v["mean"]), pct(v["median"]),
            f"{pct(v['ci95'][0])}..{pct(v['ci95'][1])}", v["verdict"],
            f"{pct(v['cpu_mean'])} ({v['cpu_verdict']})",
        )  # fmt: skip
    stdout_console().print(t)


def _bench_daemon(quick: bool, reps: int | None, json_out: bool) -> None:
    """`qosnet net bench --daemon`: the daemon against library mode and no rate control."""
    from rich.table import Table

    from qosnet.dataplane import daemon_overhead as dov

    with _errors():
        rows = dov.run(quick=quick, reps=reps, progress=None if json_out else err)
    summary = dov.verdicts(rows)
    if json_out:
        typer.echo(json.dumps({"rows": rows, "verdicts": summary}))
        return
    t = Table(title=f"the daemon's overhead, loopback (medians of {rows[0]['reps']} runs)")
    for c in ("test", "size B", "none", "library", "daemon", "daemon vs library",
              "CPU none/library/daemon"):  # fmt: skip
        t.add_column(c, justify="left" if c == "test" else "right")
    for r in rows:
        d = r["daemon vs library"]
        t.add_row(
            r["test"], str(r["size"]), *(f"{r[c]:.3f}" for c in dov.CONFIGS),
            f"{d['median']:+.1%} ({d['p25']:+.1%}..{d['p75']:+.1%})",
            "/".join(f"{r['cpu_' + c]:.3g}" for c in dov.CONFIGS),
        )  # fmt: skip
    stdout_console().print(t)
    v = Table(title="means over sizes (CPU: us per round trip, s per Gb)")
    for c in ("test", "comparison", "mean", "quartiles", "worst", "CPU mean", "verdict"):
        v.add_column(c)
    for x in summary:
        v.add_row(
            x["test"], x["comparison"], f"{x['mean']:+.2%}",
            f"{x['mean_p25']:+.2%}..{x['mean_p75']:+.2%}",
            f"{x['worst']:+.2%} at {x['worst_size']} B",
            f"{x['cpu_mean']:+.1%} ({x['cpu_mean_p25']:+.1%}..{x['cpu_mean_p75']:+.1%})",
            x["verdict"],
        )  # fmt: skip
    stdout_console().print(v)

"""The data plane (`qosnet.dataplane`): the agent through the bindings, the control-plane
link, the CLI, and document 004's sharing on a real bottleneck (network namespaces, veth, a
bridge and tc; on the loopback where namespaces are not permitted, saying so).

Shares are asserted with the tolerance the measurement supports (the agent's pacing sets
them; the window's edges are read within a millisecond); speeds and overheads are printed by
`qosnet net bench` and `qosnet reproduce seed004-real`, never asserted here.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.dataplane import Agent, Daemon, FlowNotAdmitted, NetError, contention, parse_bandwidth
from qosnet.dataplane import experiments as sharing
from qosnet.dataplane.cluster import Cluster, HostProcess, available
from qosnet.dataplane.control import ServiceLink, read_hosts
from qosnet.dataplane.supervise import Backoff, Supervisor

NAMESPACES, WHY_NOT = available()


def cluster_key(tmp_path: Path) -> Path:
    """A cluster key file as an operator makes one (mode 600, 32 random bytes in base64)."""
    key = tmp_path / "cluster.key"
    key.write_text(base64.b64encode(os.urandom(32)).decode() + "\n")
    key.chmod(0o600)
    return key


def wait_for(cond: Any, timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


# --- the agent through the bindings -------------------------------------------------------


def test_messages_arrive_whole_through_the_bindings() -> None:
    with Agent(open=True) as rx, Agent(open=True) as tx:
        for n in (0, 1, 4096, 4097, 300_000):
            tx.send(rx.endpoint, bytes(range(256)) * (n // 256) + b"x" * (n % 256), priority=2)
        for n in (0, 1, 4096, 4097, 300_000):
            src, prio, data = rx.recv(timeout=20)
            assert (src, prio, len(data)) == (tx.endpoint, 2, n)
        with pytest.raises(TimeoutError):
            rx.recv(timeout=0.05)


def test_a_closed_agent_refuses_what_is_not_reserved() -> None:
    with Agent() as rx, Agent() as tx:
        with pytest.raises(FlowNotAdmitted, match="not admitted"):
            tx.send(rx.endpoint, b"hi")
        tx.reserve(rx.endpoint, parse_bandwidth("50 Mb/s"))
        # The closed receiver refuses it too until it is admitted there (004 §3.4 (c)).
        with pytest.raises(FlowNotAdmitted, match="refused by the receiver: .* is not admitted"):
            tx.send(rx.endpoint, b"hi")
        assert rx.stats()["refused_flows"] == 1 and rx.stats()["received"] == []
        rx.admit(tx.endpoint)
        assert rx.stats()["admitted"] == [(tx.endpoint, 0, 0)]
        tx.send(rx.endpoint, b"hi")
        assert rx.recv(timeout=20)[2] == b"hi"
        flow = tx.stats()["flows"][0]
        # 4 KB at 50 Mb/s: 655.36 µs (document 004 §3.4, idt = T·Bpeak/Breq).
        assert flow["idt_ns"] == 655_360 and flow["reserved_bps"] == 50e6
        assert tx.stats()["refused_sends"] == 1


def test_bad_arguments_name_the_field() -> None:
    with pytest.raises(ValueError, match="backend: must be one of agent, kernel"):
        Agent(backend="nic")
    with pytest.raises(ValueError, match="packet_bytes"):
        Agent(packet_bytes=0)
    with pytest.raises(ValueError, match="peer_timeout"):
        Agent(peer_timeout=-1)
    with pytest.raises(ValueError, match="hello_timeout: must be > 0 s, got 0"):
        Agent(hello_timeout=0)
    with pytest.raises(ValueError, match="hello_timeout: must be a finite number"):
        Agent(hello_timeout=float("nan"))
    with pytest.raises(ValueError, match="key_file: cannot read"):
        Agent(key_file="/nonexistent/cluster.key")
    with Agent() as a, pytest.raises(ValueError, match="reservation rate"):
        a.reserve("127.0.0.1:9", -5.0)
    with pytest.raises(ValueError):
        parse_bandwidth("fast")


def test_malformed_frames_from_a_rogue_client_are_refused_and_counted() -> None:
    with Agent(open=True) as rx, Agent(open=True) as tx:
        host, port = rx.endpoint.rsplit(":", 1)
        for junk in (b"\x00" * 64, b"QN\x07" + b"\x00" * 13, b"hello, agent\r\n" * 4):
            with socket.create_connection((host, int(port))) as s:
                _challenge(s)
                s.sendall(junk)
                _read_to_close(s)
        wait_for(lambda: rx.stats()["malformed_frames"] == 3, what="3 refusals")
        tx.send(rx.endpoint, b"fine")
        assert rx.recv(timeout=20)[2] == b"fine"


def _challenge(s: socket.socket) -> bytes:
    """The agent's first frame on a connection: its challenge (a 32-byte nonce)."""
    got = b""
    while len(got) < 48:
        chunk = s.recv(48 - len(got))
        assert chunk, got
        got += chunk
    assert got[:4] == b"QN\x03\x05", got
    return got[16:]


def _read_to_close(s: socket.socket) -> bytes:
    answer = b""
    while chunk := s.recv(4096):
        answer += chunk
    return answer


def _hello(name: bytes, proof: bytes = bytes(64)) -> bytes:
    """A hello to port 0: a nonce and a proof (none: zeros), then the source's name."""
    payload = proof + name
    return b"QN\x03\x01\x00\x00\x00\x00" + len(payload).to_bytes(4, "little") + bytes(4) + payload


def _data(body: bytes) -> bytes:
    return b"QN\x03\x02\x01\x00\x00\x00" + len(body).to_bytes(4, "little") + bytes(4) + body


def test_agents_with_the_cluster_key_reach_each_other_and_nothing_else_does(
    tmp_path: Path,
) -> None:
    """Peer agents prove the cluster key at every hello: agents holding it exchange flows; a
    process on the host that connects to the agent directly (no key) is refused and counted,
    as is an agent without the key (closed or open alike)."""
    key = cluster_key(tmp_path)
    with Agent(open=True, key_file=key) as rx, Agent(open=True, key_file=key) as tx:
        tx.send(rx.endpoint, b"agent")
        assert rx.recv(timeout=20)[2] == b"agent"
        host, port = rx.endpoint.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            _challenge(s)
            s.sendall(_hello(b"127.0.0.1:1") + _data(b"rogue"))
            answer = _read_to_close(s)
        assert answer[:4] == b"QN\x03\x04" and b"does not prove the cluster key" in answer
        with Agent(open=True) as keyless, pytest.raises(FlowNotAdmitted, match="cluster key"):
            keyless.send(rx.endpoint, b"x")
        assert rx.stats()["unauthenticated_hellos"] == 2
        assert [r["messages"] for r in rx.stats()["received"]] == [1]
    loose = tmp_path / "loose.key"
    loose.write_text("k" * 40)
    loose.chmod(0o644)
    with pytest.raises(ValueError, match="key_file: .* must be readable by its owner only"):
        Agent(key_file=loose)


def test_a_closed_daemon_needs_the_cluster_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="key_file: a closed daemon needs the cluster key"):
        Daemon(tmp_path / "agent.sock", listen="127.0.0.1:0")
    r = CliRunner().invoke(
        app, ["agent", "--socket", str(tmp_path / "a.sock"), "--listen", "127.0.0.1:0",
              "--duration", "0"],
    )  # fmt: skip
    assert r.exit_code == 1 and "key_file: a closed daemon needs" in r.output, r.output


def test_a_silent_peer_fails_the_first_send_within_the_hello_timeout() -> None:
    """A peer whose kernel accepts the connection and which never answers (a hung agent):
    the flow's first send fails after `hello_timeout`, not `peer_timeout`, and the agent's
    other flows go on meanwhile."""
    silent = socket.create_server(("127.0.0.1", 0))
    dst = f"127.0.0.1:{silent.getsockname()[1]}"
    try:
        with Agent(open=True, hello_timeout=0.3, peer_timeout=30) as tx, Agent(open=True) as rx:
            t0 = time.monotonic()
            with pytest.raises(NetError, match=r"within 300ms \(hello_timeout\)"):
                tx.send(dst, b"x")
            assert time.monotonic() - t0 < 5  # the hello timeout, not the peer timeout
            tx.send(rx.endpoint, b"other")
            assert rx.recv(timeout=20)[2] == b"other"
    finally:
        silent.close()


def test_a_rogue_sender_that_skips_its_agent_is_refused_and_counted() -> None:
    """A sender that connects to a closed agent directly (no agent of its own, so nothing
    admitted it) with a well-formed hello and data: refused with the reason, counted, and
    nothing delivered; an admitted flow from a real agent goes on beside it."""
    with Agent() as rx, Agent() as tx:
        host, port = rx.endpoint.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            _challenge(s)
            s.sendall(_hello(b"127.0.0.1:1") + _data(b"rogue"))
            answer = _read_to_close(s)
        assert answer[:4] == b"QN\x03\x04", answer  # a refusal
        assert b"from 127.0.0.1:1 to port 0 (priority 0) is not admitted" in answer[16:]
        stats = rx.stats()
        assert (stats["refused_flows"], stats["malformed_frames"]) == (1, 0)
        assert stats["received"] == [] and "127.0.0.1:1" in stats["last_refused"]
        tx.reserve(rx.endpoint, parse_bandwidth("10 Mb/s"))
        rx.admit(tx.endpoint)
        tx.send(rx.endpoint, b"admitted")
        assert rx.recv(timeout=20) == (tx.endpoint, 0, b"admitted")
        with pytest.raises(TimeoutError):
            rx.recv(timeout=0.05)


def test_a_peer_that_vanishes_fails_its_flow_only() -> None:
    with Agent(open=True) as tx, Agent(open=True) as stays:
        gone = Agent(open=True)
        tx.send(gone.endpoint, b"x")
        gone.recv(timeout=20)
        gone.close()

        def failed() -> bool:
            try:
                tx.send(gone.endpoint, b"y" * 65536)
            except NetError:
                return True
            return False

        wait_for(failed, what="the send to a vanished peer to fail")
        tx.send(stays.endpoint, b"ok")
        assert stays.recv(timeout=20)[2] == b"ok"


# --- the control-plane link ---------------------------------------------------------------


def test_the_service_admits_the_link_installs_release_removes_and_leases_expire(
    make_service: Any, sqlite_url: str, tmp_path: Path
) -> None:
    service = make_service(sqlite_url)
    job = service.alice.submit("ray_tracing", {"interleaving": 0}, t2=1.0)
    src = job.flows[0].src
    hosts_file = tmp_path / "hosts"
    hosts_file.write_text("".join(f"{n} 127.0.0.1:{20000 + n}  # node {n}\n" for n in job.nodes))
    hosts = read_hosts(hosts_file)
    with Agent() as agent:
        link = ServiceLink(agent, service.root, src, hosts, interval=0.2)
        changed = link.sync()
        mine = [f for f in job.flows if f.src == src]
        assert sorted(changed["installed"]) == sorted({hosts[f.dst] for f in mine})
        reserved = {f["dst"]: f["reserved_bps"] for f in agent.stats()["flows"]}
        for f in mine:
            assert reserved[hosts[f.dst]] == pytest.approx(f.bandwidth * 8)
        # A flow the service did not admit is refused by the closed agent.
        with pytest.raises(FlowNotAdmitted):
            agent.send("127.0.0.1:1", b"x")
        service.alice.release(job.id)
        assert sorted(link.sync()["removed"]) == sorted(changed["installed"])
        assert all(f["reserved_bps"] is None for f in agent.stats()["flows"])
        # Installed again, then the link goes silent: the agent removes them when the
        # service's lease of the job (1 s, by the service's clock) runs out.
        job2 = service.alice.submit("ray_tracing", {"interleaving": 0}, t2=1.0, lease_seconds=1.0)
        link.sync()
        assert any(f["reserved_bps"] for f in agent.stats()["flows"])
        wait_for(lambda: agent.stats()["expired_leases"] >= 1, what="the lease to expire")
        wait_for(lambda: all(f["reserved_bps"] is None for f in agent.stats()["flows"]))
        service.alice.release(job2.id)


@pytest.mark.parametrize("skew", [-1e8, 1e8], ids=["service_behind", "service_ahead"])
def test_the_agent_holds_a_reservation_as_long_as_the_services_lease_whatever_the_clocks(
    make_service: Any, sqlite_url: str, skew: float
) -> None:
    """One lease clock (`dataplane.control`): the agent is told the time the service's
    lease has left by the service's own clock, so a service whose clock is years off this
    host's still has its lease held for as long as it granted: not dropped after a few sync
    intervals (a service behind) nor kept for years (ahead), as converting the lease's end
    with this host's clock did."""
    from qosnet.service.testing import FakeClock

    service = make_service(sqlite_url, clock=FakeClock(time.time() + skew))
    flow = service.alice.reserve_flow(0, 1, 1e6, lease_seconds=2.0)
    [listed] = service.root.reservations(node=0)
    assert listed.lease_remaining == pytest.approx(2.0, abs=1e-3)  # its clock stands still
    with Agent() as tx, Agent(open=True) as rx:
        link = ServiceLink(tx, service.root, 0, {0: tx.endpoint, 1: rx.endpoint}, interval=0.2)
        t0 = time.monotonic()
        assert link.sync()["installed"] == [rx.endpoint]
        time.sleep(1.0)  # more than three sync intervals
        assert tx.stats()["flows"][0]["reserved_bps"] == pytest.approx(8e6)
        wait_for(lambda: tx.stats()["expired_leases"] == 1, what="the service's lease to end")
        assert 2.0 <= time.monotonic() - t0 < 15.0
        assert tx.stats()["flows"][0]["reserved_bps"] is None
        # The service's clock passes the end: it expires the flow, the next sync forgets it.
        service.clock.advance(2.0)
        assert link.sync()["removed"] == [rx.endpoint]
        assert service.alice.flow(flow.id).state == "expired"


def test_the_service_stopped_mid_transfer_leaves_flows_running_until_their_leases_end(
    worked_example: tuple[Path, Path], sqlite_url: str
) -> None:
    """`qosnet serve` stops while a flow it admitted is sending: the agent keeps the
    reservation until the service's lease of it ends (not a few sync intervals), the
    supervisor logs the failure and backs off instead of exiting, then the lease ends."""
    from qosnet.service.testing import FakeClock, start_service

    service = start_service(
        sqlite_url, cluster_file=worked_example[0], profiles_file=worked_example[1],
        clock=FakeClock(time.time()),
    )  # fmt: skip
    stopped = False
    try:
        # 6 s: stopping the service and two failed syncs take 1-3 s on a loaded machine (the
        # suite runs in parallel), and the flow must still be reserved a second after that.
        flow = service.alice.reserve_flow(0, 1, 1e6, lease_seconds=6.0)
        with Agent() as tx, Agent(open=True) as rx:
            link = ServiceLink(tx, service.root, 0, {0: tx.endpoint, 1: rx.endpoint}, interval=0.2)
            logged: list[str] = []
            sup = Supervisor(tx, link, logged.append)
            assert sup.sync() == pytest.approx(0.2)
            assert logged == [f"installed: {rx.endpoint}"]
            tx.send(rx.endpoint, b"a" * 10_000)
            service.stop()
            stopped = True
            t_stop = time.monotonic()
            assert sup.sync() == 1.0 and sup.sync() == 2.0, logged
            assert "service unreachable" in logged[-1] and "keeping 1 installed" in logged[-1]
            assert not sup.service_up and sup.failures == 2
            # Three sync intervals (the old agent lease) pass: the flow goes on.
            time.sleep(1.0)
            tx.send(rx.endpoint, b"b" * 10_000)
            tx.flush(rx.endpoint)
            assert tx.stats()["flows"][0]["reserved_bps"] == pytest.approx(8e6)
            wait_for(lambda: tx.stats()["expired_leases"] == 1, what="the lease to end")
            assert time.monotonic() - t_stop >= 2.0, "dropped long before the service's lease"
            assert tx.stats()["flows"][0]["reserved_bps"] is None
            assert flow.lease_seconds == 6.0
    finally:
        if not stopped:
            service.stop()


def test_the_supervisor_backs_off_and_drains_on_a_signal() -> None:
    b = Backoff(first=1.0, most=4.0)
    assert [b.delay() for _ in range(4)] == [1.0, 2.0, 4.0, 4.0]
    b.reset()
    assert b.delay() == 1.0
    with Agent(open=True, link_bps=1e6) as tx, Agent(open=True) as rx:
        logged: list[str] = []
        sup = Supervisor(tx, None, logged.append, drain=20.0)
        tx.send(rx.endpoint, b"x" * 200_000)  # 1.6 s at 1 Mb/s: still queued when stopped
        sup.signal = "SIGTERM"
        sup.stop.set()
        t0 = time.monotonic()
        threading.Timer(0.3, sup.drop.set).start()  # a second signal: drop at once
        sup.run()
        assert time.monotonic() - t0 < 5.0
        assert "SIGTERM: draining" in logged[0] and "dropping" in logged[-1], logged


def test_a_bad_host_file_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "hosts"
    p.write_text("0 10.0.0.1:7400\nnode-one 10.0.0.2:7400\n")
    with pytest.raises(ValueError, match=r"hosts:2: expected `NODE HOST:PORT`"):
        read_hosts(p)


# --- the CLI ------------------------------------------------------------------------------


def test_net_send_reports_each_flow(tmp_path: Path) -> None:
    with Agent(open=True) as rx:
        r = CliRunner().invoke(
            app,
            ["net", "send", rx.endpoint, "--rate", "200 Mb/s", "-n", "20", "--size", "10000",
             "--listen", "127.0.0.1:0", "--json"],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
        assert out["flows"][0]["bytes_sent"] == 200_000 and out["flows"][0]["reserved_bps"] == 2e8
        wait_for(lambda: sum(x["bytes"] for x in rx.stats()["received"]) == 200_000)


def test_net_send_checks_its_options() -> None:
    r = CliRunner().invoke(app, ["net", "send", "a:1", "b:2", "--rate", "1 Mb/s"])
    assert r.exit_code == 2 and "one --rate per DST" in r.output
    r = CliRunner().invoke(app, ["net", "send", "a:1", "--rate", "quick"])
    assert r.exit_code == 2


def test_the_agent_daemon_survives_its_service_serves_metrics_and_stops_on_sigterm(
    tmp_path: Path,
) -> None:
    """`qosnet agent` as an operator runs it: the service unreachable from the start is
    logged and retried, not a traceback and not an exit; the token comes from a file; the
    metrics answer; SIGTERM prints the final table, removes the socket, exits 0."""
    import signal
    import subprocess
    import urllib.request

    sock = tmp_path / "agent.sock"
    (tmp_path / "hosts").write_text("0 127.0.0.1:7400\n")
    (tmp_path / "token").write_text("not-a-real-token\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        metrics_port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "qosnet", "agent", "--socket", str(sock),
         "--listen", "127.0.0.1:0", "--open", "--service", "http://127.0.0.1:9",
         "--node", "0", "--hosts", str(tmp_path / "hosts"),
         "--token-file", str(tmp_path / "token"), "--link-rate", "100 Mb/s",
         "--metrics", f"127.0.0.1:{metrics_port}", "--interval", "0.2"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        wait_for(sock.exists, what="the daemon's socket")
        url = f"http://127.0.0.1:{metrics_port}/metrics"

        def scraped() -> str:
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    return str(r.read().decode())
            except OSError:
                return ""

        wait_for(lambda: "qosnet_agent_service_sync_failures_total 2.0" in scraped(),
                 what="two failed syncs in the metrics")  # fmt: skip
        text = scraped()
        assert "qosnet_agent_service_up 0.0" in text
        assert "qosnet_agent_link_bps 1e+08" in text and "qosnet_agent_flows 0.0" in text
        assert proc.poll() is None, "the daemon exited when the service was unreachable"
        proc.send_signal(signal.SIGTERM)
        out, errs = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, errs
    assert "Traceback" not in errs and "service unreachable (ConnectError" in errs, errs
    assert "retrying in 1 s" in errs and "stopped by SIGTERM" in errs, errs
    assert "received at 127.0.0.1:" in out and not sock.exists()
    assert "not-a-real-token" not in " ".join(proc.args)


def test_the_agent_takes_no_token_on_its_command_line(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["agent", "--token", "secret"])
    assert r.exit_code == 2 and "No such option: --token" in r.output
    (tmp_path / "empty").write_text("")
    r = CliRunner().invoke(
        app, ["agent", "--socket", str(tmp_path / "s"), "--token-file", str(tmp_path / "empty")]
    )
    assert r.exit_code == 1 and "is empty" in r.output


def test_agent_command_runs_the_daemon_and_prints_its_tables(tmp_path: Path) -> None:
    sock = tmp_path / "agent.sock"
    r = CliRunner().invoke(
        app,
        ["agent", "--socket", str(sock), "--listen", "127.0.0.1:0", "--duration", "0.3",
         "--interval", "0.1", "--key-file", str(cluster_key(tmp_path)),
         "--hello-timeout", "0.5"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "received at 127.0.0.1:" in r.output
    assert "mode 660" in r.output
    assert not sock.exists()
    r = CliRunner().invoke(app, ["agent", "--socket", str(sock), "--mode", "999"])
    assert r.exit_code == 2
    assert "octal permission bits" in r.output


# --- the host's daemon: every application's sends through one trusted agent -----------------


def _window_bytes(rx: Agent, srcs: list[str], warm: float, window: float) -> list[int]:
    def now() -> list[int]:
        got = {r["src"]: r["bytes"] for r in rx.stats()["received"]}
        return [got.get(s, 0) for s in srcs]

    time.sleep(warm)
    b0 = now()
    time.sleep(window)
    return [b - a for a, b in zip(b0, now(), strict=True)]


def test_two_applications_share_the_daemons_schedule_by_inverse_idt(tmp_path: Path) -> None:
    """Two processes on one host, each with a reserved flow (20 and 40 Mb/s) to the same
    destination: the daemon's one scheduler paces them against each other, 1:2, each at its
    reservation (document 004's NIC, two GM ports)."""
    sock = tmp_path / "agent.sock"
    key = cluster_key(tmp_path)
    with Daemon(sock, listen="127.0.0.1:0", key_file=key) as d, Agent(key_file=key) as rx:
        d.reserve(rx.endpoint, parse_bandwidth("20 Mb/s"), port=1)
        d.reserve(rx.endpoint, parse_bandwidth("40 Mb/s"), port=2)
        # Admitted at the receiver as the daemon's ports 1 and 2 (GM's sub-ports).
        rx.admit(f"{d.endpoint}/1")
        rx.admit(f"{d.endpoint}/2")
        apps = [HostProcess.local({"socket": str(sock), "port": p}) for p in (1, 2)]
        try:
            assert [a.endpoint for a in apps] == [f"{d.endpoint}/1", f"{d.endpoint}/2"]
            for a in apps:
                a.call("stream", dst=rx.endpoint, size=65536)
            got = _window_bytes(rx, [a.endpoint for a in apps], 0.5, 2.0)
            assert got[1] / sum(got) == pytest.approx(2 / 3, rel=0.03), got
            for b, mbps in zip(got, (20, 40), strict=True):
                assert b * 8 / 2.0 / 1e6 == pytest.approx(mbps, rel=0.05), got
            # An application cannot send past the daemon: it has no socket of its own, and
            # a flow the daemon does not hold a reservation for is refused (closed daemon).
            with Agent.connect(sock) as other, pytest.raises(FlowNotAdmitted):
                other.send(rx.endpoint, b"unadmitted")
        finally:
            for a in apps:
                a.close()


def test_an_application_killed_mid_send_does_not_wedge_the_daemon(tmp_path: Path) -> None:
    sock = tmp_path / "agent.sock"
    with Daemon(sock, listen="127.0.0.1:0", open=True) as d, Agent(open=True) as rx:
        # A slow reservation: the victim's sends queue in the daemon and wait.
        d.reserve(rx.endpoint, parse_bandwidth("8 Mb/s"), port=1)
        victim = HostProcess.local({"socket": str(sock), "port": 1})
        victim.call("stream", dst=rx.endpoint, size=1 << 20)
        wait_for(lambda: rx.stats()["received"], what="the victim's transfer to start")
        victim.kill()
        victim.close()
        wait_for(lambda: 1 not in d.stats()["daemon"]["ports"], what="its port to close")
        flow = next(f for f in d.stats()["flows"] if f["port"] == 1)
        assert flow["queued_bytes"] == 0
        # The daemon goes on: the port can be opened again, and other applications send.
        with Agent.connect(sock, 1) as again, Agent.connect(sock) as other:
            again.send(rx.endpoint, b"again")
            other.send(rx.endpoint, b"other")
            seen: set[bytes] = set()
            while seen != {b"again", b"other"}:
                data = rx.recv(timeout=20)[2]
                if len(data) < 10:
                    seen.add(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_only_trusted_users_may_reserve_through_the_daemon() -> None:
    import subprocess
    import tempfile

    base = Path(tempfile.mkdtemp())
    base.chmod(0o755)
    sock = base / "agent.sock"
    try:
        with Daemon(sock, listen="127.0.0.1:0", mode=0o666, key_file=cluster_key(base)) as d:
            code = (
                # Import as root (the files may not be readable to nobody), then drop.
                "import os\n"
                "from qosnet.dataplane import Agent\n"
                "os.setgid(65534); os.setuid(65534)\n"
                f"a = Agent.connect({str(sock)!r})\n"
                "try:\n"
                "    a.reserve('127.0.0.1:1', 1e6)\n"
                "except Exception as e:\n"
                "    print(e)\n"
            )
            r = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
            )
            assert "may not reserve or release" in r.stdout, r.stdout + r.stderr
            assert d.stats()["daemon"]["denied_requests"] == 1
            assert not d.stats()["flows"]
    finally:
        sock.unlink(missing_ok=True)
        (base / "cluster.key").unlink(missing_ok=True)
        base.rmdir()


def test_net_send_and_recv_go_through_the_daemon(tmp_path: Path) -> None:
    sock = tmp_path / "agent.sock"
    with Daemon(sock, listen="127.0.0.1:0", open=True), Agent(open=True) as rx:
        r = CliRunner().invoke(
            app,
            ["net", "send", rx.endpoint, "--agent-socket", str(sock), "--size", "1000",
             "--count", "5", "--json"],
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        out = json.loads(r.output)
        assert [f["messages_sent"] for f in out["flows"]] == [5]
        assert sum(m["messages"] for m in rx.stats()["received"]) == 5


# --- document 004's sharing on a real bottleneck ------------------------------------------


def _shares(
    sc_name: str,
    rate_control: bool,
    backend: str = "agent",
    warmup: float = 0.5,
    window: float = 1.5,
) -> list[dict[str, Any]]:
    sc = next(s for s in sharing.SCENARIOS if s.name == sc_name)
    link = parse_bandwidth("100 Mb/s")
    if NAMESPACES:
        with Cluster(sc.hosts) as c:
            return sharing._one(
                sc, rate_control, link,
                lambda n, open_, backend: [
                    c.host(i, open=open_, send_buffer=256 * 1024, backend=backend)
                    for i in range(n)
                ],
                warmup, window, backend,
            )  # fmt: skip
    # Said on stderr, not as a warning (warnings are errors in this suite).
    sys.stderr.write(f"\nloopback instead of namespaces ({WHY_NOT}): no shared bottleneck\n")
    return sharing._on_loopback(sc, rate_control, link, warmup, window, backend)


@pytest.mark.parametrize(
    ("scenario", "backend"),
    [("one_source_1_2", "agent"), ("two_sources_1_2", "agent"), ("one_source_1_2", "kernel")],
)
def test_rate_control_shares_a_real_bottleneck_by_inverse_idt(scenario: str, backend: str) -> None:
    rows = _shares(scenario, rate_control=True, backend=backend)
    # The kernel back end paces each socket on its own (`SO_MAX_PACING_RATE`): its shares
    # scatter by up to 6% with other work on the machine (the suite runs on every core),
    # where the agent's one scheduler holds 2% (`contention.KERNEL_SHARE_BOUND`).
    bound = contention.KERNEL_SHARE_BOUND if backend == "kernel" else 0.02
    for r in rows:
        assert not r["errors"]
        assert r["share"] == pytest.approx(r["expected_share"], rel=bound), rows
        # Admitted rates below the link's capacity: each flow gets what it reserved.
        assert r["mbps"] == pytest.approx(r["reserved_mbps"], rel=max(bound, 0.05)), rows


# --- issue 34: reservations that hold under contention ------------------------------------


@pytest.mark.skipif(not NAMESPACES, reason=f"needs the namespace bottleneck: {WHY_NOT}")
@pytest.mark.parametrize(
    ("scenario", "backend"),
    # (not the kernel back end on a fully admitted link: Linux's per-socket pacing falls
    # behind there now and then, once 15% short in six runs; the agent holds it)
    [
        (sc.name, b)
        for sc in contention.CONTENDED
        for b in ("agent", "kernel")
        if (sc.name, b) != ("full_link_admitted", "kernel")
    ],
)
def test_reservations_hold_under_contention(scenario: str, backend: str) -> None:
    """Each row of issue 34's table on the namespace cluster (100 Mb/s links): a reserved
    flow gets >= 95% of its rate beside unreserved traffic of its host and of another host,
    and at 100% of what admission on the wire allows; two flows of one application share
    by their reservations, and over-subscribed reservations by 1/IDT, within 2% (the
    kernel back end's over-subscribed shares within 10%: `contention.KERNEL_SHARE_BOUND`)."""
    sc = next(s for s in contention.CONTENDED if s.name == scenario)
    # (the kernel back end's shares over 3 s windows scattered to +11.6% of the smaller one
    # in a CI rehearsal on 2026-11-30, the suite's other tests beside it: 6 s there)
    window = 6.0 if backend == "kernel" and sc.name.startswith("oversubscribed") else 3.0
    rows = contention.run_one(sc, backend, 100e6, warmup=1.0, window=window)
    holds, worst = contention.verdict(rows)
    assert not any(r["errors"] for r in rows), rows
    assert holds, f"worst error {worst:+.2%}: {rows}"


@pytest.mark.skipif(not NAMESPACES, reason=f"needs the namespace bottleneck: {WHY_NOT}")
@pytest.mark.parametrize("backend", ["agent", "kernel"])
def test_a_small_message_on_a_reserved_flow_is_not_held_for_an_idt(backend: str) -> None:
    """4-byte ping-pong with a 90 Mb/s reservation (over 10x what it uses): a packet costs
    its own bytes at the flow's rate, not a 4 KB IDT (364 us at 90 Mb/s), so its median RTT
    is within a quarter of one IDT of the same flow's unreserved. (Held to the IDT, the
    failure it guards against, not to a percentage of a ~100 us RTT: on a loaded 2-core
    machine the kernel back end's medians differed by +11.8% with nothing held.)"""
    r = contention.rtt(backend, 100e6, blocks=4, count=300)
    idt_us = 4096 * 8 / (r["reserved_mbps"] * 1e6) * 1e6
    assert r["rtt_reserved_us"] - r["rtt_unreserved_us"] < 0.25 * idt_us, r


@pytest.mark.skipif(not NAMESPACES, reason=f"needs the namespace bottleneck: {WHY_NOT}")
def test_without_rate_control_one_source_interleaves_its_flows_equally() -> None:
    # (3 s windows: over 1.5 s the split scattered to 0.57 once in CI)
    rows = _shares("one_source_1_2", rate_control=False, warmup=1.0, window=3.0)
    for r in rows:
        assert r["share"] == pytest.approx(0.5, abs=0.05), rows


@pytest.mark.skipif(not NAMESPACES, reason=f"needs namespaces: {WHY_NOT}")
def test_an_agent_killed_mid_transfer_errors_its_sender_and_spares_the_others() -> None:
    with Cluster(3) as c:
        src, keeps, dies = c.host(0, open=True), c.host(1, open=True), c.host(2, open=True)
        src.call("stream", dst=keeps.endpoint, size=65536)
        src.call("stream", dst=dies.endpoint, size=65536)
        wait_for(lambda: dies.call("stats")["received"], what="the transfer to start")
        dies.kill()
        wait_for(
            lambda: dies.endpoint + "/0" in src.call("stats")["stream_errors"],
            what="the sender to see an error",
        )
        err = src.call("stats")["stream_errors"][dies.endpoint + "/0"]
        assert "failed" in err or "reach" in err, err

        def got() -> int:
            return int(sum(r["bytes"] for r in keeps.call("stats")["received"]))

        before = got()
        wait_for(lambda: got() > before + 1_000_000, what="the other flow to go on")
    # Nothing is left behind.
    assert not list(Path("/run/netns").glob(f"{c.prefix}*"))


# --- MPI QoS through communicator attributes (document 001 §2.2.2) -------------------------


def _mpiexec() -> str | None:
    import shutil

    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    return shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which("mpiexec")


@pytest.mark.skipif(_mpiexec() is None, reason="mpi4py and an MPI (pip install 'qosnet[mpi]')")
def test_the_mpi_example_requests_changes_and_is_denied_through_attributes(
    tmp_path: Path,
) -> None:
    import subprocess

    example = Path(__file__).parent.parent / "examples" / "mpi_qos_ray_tracing.py"
    mpiexec = _mpiexec()
    assert mpiexec is not None

    def run(*args: str) -> str:
        r = subprocess.run(
            [mpiexec, "-n", "3", sys.executable, str(example), "--seconds", "1", *args],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stdout

    out = run("--rate", "20 Mb/s", "--capacity", "200 Mb/s")
    assert "rank 1: asked 40 Mb/s to the master: accepted" in out
    assert "rank 2: asked 20 Mb/s to the master: accepted" in out
    assert "rank 1: changed to 20 Mb/s: accepted" in out
    assert "worker" in out and "Mb/s" in out
    # 2 x 150 Mb/s > the 200 Mb/s source capacity (004 §3.4 (a)): denied, sent unregulated.
    out = run("--rate", "150 Mb/s", "--capacity", "200 Mb/s")
    assert "rank 1: asked 300 Mb/s to the master: denied" in out
    assert "rank 2: asked 150 Mb/s to the master: accepted" in out
    # The ranks as applications of the host's daemon, each on its own port, paced by its
    # one scheduler.
    sock = tmp_path / "agent.sock"
    with Daemon(sock, listen="127.0.0.1:0", open=True) as dm:
        out = run("--rate", "20 Mb/s", "--capacity", "200 Mb/s", "--socket", str(sock))
        assert "rank 1: asked 40 Mb/s to the master: accepted" in out
        assert "rank 2: asked 20 Mb/s to the master: accepted" in out
        ports = {f["port"] for f in dm.stats()["flows"]}
        assert len(ports) >= 2, dm.stats()["flows"]


@pytest.mark.skipif(_mpiexec() is None, reason="mpi4py and an MPI (pip install 'qosnet[mpi]')")
def test_mpi_ranks_on_one_host_share_its_capacity() -> None:
    """Document 004 §3.4 (a) per node: three ranks on this host, 100 Mb/s for the host.
    Each rank alone would fit (60 < 100); together they are admitted against the host's
    link, sequentially and when all ask at once."""
    import subprocess

    script = Path(__file__).parent / "mpi" / "host_capacity.py"
    mpiexec = _mpiexec()
    assert mpiexec is not None
    r = subprocess.run(
        [mpiexec, "-n", "3", sys.executable, str(script)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    steps = {
        s["step"]: [tuple(x) for x in s["status"]]
        for s in map(json.loads, r.stdout.split("\n")[:-1])
    }
    none = ("none", 0.0)
    assert steps["rank 1 asks 60"] == [none, ("accepted", 60), none]
    # Per rank it would fit; the host already carries 60 of its 100.
    assert steps["rank 2 asks 60 on the same host"] == [none, ("accepted", 60), ("denied", 60)]
    assert steps["rank 2 asks 40"] == [none, ("accepted", 60), ("accepted", 40)]
    assert steps["rank 1 releases, rank 2 changes to 60"] == [none, none, ("accepted", 60)]
    assert steps["everyone releases"] == [none, none, none]
    at_once = steps["all three ask 40 at once"]
    assert sorted(s for s, _ in at_once) == ["accepted", "accepted", "denied"], at_once


def test_cli_errors_are_messages_not_tracebacks(tmp_path: Path) -> None:
    sock = tmp_path / "agent.sock"
    r = CliRunner().invoke(
        app, ["agent", "--socket", str(sock), "--listen", "nowhere", "--duration", "0", "--open"]
    )
    assert r.exit_code == 1 and "listen: cannot bind" in r.output
    assert not sock.exists()
    hosts = tmp_path / "hosts"
    hosts.write_text("zero 127.0.0.1:1\n")
    r = CliRunner().invoke(
        app,
        ["agent", "--listen", "127.0.0.1:0", "--service", "http://127.0.0.1:9", "--node", "0",
         "--hosts", str(hosts), "--duration", "0", "--key-file", str(cluster_key(tmp_path))],
    )  # fmt: skip
    assert r.exit_code == 1 and "hosts:1: expected `NODE HOST:PORT`" in r.output


# --- the overhead measurement's statistics -----------------------------------------------


def test_the_bootstrap_interval_brackets_the_mean_and_narrows_with_samples() -> None:
    from qosnet.dataplane.overhead import confidence_interval

    assert confidence_interval([0.02] * 10) == (0.02, 0.02)
    few = [0.05, -0.03, 0.01, 0.02, -0.01, 0.04]
    lo, hi = confidence_interval(few)
    assert min(few) <= lo < sum(few) / len(few) < hi <= max(few)
    many = few * 20
    lo2, hi2 = confidence_interval(many)
    assert lo <= lo2 and hi2 <= hi and hi2 - lo2 < (hi - lo) / 2
    assert confidence_interval(few) == (lo, hi), "seeded: the same samples, the same interval"


def test_interleaved_blocks_pair_both_senders_and_give_intervals(tmp_path: Path) -> None:
    from qosnet.dataplane import overhead

    rows = overhead.interleaved(
        blocks=2, pings=20, total_bytes=1 << 20, ping_sizes=(4,), bw_sizes=(65536,)
    )
    assert [(r["test"], r["size"], r["blocks"]) for r in rows] == [
        ("ping-pong RTT (us)", 4, 2),
        ("bandwidth (Gb/s)", 65536, 2),
    ]
    for r in rows:
        assert r["ci95"][0] <= r["mean"] <= r["ci95"][1]
        assert r["with"] > 0 and r["without"] > 0 and r["cpu_with"] > 0
    [v_rtt, v_bw] = overhead.interleaved_verdicts(rows)
    assert v_rtt["verdict"] in ("under 1%", "over 1%", "unresolved at this noise")
    assert v_bw["worst_size"] == 65536
    # The reproduction's report sets them beside the document's 1%, claim by claim.
    from qosnet.dataplane import reproduce
    from qosnet.reproduce.seed004_real_claims import OVERHEAD_VERDICTS

    result = {"sharing": [], "where": "-", "overhead": [{**r, "where": "loopback"} for r in rows]}
    reproduce.report([], result, tmp_path)
    findings = (tmp_path / "FINDINGS.md").read_text().splitlines()
    [lat, loss] = [f for f in findings if f.startswith("| ") and "1% on average" in f]
    assert lat.startswith("| latency overhead, loopback: under 1% on average (§5.2")
    assert "95% interval" in lat and f"time: {v_rtt['verdict']}" in lat
    assert lat.endswith(f"| {OVERHEAD_VERDICTS[v_rtt['verdict']]} |")
    assert loss.startswith("| bandwidth loss, loopback") and "CPU-s per Gb moved" in loss
    # read back from its tables, the same verdicts (`--rescore`)
    before = (tmp_path / "FINDINGS.md").read_text()
    reproduce.rescore(tmp_path)
    assert (tmp_path / "FINDINGS.md").read_text() == before


def test_the_cpu_ratio_is_of_totals_and_not_carried_away_by_one_block() -> None:
    from qosnet.dataplane.overhead import ratio_interval

    # One block whose small denominator gives a paired ratio of +900%: the mean of the
    # paired ratios would say +90%; the totals say +8%.
    with_ = [1.0] * 9 + [1.0]
    without = [1.0] * 9 + [0.1]
    ratio, lo, hi = ratio_interval(with_, without)
    assert ratio == pytest.approx(10 / 9.1 - 1)
    assert lo <= ratio <= hi < 0.5
    assert ratio_interval([2.0, 2.0], [1.0, 1.0]) == (1.0, 1.0, 1.0)

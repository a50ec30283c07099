"""Single-flow reservations in the service (`/v1/flows`): one flow (src, dst, bandwidth)
admitted against the same link and NIC capacities as jobs, durable across a restart,
released or expired by its lease, listed for the hosts' agents, refused over capacity with
the reason; every request validated and authorised as the job routes are.

On document 001's testbed (16 nodes, 210 MB/s each way per link), against SQLite and
PostgreSQL (`db_url`), with a real uvicorn server and a settable clock.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from qosnet.client import Conflict, Forbidden, NotFound, Refused, Unauthorized
from qosnet.dataplane import Agent, Daemon
from qosnet.dataplane.control import ServiceLink
from qosnet.middleware.units import MB
from qosnet.service.testing import RunningService


@pytest.fixture
def service(make_service: Callable[..., RunningService], db_url: str) -> RunningService:
    return make_service(db_url)


def _sourced(service: RunningService, node: int) -> float:
    return next(n.sourced for n in service.root.utilisation().nics if n.node == node)


def test_a_flow_is_admitted_with_its_idt_and_listed_for_its_source(
    service: RunningService,
) -> None:
    f = service.alice.reserve_flow(0, 5, 50 * MB, src_port=3, dst_port=7, priority=2)
    assert (f.owner, f.state, f.src, f.dst, f.bandwidth) == ("alice", "active", 0, 5, 50 * MB)
    assert (f.src_port, f.dst_port, f.priority) == (3, 7, 2)
    # document 004 §3.4: idt = T x Bpeak / Breq = 210 / 50 periods
    assert f.idt == pytest.approx(210 / 50)
    assert f.path and f.path[-1][0] >= 0
    listed = service.root.reservations(node=0)
    assert [(r.flow, r.job, r.src_port, r.dst_port, r.priority) for r in listed] == [
        (f.id, None, 3, 7, 2)
    ]
    assert service.root.reservations(node=5) == []
    assert _sourced(service, 0) == pytest.approx(50 * MB)
    assert service.alice.flow(f.id) == f
    assert [x.id for x in service.alice.flows()] == [f.id]


def test_flows_and_jobs_share_the_capacities_and_a_refusal_says_why(
    service: RunningService,
) -> None:
    f = service.alice.reserve_flow(0, 1, 200 * MB)
    with pytest.raises(Refused) as e:
        service.bob.reserve_flow(0, 2, 20 * MB)
    assert e.value.reason == "not_enough_bandwidth" and e.value.retryable
    assert "node 0" in e.value.detail, e.value.detail
    # A job on all 16 nodes at 40 MB/s per flow needs node 0's link too: refused while the
    # flow holds it, admitted once it is released.
    job = {"application": "ray_tracing", "parameters": {"interleaving": 0}, "t2": 1.0}
    with pytest.raises(Refused):
        service.alice.submit(job["application"], job["parameters"], t2=1.0, nodes=16)
    released = service.alice.release_flow(f.id)
    assert released.state == "released" and released.end_reason == "released by owner"
    assert _sourced(service, 0) == 0
    admitted = service.alice.submit(job["application"], job["parameters"], t2=1.0, nodes=16)
    # ... and now the job holds it: a flow over what is left is refused.
    with pytest.raises(Refused):
        service.bob.reserve_flow(0, 2, 200 * MB)
    service.alice.release(admitted.id)
    with pytest.raises(Conflict, match="already released"):
        service.alice.release_flow(f.id)


def test_a_flow_outlives_a_restart_and_ends_with_its_lease(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    first = make_service(sqlite_url)
    f = first.alice.reserve_flow(2, 9, 150 * MB, lease_seconds=60)
    first.stop()
    again = make_service(sqlite_url, tokens=first.tokens, clock=first.clock)
    assert again.alice.flow(f.id).state == "active"
    assert _sourced(again, 2) == pytest.approx(150 * MB)
    with pytest.raises(Refused):
        again.bob.reserve_flow(2, 3, 100 * MB)
    renewed = again.alice.renew_flow(f.id, lease_seconds=120)
    assert renewed.renewals == 1
    again.clock.advance(121)
    assert again.alice.flow(f.id).state == "expired"
    assert again.root.reservations() == []
    assert _sourced(again, 2) == 0
    with pytest.raises(Conflict, match="expired"):
        again.alice.renew_flow(f.id)


def test_flow_requests_are_authorised_like_jobs(service: RunningService) -> None:
    f = service.alice.reserve_flow(0, 1, MB)
    with pytest.raises(Forbidden, match="another tenant"):
        service.bob.flow(f.id)
    with pytest.raises(Forbidden):
        service.bob.release_flow(f.id)
    assert service.bob.flows() == []
    assert [x.id for x in service.root.flows()] == [f.id]
    with pytest.raises(Unauthorized):
        service.client(None).reserve_flow(0, 1, MB)
    with pytest.raises(NotFound):
        service.alice.flow("flow-0000000000000000")
    assert service.root.release_flow(f.id).end_reason == "released by admin root"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"src": 0, "dst": 0, "bandwidth": 1}, "dst"),
        ({"src": 16, "dst": 1, "bandwidth": 1}, "src"),
        ({"src": 0, "dst": 1, "bandwidth": -5}, "bandwidth"),
        ({"src": 0, "dst": 1, "bandwidth": 1, "src_port": -1}, "src_port"),
        ({"src": 0, "dst": 1, "bandwidth": 1, "priority": 256}, "priority"),
        ({"src": 0, "dst": 1, "bandwidth": 1, "lease_seconds": 0}, "lease_seconds"),
        ({"src": 0, "dst": 1, "bandwidth": 1, "colour": "red"}, "colour"),
        ({"src": "zero", "dst": 1, "bandwidth": 1}, "src"),
    ],
)
def test_a_malformed_flow_request_names_the_field(
    service: RunningService, body: dict[str, Any], field: str
) -> None:
    r = service.http("alice").post("/v1/flows", json=body)
    assert r.status_code == 422, r.text
    assert field in r.text
    assert service.root.flows() == []


def test_the_agents_install_a_single_flow_on_its_ports(
    make_service: Callable[..., RunningService], sqlite_url: str, tmp_path: Path
) -> None:
    service = make_service(sqlite_url)
    f = service.alice.reserve_flow(4, 6, 5 * MB, src_port=3, dst_port=9, priority=1)
    hosts = {4: "127.0.0.1:20004", 6: "127.0.0.1:20006"}
    key = tmp_path / "cluster.key"
    key.write_bytes(os.urandom(32).hex().encode())
    key.chmod(0o600)
    with Daemon(tmp_path / "agent.sock", listen="127.0.0.1:0", key_file=key) as d:
        link = ServiceLink(d, service.root, 4, hosts)
        link.sync()
        [flow] = d.stats()["flows"]
        assert (flow["port"], flow["dst"], flow["priority"]) == (3, "127.0.0.1:20006/9", 1)
        assert flow["reserved_bps"] == pytest.approx(f.bandwidth * 8)
        # The destination's link admits it there, from node 4's agent's port 3 to port 9.
        with Agent(listen="127.0.0.1:0") as dst:
            dst_link = ServiceLink(dst, service.root, 6, hosts)
            assert dst_link.sync()["admitted"] == ["127.0.0.1:20004/3->9"]
            assert dst.stats()["admitted"] == [("127.0.0.1:20004/3", 9, 1)]
            service.alice.release_flow(f.id)
            assert dst_link.sync()["revoked"] == ["127.0.0.1:20004/3->9"]
            assert dst.stats()["admitted"] == []
        link.sync()
        assert d.stats()["flows"][0]["reserved_bps"] is None


def test_the_flow_cli_reserves_lists_shows_renews_and_releases(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    import json

    from typer.testing import CliRunner

    from qosnet.cli import app

    service = make_service(sqlite_url)
    env = {"QOSNET_URL": service.url, "QOSNET_TOKEN": service.tokens["alice"], "COLUMNS": "200"}

    def qosnet(*args: str, token: str | None = None) -> Any:
        e = env if token is None else {**env, "QOSNET_TOKEN": token}
        r = CliRunner().invoke(app, ["flow", *args], env=e)
        assert "Traceback" not in r.output, r.output
        return r

    made = qosnet("reserve", "0", "5", "400 Mb/s", "--dst-port", "7", "--priority", "2",
                  "--lease", "60", "--json")  # fmt: skip
    assert made.exit_code == 0, made.output
    flow = json.loads(made.stdout)
    # 400 Mb/s is 50 MB/s; document 004 §3.4: idt = T x Bpeak / Breq = 210 / 50 periods
    assert (flow["src"], flow["dst"], flow["dst_port"], flow["priority"]) == (0, 5, 7, 2)
    assert flow["bandwidth"] == pytest.approx(50 * MB) and flow["idt"] == pytest.approx(4.2)
    assert service.root.reservations(node=0)[0].flow == flow["id"]

    shown = qosnet("show", flow["id"])
    assert shown.exit_code == 0, shown.output
    assert "50 MB/s (400 Mb/s)" in shown.stdout and "node 5 port 7" in shown.stdout
    assert "4.2" in shown.stdout
    listed = qosnet("list", "--state", "active")
    assert listed.exit_code == 0 and flow["id"] in listed.stdout and "5/7" in listed.stdout
    assert flow["id"] not in qosnet("list", token=service.tokens["bob"]).stdout

    # Over node 0's 210 MB/s: refused (exit 3) with the reason naming the full resource.
    refused = qosnet("reserve", "0", "2", "200 MB/s")
    assert refused.exit_code == 3, refused.output
    assert "refused (not_enough_bandwidth)" in refused.stderr and "node 0" in refused.stderr
    # The reason is said once, not "not_enough_bandwidth: not_enough_bandwidth".
    assert refused.stderr.count("not_enough_bandwidth") == 1, refused.stderr

    renewed = qosnet("renew", flow["id"], "--lease", "120")
    assert renewed.exit_code == 0 and "lease expires" in renewed.stdout
    assert service.alice.flow(flow["id"]).renewals == 1
    released = qosnet("release", flow["id"])
    assert released.exit_code == 0 and f"{flow['id']} released" in released.stdout
    assert service.root.reservations() == []
    again = qosnet("release", flow["id"])
    assert again.exit_code == 1 and "already released" in again.stderr
    assert qosnet("list", "--state", "released").stdout.count(flow["id"]) == 1

    # Bad input: a message naming the argument (usage errors exit 2), or the service's.
    for args, text in [
        (("reserve", "0", "1", "fast"), "BANDWIDTH"),
        (("reserve", "0", "1", "0 Mb/s"), "must be a positive bandwidth"),
        (("reserve", "0", "1", "1 Mb/s", "--priority", "300"), "--priority"),
        (("list", "--state", "gone"), "must be active, released or expired"),
    ]:
        bad = qosnet(*args)
        assert bad.exit_code == 2 and text in bad.output, bad.output
    same = qosnet("reserve", "3", "3", "1 Mb/s")
    assert same.exit_code == 1 and "dst: must differ from src" in same.stderr, same.output
    outside = qosnet("reserve", "0", "16", "1 Mb/s")
    assert outside.exit_code == 1 and "must be a node in 0..15" in outside.stderr
    unknown = qosnet("show", "flow-0000000000000000")
    assert unknown.exit_code == 1 and "404" in unknown.stderr
    anonymous = qosnet("list", token="")
    assert anonymous.exit_code == 1 and "QOSNET_TOKEN" in anonymous.stderr

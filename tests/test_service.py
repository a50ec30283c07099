"""The request handler service (`qosnet serve`): HTTP API, durable state, leases, auth,
idempotency and no overbooking under concurrency, against SQLite and PostgreSQL.

Each test runs a real uvicorn server in a thread (`qosnet.service.testing.UvicornThread`)
over the app, with a settable clock. The PostgreSQL variant runs a throwaway server
(`initdb` + `pg_ctl`, unix socket only, as the `postgres` user when we are root) and is
skipped only if the PostgreSQL binaries are not on PATH.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import random
import ssl
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy
from sqlalchemy import select

from qosnet.client import Client, Conflict, Forbidden, NotFound, Refused, Unauthorized
from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.units import MB
from qosnet.service.app import create_app
from qosnet.service.db import JobRow, TokenRow
from qosnet.service.handler import RequestHandler
from qosnet.service.settings import Settings
from qosnet.service.testing import (
    RunningService,
)

# ------------------------------------------------------------------------------------
# fixtures


Service = RunningService


@pytest.fixture
def service(make_service: Callable[..., Service], db_url: str) -> Service:
    return make_service(db_url)


@pytest.fixture
def sqlite_service(make_service: Callable[..., Service], sqlite_url: str) -> Service:
    return make_service(sqlite_url)


# Document 001 §3.3-3.4's worked example: a frame in at most 1 s, interleaving factor 0.
EXAMPLE = {"application": "ray_tracing", "parameters": {"interleaving": 0}, "t2": 1.0}


def _submit(client: Client, body: dict[str, Any], **kw: Any) -> Any:
    return client.submit(
        body["application"],
        body.get("parameters"),
        t2=body.get("t2"),
        nodes=body.get("nodes"),
        **kw,
    )


# ------------------------------------------------------------------------------------
# admission


def test_admits_document_001_worked_example(service: Service) -> None:
    job = _submit(service.alice, EXAMPLE)
    # §3.4 scenario 2: 40 MB/s per flow on 16 nodes, 0.303 s, the free image size 512
    assert job.state == "active" and job.owner == "alice"
    assert job.node_count == 16 and sorted(job.nodes) == list(range(16))
    assert job.bandwidth == pytest.approx(40 * MB)
    assert job.expected_time == pytest.approx(0.303)
    assert job.parameters == {"image_size": 512, "interleaving": 0}
    assert job.pattern == "hypercube"
    assert len(job.flows) == 16 * 4  # log2(16) partners per node
    # the NIC's rate control: idt = Bpeak / Breq = 210 / 40 MB/s, in units of T
    assert [f.idt for f in job.flows] == pytest.approx([210 / 40] * 64)
    assert all(f.path for f in job.flows)
    assert job.lease_expires.timestamp() == pytest.approx(service.clock() + 300)

    assert service.alice.job(job.id) == job
    use = service.alice.utilisation()
    assert use.active_jobs == 1 and use.free_nodes == [] and use.nodes == 16
    assert 0 < use.max_utilisation <= 1
    assert use.link_bandwidth == pytest.approx(210 * MB)
    assert [n.sourced for n in use.nics] == pytest.approx([4 * 40 * MB] * 16)
    flows = service.alice.reservations()
    assert len(flows) == 64 and {f.job for f in flows} == {job.id}
    assert {(f.src, f.dst) for f in service.alice.reservations(node=3)} == {
        (3, 2),
        (3, 1),
        (3, 7),
        (3, 11),
    }


def test_refusals_say_why(service: Service) -> None:
    job = _submit(service.alice, EXAMPLE)
    with pytest.raises(Refused) as refused:
        _submit(service.bob, {"application": "polygon_rendering", "t2": 5.0})
    assert refused.value.status == 409
    assert refused.value.reason == "not_enough_nodes" and refused.value.retryable
    assert "0 of the cluster's 16" in refused.value.detail

    with pytest.raises(Refused) as refused:
        _submit(service.bob, {"application": "ray_trace"})
    assert refused.value.reason == "no_profile" and not refused.value.retryable
    assert "ray_tracing" in refused.value.detail  # names the known applications

    with pytest.raises(Refused) as refused:
        _submit(service.bob, {"application": "ray_tracing", "t2": 0.01})
    assert refused.value.reason == "no_time_match"

    with pytest.raises(Refused) as refused:
        _submit(service.bob, {"application": "ray_tracing", "parameters": {"image_size": 640}})
    assert refused.value.reason == "no_profile" and "image_size=640" in refused.value.detail

    service.alice.release(job.id)
    assert _submit(service.bob, {"application": "polygon_rendering", "t2": 5.0}).state == "active"


def test_scenario_3_takes_what_is_left(service: Service) -> None:
    """Existing reservations limit the bandwidth: the translator takes the largest
    grantable point, on fewer nodes if need be (document 001 §3.4, scenario 3)."""
    first = _submit(service.alice, {"application": "ray_tracing", "nodes": 8, "t2": 1.0})
    assert first.node_count == 8 and first.bandwidth == pytest.approx(40 * MB)
    second = _submit(service.bob, EXAMPLE)
    assert second.node_count == 8  # 16 cannot be had any more
    assert not set(first.nodes) & set(second.nodes)
    use = service.root.utilisation()
    assert use.active_jobs == 2 and use.free_nodes == []


# ------------------------------------------------------------------------------------
# malformed requests: 422 naming the field


MALFORMED: list[tuple[Any, str, str]] = [
    ({}, "application", "is required"),
    ({"application": "ray_tracing", "t2": -1}, "t2", "must be > 0"),
    ({"application": "ray_tracing", "t1": 2, "t2": 1}, "t2", "must be >= t1 (2)"),
    ({"application": "ray_tracing", "nodes": 2.5}, "nodes", "must be an integer"),
    ({"application": "ray_tracing", "nodes": 0}, "nodes", "must be > 0"),
    ({"application": "ray_tracing", "t2": "soon"}, "t2", "must be a number"),
    ({"application": "ray_tracing", "parameters": {"image_size": [1]}}, "parameters", ""),
    ({"application": "ray_tracing", "parameters": []}, "parameters", "must be an object"),
    ({"application": "ray_tracing", "colour": 1}, "colour", "is not a known field"),
    ({"application": "", "t2": 1}, "application", "at least 1 character"),
    ({"application": "ray_tracing", "lease_seconds": 1e9}, "lease_seconds", "must be <="),
    ([1, 2], "body", ""),
]


def test_malformed_submissions_name_the_field(sqlite_service: Service) -> None:
    alice = sqlite_service.http("alice")
    for body, where, message in MALFORMED:
        r = alice.post("/v1/jobs", json=body)
        assert r.status_code == 422, (body, r.text)
        errors = r.json()["errors"]
        assert any(e["field"].startswith(where) and message in e["message"] for e in errors), (
            body,
            errors,
        )
        assert r.json()["detail"].startswith(errors[0]["field"])
    assert sqlite_service.root.utilisation().active_jobs == 0


def test_other_malformed_requests(sqlite_service: Service) -> None:
    alice = sqlite_service.http("alice")
    r = alice.post("/v1/jobs", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "body"
    assert "not valid JSON" in r.json()["detail"]

    r = alice.post("/v1/jobs", json=EXAMPLE, headers={"Idempotency-Key": "k" * 300})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "Idempotency-Key header"

    r = alice.get("/v1/jobs", params={"state": "finished"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "query parameter state"

    job = _submit(sqlite_service.alice, EXAMPLE)
    r = alice.post(f"/v1/jobs/{job.id}/renew", json={"lease_seconds": -5})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "lease_seconds"

    root = sqlite_service.http("root")
    r = root.post("/v1/tokens", json={"name": "a b", "role": "root"})
    assert r.status_code == 422
    assert {e["field"] for e in r.json()["errors"]} == {"name", "role"}

    r = root.put(
        "/v1/profiles", content="application,nodes\n", headers={"Content-Type": "text/csv"}
    )
    assert r.status_code == 422, r.text
    r = root.put("/v1/cluster", content="[topology]\nkind = 'moebius'\n")
    assert r.status_code == 422 and "topology.kind" in r.json()["detail"], r.text
    r = root.put("/v1/cluster", json={"toml": ""})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "toml", r.text


def test_openapi_documents_the_api(sqlite_service: Service) -> None:
    http = sqlite_service.http()
    spec = http.get("/openapi.json").json()
    assert {
        "/v1/jobs",
        "/v1/jobs/{job_id}",
        "/v1/jobs/{job_id}/release",
        "/v1/jobs/{job_id}/renew",
        "/v1/reservations",
        "/v1/utilisation",
        "/v1/profiles",
        "/v1/applications",
        "/v1/applications/{name}",
        "/v1/cluster",
        "/v1/tokens",
        "/v1/whoami",
        "/health",
    } <= set(spec["paths"])
    submit = spec["paths"]["/v1/jobs"]["post"]
    assert {"201", "200", "401", "409", "422"} <= set(submit["responses"])
    assert any(p["name"] == "Idempotency-Key" for p in submit["parameters"])
    assert "HTTPBearer" in spec["components"]["securitySchemes"]
    assert http.get("/docs").status_code == 200
    health = http.get("/health").json()
    assert health["status"] == "ok" and health["database"] == "sqlite"


# ------------------------------------------------------------------------------------
# authentication and roles


def test_authentication(service: Service) -> None:
    anonymous = service.http()
    r = anonymous.get("/v1/jobs")
    assert r.status_code == 401 and r.headers["WWW-Authenticate"] == "Bearer"
    assert "Authorization" in r.json()["detail"]
    r = anonymous.get("/v1/jobs", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert r.status_code == 401 and "Bearer" in r.json()["detail"]
    assert service.http(token="qosnet_forged").get("/v1/jobs").status_code == 401
    assert anonymous.get("/health").status_code == 200  # liveness needs no token

    # tokens are stored as their SHA-256 only
    with service.handler.sessions() as s:
        rows = s.scalars(select(TokenRow)).all()
    stored = {r.token_hash for r in rows}
    for secret in service.tokens.values():
        assert hashlib.sha256(secret.encode()).hexdigest() in stored
        assert all(secret not in (r.token_hash, r.prefix) for r in rows)

    assert service.alice.whoami().model_dump() == {"name": "alice", "role": "tenant"}
    assert service.root.whoami().role == "admin"


def test_roles_and_owners(service: Service) -> None:
    alice, bob, root = service.alice, service.bob, service.root
    job = _submit(alice, {"application": "polygon_rendering", "nodes": 4})
    for call in (
        lambda: bob.job(job.id),
        lambda: bob.renew(job.id),
        lambda: bob.release(job.id),
        lambda: bob.jobs(owner="alice"),
        lambda: bob.set_cluster("[topology]\nkind='star'\nports=4\n"),
        lambda: bob.upload_profiles(alice.profiles()),
        lambda: bob.create_token("mallory", "admin"),
        lambda: bob.tokens(),
    ):
        with pytest.raises(Forbidden):
            call()
    with pytest.raises(NotFound):
        bob.job("job-unknown")
    with pytest.raises(NotFound):
        root.release("job-unknown")

    mine = _submit(bob, {"application": "polygon_rendering", "nodes": 4})
    assert [j.id for j in alice.jobs()] == [job.id]
    assert {j.id for j in root.jobs()} == {job.id, mine.id}
    assert [j.id for j in root.jobs(owner="bob")] == [mine.id]
    assert {r.job for r in bob.reservations()} == {mine.id}
    assert {r.job for r in root.reservations()} == {job.id, mine.id}

    assert root.renew(job.id).renewals == 1  # an admin may act on any job
    released = root.release(job.id)
    assert released.state == "released" and released.end_reason == "released by admin root"
    with pytest.raises(Conflict, match="already released"):
        alice.release(job.id)
    with pytest.raises(Conflict, match="submit it again"):
        alice.renew(job.id)
    assert [j.id for j in alice.jobs(state="released")] == [job.id]
    assert alice.jobs(state="active") == []


def test_tokens_api(service: Service) -> None:
    root = service.root
    created = root.create_token("carol", "tenant")
    assert created.token.startswith("qosnet_") and created.role == "tenant"
    carol = Client(service.url, created.token)
    assert carol.whoami().name == "carol"
    with pytest.raises(Conflict, match="one role"):
        root.create_token("carol", "admin")
    listed = {t.name: t for t in root.tokens()}
    assert set(listed) == {"root", "alice", "bob", "carol"}
    assert "token" not in listed["carol"].model_dump()
    assert root.revoke_token(created.id).revoked
    with pytest.raises(Unauthorized):
        carol.whoami()
    carol.close()
    with pytest.raises(Conflict, match="last admin"):
        root.revoke_token(listed["root"].id)


# ------------------------------------------------------------------------------------
# idempotency


def test_idempotency_key(service: Service) -> None:
    alice, bob = service.alice, service.bob
    body = {"application": "polygon_rendering", "nodes": 4}
    first = _submit(alice, body, idempotency_key="order-1")
    r = service.http("alice").post("/v1/jobs", json=body, headers={"Idempotency-Key": "order-1"})
    assert r.status_code == 200 and r.headers["Idempotent-Replayed"] == "true"
    assert r.json()["id"] == first.id
    assert _submit(alice, body, idempotency_key="order-1") == first
    assert service.root.utilisation().active_jobs == 1

    r = service.http("alice").post(
        "/v1/jobs", json={**body, "nodes": 8}, headers={"Idempotency-Key": "order-1"}
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "Idempotency-Key"

    # a key is per owner
    other = _submit(bob, body, idempotency_key="order-1")
    assert other.id != first.id

    # retried at once, in parallel: still one job
    with ThreadPoolExecutor(16) as pool:
        ids = set(
            pool.map(
                lambda _: _submit(bob, {**body, "nodes": 8}, idempotency_key="order-2").id,
                range(16),
            )
        )
    assert len(ids) == 1
    assert service.root.utilisation().active_jobs == 3

    # a released job is still what its key returns
    alice.release(first.id)
    assert _submit(alice, body, idempotency_key="order-1").state == "released"


# ------------------------------------------------------------------------------------
# leases


def test_leases_expire_lazily_and_renewal_extends(
    make_service: Callable[..., Service], db_url: str
) -> None:
    service = make_service(db_url, lease_seconds=60)
    alice, clock = service.alice, service.clock
    job = _submit(alice, EXAMPLE)
    assert job.lease_seconds == 60
    clock.advance(59)
    renewed = alice.renew(job.id)
    assert renewed.renewals == 1
    assert renewed.lease_expires.timestamp() == pytest.approx(clock() + 60)
    assert alice.renew(job.id, lease_seconds=10).lease_expires.timestamp() == pytest.approx(
        clock() + 10
    )
    clock.advance(9)
    assert alice.job(job.id).state == "active"
    clock.advance(2)  # past the lease: the next request ends the job
    expired = alice.job(job.id)
    assert expired.state == "expired" and expired.end_reason == "lease expired"
    assert expired.ended_at is not None
    use = alice.utilisation()
    assert use.active_jobs == 0 and len(use.free_nodes) == 16
    assert all(link.reserved == 0 for link in use.links)
    with pytest.raises(Conflict, match="expired"):
        alice.renew(job.id)
    with pytest.raises(Conflict, match="expired"):
        alice.release(job.id)
    # capacity is back
    again = _submit(alice, EXAMPLE)
    assert again.node_count == 16 and again.bandwidth == pytest.approx(40 * MB)


def test_lease_expiring_under_a_renewal_is_not_renewed(sqlite_service: Service) -> None:
    job = _submit(sqlite_service.alice, EXAMPLE, lease_seconds=5)
    sqlite_service.clock.advance(5)
    with pytest.raises(Conflict, match="expired"):
        sqlite_service.alice.renew(job.id)
    assert sqlite_service.root.utilisation().active_jobs == 0


def test_background_sweeper_expires_without_requests(
    make_service: Callable[..., Service], db_url: str
) -> None:
    service = make_service(db_url, lease_seconds=5, sweep_seconds=0.05)
    job = _submit(service.alice, EXAMPLE)
    service.clock.advance(6)
    deadline = time.monotonic() + 10
    state = "active"
    while time.monotonic() < deadline:
        with service.handler.sessions() as s:  # the database itself, not the API
            row = s.get(JobRow, job.id)
            assert row is not None
            state = row.state
        if state == "expired":
            break
        time.sleep(0.05)
    assert state == "expired"
    assert len(service.handler.allocator.free_nodes()) == 16


# ------------------------------------------------------------------------------------
# profiles and cluster


def test_profiles(service: Service) -> None:
    alice, root = service.alice, service.root
    apps = {a.name: a for a in alice.applications()}
    assert apps["ray_tracing"].curves == 12 and apps["polygon_rendering"].curves == 9
    assert apps["ray_tracing"].parameters == {"image_size": [512, 1024], "interleaving": [0, 2]}
    detail = alice.application("ray_tracing")
    knees = {
        (c.nodes, c.parameters["image_size"], c.parameters["interleaving"]): c.knee.bandwidth
        for c in detail.curves
    }
    assert knees[8, 512, 0] == knees[16, 512, 0] == 40 * MB  # document 001 Figure 3.7
    with pytest.raises(NotFound):
        alice.application("nope")

    text = alice.profiles()
    assert json.loads(text)["applications"][0]["name"] == "ray_tracing"
    csv_text = alice.profiles("csv", application="polygon_rendering")
    assert csv_text.splitlines()[0] == "application,image_size,nodes,bandwidth,time"
    assert len(csv_text.splitlines()) == 1 + 9 * 14

    # CSV upload replaces the curves of the applications it names: keep only 4 nodes
    rows = csv_text.splitlines()
    only4 = "\n".join([rows[0], *(r for r in rows[1:] if r.split(",")[2] == "4")]) + "\n"
    summary = {a.name: a for a in root.upload_profiles(only4, "csv")}
    assert summary["polygon_rendering"].curves == 3 and summary["ray_tracing"].curves == 12
    assert _submit(alice, {"application": "polygon_rendering"}).node_count == 4

    # a bad CSV names the line and column; nothing changes
    lines = only4.splitlines()
    bad = "\n".join([lines[0], lines[1].rsplit(",", 1)[0] + ",-1", *lines[2:]]) + "\n"
    r = service.http("root").put("/v1/profiles", content=bad, headers={"Content-Type": "text/csv"})
    assert r.status_code == 422 and "line 2" in r.json()["detail"], r.text
    assert "time" in r.json()["detail"]

    # JSON upload replaces the store; round trip
    root.upload_profiles(text)
    assert {a.name: a.curves for a in alice.applications()}["polygon_rendering"] == 9
    r = service.http("root").put(
        "/v1/profiles", json={"applications": [], "curves": [{"application": "x"}]}
    )
    assert r.status_code == 422 and r.json()["errors"][0]["field"].startswith("curves[0]")

    # declare an application, give it curves, schedule it, remove it
    root.request(
        "PUT",
        "/v1/applications/stream",
        json={"name": "stream", "parameters": {}, "pattern": "ring"},
    )
    points = "application,image_size,interleaving,nodes,bandwidth,time\n" + "".join(
        f"stream,,,2,{b * 1_000_000},{10 / b}\n" for b in (1, 2, 5, 10)
    )
    root.upload_profiles(points, "csv")
    job = _submit(alice, {"application": "stream"})
    assert job.node_count == 2 and job.bandwidth == 10 * MB and len(job.flows) == 2
    r = service.http("root").delete("/v1/applications/stream")
    assert r.status_code == 204
    assert alice.job(job.id).state == "active"  # keeps its allocation
    assert "stream" not in {a.name for a in alice.applications()}


def test_cluster(service: Service) -> None:
    alice, root = service.alice, service.root
    cluster = alice.cluster()
    assert cluster.nodes == 16 and cluster.link_bandwidth == pytest.approx(210 * MB)
    assert 'kind = "fat_tree"' in cluster.toml
    assert cluster.description["switches"] == 8

    job = _submit(alice, EXAMPLE)
    star = '[physical]\nlink_bandwidth = "800 Mb/s"\n[topology]\nkind = "star"\nports = 8\n'
    with pytest.raises(Conflict, match="1 jobs or flows hold reservations"):
        root.set_cluster(star, "star8")
    alice.release(job.id)
    installed = root.set_cluster(star, "star8")
    assert installed.nodes == 8 and installed.link_bandwidth == pytest.approx(100 * MB)
    assert alice.cluster().name == "star8"
    r = service.http("root").put(
        "/v1/cluster",
        params={"name": "plain"},
        content=star,
        headers={"Content-Type": "text/plain"},
    )
    assert r.status_code == 200 and r.json()["name"] == "plain"
    with pytest.raises(Refused, match="not enough nodes"):
        _submit(alice, {"application": "ray_tracing", "nodes": 16})
    small = _submit(alice, {"application": "ray_tracing", "t2": 3.0})
    assert small.node_count == 8
    assert [f.idt for f in small.flows] == pytest.approx(
        [100 * MB / small.bandwidth] * len(small.flows)
    )


def test_cluster_file_naming_a_fabric_dump(
    make_service: Callable[..., Service],
    sqlite_url: str,
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # configs/clusters/avakas.toml names its ibnetdiscover dump and routes relative to
    # itself; the service keeps that directory with the text, so a restart (even from
    # another working directory) reads the same fabric.
    avakas = Path(__file__).resolve().parents[1] / "configs" / "clusters" / "avakas.toml"
    monkeypatch.chdir(tmp_path)
    first = make_service(sqlite_url, cluster_file=avakas)
    assert first.alice.cluster().nodes == 281
    job = _submit(first.alice, {"application": "ray_tracing", "nodes": 16, "t2": 1.0})
    first.stop()
    second = make_service(sqlite_url, tokens=first.tokens, clock=first.clock)
    assert second.alice.cluster().nodes == 281
    assert second.alice.job(job.id) == job


def test_an_older_database_gains_the_new_columns(tmp_path: Any) -> None:
    # a database made before `cluster.base_dir` existed
    url = f"sqlite:///{tmp_path / 'old.db'}"
    old = sqlalchemy.create_engine(url)
    with old.begin() as conn:
        conn.execute(
            sqlalchemy.text(
                "CREATE TABLE cluster (id INTEGER PRIMARY KEY, name VARCHAR(200), "
                "toml TEXT, updated_at FLOAT)"
            )
        )
        conn.execute(
            sqlalchemy.text("INSERT INTO cluster VALUES (1, 'document-001', :t, 0.0)"),
            {"t": DOCUMENT_001_TESTBED},
        )
    old.dispose()
    handler = create_app(Settings(db_url=url, sweep_seconds=0)).state.handler
    try:
        assert handler.current_cluster().nodes == 16
        columns = {c["name"] for c in sqlalchemy.inspect(handler.engine).get_columns("cluster")}
        assert "base_dir" in columns
    finally:
        handler.close()


# ------------------------------------------------------------------------------------
# durable state


def test_restart_restores_jobs_and_capacity(
    make_service: Callable[..., Service], db_url: str
) -> None:
    first = make_service(db_url)
    job = _submit(first.alice, {"application": "ray_tracing", "nodes": 8, "t2": 1.0})
    use = first.root.utilisation()
    first.stop()

    second = make_service(db_url, tokens=first.tokens, clock=first.clock)
    assert second.alice.job(job.id) == job
    again = second.root.utilisation()
    assert again.active_jobs == 1 and again.free_nodes == use.free_nodes
    assert [link.reserved for link in again.links] == [link.reserved for link in use.links]
    other = _submit(second.bob, EXAMPLE)
    assert not set(other.nodes) & set(job.nodes)  # the restored job's nodes stay taken


def test_a_connection_still_held_when_the_service_stops_is_closed(
    make_service: Callable[..., Service], db_url: str
) -> None:
    """A request (or thread) still holding a database connection when the service stops
    returns it to the pool the stop disposed of; it is closed as it comes back, not left
    for the garbage collector (psycopg's ResourceWarning "was deleted while still open",
    which made test_restart_restores_jobs_and_capacity fail now and then on PostgreSQL)."""
    import gc
    import warnings

    service = make_service(db_url)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        with service.handler.sessions() as session:
            session.execute(sqlalchemy.text("SELECT 1"))
            service.stop()
        del session
        gc.collect()
    leaks = [str(w.message) for w in seen if issubclass(w.category, ResourceWarning)]
    assert not leaks, leaks


# ------------------------------------------------------------------------------------
# no overbooking under concurrency

# A blocking network (an 8x4 mesh, dimension-order routes) of 100 MB/s links, and
# applications whose knees are at 50 and 25 MB/s per flow: links, not only nodes, run out.
MESH = """\
[physical]
link_bandwidth = "800 Mb/s"
[topology]
kind = "mesh"
dims = [8, 4]
"""
STREAM = {
    "applications": [
        {"name": "stream", "parameters": {"size": [1, 2]}, "pattern": "ring"},
        {"name": "gather", "parameters": {}, "pattern": "all_to_all"},
    ],
    "curves": [
        *(
            {
                "application": "stream",
                "parameters": {"size": size},
                "nodes": nodes,
                "points": [
                    {"bandwidth": b * 1e6, "time": size * (1 + 20 / b) / nodes}
                    for b in (5, 10, 20, 30, 40, 50)
                ],
            }
            for size in (1, 2)
            for nodes in (2, 4)
        ),
        {
            "application": "gather",
            "parameters": {},
            "nodes": 3,
            "points": [{"bandwidth": b * 1e6, "time": 1 + 10 / b} for b in (5, 10, 15, 20, 25)],
        },
    ],
}


def _check_no_overbooking(handler: RequestHandler, use: Any) -> dict[str, int]:
    """Recompute every reservation from the committed jobs and check it against the
    cluster's capacities and the service's own accounting."""
    cluster = Cluster.from_toml(handler.current_cluster().text)
    capacity = {(x["router"], x["port"]): x["bandwidth"] for x in cluster.to_dict()["links"]}
    ports: dict[tuple[int, int], float] = defaultdict(float)
    out: dict[int, float] = defaultdict(float)
    into: dict[int, float] = defaultdict(float)
    nodes: Counter[int] = Counter()
    with handler.sessions() as s:
        live = s.scalars(select(JobRow).where(JobRow.state == "active")).all()
    for job in live:
        nodes.update(job.allocation["nodes"])
        for f in job.allocation["flows"]:
            out[f["src"]] += f["bandwidth"]
            into[f["dst"]] += f["bandwidth"]
            for hop in f["path"]:
                ports[tuple(hop)] += f["bandwidth"]  # type: ignore[index]
    assert not [n for n, k in nodes.items() if k > 1], "a node in two live jobs"
    eps = 1e-6
    for port, load in ports.items():
        assert load <= capacity[port] * (1 + eps), f"port {port}: {load} > {capacity[port]}"
    for n in range(cluster.nodes):
        assert out[n] <= cluster.node_bandwidth * (1 + eps)
        assert into[n] <= cluster.node_bandwidth * (1 + eps)
    # the service reports what the database says
    assert use.active_jobs == len(live)
    for link in use.links:
        assert link.reserved == pytest.approx(ports.get((link.router, link.port), 0.0), abs=1)
        assert link.reserved <= link.capacity * (1 + eps)
    assert use.max_utilisation <= 1 + eps
    return {"live": len(live), "busy_ports": sum(1 for v in ports.values() if v > 0)}


def _concurrent_clients(
    urls: list[str], tokens: list[str], clients: int, seed: int = 5
) -> dict[str, Any]:
    """`clients` concurrent clients (asyncio + httpx, a connection each) spread over
    `urls`, in waves. Wave 0, on the idle cluster: a tenth of the clients send their
    request twice at once with one Idempotency-Key. Wave 1: every client submits at once
    (that tenth a third time). Wave 2, at once again: half of the admitted release their
    job while every refused client retries once, so admissions race releases. Returns the
    status counts, refusal reasons and the replayed pairs."""
    rng = random.Random(seed)
    bodies = [
        {"application": "stream", "parameters": {"size": 1}, "t2": 5.0},
        {"application": "stream", "parameters": {"size": 2}, "nodes": 2},
        {"application": "stream", "nodes": 2},
        {"application": "gather", "t2": 2.0},
    ]
    plans = [
        (urls[i % len(urls)], tokens[i % len(tokens)], rng.choice(bodies)) for i in range(clients)
    ]
    statuses: Counter[int] = Counter()
    reasons: Counter[str] = Counter()
    replays: list[tuple[str, str]] = []
    tls = ssl.create_default_context()  # unused over http://, but 25 ms per client to build
    https = [
        httpx.AsyncClient(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120, verify=tls
        )
        for url, token, _ in plans
    ]

    def count(r: httpx.Response) -> None:
        statuses[r.status_code] += 1
        if r.status_code == 409:
            reasons[r.json()["reason"]] += 1

    async def race(i: int) -> str | None:
        """Two requests at once with one key: at most one job, the same for both."""
        http, body, key = https[i], plans[i][2], {"Idempotency-Key": f"client-{i}"}
        a, b = await asyncio.gather(
            http.post("/v1/jobs", json=body, headers=key),
            http.post("/v1/jobs", json=body, headers=key),
        )
        count(a)
        count(b)
        if a.is_success and b.is_success:
            replays.append((a.json()["id"], b.json()["id"]))
            assert {a.status_code, b.status_code} == {200, 201}
            return str(a.json()["id"])
        assert not (a.is_success or b.is_success), (a.text, b.text)
        return None

    async def submit(i: int) -> httpx.Response:
        key = {"Idempotency-Key": f"client-{i}"}
        r = await https[i].post("/v1/jobs", json=plans[i][2], headers=key)
        count(r)
        return r

    async def second(i: int, first: httpx.Response) -> None:
        if first.is_success and i % 2 == 0:
            r = await https[i].post(f"/v1/jobs/{first.json()['id']}/release")
            assert r.status_code == 200, r.text
        elif first.status_code == 409:
            await submit(i)

    async def main() -> None:
        try:
            racers = clients // 10
            raced = await asyncio.gather(*(race(i) for i in range(racers)))
            firsts = await asyncio.gather(*(submit(i) for i in range(clients)))
            for job, r in zip(raced, firsts, strict=False):  # a third try: the same job
                if job is not None:
                    assert r.status_code == 200 and r.json()["id"] == job, r.text
            await asyncio.gather(*(second(i, r) for i, r in enumerate(firsts)))
        finally:
            await asyncio.gather(*(h.aclose() for h in https))

    asyncio.run(main())
    return {"statuses": statuses, "reasons": reasons, "replays": replays}


def _setup_mesh(service: Service) -> None:
    service.root.set_cluster(MESH, "mesh8x4")
    service.root.upload_profiles(json.dumps(STREAM))


def test_200_concurrent_clients_never_overbook(
    make_service: Callable[..., Service], db_url: str
) -> None:
    service = make_service(db_url)
    _setup_mesh(service)
    tokens = [service.tokens["alice"], service.tokens["bob"]]
    start = time.monotonic()
    result = _concurrent_clients([service.url], tokens, clients=200)
    elapsed = time.monotonic() - start
    statuses, reasons = result["statuses"], result["reasons"]
    assert sum(statuses.values()) >= 200
    assert set(statuses) <= {200, 201, 409}, statuses  # no errors, no timeouts
    assert statuses[201] > 10 and statuses[409] > 10, statuses  # contention was real
    assert set(reasons) <= {"not_enough_nodes", "not_enough_bandwidth"}, reasons
    assert all(a == b for a, b in result["replays"]) and result["replays"]
    counts = _check_no_overbooking(service.handler, service.root.utilisation())
    print(
        f"\n200 clients on {db_url.split(':')[0]}: {dict(statuses)} {dict(reasons)} {counts} "
        f"in {elapsed:.2f} s"
    )


def test_two_service_processes_on_one_database_never_overbook(
    make_service: Callable[..., Service], db_url: str
) -> None:
    """Two services (separate handlers: separate locks and allocators, as two processes
    would have) on one database: the database lock and the revision keep them exact."""
    a = make_service(db_url)
    _setup_mesh(a)
    b = make_service(db_url, tokens=a.tokens, clock=a.clock)
    tokens = [a.tokens["alice"], a.tokens["bob"]]
    result = _concurrent_clients([a.url, b.url], tokens, clients=120, seed=11)
    assert set(result["statuses"]) <= {200, 201, 409}, result
    assert result["statuses"][201] > 5 and result["statuses"][409] > 5, result
    for service in (a, b):
        use = service.root.utilisation()
        _check_no_overbooking(service.handler, use)
    assert a.root.utilisation() == b.root.utilisation()


def test_concurrent_mixed_operations_keep_accounting_exact(sqlite_service: Service) -> None:
    """Threads submitting, renewing, releasing and expiring at once."""
    service = sqlite_service
    _setup_mesh(service)
    stop = threading.Event()
    errors: list[str] = []

    def tenant(who: str, seed: int) -> None:
        rng = random.Random(seed)
        client = Client(service.url, service.tokens[who], retries=0)
        mine: list[str] = []
        try:
            for _ in range(25):
                try:
                    mine.append(_submit(client, {"application": "stream", "nodes": 2}).id)
                except Refused:
                    pass
                if mine and rng.random() < 0.5:
                    job = mine.pop(rng.randrange(len(mine)))
                    try:
                        client.renew(job) if rng.random() < 0.5 else client.release(job)
                    except Conflict:
                        pass  # expired meanwhile
        except Exception as e:  # pragma: no cover - reported below
            errors.append(repr(e))
        finally:
            client.close()

    def ticker() -> None:
        while not stop.is_set():
            service.clock.advance(30)  # leases of 300 s run out while the tenants work
            service.handler.expire_due()
            time.sleep(0.01)

    tick = threading.Thread(target=ticker)
    tick.start()
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: tenant(("alice", "bob")[i % 2], i), range(8)))
    stop.set()
    tick.join()
    assert not errors
    _check_no_overbooking(service.handler, service.root.utilisation())
    # and a fresh rebuild from the database agrees with the live allocator (what it holds,
    # not the files the first start installed)
    settings = dataclasses.replace(service.handler.settings, cluster_file=None, profiles_file=None)
    rebuilt = RequestHandler(settings)
    rebuilt.start()
    assert rebuilt.allocator.utilisation() == service.handler.allocator.utilisation()
    rebuilt.close()

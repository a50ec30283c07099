"""Issue 21, the service's HTTP surface: the body cap enforced while the body streams,
authentication before the body is read, parameters typed to their columns (no 500 on
either database), anchored application names, token writes under concurrency, problem
details, offline docs and /metrics."""

from __future__ import annotations

import re
import select
import socket
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import pytest

from qosnet.client import Invalid, Refused
from qosnet.service.errors import NotFound
from qosnet.service.problems import PROBLEMS
from qosnet.service.testing import (
    RunningService,
)

# ------------------------------------------------------------------------------------
# fixtures


@pytest.fixture
def service(make_service: Callable[..., RunningService], db_url: str) -> RunningService:
    return make_service(db_url)


@pytest.fixture
def sqlite_service(make_service: Callable[..., RunningService], sqlite_url: str) -> RunningService:
    return make_service(sqlite_url)


EXAMPLE = {"application": "ray_tracing", "parameters": {"interleaving": 0}, "t2": 1.0}


def is_problem(r: Any, status: int, kind: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json", r.headers
    body: dict[str, Any] = r.json()
    assert body["type"] == f"/problems/{kind}" and body["status"] == status, body
    assert body["title"] == PROBLEMS[kind].title and body["detail"]
    return body


# ------------------------------------------------------------------------------------
# raw HTTP, to see what the server reads


def _connect(service: RunningService) -> socket.socket:
    return socket.create_connection(("127.0.0.1", service.server.port), timeout=10)


def _head(method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: test"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _status(answer: bytes) -> int:
    return int(answer.split(b" ", 2)[1])


def _answer(sock: socket.socket) -> bytes:
    """A whole response: its head, then as many body bytes as Content-Length says."""
    sock.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        more = sock.recv(65536)
        if not more:
            return data
        data += more
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        more = sock.recv(65536)
        if not more:
            break
        body += more
    return head + b"\r\n\r\n" + body


def _stream_until_answered(sock: socket.socket, chunk: bytes, most: int) -> tuple[bytes, int]:
    """Send `chunk` as chunked-encoding chunks until the server answers (or `most` bytes
    went out); the answer's first bytes and how many body bytes were sent."""
    sent = 0
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    while sent < most:
        readable, _, _ = select.select([sock], [], [], 0)
        if readable:
            break
        try:
            sock.sendall(framed)
        except (BrokenPipeError, ConnectionResetError):
            break
        sent += len(chunk)
    return _answer(sock), sent


# ------------------------------------------------------------------------------------
# body cap and authentication first


def test_a_body_over_the_cap_is_refused(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    service = make_service(sqlite_url, max_body_bytes=4096)
    big = {**EXAMPLE, "parameters": {"interleaving": 0, "pad": "x" * 5000}}
    for who in ("alice", None):
        r = service.http(who).post("/v1/jobs", json=big)
        body = is_problem(r, 413, "body-too-large")
        assert body["detail"] == "body: must be at most 4096 bytes"
    # under the cap, the same route answers as before
    assert service.http("alice").post("/v1/jobs", json=EXAMPLE).status_code == 201


def test_a_streamed_body_is_cut_off_at_the_cap(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    """No Content-Length (chunked): counted as it arrives, answered 413 long before the
    client has finished, for a JSON route and for an upload read by hand."""
    service = make_service(sqlite_url, max_body_bytes=64 * 1024)
    for method, path in (("POST", "/v1/jobs"), ("PUT", "/v1/cluster")):
        with _connect(service) as sock:
            headers = {
                "Authorization": f"Bearer {service.tokens['root']}",
                "Content-Type": "application/json",
                "Transfer-Encoding": "chunked",
            }
            sock.sendall(_head(method, path, headers))
            answer, sent = _stream_until_answered(sock, b" " * 8192, most=64 * 2**20)
        assert _status(answer) == 413, answer[:300]
        assert b"application/problem+json" in answer and b"body-too-large" in answer
        assert sent < 16 * 2**20, sent  # answered long before the 64 MB were sent


def test_an_anonymous_body_is_never_read(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    """Issue 21: a 300 MB anonymous POST was read and parsed before its 401. Here the
    401 comes back with none of the announced 10 MB sent."""
    service = make_service(sqlite_url)
    for auth in ({}, {"Authorization": "Bearer qosnet_forged"}, {"Authorization": "Basic x"}):
        with _connect(service) as sock:
            headers = {**auth, "Content-Type": "application/json", "Content-Length": "10000000"}
            start = time.monotonic()
            sock.sendall(_head("POST", "/v1/jobs", headers))
            answer = _answer(sock)
        assert _status(answer) == 401, answer[:300]
        assert b"WWW-Authenticate: Bearer" in answer.replace(
            b"www-authenticate", b"WWW-Authenticate"
        )
        assert time.monotonic() - start < 5


# ------------------------------------------------------------------------------------
# parameters typed to their columns: 404 or 422, never 500


def test_parameters_outside_their_columns_are_4xx(service: RunningService) -> None:
    root = service.http("root")
    cases = [
        ("DELETE", "/v1/tokens/9223372036854775808", 422),  # past 64 bits
        ("DELETE", "/v1/tokens/18446744073709551616", 422),
        ("DELETE", "/v1/tokens/2147483648", 422),  # past PostgreSQL's integer
        ("DELETE", "/v1/tokens/2147483647", 404),
        ("DELETE", "/v1/tokens/0", 422),
        ("DELETE", "/v1/tokens/-1", 422),
        ("GET", "/v1/jobs/job-%00", 422),
        ("GET", "/v1/jobs/job-%E2%82%AC", 422),
        ("POST", "/v1/jobs/job-%00/release", 422),
        ("POST", "/v1/jobs/job-%00/renew", 422),
        ("DELETE", "/v1/jobs/job-%00", 422),
        ("GET", "/v1/jobs/job-0000000000000000", 404),
        ("GET", "/v1/jobs?owner=al%00ice", 422),
        ("GET", "/v1/jobs?owner=a%20b", 422),
        ("GET", "/v1/jobs?limit=99999999999999999999", 422),
        ("GET", "/v1/reservations?node=99999999999999999999", 422),
        ("GET", "/v1/applications/ray%00tracing", 422),
        ("GET", "/v1/profiles?application=ray%00tracing", 404),
        ("PUT", "/v1/cluster?name=x%00y", 422),
    ]
    for method, path, status in cases:
        r = root.request(method, path, content=b'[topology]\nkind = "star"\nports = 4\n')
        kind = "not-found" if status == 404 else "invalid-request"
        is_problem(r, status, kind)
    r = root.put("/v1/cluster", json={"name": "a\u0000b", "toml": '[topology]\nkind = "star"'})
    is_problem(r, 422, "invalid-request")
    # the handler itself, called from Python, is as careful
    admin = service.handler.authenticate(service.tokens["root"])
    assert admin is not None
    with pytest.raises(NotFound):
        service.handler.job(admin, "job-\x00")
    with pytest.raises(NotFound):
        service.handler.revoke_token(2**63)
    assert service.handler.jobs(admin, owner="al\x00ice") == []


def test_application_names_are_anchored(service: RunningService) -> None:
    root = service.http("root")
    declared = {"parameters": {}, "pattern": "ring"}
    for name in ("a b", "9a", 'a"b', "a'b", "a\nb", "a\n", "_a", "a-b", "a" * 201):
        r = root.put(f"/v1/applications/{quote(name, safe='')}", json={**declared, "name": name})
        assert r.status_code == 422, (name, r.text)
        assert r.json()["errors"][0]["field"] == "path parameter name"
    r = root.put("/v1/applications/stream_2", json={**declared, "name": "stream_2"})
    assert r.status_code == 200, r.text
    # a whole profile store is checked the same way
    store = {"applications": [{**declared, "name": "a b"}], "curves": []}
    r = root.put("/v1/profiles", json=store)
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["field"] == "applications[0].name"
    r = service.http("alice").post("/v1/jobs", json={"application": "ray tracing"})
    assert r.status_code == 422 and r.json()["errors"][0]["field"] == "application"


# ------------------------------------------------------------------------------------
# token writes under concurrency


def test_concurrent_token_creates_and_revokes(service: RunningService) -> None:
    """Issue 21: 157 of 320 concurrent creates answered 503 "database is locked"."""
    token = service.tokens["root"]
    statuses: Counter[int] = Counter()
    lock = threading.Lock()

    def worker(i: int) -> None:
        with service.http(token=token) as http:
            for j in range(10):
                r = http.post("/v1/tokens", json={"name": f"t{i}-{j}", "role": "tenant"})
                with lock:
                    statuses[r.status_code] += 1
                if r.status_code == 201 and j % 2:
                    revoked = http.delete(f"/v1/tokens/{r.json()['id']}")
                    with lock:
                        statuses[revoked.status_code] += 1

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(worker, range(16)))
    assert statuses == {201: 160, 200: 80}, statuses
    listed = service.root.tokens()
    assert sum(1 for t in listed if t.revoked) == 80 and len(listed) == 3 + 160


def test_the_last_admin_token_survives_concurrent_revokes(service: RunningService) -> None:
    """Two admins revoking each other's token at once: the lock taken up front makes one
    of them see the other's revoke, so one admin token always stays."""
    handler = service.handler
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def revoke(token_id: int) -> None:
        barrier.wait()
        try:
            handler.revoke_token(token_id)
            outcomes.append("revoked")
        except Exception as e:  # the Conflict, or anything unexpected
            outcomes.append(type(e).__name__)

    for _ in range(5):
        handler.create_token(f"admin{uuid.uuid4().hex[:6]}", "admin")
        live = [t for t in handler.tokens() if t.role == "admin" and not t.revoked]
        assert len(live) == 2
        outcomes.clear()
        threads = [threading.Thread(target=revoke, args=(t.id,)) for t in live]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["Conflict", "revoked"], outcomes


# ------------------------------------------------------------------------------------
# problem details


def test_errors_are_problem_details(sqlite_service: RunningService) -> None:
    service = sqlite_service
    anonymous, alice = service.http(), service.http("alice")
    body = is_problem(anonymous.get("/v1/jobs"), 401, "unauthorized")
    assert "Authorization" in body["detail"]
    is_problem(alice.get("/v1/tokens"), 403, "forbidden")
    is_problem(alice.get("/v1/jobs/job-unknown"), 404, "not-found")
    is_problem(anonymous.get("/no/such/path"), 404, "not-found")
    is_problem(anonymous.post("/health"), 405, "method-not-allowed")
    body = is_problem(
        alice.post("/v1/jobs", json={"application": "ray_tracing", "t2": -1}),
        422,
        "invalid-request",
    )
    assert body["errors"] == [{"field": "t2", "message": "must be > 0, got -1"}]
    job = alice.post("/v1/jobs", json=EXAMPLE).json()
    body = is_problem(alice.post("/v1/jobs", json=EXAMPLE), 409, "admission-refused")
    assert body["reason"] == "not_enough_nodes" and body["retryable"] is True
    alice.post(f"/v1/jobs/{job['id']}/release")
    body = is_problem(alice.post(f"/v1/jobs/{job['id']}/release"), 409, "conflict")
    assert "already released" in body["detail"]
    # every type URI resolves to its description on the service itself
    listed = {p["type"]: p for p in anonymous.get("/problems").json()}
    assert set(listed) == {p.uri for p in PROBLEMS.values()}
    for uri, p in listed.items():
        assert anonymous.get(uri).json() == p
    is_problem(anonymous.get("/problems/nope"), 404, "not-found")
    # the Python client reads them as before
    with pytest.raises(Refused) as refused:
        service.alice.submit("ray_tracing", {"interleaving": 0}, t2=0.01)
    assert refused.value.reason == "no_time_match"
    with pytest.raises(Invalid) as invalid:
        service.alice.submit("ray_tracing", t2=-1)
    assert invalid.value.errors[0]["field"] == "t2"


def test_a_long_rejected_value_is_not_echoed_whole(sqlite_service: RunningService) -> None:
    r = sqlite_service.http("alice").post("/v1/jobs", json={"application": "x", "t2": "9" * 10**6})
    body = is_problem(r, 422, "invalid-request")
    assert len(r.content) < 2000 and "9999..." in body["detail"]


# ------------------------------------------------------------------------------------
# documentation and metrics


def test_docs_are_served_without_a_cdn(sqlite_service: RunningService) -> None:
    http = sqlite_service.http()
    for page, assets in (
        ("/docs", ("swagger-ui-bundle.js", "swagger-ui.css", "favicon.png")),
        ("/redoc", ("redoc.standalone.js", "favicon.png")),
    ):
        r = http.get(page)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        assert "http://" not in r.text and "https://" not in r.text, r.text
        for asset in assets:
            assert f"/docs-assets/{asset}" in r.text
            served = http.get(f"/docs-assets/{asset}")
            assert served.status_code == 200 and len(served.content) > 1000
    spec = http.get("/openapi.json").json()
    assert {"Problem", "AdmissionRefusal"} <= set(spec["components"]["schemas"])
    refused = spec["paths"]["/v1/jobs"]["post"]["responses"]["409"]["content"]
    assert refused == {
        "application/problem+json": {"schema": {"$ref": "#/components/schemas/AdmissionRefusal"}}
    }


def test_metrics(sqlite_service: RunningService) -> None:
    service = sqlite_service
    alice = service.http("alice")
    job = alice.post("/v1/jobs", json=EXAMPLE, headers={"Idempotency-Key": "k1"}).json()
    alice.post("/v1/jobs", json=EXAMPLE, headers={"Idempotency-Key": "k1"})  # replayed
    alice.post("/v1/jobs", json=EXAMPLE)  # refused: no nodes left
    alice.get(f"/v1/jobs/{job['id']}")
    alice.get("/v1/jobs/job-unknown")
    service.http().get("/v1/jobs")  # 401, answered before routing
    service.http().get("/wp-login.php")
    r = service.http().get("/metrics")  # no token needed
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, value = line.rsplit(" ", 1)
            name, _, labels = series.partition("{")
            pairs = re.findall(r'(\w+)="([^"]*)"', labels)
            samples[name, frozenset(pairs)] = float(value)

    def sample(name: str, **labels: str) -> float:
        return samples[name, frozenset(labels.items())]

    assert sample("qosnet_http_requests_total", method="POST", route="/v1/jobs", status="201") == 1
    assert sample("qosnet_http_requests_total", method="POST", route="/v1/jobs", status="409") == 1
    assert (
        sample("qosnet_http_requests_total", method="GET", route="/v1/jobs/{job_id}", status="404")
        == 1
    )
    assert sample("qosnet_http_requests_total", method="GET", route="/v1/jobs", status="401") == 1
    assert sample("qosnet_http_requests_total", method="GET", route="unmatched", status="404") == 1
    assert sample("qosnet_admission_decisions_total", outcome="admitted", reason="") == 1
    assert sample("qosnet_admission_decisions_total", outcome="replayed", reason="") == 1
    assert (
        sample("qosnet_admission_decisions_total", outcome="refused", reason="not_enough_nodes")
        == 1
    )
    assert sample("qosnet_database_errors_total", kind="unavailable") == 0
    assert sample("qosnet_cluster_loaded") == 1
    assert (
        sample(
            "qosnet_http_request_duration_seconds_bucket",
            method="POST",
            route="/v1/jobs",
            le="+Inf",
        )
        == 3
    )
    # route templates, not paths: no job id, no tenant
    assert job["id"] not in text and "alice" not in text and "wp-login" not in text

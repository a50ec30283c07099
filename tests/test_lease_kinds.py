"""The lease kinds written once (`qosnet.lease_kinds`): the routes, the client's methods, the
request handler and the CLI commands each cover every operation of every kind, from its
one description, and a client call is the request the route takes.

Mostly without a server: the API's OpenAPI document is read for its routes, and the
client talks to an httpx mock that records each request; the list commands' filters are
tried on a running service (SQLite)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any, get_args

import httpx
import pytest
import typer.main
from fastapi import FastAPI

from qosnet.cli.flows import flow_app
from qosnet.cli.jobs import job_app
from qosnet.client import Client
from qosnet.lease_kinds import FLOW, JOB, KINDS, OPERATIONS, STATES, LeaseApi
from qosnet.service import leases
from qosnet.service.handler import RequestHandler
from qosnet.service.routes import api_router
from qosnet.service.schemas import JobState
from qosnet.service.testing import RunningService

#: How each operation reaches the service: method and path below `/v1/<plural>`.
ROUTES = {
    "create": [("POST", "")],
    "list": [("GET", "")],
    "show": [("GET", "/{id}")],
    "renew": [("POST", "/{id}/renew")],
    "release": [("POST", "/{id}/release"), ("DELETE", "/{id}")],
}
APPS = {JOB: job_app, FLOW: flow_app}


def test_every_operation_is_in_the_description() -> None:
    assert set(ROUTES) == set(OPERATIONS)
    assert {k.noun for k in KINDS} == {"job", "flow"}
    # The service's kinds are the same, in the same order.
    assert tuple(k.api for k in leases.KINDS) == KINDS
    assert leases.JOB.again == "submit it again" and leases.FLOW.again == "reserve it again"


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.noun)
def test_the_routes_cover_every_operation(kind: LeaseApi) -> None:
    app = FastAPI()
    app.include_router(api_router())
    routes = {
        (m.upper(), path)
        for path, item in app.openapi()["paths"].items()
        for m in item
        if path.startswith(kind.path)
    }
    want = {
        (m, kind.path + p.replace("{id}", "{" + kind.id_name + "}"))
        for op in OPERATIONS
        for m, p in ROUTES[op]
    }
    assert routes == want


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.noun)
def test_the_client_and_the_handler_have_every_operation(kind: LeaseApi) -> None:
    for op in OPERATIONS:
        name = kind.method(op)
        method = getattr(Client, name)
        params = list(inspect.signature(method).parameters)
        if op in ("show", "renew", "release"):
            assert params[1] == kind.id_name, (name, params)
        if op == "list":
            assert params[1:] == list(kind.filters())
        if op != "create":  # the handler's create returns more (a job's replay flag)
            assert callable(getattr(RequestHandler, name)), name
    assert Client.renew.__qualname__ == "Client.renew" and Client.flows.__doc__


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.noun)
def test_the_cli_has_a_command_for_every_operation(kind: LeaseApi) -> None:
    group = typer.main.get_group(APPS[kind])
    commands = {kind.create if op == "create" else op for op in OPERATIONS}
    assert commands <= set(group.commands)
    options = {o for p in group.commands["list"].params for o in p.opts}
    assert ("--owner" in options) == kind.owners and "--state" in options


def _recording_client(answer: dict[str, Any]) -> tuple[Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json=answer)

    http = httpx.Client(base_url="http://service", transport=httpx.MockTransport(handle))
    return Client(token="t", http=http), seen


def _job() -> dict[str, Any]:
    return {
        "id": "job-1", "owner": "alice", "state": "active", "application": "a",
        "request": {}, "parameters": {}, "pattern": "ring", "node_count": 0, "nodes": [],
        "bandwidth": 1.0, "expected_time": 1.0, "flows": [], "created_at": 0,
        "lease_seconds": 5.0, "lease_expires": 5,
    }  # fmt: skip


def _flow() -> dict[str, Any]:
    return {
        "id": "flow-1", "owner": "alice", "state": "active", "src": 0, "dst": 1,
        "bandwidth": 1.0, "idt": 2.0, "path": [], "src_port": 0, "dst_port": 0,
        "priority": 0, "created_at": 0, "lease_seconds": 5.0, "lease_expires": 5,
    }  # fmt: skip


@pytest.mark.parametrize(("kind", "one"), [(JOB, _job), (FLOW, _flow)], ids=["job", "flow"])
def test_a_client_call_is_the_request_its_route_takes(kind: LeaseApi, one: Any) -> None:
    client, seen = _recording_client(one())
    getattr(client, kind.method("show"))("x-1")
    getattr(client, kind.method("renew"))("x-1", 7.5)
    getattr(client, kind.method("renew"))("x-1")
    released = getattr(client, kind.method("release"))("x-1")
    assert released.id == one()["id"] and type(released).__name__ == kind.out
    sent = [(r.method, r.url.path, json.loads(r.content or b"null")) for r in seen]
    assert sent == [
        ("GET", f"{kind.path}/x-1", None),
        ("POST", f"{kind.path}/x-1/renew", {"lease_seconds": 7.5}),
        ("POST", f"{kind.path}/x-1/renew", {}),
        ("POST", f"{kind.path}/x-1/release", None),
    ]
    assert all(r.headers["Authorization"] == "Bearer t" for r in seen)

    client, seen = _recording_client({kind.plural: [one(), one()]})
    listed = getattr(client, kind.method("list"))("active", limit=3)
    assert [i.id for i in listed] == [one()["id"]] * 2
    assert dict(seen[0].url.params) == {"state": "active", "limit": "3"}
    with pytest.raises(TypeError):  # a filter the kind's list does not take
        getattr(client, kind.method("list"))(bogus=1)


def test_the_states_are_the_apis() -> None:
    assert get_args(JobState) == STATES


def test_the_list_commands_take_their_kinds_filters(
    make_service: Callable[..., RunningService], sqlite_url: str
) -> None:
    """`qosnet job list` and `qosnet flow list`, made from the description, against a
    running service: --owner (jobs only, an admin's filter) and --state reach the route."""
    from typer.testing import CliRunner

    from qosnet.cli import app

    service = make_service(sqlite_url)
    job = service.alice.submit("ray_tracing", {"interleaving": 0}, t2=1.0)
    flow = service.bob.reserve_flow(0, 5, 1e6)
    env = {"QOSNET_URL": service.url, "QOSNET_TOKEN": service.tokens["root"]}

    def listed(*args: str) -> list[str]:
        r = CliRunner().invoke(app, [*args, "--json"], env=env)
        assert r.exit_code == 0, r.output
        return [item["id"] for item in json.loads(r.stdout)]

    assert listed("job", "list", "--owner", "alice") == [job.id]
    assert listed("job", "list", "--owner", "bob") == []
    assert listed("job", "list", "--state", "released") == []
    assert listed("flow", "list", "--state", "active") == [flow.id]
    assert service.bob.release_flow(flow.id).state == "released"
    assert listed("flow", "list", "--state", "released") == [flow.id]
    refused = CliRunner().invoke(app, ["flow", "list", "--owner", "bob"], env=env)
    assert refused.exit_code == 2 and "--owner" in refused.output
    bad = CliRunner().invoke(app, ["job", "list", "--state", "gone"], env=env)
    assert bad.exit_code == 2 and "must be active, released or expired" in bad.output


def test_the_client_declares_for_type_checkers_exactly_the_methods_it_makes():
    """The lifecycle methods are made at import (`client._lifecycle`) and declared under
    `TYPE_CHECKING` for static type checkers: the declarations' signatures are the made
    ones', parameter by parameter, and the states are the API's."""
    import ast
    import inspect
    import typing
    from pathlib import Path

    from qosnet import client
    from qosnet.lease_kinds import STATES

    assert typing.get_args(client.LeaseState) == STATES
    tree = ast.parse(Path(client.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Client")
    block = next(n for n in cls.body if isinstance(n, ast.If))
    declared = {f.name: f for f in block.body if isinstance(f, ast.FunctionDef)}
    from qosnet.lease_kinds import KINDS

    made = {k.method(op) for k in KINDS for op in ("show", "list", "renew", "release")}
    assert set(declared) == made
    for name, fn in declared.items():
        real = inspect.signature(getattr(client.Client, name))
        names = [a.arg for a in fn.args.args]
        defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + [
            ast.literal_eval(d) for d in fn.args.defaults
        ]
        assert names == list(real.parameters), name
        for p, d in zip(real.parameters.values(), defaults, strict=True):
            assert (p.default is inspect.Parameter.empty and d is None) or p.default == d, name

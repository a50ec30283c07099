"""A small client of the request handler service (`qosnet serve`), on httpx.

    from qosnet.client import Client

    with Client("http://127.0.0.1:8000", token="qosnet_...") as qos:
        job = qos.submit("ray_tracing", {"image_size": 512}, t2=1.0)
        print(job.nodes, job.bandwidth, [f.idt for f in job.flows])
        qos.renew(job.id)
        qos.release(job.id)

Every call returns the response parsed into the service's pydantic models
(`qosnet.service.schemas`) or raises an `ApiError` subclass with the service's message:
`Refused` (admission refused, `.reason`), `Unauthorized`, `Forbidden`, `NotFound`,
`Conflict`, `Invalid` (`.errors` names the fields). Connection failures are retried
(`retries`); `submit` always sends an `Idempotency-Key` (a new one unless given), so a
retried submit never allocates twice.

The jobs' and flows' show, list, renew and release methods (`job`, `jobs`, `renew`,
`release`; `flow`, `flows`, `renew_flow`, `release_flow`) are made from the one description
of each lease kind (`qosnet.lease_kinds`, `_lifecycle` below), as the service's routes and
the CLI's commands are; they are attached to the class when this module is imported, and
declared in the class for static type checkers (`TYPE_CHECKING`; a test compares the two).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from inspect import Parameter
from typing import TYPE_CHECKING, Any, Literal

import httpx

from qosnet.lease_kinds import KINDS, STATES, LeaseApi, function
from qosnet.service.schemas import (
    ApplicationDetail,
    ApplicationSummary,
    ClusterOut,
    FlowReservationOut,
    Health,
    JobOut,
    ReservationList,
    ReservationOut,
    TokenCreated,
    TokenOut,
    Utilisation,
    WhoAmI,
)

__all__ = [
    "ApiError",
    "Client",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "Refused",
    "Unauthorized",
]

DEFAULT_URL = "http://127.0.0.1:8000"

#: A lease's state, as the list methods filter on it (`qosnet.lease_kinds.STATES`).
LeaseState = Literal["active", "released", "expired"]


class ApiError(Exception):
    """The service answered with an error: `status`, its `detail` and the whole `body`."""

    def __init__(self, status: int, detail: str, body: Any = None) -> None:
        super().__init__(f"{status}: {detail}")
        self.status = status
        self.detail = detail
        self.body = body

    @property
    def errors(self) -> list[dict[str, str]]:
        """Per-field problems of a 422: `[{"field": ..., "message": ...}]`."""
        if isinstance(self.body, dict):
            return list(self.body.get("errors") or [])
        return []


class Unauthorized(ApiError):
    """401: no token, or an unknown or revoked one."""


class Forbidden(ApiError):
    """403: the wrong role, or another tenant's job."""


class NotFound(ApiError):
    """404."""


class Conflict(ApiError):
    """409: the job is no longer active, the cluster is in use, ..."""


class Refused(Conflict):
    """409: admission refused. `reason` is `not_enough_bandwidth`, `not_enough_nodes`,
    `no_profile` or `no_time_match`; `retryable` says whether waiting may help."""

    @property
    def reason(self) -> str:
        return str(self.body.get("reason", "")) if isinstance(self.body, dict) else ""

    @property
    def retryable(self) -> bool:
        return bool(self.body.get("retryable")) if isinstance(self.body, dict) else False


class Invalid(ApiError):
    """422: a malformed request; `errors` names the fields."""


_ERRORS: dict[int, type[ApiError]] = {
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    422: Invalid,
}


class Client:
    """The service at `url`, as the holder of `token`.

    `http` may be an existing `httpx.Client` (e.g. FastAPI's TestClient); then `url` and
    `timeout` are its own.
    """

    if TYPE_CHECKING:
        # The lease lifecycle's methods, made by `_lifecycle` when this module is imported,
        # declared for static type checkers only (a test holds these to the made ones).
        def job(self, job_id: str) -> JobOut: ...
        def jobs(
            self,
            state: LeaseState | None = None,
            owner: str | None = None,
            limit: int | None = None,
        ) -> list[JobOut]: ...
        def renew(self, job_id: str, lease_seconds: float | None = None) -> JobOut: ...
        def release(self, job_id: str) -> JobOut: ...
        def flow(self, flow_id: str) -> FlowReservationOut: ...
        def flows(
            self, state: LeaseState | None = None, limit: int | None = None
        ) -> list[FlowReservationOut]: ...
        def renew_flow(
            self, flow_id: str, lease_seconds: float | None = None
        ) -> FlowReservationOut: ...
        def release_flow(self, flow_id: str) -> FlowReservationOut: ...

    def __init__(
        self,
        url: str = DEFAULT_URL,
        token: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 2,
        http: httpx.Client | None = None,
    ) -> None:
        self.token = token
        self.retries = retries
        self._own = http is None
        self.http = http if http is not None else httpx.Client(base_url=url, timeout=timeout)

    def close(self) -> None:
        if self._own:
            self.http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- plumbing ---------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        content: str | bytes | None = None,
    ) -> httpx.Response:
        """Send a request; the response if 2xx, else the matching ApiError."""
        all_headers = dict(headers or {})
        if self.token:
            all_headers["Authorization"] = f"Bearer {self.token}"
        query = {k: v for k, v in (params or {}).items() if v is not None}
        for attempt in range(self.retries + 1):
            try:
                response = self.http.request(
                    method, path, json=json, params=query, headers=all_headers, content=content
                )
                break
            except httpx.TransportError:
                if attempt == self.retries:
                    raise
                time.sleep(0.2 * 2**attempt)
        if response.is_success:
            return response
        try:
            body: Any = response.json()
            detail = str(body.get("detail", response.text)) if isinstance(body, dict) else str(body)
        except ValueError:
            body, detail = response.text, response.text or response.reason_phrase
        kind = _ERRORS.get(response.status_code, ApiError)
        if kind is Conflict and isinstance(body, dict) and "reason" in body:
            kind = Refused
        raise kind(response.status_code, detail, body)

    # ---- jobs and flows: creating one (the rest of their lifecycle is `_lifecycle`'s) -----

    def submit(
        self,
        application: str,
        parameters: Mapping[str, int | float | str] | None = None,
        *,
        t1: float | None = None,
        t2: float | None = None,
        nodes: int | None = None,
        lease_seconds: float | None = None,
        idempotency_key: str | None = None,
    ) -> JobOut:
        """Submit a job; the admitted job with its allocation, or `Refused`."""
        body: dict[str, Any] = {"application": application, "parameters": dict(parameters or {})}
        for name, value in (
            ("t1", t1),
            ("t2", t2),
            ("nodes", nodes),
            ("lease_seconds", lease_seconds),
        ):
            if value is not None:
                body[name] = value
        key = idempotency_key or str(uuid.uuid4())
        r = self.request("POST", "/v1/jobs", json=body, headers={"Idempotency-Key": key})
        return JobOut.model_validate(r.json())

    def reserve_flow(
        self,
        src: int,
        dst: int,
        bandwidth: float,
        *,
        src_port: int = 0,
        dst_port: int = 0,
        priority: int = 0,
        lease_seconds: float | None = None,
    ) -> FlowReservationOut:
        """Reserve one flow, `bandwidth` bytes/s from node `src` to node `dst` (Refused, with
        the reason, if it does not fit)."""
        body: dict[str, Any] = {
            "src": src, "dst": dst, "bandwidth": bandwidth, "src_port": src_port,
            "dst_port": dst_port, "priority": priority,
        }  # fmt: skip
        if lease_seconds is not None:
            body["lease_seconds"] = lease_seconds
        r = self.request("POST", "/v1/flows", json=body)
        return FlowReservationOut.model_validate(r.json())

    def reservations(self, node: int | None = None, dst: int | None = None) -> list[ReservationOut]:
        """Reserved flows; only those sourced at `node`, destined to `dst`, if given."""
        r = self.request("GET", "/v1/reservations", params={"node": node, "dst": dst})
        return ReservationList.model_validate(r.json()).reservations

    def utilisation(self) -> Utilisation:
        return Utilisation.model_validate(self.request("GET", "/v1/utilisation").json())

    # ---- profiles and cluster ---------------------------------------------------------

    def applications(self) -> list[ApplicationSummary]:
        return [
            ApplicationSummary.model_validate(a)
            for a in self.request("GET", "/v1/applications").json()
        ]

    def application(self, name: str) -> ApplicationDetail:
        r = self.request("GET", f"/v1/applications/{name}")
        return ApplicationDetail.model_validate(r.json())

    def profiles(
        self, format: Literal["json", "csv"] = "json", application: str | None = None
    ) -> str:
        """The profiles as text: JSON (the whole store) or CSV (the points)."""
        params = {"format": format, "application": application}
        return self.request("GET", "/v1/profiles", params=params).text

    def upload_profiles(
        self, text: str, format: Literal["json", "csv"] = "json"
    ) -> list[ApplicationSummary]:
        """Install profiles (admin): JSON replaces the store, CSV the named applications'
        curves."""
        kind = "text/csv" if format == "csv" else "application/json"
        r = self.request("PUT", "/v1/profiles", content=text, headers={"Content-Type": kind})
        return [ApplicationSummary.model_validate(a) for a in r.json()]

    def cluster(self) -> ClusterOut:
        return ClusterOut.model_validate(self.request("GET", "/v1/cluster").json())

    def set_cluster(self, toml: str, name: str = "cluster") -> ClusterOut:
        """Install a network (admin), as qosnet TOML."""
        r = self.request("PUT", "/v1/cluster", json={"name": name, "toml": toml})
        return ClusterOut.model_validate(r.json())

    # ---- tokens and service -----------------------------------------------------------

    def whoami(self) -> WhoAmI:
        return WhoAmI.model_validate(self.request("GET", "/v1/whoami").json())

    def create_token(self, name: str, role: Literal["admin", "tenant"] = "tenant") -> TokenCreated:
        r = self.request("POST", "/v1/tokens", json={"name": name, "role": role})
        return TokenCreated.model_validate(r.json())

    def tokens(self) -> list[TokenOut]:
        return [TokenOut.model_validate(t) for t in self.request("GET", "/v1/tokens").json()]

    def revoke_token(self, token_id: int) -> TokenOut:
        return TokenOut.model_validate(self.request("DELETE", f"/v1/tokens/{token_id}").json())

    def health(self) -> Health:
        return Health.model_validate(self.request("GET", "/health").json())


def _lifecycle(kind: LeaseApi) -> None:
    """Give `Client` the lease lifecycle of `kind` (`qosnet.lease_kinds`): show, list,
    renew and release, named as `kind.method` says (`job`, `jobs`, `renew`, `release`;
    `flow`, `flows`, `renew_flow`, `release_flow`), each with its own signature."""
    out, listing = kind.models()

    def arg(name: str, annotation: Any, default: Any = Parameter.empty) -> Parameter:
        return Parameter(
            name, Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation, default=default
        )

    this, lease_id = arg("self", Client), arg(kind.id_name, str)

    def one(self: Client, method: str, lease_id: str, op: str = "", **kw: Any) -> Any:
        url = f"{kind.path}/{lease_id}" + (f"/{op}" if op else "")
        return out.model_validate(self.request(method, url, **kw).json())

    def show(self: Client, **kw: Any) -> Any:
        return one(self, "GET", kw[kind.id_name])

    def listed(self: Client, **filters: Any) -> Any:
        r = self.request("GET", kind.path, params=filters)
        return getattr(listing.model_validate(r.json()), kind.plural)

    def renew(self: Client, lease_seconds: float | None, **kw: Any) -> Any:
        body = {} if lease_seconds is None else {"lease_seconds": lease_seconds}
        return one(self, "POST", kw[kind.id_name], "renew", json=body)

    def release(self: Client, **kw: Any) -> Any:
        return one(self, "POST", kw[kind.id_name], "release")

    state = Literal[STATES] | None  # type: ignore[valid-type]
    filters = {"state": state, "owner": str | None, "limit": int | None}
    made: dict[str, tuple[list[Parameter], Callable[..., Any], str]] = {
        "show": ([this, lease_id], show, f"The {kind.title}."),
        "list": (
            [this, *(arg(f, filters[f], None) for f in kind.filters())],
            listed,
            f"{kind.heading}, newest first: the caller's own, or everyone's for an admin.",
        ),
        "renew": (
            [this, lease_id, arg("lease_seconds", float | None, None)],
            renew,
            f"Extend the {kind.noun}'s lease: it now ends `lease_seconds` (default: the "
            "service's) from now.",
        ),
        "release": ([this, lease_id], release, f"Release the {kind.noun}'s reservation now."),
    }
    for op, (params, run, doc) in made.items():
        name = kind.method(op)
        returns = list[out] if op == "list" else out  # type: ignore[valid-type]
        method = function(name, params, run, doc, returns)
        method.__qualname__, method.__module__ = f"Client.{name}", __name__
        setattr(Client, name, method)


for _kind in KINDS:
    _lifecycle(_kind)

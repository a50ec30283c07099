"""The HTTP API of the request handler (FastAPI; OpenAPI docs at /docs and /openapi.json).

`create_app(settings)` opens the database, seeds the cluster and profiles if none are
stored, and rebuilds the allocator from the committed live jobs. A background task
(`Settings.sweep_interval`) ends the jobs whose lease has passed; so does every API
request, before it is handled.

Errors are JSON `{"detail": "...", "errors": [{"field": ..., "message": ...}]}`:
401 without or with a bad token, 403 for the wrong role or another tenant's job, 404 for
an unknown job, 409 for a conflict (a refused admission says why in `reason`), 422 for a
malformed request, naming the field.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Depends, FastAPI, Header, Path, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from sqlalchemy.exc import IntegrityError, OperationalError

from qosnet import __version__
from qosnet.middleware.errors import _reason as pydantic_reason
from qosnet.middleware.profile_io import to_csv, to_json
from qosnet.middleware.profiles import Application, ProfileStore, knee
from qosnet.service.auth import Admin, Caller
from qosnet.service.handler import Invalid, NotFound, RequestHandler, ServiceError
from qosnet.service.schemas import (
    AdmissionRefusal,
    ApplicationDetail,
    ApplicationSummary,
    ClusterIn,
    ClusterOut,
    CurveOut,
    ErrorOut,
    FieldError,
    Health,
    JobList,
    JobOut,
    JobState,
    LinkOut,
    NicOut,
    PointOut,
    RenewJob,
    ReservationList,
    SubmitJob,
    TokenCreate,
    TokenCreated,
    TokenOut,
    Utilisation,
    WhoAmI,
)
from qosnet.service.settings import Settings

__all__ = ["create_app"]

log = logging.getLogger("qosnet.service")

#: Largest profile or cluster upload, bytes.
MAX_UPLOAD = 16 * 2**20

_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorOut, "description": "No token, or an unknown or revoked one."},
    403: {"model": ErrorOut, "description": "Wrong role, or another tenant's job."},
    422: {"model": ErrorOut, "description": "Malformed request; `errors` names the fields."},
}
_JOB_ERRORS: dict[int | str, dict[str, Any]] = {
    **_ERRORS,
    404: {"model": ErrorOut, "description": "No such job."},
    409: {"model": ErrorOut, "description": "The job is not active (released or expired)."},
}


def _handler(request: Request) -> RequestHandler:
    handler: RequestHandler = request.app.state.handler
    return handler


def _lazy_expiry(request: Request) -> None:
    """Every API request first ends the jobs whose lease has passed."""
    _handler(request).expire_due()


Handler = Annotated[RequestHandler, Depends(_handler)]
JobId = Annotated[str, Path(min_length=1, max_length=40, description="A job's id.")]


# --------------------------------------------------------------------------------------
# error bodies


def _where(loc: tuple[Any, ...]) -> str:
    if not loc:
        return "body"
    kind, rest = loc[0], loc[1:]
    path = ""
    for part in rest:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    if kind == "body":
        return path or "body"
    if kind == "header":
        return "-".join(w.capitalize() for w in str(path).split("-")) + " header"
    if kind == "query":
        return f"query parameter {path}"
    if kind == "path":
        return f"path parameter {path}"
    return path or str(kind)


def _validation_errors(exc: RequestValidationError) -> list[FieldError]:
    out: list[FieldError] = []
    for err in exc.errors():
        loc = tuple(err.get("loc", ()))
        kind = err.get("type", "")
        if kind == "json_invalid":
            where = "body"
            reason = f"is not valid JSON: {err.get('ctx', {}).get('error', err.get('msg'))}"
        else:
            if kind == "missing" and loc == ("body",):
                reason = "is required (a JSON object)"
            else:
                reason = pydantic_reason(err)
                if kind != "missing" and "input" in err and not isinstance(err["input"], dict):
                    reason += f", got {err['input']!r}"
            where = _where(loc)
        out.append(FieldError(field=where, message=reason))
    return out


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse(exc.body(), status_code=exc.status, headers=headers)

    @app.exception_handler(IntegrityError)
    async def _integrity(request: Request, exc: IntegrityError) -> JSONResponse:
        log.warning("conflicting write: %s", str(exc).splitlines()[0])
        return JSONResponse(
            {"detail": "a concurrent change conflicted with this request; retry it"},
            status_code=409,
        )

    @app.exception_handler(OperationalError)
    async def _database_down(request: Request, exc: OperationalError) -> JSONResponse:
        log.error("database unavailable: %s", str(exc).splitlines()[0])
        return JSONResponse(
            {"detail": "the database is unavailable; retry later"},
            status_code=503,
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(exc)
        detail = "; ".join(f"{e.field}: {e.message}" for e in errors)
        return JSONResponse(
            {"detail": detail, "errors": [e.model_dump() for e in errors]}, status_code=422
        )


# --------------------------------------------------------------------------------------
# the app


def create_app(
    settings: Settings | None = None, *, handler: RequestHandler | None = None
) -> FastAPI:
    """The FastAPI application over `settings` (or an already started `handler`)."""
    settings = settings or (handler.settings if handler else Settings())
    if handler is None:
        handler = RequestHandler(settings)
        handler.start()
    interval = settings.sweep_interval

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        task = asyncio.create_task(_sweeper(handler, interval)) if interval > 0 else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with suppress(asyncio.CancelledError):
                    await task

    app = FastAPI(
        title="qosnet request handler",
        version=__version__,
        summary="QoS middleware of document 001: admit jobs against application profiles "
        "and reserve per-flow bandwidth on the cluster's links.",
        lifespan=lifespan,
    )
    app.state.handler = handler
    app.state.settings = settings
    _install_error_handlers(app)

    @app.get("/health", tags=["service"])
    def health(h: Handler) -> Health:
        """Liveness: the database answers."""
        return Health(status="ok", database=h.dialect, revision=h.revision())

    app.include_router(_api())
    return app


async def _sweeper(handler: RequestHandler, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        try:
            await anyio.to_thread.run_sync(handler.expire_due)
        except Exception:
            log.exception("lease sweeper failed; retrying in %g s", interval)


def _api() -> APIRouter:
    api = APIRouter(prefix="/v1", dependencies=[Depends(_lazy_expiry)])

    # ---- jobs ---------------------------------------------------------------------

    @api.post(
        "/jobs",
        tags=["jobs"],
        status_code=201,
        response_model=JobOut,
        responses={
            **_ERRORS,
            200: {"model": JobOut, "description": "Replay of an Idempotency-Key: that job."},
            409: {"model": AdmissionRefusal, "description": "Admission refused, with reason."},
        },
    )
    def submit_job(
        body: SubmitJob,
        who: Caller,
        h: Handler,
        response: Response,
        idempotency_key: Annotated[
            str | None,
            Header(
                alias="Idempotency-Key",
                min_length=1,
                max_length=255,
                pattern=r"^[\x21-\x7e]+$",
                description="Retries with the same key (and body) return the same job.",
            ),
        ] = None,
    ) -> JobOut:
        """Submit a job request: admitted with its allocation (nodes, bandwidth and IDT per
        flow, expected time) and a lease, or refused (409) with the reason."""
        job, created = h.submit(who, body, idempotency_key)
        response.headers["Location"] = f"/v1/jobs/{job.id}"
        if not created:
            response.status_code = 200
            response.headers["Idempotent-Replayed"] = "true"
        return job

    @api.get("/jobs", tags=["jobs"], responses=_ERRORS)
    def list_jobs(
        who: Caller,
        h: Handler,
        state: Annotated[JobState | None, Query(description="Only jobs in this state.")] = None,
        owner: Annotated[str | None, Query(description="Only this owner's (admin).")] = None,
        limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
    ) -> JobList:
        """Jobs, newest first: a tenant's own, or everyone's for an admin."""
        return JobList(jobs=h.jobs(who, state, owner, limit))

    @api.get("/jobs/{job_id}", tags=["jobs"], responses=_JOB_ERRORS)
    def get_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
        return h.job(who, job_id)

    @api.post("/jobs/{job_id}/release", tags=["jobs"], responses=_JOB_ERRORS)
    def release_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
        """Release the job's reservation now."""
        return h.release(who, job_id)

    @api.delete("/jobs/{job_id}", tags=["jobs"], responses=_JOB_ERRORS)
    def delete_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
        """Same as POST /v1/jobs/{job_id}/release."""
        return h.release(who, job_id)

    @api.post("/jobs/{job_id}/renew", tags=["jobs"], responses=_JOB_ERRORS)
    def renew_job(job_id: JobId, who: Caller, h: Handler, body: RenewJob | None = None) -> JobOut:
        """Extend the lease: it now ends `lease_seconds` (default: the service's) from now."""
        return h.renew(who, job_id, body.lease_seconds if body else None)

    @api.get("/reservations", tags=["reservations"], responses=_ERRORS)
    def list_reservations(
        who: Caller,
        h: Handler,
        node: Annotated[
            int | None,
            Query(ge=0, description="Only flows sourced at this node: its NIC's IDT table."),
        ] = None,
    ) -> ReservationList:
        """Every reserved flow of the live jobs (a tenant's own), with its IDT."""
        return ReservationList(reservations=h.reservations(who, node))

    @api.get("/utilisation", tags=["reservations"], responses=_ERRORS)
    def utilisation(who: Caller, h: Handler) -> Utilisation:
        """Reserved bandwidth per switch port and per NIC against capacity; free nodes."""
        links, nics, free, active, cluster = h.utilisation()
        out = [
            LinkOut(
                router=u.router,
                port=u.port,
                to=u.to,
                to_id=u.to_id,
                capacity=u.capacity,
                reserved=u.reserved,
                free=u.capacity - u.reserved,
                utilisation=u.reserved / u.capacity if u.capacity > 0 else 0.0,
            )
            for u in links
        ]
        nic_out = [
            NicOut(node=n.node, capacity=n.capacity, sourced=n.sourced, sunk=n.sunk) for n in nics
        ]
        fractions = [x.utilisation for x in out] + [
            max(n.sourced, n.sunk) / n.capacity for n in nic_out if n.capacity > 0
        ]
        return Utilisation(
            nodes=cluster.nodes,
            free_nodes=sorted(free),
            active_jobs=active,
            link_bandwidth=cluster.link_bandwidth,
            max_utilisation=max(fractions, default=0.0),
            links=out,
            nics=nic_out,
        )

    # ---- profiles -----------------------------------------------------------------

    @api.get(
        "/profiles",
        tags=["profiles"],
        responses={
            **_ERRORS,
            200: {
                "content": {"application/json": {}, "text/csv": {}},
                "description": "The profile store as JSON, or its points as CSV.",
            },
        },
        response_class=Response,
    )
    def download_profiles(
        who: Caller,
        h: Handler,
        format: Annotated[Literal["json", "csv"], Query()] = "json",
        application: Annotated[str | None, Query(description="Only this application.")] = None,
    ) -> Response:
        """Download the profiles: JSON (applications and curves) or CSV (points only)."""
        store = h.profiles()
        if application is not None:
            store = _only(store, application)
        if format == "csv":
            return PlainTextResponse(to_csv(store), media_type="text/csv")
        return Response(to_json(store), media_type="application/json")

    @api.put(
        "/profiles",
        tags=["profiles"],
        responses=_ERRORS,
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {"type": "object", "description": "A profile store."}
                    },
                    "text/csv": {"schema": {"type": "string"}},
                },
                "description": "JSON: the whole store (replaces it). CSV: points of known "
                "applications (replaces those applications' curves).",
            }
        },
    )
    async def upload_profiles(
        request: Request,
        who: Admin,
        h: Handler,
        format: Annotated[
            Literal["json", "csv"] | None,
            Query(description="Body format (default: from Content-Type)."),
        ] = None,
    ) -> list[ApplicationSummary]:
        """Upload profiles (admin). JSON replaces the whole store; CSV replaces the curves
        of the applications it names, which must exist already."""
        text = await _text_body(request)
        kind = format or ("csv" if "csv" in request.headers.get("content-type", "") else "json")
        if kind == "csv":
            store = await anyio.to_thread.run_sync(h.set_profiles_csv, text)
        else:
            store = await anyio.to_thread.run_sync(h.set_profiles_json, text)
        return _summaries(store)

    @api.get("/applications", tags=["profiles"], responses=_ERRORS)
    def list_applications(who: Caller, h: Handler) -> list[ApplicationSummary]:
        """The applications the service can schedule."""
        return _summaries(h.profiles())

    @api.get(
        "/applications/{name}",
        tags=["profiles"],
        responses={**_ERRORS, 404: {"model": ErrorOut}},
    )
    def get_application(name: str, who: Caller, h: Handler) -> ApplicationDetail:
        """An application with its curves and their knee points (document 001 §3.3)."""
        store = h.profiles()
        app = _application(store, name)
        curves = [
            CurveOut(
                parameters=dict(c.parameters),
                nodes=c.nodes,
                knee=PointOut(**knee(c).model_dump()),
                points=[PointOut(**p.model_dump()) for p in c.points],
            )
            for c in store.curves
            if c.application == name
        ]
        return ApplicationDetail(
            name=app.name,
            parameters={k: list(v) for k, v in app.parameters.items()},
            pattern=str(app.pattern),
            description=app.description,
            curves=curves,
        )

    @api.put("/applications/{name}", tags=["profiles"], responses=_ERRORS)
    def put_application(
        name: str, body: dict[str, Any], who: Admin, h: Handler
    ) -> ApplicationSummary:
        """Declare or redeclare an application (admin): `{"name", "parameters": {name:
        [values]}, "pattern", "description"}`. Its curves come by a profile upload."""
        h.put_application(name, body)
        return next(s for s in _summaries(h.profiles()) if s.name == name)

    @api.delete(
        "/applications/{name}",
        tags=["profiles"],
        status_code=204,
        responses={**_ERRORS, 404: {"model": ErrorOut}},
    )
    def delete_application(name: str, who: Admin, h: Handler) -> Response:
        """Remove an application and its curves (admin); running jobs keep their allocation."""
        h.delete_application(name)
        return Response(status_code=204)

    # ---- cluster ------------------------------------------------------------------

    @api.get("/cluster", tags=["cluster"], responses=_ERRORS)
    def get_cluster(who: Caller, h: Handler) -> ClusterOut:
        """The installed network (a qosnet TOML configuration)."""
        c = h.current_cluster()
        return ClusterOut(
            name=c.name,
            nodes=c.nodes,
            link_bandwidth=c.link_bandwidth,
            toml=c.text,
            description=c.to_dict(),
        )

    @api.put(
        "/cluster",
        tags=["cluster"],
        responses={**_ERRORS, 409: {"model": ErrorOut, "description": "Jobs are active."}},
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": ClusterIn.model_json_schema()},
                    "application/toml": {"schema": {"type": "string"}},
                },
            }
        },
    )
    async def put_cluster(
        request: Request,
        who: Admin,
        h: Handler,
        name: Annotated[
            str | None, Query(min_length=1, max_length=200, description="For a TOML body.")
        ] = None,
    ) -> ClusterOut:
        """Install a network (admin): a qosnet TOML body, or JSON `{"name", "toml"}`.
        Refused (409) while jobs hold reservations."""
        text = await _text_body(request)
        if "json" in request.headers.get("content-type", ""):
            from pydantic import ValidationError

            try:
                body = ClusterIn.model_validate_json(text)
            except ValidationError as e:
                raise RequestValidationError(
                    [{**err, "loc": ("body", *err["loc"])} for err in e.errors()]
                ) from None
            toml, cluster_name = body.toml, name or body.name
        else:
            toml, cluster_name = text, name or "cluster"
        c = await anyio.to_thread.run_sync(h.set_cluster, toml, cluster_name)
        return ClusterOut(
            name=c.name,
            nodes=c.nodes,
            link_bandwidth=c.link_bandwidth,
            toml=c.text,
            description=c.to_dict(),
        )

    # ---- tokens -------------------------------------------------------------------

    @api.get("/whoami", tags=["tokens"], responses=_ERRORS)
    def whoami(who: Caller) -> WhoAmI:
        return WhoAmI(name=who.name, role=who.role)

    @api.post("/tokens", tags=["tokens"], status_code=201, responses=_ERRORS)
    def create_token(body: TokenCreate, who: Admin, h: Handler) -> TokenCreated:
        """Create a token (admin). The secret is in this response only."""
        out, secret = h.create_token(body.name, body.role)
        return TokenCreated(**out.model_dump(), token=secret)

    @api.get("/tokens", tags=["tokens"], responses=_ERRORS)
    def list_tokens(who: Admin, h: Handler) -> list[TokenOut]:
        return h.tokens()

    @api.delete("/tokens/{token_id}", tags=["tokens"], responses=_JOB_ERRORS)
    def revoke_token(token_id: int, who: Admin, h: Handler) -> TokenOut:
        """Revoke a token (admin); the last admin token cannot be revoked (409)."""
        return h.revoke_token(token_id)

    return api


async def _text_body(request: Request) -> str:
    raw = await request.body()
    if len(raw) > MAX_UPLOAD:
        raise Invalid(f"body: must be at most {MAX_UPLOAD} bytes, got {len(raw)}")
    if not raw.strip():
        raise Invalid("body: is required", [FieldError(field="body", message="is required")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Invalid(f"body: must be UTF-8 text ({e})") from None


def _application(store: ProfileStore, name: str) -> Application:
    for app in store.applications:
        if app.name == name:
            return app
    known = ", ".join(a.name for a in store.applications) or "none"
    raise NotFound(f"application {name!r} does not exist (known: {known})")


def _only(store: ProfileStore, name: str) -> ProfileStore:
    app = _application(store, name)
    return ProfileStore(
        applications=(app,), curves=tuple(c for c in store.curves if c.application == name)
    )


def _summaries(store: ProfileStore) -> list[ApplicationSummary]:
    return [
        ApplicationSummary(
            name=a.name,
            parameters={k: list(v) for k, v in a.parameters.items()},
            pattern=str(a.pattern),
            description=a.description,
            curves=sum(1 for c in store.curves if c.application == a.name),
        )
        for a in store.applications
    ]

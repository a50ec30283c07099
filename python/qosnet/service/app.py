"""The HTTP API of the request handler (FastAPI; OpenAPI docs at /docs, /redoc and
/openapi.json).

`create_app(settings)` opens the database, seeds the cluster and profiles if none are
stored, and rebuilds the allocator from the committed live jobs. A background task
(`Settings.sweep_interval`) ends the jobs whose lease has passed; so does every API
request, before it is handled. The routes live in `routes` (a module per resource).

A request passes, outermost first: `MetricsMiddleware` (counts and times it),
`BodyLimitMiddleware` (413 above `Settings.max_body_bytes`, counted as it streams),
`AuthMiddleware` (401 for `/v1` without a valid token, before the body is read), then the
routes.

Errors are RFC 9457 problem details (`application/problem+json`, see `problems`):
`{"type": "/problems/not-found", "title", "status", "detail", "errors": [{"field",
"message"}]}`. 401 without or with a bad token, 403 for the wrong role or another
tenant's job, 404 for an unknown job, 409 for a conflict (a refused admission says why in
`reason`), 413 for a body over the cap, 422 for a malformed request naming the field, 503
while the database or the cluster is unavailable. Never a 500 by design: one is a bug,
answered as `internal-error` and logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, IntegrityError, OperationalError
from starlette.exceptions import HTTPException

from qosnet import __version__
from qosnet.middleware.errors import _reason as pydantic_reason
from qosnet.service.auth import AuthMiddleware
from qosnet.service.docs import DOC_TEMPLATES, install_docs
from qosnet.service.errors import ServiceError
from qosnet.service.handler import RequestHandler
from qosnet.service.limits import BodyLimitMiddleware
from qosnet.service.metrics import MetricsMiddleware, ServiceMetrics, metrics_router
from qosnet.service.problems import kind_for_status, problem_response, problems_router
from qosnet.service.routes import api_router
from qosnet.service.routes import service as service_routes
from qosnet.service.schemas import PATTERN_MEANING, AdmissionRefusal, FieldError, Problem
from qosnet.service.settings import Settings

__all__ = ["create_app"]

log = logging.getLogger("qosnet.service")


def create_app(
    settings: Settings | None = None, *, handler: RequestHandler | None = None
) -> FastAPI:
    """The FastAPI application over `settings` (or an already started `handler`)."""
    settings = settings or (handler.settings if handler else Settings())
    if handler is None:
        handler = RequestHandler(settings)
        try:
            handler.start()
        except BaseException:
            handler.close()  # its pool's connections, not left for the garbage collector
            raise
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
        docs_url=None,
        redoc_url=None,
    )
    metrics = ServiceMetrics()
    metrics.watch_cluster(lambda: handler.cluster_error is None)
    app.state.handler = handler
    app.state.settings = settings
    app.state.metrics = metrics
    _install_error_handlers(app, metrics)
    # added innermost first: a request meets metrics, then the body cap, then the token
    app.add_middleware(AuthMiddleware, handler=handler, metrics=metrics)
    app.add_middleware(BodyLimitMiddleware, max_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware, metrics=metrics, templates=lambda: _templates(app))

    app.include_router(service_routes.router)
    app.include_router(metrics_router())
    app.include_router(problems_router())
    app.include_router(api_router())
    install_docs(app)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return app


def _templates(app: FastAPI) -> list[str]:
    """Every path template the app answers, for the metrics' `route` label."""
    documented = list(app.openapi()["paths"])
    return [*documented, app.openapi_url or "/openapi.json", *DOC_TEMPLATES]


async def _sweeper(handler: RequestHandler, interval: float) -> None:
    while True:
        await asyncio.sleep(interval)
        try:
            await anyio.to_thread.run_sync(handler.expire_due)
        except Exception:
            log.exception("lease sweeper failed; retrying in %g s", interval)


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, plus the problem schemas the error responses refer to."""
    if app.openapi_schema is None:
        spec = get_openapi(
            title=app.title,
            version=app.version,
            summary=app.summary,
            routes=app.routes,
        )
        schemas = spec.setdefault("components", {}).setdefault("schemas", {})
        for model in (Problem, AdmissionRefusal):
            schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
            for name, sub in schema.pop("$defs", {}).items():
                schemas.setdefault(name, sub)
            schemas[model.__name__] = schema
        app.openapi_schema = spec
    return app.openapi_schema


# --------------------------------------------------------------------------------------
# error handlers: every error a problem document


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


#: The longest echo of a rejected value in an error message.
_ECHO = 200


def _echo(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= _ECHO else shown[:_ECHO] + "..."  # not a 10 MB value whole


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
            elif kind == "string_pattern_mismatch":
                pattern = err.get("ctx", {}).get("pattern")
                reason = PATTERN_MEANING.get(pattern, pydantic_reason(err))
                reason += f", got {_echo(err.get('input'))}"
            else:
                reason = pydantic_reason(err)
                if kind != "missing" and "input" in err and not isinstance(err["input"], dict):
                    reason += f", got {_echo(err['input'])}"
            where = _where(loc)
        out.append(FieldError(field=where, message=reason))
    return out


def _install_error_handlers(app: FastAPI, metrics: ServiceMetrics) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        if exc.status == 503:
            headers = {"Retry-After": "30"}
        return problem_response(
            exc.kind, exc.detail, status=exc.status, headers=headers, **exc.extensions()
        )

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = _validation_errors(exc)
        detail = "; ".join(f"{e.field}: {e.message}" for e in errors)
        return problem_response("invalid-request", detail, errors=[e.model_dump() for e in errors])

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        # Starlette's own (404 no route, 405, 413 from the body cap, 400 unreadable body)
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return problem_response(
            kind_for_status(exc.status_code),
            detail,
            status=exc.status_code,
            headers=dict(exc.headers or {}) or None,
        )

    @app.exception_handler(IntegrityError)
    async def _integrity(request: Request, exc: IntegrityError) -> JSONResponse:
        metrics.database_error("conflict")
        log.warning("conflicting write: %s", str(exc).splitlines()[0])
        return problem_response(
            "concurrent-change", "a concurrent change conflicted with this request; retry it"
        )

    @app.exception_handler(DataError)
    async def _data(request: Request, exc: DataError) -> JSONResponse:
        # The parameters are typed to the columns, so this is a gap in that typing: a
        # client error all the same, and logged to be closed.
        metrics.database_error("data")
        log.error("the database refused a value: %s", str(exc).splitlines()[0])
        return problem_response(
            "invalid-request", "a value in the request does not fit the database"
        )

    @app.exception_handler(OperationalError)
    async def _database_down(request: Request, exc: OperationalError) -> JSONResponse:
        metrics.database_error("unavailable")
        log.error("database unavailable: %s", str(exc).splitlines()[0])
        return problem_response(
            "database-unavailable",
            "the database is unavailable; retry later",
            headers={"Retry-After": "5"},
        )

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("unhandled error in %s %s", request.method, request.url.path, exc_info=exc)
        return problem_response(
            "internal-error", "an internal error; it is logged, and the request may be retried"
        )

"""`/v1/profiles` and `/v1/applications`: the applications' profiles (document 001 §3.3)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import anyio
from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import PlainTextResponse

from qosnet.middleware.profile_io import to_csv, to_json
from qosnet.middleware.profiles import Application, ProfileStore, knee
from qosnet.service.auth import Admin, Caller
from qosnet.service.errors import NotFound
from qosnet.service.routes.common import (
    AUTH_ERRORS,
    ApplicationName,
    Handler,
    problems,
    text_body,
)
from qosnet.service.schemas import (
    ApplicationDetail,
    ApplicationSummary,
    CurveOut,
    PointOut,
)

__all__ = ["router"]

router = APIRouter(tags=["profiles"])

_APP_ERRORS = {**AUTH_ERRORS, **problems(404)}


@router.get(
    "/profiles",
    responses={
        **AUTH_ERRORS,
        **problems(404),
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
    application: Annotated[
        str | None, Query(max_length=200, description="Only this application.")
    ] = None,
) -> Response:
    """Download the profiles: JSON (applications and curves) or CSV (points only)."""
    store = h.profiles()
    if application is not None:
        store = _only(store, application)
    if format == "csv":
        return PlainTextResponse(to_csv(store), media_type="text/csv")
    return Response(to_json(store), media_type="application/json")


@router.put(
    "/profiles",
    responses=AUTH_ERRORS,
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
    text = await text_body(request)
    kind = format or ("csv" if "csv" in request.headers.get("content-type", "") else "json")
    if kind == "csv":
        store = await anyio.to_thread.run_sync(h.set_profiles_csv, text)
    else:
        store = await anyio.to_thread.run_sync(h.set_profiles_json, text)
    return _summaries(store)


@router.get("/applications", responses=AUTH_ERRORS)
def list_applications(who: Caller, h: Handler) -> list[ApplicationSummary]:
    """The applications the service can schedule."""
    return _summaries(h.profiles())


@router.get("/applications/{name}", responses=_APP_ERRORS)
def get_application(name: ApplicationName, who: Caller, h: Handler) -> ApplicationDetail:
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


@router.put("/applications/{name}", responses=AUTH_ERRORS)
def put_application(
    name: ApplicationName, body: dict[str, Any], who: Admin, h: Handler
) -> ApplicationSummary:
    """Declare or redeclare an application (admin): `{"name", "parameters": {name:
    [values]}, "pattern", "description"}`. Its curves come by a profile upload."""
    h.put_application(name, body)
    return next(s for s in _summaries(h.profiles()) if s.name == name)


@router.delete("/applications/{name}", status_code=204, responses=_APP_ERRORS)
def delete_application(name: ApplicationName, who: Admin, h: Handler) -> Response:
    """Remove an application and its curves (admin); running jobs keep their allocation."""
    h.delete_application(name)
    return Response(status_code=204)


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

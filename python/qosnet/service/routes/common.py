"""What the route modules share: dependencies, parameter types, error responses, bodies.

Path and query parameters are typed to what the database columns hold, so that no value
reaches a query the database would refuse (issue 21: a token id past 64 bits, or past
PostgreSQL's 32-bit column, and a NUL byte in a job id or an owner filter were 500s).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request

from qosnet.service.errors import Invalid
from qosnet.service.handler import RequestHandler
from qosnet.service.metrics import ServiceMetrics
from qosnet.service.problems import MEDIA_TYPE, PROBLEMS
from qosnet.service.schemas import (
    APPLICATION_NAME,
    APPLICATION_NAME_MAX,
    CLUSTER_NAME,
    PRINCIPAL_NAME,
)
from qosnet.service.tokens import MAX_TOKEN_ID

__all__ = [
    "ApplicationName",
    "ClusterName",
    "Handler",
    "Metrics",
    "OwnerFilter",
    "AUTH_ERRORS",
    "JOB_ERRORS",
    "TokenId",
    "problem",
    "problems",
    "text_body",
]


def _handler(request: Request) -> RequestHandler:
    handler: RequestHandler = request.app.state.handler
    return handler


def _metrics(request: Request) -> ServiceMetrics:
    metrics: ServiceMetrics = request.app.state.metrics
    return metrics


Handler = Annotated[RequestHandler, Depends(_handler)]
Metrics = Annotated[ServiceMetrics, Depends(_metrics)]

TokenId = Annotated[int, Path(ge=1, le=MAX_TOKEN_ID, description="A token's id (a 32-bit column).")]
ApplicationName = Annotated[
    str,
    Path(
        min_length=1,
        max_length=APPLICATION_NAME_MAX,
        pattern=APPLICATION_NAME,
        description="An application: a letter, then letters, digits or underscores.",
    ),
]
OwnerFilter = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=100,
        pattern=PRINCIPAL_NAME,
        description="Only this owner's jobs (admin; a tenant may name only itself).",
    ),
]
ClusterName = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=200,
        pattern=CLUSTER_NAME,
        description="The cluster's name, for a TOML body.",
    ),
]


def problem(
    status: int, description: str | None = None, model: str = "Problem"
) -> dict[int | str, dict[str, Any]]:
    """An OpenAPI response for an error status: `application/problem+json` with `model`
    (`Problem`, or `AdmissionRefusal`; `app` puts both in the document's schemas)."""
    titles = "; ".join(p.title for p in PROBLEMS.values() if p.status == status)
    schema = {"$ref": f"#/components/schemas/{model}"}
    return {
        status: {
            "description": description or titles or "Error.",
            "content": {MEDIA_TYPE: {"schema": schema}},
        }
    }


def problems(*statuses: int) -> dict[int | str, dict[str, Any]]:
    out: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        out.update(problem(status))
    return out


#: Every route that takes a token may answer these.
AUTH_ERRORS = problems(401, 403, 413, 422, 503)
#: ... and a route on one job these.
JOB_ERRORS = {**AUTH_ERRORS, **problems(404, 409)}


async def text_body(request: Request) -> str:
    """The body as UTF-8 text (its size is capped by `limits.BodyLimitMiddleware`)."""
    raw = await request.body()
    if not raw.strip():
        raise Invalid.field("body", "is required")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Invalid.field("body", f"must be UTF-8 text ({e.reason} at byte {e.start})") from None
    if "\x00" in text:  # no text format takes it, and PostgreSQL cannot store it
        raise Invalid.field("body", "must not contain NUL characters")
    return text

"""Error bodies as RFC 9457 problem details (`application/problem+json`).

Every error the API answers has a `type` naming its kind, stable across versions, so
clients can branch on it rather than on the English `detail`. The type URIs are relative
references with the full path (`/problems/not-found`), as RFC 9457 §3.1.1 allows: they
resolve against the service's own URL, where `GET /problems/{kind}` describes the kind.

Bodies keep the members clients already read as extensions: `detail` (one line naming
what is wrong), `errors` (422: `[{"field", "message"}]`), `reason` and `retryable` (a
refused admission).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path
from fastapi.responses import JSONResponse

__all__ = [
    "MEDIA_TYPE",
    "PROBLEMS",
    "ProblemType",
    "kind_for_status",
    "problem_body",
    "problem_response",
    "problems_router",
]

MEDIA_TYPE = "application/problem+json"


@dataclass(frozen=True)
class ProblemType:
    """One kind of error: its slug (the last segment of its type URI) and HTTP status."""

    slug: str
    status: int
    title: str
    description: str

    @property
    def uri(self) -> str:
        return f"/problems/{self.slug}"


PROBLEMS: dict[str, ProblemType] = {
    p.slug: p
    for p in (
        ProblemType("bad-request", 400, "Bad request", "The request could not be read as HTTP."),
        ProblemType(
            "unauthorized",
            401,
            "Authentication required",
            "No `Authorization: Bearer <token>` header, or an unknown or revoked token.",
        ),
        ProblemType(
            "forbidden",
            403,
            "Forbidden",
            "The token's role may not do this, or the job belongs to another tenant.",
        ),
        ProblemType("not-found", 404, "Not found", "No such job, application, token or path."),
        ProblemType(
            "method-not-allowed", 405, "Method not allowed", "The path exists; the method not."
        ),
        ProblemType(
            "conflict",
            409,
            "Conflict",
            "The resource is not in a state that allows this: a job already ended, a "
            "cluster in use, a token name with another role, the last admin token.",
        ),
        ProblemType(
            "admission-refused",
            409,
            "Admission refused",
            "The job was not admitted. `reason`: not_enough_bandwidth, not_enough_nodes, "
            "no_profile or no_time_match; `retryable`: whether the same request may be "
            "admitted once other jobs end.",
        ),
        ProblemType(
            "concurrent-change",
            409,
            "Concurrent change",
            "Another request changed the same data at the same time; retry.",
        ),
        ProblemType(
            "body-too-large",
            413,
            "Request body too large",
            "The body is larger than the service accepts (`qosnet serve --max-body-bytes`).",
        ),
        ProblemType(
            "unsupported-media-type",
            415,
            "Unsupported media type",
            "The body's Content-Type is not one this operation reads.",
        ),
        ProblemType(
            "invalid-request",
            422,
            "Invalid request",
            "A parameter or the body is malformed; `errors` names each field and what is "
            "wrong with it.",
        ),
        ProblemType(
            "cluster-too-large",
            422,
            "Cluster too large",
            "The cluster has more nodes or switches than the service allows "
            "(`qosnet serve --max-cluster-nodes`); checked before it is loaded.",
        ),
        ProblemType(
            "internal-error",
            500,
            "Internal error",
            "A bug in the service; it is logged. The request may or may not have taken effect.",
        ),
        ProblemType(
            "cluster-unavailable",
            503,
            "Cluster unavailable",
            "The installed cluster could not be loaded (see GET /health); an admin can "
            "install another with PUT /v1/cluster.",
        ),
        ProblemType(
            "database-unavailable",
            503,
            "Database unavailable",
            "The database did not answer or was busy; retry after `Retry-After` seconds.",
        ),
    )
}

_BY_STATUS = {
    400: "bad-request",
    401: "unauthorized",
    403: "forbidden",
    404: "not-found",
    405: "method-not-allowed",
    409: "conflict",
    413: "body-too-large",
    415: "unsupported-media-type",
    422: "invalid-request",
    503: "database-unavailable",
}


def kind_for_status(status: int) -> str:
    """The generic kind for an HTTP status raised without one (Starlette's 404, 405...)."""
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return "internal-error" if status >= 500 else "bad-request"


def problem_body(kind: str, detail: str, **extensions: Any) -> dict[str, Any]:
    """The problem document: `type`, `title`, `status`, `detail` and the extensions."""
    p = PROBLEMS[kind]
    body: dict[str, Any] = {"type": p.uri, "title": p.title, "status": p.status}
    body["detail"] = detail
    body.update({k: v for k, v in extensions.items() if v is not None})
    return body


def problem_response(
    kind: str,
    detail: str,
    *,
    status: int | None = None,
    headers: dict[str, str] | None = None,
    **extensions: Any,
) -> JSONResponse:
    body = problem_body(kind, detail, **extensions)
    if status is not None:
        body["status"] = status
    return JSONResponse(body, status_code=body["status"], headers=headers, media_type=MEDIA_TYPE)


def problems_router() -> APIRouter:
    """`GET /problems` and `GET /problems/{kind}`: what each type URI means."""
    router = APIRouter(prefix="/problems", tags=["service"])

    @router.get("", summary="Every problem type")
    def list_problems() -> list[dict[str, Any]]:
        return [_describe(p) for p in PROBLEMS.values()]

    @router.get(
        "/{kind}",
        summary="One problem type",
        responses={
            status: {"content": {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}}}
            for status in (404, 422)
        },
    )
    def get_problem(kind: Annotated[str, Path(max_length=100)]) -> dict[str, Any]:
        if kind not in PROBLEMS:
            raise HTTPException(404, f"no problem type {kind!r}; GET /problems lists them")
        return _describe(PROBLEMS[kind])

    return router


def _describe(p: ProblemType) -> dict[str, Any]:
    return {"type": p.uri, "title": p.title, "status": p.status, "description": p.description}

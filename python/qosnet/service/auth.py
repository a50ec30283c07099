"""API tokens: `Authorization: Bearer <token>`, looked up by SHA-256, and roles.

- admin: manages the cluster, the profiles and the tokens; may see, renew and release
  every job.
- tenant: submits jobs, and sees, renews and releases only its own (403 otherwise).

Every `/v1` request is authenticated by `AuthMiddleware`, before anything reads its body:
FastAPI reads and parses a body before it runs an endpoint's dependencies, so a token
check written as a dependency alone let an anonymous 300 MB `POST /v1/jobs` grow the
service to 1 GB before its 401 (issue 21). The middleware leaves the principal in the
request's state; the `Caller` and `Admin` dependencies take it from there (and declare
the bearer scheme in the OpenAPI document).
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.exc import OperationalError
from starlette.types import ASGIApp, Receive, Scope, Send

from qosnet.service.errors import Forbidden, Unauthorized
from qosnet.service.handler import RequestHandler
from qosnet.service.metrics import ServiceMetrics
from qosnet.service.problems import problem_response
from qosnet.service.tokens import Principal

__all__ = [
    "PROTECTED_PREFIX",
    "Admin",
    "AuthMiddleware",
    "Caller",
    "bearer",
    "require_admin",
    "require_principal",
]

#: Paths that need a token; /health, /metrics, /docs and /problems do not.
PROTECTED_PREFIX = "/v1/"

bearer = HTTPBearer(
    auto_error=False,
    description="An API token from `qosnet serve --init-admin`, `qosnet token create` or "
    "POST /v1/tokens.",
)


def _credentials(authorization: str | None) -> str:
    """The bearer token in an Authorization header, or `Unauthorized` saying what is wrong."""
    if not authorization:
        raise Unauthorized("Authorization: header is required ('Bearer <token>')")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Authorization: must be 'Bearer <token>'")
    return token.strip()


def _authenticate(handler: RequestHandler, authorization: str | None) -> Principal:
    principal = handler.authenticate(_credentials(authorization))
    if principal is None:
        raise Unauthorized("Authorization: unknown or revoked token")
    return principal


class AuthMiddleware:
    """Answers 401 to a `/v1` request without a valid token before its body is read;
    else leaves the `Principal` in `scope["state"]["principal"]`."""

    def __init__(
        self, app: ASGIApp, handler: RequestHandler, metrics: ServiceMetrics | None = None
    ) -> None:
        self.app = app
        self.handler = handler
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(PROTECTED_PREFIX):
            await self.app(scope, receive, send)
            return
        header = None
        for name, value in scope["headers"]:
            if name == b"authorization":
                header = value.decode("latin-1")
                break
        try:
            principal = await anyio.to_thread.run_sync(_authenticate, self.handler, header)
        except Unauthorized as e:
            response = problem_response(e.kind, e.detail, headers={"WWW-Authenticate": "Bearer"})
            await response(scope, receive, send)
            return
        except OperationalError:
            if self.metrics is not None:
                self.metrics.database_error("unavailable")
            response = problem_response(
                "database-unavailable",
                "the database is unavailable; retry later",
                headers={"Retry-After": "5"},
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)


def _handler(request: Request) -> RequestHandler:
    handler: RequestHandler = request.app.state.handler
    return handler


def require_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    principal = getattr(request.state, "principal", None)
    if isinstance(principal, Principal):
        return principal
    # Mounted without the middleware (an app built by hand): check the token here.
    return _authenticate(_handler(request), request.headers.get("authorization"))


def require_admin(principal: Annotated[Principal, Depends(require_principal)]) -> Principal:
    if not principal.is_admin:
        raise Forbidden(f"this needs the admin role; {principal.name!r} is a {principal.role}")
    return principal


Caller = Annotated[Principal, Depends(require_principal)]
Admin = Annotated[Principal, Depends(require_admin)]

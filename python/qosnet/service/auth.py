"""API tokens: `Authorization: Bearer <token>`, looked up by SHA-256, and roles.

- admin: manages the cluster, the profiles and the tokens; may see, renew and release
  every job.
- tenant: submits jobs, and sees, renews and releases only its own (403 otherwise).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from qosnet.service.handler import Forbidden, Principal, RequestHandler, Unauthorized

__all__ = ["Admin", "Caller", "bearer", "require_admin", "require_principal"]

bearer = HTTPBearer(
    auto_error=False,
    description="An API token from `qosnet serve --init-admin`, `qosnet token create` or "
    "POST /v1/tokens.",
)


def _handler(request: Request) -> RequestHandler:
    handler: RequestHandler = request.app.state.handler
    return handler


def require_principal(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    if credentials is None:
        header = request.headers.get("authorization")
        if header:
            raise Unauthorized("Authorization: must be 'Bearer <token>'")
        raise Unauthorized("Authorization: header is required ('Bearer <token>')")
    principal = _handler(request).authenticate(credentials.credentials)
    if principal is None:
        raise Unauthorized("Authorization: unknown or revoked token")
    return principal


def require_admin(principal: Annotated[Principal, Depends(require_principal)]) -> Principal:
    if not principal.is_admin:
        raise Forbidden(f"this needs the admin role; {principal.name!r} is a {principal.role}")
    return principal


Caller = Annotated[Principal, Depends(require_principal)]
Admin = Annotated[Principal, Depends(require_admin)]

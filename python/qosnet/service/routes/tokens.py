"""`/v1/tokens` and `/v1/whoami`: API tokens and who holds the one presented."""

from __future__ import annotations

from fastapi import APIRouter

from qosnet.service.auth import Admin, Caller
from qosnet.service.routes.common import AUTH_ERRORS, JOB_ERRORS, Handler, TokenId, problems
from qosnet.service.schemas import TokenCreate, TokenCreated, TokenOut, WhoAmI

__all__ = ["router"]

router = APIRouter(tags=["tokens"])


@router.get("/whoami", responses=AUTH_ERRORS)
def whoami(who: Caller) -> WhoAmI:
    return WhoAmI(name=who.name, role=who.role)


@router.post("/tokens", status_code=201, responses={**AUTH_ERRORS, **problems(409)})
def create_token(body: TokenCreate, who: Admin, h: Handler) -> TokenCreated:
    """Create a token (admin). The secret is in this response only. A name has one role
    (409 if it holds live tokens of the other)."""
    out, secret = h.create_token(body.name, body.role)
    return TokenCreated(**out.model_dump(), token=secret)


@router.get("/tokens", responses=AUTH_ERRORS)
def list_tokens(who: Admin, h: Handler) -> list[TokenOut]:
    return h.tokens()


@router.delete("/tokens/{token_id}", responses=JOB_ERRORS)
def revoke_token(token_id: TokenId, who: Admin, h: Handler) -> TokenOut:
    """Revoke a token (admin); the last admin token cannot be revoked (409)."""
    return h.revoke_token(token_id)

"""API tokens and who holds them, straight from the token store."""

from __future__ import annotations

from qosnet.service.handler.core import HandlerCore
from qosnet.service.schemas import Role, TokenOut
from qosnet.service.tokens import Principal


class Tokens(HandlerCore):
    """API tokens (`service.tokens`)."""

    def create_token(self, name: str, role: Role) -> tuple[TokenOut, str]:
        """A new token for `name` with `role`; the secret is returned only here."""
        return self.token_store.create(name, role)

    def ensure_admin_token(self, name: str = "admin") -> str | None:
        """A new admin token if there is no live one (the secret), else None."""
        return self.token_store.ensure_admin(name)

    def authenticate(self, secret: str) -> Principal | None:
        return self.token_store.authenticate(secret)

    def tokens(self) -> list[TokenOut]:
        return self.token_store.list()

    def revoke_token(self, token_id: int) -> TokenOut:
        return self.token_store.revoke(token_id)

"""API tokens in the database: create, revoke, list, and look up a presented secret.

A token's secret is shown once; the database keeps its SHA-256 and a short prefix (to tell
tokens apart in listings). A name has one role. The last live admin token cannot be
revoked.

Writes take the database's one write lock up front (`db.write_transaction`, as job writes
do) and are run again on a lock conflict (`db.retry_on_lock`): issue 21 saw 157 of 320
concurrent creates fail with "database is locked" on SQLite, and two concurrent revokes on
PostgreSQL could each see the other admin token still live.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session, sessionmaker

from qosnet.service.db import TokenRow, retry_on_lock, write_transaction
from qosnet.service.errors import Conflict, NotFound
from qosnet.service.schemas import Role, TokenOut

__all__ = ["TOKEN_PREFIX", "MAX_TOKEN_ID", "Principal", "TokenStore", "hash_token"]

log = logging.getLogger("qosnet.service")

TOKEN_PREFIX = "qosnet_"
#: Token ids are the `tokens.id` column, a 32-bit integer on PostgreSQL (SERIAL); the API
#: takes no larger id on SQLite either, so one range holds on both.
MAX_TOKEN_ID = 2**31 - 1


@dataclass(frozen=True)
class Principal:
    """Who is asking: a token's name and role."""

    name: str
    role: Role
    token_id: int

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"


def hash_token(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class TokenStore:
    """The `tokens` table of one database."""

    def __init__(self, sessions: sessionmaker[Session], clock: Callable[[], float]) -> None:
        self.sessions = sessions
        self.clock = clock

    def create(self, name: str, role: Role) -> tuple[TokenOut, str]:
        """A new token for `name` with `role`; the secret is returned only here."""
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        out = retry_on_lock(lambda: self._create(name, role, secret))
        log.info("token %d created for %s (%s)", out.id, name, role)
        return out, secret

    def _create(self, name: str, role: Role, secret: str) -> TokenOut:
        with write_transaction(self.sessions) as (s, _):
            other = s.scalars(
                select(TokenRow).where(
                    TokenRow.name == name, TokenRow.role != role, TokenRow.revoked_at.is_(None)
                )
            ).first()
            if other is not None:
                raise Conflict(
                    f"name: {name!r} already has {other.role} tokens; a name has one role"
                )
            row = TokenRow(
                name=name,
                role=role,
                token_hash=hash_token(secret),
                prefix=secret[: len(TOKEN_PREFIX) + 4],
                created_at=self.clock(),
            )
            s.add(row)
            s.flush()
            return _token_out(row)

    def ensure_admin(self, name: str = "admin") -> str | None:
        """A new admin token if there is no live one (the secret), else None."""
        with self.sessions() as s:
            exists = s.scalars(
                select(TokenRow.id).where(TokenRow.role == "admin", TokenRow.revoked_at.is_(None))
            ).first()
        if exists is not None:
            return None
        return self.create(name, "admin")[1]

    def authenticate(self, secret: str) -> Principal | None:
        with self.sessions() as s:
            row = s.scalars(
                select(TokenRow).where(
                    TokenRow.token_hash == hash_token(secret), TokenRow.revoked_at.is_(None)
                )
            ).first()
            if row is None:
                return None
            return Principal(name=row.name, role=row.role, token_id=row.id)  # type: ignore[arg-type]

    def list(self) -> list[TokenOut]:
        with self.sessions() as s:
            return [_token_out(r) for r in s.scalars(select(TokenRow).order_by(TokenRow.id))]

    def revoke(self, token_id: int) -> TokenOut:
        if not 1 <= token_id <= MAX_TOKEN_ID:  # past the column's range: cannot exist
            raise NotFound(f"token {token_id} does not exist")
        out = retry_on_lock(lambda: self._revoke(token_id))
        log.info("token %d revoked", token_id)
        return out

    def _revoke(self, token_id: int) -> TokenOut:
        with write_transaction(self.sessions) as (s, _):
            row = s.get(TokenRow, token_id)
            if row is None:
                raise NotFound(f"token {token_id} does not exist")
            if row.revoked_at is None:
                if row.role == "admin":
                    admins = s.scalar(
                        select(func.count())
                        .select_from(TokenRow)
                        .where(TokenRow.role == "admin", TokenRow.revoked_at.is_(None))
                    )
                    if admins == 1:
                        raise Conflict(f"token {token_id} is the last admin token")
                row.revoked_at = self.clock()
            return _token_out(row)


def _token_out(row: TokenRow) -> TokenOut:
    return TokenOut(
        id=row.id,
        name=row.name,
        role=row.role,  # type: ignore[arg-type]
        prefix=row.prefix,
        created_at=datetime.fromtimestamp(row.created_at, tz=UTC),
        revoked=row.revoked_at is not None,
    )

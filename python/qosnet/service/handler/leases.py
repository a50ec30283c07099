"""Leases: every job and single flow holds its reservation until released, or until its
lease passes without renewal (`expire_due`, run before requests and by the sweeper).
"""

from __future__ import annotations

import logging
import re
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from qosnet.service.errors import Conflict, Forbidden, Invalid, NotFound, ServiceError
from qosnet.service.handler.core import HandlerCore, _Txn
from qosnet.service.leases import KINDS, LEASE_ID, LeaseKind
from qosnet.service.schemas import PRINCIPAL_NAME, FieldError
from qosnet.service.tokens import Principal

log = logging.getLogger("qosnet.service")


class Leases(HandlerCore):
    """The lease lifecycle, one for jobs and single flows (`service.leases`): look up,
    list, end, release, renew, expire. The routes call these with the kind
    (`routes.leases`); `Jobs` and `Flows` name them per kind for Python callers."""

    def _lease(self, asked: float | None) -> float:
        lease = self.settings.lease_seconds if asked is None else asked
        if lease > self.settings.max_lease_seconds:
            raise Invalid(
                f"lease_seconds: must be <= {self.settings.max_lease_seconds:g}, got {lease:g}",
                [
                    FieldError(
                        field="lease_seconds",
                        message=f"must be <= {self.settings.max_lease_seconds:g}, got {lease:g}",
                    )
                ],
            )
        return lease

    def _get(self, kind: LeaseKind, s: Session, who: Principal, lease_id: str) -> Any:
        row = s.get(kind.row, lease_id) if LEASE_ID.fullmatch(lease_id) else None
        if row is None:
            raise NotFound(f"{kind.noun} {lease_id!r} does not exist")
        if not who.is_admin and row.owner != who.name:
            raise Forbidden(f"{kind.noun} {lease_id!r} belongs to another tenant")
        return row

    def _end(
        self,
        kind: LeaseKind,
        txn: _Txn,
        row: Any,
        state: Literal["released", "expired"],
        why: str,
    ) -> None:
        """End a live reservation: state, time, reason, and its capacity back to the
        allocator."""
        now = self.clock()
        row.state = state
        row.ended_at = min(now, row.lease_expires) if state == "expired" else now
        row.end_reason = why
        txn.dirty = True
        if self._allocator is not None:  # without a cluster, nothing to give back
            kind.give_back(self._allocator, row.id)
        txn.state.revision += 1

    def release_lease(self, kind: LeaseKind, who: Principal, lease_id: str) -> Any:
        error: ServiceError | None = None
        with self._write() as txn:
            row = self._get(kind, txn.session, who, lease_id)
            if row.state != "active":
                raise Conflict(
                    f"{kind.noun} {lease_id!r} is already {row.state} ({row.end_reason})"
                )
            if row.lease_expires <= self.clock():
                self._end(kind, txn, row, "expired", "lease expired")
                error = Conflict(f"{kind.noun} {lease_id!r} is already expired (lease expired)")
            else:
                by = "owner" if row.owner == who.name else f"admin {who.name}"
                self._end(kind, txn, row, "released", f"released by {by}")
        if error is not None:
            raise error
        log.info("released %s (%s)", lease_id, who.name)
        return kind.out(row)

    def renew_lease(
        self, kind: LeaseKind, who: Principal, lease_id: str, lease_seconds: float | None
    ) -> Any:
        lease = self._lease(lease_seconds)
        error: ServiceError | None = None
        with self._write() as txn:
            row = self._get(kind, txn.session, who, lease_id)
            what = f"{kind.noun} {lease_id!r}"
            if row.state != "active":
                raise Conflict(f"{what} is {row.state} ({row.end_reason}); {kind.again}")
            now = self.clock()
            if row.lease_expires <= now:
                self._end(kind, txn, row, "expired", "lease expired")
                error = Conflict(f"{what} is expired (lease expired); {kind.again}")
            else:
                row.lease_expires = now + lease
                row.lease_seconds = lease
                row.renewals += 1
        if error is not None:
            raise error
        return kind.out(row)

    def show_lease(self, kind: LeaseKind, who: Principal, lease_id: str) -> Any:
        with self.sessions() as s:
            return kind.out(self._get(kind, s, who, lease_id))

    def list_leases(
        self,
        kind: LeaseKind,
        who: Principal,
        state: str | None = None,
        owner: str | None = None,
        limit: int = 1000,
    ) -> list[Any]:
        """Newest first: a tenant's own, or everyone's (or `owner`'s) for an admin."""
        query = select(kind.row)
        if not who.is_admin:
            if owner is not None and owner != who.name:
                raise Forbidden(f"owner: a tenant may list only its own {kind.api.plural}")
            owner = who.name
        if owner is not None:
            if not re.fullmatch(PRINCIPAL_NAME, owner):
                return []  # no token has such a name, so nothing has such an owner
            query = query.where(kind.row.owner == owner)
        if state is not None:
            query = query.where(kind.row.state == state)
        query = query.order_by(kind.row.created_at.desc(), kind.row.id).limit(limit)
        with self.sessions() as s:
            return [kind.out(r) for r in s.scalars(query)]

    def expire_due(self) -> int:
        """End every live job and single flow whose lease has passed; how many there were."""
        now = self.clock()

        def due(kind: LeaseKind) -> Any:
            return select(kind.row).where(kind.row.state == "active", kind.row.lease_expires <= now)

        with self.sessions() as s:
            if not any(s.scalars(due(k).limit(1)).first() for k in KINDS):
                return 0
        ended: list[str] = []
        with self._write() as txn:
            for kind in KINDS:
                for row in txn.session.scalars(due(kind)).all():
                    self._end(kind, txn, row, "expired", "lease expired")
                    ended.append(row.id)
        if ended:
            log.info("expired %d jobs and flows: %s", len(ended), ", ".join(ended))
        return len(ended)

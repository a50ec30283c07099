"""The request handler of document 001 §3.1, as a service: translate, allocate, persist.

A job request goes to the QoS translator (`qosnet.middleware.translate`), which asks the
resource allocator what it can grant; the chosen alternative is allocated and the job,
with its allocation and a lease, is committed to the database. Release, renewal and lease
expiry end or extend a job the same way.

Atomicity and no overbooking
----------------------------
The database is the source of truth; the in-memory `ResourceAllocator` is a cache of the
live jobs' allocations, tagged with the `revision` it reflects (`service_state`, see `db`).
Every change runs in one critical section (`_write`):

1. the process lock (`threading.Lock`) is taken: one writer per process;
2. a write transaction takes the database lock, `SELECT ... FOR UPDATE` on the
   `service_state` row (PostgreSQL) or `BEGIN IMMEDIATE` (SQLite): one writer per
   database, so several service processes on one database cannot overbook either;
3. if the revision in the database differs from the allocator's (another process
   committed), the allocator is rebuilt from the live jobs (`restore`);
4. translate, allocate, insert the job and bump the revision;
5. commit; only then does the change count. If anything fails before the commit ends,
   the allocation is released again and the allocator marked stale, so the next critical
   section rebuilds it from what was committed.

Translation and allocation see one state of the allocator, so what the translator found
grantable is still there when allocated, and the allocator itself refuses (never
overbooks) if it is not.

Single flows (`reserve_flow`): one flow between two nodes, for document 004's data plane,
admitted by the same allocator (`ResourceAllocator.reserve_flow`) in the same critical
section, committed as a `flows` row, restored with the jobs at every rebuild, listed with
the jobs' flows in `reservations` (what the hosts' agents install), released, renewed and
expired like a job.

Leases: every job has `lease_expires`; `expire_due` ends the jobs whose lease has passed.
It runs before every API request (lazily: a cheap indexed query, and a write only if
something is due) and periodically in a background sweeper (`app`).

The cluster: loaded through `cluster_loader` (size and files checked before the engine
builds it). If the stored one fails to load, the handler runs without one
(`cluster_error`): admission and utilisation raise `ClusterUnavailable` (503), ending
jobs still works, and installing a cluster brings it back; a restart does not die on it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sqlalchemy import event, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from qosnet.middleware.allocator import (
    Allocation,
    AllocationRefused,
    FlowReservation,
    LinkUsage,
    ResourceAllocator,
)
from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.errors import InvalidData, parse
from qosnet.middleware.profile_io import from_json, load_profiled, to_json
from qosnet.middleware.profiles import Application, ProfileStore
from qosnet.middleware.translator import Refusal, RefusalReason, Request, translate
from qosnet.service.cluster_loader import LoadedCluster, Origin, load_cluster
from qosnet.service.db import (
    ClusterRow,
    FlowRow,
    JobRow,
    ProfilesRow,
    ServiceState,
    make_engine,
    upgrade_schema,
    write_transaction,
)
from qosnet.service.errors import (
    ClusterUnavailable,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    Refused,
    ServiceError,
    Unauthorized,
)
from qosnet.service.job_view import flow_out, job_out
from qosnet.service.leases import FLOW, JOB, KINDS, LEASE_ID, LeaseKind
from qosnet.service.profile_edits import (
    from_upload_csv,
    from_upload_json,
    with_application,
    without_application,
)
from qosnet.service.schemas import (
    PRINCIPAL_NAME,
    FieldError,
    FlowReservationOut,
    JobOut,
    ReservationOut,
    ReserveFlow,
    Role,
    SubmitJob,
    TokenOut,
)
from qosnet.service.settings import Settings
from qosnet.service.tokens import TOKEN_PREFIX, Principal, TokenStore, hash_token

__all__ = [
    "TOKEN_PREFIX",
    "ClusterUnavailable",
    "Conflict",
    "Forbidden",
    "Invalid",
    "NotFound",
    "Principal",
    "Refused",
    "RequestHandler",
    "ServiceError",
    "Unauthorized",
    "hash_token",
]

log = logging.getLogger("qosnet.service")

#: What a job id can be made of (they are `job-` and 16 hex digits); anything else, a NUL
#: byte above all (PostgreSQL refuses it in text), cannot name a job.
_REFUSAL_CODES = {
    RefusalReason.NO_PROFILE: ("no_profile", False),
    RefusalReason.NO_TIME_MATCH: ("no_time_match", False),
    RefusalReason.NOT_ENOUGH_BANDWIDTH: ("not_enough_bandwidth", True),
}


# --------------------------------------------------------------------------------------
# helpers


def _request_hash(body: SubmitJob) -> str:
    text = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _new_job_id() -> str:
    return "job-" + secrets.token_hex(8)


def _new_flow_id() -> str:
    return "flow-" + secrets.token_hex(8)


def _stored_flow(row: FlowRow) -> FlowReservation:
    f = row.flow
    path = tuple((int(r), int(p)) for r, p in f["path"])
    return FlowReservation(row.src, row.dst, float(f["bandwidth"]), float(f["idt"]), path)


@dataclass
class _Txn:
    session: Session
    state: ServiceState
    #: The in-memory allocator was changed: if the transaction fails, rebuild it.
    dirty: bool = False
    #: Called, under the lock, if the transaction fails.
    undo: list[Any] = field(default_factory=list)


# --------------------------------------------------------------------------------------
# the handler


class RequestHandler:
    """Jobs, reservations, profiles, cluster and tokens over one database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.clock = settings.clock
        self.engine = make_engine(settings.db_url, sqlite_synchronous=settings.sqlite_synchronous)
        self._closed = False
        # A connection still checked out when the handler closes (a request or thread that
        # outlived the service) returns afterwards to the pool `close` disposed of, where
        # nothing would ever close it: it would be dropped open when that pool is collected
        # (psycopg's ResourceWarning, and an idle session left on the PostgreSQL server).
        # So one returned after `close` is closed as it comes back.
        event.listen(self.engine, "checkin", self._close_if_closed)
        self.dialect = self.engine.dialect.name
        self.sessions = sessionmaker(self.engine, expire_on_commit=False)
        self.token_store = TokenStore(self.sessions, self.clock)
        self._lock = threading.Lock()
        self._cluster: LoadedCluster | None = None
        #: Why the stored cluster is not loaded (None: it is). The service then runs
        #: without one: admission and utilisation answer 503, the rest works, an admin
        #: can install another, and GET /health says "degraded" with this reason.
        self.cluster_error: str | None = None
        self._store: ProfileStore | None = None
        self._allocator: ResourceAllocator | None = None
        self._revision: int | None = None
        self._cluster_version: int | None = None
        self._profiles_version: int | None = None

    # ---- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Create the tables, install the seed cluster and profiles, load the live jobs.

        A stored cluster that no longer loads (its files gone, a lowered size limit, an
        engine that refuses it) does not stop the start: the service runs without a
        cluster and says so (`cluster_error`), rather than failing at every restart."""
        upgrade_schema(self.engine)
        try:
            with self.sessions() as session, session.begin():
                if session.get(ServiceState, 1) is None:
                    session.add(
                        ServiceState(id=1, revision=0, cluster_version=0, profiles_version=0)
                    )
        except IntegrityError:  # another process created it at the same time
            pass
        with self._write(sync=False) as txn:
            self._seed_cluster(txn)
            self._seed_profiles(txn)
        with self._write():
            pass  # loads cluster, profiles and live jobs
        if self._cluster is None:
            log.error("running without a cluster: %s", self.cluster_error)
            return
        log.info(
            "request handler on %s: %d nodes, %d active jobs",
            self.dialect,
            self._cluster.cluster.nodes,
            len(self.allocator.allocations()),
        )

    def close(self) -> None:
        """Close the database connections: those in the pool now, those still checked out
        as they come back (`_close_if_closed`)."""
        self._closed = True
        self.engine.dispose()

    def _close_if_closed(self, dbapi_connection: Any, _record: Any) -> None:
        if self._closed and dbapi_connection is not None:
            dbapi_connection.close()

    def _seed_cluster(self, txn: _Txn) -> None:
        s = txn.session
        row = s.get(ClusterRow, 1)
        path = self.settings.cluster_file
        if path is None and row is not None:
            return
        text = Path(path).read_text(encoding="utf-8") if path else DOCUMENT_001_TESTBED
        name = self.settings.cluster_name or (Path(path).stem if path else "document-001")
        # file names in a cluster file (a fabric dump, its routes) are relative to it
        base_dir = Path(path).parent.resolve() if path else None
        try:
            loaded = self._load(text, name, Origin.OPERATOR, base_dir)
        except ServiceError as e:
            raise ValueError(f"cluster: {path or name}: {e.detail}") from None
        stored_dir = str(base_dir) if base_dir else None
        if row is not None and (row.toml, row.name, row.base_dir) == (text, name, stored_dir):
            self._cluster, self._cluster_version = loaded, txn.state.cluster_version
            return
        if row is not None and self._active_count(s):
            raise RuntimeError(
                f"cluster: {path} differs from the installed cluster {row.name!r}, and jobs "
                "are active; release them (or start without --cluster) first"
            )
        now = self.clock()
        if row is None:
            s.add(ClusterRow(id=1, name=name, toml=text, updated_at=now, base_dir=stored_dir))
        else:
            row.name, row.toml, row.updated_at, row.base_dir = name, text, now, stored_dir
        txn.state.cluster_version += 1
        txn.state.revision += 1
        self._cluster = loaded  # _sync need not load it again
        self._cluster_version = txn.state.cluster_version

    def _load(self, text: str, name: str, origin: Origin, base_dir: Path | None) -> LoadedCluster:
        return load_cluster(
            text,
            name,
            origin=origin,
            base_dir=base_dir,
            max_nodes=self.settings.max_cluster_nodes,
            cluster_dir=self.settings.cluster_dir,
        )

    def _seed_profiles(self, txn: _Txn) -> None:
        s = txn.session
        row = s.get(ProfilesRow, 1)
        path = self.settings.profiles_file
        if path is None and row is not None:
            return
        if path is None:
            store = load_profiled()
        else:
            try:
                store = from_json(Path(path).read_text(encoding="utf-8"))
            except InvalidData as e:
                raise ValueError(f"profiles: {path}: {e}") from None
        data = to_json(store)
        if row is not None and row.data == data:
            return
        now = self.clock()
        if row is None:
            s.add(ProfilesRow(id=1, data=data, updated_at=now))
        else:
            row.data, row.updated_at = data, now
        txn.state.profiles_version += 1

    # ---- the critical section -----------------------------------------------------

    @contextmanager
    def _write(self, *, sync: bool = True) -> Iterator[_Txn]:
        """The one critical section for every change (see the module docstring)."""
        with self._lock:
            txn: _Txn | None = None
            try:
                with write_transaction(self.sessions) as (session, state):
                    txn = _Txn(session, state)
                    if sync:
                        self._sync(session, state)
                    yield txn
                    session.flush()
                # committed
                if sync:
                    self._revision = txn.state.revision
                    self._cluster_version = txn.state.cluster_version
                    self._profiles_version = txn.state.profiles_version
            except BaseException:
                if txn is not None:
                    for undo in reversed(txn.undo):
                        try:
                            undo()
                        except Exception:  # pragma: no cover - best effort
                            log.exception("undo failed")
                    if txn.dirty:
                        self._revision = None
                        self._cluster_version = None
                        self._profiles_version = None
                raise

    def _sync(self, session: Session, state: ServiceState) -> None:
        """Bring the in-memory cluster, profiles and allocator up to the database's state."""
        if state.cluster_version != self._cluster_version:
            self._load_stored_cluster(session)
            self._cluster_version = state.cluster_version
            self._revision = None
        if self._store is None or state.profiles_version != self._profiles_version:
            prow = session.get(ProfilesRow, 1)
            if prow is None:
                raise RuntimeError("no profiles installed: start the service once to seed them")
            self._store = from_json(prow.data)
            self._profiles_version = state.profiles_version
        if self._cluster is None:
            self._allocator = None
            self._revision = state.revision
        elif self._allocator is None or state.revision != self._revision:
            self._rebuild_allocator(session, self._cluster.cluster, state.revision)

    def _load_stored_cluster(self, session: Session) -> None:
        """Load the stored cluster; if it fails, run without one (see `cluster_error`)."""
        row = session.get(ClusterRow, 1)
        if row is None:
            raise RuntimeError("no cluster installed: start the service once to seed it")
        base_dir = Path(row.base_dir) if row.base_dir else None
        try:
            self._cluster = self._load(row.toml, row.name, Origin.STORED, base_dir)
            self.cluster_error = None
        except ServiceError as e:
            self._cluster = None
            self.cluster_error = f"the stored cluster {row.name!r} does not load: {e.detail}"
            log.error("%s", self.cluster_error)

    def _rebuild_allocator(self, session: Session, cluster: Cluster, revision: int) -> None:
        self._revision = revision  # tried at this revision, whatever comes of it
        allocator = ResourceAllocator(cluster, payload_fraction=self.settings.payload_fraction)
        live = session.scalars(
            select(JobRow).where(JobRow.state == "active").order_by(JobRow.created_at)
        ).all()
        for job in live:
            try:
                allocator.restore(Allocation.from_dict(job.allocation))
            except Exception as e:
                # Jobs admitted on another network than the one stored (a database edited
                # by hand, an older version's bug): no admission can be trusted until an
                # admin releases them; each release tries again.
                self._allocator = None
                self.cluster_error = (
                    f"job {job.id}: its committed allocation does not fit the cluster: {e}"
                )
                log.error("%s", self.cluster_error)
                return
        flows = session.scalars(
            select(FlowRow).where(FlowRow.state == "active").order_by(FlowRow.created_at)
        ).all()
        for flow in flows:
            try:
                allocator.restore_flow(flow.id, _stored_flow(flow))
            except Exception as e:
                self._allocator = None
                self.cluster_error = (
                    f"flow {flow.id}: its committed reservation does not fit the cluster: {e}"
                )
                log.error("%s", self.cluster_error)
                return
        self._allocator = allocator
        self.cluster_error = None
        if live or flows:
            log.info(
                "allocator rebuilt at revision %d: %d live jobs, %d flows",
                revision,
                len(live),
                len(flows),
            )

    def _ensure_fresh(self) -> None:
        """Sync the in-memory state if another process changed the database (reads)."""
        with self.sessions() as s:
            state = s.get(ServiceState, 1)
        if state is None or (
            state.revision == self._revision
            and state.cluster_version == self._cluster_version
            and state.profiles_version == self._profiles_version
        ):
            return
        with self._write():
            pass

    @property
    def cluster(self) -> Cluster:
        if self._cluster is None:
            raise ClusterUnavailable(self.cluster_error or "no cluster is loaded")
        return self._cluster.cluster

    @property
    def allocator(self) -> ResourceAllocator:
        if self._allocator is None:
            raise ClusterUnavailable(self.cluster_error or "no cluster is loaded")
        return self._allocator

    @property
    def store(self) -> ProfileStore:
        assert self._store is not None, "start() first"
        return self._store

    def revision(self) -> int:
        with self.sessions() as s:
            state = s.get(ServiceState, 1)
            return state.revision if state else 0

    def health(self) -> tuple[str | None, str | None]:
        """The loaded cluster's name and why none is loaded (one of them is None)."""
        self._ensure_fresh()
        loaded = self._cluster
        return (loaded.cluster.name if loaded else None), self.cluster_error

    # ---- tokens ---------------------------------------------------------------------

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

    # ---- jobs ------------------------------------------------------------------------

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

    def submit(
        self, who: Principal, body: SubmitJob, idempotency_key: str | None = None
    ) -> tuple[JobOut, bool]:
        """Admit a job (True: newly admitted; False: an idempotent replay) or raise Refused."""
        lease = self._lease(body.lease_seconds)
        digest = _request_hash(body)
        try:
            request = parse(
                Request,
                {
                    "application": body.application,
                    "parameters": body.parameters,
                    "t1": body.t1,
                    "t2": body.t2,
                    "nodes": body.nodes,
                },
            )
        except InvalidData as e:
            raise Invalid.from_data(e) from None
        with self._write() as txn:
            s = txn.session
            if idempotency_key is not None:
                existing = self._replay(s, who, idempotency_key, digest)
                if existing is not None:
                    return job_out(existing), False
            result = translate(self.store, request, self.allocator)
            if isinstance(result, Refusal):
                refused = self._refusal(result, request)
                log.info("refused %s for %s: %s", body.application, who.name, refused.detail)
                raise refused
            pattern = self.store.application(body.application).pattern
            job_id = _new_job_id()
            txn.dirty = True
            try:
                allocation = self.allocator.allocate(
                    job_id, result.nodes, pattern, result.bandwidth
                )
            except AllocationRefused as e:
                retryable = e.reason in ("not_enough_nodes", "not_enough_bandwidth")
                raise Refused(e.reason, f"{e.reason}: {e.detail}", retryable) from None
            allocator = self.allocator
            txn.undo.append(lambda: allocator.release(job_id))
            now = self.clock()
            row = JobRow(
                id=job_id,
                owner=who.name,
                state="active",
                application=body.application,
                request=body.model_dump(mode="json"),
                parameters=dict(result.parameters),
                expected_time=result.time,
                allocation=allocation.to_dict(),
                idempotency_key=idempotency_key,
                request_hash=digest,
                created_at=now,
                lease_seconds=lease,
                lease_expires=now + lease,
                renewals=0,
            )
            s.add(row)
            txn.state.revision += 1
        log.info(
            "admitted %s for %s: %d nodes, %.6g B/s per flow, %.6g s",
            job_id,
            who.name,
            result.nodes,
            result.bandwidth,
            result.time,
        )
        return job_out(row), True

    @staticmethod
    def _replay(s: Session, who: Principal, key: str, digest: str) -> JobRow | None:
        """The job an Idempotency-Key already made, if any; `Invalid` if it was made for
        another request."""
        existing = s.scalars(
            select(JobRow).where(JobRow.owner == who.name, JobRow.idempotency_key == key)
        ).first()
        if existing is not None and existing.request_hash != digest:
            raise Invalid(
                f"Idempotency-Key: {key!r} was used for another request (job {existing.id}); "
                "use a new key for a new request",
                [
                    FieldError(
                        field="Idempotency-Key", message="was used with a different request body"
                    )
                ],
            )
        return existing

    def _refusal(self, result: Refusal, request: Request) -> Refused:
        """The translator's refusal as the API reports it: too little bandwidth is told as
        too few nodes when fewer nodes are free than any profile of the request needs."""
        code, retryable = _REFUSAL_CODES[result.reason]
        detail = f"{result.reason}: {result.detail}"
        if result.reason is RefusalReason.NOT_ENOUGH_BANDWIDTH:
            free = len(self.allocator.free_nodes())
            curves = self.store.curves_for(request.application, request.parameters, request.nodes)
            if curves and free < min(c.nodes for c in curves):
                code = "not_enough_nodes"
                detail = (
                    f"not enough nodes: {free} of the cluster's {self.cluster.nodes} "
                    f"are free, the least the profiles offer is {min(c.nodes for c in curves)}"
                )
        return Refused(code, detail, retryable)

    # ---- the lease lifecycle, one for jobs and single flows (`leases`) ------------------

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

    def _release(self, kind: LeaseKind, who: Principal, lease_id: str) -> Any:
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

    def _renew(
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

    def release(self, who: Principal, job_id: str) -> JobOut:
        return self._release(JOB, who, job_id)  # type: ignore[no-any-return]

    def renew(self, who: Principal, job_id: str, lease_seconds: float | None = None) -> JobOut:
        return self._renew(JOB, who, job_id, lease_seconds)  # type: ignore[no-any-return]

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

    def job(self, who: Principal, job_id: str) -> JobOut:
        with self.sessions() as s:
            return job_out(self._get(JOB, s, who, job_id))

    def jobs(
        self,
        who: Principal,
        state: str | None = None,
        owner: str | None = None,
        limit: int = 1000,
    ) -> list[JobOut]:
        query = select(JobRow)
        if not who.is_admin:
            if owner is not None and owner != who.name:
                raise Forbidden("owner: a tenant may list only its own jobs")
            owner = who.name
        if owner is not None:
            if not re.fullmatch(PRINCIPAL_NAME, owner):
                return []  # no token has such a name, so no job has such an owner
            query = query.where(JobRow.owner == owner)
        if state is not None:
            query = query.where(JobRow.state == state)
        query = query.order_by(JobRow.created_at.desc(), JobRow.id).limit(limit)
        with self.sessions() as s:
            return [job_out(r) for r in s.scalars(query)]

    def reservations(
        self, who: Principal, node: int | None = None, dst: int | None = None
    ) -> list[ReservationOut]:
        """The flows of every live job and every live single flow (a tenant's own only),
        optionally only those sourced at `node` (the rate-control table of that node's NIC,
        its host's agent) and only those destined to `dst` (what that node's agent admits,
        document 004 §3.4 (c))."""

        def wanted(src: int, to: int) -> bool:
            return (node is None or src == node) and (dst is None or to == dst)

        out: list[ReservationOut] = []
        for job in self.jobs(who, state="active", limit=1_000_000):
            for f in job.flows:
                if wanted(f.src, f.dst):
                    out.append(
                        ReservationOut(
                            job=job.id,
                            owner=job.owner,
                            lease_expires=job.lease_expires,
                            **f.model_dump(),
                        )
                    )
        for flow in self.flows(who, state="active", limit=1_000_000):
            if wanted(flow.src, flow.dst):
                out.append(
                    ReservationOut(
                        flow=flow.id,
                        **flow.model_dump(
                            include={"owner", "src", "dst", "bandwidth", "idt", "path",
                                     "src_port", "dst_port", "priority", "lease_expires"}
                        ),
                    )
                )  # fmt: skip
        return out

    # ---- single flows -------------------------------------------------------------------

    def reserve_flow(self, who: Principal, body: ReserveFlow) -> FlowReservationOut:
        """Reserve one flow (src, dst, bandwidth) against the jobs' capacities, or raise
        Refused with the reason (409) or Invalid (a node outside the cluster)."""
        lease = self._lease(body.lease_seconds)
        with self._write() as txn:
            n = self.cluster.nodes
            for name, v in (("src", body.src), ("dst", body.dst)):
                if v >= n:
                    msg = f"must be a node in 0..{n - 1}, got {v}"
                    raise Invalid(f"{name}: {msg}", [FieldError(field=name, message=msg)])
            flow_id = _new_flow_id()
            txn.dirty = True
            try:
                flow = self.allocator.reserve_flow(flow_id, body.src, body.dst, body.bandwidth)
            except AllocationRefused as e:
                retryable = e.reason == "not_enough_bandwidth"
                raise Refused(e.reason, f"{e.reason}: {e.detail}", retryable) from None
            allocator = self.allocator
            txn.undo.append(lambda: allocator.release_flow(flow_id))
            now = self.clock()
            row = FlowRow(
                id=flow_id,
                owner=who.name,
                state="active",
                src=body.src,
                dst=body.dst,
                src_port=body.src_port,
                dst_port=body.dst_port,
                priority=body.priority,
                flow=flow.to_dict(),
                created_at=now,
                lease_seconds=lease,
                lease_expires=now + lease,
                renewals=0,
            )
            txn.session.add(row)
            txn.state.revision += 1
        log.info(
            "reserved %s for %s: node %d -> %d, %.6g B/s",
            flow_id, who.name, body.src, body.dst, flow.bandwidth,
        )  # fmt: skip
        return flow_out(row)

    def release_flow(self, who: Principal, flow_id: str) -> FlowReservationOut:
        return self._release(FLOW, who, flow_id)  # type: ignore[no-any-return]

    def renew_flow(
        self, who: Principal, flow_id: str, lease_seconds: float | None = None
    ) -> FlowReservationOut:
        return self._renew(FLOW, who, flow_id, lease_seconds)  # type: ignore[no-any-return]

    def flow(self, who: Principal, flow_id: str) -> FlowReservationOut:
        with self.sessions() as s:
            return flow_out(self._get(FLOW, s, who, flow_id))

    def flows(
        self, who: Principal, state: str | None = None, limit: int = 1000
    ) -> list[FlowReservationOut]:
        """Single flows, newest first: a tenant's own, or everyone's for an admin."""
        query = select(FlowRow)
        if not who.is_admin:
            query = query.where(FlowRow.owner == who.name)
        if state is not None:
            query = query.where(FlowRow.state == state)
        query = query.order_by(FlowRow.created_at.desc(), FlowRow.id).limit(limit)
        with self.sessions() as s:
            return [flow_out(r) for r in s.scalars(query)]

    def utilisation(self) -> tuple[list[LinkUsage], list[Any], frozenset[int], int, Cluster]:
        """Switch ports, NICs (`NodeUsage`), free nodes, live jobs and the cluster, all
        from one state of the allocator."""
        self._ensure_fresh()
        with self._lock:
            allocator = self.allocator
            nics: list[Any] = getattr(allocator, "node_utilisation", list)()
            return (
                allocator.utilisation(),
                nics,
                allocator.free_nodes(),
                len(allocator.allocations()),
                self.cluster,
            )

    @staticmethod
    def _active_count(s: Session) -> int:
        """Live jobs and single flows: reservations a new cluster would strand."""
        jobs = s.scalar(select(func.count()).select_from(JobRow).where(JobRow.state == "active"))
        flows = s.scalar(select(func.count()).select_from(FlowRow).where(FlowRow.state == "active"))
        return (jobs or 0) + (flows or 0)

    # ---- profiles -----------------------------------------------------------------------

    def profiles(self) -> ProfileStore:
        self._ensure_fresh()
        with self._lock:
            return self.store

    def _install_profiles(self, store: ProfileStore) -> ProfileStore:
        data = to_json(store)
        with self._write() as txn:
            row = txn.session.get(ProfilesRow, 1)
            assert row is not None
            row.data, row.updated_at = data, self.clock()
            txn.state.profiles_version += 1
            txn.dirty = True
            self._store = store
        log.info(
            "profiles installed: %d applications, %d curves",
            len(store.applications),
            len(store.curves),
        )
        return store

    def set_profiles_json(self, text: str) -> ProfileStore:
        """Replace the whole store."""
        return self._install_profiles(from_upload_json(text))

    def set_profiles_csv(self, text: str) -> ProfileStore:
        """Replace the curves of the applications named in the CSV; keep the others."""
        return self._install_profiles(from_upload_csv(self.profiles(), text))

    def put_application(self, name: str, data: Any) -> Application:
        """Add or replace an application (its declared parameters and pattern); its curves
        stay, and must still fit it."""
        store = self._install_profiles(with_application(self.profiles(), name, data))
        return store.application(name)

    def delete_application(self, name: str) -> None:
        self._install_profiles(without_application(self.profiles(), name))

    # ---- cluster ------------------------------------------------------------------------

    def set_cluster(self, text: str, name: str) -> LoadedCluster:
        """Install a new network; refused (409) while any job holds a reservation.

        Loaded and checked whole before anything is written: a cluster that fails (or
        would not fit the size limit) is never saved, so no restart meets it."""
        loaded = self._load(text, name, Origin.UPLOAD, None)
        allocator = ResourceAllocator(
            loaded.cluster, payload_fraction=self.settings.payload_fraction
        )
        base_dir = self.settings.cluster_dir
        with self._write() as txn:
            active = self._active_count(txn.session)
            if active:
                raise Conflict(
                    f"{active} jobs or flows hold reservations on the current cluster; "
                    "release them or let their leases expire first"
                )
            row = txn.session.get(ClusterRow, 1)
            assert row is not None
            row.name, row.toml, row.updated_at = name, text, self.clock()
            # an upload's file names are the cluster directory's
            row.base_dir = str(base_dir) if base_dir else None
            txn.state.cluster_version += 1
            txn.state.revision += 1
            txn.dirty = True
            self._cluster = loaded
            self._allocator = allocator
            self.cluster_error = None
        log.info("cluster %r installed: %d nodes", name, loaded.cluster.nodes)
        return loaded

    def loaded_cluster(self) -> LoadedCluster:
        """The loaded cluster with its description, or `ClusterUnavailable`."""
        self._ensure_fresh()
        with self._lock:
            if self._cluster is None:
                raise ClusterUnavailable(self.cluster_error or "no cluster is loaded")
            return self._cluster

    def current_cluster(self) -> Cluster:
        return self.loaded_cluster().cluster

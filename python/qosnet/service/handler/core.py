"""The request handler's core: the database as the source of truth, the in-memory cluster,
profiles and allocator as caches of it, and the one critical section every change runs in
(`HandlerCore._write`; the package's docstring says how it keeps admission atomic).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from qosnet.middleware.allocator import Allocation, FlowReservation, ResourceAllocator
from qosnet.middleware.cluster import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.errors import InvalidData
from qosnet.middleware.profile_io import from_json, load_profiled, to_json
from qosnet.middleware.profiles import ProfileStore
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
from qosnet.service.errors import ClusterUnavailable, ServiceError
from qosnet.service.settings import Settings
from qosnet.service.tokens import TokenStore

log = logging.getLogger("qosnet.service")


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


class HandlerCore:
    """The handler's state over one database, and the one critical section (`_write`)
    every change runs in."""

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

    @staticmethod
    def _active_count(s: Session) -> int:
        """Live jobs and single flows: reservations a new cluster would strand."""
        jobs = s.scalar(select(func.count()).select_from(JobRow).where(JobRow.state == "active"))
        flows = s.scalar(select(func.count()).select_from(FlowRow).where(FlowRow.state == "active"))
        return (jobs or 0) + (flows or 0)

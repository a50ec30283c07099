"""Durable state of the request handler: SQLAlchemy 2.x models and engines.

The database is the source of truth. Tables:

- `service_state`: one row (id 1) of counters. `revision` goes up with every change to
  the set of live reservations (admit, release, expiry, a new cluster); a process whose
  in-memory allocator was built at another revision rebuilds it from the live jobs.
  `cluster_version` and `profiles_version` do the same for the cluster and the profiles.
  This row is also the lock that serialises every change: PostgreSQL takes it with
  `SELECT ... FOR UPDATE`; SQLite takes the database's write lock with `BEGIN IMMEDIATE`.
- `cluster`, `profiles`: one row each, the installed network (qosnet TOML) and profile
  store (JSON).
- `jobs`: every admitted job, live or ended, with its request, the chosen alternative,
  the allocation (JSON, `Allocation.to_dict`), owner, lease and idempotency key (unique
  per owner).
- `flows`: every single-flow reservation (document 004's data plane: one flow between two
  nodes, outside any job), live or ended, with its ports, priority, the reserved flow
  (JSON, `FlowReservation.to_dict`), owner and lease.
- `tokens`: API tokens, stored as their SHA-256 only.

SQLite runs in WAL mode with `synchronous=FULL` by default (`Settings.sqlite_synchronous`),
so a committed transaction survives a crash of the service (and, with FULL, of the
machine). Tables are created if missing; `upgrade_schema` adds the columns later versions
added (nullable, so old rows stay valid). There is no migration framework yet.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Double,
    Engine,
    Index,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError, OperationalError, ProgrammingError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

__all__ = [
    "WRITE_OPTION",
    "Base",
    "ClusterRow",
    "FlowRow",
    "JobRow",
    "ProfilesRow",
    "ServiceState",
    "TokenRow",
    "is_lock_error",
    "make_engine",
    "retry_on_lock",
    "upgrade_schema",
    "write_transaction",
]

log = logging.getLogger("qosnet.service")

#: Execution option that makes a SQLite transaction start with BEGIN IMMEDIATE.
WRITE_OPTION = "qosnet_write"


class Base(DeclarativeBase):
    pass


T = TypeVar("T")


class ServiceState(Base):
    __tablename__ = "service_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    revision: Mapped[int] = mapped_column(BigInteger, default=0)
    cluster_version: Mapped[int] = mapped_column(BigInteger, default=0)
    profiles_version: Mapped[int] = mapped_column(BigInteger, default=0)


class ClusterRow(Base):
    __tablename__ = "cluster"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    toml: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[float] = mapped_column(Double)
    #: The directory relative file names in `toml` are read from (the `--cluster` file's),
    #: None for the service's working directory.
    base_dir: Mapped[str | None] = mapped_column(Text, nullable=True, default=None)


class ProfilesRow(Base):
    __tablename__ = "profiles"

    id: Mapped[int] = mapped_column(primary_key=True)
    data: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[float] = mapped_column(Double)


class JobRow(Base):
    __tablename__ = "jobs"
    __table_args__ = (
        UniqueConstraint("owner", "idempotency_key", name="uq_jobs_owner_idempotency_key"),
        Index("ix_jobs_state_lease", "state", "lease_expires"),
        Index("ix_jobs_owner", "owner"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str] = mapped_column(String(100))
    state: Mapped[str] = mapped_column(String(16))  # active | released | expired
    application: Mapped[str] = mapped_column(String(200))
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSON)
    expected_time: Mapped[float] = mapped_column(Double)
    allocation: Mapped[dict[str, Any]] = mapped_column(JSON)
    idempotency_key: Mapped[str | None] = mapped_column(String(255))
    request_hash: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[float] = mapped_column(Double)
    lease_seconds: Mapped[float] = mapped_column(Double)
    lease_expires: Mapped[float] = mapped_column(Double)
    renewals: Mapped[int] = mapped_column(default=0)
    ended_at: Mapped[float | None] = mapped_column(Double)
    end_reason: Mapped[str | None] = mapped_column(String(200))


class FlowRow(Base):
    __tablename__ = "flows"
    __table_args__ = (
        Index("ix_flows_state_lease", "state", "lease_expires"),
        Index("ix_flows_owner", "owner"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    owner: Mapped[str] = mapped_column(String(100))
    state: Mapped[str] = mapped_column(String(16))  # active | released | expired
    src: Mapped[int] = mapped_column(BigInteger)
    dst: Mapped[int] = mapped_column(BigInteger)
    src_port: Mapped[int] = mapped_column(BigInteger)
    dst_port: Mapped[int] = mapped_column(BigInteger)
    priority: Mapped[int] = mapped_column()
    flow: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[float] = mapped_column(Double)
    lease_seconds: Mapped[float] = mapped_column(Double)
    lease_expires: Mapped[float] = mapped_column(Double)
    renewals: Mapped[int] = mapped_column(default=0)
    ended_at: Mapped[float | None] = mapped_column(Double)
    end_reason: Mapped[str | None] = mapped_column(String(200))


class TokenRow(Base):
    __tablename__ = "tokens"

    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100), index=True)
    role: Mapped[str] = mapped_column(String(16))  # admin | tenant
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[float] = mapped_column(Double)
    revoked_at: Mapped[float | None] = mapped_column(Double)


def make_engine(url: str, *, sqlite_synchronous: str = "FULL") -> Engine:
    """An engine for a SQLite file or a PostgreSQL database, set up as the service needs."""
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise ValueError(f"db: SQLite needs a file, e.g. sqlite:///qosnet.db, got {url!r}")
        engine = create_engine(
            parsed, connect_args={"timeout": 60, "check_same_thread": False}, pool_size=10
        )
        synchronous = sqlite_synchronous.upper()

        @event.listens_for(engine, "connect")
        def _connect(dbapi_connection: Any, _record: Any) -> None:
            # Let SQLAlchemy say when transactions begin (below), not pysqlite.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            mode = cursor.fetchone()[0]
            if str(mode).lower() != "wal":
                log.warning("SQLite refused WAL mode (journal_mode=%s)", mode)
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.execute("PRAGMA busy_timeout=60000")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(connection: Any) -> None:
            # A write transaction takes the database's write lock at once, so that its
            # reads see the last commit and no other writer (another process) slips in.
            write = connection.get_execution_options().get(WRITE_OPTION, False)
            connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine
    if backend == "postgresql":
        return create_engine(parsed, pool_size=10, max_overflow=30, pool_pre_ping=True)
    raise ValueError(f"db: must be a sqlite:// or postgresql:// URL, got {backend!r}")


#: Columns added after a table was first shipped: (table, column, SQL type); each nullable.
_ADDED_COLUMNS = (("cluster", "base_dir", "TEXT"),)


def upgrade_schema(engine: Engine) -> None:
    """Create missing tables and add the columns `_ADDED_COLUMNS` lists to tables made by
    an older version (idempotent; safe while other processes start too)."""
    Base.metadata.create_all(engine)
    for table, column, sql_type in _ADDED_COLUMNS:
        present = {c["name"] for c in inspect(engine).get_columns(table)}
        if column in present:
            continue
        try:
            with engine.begin() as conn:
                conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column} {sql_type}"))
        except (OperationalError, ProgrammingError):  # another process added it first
            present = {c["name"] for c in inspect(engine).get_columns(table)}
            if column not in present:
                raise


@contextmanager
def write_transaction(sessions: sessionmaker[Session]) -> Iterator[tuple[Session, ServiceState]]:
    """A transaction that holds the database's one write lock from its first statement:
    `BEGIN IMMEDIATE` on SQLite, the `service_state` row `FOR UPDATE` on PostgreSQL.

    Taking it up front is what keeps two writers apart: a SQLite transaction that reads
    first and writes later cannot wait for the lock (the busy timeout does not apply to
    upgrading a read snapshot another writer has outdated) and fails with "database is
    locked"; on PostgreSQL two such transactions could each pass a check (the last admin
    token) the other then breaks. Commits when the block ends without an exception.
    """
    with sessions() as session, session.begin():
        session.connection(execution_options={WRITE_OPTION: True})
        state = session.execute(
            select(ServiceState).where(ServiceState.id == 1).with_for_update()
        ).scalar_one()
        yield session, state


#: PostgreSQL SQLSTATEs of a transient lock conflict: serialization failure, deadlock,
#: lock not available.
_PG_RETRYABLE = {"40001", "40P01", "55P03"}


def is_lock_error(e: BaseException) -> bool:
    """True if `e` is a transient lock conflict, worth running the transaction again."""
    if not isinstance(e, DBAPIError):
        return False
    if getattr(e.orig, "sqlstate", None) in _PG_RETRYABLE:
        return True
    message = str(e.orig).lower()
    return "database is locked" in message or "database table is locked" in message


def retry_on_lock(run: Callable[[], T], *, attempts: int = 5, pause: float = 0.05) -> T:
    """`run()`, run again (up to `attempts` times, backing off) on a lock conflict."""
    for attempt in range(attempts):
        try:
            return run()
        except DBAPIError as e:
            if attempt == attempts - 1 or not is_lock_error(e):
                raise
            log.info("lock conflict, retrying (%d of %d): %s", attempt + 1, attempts, e.orig)
            time.sleep(pause * 2**attempt)
    raise AssertionError("unreachable")  # pragma: no cover

"""Helpers for testing the service: a throwaway PostgreSQL server, uvicorn in a thread,
a settable clock. Used by the test suite; handy for trying the service by hand.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx

    from qosnet.client import Client
    from qosnet.service.handler import RequestHandler

__all__ = [
    "FakeClock",
    "PostgresServer",
    "RunningService",
    "UvicornThread",
    "free_port",
    "postgres_available",
    "postgres_server",
    "start_service",
]


class FakeClock:
    """A clock for `Settings.clock` that moves only when told (`advance`)."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def advance(self, seconds: float) -> None:
        with self._lock:
            self.now += seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _pg_bin(name: str) -> str | None:
    """A PostgreSQL program on PATH, or in Debian's versioned directory (newest first)."""
    found = shutil.which(name)
    if found:
        return found
    for d in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (d / name).is_file():
            return str(d / name)
    return None


def postgres_available() -> bool:
    """True if `initdb` and `pg_ctl` can be found (PATH or /usr/lib/postgresql/*/bin)."""
    return _pg_bin("initdb") is not None and _pg_bin("pg_ctl") is not None


@dataclass
class PostgresServer:
    """A running PostgreSQL cluster listening only on a unix socket in `directory`."""

    directory: Path
    port: int
    user: str = "qosnet"

    def url(self, database: str = "postgres") -> str:
        return (
            f"postgresql+psycopg://{self.user}@/{database}?host={self.directory}&port={self.port}"
        )

    def create_database(self, name: str) -> str:
        """A new empty database; its SQLAlchemy URL."""
        import psycopg

        with psycopg.connect(
            host=str(self.directory),
            port=self.port,
            user=self.user,
            dbname="postgres",
            autocommit=True,
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return self.url(name)


def _run_as() -> str | None:
    """PostgreSQL refuses to run as root: the user to run it as, or None for ourselves."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        with contextlib.suppress(KeyError):
            pwd.getpwnam(name)
            return name
    raise RuntimeError("running as root and there is no 'postgres' or 'nobody' user")


@contextlib.contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """initdb into a temporary directory, `pg_ctl start` on a free port with the unix
    socket in that directory (no TCP), yield, then stop and delete it all. As root, the
    server runs as the `postgres` (else `nobody`) user, since PostgreSQL refuses root."""
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="qosnet-pg-"))
    data = root / "data"
    kwargs: dict[str, Any] = {"check": True, "capture_output": True, "text": True}
    if user is not None:
        info = pwd.getpwnam(user)
        os.chown(root, info.pw_uid, info.pw_gid)
        kwargs["user"] = user
        kwargs["cwd"] = root
        kwargs["env"] = {**os.environ, "HOME": str(root)}
    port = free_port()
    server = PostgresServer(directory=root, port=port)
    try:
        try:
            subprocess.run(
                [
                    _pg_bin("initdb") or "initdb",
                    "-D",
                    str(data),
                    "-U",
                    server.user,
                    "--auth=trust",
                    "-E",
                    "UTF8",
                    "--no-sync",
                    "--no-instructions",
                ],
                **kwargs,
            )
            options = (
                f"-k {root} -p {port} -c listen_addresses='' -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
            )
            subprocess.run(
                [
                    _pg_bin("pg_ctl") or "pg_ctl",
                    "-D",
                    str(data),
                    "-o",
                    options,
                    "-l",
                    str(root / "log"),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
                **kwargs,
            )
        except subprocess.CalledProcessError as e:
            log = root / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{e.cmd[0]} failed: {e.stderr}{e.stdout}\n{tail}") from None
        yield server
    finally:
        with contextlib.suppress(Exception):
            subprocess.run(
                [_pg_bin("pg_ctl") or "pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop"],
                **{**kwargs, "check": False},
            )
        shutil.rmtree(root, ignore_errors=True)


class UvicornThread:
    """An ASGI app served by uvicorn on 127.0.0.1 in a background thread."""

    def __init__(self, app: Any, port: int | None = None) -> None:
        import uvicorn

        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            app,
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            backlog=4096,
            limit_concurrency=None,
            timeout_keep_alive=30,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)
        if self.thread.is_alive():
            raise RuntimeError(f"uvicorn on port {self.port} did not stop in 60 s")


@dataclass
class RunningService:
    """A service under test: its handler, clock, URL and tokens for root (admin), alice
    and bob (tenants); clients made here are closed by `stop`."""

    handler: RequestHandler
    server: UvicornThread
    clock: FakeClock
    tokens: dict[str, str]
    clients: list[Any] = field(default_factory=list)

    @property
    def url(self) -> str:
        return self.server.url

    def client(self, who: str | None) -> Client:
        from qosnet.client import Client

        c = Client(self.url, self.tokens[who] if who else None, retries=0)
        self.clients.append(c)
        return c

    def http(self, who: str | None = None, token: str | None = None) -> httpx.Client:
        import httpx

        headers = {}
        if who or token:
            headers["Authorization"] = f"Bearer {token or self.tokens[who or '']}"
        c = httpx.Client(base_url=self.url, headers=headers, timeout=30)
        self.clients.append(c)
        return c

    @property
    def root(self) -> Client:
        return self.client("root")

    @property
    def alice(self) -> Client:
        return self.client("alice")

    @property
    def bob(self) -> Client:
        return self.client("bob")

    def stop(self) -> None:
        for c in self.clients:
            c.close()
        self.server.__exit__(None, None, None)
        self.handler.close()


def start_service(
    db_url: str,
    tokens: dict[str, str] | None = None,
    clock: FakeClock | None = None,
    **settings: Any,
) -> RunningService:
    """`create_app` over `db_url` served by uvicorn in a thread, with a settable clock
    and no sweeper unless `sweep_seconds` is given; new tokens unless `tokens`."""
    from qosnet.service.app import create_app
    from qosnet.service.settings import Settings

    clock = clock or FakeClock()
    settings.setdefault("sweep_seconds", 0)
    app = create_app(Settings(db_url=db_url, clock=clock, **settings))
    handler: RequestHandler = app.state.handler
    if tokens is None:
        tokens = {
            "root": handler.create_token("root", "admin")[1],
            "alice": handler.create_token("alice", "tenant")[1],
            "bob": handler.create_token("bob", "tenant")[1],
        }
    try:
        server = UvicornThread(app).__enter__()
    except BaseException:
        handler.close()
        raise
    return RunningService(handler, server, clock, tokens)

"""How the request handler service runs: database, leases, sweeper, seed data, limits,
clock."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "DEFAULT_DB",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_CLUSTER_NODES",
    "Settings",
    "database_url",
]

#: A SQLite file in the working directory.
DEFAULT_DB = "sqlite:///qosnet.db"
#: Largest request body, bytes: a profile store or cluster upload; a job is a few hundred.
DEFAULT_MAX_BODY_BYTES = 16 * 2**20
#: Largest cluster, in endpoint nodes and in switches each. The allocator computes an
#: all-pairs hop table at its first admission, nodes^2 paths: measured on meshes, 66 MB and
#: 3.8 s at 2025 nodes, 260 MB and 17.5 s at 4096 (held under the write lock). Document
#: 001's testbed has 16 nodes, the avakas fabric 281.
DEFAULT_MAX_CLUSTER_NODES = 2048


def database_url(value: str) -> str:
    """A SQLAlchemy URL; a bare path (no `://`) is a SQLite file."""
    if "://" in value:
        return value
    return f"sqlite:///{Path(value).expanduser().resolve()}"


@dataclass
class Settings:
    """Everything `create_app` needs.

    - `db_url`: SQLAlchemy URL, `sqlite:///path.db` (default `./qosnet.db`) or
      `postgresql+psycopg://user:pass@host/db`; a bare path is a SQLite file.
    - `lease_seconds`: how long a job keeps its reservation without a renewal; a request
      may ask for another lease up to `max_lease_seconds`.
    - `sweep_seconds`: the background sweeper's period (None: lease/10, within 1-30 s;
      0: no sweeper, expiry only on requests).
    - `cluster_file` / `cluster_name`: the network (qosnet TOML) to install at start;
      without one, the stored cluster, else document 001's testbed.
    - `profiles_file`: the profiles (JSON `ProfileStore`) to install at start; without one,
      the stored profiles, else the profiler's shipped with qosnet (`load_profiled`).
    - `cluster_dir`: the only directory whose files (an `ib_fabric` dump, its `routes`)
      an uploaded cluster (`PUT /v1/cluster`) may name; relative names are read from it.
      None: an upload that names a file is refused. `cluster_file` itself, given by the
      operator, names files relative to its own directory, anywhere.
    - `max_body_bytes`: the largest request body (413 above it).
    - `max_cluster_nodes`: the largest cluster, endpoint nodes and switches each; checked
      before the engine loads a cluster (start, upload, restart).
    - `clock`: seconds since the epoch (injectable, for tests of leases).
    - `payload_fraction`: the share of each link's rate that admission gives out as
      payload. 1 (the default here) admits the raw rate, as document 001's middleware and
      its worked example do; `qosnet serve` defaults to admission on the wire,
      `middleware.wire.WIRE_PAYLOAD_FRACTION` (the data plane's 4 KB packets on a
      1500-byte MTU: 93.47%), so that an admitted flow gets its payload rate.
    - `sqlite_synchronous`: `FULL` (default: a commit survives power loss) or `NORMAL`
      (survives a crash of the service, which is what WAL mode promises then).
    """

    db_url: str = DEFAULT_DB
    lease_seconds: float = 300.0
    max_lease_seconds: float = 86_400.0
    sweep_seconds: float | None = None
    cluster_file: Path | None = None
    cluster_name: str | None = None
    profiles_file: Path | None = None
    cluster_dir: Path | None = None
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_cluster_nodes: int = DEFAULT_MAX_CLUSTER_NODES
    clock: Callable[[], float] = field(default=time.time)
    sqlite_synchronous: str = "FULL"
    payload_fraction: float = 1.0

    def __post_init__(self) -> None:
        self.db_url = database_url(self.db_url)
        if not self.lease_seconds > 0:
            raise ValueError(f"lease_seconds: must be > 0, got {self.lease_seconds!r}")
        if not self.max_lease_seconds >= self.lease_seconds:
            raise ValueError(
                f"max_lease_seconds: must be >= lease_seconds ({self.lease_seconds}), "
                f"got {self.max_lease_seconds!r}"
            )
        if self.sweep_seconds is not None and not self.sweep_seconds >= 0:
            raise ValueError(f"sweep_seconds: must be >= 0, got {self.sweep_seconds!r}")
        if self.cluster_dir is not None:
            directory = Path(self.cluster_dir).expanduser()
            if not directory.is_dir():
                raise ValueError(f"cluster_dir: {str(directory)!r} is not a directory")
            # resolved once: every check compares real paths against this one
            self.cluster_dir = directory.resolve()
        if not 0 < self.payload_fraction <= 1:
            raise ValueError(f"payload_fraction: must be in (0, 1], got {self.payload_fraction!r}")
        if not self.max_body_bytes >= 1:
            raise ValueError(f"max_body_bytes: must be >= 1, got {self.max_body_bytes!r}")
        if not self.max_cluster_nodes >= 1:
            raise ValueError(f"max_cluster_nodes: must be >= 1, got {self.max_cluster_nodes!r}")
        if self.sqlite_synchronous.upper() not in ("NORMAL", "FULL", "EXTRA"):
            raise ValueError(
                "sqlite_synchronous: must be NORMAL, FULL or EXTRA, "
                f"got {self.sqlite_synchronous!r}"
            )

    @property
    def sweep_interval(self) -> float:
        """The sweeper's period in seconds; 0 when there is no sweeper."""
        if self.sweep_seconds is not None:
            return self.sweep_seconds
        return min(30.0, max(1.0, self.lease_seconds / 10))

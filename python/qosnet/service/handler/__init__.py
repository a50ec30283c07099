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

Parts, one per resource, over the one critical section of `core.py`: `leases.py` (the
lease lifecycle shared by jobs and flows), `jobs.py`, `flows.py`, `profiles.py`,
`cluster.py`, `tokens.py`; `RequestHandler` is all of them.
"""

from __future__ import annotations

from datetime import datetime

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
from qosnet.service.handler.cluster import ClusterAdmin
from qosnet.service.handler.flows import Flows
from qosnet.service.handler.jobs import Jobs
from qosnet.service.handler.profiles import Profiles
from qosnet.service.handler.tokens import Tokens
from qosnet.service.schemas import ReservationOut
from qosnet.service.tokens import TOKEN_PREFIX, Principal, hash_token

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


class RequestHandler(Jobs, Flows, Profiles, ClusterAdmin, Tokens):
    """Jobs, reservations, profiles, cluster and tokens over one database."""

    def reservations(
        self, who: Principal, node: int | None = None, dst: int | None = None
    ) -> list[ReservationOut]:
        """The flows of every live job and every live single flow (a tenant's own only),
        optionally only those sourced at `node` (the rate-control table of that node's NIC,
        its host's agent) and only those destined to `dst` (what that node's agent admits,
        document 004 §3.4 (c))."""

        def wanted(src: int, to: int) -> bool:
            return (node is None or src == node) and (dst is None or to == dst)

        # The lease's time left on this service's clock (`ReservationOut.lease_remaining`).
        now = self.clock()

        def remaining(expires: datetime) -> float:
            return max(0.0, expires.timestamp() - now)

        out: list[ReservationOut] = []
        for job in self.jobs(who, state="active", limit=1_000_000):
            for f in job.flows:
                if wanted(f.src, f.dst):
                    out.append(
                        ReservationOut(
                            job=job.id,
                            owner=job.owner,
                            lease_expires=job.lease_expires,
                            lease_remaining=remaining(job.lease_expires),
                            **f.model_dump(),
                        )
                    )
        for flow in self.flows(who, state="active", limit=1_000_000):
            if wanted(flow.src, flow.dst):
                out.append(
                    ReservationOut(
                        flow=flow.id,
                        lease_remaining=remaining(flow.lease_expires),
                        **flow.model_dump(
                            include={"owner", "src", "dst", "bandwidth", "idt", "path",
                                     "src_port", "dst_port", "priority", "lease_expires"}
                        ),
                    )
                )  # fmt: skip
        return out

"""The one lease lifecycle of everything the service reserves: a job (its nodes and flows)
and a single flow (document 004's data plane) are each held by a lease, renewed by their
owner, released by the owner or an admin, or expired when the lease passes; either way
the capacity goes back to the allocator. `LeaseKind` says what differs between the two in
the service: the kind as the API shows it (`qosnet.lease_kinds`: its name, path and
models), the table, how the capacity is given back, and how a row is shown.
`RequestHandler` runs the lifecycle once for both (`service.handler.leases`), and the
routes are made from the kind (`service.routes.leases`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qosnet import lease_kinds
from qosnet.lease_kinds import LeaseApi
from qosnet.middleware.allocator import ResourceAllocator
from qosnet.service.db import FlowRow, JobRow
from qosnet.service.job_view import flow_out, job_out

__all__ = ["FLOW", "JOB", "KINDS", "LEASE_ID", "LeaseKind"]

#: What an id may look like before the database is asked (printable ASCII, at most 40).
LEASE_ID = re.compile(r"[\x21-\x7e]{1,40}")


@dataclass(frozen=True)
class LeaseKind:
    """One kind of leased reservation, as the service stores it."""

    #: The kind as the API shows it.
    api: LeaseApi
    #: Its table (`JobRow`, `FlowRow`: both have id, owner, state, lease and end columns).
    row: Any
    #: Give its capacity back to the allocator, by id.
    give_back: Callable[[ResourceAllocator, str], Any]
    #: The row as the API shows it.
    out: Callable[[Any], Any]

    @property
    def noun(self) -> str:
        """The name in messages ("job", "flow")."""
        return self.api.noun

    @property
    def again(self) -> str:
        """How to ask for it again once ended ("submit it again")."""
        return f"{self.api.create} it again"


JOB = LeaseKind(lease_kinds.JOB, JobRow, ResourceAllocator.release, job_out)
FLOW = LeaseKind(lease_kinds.FLOW, FlowRow, ResourceAllocator.release_flow, flow_out)
KINDS = (JOB, FLOW)

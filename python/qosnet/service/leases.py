"""The one lease lifecycle of everything the service reserves: a job (its nodes and flows)
and a single flow (document 004's data plane) are each held by a lease, renewed by their
owner, released by the owner or an admin, or expired when the lease passes; either way
the capacity goes back to the allocator. `LeaseKind` says what differs between the two:
the table, the name used in messages, how the capacity is given back, and how a row is
shown. `RequestHandler` runs the lifecycle once for both (`_get`, `_end`, `_release`,
`_renew`, `expire_due`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from qosnet.middleware.allocator import ResourceAllocator
from qosnet.service.db import FlowRow, JobRow
from qosnet.service.job_view import flow_out, job_out

__all__ = ["FLOW", "JOB", "KINDS", "LEASE_ID", "LeaseKind"]

#: What an id may look like before the database is asked (printable ASCII, at most 40).
LEASE_ID = re.compile(r"[\x21-\x7e]{1,40}")


@dataclass(frozen=True)
class LeaseKind:
    """One kind of leased reservation."""

    #: The name in messages ("job", "flow").
    noun: str
    #: Its table (`JobRow`, `FlowRow`: both have id, owner, state, lease and end columns).
    row: Any
    #: How to ask for it again once ended ("submit it again").
    again: str
    #: Give its capacity back to the allocator, by id.
    give_back: Callable[[ResourceAllocator, str], Any]
    #: The row as the API shows it.
    out: Callable[[Any], Any]


JOB = LeaseKind("job", JobRow, "submit it again", ResourceAllocator.release, job_out)
FLOW = LeaseKind("flow", FlowRow, "reserve it again", ResourceAllocator.release_flow, flow_out)
KINDS = (JOB, FLOW)

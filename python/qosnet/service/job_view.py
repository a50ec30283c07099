"""A stored job as the API shows it (`JobOut`): the row, its allocation unpacked into
nodes and flows (each with the IDT the NIC's rate control needs), instants as UTC; and a
stored single-flow reservation (`FlowReservationOut`) the same way."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qosnet.middleware.allocator import Allocation
from qosnet.service.db import FlowRow, JobRow
from qosnet.service.schemas import FlowOut, FlowReservationOut, JobOut

__all__ = ["flow_out", "job_out"]


def _instant(t: float) -> datetime:
    return datetime.fromtimestamp(t, tz=UTC)


def _lease(row: JobRow | FlowRow) -> dict[str, Any]:
    """The lease's fields, the same for a job and a flow (`service/leases.py`)."""
    return {
        "created_at": _instant(row.created_at),
        "lease_seconds": row.lease_seconds,
        "lease_expires": _instant(row.lease_expires),
        "renewals": row.renewals,
        "ended_at": _instant(row.ended_at) if row.ended_at is not None else None,
        "end_reason": row.end_reason,
    }


def job_out(row: JobRow) -> JobOut:
    """A job as the API shows it: the stored row with its allocation unpacked."""
    a = Allocation.from_dict(row.allocation)
    return JobOut(
        id=row.id,
        owner=row.owner,
        state=row.state,  # type: ignore[arg-type]
        application=row.application,
        request=row.request,
        parameters=row.parameters,
        pattern=str(a.pattern),
        node_count=len(a.nodes),
        nodes=list(a.nodes),
        bandwidth=a.bandwidth,
        expected_time=row.expected_time,
        flows=[
            FlowOut(
                src=f.src,
                dst=f.dst,
                bandwidth=f.bandwidth,
                idt=f.idt,
                path=[(int(r), int(p)) for r, p in f.path],
            )
            for f in a.flows
        ],
        idempotency_key=row.idempotency_key,
        **_lease(row),
    )


def flow_out(row: FlowRow) -> FlowReservationOut:
    """A single-flow reservation as the API shows it."""
    f = row.flow
    return FlowReservationOut(
        id=row.id,
        owner=row.owner,
        state=row.state,  # type: ignore[arg-type]
        src=row.src,
        dst=row.dst,
        src_port=row.src_port,
        dst_port=row.dst_port,
        priority=row.priority,
        bandwidth=f["bandwidth"],
        idt=f["idt"],
        path=[(int(r), int(p)) for r, p in f["path"]],
        **_lease(row),
    )

"""Single flows (document 004's data plane): one flow between two nodes at a bandwidth,
admitted against the same link and NIC capacities as jobs' flows, leased like a job.
"""

from __future__ import annotations

import logging
import secrets

from qosnet.middleware.allocator import AllocationRefused
from qosnet.service.db import FlowRow
from qosnet.service.errors import Invalid, Refused
from qosnet.service.handler.leases import Leases
from qosnet.service.job_view import flow_out
from qosnet.service.leases import FLOW
from qosnet.service.schemas import FieldError, FlowReservationOut, ReserveFlow
from qosnet.service.tokens import Principal

log = logging.getLogger("qosnet.service")


def _new_flow_id() -> str:
    return "flow-" + secrets.token_hex(8)


class Flows(Leases):
    """Single flows for the data plane, admitted by the same allocator as jobs."""

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
        return self.release_lease(FLOW, who, flow_id)  # type: ignore[no-any-return]

    def renew_flow(
        self, who: Principal, flow_id: str, lease_seconds: float | None = None
    ) -> FlowReservationOut:
        return self.renew_lease(FLOW, who, flow_id, lease_seconds)  # type: ignore[no-any-return]

    def flow(self, who: Principal, flow_id: str) -> FlowReservationOut:
        return self.show_lease(FLOW, who, flow_id)  # type: ignore[no-any-return]

    def flows(
        self, who: Principal, state: str | None = None, limit: int = 1000
    ) -> list[FlowReservationOut]:
        """Single flows, newest first: a tenant's own, or everyone's for an admin."""
        return self.list_leases(FLOW, who, state, None, limit)

"""`/v1/flows`: single-flow reservations (document 004's data plane: one flow between two
nodes' agents, outside any job): reserve (admission), list, show, renew and release."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from qosnet.service.auth import Caller
from qosnet.service.errors import Refused
from qosnet.service.routes.common import AUTH_ERRORS, JOB_ERRORS, FlowId, Handler, Metrics, problem
from qosnet.service.schemas import (
    FlowReservationList,
    FlowReservationOut,
    JobState,
    RenewJob,
    ReserveFlow,
)

__all__ = ["router"]

router = APIRouter(prefix="/flows", tags=["flows"])


@router.post(
    "",
    status_code=201,
    response_model=FlowReservationOut,
    responses={
        **AUTH_ERRORS,
        **problem(409, "Admission refused, with the reason.", model="AdmissionRefusal"),
    },
)
def reserve_flow(
    body: ReserveFlow, who: Caller, h: Handler, metrics: Metrics, response: Response
) -> FlowReservationOut:
    """Reserve `bandwidth` bytes/s for one flow from node `src` to node `dst`: admitted
    against the same link and NIC capacities as jobs (document 004 §3.4), with its IDT and
    a lease; or refused (409) with the reason. The hosts' agents install it
    (`GET /v1/reservations`, `qosnet agent --service`)."""
    try:
        flow = h.reserve_flow(who, body)
    except Refused as e:
        metrics.decision("refused", e.reason)
        raise
    metrics.decision("admitted")
    response.headers["Location"] = f"/v1/flows/{flow.id}"
    return flow


@router.get("", responses=AUTH_ERRORS)
def list_flows(
    who: Caller,
    h: Handler,
    state: Annotated[JobState | None, Query(description="Only flows in this state.")] = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> FlowReservationList:
    """Single-flow reservations, newest first: a tenant's own, or everyone's for an admin."""
    return FlowReservationList(flows=h.flows(who, state, limit))


@router.get("/{flow_id}", responses=JOB_ERRORS)
def get_flow(flow_id: FlowId, who: Caller, h: Handler) -> FlowReservationOut:
    return h.flow(who, flow_id)


@router.post("/{flow_id}/release", responses=JOB_ERRORS)
def release_flow(flow_id: FlowId, who: Caller, h: Handler) -> FlowReservationOut:
    """Release the flow's reservation now."""
    return h.release_flow(who, flow_id)


@router.delete("/{flow_id}", responses=JOB_ERRORS)
def delete_flow(flow_id: FlowId, who: Caller, h: Handler) -> FlowReservationOut:
    """Same as POST /v1/flows/{flow_id}/release."""
    return h.release_flow(who, flow_id)


@router.post("/{flow_id}/renew", responses=JOB_ERRORS)
def renew_flow(
    flow_id: FlowId, who: Caller, h: Handler, body: RenewJob | None = None
) -> FlowReservationOut:
    """Extend the lease: it now ends `lease_seconds` (default: the service's) from now."""
    return h.renew_flow(who, flow_id, body.lease_seconds if body else None)

"""`/v1/flows`: single-flow reservations (document 004's data plane: one flow between two
nodes' agents, outside any job): reserve (admission), list, show, renew and release; all
but reserving are the lease lifecycle's (`routes.leases`)."""

from __future__ import annotations

from fastapi import Response

from qosnet.service.auth import Caller
from qosnet.service.errors import Refused
from qosnet.service.leases import FLOW
from qosnet.service.routes.common import AUTH_ERRORS, Handler, Metrics, problem
from qosnet.service.routes.leases import lease_routes
from qosnet.service.schemas import FlowReservationOut, ReserveFlow

__all__ = ["router"]

router = lease_routes(FLOW)


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

"""`/v1/reservations` and `/v1/utilisation`: the reserved flows and what they use."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from qosnet.service.auth import Caller
from qosnet.service.routes.common import AUTH_ERRORS, Handler
from qosnet.service.schemas import LinkOut, NicOut, ReservationList, Utilisation

__all__ = ["router"]

router = APIRouter(tags=["reservations"])


def _node(description: str) -> Any:
    """A query parameter naming a node (a NIC's number)."""
    return Query(ge=0, le=2**31 - 1, description=description)


@router.get("/reservations", responses=AUTH_ERRORS)
def list_reservations(
    who: Caller,
    h: Handler,
    node: Annotated[
        int | None, _node("Only flows sourced at this node: its NIC's IDT table.")
    ] = None,
    dst: Annotated[
        int | None, _node("Only flows destined to this node: what its agent admits.")
    ] = None,
) -> ReservationList:
    """Every reserved flow of the live jobs and single flows (a tenant's own), with its IDT."""
    return ReservationList(reservations=h.reservations(who, node, dst))


@router.get("/utilisation", responses=AUTH_ERRORS)
def utilisation(who: Caller, h: Handler) -> Utilisation:
    """Reserved bandwidth per switch port and per NIC against capacity; free nodes."""
    links, nics, free, active, cluster = h.utilisation()
    out = [
        LinkOut(
            router=u.router,
            port=u.port,
            to=u.to,
            to_id=u.to_id,
            capacity=u.capacity,
            reserved=u.reserved,
            free=u.capacity - u.reserved,
            utilisation=u.reserved / u.capacity if u.capacity > 0 else 0.0,
        )
        for u in links
    ]
    nic_out = [
        NicOut(node=n.node, capacity=n.capacity, sourced=n.sourced, sunk=n.sunk) for n in nics
    ]
    fractions = [x.utilisation for x in out] + [
        max(n.sourced, n.sunk) / n.capacity for n in nic_out if n.capacity > 0
    ]
    return Utilisation(
        nodes=cluster.nodes,
        free_nodes=sorted(free),
        active_jobs=active,
        link_bandwidth=cluster.link_bandwidth,
        max_utilisation=max(fractions, default=0.0),
        links=out,
        nics=nic_out,
    )

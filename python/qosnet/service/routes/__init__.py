"""The HTTP API's routes, a module per resource; `api_router()` gathers those under `/v1`
(each needs a token).

- `jobs`: submit (admission), list, show, renew, release;
- `flows`: single-flow reservations: reserve (admission), list, show, renew, release;
  both but their creation made by `leases.lease_routes` from the kind's description
  (`qosnet.lease_kinds`);
- `reservations`: reserved flows and utilisation;
- `profiles`: profiles and applications;
- `cluster`: the network;
- `tokens`: tokens and whoami;

and `service`: /health, outside `/v1`, with no token.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from qosnet.service.routes import cluster, flows, jobs, profiles, reservations, tokens

__all__ = ["api_router"]


def _lazy_expiry(request: Request) -> None:
    """Every API request first ends the jobs and flows whose lease has passed."""
    request.app.state.handler.expire_due()


def api_router() -> APIRouter:
    api = APIRouter(prefix="/v1", dependencies=[Depends(_lazy_expiry)])
    for module in (jobs, flows, reservations, profiles, cluster, tokens):
        api.include_router(module.router)
    return api

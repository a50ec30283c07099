"""`/v1/cluster`: the network the allocator reserves on (a qosnet TOML description)."""

from __future__ import annotations

import anyio
from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from qosnet.service.auth import Admin, Caller
from qosnet.service.cluster_loader import LoadedCluster
from qosnet.service.routes.common import AUTH_ERRORS, ClusterName, Handler, problem, text_body
from qosnet.service.schemas import ClusterIn, ClusterOut

__all__ = ["router"]

router = APIRouter(prefix="/cluster", tags=["cluster"])


def _out(loaded: LoadedCluster) -> ClusterOut:
    c = loaded.cluster
    return ClusterOut(
        name=c.name,
        nodes=c.nodes,
        link_bandwidth=c.link_bandwidth,
        toml=c.text,
        description=loaded.description,
    )


@router.get("", responses=AUTH_ERRORS)
def get_cluster(who: Caller, h: Handler) -> ClusterOut:
    """The installed network (a qosnet TOML configuration)."""
    return _out(h.loaded_cluster())


@router.put(
    "",
    responses={**AUTH_ERRORS, **problem(409, "Jobs hold reservations on the current cluster.")},
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": ClusterIn.model_json_schema()},
                "application/toml": {"schema": {"type": "string"}},
            },
        }
    },
)
async def put_cluster(
    request: Request, who: Admin, h: Handler, name: ClusterName = None
) -> ClusterOut:
    """Install a network (admin): a qosnet TOML body, or JSON `{"name", "toml"}`.
    Files it names (an `ib_fabric`'s `file` and `routes`) are read from the operator's
    cluster directory only (`qosnet serve --cluster-dir`). Refused (409) while jobs hold
    reservations; checked whole, and for size, before anything is saved."""
    text = await text_body(request)
    if "json" in request.headers.get("content-type", ""):
        try:
            body = ClusterIn.model_validate_json(text)
        except ValidationError as e:
            raise RequestValidationError(
                [{**err, "loc": ("body", *err["loc"])} for err in e.errors()]
            ) from None
        toml, cluster_name = body.toml, name or body.name
    else:
        toml, cluster_name = text, name or "cluster"
    return _out(await anyio.to_thread.run_sync(h.set_cluster, toml, cluster_name))

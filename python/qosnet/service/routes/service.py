"""`/health`: liveness, and whether the service runs with its cluster (no token)."""

from __future__ import annotations

from fastapi import APIRouter

from qosnet.service.routes.common import Handler, problems
from qosnet.service.schemas import Health

__all__ = ["router"]

router = APIRouter(tags=["service"])


@router.get("/health", responses=problems(503))
def health(h: Handler) -> Health:
    """Liveness: the database answers. `status` is "degraded" while the stored cluster
    does not load (`cluster_error` says why): the service then serves everything but
    admission and utilisation, until an admin installs a cluster."""
    cluster, error = h.health()
    return Health(
        status="degraded" if error else "ok",
        database=h.dialect,
        revision=h.revision(),
        cluster=cluster,
        cluster_error=error,
    )

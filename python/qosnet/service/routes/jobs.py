"""`/v1/jobs`: submit (admission), list, show, renew and release jobs; all but submitting
are the lease lifecycle's (`routes.leases`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Response

from qosnet.service.auth import Caller
from qosnet.service.errors import Refused
from qosnet.service.leases import JOB
from qosnet.service.routes.common import AUTH_ERRORS, Handler, Metrics, problem
from qosnet.service.routes.leases import lease_routes
from qosnet.service.schemas import PRINTABLE, JobOut, SubmitJob

__all__ = ["router"]

router = lease_routes(JOB)

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=PRINTABLE,
        description="Retries with the same key (and body) return the same job.",
    ),
]


@router.post(
    "",
    status_code=201,
    response_model=JobOut,
    responses={
        **AUTH_ERRORS,
        200: {"model": JobOut, "description": "Replay of an Idempotency-Key: that job."},
        **problem(409, "Admission refused, with the reason.", model="AdmissionRefusal"),
    },
)
def submit_job(
    body: SubmitJob,
    who: Caller,
    h: Handler,
    metrics: Metrics,
    response: Response,
    idempotency_key: IdempotencyKey = None,
) -> JobOut:
    """Submit a job request: admitted with its allocation (nodes, bandwidth and IDT per
    flow, expected time) and a lease, or refused (409) with the reason."""
    try:
        job, created = h.submit(who, body, idempotency_key)
    except Refused as e:
        metrics.decision("refused", e.reason)
        raise
    metrics.decision("admitted" if created else "replayed")
    response.headers["Location"] = f"/v1/jobs/{job.id}"
    if not created:
        response.status_code = 200
        response.headers["Idempotent-Replayed"] = "true"
    return job

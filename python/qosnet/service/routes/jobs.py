"""`/v1/jobs`: submit (admission), list, show, renew and release jobs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query, Response

from qosnet.service.auth import Caller
from qosnet.service.errors import Refused
from qosnet.service.routes.common import (
    AUTH_ERRORS,
    JOB_ERRORS,
    Handler,
    JobId,
    Metrics,
    OwnerFilter,
    problem,
)
from qosnet.service.schemas import PRINTABLE, JobList, JobOut, JobState, RenewJob, SubmitJob

__all__ = ["router"]

router = APIRouter(prefix="/jobs", tags=["jobs"])

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


@router.get("", responses=AUTH_ERRORS)
def list_jobs(
    who: Caller,
    h: Handler,
    state: Annotated[JobState | None, Query(description="Only jobs in this state.")] = None,
    owner: OwnerFilter = None,
    limit: Annotated[int, Query(ge=1, le=10_000)] = 1000,
) -> JobList:
    """Jobs, newest first: a tenant's own, or everyone's for an admin."""
    return JobList(jobs=h.jobs(who, state, owner, limit))


@router.get("/{job_id}", responses=JOB_ERRORS)
def get_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
    return h.job(who, job_id)


@router.post("/{job_id}/release", responses=JOB_ERRORS)
def release_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
    """Release the job's reservation now."""
    return h.release(who, job_id)


@router.delete("/{job_id}", responses=JOB_ERRORS)
def delete_job(job_id: JobId, who: Caller, h: Handler) -> JobOut:
    """Same as POST /v1/jobs/{job_id}/release."""
    return h.release(who, job_id)


@router.post("/{job_id}/renew", responses=JOB_ERRORS)
def renew_job(job_id: JobId, who: Caller, h: Handler, body: RenewJob | None = None) -> JobOut:
    """Extend the lease: it now ends `lease_seconds` (default: the service's) from now."""
    return h.renew(who, job_id, body.lease_seconds if body else None)

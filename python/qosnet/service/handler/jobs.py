"""Jobs (document 001 §3.1): a request translated with the profiles into nodes and a
bandwidth per flow, allocated, committed with its lease; idempotent submits.
"""

from __future__ import annotations

import hashlib
import json
import logging
import secrets

from sqlalchemy import select
from sqlalchemy.orm import Session

from qosnet.middleware.allocator import AllocationRefused
from qosnet.middleware.errors import InvalidData, parse
from qosnet.middleware.translator import Refusal, RefusalReason, Request, translate
from qosnet.service.db import JobRow
from qosnet.service.errors import Invalid, Refused
from qosnet.service.handler.leases import Leases
from qosnet.service.job_view import job_out
from qosnet.service.leases import JOB
from qosnet.service.schemas import FieldError, JobOut, SubmitJob
from qosnet.service.tokens import Principal

log = logging.getLogger("qosnet.service")


_REFUSAL_CODES = {
    RefusalReason.NO_PROFILE: ("no_profile", False),
    RefusalReason.NO_TIME_MATCH: ("no_time_match", False),
    RefusalReason.NOT_ENOUGH_BANDWIDTH: ("not_enough_bandwidth", True),
}


def _request_hash(body: SubmitJob) -> str:
    text = json.dumps(body.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _new_job_id() -> str:
    return "job-" + secrets.token_hex(8)


class Jobs(Leases):
    """Jobs: admitted through the translator and the allocator (document 001 §3.1)."""

    def submit(
        self, who: Principal, body: SubmitJob, idempotency_key: str | None = None
    ) -> tuple[JobOut, bool]:
        """Admit a job (True: newly admitted; False: an idempotent replay) or raise Refused."""
        lease = self._lease(body.lease_seconds)
        digest = _request_hash(body)
        try:
            request = parse(
                Request,
                {
                    "application": body.application,
                    "parameters": body.parameters,
                    "t1": body.t1,
                    "t2": body.t2,
                    "nodes": body.nodes,
                },
            )
        except InvalidData as e:
            raise Invalid.from_data(e) from None
        with self._write() as txn:
            s = txn.session
            if idempotency_key is not None:
                existing = self._replay(s, who, idempotency_key, digest)
                if existing is not None:
                    return job_out(existing), False
            result = translate(self.store, request, self.allocator)
            if isinstance(result, Refusal):
                refused = self._refusal(result, request)
                log.info("refused %s for %s: %s", body.application, who.name, refused.detail)
                raise refused
            pattern = self.store.application(body.application).pattern
            job_id = _new_job_id()
            txn.dirty = True
            try:
                allocation = self.allocator.allocate(
                    job_id, result.nodes, pattern, result.bandwidth
                )
            except AllocationRefused as e:
                retryable = e.reason in ("not_enough_nodes", "not_enough_bandwidth")
                raise Refused(e.reason, f"{e.reason}: {e.detail}", retryable) from None
            allocator = self.allocator
            txn.undo.append(lambda: allocator.release(job_id))
            now = self.clock()
            row = JobRow(
                id=job_id,
                owner=who.name,
                state="active",
                application=body.application,
                request=body.model_dump(mode="json"),
                parameters=dict(result.parameters),
                expected_time=result.time,
                allocation=allocation.to_dict(),
                idempotency_key=idempotency_key,
                request_hash=digest,
                created_at=now,
                lease_seconds=lease,
                lease_expires=now + lease,
                renewals=0,
            )
            s.add(row)
            txn.state.revision += 1
        log.info(
            "admitted %s for %s: %d nodes, %.6g B/s per flow, %.6g s",
            job_id,
            who.name,
            result.nodes,
            result.bandwidth,
            result.time,
        )
        return job_out(row), True

    @staticmethod
    def _replay(s: Session, who: Principal, key: str, digest: str) -> JobRow | None:
        """The job an Idempotency-Key already made, if any; `Invalid` if it was made for
        another request."""
        existing = s.scalars(
            select(JobRow).where(JobRow.owner == who.name, JobRow.idempotency_key == key)
        ).first()
        if existing is not None and existing.request_hash != digest:
            raise Invalid(
                f"Idempotency-Key: {key!r} was used for another request (job {existing.id}); "
                "use a new key for a new request",
                [
                    FieldError(
                        field="Idempotency-Key", message="was used with a different request body"
                    )
                ],
            )
        return existing

    def _refusal(self, result: Refusal, request: Request) -> Refused:
        """The translator's refusal as the API reports it: too little bandwidth is told as
        too few nodes when fewer nodes are free than any profile of the request needs."""
        code, retryable = _REFUSAL_CODES[result.reason]
        detail = f"{result.reason}: {result.detail}"
        if result.reason is RefusalReason.NOT_ENOUGH_BANDWIDTH:
            free = len(self.allocator.free_nodes())
            curves = self.store.curves_for(request.application, request.parameters, request.nodes)
            if curves and free < min(c.nodes for c in curves):
                code = "not_enough_nodes"
                detail = (
                    f"not enough nodes: {free} of the cluster's {self.cluster.nodes} "
                    f"are free, the least the profiles offer is {min(c.nodes for c in curves)}"
                )
        return Refused(code, detail, retryable)

    def release(self, who: Principal, job_id: str) -> JobOut:
        return self.release_lease(JOB, who, job_id)  # type: ignore[no-any-return]

    def renew(self, who: Principal, job_id: str, lease_seconds: float | None = None) -> JobOut:
        return self.renew_lease(JOB, who, job_id, lease_seconds)  # type: ignore[no-any-return]

    def job(self, who: Principal, job_id: str) -> JobOut:
        return self.show_lease(JOB, who, job_id)  # type: ignore[no-any-return]

    def jobs(
        self,
        who: Principal,
        state: str | None = None,
        owner: str | None = None,
        limit: int = 1000,
    ) -> list[JobOut]:
        return self.list_leases(JOB, who, state, owner, limit)

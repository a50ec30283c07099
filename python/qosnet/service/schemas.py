"""Request and response bodies of the HTTP API (pydantic models, shown in the OpenAPI docs).

Plain pydantic only, so that `qosnet.client` can parse responses without FastAPI.
Bandwidths are bytes/s, times seconds, instants ISO 8601 (UTC).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from qosnet.middleware.profiles import ParamValue

__all__ = [
    "APPLICATION_NAME",
    "APPLICATION_NAME_MAX",
    "CLUSTER_NAME",
    "PATTERN_MEANING",
    "PRINCIPAL_NAME",
    "PRINTABLE",
    "AdmissionRefusal",
    "ApplicationDetail",
    "ApplicationSummary",
    "ClusterIn",
    "ClusterOut",
    "CurveOut",
    "ErrorOut",
    "FieldError",
    "FlowOut",
    "FlowReservationList",
    "FlowReservationOut",
    "Health",
    "JobList",
    "JobOut",
    "JobState",
    "LinkOut",
    "NicOut",
    "PointOut",
    "Problem",
    "RenewJob",
    "ReserveFlow",
    "ReservationList",
    "ReservationOut",
    "Role",
    "SubmitJob",
    "TokenCreate",
    "TokenCreated",
    "TokenOut",
    "Utilisation",
    "WhoAmI",
]

Role = Literal["admin", "tenant"]
JobState = Literal["active", "released", "expired"]

#: A token holder's (and so a job owner's) name: a letter or digit, then letters, digits
#: and `_ . @ -`; at most 100 characters (the column's width).
PRINCIPAL_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$"
#: An application's name: an identifier, a letter then letters, digits and underscores; at
#: most 200 characters (the jobs column's width). The profiles' own grammar
#: (`qosnet.middleware.profiles`), anchored: no spaces, quotes, newlines or leading digit.
APPLICATION_NAME = r"^[A-Za-z][A-Za-z0-9_]*$"
APPLICATION_NAME_MAX = 200
#: A cluster's name: any printable text without control characters, at most 200.
CLUSTER_NAME = r"^[^\x00-\x1f\x7f]+$"
#: An id or key: printable ASCII, no spaces (job ids, Idempotency-Key).
PRINTABLE = r"^[\x21-\x7e]+$"

#: What each pattern asks for, in words, for error messages.
PATTERN_MEANING = {
    PRINCIPAL_NAME: "must be a letter or digit, then letters, digits or _ . @ -",
    APPLICATION_NAME: "must be a letter, then letters, digits or underscores",
    CLUSTER_NAME: "must not contain control characters",
    PRINTABLE: "must be printable ASCII without spaces",
}


class _In(BaseModel):
    """Request bodies: unknown fields are errors, NaN and inf are not numbers."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SubmitJob(_In):
    """A job request in application terms (document 001 §3.5.1: X in PowerSet{t1, t2,
    x1..xn}): the application, the parameters it fixes (the others are free for the
    translator to choose), the bounds on the execution time, optionally the node count."""

    application: str = Field(
        min_length=1,
        max_length=APPLICATION_NAME_MAX,
        pattern=APPLICATION_NAME,
        examples=["ray_tracing"],
    )
    parameters: dict[str, ParamValue] = Field(
        default={}, examples=[{"image_size": 512, "interleaving": 0}]
    )
    t1: float = Field(default=0.0, ge=0, description="Lower bound on the time, s.")
    t2: float | None = Field(
        default=None, gt=0, description="Upper bound on the time (response time), s.", examples=[1]
    )
    nodes: int | None = Field(default=None, gt=0, le=1_000_000, description="Fix N.")
    lease_seconds: float | None = Field(
        default=None, gt=0, description="Lease to ask for (default: the service's)."
    )

    @field_validator("t2")
    @classmethod
    def _t2_after_t1(cls, t2: float | None, info: ValidationInfo) -> float | None:
        t1 = info.data.get("t1")
        if t2 is not None and t1 is not None and t2 < t1:
            raise ValueError(f"must be >= t1 ({t1:g})")
        return t2


class RenewJob(_In):
    lease_seconds: float | None = Field(
        default=None, gt=0, description="New lease from now (default: the service's)."
    )


class FlowOut(BaseModel):
    """One reserved flow, what the NIC's rate control needs: `idt` is the inter-dispatch
    time in units of T, the time to send one packet at peak bandwidth (Bpeak / bandwidth,
    document 001 §2.1); `path` the (router, output port) hops."""

    src: int
    dst: int
    bandwidth: float
    idt: float
    path: list[tuple[int, int]]


class JobOut(BaseModel):
    id: str
    owner: str
    state: JobState
    application: str
    request: dict[str, Any] = Field(description="The request as submitted.")
    parameters: dict[str, Any] = Field(description="Parameters to run with, free ones chosen.")
    pattern: str
    node_count: int
    nodes: list[int] = Field(description="Physical nodes allocated.")
    bandwidth: float = Field(description="Reserved per flow, bytes/s.")
    expected_time: float = Field(description="Profiled execution time at this allocation, s.")
    flows: list[FlowOut]
    idempotency_key: str | None = None
    created_at: datetime
    lease_seconds: float
    lease_expires: datetime
    renewals: int = 0
    ended_at: datetime | None = None
    end_reason: str | None = None


class JobList(BaseModel):
    jobs: list[JobOut]


#: A local port of a host's agent (document 004 §4.2: a flow joins two ports).
PORT_MAX = 2**31 - 1


class ReserveFlow(_In):
    """One flow's reservation outside any job (document 004's data plane): `bandwidth`
    bytes/s from node `src` (its agent's local port `src_port`) to node `dst` (port
    `dst_port`) at `priority`, admitted against the same capacities as jobs' flows."""

    src: int = Field(ge=0, le=2**31 - 1, description="Source node.")
    dst: int = Field(ge=0, le=2**31 - 1, description="Destination node.")
    bandwidth: float = Field(gt=0, description="Bytes/s.", examples=[5_000_000])
    src_port: int = Field(default=0, ge=0, le=PORT_MAX, description="Source agent's port.")
    dst_port: int = Field(default=0, ge=0, le=PORT_MAX, description="Destination's port.")
    priority: int = Field(default=0, ge=0, le=255)
    lease_seconds: float | None = Field(
        default=None, gt=0, description="Lease to ask for (default: the service's)."
    )

    @field_validator("dst")
    @classmethod
    def _dst_not_src(cls, dst: int, info: ValidationInfo) -> int:
        if info.data.get("src") == dst:
            raise ValueError(f"must differ from src, got {dst} for both")
        return dst


class FlowReservationOut(FlowOut):
    id: str
    owner: str
    state: JobState
    src_port: int
    dst_port: int
    priority: int
    created_at: datetime
    lease_seconds: float
    lease_expires: datetime
    renewals: int = 0
    ended_at: datetime | None = None
    end_reason: str | None = None


class FlowReservationList(BaseModel):
    flows: list[FlowReservationOut]


class ReservationOut(FlowOut):
    """A reserved flow of a live job (`job`) or a single-flow reservation (`flow`), with
    the agents' ports and priority it is installed for (0 for jobs' flows)."""

    job: str | None = None
    flow: str | None = None
    owner: str
    src_port: int = 0
    dst_port: int = 0
    priority: int = 0
    lease_expires: datetime | None = Field(
        default=None,
        description="When the job's or flow's lease ends unless renewed, by the service's clock.",
    )
    lease_remaining: float = Field(
        description="Seconds the lease had left when the service answered, by its own clock: "
        "an agent holds the reservation that long from the answer's arrival (and removes it "
        "then if the service has not said otherwise), so no host's clock need agree with the "
        "service's (`qosnet.dataplane.control`).",
    )


class ReservationList(BaseModel):
    reservations: list[ReservationOut]


class LinkOut(BaseModel):
    router: int
    port: int
    to: str
    to_id: int
    capacity: float
    reserved: float
    free: float
    utilisation: float = Field(description="reserved / capacity")


class NicOut(BaseModel):
    """A node's NIC: bandwidth reserved from it (`sourced`) and to it (`sunk`)."""

    node: int
    capacity: float
    sourced: float
    sunk: float


class Utilisation(BaseModel):
    nodes: int
    free_nodes: list[int]
    active_jobs: int
    link_bandwidth: float
    max_utilisation: float = Field(description="Largest reserved / capacity, links and NICs.")
    links: list[LinkOut] = Field(description="Every switch output port.")
    nics: list[NicOut] = Field(default=[], description="Every node's NIC, both ways.")


class FieldError(BaseModel):
    field: str
    message: str


class Problem(BaseModel):
    """An error (RFC 9457 problem details, `application/problem+json`). `type` is stable
    per kind of error (`GET /problems` lists them); `detail` names what is wrong; a 422
    lists the fields in `errors`."""

    type: str = Field(examples=["/problems/not-found"])
    title: str
    status: int
    detail: str
    errors: list[FieldError] | None = None


#: The name error bodies had before they were problem details; the same model.
ErrorOut = Problem


class AdmissionRefusal(Problem):
    """Why a job was not admitted (HTTP 409, type `/problems/admission-refused`).
    `retryable`: the same request may be admitted later, once bandwidth or nodes are
    released."""

    reason: str
    retryable: bool


class PointOut(BaseModel):
    bandwidth: float
    time: float


class CurveOut(BaseModel):
    parameters: dict[str, Any]
    nodes: int
    knee: PointOut
    points: list[PointOut]


class ApplicationSummary(BaseModel):
    name: str
    parameters: dict[str, list[Any]]
    pattern: str
    description: str
    curves: int


class ApplicationDetail(BaseModel):
    name: str
    parameters: dict[str, list[Any]]
    pattern: str
    description: str
    curves: list[CurveOut]


class ClusterIn(_In):
    name: str = Field(default="cluster", min_length=1, max_length=200, pattern=CLUSTER_NAME)
    toml: str = Field(min_length=1, description="A qosnet network (TOML).")


class ClusterOut(BaseModel):
    name: str
    nodes: int
    link_bandwidth: float
    toml: str
    description: dict[str, Any]


class TokenCreate(_In):
    name: str = Field(min_length=1, max_length=100, pattern=PRINCIPAL_NAME, examples=["alice"])
    role: Role = "tenant"


class TokenOut(BaseModel):
    id: int
    name: str
    role: Role
    prefix: str
    created_at: datetime
    revoked: bool


class TokenCreated(TokenOut):
    token: str = Field(description="The secret; shown only this once.")


class WhoAmI(BaseModel):
    name: str
    role: Role


class Health(BaseModel):
    """`status` is "ok", or "degraded" when the service runs without a cluster (the stored
    one failed to load: `cluster_error` says why; admission answers 503 until an admin
    installs another)."""

    status: Literal["ok", "degraded"]
    database: str
    revision: int
    cluster: str | None = Field(default=None, description="The loaded cluster's name.")
    cluster_error: str | None = None

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
    "AdmissionRefusal",
    "ApplicationDetail",
    "ApplicationSummary",
    "ClusterIn",
    "ClusterOut",
    "CurveOut",
    "ErrorOut",
    "FieldError",
    "FlowOut",
    "Health",
    "JobList",
    "JobOut",
    "JobState",
    "LinkOut",
    "NicOut",
    "PointOut",
    "RenewJob",
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
_NAME = r"^[A-Za-z0-9][A-Za-z0-9_.@-]*$"


class _In(BaseModel):
    """Request bodies: unknown fields are errors, NaN and inf are not numbers."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)


class SubmitJob(_In):
    """A job request in application terms (document 001 §3.5.1: X in PowerSet{t1, t2,
    x1..xn}): the application, the parameters it fixes (the others are free for the
    translator to choose), the bounds on the execution time, optionally the node count."""

    application: str = Field(min_length=1, max_length=200, examples=["ray_tracing"])
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


class ReservationOut(FlowOut):
    job: str
    owner: str


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


class AdmissionRefusal(BaseModel):
    """Why a job was not admitted (HTTP 409). `retryable`: the same request may be
    admitted later, once bandwidth or nodes are released."""

    detail: str
    reason: str
    retryable: bool


class FieldError(BaseModel):
    field: str
    message: str


class ErrorOut(BaseModel):
    detail: str
    errors: list[FieldError] | None = None


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
    name: str = Field(default="cluster", min_length=1, max_length=200)
    toml: str = Field(min_length=1, description="A qosnet network (TOML).")


class ClusterOut(BaseModel):
    name: str
    nodes: int
    link_bandwidth: float
    toml: str
    description: dict[str, Any]


class TokenCreate(_In):
    name: str = Field(min_length=1, max_length=100, pattern=_NAME, examples=["alice"])
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
    status: str
    database: str
    revision: int

"""The QoS translator: from a request in application terms to bandwidth per flow on N nodes.

Document 001 §3.3 and §3.5.2 (`QoS_Translate`, `Search_Thread`), step by step:

1. Keep the curves of the requested application whose attributes match the request: every
   parameter the request names has that value on the curve; parameters it does not name
   are free, so the translator may pick them (resource adaptivity, §1.2.2, §3.3); if the
   request names N, so must the curve.
2. On each such curve, the candidate points are those from the knee-point (§3.3) down to
   the least bandwidth whose time lies within the bounds {t1, t2} (bounds included; t1 is
   0 and t2 unbounded unless given, §3.3: "it is implicitly assumed to be 0").
3. Per curve, search the candidates from the knee down for the first, i.e. largest,
   bandwidth the resource allocator can grant on the curve's N nodes (§3.4, scenario 3:
   "each search thread returns the largest bandwidth value which can be allocated").
4. Of the curves' results, return the one with the least execution time (§3.4 scenario 2,
   `Get_Smallest_Y`); a tie goes to the one reserving less bandwidth in all, then to fewer
   nodes (§3.4: "select the minimum set of resources").

Times are the profiled points' own: document 001 searches "each point on the graph-line"
and never interpolates, so neither does the translator; a bandwidth between two profiled
points is never offered.

The translator only asks; it reserves nothing. Committing the returned alternative
(`Resource_Allocate` in `Schedule`, §3.5.2) is the allocator's business, and the caller
must do it under the same lock as the translation, or have the allocator check again,
since another request may take the bandwidth in between.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Protocol

from pydantic import Field, model_validator

from qosnet.middleware.errors import Issue, Model, issue_error
from qosnet.middleware.patterns import Pattern
from qosnet.middleware.profiles import (
    KNEE_TOLERANCE,
    Application,
    Curve,
    ParamValue,
    Point,
    ProfileStore,
    knee,
    same_value,
)
from qosnet.middleware.units import MB

__all__ = [
    "Allocator",
    "Alternative",
    "Refusal",
    "RefusalReason",
    "Request",
    "candidates",
    "translate",
]

# The allocator computes what it can grant by subtracting reservations from capacities, so
# 30 MB/s may come back as 29.999999999 MB/s; that still grants the 30 MB/s point.
_GRANT_SLACK = 1e-9


class Request(Model):
    """What a client asks for (document 001 §3.5.1: X in PowerSet{t1, t2, x1..xn}).

    `parameters` fixes some application parameters; the others are free. `t1 <= t2` bound
    the execution time in seconds: t1 defaults to 0 and t2 (None) to no bound. `nodes`, if
    given, fixes N.
    """

    application: str
    parameters: dict[str, ParamValue] = {}
    t1: float = Field(default=0.0, ge=0, strict=True)
    t2: float | None = Field(default=None, gt=0, strict=True)
    nodes: int | None = Field(default=None, gt=0, strict=True)

    @model_validator(mode="after")
    def _check_bounds(self) -> Request:
        if self.t2 is not None and self.t1 > self.t2:
            raise issue_error([Issue("t1", f"must be <= t2 ({self.t2})", self.t1)])
        return self

    def admits(self, time: float) -> bool:
        """True if an execution time lies within {t1, t2}, bounds included (§3.5.3)."""
        return self.t1 <= time and (self.t2 is None or time <= self.t2)


class Alternative(Model):
    """A translation Y = {BW, N, t} (document 001 §3.5.1) and the curve it comes from:
    reserve `bandwidth` bytes/s per flow on `nodes` nodes and expect `time` seconds."""

    curve: Curve
    bandwidth: float = Field(gt=0, strict=True)
    nodes: int = Field(gt=0, strict=True)
    time: float = Field(gt=0, strict=True)

    @model_validator(mode="after")
    def _check_nodes(self) -> Alternative:
        if self.nodes != self.curve.nodes:
            raise issue_error(
                [Issue("nodes", f"must be curve.nodes ({self.curve.nodes})", self.nodes)]
            )
        return self

    @property
    def parameters(self) -> dict[str, ParamValue]:
        """The application parameters this alternative runs with, free ones included."""
        return self.curve.parameters


class RefusalReason(StrEnum):
    """Why a request cannot be admitted."""

    #: Unknown application, parameter or value, or no curve with the fixed values and N.
    NO_PROFILE = "no profile matches"
    #: Curves match, but none has a point from its knee down within {t1, t2} (§3.3).
    NO_TIME_MATCH = "no curve meets the time bound"
    #: Points meet the bound, but the allocator cannot grant even the least of them on
    #: any curve (§3.4 scenario 1: "the new application cannot be admitted at this time").
    NOT_ENOUGH_BANDWIDTH = "not enough bandwidth"


class Refusal(Model):
    """The translator's FAILURE (document 001 §3.5.2), with the reason and the details."""

    reason: RefusalReason
    detail: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


class Allocator(Protocol):
    """The one question the translator asks the resource allocator (document 001 §3.4)."""

    def grantable(self, nodes: int, pattern: Pattern, wanted: float) -> float:
        """The largest bandwidth per flow, at most `wanted` bytes/s, that the allocator
        could grant to every flow of `pattern` on its best choice of `nodes` free nodes
        right now; 0.0 if it could grant none (too few nodes, links full).

        What can be granted must be downward closed (if b can, so can any b' < b), as it
        is for link capacities; then one question per curve answers `allocate_possible`
        (§3.5.2) for every point on it: a point can be allocated iff its bandwidth is at
        most the answer.
        """
        ...


def candidates(
    curve: Curve, request: Request, tolerance: float = KNEE_TOLERANCE
) -> tuple[Point, ...]:
    """The points `Search_Thread` (document 001 §3.5.2) tries on `curve`, in its order:
    from the knee-point down to the least bandwidth, keeping those whose time lies within
    the request's {t1, t2}. Points above the knee are never tried (§3.3: the final set is
    "from the smallest bandwidth value ... until the knee-point values")."""
    top = knee(curve, tolerance).bandwidth
    return tuple(p for p in reversed(curve.points) if p.bandwidth <= top and request.admits(p.time))


def translate(
    store: ProfileStore,
    request: Request,
    allocator: Allocator,
    *,
    knee_tolerance: float = KNEE_TOLERANCE,
) -> Alternative | Refusal:
    """The alternative with the least execution time that the allocator can grant, or why
    there is none (document 001 §3.3-3.5; the steps are in this module's docstring).

    Document 001 runs one search thread per curve. Here each curve costs one question to
    the allocator, answered from in-memory state, so the curves are searched one after the
    other: threads would add only overhead and make the allocator's answers depend on
    timing, where the curves must all be judged against one state of the allocator.
    """
    try:
        app = store.application(request.application)
    except KeyError as error:
        return Refusal(reason=RefusalReason.NO_PROFILE, detail=error.args[0])
    problem = _parameter_problem(app, request)
    if problem:
        return Refusal(reason=RefusalReason.NO_PROFILE, detail=problem)
    curves = store.curves_for(app.name, request.parameters, request.nodes)
    if not curves:
        return Refusal(
            reason=RefusalReason.NO_PROFILE, detail=f"no curve of {_describe(app.name, request)}"
        )

    timely = [(c, pts) for c in curves if (pts := candidates(c, request, knee_tolerance))]
    if not timely:
        return Refusal(
            reason=RefusalReason.NO_TIME_MATCH,
            detail=f"none of the {len(curves)} curves of {_describe(app.name, request)} has a "
            f"point from its knee down with a time in {_bounds(request)}",
        )

    alternatives: list[Alternative] = []
    shortfalls: list[str] = []
    for curve, points in timely:
        granted = _ask(allocator, curve, app.pattern, points[0].bandwidth)
        point = next((p for p in points if p.bandwidth <= granted * (1 + _GRANT_SLACK)), None)
        if point is None:
            shortfalls.append(
                f"{curve.label} needs >= {points[-1].bandwidth / MB:g} MB/s per flow, "
                f"{granted / MB:g} MB/s grantable"
            )
        else:
            alternatives.append(
                Alternative(
                    curve=curve, bandwidth=point.bandwidth, nodes=curve.nodes, time=point.time
                )
            )
    if not alternatives:
        return Refusal(reason=RefusalReason.NOT_ENOUGH_BANDWIDTH, detail="; ".join(shortfalls))
    return min(
        alternatives,
        key=lambda a: (a.time, a.bandwidth * len(app.pattern.flows(a.nodes)), a.nodes),
    )


def _ask(allocator: Allocator, curve: Curve, pattern: Pattern, wanted: float) -> float:
    granted = allocator.grantable(curve.nodes, pattern, wanted)
    if not (math.isfinite(granted) and 0 <= granted <= wanted * (1 + _GRANT_SLACK)):
        raise ValueError(
            f"allocator.grantable({curve.nodes}, {pattern.value!r}, {wanted!r}): "
            f"must return a number in [0, wanted], got {granted!r}"
        )
    return granted


def _parameter_problem(app: Application, request: Request) -> str | None:
    for name, value in request.parameters.items():
        allowed = app.parameters.get(name)
        if allowed is None:
            have = ", ".join(app.parameters) or "none"
            return f"{app.name} has no parameter {name!r} (it has: {have})"
        if not any(same_value(value, v) for v in allowed):
            return f"{name}={value!r} is not profiled for {app.name} (allowed: {list(allowed)})"
    return None


def _describe(application: str, request: Request) -> str:
    fixed = [f"{k}={v}" for k, v in request.parameters.items()]
    if request.nodes is not None:
        fixed.append(f"nodes={request.nodes}")
    return f"{application} with {', '.join(fixed)}" if fixed else application


def _bounds(request: Request) -> str:
    upper = "inf" if request.t2 is None else f"{request.t2:g}"
    return f"[{request.t1:g}, {upper}] s"

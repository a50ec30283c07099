"""The profile store: per application, curves of execution time against bandwidth per flow.

Document 001 §3.5.1 formalises the profiled data: graph-curves G_1..G_k, each identified by
its attributes {x_1..x_n, N, K} (the application parameters, the number of nodes, the
knee-point bandwidth) and holding points P = {BW, t} (bandwidth per flow, execution time).
Here a `Curve` carries x_1..x_n (`parameters`), N (`nodes`) and the points; K is not stored
but computed by `knee`, so that it can never disagree with the points or the tolerance.

Each `Application` declares its parameters with the values they may take and its
communication pattern (§3.2.1), which turns bandwidth per flow into load per link.
Units: bytes/s and seconds (`qosnet.middleware.units`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from itertools import pairwise
from typing import Annotated, Any

from pydantic import Field, PlainValidator, model_validator
from pydantic_core import PydanticCustomError

from qosnet.middleware.errors import InvalidData, Issue, Model, issue_error
from qosnet.middleware.patterns import Pattern

__all__ = [
    "KNEE_TOLERANCE",
    "RESERVED_COLUMNS",
    "Application",
    "Curve",
    "ParamValue",
    "Point",
    "ProfileStore",
    "knee",
    "same_value",
]

#: Document 001 §3.3: the knee is within "a percentage value under 5 percent" of the time
#: at the largest bandwidth.
KNEE_TOLERANCE = 0.05

#: CSV columns besides the parameters (`profile_io`), so no parameter may take these names.
RESERVED_COLUMNS = ("application", "nodes", "bandwidth", "time")

# (anchored: a pydantic `pattern` matches anywhere in the string unless told otherwise)
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def _param_value(value: Any) -> int | float | str:
    # A plain validator, not a union: a union's error names every member it tried.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise PydanticCustomError("param_value", "must be an integer, a number or a string")
    if isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("param_value", "must be a finite number")
    return value


#: The value of an application parameter: image size 512, interleaving factor 0, ...
ParamValue = Annotated[
    int | float | str, PlainValidator(_param_value, json_schema_input_type=int | float | str)
]


class Point(Model):
    """One profiled run: `bandwidth` reserved per flow (bytes/s) and the execution `time` (s)."""

    bandwidth: float = Field(gt=0, strict=True)
    time: float = Field(gt=0, strict=True)


class Curve(Model):
    """A graph-curve G_i (document 001 §3.5.1): one application, one value per parameter,
    N nodes, and points sorted by strictly increasing bandwidth."""

    application: str
    parameters: dict[str, ParamValue] = {}
    nodes: int = Field(gt=0, strict=True)
    points: tuple[Point, ...]

    @model_validator(mode="after")
    def _check_points(self) -> Curve:
        if not self.points:
            raise issue_error([Issue("points", "must hold at least one point", [])])
        bandwidths = [p.bandwidth for p in self.points]
        issues = [
            Issue(f"points[{j}].bandwidth", f"must be > points[{j - 1}].bandwidth ({a})", b)
            for j, (a, b) in enumerate(pairwise(bandwidths), start=1)
            if not b > a
        ]
        if issues:
            raise issue_error(issues)
        return self

    @property
    def label(self) -> str:
        """`ray_tracing image_size=512 interleaving=0 nodes=8`, for messages."""
        params = " ".join(f"{k}={v}" for k, v in self.parameters.items())
        return " ".join(filter(None, [self.application, params, f"nodes={self.nodes}"]))

    def matches(self, parameters: Mapping[str, ParamValue]) -> bool:
        """True if the curve has every value in `parameters`; unnamed parameters are free."""
        return all(
            name in self.parameters and same_value(self.parameters[name], value)
            for name, value in parameters.items()
        )


class Application(Model):
    """An application the middleware can schedule.

    `parameters` maps each application parameter x_i (document 001 §3.5.1) to the values a
    request may ask for, e.g. `{"image_size": (512, 1024), "interleaving": (0, 2)}`;
    `pattern` says which nodes talk to which (§3.2.1).
    """

    name: str = Field(pattern=_NAME.pattern)
    parameters: dict[str, tuple[ParamValue, ...]] = {}
    pattern: Pattern
    description: str = ""

    @model_validator(mode="after")
    def _check_parameters(self) -> Application:
        issues: list[Issue] = []
        for name, values in self.parameters.items():
            if not _NAME.fullmatch(name):
                issues.append(Issue("parameters", "names must be identifiers", name))
            elif name in RESERVED_COLUMNS:
                reserved = ", ".join(RESERVED_COLUMNS)
                issues.append(Issue("parameters", f"names must not be one of {reserved}", name))
            if not values:
                issues.append(Issue(f"parameters.{name}", "must allow at least one value", ()))
            for j, value in enumerate(values):
                # Equal values would make requests ambiguous; equal text, CSV cells.
                if any(same_value(value, v) or str(value) == str(v) for v in values[:j]):
                    issues.append(Issue(f"parameters.{name}[{j}]", "repeats a value", value))
        if issues:
            raise issue_error(issues)
        return self


class ProfileStore(Model):
    """The profiler's data (document 001 §3.2): applications and their curves.

    Every curve belongs to a known application, has exactly that application's parameters
    with allowed values, a node count its pattern can use, and is the only curve with its
    parameter values and N.
    """

    applications: tuple[Application, ...] = ()
    curves: tuple[Curve, ...] = ()

    @model_validator(mode="after")
    def _check_references(self) -> ProfileStore:
        issues: list[Issue] = []
        apps: dict[str, Application] = {}
        for i, app in enumerate(self.applications):
            if app.name in apps:
                issues.append(Issue(f"applications[{i}].name", "repeats a name", app.name))
            apps.setdefault(app.name, app)
        seen: dict[tuple[Any, ...], int] = {}
        for i, curve in enumerate(self.curves):
            owner = apps.get(curve.application)
            if owner is None:
                known = ", ".join(apps) or "none"
                issues.append(
                    Issue(
                        f"curves[{i}].application",
                        f"is not a known application ({known})",
                        curve.application,
                    )
                )
                continue
            issues += _curve_issues(f"curves[{i}]", curve, owner)
            key = _key(curve)
            if key in seen:
                issues.append(Issue(f"curves[{i}]", f"repeats curves[{seen[key]}]", curve.label))
            seen.setdefault(key, i)
        if issues:
            raise issue_error(issues)
        return self

    def application(self, name: str) -> Application:
        """The application called `name`; KeyError naming the known ones if none is."""
        for app in self.applications:
            if app.name == name:
                return app
        known = ", ".join(a.name for a in self.applications) or "none"
        raise KeyError(f"no application {name!r} (known: {known})")

    def curves_for(
        self,
        application: str,
        parameters: Mapping[str, ParamValue] | None = None,
        nodes: int | None = None,
    ) -> tuple[Curve, ...]:
        """The application's curves with the given parameter values (the others are free)
        and, if given, `nodes` nodes: the `match(G_i.attr, X)` of document 001 §3.5.2."""
        return tuple(
            c
            for c in self.curves
            if c.application == application
            and c.matches(parameters or {})
            and (nodes is None or c.nodes == nodes)
        )


def knee(curve: Curve, tolerance: float = KNEE_TOLERANCE) -> Point:
    """The knee-point K of a curve (document 001 §3.3): the point of least bandwidth whose
    time is within `tolerance` (5%) of the time at the curve's largest bandwidth.

    "Within" is `time <= (1 + tolerance) * time_at_largest_bandwidth`: a point faster than
    the last one qualifies too, and the bound itself counts. The rule is taken literally on
    the points as given, so on a noisy curve a low-bandwidth point that happens to be fast
    is the knee. A single-point curve is its own knee; so is the first point of a flat one.
    """
    if not (math.isfinite(tolerance) and tolerance >= 0):
        raise InvalidData([Issue("tolerance", "must be a finite number >= 0", tolerance)])
    limit = (1.0 + tolerance) * curve.points[-1].time
    return next(p for p in curve.points if p.time <= limit)


def same_value(a: ParamValue, b: ParamValue) -> bool:
    """Equal values of the same kind: 512 is 512.0, but not "512"."""
    return isinstance(a, str) == isinstance(b, str) and a == b


def _key(curve: Curve) -> tuple[Any, ...]:
    # Through float, so that 512 and 512.0 name the same curve, as `_same` says they do.
    params = sorted((k, v if isinstance(v, str) else float(v)) for k, v in curve.parameters.items())
    return curve.application, tuple(params), curve.nodes


def _curve_issues(where: str, curve: Curve, app: Application) -> list[Issue]:
    issues = [
        Issue(f"{where}.parameters", f"lacks {name!r}, a parameter of {app.name}")
        for name in app.parameters
        if name not in curve.parameters
    ]
    for name, value in curve.parameters.items():
        allowed = app.parameters.get(name)
        if allowed is None:
            issues.append(
                Issue(f"{where}.parameters", f"{app.name} has no parameter {name!r}", name)
            )
        elif not any(same_value(value, v) for v in allowed):
            issues.append(
                Issue(f"{where}.parameters.{name}", f"must be one of {list(allowed)}", value)
            )
    problem = app.pattern.nodes_problem(curve.nodes)
    if problem:
        issues.append(Issue(f"{where}.nodes", problem, curve.nodes))
    return issues

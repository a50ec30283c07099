"""Validation errors that name the field and the offending value.

The middleware's models are pydantic models: pydantic checks shapes and types, the models'
own validators check the rules of document 001 §3.5.1 (positive bandwidths and times,
bandwidths sorted along a curve, parameter values the application allows). Everything that
reads data from outside (JSON, CSV, `parse`) turns pydantic's errors into `InvalidData`,
one `Issue` per problem, each printed as `curves[3].points[2].time: must be > 0, got -1.0`.
A model built directly in code (`Point(bandwidth=-1.0, time=1.0)`) raises pydantic's own
ValidationError, as a web framework expects; `parse` gives the InvalidData form of it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

__all__ = ["MISSING", "InvalidData", "Issue", "Model", "issue_error", "join_path", "parse"]

#: The value of an Issue about something that is absent (a required field, a CSV column).
MISSING: Any = type("_Missing", (), {"__repr__": lambda self: "<missing>"})()

# Our validators raise one pydantic error of this type carrying a list of issues, so that a
# rule spanning several fields (sorted bandwidths, duplicate curves) can still name the
# exact element: pydantic supplies the prefix (`curves[3]`), the issue the rest.
_ISSUES = "qosnet_issues"


class Model(BaseModel):
    """Base of the middleware's models: immutable, unknown fields rejected, no NaN or inf."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


@dataclass(frozen=True)
class Issue:
    """One problem: where (`curves[3].points[2].time`), what is wrong, and the value."""

    path: str
    reason: str
    value: Any = MISSING

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        got = "" if self.value is MISSING else f", got {self.value!r}"
        return f"{where}{self.reason}{got}"


class InvalidData(ValueError):
    """Data that breaks the rules; `.issues` lists every problem found, one per line."""

    def __init__(self, issues: Sequence[Issue]) -> None:
        self.issues: tuple[Issue, ...] = tuple(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))

    @classmethod
    def from_pydantic(cls, error: ValidationError) -> InvalidData:
        """pydantic's errors as issues, the paths of our validators' issues completed."""
        issues: list[Issue] = []
        for err in error.errors():
            path = _loc_path(err["loc"])
            if err["type"] == _ISSUES:
                issues += [
                    Issue(join_path(path, i.path), i.reason, i.value) for i in err["ctx"]["issues"]
                ]
            else:
                value = MISSING if err["type"] == "missing" else err.get("input", MISSING)
                issues.append(Issue(path, _reason(err), value))
        return cls(issues)


def issue_error(issues: Iterable[Issue]) -> PydanticCustomError:
    """What a model validator raises: pydantic files it under the model's own location."""
    issues = tuple(issues)
    return PydanticCustomError(
        _ISSUES, "{summary}", {"summary": "; ".join(map(str, issues)), "issues": issues}
    )


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any) -> M:
    """`model` validated from plain data (a dict from JSON, say), or InvalidData."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        raise InvalidData.from_pydantic(error) from None


def join_path(prefix: str, path: str) -> str:
    """`curves[3]` + `points[2].time`, `curves[3]` + `[2]`, or either alone."""
    if not prefix or not path:
        return prefix or path
    return prefix + path if path.startswith("[") else f"{prefix}.{path}"


def _loc_path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        path = join_path(path, f"[{part}]" if isinstance(part, int) else part)
    return path


def _reason(err: Any) -> str:
    """pydantic's error, phrased like the rest: `must be > 0`."""
    kind, ctx = err["type"], err.get("ctx", {})
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        op = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<"}.get(kind, "<=")
        bound = next(iter(ctx.values()))
        if isinstance(bound, float) and math.isfinite(bound) and bound.is_integer():
            bound = int(bound)
        return f"must be {op} {bound}"
    reasons = {
        "finite_number": "must be a finite number",
        "missing": "is required",
        "extra_forbidden": "is not a known field",
        "int_type": "must be an integer",
        "int_parsing": "must be an integer",
        "int_from_float": "must be an integer",
        "float_type": "must be a number",
        "float_parsing": "must be a number",
        "string_type": "must be a string",
        "bool_type": "must be true or false",
        "dict_type": "must be an object",
        "list_type": "must be a list",
        "tuple_type": "must be a list",
        "model_type": "must be an object",
        "model_attributes_type": "must be an object",
    }
    if kind in reasons:
        return reasons[kind]
    if kind == "enum":
        return f"must be one of {ctx['expected']}"
    if kind == "value_error":
        return str(ctx["error"])
    msg: str = err["msg"]
    return msg[:1].lower() + msg[1:]

"""Profile stores to and from JSON and CSV, and the example profiles shipped with qosnet.

JSON holds a whole store: `{"applications": [...], "curves": [...]}`, exactly the fields of
`ProfileStore` (bandwidths in bytes/s, times in s).

CSV holds the points only, one row per point, so that `pandas.read_csv` reads it as is:
`application, <every parameter of every application>, nodes, bandwidth, time`. A parameter
column is blank on the rows of an application that does not have that parameter. The
applications themselves (parameters, allowed values, pattern) come from elsewhere, JSON
for one, and reading a CSV needs them. Row order carries no meaning in a table, so reading
sorts each curve's points by bandwidth; two rows of one curve with the same bandwidth are
an error that names both lines.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from importlib import resources
from itertools import pairwise
from typing import Any

from pydantic import ValidationError

from qosnet import nesting
from qosnet.middleware.errors import MISSING, InvalidData, Issue, parse
from qosnet.middleware.profiles import (
    RESERVED_COLUMNS,
    Application,
    Curve,
    ParamValue,
    Point,
    ProfileStore,
    same_value,
)

__all__ = ["from_csv", "from_json", "load_examples", "load_profiled", "to_csv", "to_json"]


def to_json(store: ProfileStore) -> str:
    """The store as JSON text, indented, ending in a newline."""
    return json.dumps(store.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def from_json(text: str) -> ProfileStore:
    """A store from JSON text; InvalidData naming every problem."""
    try:
        nesting.check_text(text)  # (json.loads recurses: refuse deep input first)
    except nesting.TooDeep as error:
        raise InvalidData([Issue("<root>", str(error))]) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno}, column {error.colno}"
        raise InvalidData([Issue(where, f"is not JSON: {error.msg}")]) from None
    return parse(ProfileStore, data)


def to_csv(store: ProfileStore) -> str:
    """Every point of every curve, one row each, with a header row."""
    params = _param_columns(store.applications)
    apps = {app.name: app for app in store.applications}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["application", *params, "nodes", "bandwidth", "time"])
    for curve in store.curves:
        allowed = apps[curve.application].parameters
        # The allowed value's own text, which is what `from_csv` matches (512.0 for 512).
        cells = [
            next((v for v in allowed[name] if same_value(v, curve.parameters[name])), "")
            if name in curve.parameters
            else ""
            for name in params
        ]
        for point in curve.points:
            # repr: the shortest text that reads back as the same float.
            row = [curve.application, *cells, curve.nodes]
            writer.writerow([*row, repr(point.bandwidth), repr(point.time)])
    return out.getvalue()


def from_csv(text: str, applications: Iterable[Application], source: str = "") -> ProfileStore:
    """A store of `applications` and the curves in CSV `text` (as `to_csv` writes it).

    Problems are reported by line and column (`line 7, column time: must be > 0, got -1.0`),
    after `source` (a file name, say) if given.
    """
    apps = tuple(applications)
    reader = _Reader(apps, source)
    curves = reader.read(text)
    if reader.issues:
        raise InvalidData(reader.issues)
    return parse(ProfileStore, {"applications": apps, "curves": curves})


def load_profiled() -> ProfileStore:
    """The profiles shipped with qosnet: the profiler's (`qosnet profile`, document 001
    §3.2), application models of ray tracing, polygon rendering and IS run on the engine on
    document 001's testbed (`qosnet/middleware/data/profiled.json`; see the README.md there)."""
    data = resources.files("qosnet.middleware").joinpath("data")
    return from_json(data.joinpath("profiled.json").read_text(encoding="utf-8"))


def load_examples() -> ProfileStore:
    """The hand-written profiles of ray tracing and polygon rendering in
    `qosnet/middleware/data`, written to agree with document 001's worked examples (§3.2-3.4);
    a test fixture for those examples, not measurements (see the README.md there)."""
    data = resources.files("qosnet.middleware").joinpath("data")
    apps = from_json(data.joinpath("applications.json").read_text(encoding="utf-8"))
    curves: list[Curve] = []
    for name in ("ray_tracing.csv", "polygon_rendering.csv"):
        text = data.joinpath(name).read_text(encoding="utf-8")
        curves += from_csv(text, apps.applications, source=name).curves
    return ProfileStore(applications=apps.applications, curves=tuple(curves))


def _param_columns(applications: Iterable[Application]) -> list[str]:
    """Every parameter of every application, in order of first appearance."""
    return list(dict.fromkeys(name for app in applications for name in app.parameters))


class _Reader:
    """One pass over the CSV rows, collecting issues instead of stopping at the first."""

    def __init__(self, applications: tuple[Application, ...], source: str) -> None:
        self.apps = {app.name: app for app in applications}
        self.source = source
        self.issues: list[Issue] = []
        self.lacking: set[tuple[str, str]] = set()

    def issue(self, line: int, column: str | None, reason: str, value: Any = MISSING) -> None:
        where = f"line {line}" + (f", column {column}" if column else "")
        self.issues.append(Issue(f"{self.source} {where}" if self.source else where, reason, value))

    def read(self, text: str) -> list[dict[str, Any]]:
        rows = csv.reader(io.StringIO(text.removeprefix("\ufeff")))  # a spreadsheet's BOM
        header = [cell.strip() for cell in next(rows, [])]
        if not self.check_header(header):
            return []
        # curve key -> the curve's fields and its points as (bandwidth, time, line)
        curves: dict[tuple[Any, ...], tuple[dict[str, Any], list[tuple[float, float, int]]]] = {}
        for line, row in enumerate(rows, start=2):
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                self.issue(line, None, f"must have {len(header)} cells like the header", len(row))
                continue
            parsed = self.row(line, dict(zip(header, row, strict=True)))
            if parsed is not None:
                fields, point = parsed
                key = (fields["application"], tuple(fields["parameters"].items()), fields["nodes"])
                curves.setdefault(key, (fields, []))[1].append((*point, line))
        result = []
        for fields, points in curves.values():
            points.sort(key=lambda p: p[0])
            for (b0, _, line0), (b1, _, line1) in pairwise(points):
                if b1 == b0:
                    self.issue(line1, "bandwidth", f"repeats line {line0} of the same curve", b1)
            result.append({**fields, "points": [{"bandwidth": b, "time": t} for b, t, _ in points]})
        return result

    def check_header(self, header: list[str]) -> bool:
        params = _param_columns(self.apps.values())
        ok = True
        for name in RESERVED_COLUMNS:
            if name not in header:
                self.issue(1, None, f"lacks the column {name!r}")
                ok = False
        for j, name in enumerate(header):
            if name not in RESERVED_COLUMNS and name not in params:
                self.issue(1, name, "is not a parameter of any application", name)
                ok = False
            if name in header[:j]:
                self.issue(1, name, "repeats a column", name)
                ok = False
        return ok

    def row(
        self, line: int, cells: dict[str, str]
    ) -> tuple[dict[str, Any], tuple[float, float]] | None:
        n_issues = len(self.issues)
        app = self.apps.get(cells["application"].strip())
        if app is None:
            known = ", ".join(self.apps) or "none"
            self.issue(
                line, "application", f"is not a known application ({known})", cells["application"]
            )
            return None
        parameters: dict[str, ParamValue] = {}
        for name in app.parameters:
            if name not in cells and (app.name, name) not in self.lacking:
                self.lacking.add((app.name, name))  # once per column, not on every row
                self.issue(1, None, f"lacks the column {name!r}, a parameter of {app.name}")
        for name, cell in cells.items():
            if name in RESERVED_COLUMNS:
                continue
            allowed = app.parameters.get(name)
            if allowed is None:
                if cell.strip():
                    self.issue(line, name, f"must be blank: {app.name} has no such parameter", cell)
                continue
            # Cells are matched by text, which `Application` keeps distinct per parameter;
            # exactly first, so that " a" and "a" stay apart, then ignoring spaces.
            value = next((v for v in allowed if str(v) == cell), None)
            if value is None:
                value = next((v for v in allowed if str(v).strip() == cell.strip()), None)
            if value is None:
                self.issue(line, name, f"must be one of {list(allowed)}", cell)
            else:
                parameters[name] = value
        nodes = self.number(line, cells, "nodes", int)
        bandwidth = self.number(line, cells, "bandwidth", float)
        time = self.number(line, cells, "time", float)
        if nodes is not None:
            problem = app.pattern.nodes_problem(nodes)
            if problem:
                self.issue(line, "nodes", problem, nodes)
        if bandwidth is not None and time is not None:
            try:  # the rules of a point are Point's, reported by line and column here
                Point(bandwidth=bandwidth, time=time)
            except ValidationError as error:
                for issue in InvalidData.from_pydantic(error).issues:
                    self.issue(line, issue.path, issue.reason, issue.value)
        if len(self.issues) > n_issues or nodes is None or bandwidth is None or time is None:
            return None
        fields = {"application": app.name, "parameters": parameters, "nodes": nodes}
        return fields, (bandwidth, time)

    def number(self, line: int, cells: dict[str, str], column: str, kind: type) -> Any:
        try:
            return kind(cells[column])
        except ValueError:
            noun = "an integer" if kind is int else "a number"
            self.issue(line, column, f"must be {noun}", cells[column])
            return None

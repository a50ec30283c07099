"""What a sweep is: a base configuration, axes of values, seeds, and how axes combine.

A sweep file is TOML with one `[sweep]` table (paths relative to the file):

```toml
[sweep]
base = "../configs/examples/mesh8x8_uniform.toml"
mode = "product"            # every combination of the axes; "zip": the i-th of each
seeds = [1, 2]              # simulation.seed of every point (default: the base's own)
set = ["simulation.measure=20000"]   # overrides every point shares

[sweep.axes]
"traffic[0].load" = [0.1, 0.2, 0.3]
"router.kind" = ["traditional", "preemptive"]

[sweep.saturation]          # --find-saturation: bisection on one axis
axis = "traffic[0].load"
low = 0.05
high = 1.0
tolerance = 0.01
```

On the command line the same: `qosnet sweep CONFIG --axis 'traffic[0].load=0.1,0.2'`
(values as comma-separated TOML values, or `START..STOP/N`: N evenly spaced values, both
ends included) `--seeds 1,2 --zip`.
"""

from __future__ import annotations

import itertools
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from qosnet import nesting
from qosnet.config import parse_value

__all__ = ["Axis", "Point", "Saturation", "Sweep", "SweepError", "parse_axis", "read_sweep"]

MODES = ("product", "zip")


class SweepError(ValueError):
    """A bad sweep description; the message names the field (`sweep.axes: ...`)."""


@dataclass(frozen=True)
class Axis:
    """A configuration path (as `--set` takes it) and the values it takes."""

    path: str
    values: tuple[Any, ...]

    @property
    def column(self) -> str:
        """The axis's column in the sweep table: its path (`traffic[0].load`)."""
        return self.path


@dataclass(frozen=True)
class Saturation:
    """Bisection on `axis` (a load) between `low` (not saturated) and `high` (saturated)
    until the interval is narrower than `tolerance`."""

    axis: str
    low: float = 0.05
    high: float = 1.0
    tolerance: float = 0.01

    def check(self) -> None:
        if not 0 <= self.low < self.high:
            raise SweepError(
                f"sweep.saturation: must have 0 <= low < high, got low={self.low}, high={self.high}"
            )
        if not self.tolerance > 0:
            raise SweepError(f"sweep.saturation.tolerance: must be > 0, got {self.tolerance}")


@dataclass(frozen=True)
class Point:
    """One run of the sweep: its axis values and seed, as overrides of the base."""

    values: tuple[tuple[str, Any], ...]
    seed: int | None

    def overrides(self, shared: Sequence[str]) -> tuple[str, ...]:
        out = [*shared, *(f"{path}={_toml(v)}" for path, v in self.values)]
        if self.seed is not None:
            out.append(f"simulation.seed={self.seed}")
        return tuple(out)

    def label(self) -> dict[str, Any]:
        return dict(self.values)


@dataclass(frozen=True)
class Sweep:
    base: Path
    axes: tuple[Axis, ...] = ()
    mode: str = "product"
    seeds: tuple[int, ...] = ()
    shared: tuple[str, ...] = ()
    saturation: Saturation | None = field(default=None, compare=False)

    def check(self) -> None:
        if self.mode not in MODES:
            raise SweepError(f"sweep.mode: must be one of {', '.join(MODES)}, got {self.mode!r}")
        names = [a.path for a in self.axes]
        if len(set(names)) != len(names):
            raise SweepError(f"sweep.axes: an axis is given twice: {names}")
        for a in self.axes:
            if not a.values:
                raise SweepError(f"sweep.axes.{a.path}: must have at least one value")
        if self.mode == "zip" and len({len(a.values) for a in self.axes}) > 1:
            lengths = ", ".join(f"{a.path}: {len(a.values)}" for a in self.axes)
            raise SweepError(f"sweep.axes: zip needs axes of one length, got {lengths}")
        if len(set(self.seeds)) != len(self.seeds):
            raise SweepError(f"sweep.seeds: a seed is given twice: {list(self.seeds)}")
        if self.saturation is not None:
            self.saturation.check()

    def points(self) -> list[Point]:
        """Every point, seeds innermost, in the order the table lists them."""
        self.check()
        columns = [[(a.path, v) for v in a.values] for a in self.axes]
        combos = list(zip(*columns, strict=True)) if self.mode == "zip" else None
        if combos is None:
            combos = list(itertools.product(*columns))
        seeds: Sequence[int | None] = self.seeds or (None,)
        return [Point(tuple(c), s) for c in combos for s in seeds]

    def without(self, path: str) -> Sweep:
        """The sweep with one axis removed (the saturation search's curves)."""
        return replace(self, axes=tuple(a for a in self.axes if a.path != path))


def _toml(value: Any) -> str:
    """A value as an override's right-hand side (read back by `parse_value`)."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    import tomli_w

    return tomli_w.dumps({"v": value}).split("=", 1)[1].strip()


def parse_axis(text: str) -> Axis:
    """`path=v1,v2,...` or `path=START..STOP/N` (N values, both ends included)."""
    path, sep, rhs = text.partition("=")
    path, rhs = path.strip(), rhs.strip()
    if not sep or not path or not rhs:
        raise SweepError(f"--axis: must be PATH=V1,V2,... or PATH=START..STOP/N, got {text!r}")
    if ".." in rhs and "/" in rhs and not rhs.startswith(("[", '"', "'")):
        span, _, count = rhs.rpartition("/")
        start, _, stop = span.partition("..")
        try:
            a, b, n = float(start), float(stop), int(count)
        except ValueError:
            raise SweepError(f"--axis {path}: START..STOP/N needs numbers, got {rhs!r}") from None
        if n < 1:
            raise SweepError(f"--axis {path}: N must be >= 1, got {n}")
        values = [a] if n == 1 else [round(a + (b - a) * i / (n - 1), 12) for i in range(n)]
        return Axis(path, tuple(values))
    return Axis(path, tuple(parse_value(v.strip()) for v in _split(rhs)))


def _split(rhs: str) -> list[str]:
    # commas inside brackets or quotes belong to a value (`[1, 2]`, "a, b")
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in rhs:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return [p for p in parts if p.strip()]


def is_sweep_file(path: Path) -> bool:
    """A TOML file with a `[sweep]` table (a configuration has none)."""
    try:
        text = path.read_text(encoding="utf-8")
        nesting.check_text(text)
        return "sweep" in tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, nesting.TooDeep):
        return False


def read_sweep(path: Path) -> Sweep:
    """Read a sweep file (see the module comment)."""
    try:
        text = path.read_text(encoding="utf-8")
        nesting.check_text(text)  # (tomllib recurses: refuse deep input first)
        tree = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, nesting.TooDeep) as e:
        raise SweepError(f"{path}: {e}") from None
    s = tree.get("sweep")
    if not isinstance(s, dict):
        raise SweepError(f"{path}: needs a [sweep] table")
    known = {"base", "mode", "seeds", "set", "axes", "saturation"}
    unknown = sorted(set(s) - known)
    if unknown:
        raise SweepError(f"sweep.{unknown[0]}: unknown key; allowed: {', '.join(sorted(known))}")
    if not isinstance(s.get("base"), str):
        raise SweepError("sweep.base: must be the path of a configuration file")
    axes_tree = s.get("axes", {})
    if not isinstance(axes_tree, dict):
        raise SweepError('sweep.axes: must be a table of `"path" = [values]`')
    axes = []
    for name, values in axes_tree.items():
        if not isinstance(values, list):
            raise SweepError(f"sweep.axes.{name}: must be a list of values")
        axes.append(Axis(name, tuple(values)))
    seeds = s.get("seeds", [])
    if not isinstance(seeds, list) or not all(isinstance(x, int) for x in seeds):
        raise SweepError(f"sweep.seeds: must be a list of integers, got {seeds!r}")
    shared = s.get("set", [])
    if not isinstance(shared, list) or not all(isinstance(x, str) for x in shared):
        raise SweepError(f"sweep.set: must be a list of `path=value` strings, got {shared!r}")
    saturation = None
    if "saturation" in s:
        sat = s["saturation"]
        try:
            saturation = Saturation(**sat)
        except TypeError:
            raise SweepError(
                "sweep.saturation: allowed keys are axis, low, high, tolerance"
            ) from None
    sweep = Sweep(
        base=(path.parent / s["base"]).resolve(),
        axes=tuple(axes),
        mode=s.get("mode", "product"),
        seeds=tuple(seeds),
        shared=tuple(shared),
        saturation=saturation,
    )
    sweep.check()
    return sweep

"""The saturation load of each curve, by bisection (`qosnet sweep --find-saturation`).

A curve is every combination of the sweep's other axes and seeds; along it the search
varies one load axis. A run is saturated as the engine's summary says (ARCHITECTURE /
README "Measurement": the drain did not complete, or accepted throughput fell more than 5%
short of offered). The search first runs both ends: `low` must not saturate and `high`
must; then it halves [low, high] around the boundary until it is narrower than the
tolerance. Each round runs one point per unfinished curve, all curves at once on the pool;
every run is an ordinary cached point (`runs/KEY16/`), so a repeated or interrupted search
costs only what is new. The answer per curve: the highest load seen unsaturated (`low`),
the lowest seen saturated (`high`), and their midpoint (`saturation`), or NaN with a
`status` when an end is already on the wrong side.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet.pool import Outcome, Pool
from qosnet.results import RunResult
from qosnet.sweep.run import Planned, SweepOutcome, plan, run_points, table
from qosnet.sweep.spec import Point, Saturation, Sweep
from qosnet.tables import write

__all__ = ["Curve", "find_saturation"]


@dataclass
class Curve:
    """One curve's search state: a point without the load axis, and its bracket."""

    base: Point
    low: float
    high: float
    status: str = "searching"
    runs: list[Planned] = field(default_factory=list)
    #: The seed the runs used (the base configuration's when the sweep names none).
    seed: int | None = None

    def at(self, axis: str, load: float) -> Point:
        return replace(self.base, values=(*self.base.values, (axis, load)))

    def row(self, sat: Saturation) -> dict[str, Any]:
        done = self.status == "found"
        return {
            **self.base.label(),
            "seed": self.seed,
            "saturation": (self.low + self.high) / 2 if done else math.nan,
            "low": self.low,
            "high": self.high,
            "status": self.status,
            "runs": len(self.runs),
            "tolerance": sat.tolerance,
        }


def _saturated(out: Path, p: Planned) -> bool | None:
    directory = out / "runs" / p.directory
    if not (directory / "summary.json").is_file():
        return None  # failed: the curve stops with that status
    return bool(RunResult.read(directory).summary["saturated"])


def find_saturation(
    sweep: Sweep,
    out: Path,
    pool: Pool,
    use_cache: bool = True,
    on_round: Callable[[int, int], None] | None = None,
    on_done: Callable[[Planned, Outcome | None], None] | None = None,
) -> tuple[SweepOutcome, Path]:
    """Search every curve; write `saturation.parquet` (one row per curve) and
    `bisection.parquet` (every run the search made, as `sweep.parquet` lists runs)."""
    sat = sweep.saturation
    if sat is None:
        raise ValueError("find_saturation: the sweep has no [sweep.saturation]")
    sat.check()
    curves_sweep = sweep.without(sat.axis)
    curves = [Curve(p, sat.low, sat.high) for p in curves_sweep.points()]
    total = SweepOutcome()
    # round 0: both ends; then one midpoint per curve still searching
    batch: list[tuple[Curve, float]] = [(c, sat.low) for c in curves] + [
        (c, sat.high) for c in curves
    ]
    rounds = 0
    while batch:
        rounds += 1
        planned = plan(sweep, [c.at(sat.axis, x) for c, x in batch])
        if on_round:
            on_round(rounds, len(planned))
        result = run_points(sweep, planned, out, pool, use_cache, on_done)
        total.ran += result.ran
        total.cached += result.cached
        total.failed.update(result.failed)
        for (curve, x), p in zip(batch, planned, strict=True):
            curve.runs.append(p)
            state = _saturated(out, p)
            if curve.seed is None and state is not None:
                config = (out / "runs" / p.directory / "config.toml").read_text(encoding="utf-8")
                curve.seed = tomllib.loads(config)["simulation"]["seed"]
            if curve.status != "searching":
                continue
            if state is None:
                curve.status = "failed"
            elif rounds == 1:
                if x == sat.low and state:
                    curve.status = "saturated at low"
                elif x == sat.high and not state:
                    curve.status = "not saturated at high"
            elif state:
                curve.high = x
            else:
                curve.low = x
        batch = []
        for curve in curves:
            if curve.status == "searching":
                if curve.high - curve.low <= sat.tolerance:
                    curve.status = "found"
                else:
                    batch.append((curve, round((curve.low + curve.high) / 2, 12)))
    rows = pd.DataFrame([c.row(sat) for c in curves])
    path = write(rows, out / "saturation.parquet")
    every = [p for c in curves for p in sorted(c.runs, key=lambda q: q.point.label()[sat.axis])]
    write(table(sweep, every, out, extra=(sat.axis,)), out / "bisection.parquet")
    return total, path

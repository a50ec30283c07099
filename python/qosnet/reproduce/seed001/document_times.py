"""Every execution time document 001 states in its text, beside the application models'
profiled times (`middleware/data/profiled.json`, measured by `qosnet.profiler` on the engine).

The document's Figures 3.2-3.3 and 4.1-4.2 are plots; the copy we have holds their captions,
not their data. What the text does state is collected here as checks, each with where it is
said: the ray-tracing profile's worked examples (§3.2.2, §3.3, §3.4, on the 16-node testbed of
§4.3.1) and IS on 4 nodes (§4.2.3, read off Fig. 4.1 on the 8-node testbed of §4.1.1). For
polygon rendering, iso-surface extraction and the other NAS kernels the text gives no time.

The IS model was sized near §4.2.3's two IS times (`qosnet.profiler.models`): calibrated to
the document, so agreement there is no independent result.

A check is "the curve (application, parameters, N) meets time t at bandwidth b": `Meets`
(the least bandwidth at which the curve is at or under t, with the bandwidths next to it),
`Never` (no bandwidth reaches t), `Time` (the time at b), `Knee` (the knee-point bandwidth,
§3.3's 5% rule). Profiled bandwidths are 1-5 and then every 5 MB/s, so "least bandwidth"
is read on that grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from qosnet.middleware.profiles import Curve, ProfileStore, knee
from qosnet.middleware.units import MB

__all__ = ["CHECKS", "Check", "compare"]


@dataclass(frozen=True)
class Check:
    """One statement of the document about a curve: `kind` is meets, never, time or knee."""

    where: str
    application: str
    parameters: tuple[tuple[str, int], ...]
    nodes: int
    kind: str
    document: float  # MB/s for meets and knee, s for time; nan for never
    time: float = float("nan")  # the time bound of meets / never, s
    bandwidth: float = float("nan")  # the bandwidth of time, MB/s

    def statement(self) -> str:
        p = ", ".join(f"{k} {v}" for k, v in self.parameters) or "class A-like"
        head = f"{self.application} ({p}) on {self.nodes} nodes"
        if self.kind == "meets":
            return f"{head}: <= {self.time:g} s needs >= {self.document:g} MB/s per flow"
        if self.kind == "never":
            return f"{head}: <= {self.time:g} s at no bandwidth"
        if self.kind == "time":
            return f"{head}: {self.document:g} s at {self.bandwidth:g} MB/s"
        return f"{head}: knee point at {self.document:g} MB/s"


RT0_512 = (("image_size", 512), ("interleaving", 0))
RT0_1024 = (("image_size", 1024), ("interleaving", 0))
RT2_1024 = (("image_size", 1024), ("interleaving", 2))

CHECKS: tuple[Check, ...] = (
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_512, 4, "meets", 2.0, time=2.0),
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_512, 8, "meets", 1.0, time=2.0),
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_512, 16, "meets", 1.0, time=2.0),
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_1024, 16, "meets", 15.0, time=2.0),
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_1024, 4, "never", np.nan, time=2.0),
    Check("§3.2.2 (Fig. 3.2)", "ray_tracing", RT0_1024, 8, "never", np.nan, time=2.0),
    # §3.3: "all graphs with points below 1 second have image size of 512x512"
    Check("§3.3 (Fig. 3.4)", "ray_tracing", RT2_1024, 16, "never", np.nan, time=1.0),
    # §3.3 (Figs. 3.5-3.6): the two 512 / interleaving 0 curves under 1 s, on 8 and 16
    # nodes (§3.4, Fig. 3.8), from 4 and 5 MB/s, knees at 40 MB/s
    Check("§3.3 (Fig. 3.6)", "ray_tracing", RT0_512, 8, "meets", 4.0, time=1.0),
    Check("§3.3 (Fig. 3.6)", "ray_tracing", RT0_512, 16, "meets", 5.0, time=1.0),
    Check("§3.3 (Fig. 3.6)", "ray_tracing", RT0_512, 8, "knee", 40.0),
    Check("§3.3 (Fig. 3.6)", "ray_tracing", RT0_512, 16, "knee", 40.0),
    # §4.2.3, read off Fig. 4.1 (4 nodes, testbed of §4.1.1)
    Check("§4.2.3 (Fig. 4.1)", "is", (), 4, "time", 0.1404, bandwidth=5.0),
    Check("§4.2.3 (Fig. 4.1)", "is", (), 4, "time", 0.0925, bandwidth=8.0),
)


def _curve(store: ProfileStore, c: Check) -> Curve | None:
    found = store.curves_for(c.application, dict(c.parameters), c.nodes)
    return found[0] if found else None


def _model(curve: Curve, c: Check) -> tuple[float, str]:
    """The model's value for check `c` on `curve`, and what it was read from."""
    bw = np.array([p.bandwidth / MB for p in curve.points])
    t = np.array([p.time for p in curve.points])
    if c.kind in ("meets", "never"):
        ok = np.flatnonzero(t <= c.time)
        if not len(ok):
            return np.nan, f"never (least time {t.min():.3g} s at {bw[-1]:g} MB/s)"
        i = int(ok[0])
        below = f"{t[i - 1]:.3g} s at {bw[i - 1]:g}, " if i else ""
        return float(bw[i]), f"{below}{t[i]:.3g} s at {bw[i]:g} MB/s"
    if c.kind == "time":
        # between profiled points, linear in 1 / bandwidth (a time a + c / b: compute plus
        # bytes over bandwidth)
        value = float(np.interp(1 / c.bandwidth, 1 / bw[::-1], t[::-1]))
        if c.bandwidth in bw:
            return value, ""
        return value, "interpolated linearly in 1 / bandwidth between profiled points"
    k = knee(curve)
    return k.bandwidth / MB, f"{k.time:.3g} s; curve ends at {bw[-1]:g} MB/s"


def _verdict(c: Check, model: float) -> str:
    if c.kind == "never":
        return "agrees" if np.isnan(model) else "differs: the model reaches it"
    if np.isnan(model):
        return "differs: the model never reaches it"
    if c.kind == "time":
        return "agrees within 5%" if abs(model / c.document - 1) <= 0.05 else "differs"
    if model == c.document:
        return "agrees"
    return "differs: model lower" if model < c.document else "differs: model higher"


def compare(store: ProfileStore) -> pd.DataFrame:
    """One row per check: the statement, the document's value, the model's, a verdict."""
    rows = []
    for c in CHECKS:
        curve = _curve(store, c)
        model, note = (np.nan, "no such curve") if curve is None else _model(curve, c)
        rows.append(
            {
                "where": c.where,
                "statement": c.statement(),
                "document": c.document,
                "model": model,
                "model_reading": note,
                "verdict": "no curve" if curve is None else _verdict(c, model),
            }
        )
    return pd.DataFrame(rows)

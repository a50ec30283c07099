"""The results of one run as DataFrames, and the run directory they are written to.

A run directory is the unit the rest of qosnet (sweeps, plots, reports) reads. Everything in
it except `timing.json` is a function of the configuration and seed alone, byte for byte:
the wall time lives in `timing.json` so that `summary.json` and the tables of two runs of
the same configuration compare equal with `cmp`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import pyarrow as pa

from qosnet.tables import FORMATS, write, write_text

__all__ = ["TABLES", "RunResult"]

#: The tables of a run, in the order they are written.
TABLES = (
    "classes",
    "nodes",
    "links",
    "flows",
    "phases",
    "streams",
    "messages",
    "link_series",
    "stalls",
    "trace",
    "admission",
    "congestion",
    "jobs",
)
#: Tables a run directory may lack: `messages` unless recorded, the `[trace]` tables unless
#: asked for; the others in directories written before they existed.
_OPTIONAL = TABLES[TABLES.index("flows") :]


@dataclass(frozen=True, eq=False)
class RunResult:
    """What one run produced. `messages` is None unless messages were recorded."""

    summary: dict[str, Any]
    classes: pd.DataFrame
    nodes: pd.DataFrame
    links: pd.DataFrame
    #: Per flow (traffic source): messages, flits and bandwidth received in the window.
    flows: pd.DataFrame | None
    #: Per phase of the mix and class: offered/delivered load and latency split.
    phases: pd.DataFrame | None
    #: Per video stream: frames, deadline missing probability and time, inter-frame time.
    streams: pd.DataFrame | None
    messages: pd.DataFrame | None
    #: `[trace]`: flits per link per interval, stall cycles per router VC by cause, and the
    #: hops of watched flows' packets (None unless asked for).
    link_series: pd.DataFrame | None
    stalls: pd.DataFrame | None
    trace: pd.DataFrame | None
    #: Document 000: admission control per class (probes, refusals, set-up latency) and the
    #: congestion-control agent's counts (None when off).
    admission: pd.DataFrame | None
    congestion: pd.DataFrame | None
    #: Document 001: per `[[application]]` job, its start and completion (None without).
    jobs: pd.DataFrame | None
    #: The configuration with every default filled in, as the engine resolved it (TOML).
    config_toml: str
    wall_seconds: float

    @classmethod
    def from_engine(cls, raw: dict[str, Any], config_toml: str, wall_seconds: float) -> RunResult:
        """Wrap `_core.Simulation.result()` (columns as lists) in DataFrames."""
        types = raw.get("types", {})
        frames = {name: _frame(raw.get(name), types.get(name)) for name in TABLES}
        return cls(
            summary=json.loads(raw["summary"]),
            config_toml=config_toml,
            wall_seconds=wall_seconds,
            **frames,
        )

    @property
    def cycles_per_second(self) -> float:
        """Simulated cycles per wall-clock second."""
        return self.summary["cycles"] / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def summary_json(self) -> str:
        """The summary as written to `summary.json`: sorted keys, so equal runs give equal bytes."""
        return json.dumps(self.summary, sort_keys=True, indent=2) + "\n"

    def write(self, directory: str | Path, fmt: Literal["parquet", "csv"] = "parquet") -> Path:
        """Write the run directory: config.toml, summary.json, timing.json and one file per
        table (`messages` only when recorded). Files of ours left by an earlier run that this
        one does not produce are removed, so the directory never mixes two runs."""
        if fmt not in FORMATS:
            raise ValueError(f"fmt: must be one of {', '.join(FORMATS)}, got {fmt!r}")
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        write_text(out / "config.toml", self.config_toml)
        write_text(out / "summary.json", self.summary_json())
        timing = {"wall_seconds": self.wall_seconds, "cycles_per_second": self.cycles_per_second}
        write_text(out / "timing.json", json.dumps(timing, sort_keys=True, indent=2) + "\n")
        for name in TABLES:
            frame = getattr(self, name)
            for ext in FORMATS:
                stale = out / f"{name}.{ext}"
                if (frame is None or ext != fmt) and stale.exists():
                    stale.unlink()
            if frame is not None:
                write(frame, out / f"{name}.{fmt}")
        return out

    @classmethod
    def read(cls, directory: str | Path) -> RunResult:
        """Read back a run directory written by `write` (Parquet or CSV)."""
        src = Path(directory)
        frames: dict[str, pd.DataFrame | None] = {}
        for name in TABLES:
            if (src / f"{name}.parquet").exists():
                frames[name] = pd.read_parquet(src / f"{name}.parquet")
            elif (src / f"{name}.csv").exists():
                frames[name] = pd.read_csv(src / f"{name}.csv")
            elif name in _OPTIONAL:
                frames[name] = None
            else:
                raise FileNotFoundError(f"{src / name}.parquet (or .csv) is missing")
        timing_path = src / "timing.json"
        timing = json.loads(timing_path.read_text(encoding="utf-8")) if timing_path.exists() else {}
        return cls(
            summary=json.loads((src / "summary.json").read_text(encoding="utf-8")),
            config_toml=(src / "config.toml").read_text(encoding="utf-8"),
            wall_seconds=float(timing.get("wall_seconds", float("nan"))),
            **frames,
        )


_ARROW_TYPES = {"u64": pa.uint64(), "f64": pa.float64(), "str": pa.string()}


def _frame(
    columns: dict[str, list[Any]] | None, types: dict[str, str] | None = None
) -> pd.DataFrame | None:
    # Through Arrow: about twice as fast as pd.DataFrame on million-row message tables. The
    # engine's column types keep the schema of an empty table (no rows to infer from).
    if columns is None:
        return None
    if types:
        schema = pa.schema([(name, _ARROW_TYPES[types[name]]) for name in columns])
        return pa.table(columns, schema=schema).to_pandas()
    return pa.table(columns).to_pandas()

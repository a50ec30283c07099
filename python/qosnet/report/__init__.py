"""`qosnet report DIR`: one self-contained HTML page (`DIR/report.html`) for a run directory
(`qosnet run -o`) or a sweep directory (`qosnet sweep -o`); and `report.html` beside each
reproduction's `report.md` (`markdown_page`).

A run's page: the summary with units, latency by class split into queueing and network
time, DMP/DMT by phase (when the run carries video), link utilisation over the topology,
and accepted against offered per class. A sweep's page: latency against load with the
saturation load marked, accepted against offered, queueing and network latency by class
against load, and the run page's figures for the sweep's highest unsaturated point.
"""

from __future__ import annotations

import html
import json
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet.metrics import unit_of
from qosnet.report import figures
from qosnet.report.page import Figure, Section, markdown_page, page
from qosnet.tables import write_text

__all__ = ["markdown_page", "write_report"]

#: The summary rows a run's page shows: key and label (the unit: `qosnet.metrics`).
SUMMARY_ROWS = (
    ("offered_flits_per_node_cycle", "offered load"),
    ("accepted_flits_per_node_cycle", "accepted throughput"),
    ("offered_gbps_per_node", "offered"),
    ("accepted_gbps_per_node", "accepted"),
    ("latency.mean", "mean latency"),
    ("latency_mean_ns", "mean latency"),
    ("latency.p99", "99th percentile latency"),
    ("queueing_mean", "mean queueing"),
    ("network_mean", "mean network latency"),
    ("messages_delivered", "messages delivered"),
    ("cycles", "simulated"),
    ("cycle_time_ns", "one cycle"),
    ("dmp", "deadline missing probability"),
    ("dmt_ms", "deadline missing time"),
)


def write_report(directory: str | Path) -> Path:
    """Write `directory/report.html` for a run or sweep directory; return its path."""
    d = Path(directory)
    if (d / "sweep.parquet").is_file() or (d / "saturation.parquet").is_file():
        doc = _sweep_page(d)
    elif (d / "summary.json").is_file():
        doc = page(f"qosnet run: {d.name}", _run_sections(d), _run_intro(d))
    else:
        raise FileNotFoundError(
            f"{d}: neither a run directory (summary.json) nor a sweep directory (sweep.parquet)"
        )
    return write_text(d / "report.html", doc)


def _get(summary: dict[str, Any], key: str) -> Any:
    value: Any = summary
    for part in key.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:,.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return html.escape(str(v))


def _table(frame: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = "".join(
        "<tr>" + "".join(f"<td>{_fmt(v)}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><tr>{head}</tr>{rows}</table>"


def _run_intro(d: Path) -> str:
    summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    warn = ""
    if summary.get("saturated"):
        warn += (
            '<p class="warn"><b>Saturated:</b> accepted throughput '
            f"{summary['accepted_flits_per_node_cycle']:.4g} fell short of the offered "
            f"{summary['offered_flits_per_node_cycle']:.4g} flits/node/cycle, or the drain "
            "did not complete: latencies grow with the run's length.</p>"
        )
    if not summary.get("drain_complete", True):
        warn += (
            '<p class="warn"><b>Drain incomplete:</b> some measured messages were not '
            "delivered within simulation.drain_limit; the latencies leave them out.</p>"
        )
    rows = []
    for key, label in SUMMARY_ROWS:
        v = _get(summary, key)
        if v is not None:
            rows.append(f"<tr><td>{label}</td><td>{_fmt(v)}</td><td>{unit_of(key)}</td></tr>")
    return (
        warn
        + "<table><tr><th>metric</th><th>value</th><th>unit</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _run_sections(d: Path) -> list[Section]:
    from qosnet.results import RunResult

    run = RunResult.read(d)
    config = tomllib.loads(run.config_toml)
    cycle_ns = float(run.summary.get("cycle_time_ns") or 0) or 1.0
    sections = [
        Section(
            "Latency by class",
            _table(run.classes),
            [
                Figure(
                    figures.class_latency_split(run.classes, cycle_ns),
                    "Mean latency per class: queueing (creation to header injected) plus "
                    "network (header injected to tail ejected), in cycles",
                )
            ],
        )
    ]
    if run.phases is not None:
        png = figures.deadlines_by_phase(run.phases)
        if png is not None:
            sections.append(
                Section(
                    "Video deadlines by phase",
                    _table(run.phases),
                    [Figure(png, "DMP and DMT of the real-time video in each phase")],
                )
            )
    sections.append(
        Section(
            "Link utilisation",
            "",
            [
                Figure(
                    figures.link_heat_map(run.links, config.get("topology", {})),
                    "Utilisation of every link over the measurement window (fraction of "
                    "its cycles carrying a flit)",
                )
            ],
        )
    )
    table = run.classes.copy()
    sections.append(
        Section(
            "Accepted against offered",
            "",
            [
                Figure(
                    figures.accepted_vs_offered(table, []),
                    "Accepted against offered throughput per class (flits/node/cycle)",
                )
            ],
        )
    )
    return sections


def _sweep_page(d: Path) -> str:
    sweep_toml = tomllib.loads((d / "sweep.toml").read_text(encoding="utf-8"))["sweep"]
    axes = list(sweep_toml.get("axes", {}))
    sat_cfg = sweep_toml.get("saturation")
    saturation = (
        pd.read_parquet(d / "saturation.parquet") if (d / "saturation.parquet").is_file() else None
    )
    tables = []
    if (d / "sweep.parquet").is_file():
        tables.append(pd.read_parquet(d / "sweep.parquet"))
    if (d / "bisection.parquet").is_file():
        tables.append(pd.read_parquet(d / "bisection.parquet"))
    table = pd.concat([t for t in tables if len(t)], ignore_index=True) if tables else None
    load = sat_cfg["axis"] if sat_cfg else next((a for a in axes if "load" in a), None)
    sections: list[Section] = []
    intro = (
        f"<p>Base configuration <code>{html.escape(sweep_toml['base'])}</code>; axes "
        f"{html.escape(', '.join(axes) or '(none)')}; mode {sweep_toml.get('mode')}.</p>"
    )
    if saturation is not None:
        intro += "<h2>Saturation</h2>" + _table(saturation)
    if table is not None and len(table):
        if load is None or load not in table:
            load = "offered_flits_per_node_cycle"
        keys = [a for a in axes if a != load and a in table]
        if "seed" in table and table["seed"].nunique() > 1:
            keys.append("seed")
        table = table.drop_duplicates(subset=["run", "class"]).sort_values([*keys, load])
        cycle_ns = float(table["run_cycle_time_ns"].iloc[0])
        sections.append(
            Section(
                "Latency against load",
                "",
                [
                    Figure(
                        figures.latency_load(table, load, keys, saturation, cycle_ns),
                        "Mean latency per class against offered load; dashed: saturation",
                    ),
                    Figure(
                        figures.class_latency_split_by_load(table, load, keys),
                        "Queueing and network latency by class against load",
                    ),
                ],
            )
        )
        sections.append(
            Section(
                "Accepted against offered",
                "",
                [
                    Figure(
                        figures.accepted_vs_offered(table, keys),
                        "Accepted against offered throughput (flits/node/cycle)",
                    )
                ],
            )
        )
        if (d / "aggregated.parquet").is_file():
            agg = pd.read_parquet(d / "aggregated.parquet")
            sections.append(
                Section(
                    "Latency against load over the seeds",
                    "",
                    [
                        Figure(
                            figures.latency_load_intervals(
                                agg, load, [k for k in keys if k != "seed"], cycle_ns
                            ),
                            "Mean latency per class over the seeds, with 95% intervals "
                            "(Student's t; aggregated.parquet)",
                        )
                    ],
                )
            )
        calm = table[~table["run_saturated"].astype(bool)]
        pick = calm if len(calm) else table
        run = pick.sort_values(load)["run"].iloc[-1]
        for s in _run_sections(d / run):
            sections.append(
                Section(f"{s.title} (at {run}, the highest unsaturated load)", s.html, s.figures)
            )
    return page(f"qosnet sweep: {d.name}", sections, intro)

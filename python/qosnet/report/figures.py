"""The report's figures, each a PNG (matplotlib, Agg): what a run or a sweep measured.

Units are the engine's: latency in cycles (with the cycle time in ns beside it), load and
throughput in flits/node/cycle (the fraction of link bandwidth), utilisation as a fraction
of a link's cycles. Latency = queueing (creation to header injected) + network (header
injected to tail ejected), README "Measurement".
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

__all__ = [
    "accepted_vs_offered",
    "class_latency_split",
    "deadlines_by_phase",
    "latency_load",
    "latency_load_intervals",
    "link_heat_map",
]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    # no timestamp or software string: the same figure gives the same bytes
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    _plt().close(fig)
    return buf.getvalue()


def _curves(table: pd.DataFrame, keys: Sequence[str]) -> list[tuple[str, pd.DataFrame]]:
    if not keys:
        return [("", table)]
    out = []
    for values, group in table.groupby(list(keys), sort=True, dropna=False):
        values = values if isinstance(values, tuple) else (values,)
        out.append((", ".join(f"{k}={v}" for k, v in zip(keys, values, strict=True)), group))
    return out


def latency_load(
    table: pd.DataFrame,
    load: str,
    keys: Sequence[str],
    saturation: pd.DataFrame | None = None,
    cycle_ns: float | None = None,
) -> bytes:
    """Mean latency per class against `load`, a line per curve (`keys` and class); the
    saturated runs drawn hollow, and each curve's saturation load (from the search, or else
    the first saturated run) a dashed line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, group in _curves(table, [*keys, "class"]):
        g = group.sort_values(load)
        (line,) = ax.plot(g[load], g["latency_mean"], marker="o", label=label or "all")
        sat = g[g["run_saturated"].astype(bool)]
        ax.plot(sat[load], sat["latency_mean"], "o", mfc="white", color=line.get_color())
    marks = _saturation_marks(table, load, keys, saturation)
    for label, x in marks:
        ax.axvline(x, ls="--", color="grey", lw=1)
        ax.annotate(
            f"saturation {x:.3g}" + (f" ({label})" if label else ""),
            (x, 1),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            ha="right",
            fontsize=8,
        )
    ax.set_xlabel(f"{load} (offered, flits/node/cycle)")
    unit = f"cycles; 1 cycle = {cycle_ns:g} ns" if cycle_ns else "cycles"
    ax.set_ylabel(f"mean latency ({unit})")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("Latency against load (hollow: saturated run)")
    return _png(fig)


def latency_load_intervals(
    aggregated: pd.DataFrame, load: str, keys: Sequence[str], cycle_ns: float | None = None
) -> bytes:
    """Mean latency per class over the seeds against `load`, with each point's 95%
    interval as an error bar (`qosnet.sweep.aggregate`); a point saturated in any seed is
    drawn hollow."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    # (a sweep without a load axis is drawn against the offered load, itself aggregated)
    x = load if load in aggregated.columns else f"{load}_mean"
    for label, group in _curves(aggregated, [*keys, "class"]):
        g = group.sort_values(x)
        mean = g["latency_mean_mean"]
        low = (mean - g["latency_mean_ci_low"]).clip(lower=0).fillna(0)
        high = (g["latency_mean_ci_high"] - mean).clip(lower=0).fillna(0)
        bars = ax.errorbar(
            g[x], mean, yerr=[low, high], marker="o", capsize=3, label=label or "all"
        )
        if "run_saturated_mean" in g:
            sat = g[g["run_saturated_mean"] > 0]
            colour = bars.lines[0].get_color()
            ax.plot(sat[x], sat["latency_mean_mean"], "o", mfc="white", color=colour)
    seeds = int(aggregated["seeds"].max()) if len(aggregated) else 0
    ax.set_xlabel(f"{load} (offered, flits/node/cycle)")
    unit = f"cycles; 1 cycle = {cycle_ns:g} ns" if cycle_ns else "cycles"
    ax.set_ylabel(f"mean latency ({unit})")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title(f"Latency against load: mean of {seeds} seeds, 95% interval")
    return _png(fig)


def _saturation_marks(
    table: pd.DataFrame, load: str, keys: Sequence[str], saturation: pd.DataFrame | None
) -> list[tuple[str, float]]:
    marks = []
    if saturation is not None and len(saturation):
        keep = [k for k in keys if k in saturation.columns]
        for label, g in _curves(saturation, keep):
            for x in g["saturation"]:
                if not math.isnan(x):
                    marks.append((label, float(x)))
        return marks
    for label, g in _curves(table, keys):
        sat = g[g["run_saturated"].astype(bool)]
        if len(sat):
            marks.append((label, float(sat[load].min())))
    return marks


def accepted_vs_offered(table: pd.DataFrame, keys: Sequence[str]) -> bytes:
    """Accepted against offered throughput per class, with the line accepted = offered."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    top = 0.0
    for label, group in _curves(table, [*keys, "class"]):
        g = group.sort_values("offered_flits_per_node_cycle")
        ax.plot(
            g["offered_flits_per_node_cycle"],
            g["accepted_flits_per_node_cycle"],
            marker="o",
            label=label or "all",
        )
        top = max(top, float(g["offered_flits_per_node_cycle"].max()))
    ax.plot([0, top], [0, top], ls=":", color="grey", label="accepted = offered")
    ax.set_xlabel("offered (flits/node/cycle)")
    ax.set_ylabel("accepted (flits/node/cycle)")
    ax.legend(fontsize=8)
    ax.set_title("Accepted against offered throughput")
    return _png(fig)


def class_latency_split(classes: pd.DataFrame, cycle_ns: float) -> bytes:
    """Per class: mean latency as queueing plus network time (stacked bars)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.6 * max(len(classes), 1)))
    names = classes["class"].astype(str).tolist()
    q = classes["queueing_mean"].fillna(0).to_numpy()
    n = classes["network_mean"].fillna(0).to_numpy()
    ax.barh(names, q, color="#e67e22", label="queueing (creation to header injected)")
    ax.barh(names, n, left=q, color="#2980b9", label="network (header injected to tail ejected)")
    for y, (a, b) in enumerate(zip(q, n, strict=True)):
        ax.annotate(
            f"{a + b:,.0f} cycles = {(a + b) * cycle_ns / 1000:,.1f} µs",
            (a + b, y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    ax.set_xlabel(f"mean latency (cycles; 1 cycle = {cycle_ns:g} ns)")
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("Latency by class: queueing and network")
    ax.margins(x=0.25)
    return _png(fig)


def class_latency_split_by_load(table: pd.DataFrame, load: str, keys: Sequence[str]) -> bytes:
    """Queueing and network latency per class against load (a sweep)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, group in _curves(table, [*keys, "class"]):
        g = group.sort_values(load)
        (line,) = ax.plot(g[load], g["queueing_mean"], ls="--", label=f"{label} queueing")
        ax.plot(g[load], g["network_mean"], color=line.get_color(), label=f"{label} network")
    ax.set_xlabel(f"{load} (flits/node/cycle)")
    ax.set_ylabel("mean latency (cycles)")
    ax.set_yscale("log")
    ax.legend(fontsize=7)
    ax.set_title("Queueing (dashed) and network latency by class")
    return _png(fig)


def deadlines_by_phase(phases: pd.DataFrame) -> bytes | None:
    """Real-time video's deadline missing probability (DMP) and mean time past the deadline
    (DMT, ms) in each phase of the mix (document 003 §4.2); None without video frames."""
    video = phases[phases["frames"].fillna(0) > 0] if "frames" in phases else phases.iloc[:0]
    if not len(video):
        return None
    plt = _plt()
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    labels = [str(p) for p in video["phase"]]
    bars = a.bar(labels, video["dmp"].fillna(0), color="#c0392b")
    a.bar_label(bars, fmt="%.3g", fontsize=8)
    a.set_xlabel("phase")
    a.set_ylabel("DMP (fraction of frames late)")
    a.set_title("Deadline missing probability")
    bars = b.bar(labels, video["dmt_ms"].fillna(0), color="#8e44ad")
    b.bar_label(bars, fmt="%.3g", fontsize=8)
    b.set_xlabel("phase")
    b.set_ylabel("DMT (ms past the deadline)")
    b.set_title("Deadline missing time")
    fig.tight_layout()
    return _png(fig)


def link_heat_map(links: pd.DataFrame, topology: dict[str, Any]) -> bytes:
    """Link utilisation: on a 2-D mesh or torus, each router-to-router link drawn where it
    is, coloured by utilisation; on any other topology, a source router x destination
    router matrix. Below, injection and ejection utilisation per node."""
    plt = _plt()
    from matplotlib import cm, colors

    norm = colors.Normalize(0, max(1e-9, float(links["utilization"].max())))
    cmap = plt.get_cmap("inferno_r")
    router = links[links["kind"] == "router"]
    dims = _grid(topology)
    if not len(router):
        # one router (a star): only the nodes' links
        fig, bottom = plt.subplots(figsize=(7, 2))
        fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=bottom, label="utilisation")
        bottom.set_title("Node links (one router: no router-to-router links)")
        _ends(bottom, links, cmap, norm)
        return _png(fig)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 8.5), gridspec_kw={"height_ratios": [4, 1]})
    if dims is not None and len(router):
        kx, ky = dims
        for row in router.itertuples():
            x0, y0 = row.src % kx, row.src // kx
            x1, y1 = row.dst % kx, row.dst // kx
            if abs(x1 - x0) + abs(y1 - y0) != 1:
                continue  # a torus's wrap-around link: counted in the matrix, not drawn
            # the two directions side by side
            off = 0.08 if (x1 - x0) + (y1 - y0) > 0 else -0.08
            dx, dy = (0, off) if y0 == y1 else (off, 0)
            top.plot(
                [x0 + dx, x1 + dx],
                [y0 + dy, y1 + dy],
                color=cmap(norm(row.utilization)),
                lw=4,
                solid_capstyle="butt",
            )
        top.scatter(
            [r % kx for r in range(kx * ky)],
            [r // kx for r in range(kx * ky)],
            s=60,
            color="#dddddd",
            edgecolors="black",
            zorder=3,
        )
        top.set_aspect("equal")
        top.invert_yaxis()
        top.set_title(f"Router-to-router links, {kx}x{ky} {topology.get('kind')}")
        top.set_axis_off()
    else:
        n = int(max(router["src"].max(), router["dst"].max())) + 1
        grid = [[math.nan] * n for _ in range(n)]
        for row in router.itertuples():
            grid[row.src][row.dst] = row.utilization
        top.imshow(grid, cmap=cmap, norm=norm)
        top.set_xlabel("destination router")
        top.set_ylabel("source router")
        top.set_title("Router-to-router link utilisation")
    fig.colorbar(cm.ScalarMappable(norm=norm, cmap=cmap), ax=top, label="utilisation")
    _ends(bottom, links, cmap, norm)
    return _png(fig)


def _ends(ax: Any, links: pd.DataFrame, cmap: Any, norm: Any) -> None:
    """Injection and ejection utilisation per node, a row each."""
    ends = []
    for kind in ("injection", "ejection"):
        part = links[links["kind"] == kind].sort_values("src" if kind == "injection" else "dst")
        ends.append(part["utilization"].tolist())
    width = max(len(e) for e in ends) if ends else 0
    ax.imshow(
        [e + [math.nan] * (width - len(e)) for e in ends], cmap=cmap, norm=norm, aspect="auto"
    )
    ax.set_yticks([0, 1], ["injection", "ejection"])
    ax.set_xlabel("node")


def _grid(topology: dict[str, Any]) -> tuple[int, int] | None:
    if topology.get("kind") not in ("mesh", "torus"):
        return None
    dims = topology.get("dims")
    if dims is None and topology.get("n") == 2:
        dims = [topology["k"], topology["k"]]
    if dims is None or len(dims) != 2:
        return None
    return int(dims[0]), int(dims[1])

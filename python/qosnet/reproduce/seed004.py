"""Document 004's experiments (NIC-based rate control for proportional bandwidth in Myrinet/GM).

Each experiment names the document's claim beside what the runs give; `report` writes the
flows tables, bar charts of the shares with the ideal marked, the single flow's bandwidth
against its IDT, and report.md with measured vs ideal numbers. The configurations are
`configs/seed004/*.toml`; the experiments vary them with overrides only. A setting that
needs a key removed (the baselines without rate control) has its own file, since an
override can add a key but not delete one. `quick=True` shrinks simulated time and the
sweeps for tests and smoke runs: the same code paths, numbers without statistical weight.

Every flow is always backlogged (document 004 §3.3 assumes outstanding send requests), so
a flow's bandwidth is what the NIC and the switches give it, not what it offers.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from qosnet.reproduce import seed004_claims
from qosnet.reproduce.findings import write_findings
from qosnet.reproduce.report import claim_section, report_head, write_report
from qosnet.reproduce.runner import Experiment, Gathered, Run, configs_dir
from qosnet.tables import markdown, write

#: The links' bandwidth, Bpeak of §3.3: 1.6 Gb/s = 200 MB/s. The NIC's data DMA (528 MB/s,
#: 8.3 us per 4 KB packet with its set-up) is faster, so the link sets the dispatch period
#: T: a 4 KB packet's 20.48 us, 256 cycles of 80 ns.
LINK_GBPS = 1.6
PEAK_MBPS = LINK_GBPS * 1e3 / 8
PERIOD_CYCLES = 256

#: Fig. 12a: flow A's IDT is fixed, flow B's varies (units of T).
TWO_FLOWS_B = (2, 3, 4, 6, 8)
#: Fig. 12b: three flows from one source.
THREE_FLOWS = ((2, 4, 8), (2, 3, 6))
#: Fig. 12c: flows 0 -> 2 and 1 -> 2.
TWO_SOURCES = ((1.5, 1.5), (1.5, 3), (1.5, 6))
#: Over-subscribed (issue 35): the flows ask more than the shared resource has (sum of
#: 1/idt above 1, in units of T), so the share is decided by the mechanism, not by each
#: flow pacing itself. One source: the NIC's dispatch by least NDT (§3.3). Two sources into
#: one port: each NIC paces only its own flow, and the destination's switch port serves
#: its inputs round robin (§2.3); §3.4's criterion (c) would refuse such a pair. Every IDT
#: above T (§3.3's constraint) and below the flow's offered 0.95 of the link, so each flow
#: stays backlogged: asked 1.17 and 1.2 of the resource, 1/idt gives 0.571 : 0.429 and
#: 0.667 : 0.333, a round-robin port 0.5 : 0.5 and 0.6 : 0.4 (`round_robin`).
OVERSUBSCRIBED = ((1.5, 2), (1.25, 2.5))
ONE_SOURCE, TWO_SOURCES_CASE = "one source", "two sources into one port"
#: Fig. 11: the single flow's IDT sweep; the knee is at IDT = 1 (= T).
SINGLE_IDTS = (0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4, 6, 8, 10)

#: Figs. 5-6: flows B, C, D of parking_lot.toml to node 3, and their reservations there.
PARKING_FLOWS = ("B", "C", "D")
RESERVE_MBITS = (720, 400, 400)
#: Fig. 5b without rate control: each switch port toward node 3 serves its two inputs
#: round robin, so D (local at switch 2) gets 1/2, C and B split the other half at switch 1.
PARKING_UNREGULATED = (0.25, 0.25, 0.5)

#: Fig. 4: flow A's messages are 3 packets, B's 1. Round robin a message at a time (4a)
#: gives the NIC to A 3 times as often as to B; GM's interleaving (4b) evenly.
SEND_QUEUES = {"round_robin": (0.75, 0.25), "interleaved": (0.5, 0.5)}

#: Seeds every run is repeated with (`qosnet.reproduce.scoring`; see seed000.SEEDS): five,
#: since the runs are cheap and a share is scored against a +-2% band, which three seeds'
#: t interval (4.3 standard errors wide each side) rarely fits in.
SEEDS = (1, 2, 3, 4, 5)
QUICK_SEEDS = (1, 2)

UNREGULATED = "unregulated"
RATE_CONTROL = "rate control"


def _configs() -> Path:
    return configs_dir("seed004")


def _timing(quick: bool) -> tuple[str, ...]:
    """Overrides shrinking simulated time: 40 000 measured cycles (about 10 messages of a
    flow at full rate) instead of 200 000. The warm-up stays: the flows need it to build
    the backlog that keeps them always sending."""
    if not quick:
        return ()
    return ("simulation.measure=40000",)


def _idts(idts: Sequence[float]) -> str:
    """A run's IDTs as its label: `2:3` for flows A and B."""
    return ":".join(f"{i:g}" for i in idts)


def _idt_overrides(idts: Sequence[float]) -> tuple[str, ...]:
    return tuple(f"traffic[{i}].idt={v}" for i, v in enumerate(idts))


def _one_source(cfg: Path, t: tuple[str, ...], quick: bool) -> Experiment:
    pairs = [(2, b) for b in ((3, 6) if quick else TWO_FLOWS_B)]
    triples = THREE_FLOWS[:1] if quick else THREE_FLOWS
    return Experiment(
        "one_source",
        "Flows sourced at one node, to different destinations (Table 1, Fig. 12a-b)",
        "Bandwidth between two flows sourced at the same node, but with different "
        "destinations, is shared in the inverse ratio of their IDT values; similarly for "
        "three flows (§5.4). With IDTs 2 and 3 packets are dispatched 3:2, i.e. 1/2 : 1/3 "
        "(§3.3, Table 1).",
        [
            *(
                Run({"idts": _idts(p)}, cfg / "two_flows.toml", (*t, *_idt_overrides(p)))
                for p in pairs
            ),
            *(
                Run({"idts": _idts(p)}, cfg / "three_flows.toml", (*t, *_idt_overrides(p)))
                for p in triples
            ),
        ],
    )


def _two_sources(cfg: Path, t: tuple[str, ...], quick: bool) -> Experiment:
    pairs = TWO_SOURCES[1:2] if quick else TWO_SOURCES
    return Experiment(
        "two_sources",
        "Flows from two nodes to one destination (Fig. 12c)",
        "Two flows with different sources but the same destination, which contend for "
        "network resources rather than at the end node, also share the bandwidth in the "
        "inverse ratio of their IDTs (§5.4). Without rate control the switch serves them "
        "round robin (§2.3): half each.",
        [
            *(
                Run({"idts": _idts(p)}, cfg / "two_sources.toml", (*t, *_idt_overrides(p)))
                for p in pairs
            ),
            Run({"idts": UNREGULATED}, cfg / "two_sources_unregulated.toml", t),
        ],
    )


def _oversubscribed(cfg: Path, t: tuple[str, ...], quick: bool) -> Experiment:
    pairs = OVERSUBSCRIBED[:1] if quick else OVERSUBSCRIBED
    files = {ONE_SOURCE: "two_flows.toml", TWO_SOURCES_CASE: "two_sources.toml"}
    return Experiment(
        "oversubscribed",
        "Flows asking more than their shared resource has (§3.3, §3.4)",
        "Rate control dispatches in the ratio 1/idt_1 : 1/idt_2 when every IDT is at least T "
        "and the requests are always outstanding (§3.3): at one source the NIC shares its T "
        "so. Two sources into one destination are each paced by their own NIC; their sum "
        "above the link is what call admission refuses (§3.4 c), and the switch port "
        "between them serves round robin (§2.3).",
        [
            Run({"case": case, "idts": _idts(p)}, cfg / f, (*t, *_idt_overrides(p)))
            for case, f in files.items()
            for p in pairs
        ],
    )


def _network_contention(cfg: Path, t: tuple[str, ...]) -> Experiment:
    return Experiment(
        "network_contention",
        "A flow crossing two contended switches, without and with rate control (Figs. 5-6)",
        "Switches serve packets for the same output port round robin, so a flow that waits "
        "at more switches than its competitors gets less bandwidth (§2.3, Fig. 5b); when the "
        "interfering flows are regulated it gets its share (§3.1, Fig. 6). Here B crosses two "
        "contended ports: about 1/4 of the link unregulated, its reserved 720 Mb/s (45%) with "
        "rate control and call admission (§3.4).",
        [
            Run({"control": UNREGULATED}, cfg / "parking_lot_unregulated.toml", t),
            Run({"control": RATE_CONTROL}, cfg / "parking_lot.toml", t),
        ],
    )


def _single_flow(cfg: Path, t: tuple[str, ...], quick: bool) -> Experiment:
    idts = (0.5, 1, 2, 4) if quick else SINGLE_IDTS
    return Experiment(
        "single_flow",
        "One flow's bandwidth against its IDT (Fig. 11)",
        "For all IDT values below T (96 RTC units on the LANai 4.3) the bandwidth equals the "
        "peak achievable value: packets cannot be sent more than once every T (§5.3). Above "
        "T the flow gets Bpeak · T / IDT (§3.3-3.4).",
        [
            Run({"idt": float(i)}, cfg / "single_flow.toml", (*t, f"traffic[0].idt={i}"))
            for i in idts
        ],
    )


def _send_queues(cfg: Path, t: tuple[str, ...]) -> Experiment:
    return Experiment(
        "send_queues",
        "Round-robin vs interleaved send queues, long and short messages (Fig. 4)",
        "Round-robin servicing of send descriptors is unfair: it favours flows with longer "
        "messages, A (3-packet messages) using the NIC three times as often as B (1-packet "
        "messages; Fig. 4a). GM's fair interleaved round robin makes NIC use uniform, "
        "independent of message sizes (Fig. 4b, §2.2, §4.1).",
        [
            Run({"queues": q}, cfg / "send_queues.toml", (*t, f"endpoint.queues={q}"))
            for q in SEND_QUEUES
        ],
    )


def experiments(quick: bool = False, configs: Path | None = None) -> list[Experiment]:
    cfg = configs or _configs()
    t = _timing(quick)
    return [
        _one_source(cfg, t, quick),
        _two_sources(cfg, t, quick),
        # (full time in a quick run too: 40 000 cycles cannot tell a round-robin port's
        # 0.5 from 1/idt's 0.571, and the two runs take a second)
        _oversubscribed(cfg, (), quick),
        _network_contention(cfg, t),
        _single_flow(cfg, t, quick),
        _send_queues(cfg, t),
    ]


# --- The ideal: what the document's model gives each flow, as a fraction of Bpeak. ---


def proportional(idts: Sequence[float]) -> tuple[float, ...]:
    """Rate control's ideal (§3.3): flow i dispatches a packet every idt_i · T, at most one
    per T (so at most Bpeak); when the flows ask more of their shared resource (the source
    NIC or the destination's link) than it has, they share it in the ratio 1/idt_i."""
    rates = [min(1.0, 1.0 / i) for i in idts]
    scale = min(1.0, 1.0 / sum(rates))
    return tuple(r * scale for r in rates)


def round_robin(idts: Sequence[float]) -> tuple[float, ...]:
    """A round-robin port's shares (§2.3) of flows asking min(1, 1/idt_i) of its link:
    max-min fair, each gets its demand or an equal part of what the smaller ones left."""
    demands = [min(1.0, 1.0 / i) for i in idts]
    share = [0.0] * len(demands)
    left, open_ = 1.0, sorted(range(len(demands)), key=lambda i: demands[i])
    while open_:
        fair = left / len(open_)
        i = open_[0]
        if demands[i] <= fair:
            share[i] = demands[i]
            left -= demands[i]
            open_.pop(0)
        else:
            for j in open_:
                share[j] = fair
            break
    return tuple(share)


def ideal_bandwidths(experiment: str, label: dict[str, object]) -> tuple[float, ...]:
    """The ideal bandwidth of each `[[traffic]]` entry of a run, as a fraction of Bpeak:
    §3.3's 1/idt ratio (for over-subscribed flows too: the claim under test)."""
    if experiment in ("one_source", "two_sources", "oversubscribed"):
        idts = str(label["idts"])
        if idts == UNREGULATED:
            return (0.5, 0.5)  # §2.3: the destination's switch port, round robin
        return proportional([float(i) for i in idts.split(":")])
    if experiment == "network_contention":
        if label["control"] == UNREGULATED:
            return PARKING_UNREGULATED
        return tuple(r / (LINK_GBPS * 1e3) for r in RESERVE_MBITS)
    if experiment == "single_flow":
        return proportional([float(str(label["idt"]))])
    if experiment == "send_queues":
        return SEND_QUEUES[str(label["queues"])]
    raise KeyError(f"no ideal for experiment {experiment!r}")


def _flow_names(experiment: str) -> tuple[str, ...]:
    return PARKING_FLOWS if experiment == "network_contention" else ("A", "B", "C")


def compare(experiment: str, g: Gathered, label: list[str]) -> pd.DataFrame:
    """Per flow of every run: measured and ideal bandwidth (MB/s and fraction of Bpeak),
    share of the run's delivered bandwidth, and the relative errors."""
    f = g.tables["flows"]
    # the engine's catch-all row for hand-posted messages has no traffic entry
    f = f[f["class"] != "posted"].copy()
    names = _flow_names(experiment)
    f["flow"] = [names[int(i)] for i in f["traffic"]]
    f["route"] = [f"{int(s)}->{int(d)}" for s, d in zip(f["src"], f["dst"], strict=True)]
    f["idt_T"] = f["idt_cycles"] / PERIOD_CYCLES
    f["mbps"] = f["bandwidth_gbps"] * 1e3 / 8
    f["bandwidth"] = f["bandwidth_gbps"] / LINK_GBPS
    f["ideal"] = [
        ideal_bandwidths(experiment, dict(zip(label, key, strict=True)))[int(i)]
        for key, i in zip(f[label].itertuples(index=False), f["traffic"], strict=True)
    ]
    f["bandwidth_error"] = f["bandwidth"] / f["ideal"] - 1
    runs = f.groupby(label, sort=False)
    f["share"] = f["bandwidth"] / runs["bandwidth"].transform("sum")
    f["ideal_share"] = f["ideal"] / runs["ideal"].transform("sum")
    f["share_error"] = f["share"] / f["ideal_share"] - 1
    cols = ["flow", "route", "idt_T", "mbps", "bandwidth", "ideal", "bandwidth_error"]
    cols += ["share", "ideal_share", "share_error"]
    return f[[*label, *cols]].reset_index(drop=True)


# --- The report. ---

#: The bar charts' x axis: what the runs differ in.
XLABELS = {
    "idts": "IDTs of the flows (units of T)",
    "case": "over-subscribed case",
    "control": "NIC rate control",
    "queues": "NIC send queues (endpoint.queues)",
}

#: Table headings for `compare`'s columns.
HEADINGS = {
    "idt": "IDT (T)",
    "idt_T": "IDT (T)",
    "mbps": "MB/s",
    "bandwidth": "of Bpeak",
    "ideal": "ideal",
    "bandwidth_error": "error",
    "share": "share",
    "ideal_share": "ideal share",
    "share_error": "share error",
    "worst_bandwidth_error": "bandwidth",
    "worst_share_error": "share",
}


def _cell(col: str, v: object) -> str:
    """The report's numbers: to 3 decimals, MB/s to 1, errors as signed percentages."""
    if isinstance(v, float):
        if v != v:  # NaN: an unregulated flow has no IDT
            return "-"
        if col.startswith("worst"):
            return f"{v:.1%}"
        if col.endswith("error"):
            return f"{v:+.1%}"
        return f"{v:.1f}" if col == "mbps" else f"{v:.3f}"
    return str(v)


def _bars(
    table: pd.DataFrame, label: str, y: str, ideal: str, ylabel: str, title: str, path: Path
) -> None:
    """Grouped bars, one group per run and one bar per flow, the ideal as a black tick."""
    import matplotlib.pyplot as plt

    runs = list(dict.fromkeys(table[label]))
    flows = list(dict.fromkeys(table["flow"]))
    width = 0.8 / len(flows)
    figwidth = max(5.0, 1.1 * len(runs) + 2.0)
    fig, ax = plt.subplots(figsize=(figwidth, 3.8), dpi=110)
    for j, flow in enumerate(flows):
        part = table[table["flow"] == flow]
        xs = [runs.index(r) - 0.4 + width * (j + 0.5) for r in part[label]]
        ax.bar(xs, part[y], width * 0.9, label=f"flow {flow}", color=f"C{j}")
        ax.hlines(part[ideal], [x - width / 2 for x in xs], [x + width / 2 for x in xs], "black")
    ax.hlines([], [], [], "black", label="ideal")
    ax.set_xticks(range(len(runs)), runs)
    ax.set_xlabel(XLABELS.get(label, label))
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 1.05)
    ax.set_title(textwrap.fill(title, int(12 * figwidth)), fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _knee(table: pd.DataFrame, title: str, path: Path) -> None:
    """Fig. 11: bandwidth against IDT, the ideal Bpeak · min(1, T / IDT) dashed."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.8), dpi=110)
    xs = sorted(table["idt"].unique())
    fine = [x / 100 for x in range(int(min(xs) * 100), int(max(xs) * 100) + 1)]
    ideal = [PEAK_MBPS * min(1.0, 1.0 / x) for x in fine]
    ax.plot(fine, ideal, "--", color="black", label="ideal: Bpeak · min(1, T / IDT)")
    ax.plot(table["idt"], table["mbps"], "o-", color="C0", label="measured")
    ax.axvline(1.0, color="grey", linestyle=":", label="IDT = T (the knee)")
    ax.set_xlabel("IDT (units of T = 20.48 us, a 4 KB packet on the link)")
    ax.set_ylabel("bandwidth (MB/s)")
    ax.set_ylim(0, PEAK_MBPS * 1.1)
    ax.set_title(textwrap.fill(title, 60), fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


#: What each experiment's bar chart shows: the share of the run's delivered bandwidth, or
#: (network contention, where the claim is in fractions of the link) the bandwidth.
BARS = {
    "one_source": ("share", "ideal_share", "share of the source's bandwidth"),
    "two_sources": ("share", "ideal_share", "share of node 2's link"),
    "oversubscribed": ("share", "ideal_share", "share (ideal: 1/idt)"),
    "network_contention": ("bandwidth", "ideal", "fraction of node 3's link"),
    "send_queues": ("share", "ideal_share", "share of the NIC"),
}


def _figure(e: Experiment, table: pd.DataFrame, label: list[str], out: Path) -> str:
    path = out / f"{e.name}.png"
    # the mean over the seeds; a run named by every label but its seed
    keys = [k for k in label if k != "seed"]
    t = table.groupby([*keys, "flow"], sort=False, as_index=False).mean(numeric_only=True)
    x = keys[0]
    if len(keys) > 1:
        x = "run"
        t[x] = t[keys].astype(str).agg(" ".join, axis=1)
    if e.name == "single_flow":
        _knee(t, e.title, path)
    else:
        y, ideal, ylabel = BARS[e.name]
        _bars(t, x, y, ideal, ylabel, e.title, path)
    return f"![{e.title}]({path.name})"


def _table(name: str, table: pd.DataFrame) -> pd.DataFrame:
    """The report's columns: a lone flow's share is always 1, an unregulated one has no IDT."""
    drop = ["share", "ideal_share", "share_error"] if name == "single_flow" else []
    if table["idt_T"].isna().all() or "idt" in table.columns:
        drop.append("idt_T")
    return table.drop(columns=drop)


def _worst(tables: dict[str, pd.DataFrame], results: dict[str, Gathered]) -> str:
    """One line per experiment: its largest relative errors, the report at a glance."""
    rows = pd.DataFrame(
        [
            {
                "experiment": name,
                "runs": len(results[name].summaries),
                "flows": len(t),
                "worst_bandwidth_error": t["bandwidth_error"].abs().max(),
                # a lone flow's share is 1 by definition
                "worst_share_error": (
                    t["share_error"].abs().max() if t["flow"].nunique() > 1 else float("nan")
                ),
            }
            for name, t in tables.items()
        ]
    )
    return markdown(rows, _cell, HEADINGS)


def report(
    experiments: list[Experiment],
    results: dict[str, Gathered],
    out: Path,
    quick: bool = False,
) -> Path:
    """Write tables (CSV), figures (PNG) and report.md; return the report's path."""
    import matplotlib

    matplotlib.use("Agg")

    out.mkdir(parents=True, exist_ok=True)
    lines = report_head("Document 004 (NIC-based rate control in Myrinet/GM), reproduced", quick)
    lines += [
        "Table 1 (the rate control algorithm with IDTs 2 and 3, NDTs and dispatches cycle by "
        "cycle) is reproduced exactly by the Rust unit test `table_1_cycle_by_cycle` in "
        "`crates/qosnet-sim/src/nic/rate_control.rs`.",
        "",
        f"Bpeak = {PEAK_MBPS:g} MB/s ({LINK_GBPS:g} Gb/s links); T = {PERIOD_CYCLES} cycles "
        "(20.48 us, a 4 KB packet on the link, which is slower than the 528 MB/s DMA). "
        "Errors are relative: measured / ideal - 1.",
        "",
    ]
    claims = {e.name: e for e in experiments}
    tables = {
        name: compare(name, g, list(claims[name].runs[0].label)) for name, g in results.items()
    }
    lines += ["Largest relative errors (absolute value):", "", _worst(tables, results), ""]
    for name, table in tables.items():
        e = claims[name]
        write(results[name].summaries, out / f"{name}_summary.csv")
        write(results[name].tables["flows"], out / f"{name}_flows.csv")
        write(table, out / f"{name}_compare.csv")
        lines += claim_section(e, "Document 004")
        lines += [_figure(e, table, list(e.runs[0].label), out), ""]
        lines += [markdown(_table(name, table), _cell, HEADINGS), ""]
    found = seed004_claims.findings(tables, round_robin)
    lines += ["## Findings", "", *[f"- {c}: {h} — **{v}**" for c, h, v in found], ""]
    write_findings(
        out,
        "Document 004 reproduced: what comes out (qosnet reproduce seed004)",
        [
            "GM-style HCAs on a star of 8 (and a line of four switches for Figs. 5-6), 4 KB "
            "packets, 64 KB messages, 1.6 Gb/s links (Bpeak = 200 MB/s), 64-bit 66 MHz PCI "
            f"host DMA, round-robin switches; T = {PERIOD_CYCLES} cycles = 20.48 us (a 4 KB "
            "packet on the link, slower than its DMA). Each flow's share (of the resource "
            "its flows share) or bandwidth (fraction of Bpeak) is the mean over the seeds "
            "with its interval, the ideal in brackets after it; a case holds when the "
            f"interval of measured - ideal lies within +-{seed004_claims.TOLERANCE} for "
            "every flow (an equivalence test). Tables: `*_compare.csv`, `*_flows.csv`; "
            "figures in `report.md`."
        ],
        found,
        quick,
        "004",
    )
    return write_report(out, lines)

"""`qosnet reproduce seed004-real`: document 004's sharing experiments (§5.4, Fig. 12) and
its overhead measurement (§5.2, Figs. 9-10) on real sockets, through the reproduce command's
self-run protocol (`experiments`, `run`, `report`).

The sharing experiments run on a namespace cluster with 100 Mb/s links (`experiments`), and
beside them the same cluster under contention (issue 34, `contention`: reserved flows
beside unreserved traffic of the same host and of another, two flows of one application,
over-subscribed reservations, a fully admitted link, small-message round trips);
the overhead on the loopback and, where namespaces can be built, between two namespace
hosts on 1 Gb/s links (`overhead`). The report sets each number beside the document's and
gives a verdict that claims no more than the numbers.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from qosnet.dataplane import contention, overhead
from qosnet.dataplane import experiments as sharing
from qosnet.dataplane.cluster import available
from qosnet.reproduce import seed004_real_claims as claims
from qosnet.reproduce.findings import write_findings
from qosnet.reproduce.report import write_report
from qosnet.reproduce.runner import Experiment

__all__ = ["SELF_RUN", "experiments", "report", "rescore", "run"]

SELF_RUN = True


def experiments(quick: bool = False) -> list[Experiment]:
    out = [
        Experiment(
            sc.name,
            f"{sc.figure}: IDTs {', '.join(f'{i:g}T' for _, _, i in sc.flows)}",
            "bandwidth shared in the inverse ratio of the IDTs",
        )
        for sc in sharing.SCENARIOS
    ]
    out += [
        Experiment(sc.name, f"Issue 34: {sc.what}", "§3.3 under contention")
        for sc in contention.CONTENDED
    ]
    out.append(
        Experiment(
            "rtt",
            "Issue 34: 4-byte ping-pong with and without a 90 Mb/s reservation",
            "small messages on a reserved flow are not held for a whole IDT",
        )
    )
    out.append(
        Experiment(
            "overhead",
            "Figs. 9-10: ping-pong latency and bandwidth with and without rate control",
            "< 1% latency overhead; < 1% bandwidth loss on average, 4.5% worst case",
        )
    )
    return out


def run(exps: list[Experiment], quick: bool = False, jobs: int | None = None) -> dict[str, Any]:
    """The experiments named, the sharing and contended ones `claims.REPEATS` times (a
    fresh cluster each: the repetitions a verdict is scored across, as seeds are for the
    engine's sets), each row labelled with its `repeat`."""
    del jobs  # the experiments share the machine's network: they run one at a time
    names = [e.name for e in exps]
    contended = {sc.name for sc in contention.CONTENDED} | {"rtt"}
    wanted = [n for n in names if n != "overhead" and n not in contended]
    mine = [n for n in names if n in contended]
    result: dict[str, Any] = {"sharing": [], "where": "-", "overhead": [], "rtt": []}
    for k in range(claims.QUICK_REPEATS if quick else claims.REPEATS):
        if wanted:
            rows, result["where"] = sharing.run(quick=quick, only=wanted)
            result["sharing"] += [{**r, "repeat": k} for r in rows]
        if mine and available()[0]:
            extra, rtts = contention.run(quick=quick, only=mine)
            result["sharing"] += [{**r, "repeat": k} for r in extra]
            result["rtt"] += [{**r, "repeat": k} for r in rtts]
    if "overhead" in names:
        blocks = 4 if quick else 40
        result["overhead"] = [
            {**r, "where": "loopback"} for r in overhead.interleaved("loopback", blocks=blocks)
        ]
        if available()[0]:
            result["overhead"] += [
                {**r, "where": "veth 1 Gb/s"} for r in overhead.interleaved("veth", blocks=blocks)
            ]
    return result


def _csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    # Every row's columns, in first-seen order (the contended rows add a few).
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def _read_csv(path: Path) -> list[dict[str, Any]]:
    """Rows of a table this module wrote, with its numbers, flags and intervals typed."""
    if not path.is_file():
        return []
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    out = []
    for r in rows:
        typed: dict[str, Any] = {}
        for k, v in r.items():
            typed[k] = _typed(k, v)
        out.append(typed)
    return out


def _typed(key: str, v: str) -> Any:
    if v == "":
        return None
    if v in ("True", "False"):
        return v == "True"
    if v.startswith("["):
        return json.loads(v)
    if key in ("scenario", "figure", "backend", "flow", "test", "where", "what", "target"):
        return v
    try:
        return int(v)
    except ValueError:
        pass
    try:
        return float(v)
    except ValueError:
        return v


#: The tables `report` writes, by the result's key.
TABLES = {"sharing": "sharing.csv", "overhead": "overhead.csv", "rtt": "rtt.csv"}


def rescore(out: Path, quick: bool = False) -> Path:
    """The report and FINDINGS written again from the tables in `out`, running nothing."""
    result: dict[str, Any] = {k: _read_csv(out / f) for k, f in TABLES.items()}
    result["where"] = _where(out)
    return report([], result, out, quick)


def _where(out: Path) -> str:
    # (where the sharing ran is the report's first line that says so)
    path = out / "report.md"
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.startswith("Sharing experiments ran on: "):
                return line.removeprefix("Sharing experiments ran on: ").rstrip(".")
    return "-"


def _kept(out: Path, result: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The result with what this run did not measure taken from the tables already in
    `out` (a run of some experiments keeps the others'), and the parts so kept."""
    merged = dict(result)
    kept = []
    for key, name in TABLES.items():
        old = _read_csv(out / name)
        new = result.get(key) or []
        if key == "sharing":
            ran = {r["scenario"] for r in new}
            rest = [r for r in old if r["scenario"] not in ran]
        else:
            rest = old if not new else []
        if rest:
            kept.append(f"{name} ({len(rest)} rows)")
            merged[key] = [*rest, *new] if key != "sharing" else [*new, *rest]
    if merged.get("where", "-") == "-":
        merged["where"] = _where(out)
    return merged, kept


def report(exps: list[Experiment], result: dict[str, Any], out: Path, quick: bool = False) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    result, kept = _kept(out, result)
    _csv(out / "sharing.csv", result["sharing"])
    _csv(out / "overhead.csv", result["overhead"])
    _csv(out / "rtt.csv", result.get("rtt", []))
    contended = [r for r in result["sharing"] if r["figure"] == "issue 34"]
    result = {**result, "sharing": [r for r in result["sharing"] if r["figure"] != "issue 34"]}
    lines = ["# Document 004 on real sockets (`qosnet reproduce seed004-real`)", ""]
    if quick:
        lines += ["**Quick run: short windows, a smoke test, not results.**", ""]
    lines += [f"Sharing experiments ran on: {result['where']}.", ""]
    if kept:
        lines += [
            "Not measured by this run, kept from the tables already here: " + ", ".join(kept) + ".",
            "",
        ]
    lines += [
        "## Sharing (§5.4, Fig. 12)",
        "",
        "| scenario | rate control | repeat | flow | IDT (T) | reserved Mb/s | got Mb/s | share "
        "| 1/idt share | error |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["sharing"]:
        res = f"{r['reserved_mbps']:.2f}" if r["reserved_mbps"] is not None else "-"
        lines.append(
            f"| {r['scenario']} | {r['backend'] if r['rate_control'] else 'no'} | "
            f"{r.get('repeat', 0)} | {r['flow']} | {r['idt_T']:g} | {res} | {r['mbps']:.2f} | "
            f"{r['share']:.4f} | {r['expected_share']:.4f} | {r['share_error']:+.2%} |"
        )
    found = claims.sharing(result["sharing"])
    if contended or result.get("rtt"):
        lines += [
            "",
            "## Under contention (issue 34)",
            "",
            "Each host's agent knows its link (100 Mb/s) and dispatches no faster in all; "
            "reserved flows are marked (DSCP EF) and, where the contention is at a port the "
            "source's agent does not schedule (another host's traffic) or the kernel back "
            "end is used, the cluster's ports serve marked packets first. `agent, link "
            "unknown`: the baseline, the agent without its link rate or marking on FIFO "
            "ports, as before issue 34 in those respects (its per-flow connections and "
            "byte costs are already this change's). The agent CPU column is its "
            "scheduling threads' CPU (dispatcher and drain, `schedstat`, the kernel's TCP "
            "send path in their context included) per Gb received.",
            "",
            *contention.table(contended),
        ]
        if result.get("rtt"):
            lines += [
                "",
                "| back end | repeat | reservation Mb/s | round trips | median RTT reserved "
                "(us) | unreserved (us) | difference |",
                "|---|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {r['backend']} | {r.get('repeat', 0)} | {r['reserved_mbps']:g} | "
                f"{r['round_trips']} | {r['rtt_reserved_us']:.1f} | "
                f"{r['rtt_unreserved_us']:.1f} | {r['difference']:+.1%} |"
                for r in result["rtt"]
            ]
        found += claims.contended(contended, result.get("rtt", []))
    lines += ["", "## Overhead (§5.2, Figs. 9-10)", ""]
    lines += [
        "Interleaved paired blocks (`overhead.interleaved`): a sender with its flows reserved "
        "above the path's capacity and one without, alive at once, measured block after block "
        "in alternating order, the two processes swapping roles every block; a block's paired "
        "difference is one sample. Time (latency overhead, bandwidth loss): mean, median and a "
        "95% bootstrap interval of the mean. The sender's process CPU per round trip or per "
        "Gb: the ratio of the totals with its 95% interval. The agent's scheduling threads' "
        "CPU per Gb with rate control (schedstat).",
        "",
        "| where | test | size (B) | blocks | with RC | without RC | mean | median | 95% "
        "interval | CPU with / without | CPU mean (95%) | agent CPU s per Gb |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["overhead"]:
        agent = f"{r['agent_cpu_per_gb']:.3f}" if r["agent_cpu_per_gb"] is not None else "-"
        lines.append(
            f"| {r['where']} | {r['test']} | {r['size']} | {r['blocks']} | {r['with']:.3f} | "
            f"{r['without']:.3f} | {r['mean']:+.2%} | {r['median']:+.2%} | "
            f"{r['ci95'][0]:+.2%} .. {r['ci95'][1]:+.2%} | "
            f"{r['cpu_with']:.3g} / {r['cpu_without']:.3g} | {r['cpu_mean']:+.2%} "
            f"({r['cpu_ci95'][0]:+.2%} .. {r['cpu_ci95'][1]:+.2%}) | {agent} |"
        )
    verdicts = []
    for where in dict.fromkeys(r["where"] for r in result["overhead"]):
        rows = [r for r in result["overhead"] if r["where"] == where]
        for v in overhead.interleaved_verdicts(rows):
            agent_cpu = [r["agent_cpu_per_gb"] for r in rows if r["test"] == v["test"]]
            if agent_cpu and all(a is not None for a in agent_cpu):
                v = {
                    **v,
                    "cpu_verdict": f"{v['cpu_verdict']}; the agent's scheduling threads "
                    f"{min(agent_cpu):.3f}-{max(agent_cpu):.3f} CPU-s per Gb moved",
                }
            verdicts.append((where, v))
    found += claims.overhead(verdicts)
    lines += ["", "## Findings", "", *[f"- {c}: {h} — **{v}**" for c, h, v in found], ""]
    # Findings measured by other tools (instruction counts, the daemon's cost) live beside the
    # results and are carried into each re-run's FINDINGS as they are, not lost by it.
    apart_file = out / "measured_apart.md"
    apart = (
        [line for line in apart_file.read_text().splitlines() if line.startswith("- ")]
        if apart_file.exists()
        else []
    )
    n = len({r.get("repeat", 0) for r in result["sharing"]}) if result["sharing"] else 0
    write_findings(
        out,
        "Document 004 on real sockets: what comes out (qosnet reproduce seed004-real)",
        [
            "The table is written by `qosnet reproduce seed004-real` from the tables beside it "
            f"(`sharing.csv`, `rtt.csv`, `overhead.csv`). The sharing experiments ran on: "
            f"{result['where']}; each sharing and contended scenario {n} time(s), a fresh "
            "cluster each: a real run has no seed, its repetitions are what a verdict is "
            'scored across (read "seed" below as repetition). The overhead\'s verdicts are '
            "its own paired blocks' (40 per size, a bootstrap interval).",
            *(["", f"Kept from an earlier run: {', '.join(kept)}."] if kept else []),
        ],
        found,
        quick,
        "004",
        sections=["## Measured apart (not re-run by this command)", "", *apart] if apart else (),
        quick_why="short windows and one repetition: a smoke test, not results",
    )
    return write_report(out, lines)

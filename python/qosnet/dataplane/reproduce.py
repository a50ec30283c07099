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
from pathlib import Path
from typing import Any

from qosnet.dataplane import contention, overhead
from qosnet.dataplane import experiments as sharing
from qosnet.dataplane.cluster import available
from qosnet.reproduce.report import write_report
from qosnet.reproduce.runner import Experiment

__all__ = ["SELF_RUN", "experiments", "report", "run"]

SELF_RUN = True
TOLERANCE = 0.02


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
    del jobs  # the experiments share the machine's network: they run one at a time
    names = [e.name for e in exps]
    contended = {sc.name for sc in contention.CONTENDED} | {"rtt"}
    wanted = [n for n in names if n != "overhead" and n not in contended]
    rows, where = sharing.run(quick=quick, only=wanted) if wanted else ([], "-")
    result: dict[str, Any] = {"sharing": rows, "where": where, "overhead": [], "rtt": []}
    mine = [n for n in names if n in contended]
    if mine and available()[0]:
        extra, result["rtt"] = contention.run(quick=quick, only=mine)
        result["sharing"] = rows + extra
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


def report(exps: list[Experiment], result: dict[str, Any], out: Path, quick: bool = False) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    _csv(out / "sharing.csv", result["sharing"])
    _csv(out / "overhead.csv", result["overhead"])
    _csv(out / "rtt.csv", result.get("rtt", []))
    contended = [r for r in result["sharing"] if r["figure"] == "issue 34"]
    result = {**result, "sharing": [r for r in result["sharing"] if r["figure"] != "issue 34"]}
    lines = ["# Document 004 on real sockets (`qosnet reproduce seed004-real`)", ""]
    if quick:
        lines += ["**Quick run: short windows, a smoke test, not results.**", ""]
    lines += [
        f"Sharing experiments ran on: {result['where']}.",
        "",
        "## Sharing (§5.4, Fig. 12)",
        "",
    ]
    lines += [
        "| scenario | rate control | flow | IDT (T) | reserved Mb/s | got Mb/s | share "
        "| 1/idt share | error |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    findings = []
    by_sc: dict[tuple[str, bool], list[dict[str, Any]]] = {}
    for r in result["sharing"]:
        by_sc.setdefault((r["scenario"], r["backend"]), []).append(r)
        res = f"{r['reserved_mbps']:.2f}" if r["reserved_mbps"] is not None else "-"
        lines.append(
            f"| {r['scenario']} | {r['backend'] if r['rate_control'] else 'no'} | {r['flow']} | "
            f"{r['idt_T']:g} | {res} | {r['mbps']:.2f} | {r['share']:.4f} | "
            f"{r['expected_share']:.4f} | {r['share_error']:+.2%} |"
        )
    for (sc, backend), rs in by_sc.items():
        rc = backend != "-"
        worst = max(abs(r["share_error"]) for r in rs)
        shares = ":".join(f"{r['share']:.3f}" for r in rs)
        want = ":".join(f"{r['expected_share']:.3f}" for r in rs)
        if rc:
            verdict = "holds" if worst <= TOLERANCE else f"does not hold (worst {worst:.1%})"
            findings.append(
                f"- {sc} ({rs[0]['figure']}), {backend} back end: document: shares {want} "
                f"(1/idt); ours {shares}, worst error {worst:.2%}; verdict: {verdict} within 2%."
            )
        else:
            findings.append(
                f"- {sc} without rate control: ours {shares} (no reservation: the agent's "
                f"interleaving or TCP decides), against {want} asked for."
            )
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
                "| back end | reservation Mb/s | round trips | median RTT reserved (us) "
                "| unreserved (us) | difference |",
                "|---|---|---|---|---|---|",
            ]
            lines += [
                f"| {r['backend']} | {r['reserved_mbps']:g} | {r['round_trips']} | "
                f"{r['rtt_reserved_us']:.1f} | {r['rtt_unreserved_us']:.1f} | "
                f"{r['difference']:+.1%} |"
                for r in result["rtt"]
            ]
        findings += contention.findings(contended, result.get("rtt", []))
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
    for where in dict.fromkeys(r["where"] for r in result["overhead"]):
        rows = [r for r in result["overhead"] if r["where"] == where]
        for v in overhead.interleaved_verdicts(rows):
            what = "latency overhead" if "RTT" in v["test"] else "bandwidth loss"
            agent_cpu = [r["agent_cpu_per_gb"] for r in rows if r["test"] == v["test"]]
            agent_text = (
                f"; the agent's scheduling threads {min(agent_cpu):.3f}-{max(agent_cpu):.3f} "
                "CPU-s per Gb moved"
                if all(a is not None for a in agent_cpu)
                else ""
            )
            findings.append(
                f"- {what}, {where} (§5.2): document < 1% on average (4.5% worst for "
                f"bandwidth); ours {v['mean']:+.2%} on average over sizes (median "
                f"{v['median']:+.2%}, 95% interval {v['ci95'][0]:+.2%} .. {v['ci95'][1]:+.2%}), "
                f"worst {v['worst']:+.2%} at {v['worst_size']} B ({v['worst_ci95'][0]:+.2%} .. "
                f"{v['worst_ci95'][1]:+.2%}); the sender's CPU {v['cpu_mean']:+.2%} "
                f"({v['cpu_ci95'][0]:+.2%} .. {v['cpu_ci95'][1]:+.2%}){agent_text}; verdict: "
                f"time {v['verdict']}, CPU {v['cpu_verdict']}."
            )
    lines += ["", "## Findings", "", *findings, ""]
    # Findings measured by other tools (instruction counts, the daemon's cost) live beside the
    # results and are carried into each re-run's FINDINGS as they are, not lost by it.
    apart_file = out / "measured_apart.md"
    apart = (
        [line for line in apart_file.read_text().splitlines() if line.startswith("- ")]
        if apart_file.exists()
        else []
    )
    if apart:
        findings += ["", "## Measured apart (not re-run by this command)", "", *apart]
    (out / "FINDINGS.md").write_text("\n".join(["# Findings: seed004-real", "", *findings, ""]))
    return write_report(out, lines)

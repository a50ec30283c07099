"""Document 000's claims scored against `qosnet reproduce seed000`'s runs, across seeds
(`qosnet.reproduce.scoring`): every claim at every load it speaks of, with the traffic each
side delivered beside it.

Why traffic beside latency: congestion control holds messages at their source (§4.2:
best effort waits for a credit) and admission control refuses whole connections (§3), so
a scheme's *network* latency can fall because it carries less. Each line shows the sides'
delivered throughput, refused fraction (real-time connections that gave up after their
probes were refused), and latency in the network and end to end (source queueing
included); a "win" by a side that delivers markedly less is scored `not like for like`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

import pandas as pd

from qosnet.reproduce.scoring import (
    NOT,
    UNLIKE,
    Direction,
    Finding,
    Score,
    Traffic,
    combine,
    compare,
    over_loads,
    per_seed,
    within,
)

__all__ = ["Finding", "fig3", "fig4", "fig5", "refused_fraction"]


#: Fig. 3's schemes other than no control, and its credit settings (`seed000.SCHEMES`).
CREDITS = ("credit 2", "credit 4", "credit 8", "credit 16")
OTHERS = ("ALO", "Self-Tuned", *CREDITS)
#: "High load" in Fig. 3: from 90% of the uncontrolled mesh's measured saturation up.
HIGH = 0.9
#: Fig. 4's "about 0.002" read as at most this DMP (the document's curves stay below it).
DMP_ABOUT = 0.01


def _mean(frame: pd.DataFrame, column: str) -> float:
    return float(frame[column].astype(float).mean()) if len(frame) else float("nan")


def _traffic(rows: pd.DataFrame, refused: float = 0.0) -> Traffic:
    """A side's delivered traffic, means over its seeds: `rows` hold
    accepted_flits_per_node_cycle, network_mean and latency_mean (end to end)."""
    return Traffic(
        delivered=_mean(rows, "accepted_flits_per_node_cycle"),
        refused=refused,
        network=_mean(rows, "network_mean"),
        end_to_end=_mean(rows, "latency_mean"),
    )


def refused_fraction(admission: pd.DataFrame | None, **where: object) -> float:
    """Real-time connections that gave up (refused at every probe) over all connections,
    pooled over the seeds of the runs matching `where`."""
    if admission is None:
        return 0.0
    a = admission[admission["class"] == "real_time"]
    for k, v in where.items():
        a = a[a[k] == v]
    total = float(a["admitted"].sum() + a["gave_up"].sum())
    return float(a["gave_up"].sum()) / total if total else 0.0


def _at_loads(
    loads: Sequence[float],
    pairs: Sequence[tuple[str, str]],
    score: Callable[[str, str, float], Score],
) -> tuple[str, dict[float, list[Score]]]:
    """Score every pair at every load: each load's comparisons combined, then the range."""
    scores = {ld: [score(a, b, ld) for a, b in pairs] for ld in loads}
    verdicts = {ld: combine([s.verdict for s in ss]) for ld, ss in scores.items()}
    return over_loads(verdicts), scores


def _shown(scores: dict[float, list[Score]], names: list[tuple[str, str]], spec: str) -> str:
    """The comparisons at the highest load, each with its interval and traffic."""
    top = max(scores)
    return f"at load {top:g}: " + "; ".join(
        s.text(n, spec) for s, n in zip(scores[top], names, strict=True)
    )


def fig3(s: pd.DataFrame, sat: float) -> list[Finding]:
    """Fig. 3 (§6.1): best effort in a 4x4 mesh under each congestion control scheme."""
    loads = sorted(s["load"].unique())
    high = [ld for ld in loads if ld / sat >= HIGH]

    def side(scheme: str, load: float) -> pd.DataFrame:
        return s[(s["scheme"] == scheme) & (s["load"] == load)]

    def lower(a: str, b: str, load: float, metric: str = "network_mean") -> Score:
        return compare(
            per_seed(side(a, load), metric),
            per_seed(side(b, load), metric),
            "lower",
            traffic=(_traffic(side(a, load)), _traffic(side(b, load))),
        )

    def higher(a: str, b: str, load: float, direction: Direction = "higher") -> Score:
        metric = "accepted_flits_per_node_cycle"
        return compare(per_seed(side(a, load), metric), per_seed(side(b, load), metric), direction)

    out: list[Finding] = []
    for metric, what in (("network_mean", "network"), ("latency_mean", "end-to-end")):
        verdict, scores = _at_loads(
            loads, [(o, "none") for o in OTHERS], partial(lower, metric=metric)
        )
        name = "Fig. 3: no congestion control has the worst latency"
        out.append(
            (
                name if what == "network" else f"{name} (end to end, source queueing included)",
                f"{what} latency (cycles), every scheme against none at each of "
                f"{len(loads)} loads; " + _shown(scores, [(o, "none") for o in OTHERS], ".0f"),
                verdict,
            )
        )
    verdict, scores = _at_loads(
        loads, [("none", o) for o in OTHERS], partial(higher, direction="lower")
    )
    out.append(
        (
            "Fig. 3: no congestion control has the lowest throughput",
            "accepted flits/node/cycle, none against every scheme; "
            + _shown(scores, [("none", o) for o in OTHERS], ".3f"),
            verdict,
        )
    )
    for c in CREDITS:
        verdict, scores = _at_loads(loads, [(c, "ALO"), (c, "Self-Tuned")], lower)
        out.append(
            (
                f"Fig. 3: credit-based ({c}) beats ALO and Self-Tuned in latency over the "
                "whole load",
                _idle(s, c)
                + "network latency (cycles); "
                + _shown(scores, [(c, "ALO"), (c, "Self-Tuned")], ".0f"),
                verdict,
            )
        )
    for c in CREDITS:
        verdict, scores = _at_loads(high, [(c, "ALO"), (c, "Self-Tuned")], higher)
        out.append(
            (
                f"Fig. 3: credit-based ({c}) gives the higher throughput at high load",
                _idle(s, c) + f"accepted flits/node/cycle at the {len(high)} loads from "
                f"{HIGH:.0%} of saturation up; "
                + _shown(scores, [(c, "ALO"), (c, "Self-Tuned")], ".3f"),
                verdict,
            )
        )
    pairs = list(zip(CREDITS, CREDITS[1:], strict=False))
    verdict, scores = _at_loads(loads, pairs, lower)
    out.append(
        (
            "Fig. 3: more initial credits raise the delay",
            "network latency (cycles), each setting against the next larger one (the "
            "document's 200 credits count its HCA's messages; ours bind from 16 down); "
            + _shown(scores, pairs, ".0f"),
            verdict,
        )
    )
    return out


def _idle(s: pd.DataFrame, scheme: str) -> str:
    """A warning where a setting's runs are no control's, seed by seed and load by load (its
    credits never bind): whatever it wins, no control wins too."""
    cols = ["load", "seed", "accepted_flits_per_node_cycle", "network_mean"]
    cols = [c for c in cols if c in s.columns]
    mine = s[s["scheme"] == scheme][cols].reset_index(drop=True)
    none = s[s["scheme"] == "none"][cols].reset_index(drop=True)
    if len(mine) and mine.equals(none):
        return f"**{scheme}'s runs are identical to no control's (its credits never bind)**; "
    return ""


def _class_rows(c: pd.DataFrame, cls: str, control: str, load: float) -> pd.DataFrame:
    return c[(c["class"] == cls) & (c["control"] == control) & (c["load"] == load)]


def fig5(c: pd.DataFrame, admission: pd.DataFrame | None, sat: float) -> list[Finding]:
    """Fig. 5 (§6.2): the four combinations of admission (A) and congestion (C) control."""
    loads = sorted(c["load"].unique())
    low = [ld for ld in loads if ld < sat]
    high = [ld for ld in loads if ld >= sat]
    out: list[Finding] = []
    for cls in ("real_time", "best_effort"):

        def lower(a: str, b: str, load: float, cls: str = cls) -> Score:
            ra, rb = _class_rows(c, cls, a, load), _class_rows(c, cls, b, load)
            ta = _traffic(ra, refused_fraction(admission, control=a, load=load))
            tb = _traffic(rb, refused_fraction(admission, control=b, load=load))
            return compare(
                per_seed(ra, "network_mean"), per_seed(rb, "network_mean"), "lower", (ta, tb)
            )

        claims = (
            ("A+C best", loads, [("A+C", "A"), ("A+C", "C"), ("A+C", "none")]),
            ("no control worst", loads, [("A", "none"), ("C", "none"), ("A+C", "none")]),
            (f"A beats C below saturation ({sat:.3f})", low, [("A", "C")]),
            ("C beats A from saturation up", high, [("C", "A")]),
        )
        for name, at, pairs in claims:
            if not at:
                out.append((f"Fig. 5 ({cls}): {name}", "no load in this range", "not measured"))
                continue
            verdict, scores = _at_loads(at, pairs, lower)
            out.append(
                (
                    f"Fig. 5 ({cls}): {name}",
                    f"network latency (cycles) at {', '.join(f'{ld:g}' for ld in at)} "
                    f"({at[0] / sat:.2f}-{at[-1] / sat:.2f} of saturation); "
                    + _shown(scores, pairs, ".0f"),
                    verdict,
                )
            )
    return out


def fig4(
    s: pd.DataFrame, c: pd.DataFrame, admission: pd.DataFrame | None, settings: Sequence[str]
) -> list[Finding]:
    """Fig. 4 (§6.2): the 8-port router with video at 80:20, each setting against none."""
    base = "No A, No C"
    loads = sorted(s["load"].unique())
    out: list[Finding] = []

    def run_traffic(control: str, load: float) -> Traffic:
        rows = s[(s["control"] == control) & (s["load"] == load)]
        return _traffic(rows, refused_fraction(admission, control=control, load=load))

    for setting in settings:

        def dmp(a: str, b: str, load: float) -> Score:
            rows = s[(s["control"] == a) & (s["load"] == load)]
            none = s[(s["control"] == b) & (s["load"] == load)]
            return compare(
                per_seed(rows, "dmp"),
                per_seed(none, "dmp"),
                "lower",
                (run_traffic(a, load), run_traffic(b, load)),
                dmp=True,
            )

        verdict, scores = _at_loads(loads, [(setting, base)], dmp)
        out.append(
            (
                f"Fig. 4 ({setting}): DMP higher without A,C",
                "DMP; " + _shown(scores, [(setting, base)], ".4f"),
                verdict,
            )
        )
        levels = {}
        for ld, (score,) in scores.items():
            if score.verdict in (UNLIKE,) or score.verdict.startswith("untestable"):
                levels[ld] = score.verdict
            else:
                rows = s[(s["control"] == setting) & (s["load"] == ld)]
                levels[ld] = within(per_seed(rows, "dmp"), DMP_ABOUT)
                if levels[ld] != NOT and run_traffic(setting, ld).refused > 0.05:
                    levels[ld] = UNLIKE
        out.append(
            (
                f"Fig. 4 ({setting}): with A,C DMP stays about 0.002 and DMT about 0.04 ms",
                f"DMP at most {DMP_ABOUT} (95% interval), scored where {base} misses "
                "deadlines; " + ", ".join(f"{ld:g}: {scores[ld][0].a.text('.4f')}" for ld in loads),
                over_loads(levels),
            )
        )
        for cls in ("control", "best_effort"):

            def lat(a: str, b: str, load: float, cls: str = cls) -> Score:
                ra, rb = _class_rows(c, cls, a, load), _class_rows(c, cls, b, load)
                return compare(
                    per_seed(ra, "network_mean"),
                    per_seed(rb, "network_mean"),
                    "lower",
                    (run_traffic(a, load), run_traffic(b, load)),
                )

            verdict, scores = _at_loads(loads, [(setting, base)], lat)
            out.append(
                (
                    f"Fig. 4 ({setting}): {cls} latency smaller with A,C",
                    f"{cls} network latency (cycles); traffic: the run's; "
                    + _shown(scores, [(setting, base)], ".0f"),
                    verdict,
                )
            )
    return out

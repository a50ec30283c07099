"""Document 002's claims scored against `qosnet reproduce seed002`'s runs, across seeds
(`qosnet.reproduce.scoring`): a claim holds only where the 95% interval of the paired
difference excludes zero in the claimed direction, and a tie is a tie.

What "saturation throughput" means here: per seed, the largest accepted throughput over
the loads swept (Fig. 8 and Fig. 9's top row). "Past saturation": the loads whose offered
traffic exceeds no control's saturation (its mean over seeds). The document's magnitudes
(35-50% more throughput, 200-300% lower latency, 75% lower peaks) are reported beside the
verdict, which scores the direction.
"""

from __future__ import annotations

import pandas as pd

from qosnet.reproduce.scoring import (
    Finding,
    Score,
    Traffic,
    combine,
    compare,
    matches,
    over_loads,
    per_seed,
)

__all__ = [
    "Finding",
    "avakas_claims",
    "curves_claims",
    "dcqcn_hot_spot_claims",
    "dcqcn_victim_claims",
    "hot_spot_claim",
    "victim_claims",
]


#: "Alike" at low load: mean latencies within 10% of no control's.
ALIKE = 0.10


def _saturation(part: pd.DataFrame, scheme: str) -> dict[int, float]:
    rows = part[part["scheme"] == scheme]
    return {
        int(s): float(g["accepted_flits_per_node_cycle"].max()) for s, g in rows.groupby("seed")
    }


def _rel(s: Score) -> str:
    return f"{(s.a.mean / s.b.mean - 1) * 100:+.1f}%" if s.b.mean else "n/a"


def curves_claims(d: pd.DataFrame, topology: str) -> list[Finding]:
    """Fig. 8 / Fig. 9 per pattern: alike at the lowest load; DRB's saturation throughput
    above IBA CC's (35-50%); DRB's latency below IBA CC's past saturation (200-300%); and
    the referee's check that DRB accepts no less than no control."""
    out: list[Finding] = []
    for p, part in d.groupby("pattern", sort=False):
        low = part[part["load"] == part["load"].min()]
        none_lat = per_seed(low, "latency_mean", scheme="none")
        verdicts, shown = [], []
        for k in ("IBA CC", "DRB"):
            lat = per_seed(low, "latency_mean", scheme=k)
            ratio = {s: lat[s] / none_lat[s] for s in lat if s in none_lat and none_lat[s]}
            verdicts.append(matches(ratio, 1.0, ALIKE))
            shown.append(f"{k} / none {sum(ratio.values()) / max(len(ratio), 1):.3f}")
        out.append(
            (
                f"{topology}, {p}: at low load the schemes are alike (latency within 10%)",
                f"load {low['load'].iloc[0]:g}: mean latency " + ", ".join(shown),
                combine(verdicts),
            )
        )
        drb, cc, none = (_saturation(part, k) for k in ("DRB", "IBA CC", "none"))
        s = compare(drb, cc, "higher")
        out.append(
            (
                f"{topology}, {p}: DRB accepts more than IBA CC (document: 35-50% more)",
                "saturation throughput (flits/node/cycle) "
                + s.text(("DRB", "IBA CC"), ".4f")
                + f"; DRB over IBA CC {_rel(s)}",
                s.verdict,
            )
        )
        s = compare(drb, none, "higher")
        out.append(
            (
                f"{topology}, {p}: DRB accepts at least what no control accepts (not in "
                "the document; a multipath scheme's floor)",
                s.text(("DRB", "none"), ".4f") + f"; {_rel(s)}",
                s.verdict,
            )
        )
        # (by load: a load is past saturation when its offered traffic, the mean over
        # seeds, exceeds no control's saturation, the mean over seeds)
        sat = sum(none.values()) / max(len(none), 1)
        offered = part.groupby("load")["offered_flits_per_node_cycle"].mean()
        loads = sorted(float(x) for x in offered[offered > sat].index)
        past = part[part["load"].isin(loads)]
        if len(past):
            verdicts_at = {}
            texts = []
            for ld in loads:
                at = past[past["load"] == ld]
                s = compare(
                    per_seed(at, "latency_mean", scheme="DRB"),
                    per_seed(at, "latency_mean", scheme="IBA CC"),
                    "lower",
                )
                verdicts_at[ld] = s.verdict
                texts.append(f"load {ld:g}: IBA CC / DRB {s.b.mean / s.a.mean:.2f}")
            out.append(
                (
                    f"{topology}, {p}: past saturation DRB's latency is lower than IBA CC's "
                    "(document: 200-300% lower)",
                    "; ".join(texts),
                    over_loads(verdicts_at),
                )
            )
    return out


def _busiest_by_seed(links: pd.DataFrame, scheme: str) -> dict[int, float]:
    """A hot-spot table's busiest link's mean utilisation for `scheme`, seed by seed."""
    rows = links[links["scheme"] == scheme]
    return {int(s): float(v) for s, v in zip(rows["seed"], rows["busiest_link_mean"], strict=True)}


def _traffic(links: pd.DataFrame, scheme: str) -> Traffic:
    """What `scheme` delivered beside its busiest link (a lower peak bought by carrying
    less is not like for like), over its seeds."""
    rows = links[links["scheme"] == scheme]
    return Traffic(
        delivered=float(rows["accepted_flits_per_node_cycle"].mean()),
        end_to_end=float(rows["latency_mean"].mean()),
    )


def hot_spot_claim(links: pd.DataFrame) -> list[Finding]:
    """Fig. 10: the busiest link's mean utilisation, DRB below IBA CC (document: about 75%
    lower); `links` has a row per scheme and seed."""

    def by_seed(k: str) -> dict[int, float]:
        return _busiest_by_seed(links, k)

    def traffic(k: str) -> Traffic:
        return _traffic(links, k)

    # (a lower peak bought by carrying less is not like for like)
    s = compare(by_seed("DRB"), by_seed("IBA CC"), "lower", (traffic("DRB"), traffic("IBA CC")))
    none = by_seed("none")
    return [
        (
            "hot spot on the torus: DRB lowers the busiest link's load below IBA CC's "
            "(document: about 75%)",
            "busiest link's mean utilisation "
            + s.text(("DRB", "IBA CC"), ".3f")
            + f"; none {sum(none.values()) / max(len(none), 1):.3f}; DRB against IBA CC "
            + _rel(s),
            s.verdict,
        )
    ]


def victim_claims(t: pd.DataFrame) -> list[Finding]:
    """Per topology: each scheme's victims against no control's (higher is the purpose
    of IBA CC), and the hot spot's and the total throughput beside them."""
    out: list[Finding] = []
    for topo, part in t.groupby("topology", sort=False):
        for k in [x for x in part["scheme"].unique() if x != "none"]:
            parts = []
            verdict = ""
            for col in ("victims", "hot_spot", "total"):
                s = compare(
                    per_seed(part, col, scheme=k), per_seed(part, col, scheme="none"), "higher"
                )
                parts.append(f"{col} {s.text((k, 'none'), '.3f')}")
                if col == "victims":
                    verdict = s.verdict
            out.append(
                (
                    f"victim flows, {topo}: {k} keeps the victims' throughput above no "
                    "control's (not in the document)",
                    "flits/cycle: " + "; ".join(parts),
                    verdict,
                )
            )
    return out


def avakas_claims(links: pd.DataFrame) -> list[Finding]:
    """Beyond the document: on the Avakas fabric under a hot spot, DRB's busiest switch
    link against no control's (the peak DRB claims to remove), with the accepted traffic
    and latency of every scheme beside it."""

    def by_seed(k: str, col: str) -> dict[int, float]:
        rows = links[links["scheme"] == k]
        return {int(s): float(v) for s, v in zip(rows["seed"], rows[col], strict=True)}

    s = compare(by_seed("DRB", "busiest_link_mean"), by_seed("none", "busiest_link_mean"), "lower")
    rest = []
    for k in links["scheme"].unique():
        acc = by_seed(k, "accepted_flits_per_node_cycle")
        lat = by_seed(k, "latency_mean")
        rest.append(
            f"{k}: accepted {sum(acc.values()) / len(acc):.4f}, latency "
            f"{sum(lat.values()) / len(lat):.0f}"
        )
    return [
        (
            "Avakas (281 HCAs), hot spot: DRB lowers the busiest switch link's load below "
            "no control's (beyond the document)",
            "busiest link's mean utilisation "
            + s.text(("DRB", "none"), ".3f")
            + "; "
            + "; ".join(rest),
            s.verdict,
        )
    ]


def dcqcn_hot_spot_claims(links: pd.DataFrame) -> list[Finding]:
    """Beyond the documents: on Fig. 10's hot spot, DCQCN's busiest link's mean utilisation
    against no control's and against IBA CC's (lower is the purpose of congestion control),
    with what each delivered beside it (a lower peak bought by carrying less is not like
    for like)."""

    def by_seed(k: str) -> dict[int, float]:
        return _busiest_by_seed(links, k)

    def traffic(k: str) -> Traffic:
        return _traffic(links, k)

    out: list[Finding] = []
    for mine, other in (("DCQCN", "none"), ("DCQCN", "IBA CC"), ("DRB + DCQCN", "DCQCN")):
        if mine not in set(links["scheme"]):
            continue
        s = compare(by_seed(mine), by_seed(other), "lower", (traffic(mine), traffic(other)))
        out.append(
            (
                f"hot spot on the torus: {mine} lowers the busiest link's load below {other}'s "
                "(beyond the document)",
                "busiest link's mean utilisation "
                + s.text((mine, other), ".3f")
                + f"; {mine} against {other} "
                + _rel(s),
                s.verdict,
            )
        )
    return out


def dcqcn_victim_claims(t: pd.DataFrame) -> list[Finding]:
    """Beyond the documents: per topology, DCQCN's victims against no control's and
    against IBA CC's, the hot spot's and the total throughput beside them."""
    out: list[Finding] = []
    for topo, part in t.groupby("topology", sort=False):
        for mine, other in (("DCQCN", "none"), ("DCQCN", "IBA CC"), ("DRB + DCQCN", "DCQCN")):
            if mine not in set(part["scheme"]):
                continue
            parts = []
            verdict = ""
            for col in ("victims", "hot_spot", "total"):
                s = compare(
                    per_seed(part, col, scheme=mine),
                    per_seed(part, col, scheme=other),
                    "higher",
                )
                parts.append(f"{col} {s.text((mine, other), '.3f')}")
                if col == "victims":
                    verdict = s.verdict
            out.append(
                (
                    f"victim flows, {topo}: {mine} keeps the victims' throughput above "
                    f"{other}'s (beyond the document)",
                    "flits/cycle: " + "; ".join(parts),
                    verdict,
                )
            )
    return out

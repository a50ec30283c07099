"""Document 004's claims scored against `qosnet reproduce seed004`'s runs, across seeds
(`qosnet.reproduce.scoring`): each flow's measured share (or bandwidth) against what the
document's model gives it, as an equivalence test per flow, every case of a claim scored.

The model (§3.3): flows always backlogged, every IDT at least T, dispatched in the ratio
1/idt. Where the flows ask less than their shared resource has, that ratio is each flow
pacing itself; the over-subscribed cases (`seed004.OVERSUBSCRIBED`) are the ones where the
mechanism decides. For two sources into one port the document's §2.3 predicts round robin
at the switch and §3.4 (c) would not admit the pair: both are scored.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from qosnet.reproduce.scoring import Finding, combine, interval, matches, over_loads, per_seed

__all__ = ["TOLERANCE", "Finding", "findings"]


#: A share or bandwidth "is" its ideal within this much (a fraction of the link or of the
#: resource shared): two percentage points, a reviewer's reading of "in the ratio".
TOLERANCE = 0.02


def _cases(
    table: pd.DataFrame,
    keys: list[str],
    measured: str,
    ideal: Callable[[pd.DataFrame], float],
    where: Callable[[dict[str, object]], bool] = lambda label: True,
) -> tuple[str, str]:
    """Every case (`keys` but the seed) and flow: measured against ideal. Returns the
    text (flow: mean [interval] against ideal, per case) and the verdict over the cases."""
    verdicts: dict[str, str] = {}
    texts = []
    for values, case in table.groupby(keys, sort=False):
        values = values if isinstance(values, tuple) else (values,)
        label = dict(zip(keys, values, strict=True))
        if not where(label):
            continue
        name = " ".join(str(v) for v in values)
        per_flow, shown = [], []
        for flow, rows in case.groupby("flow", sort=False):
            target = ideal(rows)
            per_flow.append(matches(per_seed(rows, measured), target, TOLERANCE))
            shown.append(f"{flow} {interval(list(rows[measured])).text('.3f')} ({target:.3f})")
        verdicts[name] = combine(per_flow)
        texts.append(f"{name}: " + ", ".join(shown))
    return "; ".join(texts), over_loads(verdicts, "cases")


def _col(name: str) -> Callable[[pd.DataFrame], float]:
    return lambda rows: float(rows[name].iloc[0])


def findings(tables: dict[str, pd.DataFrame], round_robin: Callable[..., tuple]) -> list[Finding]:
    """The claims of every experiment run (`tables`: `seed004.compare`'s, by experiment)."""
    out: list[Finding] = []

    def add(name: str, claim: str, measured: str, ideal: Callable, where=lambda label: True):
        if name not in tables:
            return
        t = tables[name]
        keys = [k for k in t.columns[: list(t.columns).index("flow")] if k != "seed"]
        text, verdict = _cases(t, keys, measured, ideal, where)
        if text:
            out.append((claim, f"{measured} (ideal in brackets after): {text}", verdict))

    regulated = lambda label: label.get("idts") != "unregulated"  # noqa: E731
    add(
        "one_source",
        "two and three flows from one source share by 1/idt (Fig. 12a-b)",
        "share",
        _col("ideal_share"),
    )
    add(
        "two_sources",
        "two sources to one destination (network contention) share by 1/idt (Fig. 12c)",
        "share",
        _col("ideal_share"),
        regulated,
    )
    add(
        "two_sources",
        "without rate control the destination's switch port serves round robin (§2.3)",
        "bandwidth",
        _col("ideal"),
        lambda label: not regulated(label),
    )
    add(
        "oversubscribed",
        "over-subscribed, one source: the NIC shares T by 1/idt (§3.3)",
        "share",
        _col("ideal_share"),
        lambda label: label["case"] == "one source",
    )
    add(
        "oversubscribed",
        "over-subscribed, two sources into one port: shared by 1/idt (§3.3's ratio, §5.4)",
        "share",
        _col("ideal_share"),
        lambda label: label["case"] != "one source",
    )

    def rr(rows: pd.DataFrame) -> float:
        idts = [float(x) for x in str(rows["idts"].iloc[0]).split(":")]
        flow = "ABC".index(str(rows["flow"].iloc[0]))
        return float(round_robin(idts)[flow])

    add(
        "oversubscribed",
        "over-subscribed, two sources into one port: what §2.3 and §3.4 predict (the port's "
        "round robin, max-min fair; admission (c) would refuse the pair)",
        "bandwidth",
        rr,
        lambda label: label["case"] != "one source",
    )
    add(
        "network_contention",
        "a flow crossing two contended switch ports suffers without rate control (Fig. 5b)",
        "bandwidth",
        _col("ideal"),
        lambda label: label["control"] == "unregulated",
    )
    add(
        "network_contention",
        "with rate control and reservations it gets its share (Fig. 6; our own "
        "line-of-switches layout: the document gives no numbers)",
        "bandwidth",
        _col("ideal"),
        lambda label: label["control"] != "unregulated",
    )
    add(
        "single_flow",
        "a single flow gets the peak for every IDT up to T, then T/IDT of it (Fig. 11)",
        "bandwidth",
        _col("ideal"),
    )
    add(
        "send_queues",
        "round robin over send descriptors favours long messages; GM's interleaving is "
        "fair (Fig. 4)",
        "share",
        _col("ideal_share"),
    )
    return out

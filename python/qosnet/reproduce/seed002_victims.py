"""The victim-flow test of InfiniBand congestion control (issue 36): contributors saturate
one destination's link while victim flows share part of their path on the way to
destinations nobody else loads (`configs/seed002/*_victims.toml` name the nodes). Without
congestion control the contributors' packets fill the buffers up to the hot spot (the
tree of congestion) and the victims wait behind them; IBA CC is meant to throttle the
contributors at their sources so the victims get their bandwidth back. Reported per
scheme: the hot spot's throughput (what the contributors deliver), the victims' and the
total, flits per cycle (summed over the group's flows).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from qosnet.reproduce.runner import Experiment, Run

__all__ = ["TOPOLOGIES", "experiment", "throughputs"]

#: (label, configuration, whether it has LIDs: the schemes' overrides differ)
TOPOLOGIES = (
    ("fat tree (4-ary 3-tree)", "fattree_victims.toml", False),
    ("8x8 torus", "torus_victims.toml", True),
    ("Avakas (281 HCAs)", "avakas_victims.toml", True),
)
#: A quick run leaves out the Avakas fabric (its LID paths cost most of a quick run).
QUICK_TOPOLOGIES = TOPOLOGIES[:2]


def experiment(
    cfg: Path,
    time: tuple[str, ...],
    with_lids: dict[str, tuple[str, ...]],
    without: dict[str, tuple[str, ...]],
    quick: bool = False,
) -> Experiment:
    """The test on each topology under each scheme (`with_lids` where the topology has
    LIDs to set, `without` on the fat tree)."""
    return Experiment(
        "victims",
        "The victim-flow test: contributors saturate one link, victims share their path",
        "(Not in the document; the standard test of IB CC on hardware.) IBA CC throttles "
        "the contributors so the victims, bound elsewhere, are not held in the tree of "
        "congestion; DRB's paths may route the victims around it.",
        [
            Run({"topology": label, "scheme": name}, cfg / config, (*time, *o))
            for label, config, lids in (QUICK_TOPOLOGIES if quick else TOPOLOGIES)
            for name, o in (with_lids if lids else without).items()
        ],
    )


def throughputs(flows: pd.DataFrame, summaries: pd.DataFrame) -> pd.DataFrame:
    """Per run (label columns and seed): the contributors' (traffic 0: the hot spot's),
    the victims' (traffic 1 and up) and the total delivered flits per cycle of the
    measurement window."""
    labels = [c for c in ("topology", "scheme", "seed") if c in flows.columns]
    window = summaries.set_index(labels)["measure_cycles"]
    # (the CNPs' flow, traffic outside the sources, has no traffic entry: not counted)
    f = flows[flows["traffic"].astype(float) < 2**32].copy()
    f["group"] = f["traffic"].map(lambda t: "hot_spot" if t == 0 else "victims")
    g = f.groupby([*labels, "group"])["flits_delivered"].sum().unstack("group").fillna(0)
    g = g.div(window.reindex(g.index), axis=0)
    g["total"] = g.get("hot_spot", 0) + g.get("victims", 0)
    return g.reset_index()

"""Issue 36's decomposition of DRB's and IBA CC's losses against no control, one knob at a
time, at a load past every scheme's saturation (the accepted throughput there is the
saturation throughput Fig. 8 and Fig. 9 compare).

Each variant changes one thing from a reference and is scored against the uncontrolled
network, paired by seed (`qosnet.reproduce.scoring`). DRB: with one path (it must equal
no control: only its notifications differ), the VCs its LID paths get (per-run dateline
classes for one LID, the wrap-count classes for four), minimal paths only (slack 0)
against slack 2, opening without closing (a contraction timer longer than the run), the
split over open paths in turn instead of inversely to the notifications, and the four
paths always open, in turn (oblivious multipath: what the path set itself costs). IBA CC:
its switch threshold, marking rate, CCTI timer and CCT steps swept around the
reproduction's setting, and a waiting header counted against every VL it may take
(aggressive) or against none until it holds one. And for both, how a VC is released:
when the tail's credit returns (a wormhole VC holds one packet) or when the tail has
left (an InfiniBand VL is a FIFO a packet follows the one before into). Then DRB as the
reproduction runs it since, its four LIDs sharing the VCs through an escape VC (Duato's
protocol, `routing/lid_paths.rs`), with the same knobs: one path, slack 0, the split in
turn, never closing; and its four paths in turn.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from qosnet.reproduce.runner import Experiment, Run
from qosnet.reproduce.scoring import compare, per_seed

__all__ = ["CASES", "ESCAPE", "LOAD", "ONE_LID", "VARIANTS", "experiment", "table"]

#: Past every scheme's saturation (Fig. 8's and Fig. 9's largest load).
LOAD = 0.6
#: (configuration, pattern): where the issue's table shows the largest losses.
CASES = (
    ("torus8x8.toml", "butterfly"),
    ("torus8x8.toml", "perfect_shuffle"),
    ("mesh8x4.toml", "perfect_shuffle"),
)


def _drb(paths: int = 4, timer: str = "20 us", split: str | None = None) -> str:
    extra = f', split = "{split}"' if split else ""
    return (
        f'routing.multipath={{ paths = {paths}, selection = "drb", '
        f'contraction_timer = "{timer}"{extra} }}'
    )


def _mark(threshold: int = 8, rate: int = 0, waiting: str | None = None) -> str:
    extra = f', waiting = "{waiting}"' if waiting else ""
    return (
        f'router.marking={{ kind = "iba_cc", threshold = {threshold}, '
        f"marking_rate = {rate}{extra} }}"
    )


def _cc(timer: str = "20 us", step: int = 10) -> str:
    return (
        f'endpoint.agent={{ kind = "iba_cc", ccti_increase = 1, ccti_timer = "{timer}", '
        f'cct = {{ kind = "linear", entries = 64, step = {step} }} }}'
    )


#: One LID per port (the schemes that use one path).
ONE_LID = "routing.lmc=0"
#: LID paths sharing the VCs through an escape VC (`lid_vcs = "escape"`).
ESCAPE = 'routing.lid_vcs="escape"'
#: name -> overrides (on the configuration as it is, VCs released at the tail's credit
#: unless a variant says otherwise). "none" is every variant's baseline.
VARIANTS: dict[str, tuple[str, ...]] = {
    "none (4 LIDs configured, path 0)": (),
    "none, one LID (dateline VCs)": (ONE_LID,),
    "none, one LID, escape VC (the reproduction's none)": (ONE_LID, ESCAPE),
    "DRB, one path": (_mark(), _drb(1)),
    "DRB as run before (4 paths, slack 2, marking rate 0)": (_mark(), _drb()),
    "DRB, slack 0": (_mark(), _drb(), "routing.slack=0"),
    "DRB, never closing": (_mark(), _drb(timer="100 ms")),
    "DRB, round-robin split": (_mark(), _drb(split="round_robin")),
    "4 paths in turn (no DRB)": ('routing.multipath={ paths = 4, selection = "by_message" }',),
    # (the layers with the reproduction's marking rate: how much of DRB's old loss against
    # its paths in turn was marking every packet, and how much the VC layers)
    "DRB, layers, marking rate 10": (_mark(rate=10), _drb()),
    # The escape VC (Duato's protocol) instead of a VC class per wrap crossed: the model
    # the reproduction runs DRB with since (`lid_paths.rs`).
    "DRB, escape VC (marking rate 10)": (_mark(rate=10), _drb(), ESCAPE),
    "DRB, one path, escape VC (marking rate 10)": (_mark(rate=10), _drb(1), ESCAPE),
    "DRB, escape VC, slack 0 (marking rate 10)": (
        _mark(rate=10),
        _drb(),
        ESCAPE,
        "routing.slack=0",
    ),
    "DRB, escape VC, round-robin split (marking rate 10)": (
        _mark(rate=10),
        _drb(split="round_robin"),
        ESCAPE,
    ),
    "DRB, escape VC, never closing (marking rate 10)": (
        _mark(rate=10),
        _drb(timer="100 ms"),
        ESCAPE,
    ),
    "4 paths in turn, escape VC": (
        'routing.multipath={ paths = 4, selection = "by_message" }',
        ESCAPE,
    ),
    "IBA CC as run before (threshold 8, rate 0, timer 20 us, step 10)": (_mark(), _cc()),
    "IBA CC, threshold 4": (_mark(threshold=4), _cc()),
    "IBA CC, threshold 15": (_mark(threshold=15), _cc()),
    "IBA CC, marking rate 10": (_mark(rate=10), _cc()),
    "IBA CC, timer 5 us": (_mark(), _cc(timer="5 us")),
    "IBA CC, timer 80 us": (_mark(), _cc(timer="80 us")),
    "IBA CC, CCT step 2": (_mark(), _cc(step=2)),
    "IBA CC, CCT step 40": (_mark(), _cc(step=40)),
    "IBA CC, waiting headers not counted": (_mark(waiting="held_vl"), _cc()),
}
BASELINE = "none (4 LIDs configured, path 0)"
#: The escape-VC rows' baseline: no control with the same VC scheme.
ESCAPE_BASELINE = "none, one LID, escape VC (the reproduction's none)"


def baseline_of(variant: str) -> str:
    """The no-control row a variant is scored against: the same VC scheme (the escape VC
    rows against no control with the escape VC, the others against the layers')."""
    return ESCAPE_BASELINE if "escape VC" in variant else BASELINE


#: VC release (`[router] vc_release`): both, each variant scored against none with the same.
RELEASES = ("tail_credit", "tail_sent")


def experiment(cfg: Path, time: tuple[str, ...], quick: bool) -> Experiment:
    variants = VARIANTS
    if quick:
        keep = (
            BASELINE,
            "DRB, one path",
            "DRB as run before (4 paths, slack 2, marking rate 0)",
            "DRB, escape VC (marking rate 10)",
            "none, one LID, escape VC (the reproduction's none)",
        )
        variants = {k: v for k, v in VARIANTS.items() if k in keep}
    cases = CASES[:1] if quick else CASES
    return Experiment(
        "decompose",
        "Why DRB and IBA CC lost to no control: one knob at a time (issue 36)",
        "(Not a document claim.) DRB with one path must accept what no control accepts; "
        "a multipath scheme that accepts less than its own single path is a defect until "
        "shown otherwise.",
        [
            Run(
                {"case": f"{config.split('.')[0]} {pattern}", "release": rel, "variant": name},
                cfg / config,
                (
                    *time,
                    f"traffic[0].pattern={pattern}",
                    f"traffic[0].load={LOAD}",
                    f'router.vc_release="{rel}"',
                    *o,
                ),
            )
            for config, pattern in cases
            for rel in RELEASES
            for name, o in variants.items()
        ],
    )


def table(summaries: pd.DataFrame) -> pd.DataFrame:
    """Per case, release and variant: accepted flits/node/cycle (mean over seeds) and its
    difference from no control with the same VC scheme (`baseline_of`; mean, 95% interval,
    relative), with the verdict of "differs from none" (holds: higher, not: lower, tie)."""
    rows = []
    for (case, rel), part in summaries.groupby(["case", "release"], sort=False):
        for name in part["variant"].unique():
            base = per_seed(part, "accepted_flits_per_node_cycle", variant=baseline_of(name))
            b = sum(base.values()) / len(base) if base else float("nan")
            v = per_seed(part, "accepted_flits_per_node_cycle", variant=name)
            s = compare(v, base, "higher")
            rows.append(
                {
                    "case": case,
                    "release": rel,
                    "variant": name,
                    "accepted": s.a.mean,
                    "diff": s.diff.mean,
                    "diff_low": s.diff.low,
                    "diff_high": s.diff.high,
                    "relative": s.diff.mean / b if b else float("nan"),
                    "vs_none": "same" if name == baseline_of(name) else s.verdict,
                }
            )
    return pd.DataFrame(rows)


def markdown_lines(t: pd.DataFrame) -> list[str]:
    """The table as FINDINGS shows it: a row per variant, a column per case and release."""
    out = []
    keys = list(dict.fromkeys(zip(t["case"], t["release"], strict=True)))
    head = " | ".join(f"{c}, {r}" for c, r in keys)
    out += [f"| variant | {head} |", "|---|" + "---|" * len(keys)]
    for name in t["variant"].unique():
        cells = []
        for c, r in keys:
            row = t[(t["case"] == c) & (t["release"] == r) & (t["variant"] == name)]
            if not len(row):
                cells.append("")
                continue
            x = row.iloc[0]
            if name == baseline_of(name):
                cells.append(f"{x['accepted']:.3f}")
            else:
                cells.append(
                    f"{x['accepted']:.3f} ({x['relative'] * 100:+.1f}%"
                    f"{'' if x['vs_none'] in ('holds', 'not') else ', tie'})"
                )
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out

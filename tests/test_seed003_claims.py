"""Document 003's Fig. 4a scored phase by phase (`seed003_claims.per_phase_dmp`, issue 40):
P's DMP against the document's 0.02-0.03 band and flat, P below NP per phase, a DMP claim
untestable where the other router misses nothing, and the table beside the document."""

import pandas as pd

from qosnet.reproduce import seed003
from qosnet.reproduce import seed003_claims as claims
from qosnet.reproduce.scoring import HOLDS, NOT, UNTESTABLE


def _runs(dmp: dict[str, list[float]], saturated: tuple[str, ...] = ()):
    """Summaries and phases of three seeds at load 0.61, first deadline at arrival: per
    router its real-time DMP per phase (seed k adds k/1000 so the intervals have width)."""
    rows, phases = [], []
    for router, per_phase in dmp.items():
        for seed in (1, 2, 3):
            label = {"router": router, "load": 0.61, "deadline": "arrival", "seed": seed}
            values = [max(0.0, v + (seed - 2) / 1000) if v else 0.0 for v in per_phase]
            rows.append(
                {**label, "dmp": sum(values) / 5, "dmt_ms": 1.0, "saturated": router in saturated}
            )
            phases += [
                {**label, "phase": i, "class": "real_time", "dmp": v} for i, v in enumerate(values)
            ]
    return pd.DataFrame(rows), pd.DataFrame(phases)


def test_p_in_the_band_and_below_np_in_every_phase_holds():
    s, ph = _runs(
        {"P": [0.025, 0.024, 0.026, 0.025, 0.024], "NP": [0.06, 0.05, 0.06, 0.07, 0.08]},
        saturated=("NP",),
    )
    level, below_np, below_tr = claims.per_phase_dmp(s, ph, {"deadline": "arrival"}, "t")
    assert level[2] == f"{HOLDS} at all 6 phases"
    assert below_np[2] == f"{HOLDS} at all 5 phases"
    # a line says which runs were past saturation
    assert "past saturation: NP (3 of 3 seeds)" in below_np[1]
    # no TR runs: nothing to compare, said as such
    assert "TR" in below_tr[0]


def test_p_above_the_band_is_not_and_both_never_missing_is_untestable():
    s, ph = _runs({"P": [0.15, 0.10, 0.10, 0.09, 0.06], "NP": [0.0] * 5})
    level, below_np, _ = claims.per_phase_dmp(s, ph, {}, "t")
    # (above the band in every phase, and falling by more than its width: not flat)
    assert level[2] == f"{NOT} at all 6 phases"
    # P missing where NP never does is a reversal, not untestable
    assert below_np[2] == f"{NOT} at all 5 phases"
    s, ph = _runs({"P": [0.0] * 5, "NP": [0.0] * 5})
    _, below_np, _ = claims.per_phase_dmp(s, ph, {}, "t")
    assert below_np[2] == f"{UNTESTABLE} at all 5 phases"


def test_the_table_sets_the_documents_words_beside_each_router():
    s, ph = _runs({"P": [0.02] * 5, "NP": [0.05] * 5}, saturated=("NP",))
    table = claims.phase_table(s, ph, "router_kinds")
    p_row = next(line for line in table if "| P |" in line)
    assert "0.02-0.03, almost constant" in p_row and p_row.endswith("| 0 of 3 |")
    np_row = next(line for line in table if "| NP |" in line)
    assert "climbs" in np_row and np_row.endswith("| 3 of 3 |")
    # the readings of the first deadline, the reproduction's own first
    assert seed003.readings(s) == [({"deadline": "arrival"}, ", first deadline at arrival")]
    assert seed003.readings(s.drop(columns="deadline")) == [({}, "")]

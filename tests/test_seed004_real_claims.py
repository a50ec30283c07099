"""seed004-real's claims scored across repetitions (`qosnet.reproduce.seed004_real_claims`):
shares by 1/idt as an equivalence within 2%, reserved rates at >= 95%, the baseline without
rate control scored by the same test."""

from qosnet.reproduce import seed004_real_claims as claims
from qosnet.reproduce.scoring import HOLDS, NOT, ONE_SEED, TIE


def _sharing(errors_by_repeat, backend="agent"):
    rows = []
    for k, (e1, e2) in enumerate(errors_by_repeat):
        for flow, expected, e in (("h0->h1", 2 / 3, e1), ("h0->h2", 1 / 3, e2)):
            rows.append(
                {
                    "scenario": "one_source_1_2",
                    "figure": "Fig. 12a",
                    "backend": backend,
                    "flow": flow,
                    "share": expected * (1 + e),
                    "expected_share": expected,
                    "share_error": e,
                    "repeat": k,
                }
            )
    return rows


def test_shares_hold_only_when_every_flows_interval_is_within_the_bound():
    [(claim, here, v)] = claims.sharing(_sharing([(0.001, -0.002), (-0.001, 0.002), (0, 0)]))
    assert v == HOLDS and "within 2%" in claim and "3 repetitions" in here
    # one flow's interval straddles the bound: a tie, not a pass
    [(_, _, v)] = claims.sharing(_sharing([(0.0, 0.0), (0.0, 0.05), (0.0, -0.01)]))
    assert v == TIE
    # the baseline without rate control: far from 1/idt every time
    [(claim, _, v)] = claims.sharing(_sharing([(-0.26, 0.52), (-0.25, 0.50), (-0.27, 0.53)], "-"))
    assert v == NOT and "baseline" in claim
    [(_, _, v)] = claims.sharing(_sharing([(0.0, 0.0)]))
    assert v == ONE_SEED


def test_a_reserved_rate_holds_at_95_percent_and_rtt_within_10():
    rows = [
        {
            "scenario": "reserved_beside_unreserved",
            "what": "60 Mb/s reserved",
            "backend": "agent",
            "flow": f,
            "reserved_mbps": r,
            "mbps": m,
            "target": "rate" if r else None,
            "share_error": (m - r) / r if r else None,
            "repeat": k,
        }
        for k, (m1, m2) in enumerate([(59.9, 31.0), (59.7, 33.0), (60.0, 32.0)])
        for f, r, m in (("h0->h1", 60.0, m1), ("h0->h2", None, m2))
    ]
    rtts = [
        {"backend": "agent", "difference": d, "repeat": k} for k, d in enumerate([0.01, -0.02, 0])
    ]
    [(claim, here, v), (rclaim, _, rv)] = claims.contended(rows, rtts)
    assert v == HOLDS and ">= 95%" in claim and "unreserved" in here
    assert rv == HOLDS and "rtt" in rclaim
    short = [{**r, "mbps": 48.0, "share_error": -0.2} if r["reserved_mbps"] else r for r in rows]
    [(_, _, v), _] = claims.contended(short, rtts)
    assert v == NOT

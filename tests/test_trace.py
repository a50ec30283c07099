"""`[trace]` from Python: the recordings arrive as DataFrames and round-trip through a run
directory; without `[trace]` there are none."""

import pytest

import qosnet
from qosnet.results import RunResult


def test_trace_tables_come_back_and_round_trip(small, tmp_path):
    r = qosnet.run(
        small,
        overrides=[
            'trace.link_series="2 us"',
            "trace.stalls=true",
            "trace.watch_flows=[0]",
        ],
    )
    assert list(r.link_series.columns) == [
        "start",
        "end",
        "kind",
        "src",
        "src_port",
        "dst",
        "dst_port",
        "flits",
        "utilization",
    ]
    # Every link's flits over the intervals add up to its utilisation over the window.
    per_link = r.link_series.groupby(["kind", "src", "src_port"], sort=False)["flits"].sum()
    window = r.link_series["end"].max() - r.link_series["start"].min()
    util = r.links.set_index(["kind", "src", "src_port"])["utilization"]
    assert (per_link / window).round(9).equals(util.loc[per_link.index].round(9))
    assert {"router", "port", "vc", "vc_alloc", "switch", "output_full", "no_credit"} <= set(
        r.stalls.columns
    )
    assert set(r.trace["event"]) <= {"injected", "arrived", "crossed", "departed", "ejected"}
    assert (r.trace["flow"] == 0).all() and len(r.trace) > 0
    back = RunResult.read(r.write(tmp_path / "run"))
    for name in ("link_series", "stalls", "trace"):
        assert getattr(back, name).equals(getattr(r, name)), name


def test_no_trace_no_tables(small):
    r = qosnet.run(small)
    assert r.link_series is None and r.stalls is None and r.trace is None


def test_a_bad_trace_is_named(small):
    with pytest.raises(qosnet.ConfigError, match="trace.watch_flows"):
        qosnet.run(small, overrides=["trace.watch_flows=[100000]"])

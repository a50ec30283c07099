"""`qosnet crosscheck` (issue 22): the matched cases, the BookSim2 input derived from each,
the one saturation rule applied to both simulators, the bisection, and the command end to
end (qosnet alone; BookSim2 is not shipped, so its side runs against a stand-in program
that prints BookSim2's output format)."""

import math
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.crosscheck import (
    Case,
    Limits,
    Point,
    booksim_point,
    judge_qosnet,
    load_plan,
    qosnet_point,
    search,
    summarise,
)

ROOT = Path(__file__).resolve().parents[1]
VALIDATION = ROOT / "configs" / "validation"


def test_shipped_cases_cover_the_issue_matrix():
    plan = load_plan(VALIDATION)
    names = {c.name for c in plan.cases}
    for base in ("mesh4x4", "mesh8x8"):
        for vcs in (16, 2):
            for flits in (1, 40):
                for pattern in ("uniform", "transpose", "bit_complement"):
                    assert f"{base}-{vcs}vc-{flits}flit-{pattern}" in names
    assert {"torus8x8-16vc-1flit-uniform", "torus8x8-2vc-1flit-uniform"} <= names
    # (a case is picked by a part of its name: "torus8x8-" leaves out torus8x8_valiant's)
    assert len(load_plan(VALIDATION, ["torus"]).cases) == 5
    assert len(load_plan(VALIDATION, ["torus8x8-"]).cases) == 3
    # Valiant on the torus (BookSim2's valiant_torus), adaptive NCA, O1TURN on a flatfly
    assert {
        "torus8x8_valiant-4vc-1flit-tornado",
        "fattree4x3_anca-4vc-1flit-uniform",
        "flatfly8x8_adaptive_xy_yx-8vc-1flit-transpose",
        "mesh8x8-16vc-1flit-badperm_yarc",
    } <= names
    # BookSim2's dragonflynew (k = 2) with its min and ugal routings (the latter against
    # qosnet's Kim et al. ugal and its own algorithm, ugal_router)
    assert {
        "dragonfly_k2-2vc-1flit-uniform",
        "dragonfly_k2_ugal-3vc-1flit-uniform",
        "dragonfly_k2_ugal_router-3vc-1flit-next_group",
    } <= names


def test_booksim_input_sets_the_case_on_the_base():
    case = Case("mesh8x8", 2, 40, "bit_complement", VALIDATION)
    text = case.booksim_input(0.125, 1000)
    lines = {
        ln.split("=")[0].strip(): ln.split("=")[1].strip()
        for ln in text.splitlines()
        if "=" in ln and not ln.startswith("//")
    }
    assert lines["num_vcs"] == "2;"
    assert lines["packet_size"] == "40;"
    assert lines["traffic"] == "bitcomp;"
    assert lines["injection_rate"] == "0.125;"
    assert lines["latency_thres"] == "1000.0;"
    # what the case does not set stays as the base has it
    assert lines["vc_buf_size"] == "8;" and lines["k"] == "8;"


def test_zero_load_window_lengthens_both_sides_measurement():
    case = Case("mesh8x8", 2, 40, "transpose", VALIDATION)
    base = case.booksim_input(0.005, 1000)
    text = case.booksim_input(0.005, 1000, 400000)
    # one warm-up period and one sample of the window (BookSim2 counts the warm-up as a sample)
    for key, value in (("sample_period", "400000"), ("warmup_periods", "1"), ("max_samples", "2")):
        assert f"\n{key} = {value};" in text
        assert f"\n{key} = {value};" not in base or key == "warmup_periods"
    assert case.qosnet_overrides(0.005, 400000)[-1] == "simulation.measure=400000"
    assert not any("simulation" in o for o in case.qosnet_overrides(0.005))
    with pytest.raises(ValueError, match="measure.zero_load_window"):
        Limits(zero_load_window=0).check()


def test_qosnet_side_runs_the_same_case():
    case = Case("mesh4x4", 2, 1, "transpose", VALIDATION)
    short = Limits()
    p = qosnet_point(case, 0.05, short)
    assert not p.saturated and p.accepted == pytest.approx(0.05, rel=0.1)
    # past any mesh's capacity under transpose: judged saturated
    assert qosnet_point(case, 0.95, short).saturated


def test_qosnet_side_is_judged_as_booksim_judges_undelivered_packets():
    """BookSim2 drains its measured packets without a time limit and counts each one still
    out at its age against `latency_thres`; qosnet's run stops at its drain limit. Worked by
    hand: 1,000 measured, accepted as offered, delivered mean 600 cycles."""
    row = {"accepted_flits_per_node_cycle": 0.1, "offered_flits_per_node_cycle": 0.1}
    row["latency_mean"] = 600.0

    def summary(delivered: int, drained: int, stability: float = 500.0) -> dict:
        return {
            "drain_complete": delivered == 1000,
            "messages_measured": 1000,
            "messages_delivered": delivered,
            "cycles": 30000 + drained,
            "warmup_cycles": 10000,
            "measure_cycles": 20000,
            "stability_latency": stability,
        }

    # all delivered: the mean decides
    assert judge_qosnet(0.1, summary(1000, 5000), row, 1000.0) == Point(0.1, 0.1, 600.0, False)
    # 20 out after a 20000-cycle drain: (980 * 600 + 20 * 20000) / 1000 = 988 <= 1000, so
    # only a longer drain can tell (the old rule called it saturated)
    assert judge_qosnet(0.1, summary(980, 20000), row, 1000.0) is None
    # 21 out: (979 * 600 + 21 * 20000) / 1000 = 1007.4 > 1000, saturated whatever comes
    p = judge_qosnet(0.1, summary(979, 20000), row, 1000.0)
    assert p is not None and p.saturated and p.latency == pytest.approx(1007.4)
    # BookSim2's test at the end of its samples or in its drain (`stability_latency`): past
    # the limit
    assert judge_qosnet(0.1, summary(1000, 5000, 1000.5), row, 1000.0).saturated
    # accepted more than 5% short of offered
    short = dict(row, accepted_flits_per_node_cycle=0.094)
    assert judge_qosnet(0.1, summary(1000, 5000), short, 1000.0).saturated


def test_qosnet_side_drains_longer_where_the_bound_cannot_decide():
    """A measured message still out at the configuration's drain limit, too young to put the
    mean past the limit: run again with `drain_retry` cycles of drain, and judged on that."""
    case = Case("mesh8x8_min_adapt", 4, 1, "transpose", VALIDATION)
    # (seed 1 at 0.1414: 20 of about 181,000 measured packets wait out the 20000-cycle drain
    # of the base, at a mean of 442 cycles)
    p = qosnet_point(case, 0.141484, Limits())
    assert not p.saturated and p.latency == pytest.approx(455, rel=0.05)
    assert qosnet_point(case, 0.141484, Limits(drain_retry=20000)).saturated


def test_bisection_brackets_a_known_saturation():
    calls = []

    def measure(load: float, window: int | None) -> Point:
        calls.append((load, window))
        return Point(load, min(load, 0.3), 20.0, load > 0.3)

    s = search(Case("x", 1, 1, "uniform", VALIDATION), Limits(tolerance=0.01), measure, "fake")
    assert s.status == "found"
    assert s.low <= 0.3 < s.high and s.high - s.low <= 0.01 * s.low
    # the zero-load point first, over the base's window unless `zero_load_window` says
    assert s.zero_load_latency == 20.0 and calls[0] == (0.005, None)
    assert all(w is None for _, w in calls[1:])
    longer = search(
        Case("x", 1, 1, "uniform", VALIDATION), Limits(zero_load_window=4e5), measure, "fake"
    )
    assert longer.zero_load_latency == 20.0 and calls[-len(longer.points)] == (0.005, 400000)
    assert s.saturation == pytest.approx(0.3, rel=0.01)

    never = search(
        Case("x", 1, 1, "uniform", VALIDATION), Limits(), lambda x, w: Point(x, x, 5.0, False), "f"
    )
    assert never.status == "not saturated at high" and math.isnan(never.saturation)


FAKE_BOOKSIM = """#!/usr/bin/env python3
import re, sys
text = open(sys.argv[1]).read()
rate = float(re.search(r"injection_rate = ([0-9.e-]+);", text).group(1))
thres = float(re.search(r"latency_thres = ([0-9.e-]+);", text).group(1))
seed = re.search(r"^seed = ([0-9]+);", text, re.MULTILINE)
# (a seed moves the knee a little, as another stream would)
knee = 0.35 + (0.01 * int(seed.group(1)) if seed else 0.0)
cap = 0.4
if rate == 0.9:
    # (its C library's way of printing an average over no packet)
    print("====== Overall Traffic Statistics ======")
    print("Packet latency average = -nan (1 samples)")
    print("Accepted flit rate average = 0 (1 samples)")
    sys.exit(0)
if rate > cap:
    print("Average latency for class 0 exceeded %s cycles. Aborting simulation." % thres)
    print("Simulation unstable, ending ...")
    sys.exit(0)
print("====== Overall Traffic Statistics ======")
print("====== Traffic class 0 ======")
print("Packet latency average = %.4f (1 samples)" % (20 + 10 * rate))
print("Accepted flit rate average = %.6f (1 samples)" % (rate if rate < knee else 0.9 * rate))
"""


@pytest.fixture
def fake_booksim(tmp_path: Path) -> Path:
    path = tmp_path / "booksim"
    path.write_text(FAKE_BOOKSIM)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


def test_booksim_side_is_judged_by_the_same_rule(fake_booksim: Path):
    case = Case("mesh4x4", 16, 1, "uniform", VALIDATION)
    ok = booksim_point(fake_booksim, case, 0.2, Limits())
    assert (
        not ok.saturated and ok.latency == pytest.approx(22.0) and ok.accepted == pytest.approx(0.2)
    )
    # accepted 10% short of offered: saturated although BookSim2 called it stable
    assert booksim_point(fake_booksim, case, 0.38, Limits()).saturated
    # "Simulation unstable" (its latency_thres, set to our limit)
    assert booksim_point(fake_booksim, case, 0.6, Limits()).saturated
    # a latency printed as "-nan" (no packet delivered) is read as nan, saturated
    empty = booksim_point(fake_booksim, case, 0.9, Limits())
    assert empty.saturated and math.isnan(empty.latency)


def test_command_tables_both_sides(fake_booksim: Path, tmp_path: Path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        [
            "crosscheck",
            "--booksim",
            str(fake_booksim),
            "-c",
            "mesh4x4-16vc-1flit-uniform",
            "-o",
            str(out),
            "-j",
            "1",
        ],
    )
    assert result.exit_code == 0, result.output
    import pandas as pd

    table = pd.read_csv(out / "crosscheck.csv")
    row = table.iloc[0]
    assert row["booksim2_status"] == "found"
    assert row["booksim2_saturation"] == pytest.approx(0.35, rel=0.03)
    assert row["booksim2_zero_load_latency"] == pytest.approx(20.05)
    assert row["qosnet_status"] == "found" and 0.5 < row["qosnet_saturation"] < 1.0
    assert row["saturation_difference"] == pytest.approx(
        row["qosnet_saturation"] / row["booksim2_saturation"] - 1
    )
    runs = pd.read_csv(out / "runs.csv")
    assert set(runs["simulator"]) == {"qosnet", "booksim2"}
    assert "mesh4x4-16vc-1flit-uniform" in result.output


def test_seeds_give_each_side_an_interval_and_a_verdict(fake_booksim: Path, tmp_path: Path):
    out = tmp_path / "out"
    args = ["crosscheck", "--booksim", str(fake_booksim), "-c", "mesh4x4-16vc-1flit-uniform"]
    result = CliRunner().invoke(app, [*args, "--seeds", "3", "-o", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    import pandas as pd

    row = pd.read_csv(out / "crosscheck.csv").iloc[0]
    # the stand-in's knee is 0.35 + 0.01 x seed: seeds 1, 2, 3 give 0.36, 0.37, 0.38
    assert row["booksim2_seeds"] == 3 and row["qosnet_seeds"] == 3
    assert row["booksim2_saturation"] == pytest.approx(0.37, rel=0.03)
    assert row["booksim2_saturation_low"] < 0.37 < row["booksim2_saturation_high"]
    low, high = row["saturation_difference_low"], row["saturation_difference_high"]
    assert low < row["saturation_difference"] < high
    # qosnet's 4x4 mesh saturates far above the stand-in's knee: outside 5%, decidedly
    assert low > 0.05 and row["saturation_within_5pct"] == "not"
    runs = pd.read_csv(out / "runs.csv")
    assert sorted(set(runs["seed"])) == [1, 2, 3]
    assert "not" in result.output and "[+" in result.output
    # one seed a side (the default) keeps the table as recorded: no interval columns
    result = CliRunner().invoke(app, [*args, "-o", str(tmp_path / "one"), "-j", "1"])
    assert result.exit_code == 0, result.output
    one = pd.read_csv(tmp_path / "one" / "crosscheck.csv")
    assert "saturation_difference_low" not in one.columns


def test_summary_over_seeds_scores_agreement_within_5_percent():
    from qosnet.crosscheck import Search

    case = Case("mesh4x4", 16, 1, "uniform", VALIDATION)

    def side(sim: str, sats: list[float]) -> list[Search]:
        return [
            Search(case, sim, 20.0, x - 0.001, x + 0.001, "found", seed=k + 1)
            for k, x in enumerate(sats)
        ]

    close = summarise(
        side("qosnet", [0.505, 0.51, 0.515]) + side("booksim2", [0.50, 0.505, 0.51]), Limits()
    )
    row = close.iloc[0]
    assert row["qosnet_saturation"] == pytest.approx(0.51)
    assert row["saturation_difference"] == pytest.approx(0.51 / 0.505 - 1)
    assert row["saturation_within_5pct"] == "holds"
    # zero load equal on every seed: a zero-width interval at 0, within 5%
    assert row["zero_load_latency_within_5pct"] == "holds"
    far = summarise(
        side("qosnet", [0.60, 0.61, 0.62]) + side("booksim2", [0.50, 0.51, 0.50]), Limits()
    )
    assert far.iloc[0]["saturation_within_5pct"] == "not"
    wide = summarise(
        side("qosnet", [0.45, 0.55, 0.60]) + side("booksim2", [0.50, 0.505, 0.51]), Limits()
    )
    assert wide.iloc[0]["saturation_within_5pct"] == "tie"


def test_bad_plan_names_the_field(tmp_path: Path):
    (tmp_path / "cases.toml").write_text('[[group]]\nbase = "nowhere"\n')
    with pytest.raises(ValueError, match=r"group\[0\]\.base: no .*nowhere\.toml"):
        load_plan(tmp_path)
    (tmp_path / "cases.toml").write_text("[measure]\nlow = 0.5\nhigh = 0.2\n")
    with pytest.raises(ValueError, match="measure.low, measure.high"):
        load_plan(tmp_path)
    (tmp_path / "cases.toml").write_text("[measure]\ndrain_retry = 0\n")
    with pytest.raises(ValueError, match="measure.drain_retry: must be >= 1 cycle, got 0"):
        load_plan(tmp_path)
    (tmp_path / "a.toml").write_text("")
    (tmp_path / "booksim2").mkdir()
    (tmp_path / "booksim2" / "a.cfg").write_text("")
    (tmp_path / "cases.toml").write_text('[[group]]\nbase = "a"\nlow = 0.3\nhigh = 0.2\n')
    with pytest.raises(ValueError, match=r"group\[0\]\.low, .*group\[0\]\.high: must satisfy"):
        load_plan(tmp_path)
    (tmp_path / "cases.toml").write_text("[measure]\nlow = 0.5\nhigh = 0.2\n")
    result = CliRunner().invoke(app, ["crosscheck", "--dir", str(tmp_path), "-c", "x"])
    assert result.exit_code == 1 and "measure.low" in result.output


def test_summary_difference_is_relative_to_booksim():
    case = Case("mesh4x4", 16, 1, "uniform", VALIDATION)
    from qosnet.crosscheck import Search

    ours = Search(case, "qosnet", zero_load_latency=19.0, low=0.5, high=0.51, status="found")
    theirs = Search(case, "booksim2", zero_load_latency=20.0, low=0.49, high=0.51, status="found")
    row = summarise([ours, theirs], Limits()).iloc[0]
    assert row["zero_load_latency_difference"] == pytest.approx(-0.05)
    assert row["saturation_difference"] == pytest.approx(0.505 / 0.5 - 1)


def test_without_booksim_the_recorded_columns_stand_beside_qosnet(tmp_path: Path):
    from qosnet.crosscheck import recorded_booksim

    recorded = recorded_booksim(VALIDATION)
    assert recorded is not None and recorded.path == ROOT / "results/crosscheck/crosscheck.csv"
    name = "mesh4x4-16vc-1flit-uniform"
    theirs = recorded.table.set_index("case").loc[name]
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["crosscheck", "-c", name, "-o", str(out), "-j", "1"])
    assert result.exit_code == 0, result.output
    assert "recorded numbers of" in result.output and "not run now" in result.output
    assert "BookSim2 (recorded)" in result.output
    import pandas as pd

    row = pd.read_csv(out / "crosscheck.csv").iloc[0]
    assert row["booksim2_zero_load_latency"] == theirs["booksim2_zero_load_latency"]
    assert row["booksim2_saturation"] == theirs["booksim2_saturation"]
    assert str(row["booksim2_source"]).startswith("recorded: results/crosscheck/crosscheck.csv")
    # the difference is the new qosnet run's from the recorded BookSim2 number
    assert row["zero_load_latency_difference"] == pytest.approx(
        row["qosnet_zero_load_latency"] / theirs["booksim2_zero_load_latency"] - 1
    )
    assert f"{theirs['booksim2_zero_load_latency']:.2f}" in result.output


def test_recorded_columns_only_for_cases_recorded(tmp_path: Path):
    import pandas as pd

    from qosnet.crosscheck import Recorded, Search, recorded_booksim, with_recorded

    recorded = Recorded(
        pd.DataFrame(
            [
                {
                    "case": "mesh4x4-16vc-1flit-uniform",
                    "booksim2_zero_load_latency": 20.0,
                    "booksim2_saturation": 0.5,
                    "booksim2_status": "found",
                    "booksim2_runs": 9,
                }
            ]
        ),
        tmp_path / "crosscheck.csv",
        "abc1234 2026-11-29",
    )
    ours = [
        Search(Case("mesh4x4", 16, 1, "uniform", VALIDATION), "qosnet", 19.0, 0.5, 0.51, "found"),
        Search(Case("mesh4x4", 2, 1, "uniform", VALIDATION), "qosnet", 19.0, 0.4, 0.41, "found"),
    ]
    table = with_recorded(summarise(ours, Limits()), recorded).set_index("case")
    assert table.loc["mesh4x4-16vc-1flit-uniform", "zero_load_latency_difference"] == (
        pytest.approx(-0.05)
    )
    never = table.loc["mesh4x4-2vc-1flit-uniform"]
    assert math.isnan(never["booksim2_saturation"]) and math.isnan(never["saturation_difference"])
    assert "commit abc1234 2026-11-29" in recorded.describe()
    # a --dir outside a repository has no recorded numbers: qosnet alone
    assert recorded_booksim(tmp_path / "configs" / "validation") is None


def test_unknown_case_lists_the_names_and_suggests_one():
    with pytest.raises(ValueError, match="did you mean 'mesh4x4-16vc-1flit-uniform'") as e:
        load_plan(VALIDATION, ["mesh4x4-16vc-1flit-unifrom"])
    assert "valid case names: " in str(e.value) and "torus8x8-2vc-1flit-uniform" in str(e.value)
    # every selector must match: one typo among good ones is not silently dropped
    with pytest.raises(ValueError, match="--case 'torrus'"):
        load_plan(VALIDATION, ["mesh4x4", "torrus"])
    result = CliRunner().invoke(app, ["crosscheck", "-c", "mesh4x4-16vc-1flit-unifrom"])
    assert result.exit_code == 1
    assert "did you mean 'mesh4x4-16vc-1flit-uniform'" in result.output
    assert "dragonfly_k2-2vc-1flit-uniform" in result.output

"""Document 004's experiments on a quick budget: NIC rate control shares bandwidth in the
ratio 1/idt (Table 1, Fig. 12), the parking lot's long flow gets its reservation only with
rate control (Figs. 5-6), round-robin send queues favour long messages (Fig. 4), a single
flow saturates at IDT <= T (Fig. 11); and the report is written."""

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.reproduce import run_experiments
from qosnet.reproduce.runner import Gathered
from qosnet.reproduce.seed004 import (
    PERIOD_CYCLES,
    compare,
    experiments,
    proportional,
    report,
    round_robin,
)

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def quick() -> tuple[list, dict[str, Gathered]]:
    """Every experiment once, quick: about 20 short runs, a few seconds in all."""
    exps = experiments(quick=True, configs=REPO / "configs" / "seed004")
    return exps, run_experiments(exps, jobs=1)


def _table(quick, name: str) -> pd.DataFrame:
    exps, results = quick
    e = next(e for e in exps if e.name == name)
    return compare(name, results[name], list(e.runs[0].label))


def _bandwidth(t: pd.DataFrame, column: str, case: object, flow: str) -> float:
    row = t[(t[column] == case) & (t["flow"] == flow)]
    assert len(row) == 1, (case, flow)
    return float(row["bandwidth"].iloc[0])


def test_proportional_ideal():
    # Table 1's example: IDTs 2 and 3 dispatch 3:2, half and a third of Bpeak
    assert proportional([2, 3]) == pytest.approx((1 / 2, 1 / 3))
    # asking more than the resource has: shared in the ratio 1/idt
    assert proportional([1.5, 1.5]) == pytest.approx((0.5, 0.5))
    # at most one packet per T
    assert proportional([0.25]) == pytest.approx((1.0,))


def test_one_source_shares_follow_inverse_idt(quick):
    t = _table(quick, "one_source")
    assert set(t["idts"]) == {"2:3", "2:6", "2:4:8"}
    assert (t["share_error"].abs() < 0.05).all(), t
    assert (t["bandwidth_error"].abs() < 0.05).all(), t
    # the NIC was told T-multiples: idt_cycles = idt * T
    assert set(t["idt_T"]) == {2.0, 3.0, 4.0, 6.0, 8.0}
    assert PERIOD_CYCLES == 256


def test_two_sources_share_the_destination(quick):
    t = _table(quick, "two_sources")
    assert _bandwidth(t, "idts", "1.5:3", "A") == pytest.approx(2 / 3, rel=0.05)
    assert _bandwidth(t, "idts", "1.5:3", "B") == pytest.approx(1 / 3, rel=0.05)
    # without rate control the switch port is shared round robin
    assert _bandwidth(t, "idts", "unregulated", "A") == pytest.approx(0.5, rel=0.05)
    assert _bandwidth(t, "idts", "unregulated", "B") == pytest.approx(0.5, rel=0.05)


def test_round_robin_is_max_min_fair():
    # flows asking 2/3 and 1/2 of a port: neither fits in half, so half each
    assert round_robin([1.5, 2]) == pytest.approx((0.5, 0.5))
    # asking 0.8 and 0.4: the small one gets its 0.4, the other what is left
    assert round_robin([1.25, 2.5]) == pytest.approx((0.6, 0.4))
    # under-subscribed: each its own demand
    assert round_robin([2, 4]) == pytest.approx((0.5, 0.25))


def test_oversubscribed_one_source_by_idt_two_sources_by_round_robin(quick):
    t = _table(quick, "oversubscribed")
    one = t[t["case"] == "one source"].set_index("flow")
    two = t[t["case"] != "one source"].set_index("flow")
    # IDTs 1.5 and 2 ask 7/6 of the resource: the NIC gives 1/idt, 4:3
    assert one.loc["A", "share"] == pytest.approx(4 / 7, abs=0.03)
    # through one round-robin port the same pair gets half each, not 4:3 (§2.3)
    assert two.loc["A", "bandwidth"] == pytest.approx(0.5, abs=0.03)
    assert two.loc["B", "bandwidth"] == pytest.approx(0.5, abs=0.03)


def test_findings_scored_across_seeds(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "seed004"
    args = ["reproduce", "seed004", "--quick", "--only", "oversubscribed", "-o", str(out)]
    result = CliRunner().invoke(app, [*args, "-j", "1"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    findings = (out / "FINDINGS.md").read_text()
    rows = {
        line.split(" | ")[0].lstrip("| "): line.rstrip(" |").rsplit("| ", 1)[-1]
        for line in findings.splitlines()
        if line.startswith("| over-subscribed")
    }
    assert len(rows) == 3, findings
    assert (
        rows["over-subscribed, two sources into one port: shared by 1/idt (§3.3's ratio, §5.4)"]
        == "not"
    )
    assert sorted(pd.read_csv(out / "oversubscribed_flows.csv")["seed"].unique()) == [1, 2]


def test_parking_lot_long_flow_needs_rate_control(quick):
    t = _table(quick, "network_contention")
    # Fig. 5b: B waits at two round-robin ports, D at one
    assert _bandwidth(t, "control", "unregulated", "B") == pytest.approx(0.25, abs=0.03)
    assert _bandwidth(t, "control", "unregulated", "D") == pytest.approx(0.5, abs=0.03)
    # Fig. 6: C and D held to 400 Mb/s, B gets its 720 Mb/s
    assert _bandwidth(t, "control", "rate control", "B") == pytest.approx(0.45, abs=0.02)
    assert _bandwidth(t, "control", "rate control", "C") == pytest.approx(0.25, abs=0.02)
    assert _bandwidth(t, "control", "rate control", "D") == pytest.approx(0.25, abs=0.02)


def test_send_queues_round_robin_favours_long_messages(quick):
    t = _table(quick, "send_queues")
    assert _bandwidth(t, "queues", "round_robin", "A") == pytest.approx(0.75, abs=0.03)
    assert _bandwidth(t, "queues", "round_robin", "B") == pytest.approx(0.25, abs=0.03)
    assert _bandwidth(t, "queues", "interleaved", "A") == pytest.approx(0.5, abs=0.03)
    assert _bandwidth(t, "queues", "interleaved", "B") == pytest.approx(0.5, abs=0.03)


def test_single_flow_knee_at_t(quick):
    t = _table(quick, "single_flow").set_index("idt")
    for idt, bw in t["bandwidth"].items():
        if idt <= 1:
            assert bw == pytest.approx(1.0, abs=0.02), idt
        else:
            assert bw == pytest.approx(1 / idt, rel=0.03), idt


def test_report_writes_markdown_and_figures(quick, tmp_path):
    exps, results = quick
    path = report(exps, results, tmp_path, quick=True)
    text = path.read_text()
    assert path == tmp_path / "report.md"
    assert "Document 004:" in text and "table_1_cycle_by_cycle" in text
    for e in exps:
        assert f"## {e.title}" in text
        assert f"({e.name}.png)" in text
        assert (tmp_path / f"{e.name}.png").stat().st_size > 1000
        flows = pd.read_csv(tmp_path / f"{e.name}_flows.csv")
        assert list(e.runs[0].label) == list(flows.columns[: len(e.runs[0].label)])


def test_reproduce_cli_runs_one_experiment(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    out = tmp_path / "seed004"
    args = ["reproduce", "seed004", "--quick", "--only", "send_queues", "-j", "1", "-o", str(out)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "send_queues.png" in (out / "report.md").read_text()
    flows = pd.read_csv(out / "send_queues_flows.csv")
    assert set(flows["queues"]) == {"round_robin", "interleaved"}

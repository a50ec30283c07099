"""A plain `qosnet run` says what it means (issue 25): a unit on every summary row, a loud
warning when the run saturated or its drain did not complete, and what it wrote where."""

import re

from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.metrics import unit_of


def invoke(*args: str):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_units_on_every_row_and_what_was_written(small_toml, tmp_path):
    out = tmp_path / "run"
    result = invoke("run", str(small_toml), "-o", str(out))
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    for key in ("offered_flits_per_node_cycle", "latency.mean", "latency_mean_ns", "cycles"):
        row = next(r for r in rows if re.match(rf"│ {re.escape(key)}\s", r))
        assert unit_of(key) in row, row
    assert "flits/node/cycle" in result.output and "│ ns " in result.output
    assert "SATURATED" not in result.output
    assert f"wrote {out}/: " in result.output and "summary.json" in result.output


def test_a_saturated_run_and_an_incomplete_drain_warn_loudly(small_toml):
    result = invoke(
        "run", str(small_toml), "--set", "traffic[0].load=0.95", "--set",
        "simulation.drain_limit=10",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "SATURATED: accepted" in result.output
    assert "DRAIN INCOMPLETE" in result.output


def test_units_of_the_engine_names():
    assert unit_of("latency.p99") == "cycles"
    assert unit_of("latency.count") == "messages"
    assert unit_of("accepted_gbps_per_node") == "Gb/s per node"
    assert unit_of("dmt_ms") == "ms"
    assert unit_of("queueing_mean") == "cycles"
    assert unit_of("saturated") == ""

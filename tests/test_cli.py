"""The `qosnet` command, through typer's CliRunner."""

import json
import re

import pytest
from typer.testing import CliRunner

from qosnet.cli import app

runner = CliRunner()


def invoke(*args: str):
    result = runner.invoke(app, [str(a) for a in args])
    assert "Traceback" not in result.output
    return result


def test_run_prints_a_summary_table(small_toml):
    result = invoke("run", small_toml)
    assert result.exit_code == 0, result.output
    assert "accepted_flits_per_node_cycle" in result.stdout
    assert "latency.p99" in result.stdout


def test_run_writes_the_run_directory(small_toml, tmp_path):
    out = tmp_path / "run"
    result = invoke("run", small_toml, "-o", out, "--record-messages")
    assert result.exit_code == 0, result.output
    names = {p.name for p in out.iterdir()}
    assert names == {
        "config.toml",
        "summary.json",
        "timing.json",
        "classes.parquet",
        "nodes.parquet",
        "links.parquet",
        "flows.parquet",
        "phases.parquet",
        "streams.parquet",
        "messages.parquet",
    }


def test_run_csv(small_toml, tmp_path):
    result = invoke("run", small_toml, "-o", tmp_path, "--csv")
    assert result.exit_code == 0, result.output
    assert {p.suffix for p in tmp_path.iterdir() if p.stem != "small"} == {".toml", ".json", ".csv"}


def test_csv_without_output_is_a_usage_error(small_toml):
    assert invoke("run", small_toml, "--csv").exit_code == 2


def test_run_json_prints_only_the_summary(small_toml, tmp_path):
    result = invoke("run", small_toml, "--json", "-o", tmp_path)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["nodes"] == 16
    assert result.stdout == (tmp_path / "summary.json").read_text()


def test_run_with_overrides(small_toml):
    result = invoke(
        "run", small_toml, "--json", "--set", "router.vcs=2", "-s", "traffic[0].load=0.2"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["offered_flits_per_node_cycle"] == pytest.approx(0.2, rel=0.1)


def test_run_bad_override_names_it(small_toml):
    result = invoke("run", small_toml, "--set", "traffic[4].load=0.2")
    assert result.exit_code == 1
    assert "traffic[4].load=0.2: index 4 is out of range" in result.stderr


def test_run_missing_file(tmp_path):
    result = invoke("run", tmp_path / "nope.toml")
    assert result.exit_code == 1
    assert "nope.toml: No such file or directory" in result.stderr


def test_run_deadlock_is_a_message(deadlocking, tmp_path):
    path = tmp_path / "deadlock.json"
    path.write_text(json.dumps(deadlocking))
    result = invoke("run", path)
    assert result.exit_code == 1
    assert re.search(r"error: deadlock at cycle \d+: no flit moved for \d+ cycles", result.stderr)
    assert re.search(r"stuck: router\[\d+\]\.in\[\d+\]\.vc\[0\]", result.stderr)
    cycle = re.search(r"wait-for cycle: (router\S+)( -> router\S+)+", result.stderr)
    assert cycle, result.stderr
    assert cycle.group(0).endswith(cycle.group(1)), "the cycle closes on its first VC"
    assert "(and " in result.stderr, "a long list of stuck VCs is cut short"


def test_validate_ok(small_toml):
    result = invoke("validate", small_toml)
    assert result.exit_code == 0
    assert result.stdout.strip() == "ok"


def test_validate_bad_config_prints_paths(small_toml):
    text = small_toml.read_text().replace("vcs = 4", "vcs = 99").replace("load = 0.1", "load = 3")
    small_toml.write_text(text)
    result = invoke("validate", small_toml)
    assert result.exit_code == 1
    assert "router.vcs: must be in 1..=32, got 99" in result.stdout
    assert "traffic[0].load: " in result.stdout


def test_validate_with_override(small_toml):
    result = invoke("validate", small_toml, "--set", "topology.kind=ring")
    assert result.exit_code == 1
    assert result.stdout.startswith("topology.kind: unknown variant `ring`")


def test_validate_bad_toml(small_toml):
    small_toml.write_text("[router\n")
    result = invoke("validate", small_toml)
    assert result.exit_code == 1
    assert "is not valid TOML" in result.stdout


def test_bench_prints_numbers(small_toml):
    result = invoke("bench", small_toml, "--cycles", "500")
    assert result.exit_code == 0, result.output
    assert "small" in result.stdout
    assert "cycles/s" in result.stdout


def test_bench_json_from_a_directory(small_toml):
    result = invoke("bench", "--dir", small_toml.parent, "--cycles", "500", "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert row["cycles"] == 500
    assert row["flits_delivered"] > 0
    assert row["flit_hops"] >= row["flits_delivered"]
    assert row["cycles_per_second"] > 0
    assert row["peak_rss_bytes"] > 2**20


def test_bench_reports_config_errors(small_toml):
    small_toml.write_text(small_toml.read_text().replace("vcs = 4", "vcs = 0"))
    result = invoke("bench", small_toml, "--cycles", "10")
    assert result.exit_code == 1
    assert "router.vcs: must be in 1..=32, got 0" in result.stderr


def test_bench_empty_directory(tmp_path):
    result = invoke("bench", "--dir", tmp_path)
    assert result.exit_code == 1
    assert "no *.toml configurations" in result.stderr


@pytest.mark.parametrize("command", [[], ["run"], ["validate"], ["bench"]])
def test_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("qosnet ")

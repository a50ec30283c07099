"""Finished runs kept on disk (`qosnet.reproduce.run_cache`) and `qosnet reproduce --where /
--resume` reading them back: a reproduction cut short resumes without running again."""

import csv
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.reproduce.run_cache import RunCache, run_key

REPO = Path(__file__).resolve().parents[1]
ROUTER8 = REPO / "configs" / "seed003" / "router8.toml"


def test_key_follows_the_configuration_text_and_the_overrides(tmp_path):
    cfg = tmp_path / "a.toml"
    cfg.write_text("[simulation]\nseed = 1\n")
    k = run_key(cfg, ["mix.load=0.5"])
    assert k == run_key(cfg, ["mix.load=0.5"])
    assert k != run_key(cfg, ["mix.load=0.6"])
    assert k != run_key(cfg, ["mix.load=0.5", "simulation.seed=2"])
    cfg.write_text("[simulation]\nseed = 2\n")
    assert k != run_key(cfg, ["mix.load=0.5"])


def test_a_stored_run_reads_back_with_the_types_of_a_fresh_one(tmp_path):
    cache = RunCache(tmp_path / "runs", ("phases",))
    phases = pd.DataFrame({"phase": pd.array([0, 1], dtype="uint64"), "dmp": [0.5, float("nan")]})
    tables = {"phases": phases, "streams": pd.DataFrame({"x": [1]})}
    summary = {"dmp": 0.25, "saturated": False}
    cache.store(ROUTER8, ("a=1",), {"router": "P"}, summary, tables)
    # not read back unless asked (--resume), or named (--where's other runs)
    assert cache.load(ROUTER8, ("a=1",)) is None
    back = RunCache(tmp_path / "runs", ("phases",), reuse=True).load(ROUTER8, ("a=1",))
    assert back is not None
    got_summary, got = back
    assert got_summary == summary and set(got) == {"phases"}
    fresh = cache.keep(tables)["phases"]
    # one set of types: a fresh run beside a read-back one concatenates without floats
    both = pd.concat([fresh, got["phases"]])
    assert both["phase"].dtype.kind == "i" and list(both["phase"]) == [0, 1, 0, 1]
    key = cache.path(ROUTER8, ("a=1",)).stem
    assert RunCache(tmp_path / "runs", ("phases",), reuse_keys=frozenset({key})).load(
        ROUTER8, ("a=1",)
    )
    assert RunCache(tmp_path / "runs", ("phases",), reuse=True).load(ROUTER8, ("a=2",)) is None


def _wall(out: Path) -> list[dict[str, str]]:
    with (out / "wall_time.csv").open() as f:
        return list(csv.DictReader(f))


def test_where_runs_a_part_and_resume_runs_only_the_rest(tmp_path):
    out = tmp_path / "seed003"
    tiny = [
        "--set",
        'simulation.measure="6 ms"',
        "--set",
        'simulation.warmup="1 ms"',
        "--set",
        "topology.ports=4",
        "--set",
        "mix.load=0.3",
    ]
    base = ["reproduce", "seed003", "--quick", "--only", "router_kinds", "--seeds", "1"]
    base += ["-j", "1", "-o", str(out)]
    runner = CliRunner()
    r = runner.invoke(app, [*base, "--where", "deadline=arrival", *tiny], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    first = pd.read_csv(out / "router_kinds_summary.csv")
    assert set(first["deadline"]) == {"arrival"} and len(first) == 6
    # a set stopped part way: its report from the runs finished, running nothing
    (out / "router_kinds_summary.csv").unlink()
    r = runner.invoke(app, [*base, "--finished", *tiny], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    pd.testing.assert_frame_equal(pd.read_csv(out / "router_kinds_summary.csv"), first)
    assert len(_wall(out)) == 1
    r = runner.invoke(app, [*base, "--resume", *tiny], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    both = pd.read_csv(out / "router_kinds_summary.csv")
    assert set(both["deadline"]) == {"arrival", "created"} and len(both) == 12
    # the arrival runs read back, not run again: the same numbers, and counted as such
    again = both[both["deadline"] == "arrival"].reset_index(drop=True)
    pd.testing.assert_series_equal(again["dmp"], first["dmp"])
    assert [(w["ran"], w["reused"]) for w in _wall(out)] == [("6", "0"), ("6", "6")]
    findings = (out / "FINDINGS.md").read_text()
    assert "first deadline at arrival" in findings and "## Wall time" in findings
    assert "need the full length" in findings
    r = runner.invoke(app, [*base, "--where", "nope=1", *tiny])
    assert r.exit_code == 2 and "deadline" in r.output

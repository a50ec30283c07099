"""Issue 5's admission benchmark: the decisions it measures are real (a refusal counts as
one, load is really held), its arguments are checked, and `qosnet bench --admission`
prints and emits it. Plus the pieces it relies on: `CallAdmission.hop_counts` against
`path`, and cluster files naming fabric dumps relative to themselves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.middleware import DOCUMENT_001_TESTBED, Cluster
from qosnet.middleware.bench import JOB_SHAPES, bench_admission

REPO = Path(__file__).resolve().parents[1]
AVAKAS = REPO / "configs" / "clusters" / "avakas.toml"


def test_hop_counts_are_the_path_lengths():
    engine = Cluster.from_toml(DOCUMENT_001_TESTBED).admission()
    hops = engine.hop_counts()
    assert len(hops) == engine.nodes == 16
    for s in range(engine.nodes):
        for d in range(engine.nodes):
            assert hops[s][d] == (0 if s == d else len(engine.path(s, d)))
    # a 4-ary 2-tree: a leaf's own nodes one switch away, the others three
    assert hops[0][1] == 1 and hops[0][15] == 3


def test_cluster_file_reads_its_fabric_relative_to_itself(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nowhere near the fabric dump
    cluster = Cluster.from_file(AVAKAS)
    assert (cluster.nodes, cluster.switches) == (281, 25)
    assert cluster.admission().nodes == 281


def test_bench_on_the_testbed_counts_every_decision():
    cluster = Cluster.from_toml(DOCUMENT_001_TESTBED, name="testbed")
    rows = bench_admission(cluster, reservations=20, decisions=300, jobs=5, seed=3)
    assert [r.decision for r in rows[:2]] == ["flow check", "flow admit+release"]
    assert len(rows) == 2 + len(JOB_SHAPES)
    for r in rows:
        assert (r.cluster, r.nodes, r.reservations) == ("testbed", 16, 20)
        assert 0 < r.p50_us <= r.p99_us <= r.max_us
        assert r.per_second > 0
    assert rows[0].count == rows[1].count == 300
    # check changes nothing, admit+release restores: both decide the same flows alike
    assert rows[0].admitted == rows[1].admitted
    assert all(r.count == 5 for r in rows[2:])


def test_bench_refusals_count_as_decisions():
    # 600 flows of 1-10% fill the testbed's 16 node links: some checks must refuse
    cluster = Cluster.from_toml(DOCUMENT_001_TESTBED)
    rows = bench_admission(cluster, reservations=150, decisions=2000, jobs=2)
    assert rows[0].count == 2000
    assert 0 < rows[0].admitted < 2000


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reservations": -1}, "reservations: must be an integer >= 0, got -1"),
        ({"decisions": 0}, "decisions: must be an integer >= 1, got 0"),
        ({"jobs": 1.5}, "jobs: must be an integer >= 1, got 1.5"),
        ({"reservations": 100_000}, "reservations: the cluster holds only"),
    ],
)
def test_bench_rejects_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        bench_admission(Cluster.from_toml(DOCUMENT_001_TESTBED), **kwargs)


def test_cli_bench_admission_json(tmp_path):
    path = tmp_path / "testbed.toml"
    path.write_text(DOCUMENT_001_TESTBED)
    result = CliRunner().invoke(
        app, ["bench", "--admission", str(path), "--reservations", "10", "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert {r["cluster"] for r in rows} == {"testbed"}
    assert rows[0]["decision"] == "flow check" and rows[0]["count"] == 20_000
    assert {"p50_us", "p99_us", "per_second"} <= rows[0].keys()


def test_cli_bench_admission_refuses_an_impossible_load(tmp_path):
    path = tmp_path / "testbed.toml"
    path.write_text(DOCUMENT_001_TESTBED)
    result = CliRunner().invoke(
        app, ["bench", "--admission", str(path), "--reservations", "100000"]
    )
    assert result.exit_code == 2
    assert "--reservations" in result.output and "holds only" in result.output

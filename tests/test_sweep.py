"""`qosnet sweep` (issue 25): points, the cache and resume, one table whatever runs it (one
process, two, or a real Dask LocalCluster of processes), failures kept apart, and the
saturation search."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import tomli_w
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.pool import Pool, map_unordered
from qosnet.sweep import Sweep, SweepError, find_saturation, parse_axis, read_sweep, run_sweep
from qosnet.sweep.spec import Axis, Saturation

ROOT = Path(__file__).resolve().parents[1]
MESH8 = ROOT / "configs" / "examples" / "mesh8x8_uniform.toml"
SHORT = ("simulation.warmup=300", "simulation.measure=600")
#: The issue's bar: a 20-point load sweep of the 8x8 mesh.
LOADS = "traffic[0].load=0.02..0.4/20"


def mesh_sweep(**kw) -> Sweep:
    return Sweep(base=MESH8, axes=(parse_axis(LOADS),), shared=SHORT, **kw)


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


# -- the sweep's points ---------------------------------------------------------------------


def test_axis_syntax():
    assert parse_axis("traffic[0].load=0.1,0.2").values == (0.1, 0.2)
    assert parse_axis("traffic[0].load=0.1..0.3/3").values == (0.1, 0.2, 0.3)
    assert parse_axis("router.kind=traditional,preemptive").values == (
        "traditional",
        "preemptive",
    )
    assert parse_axis("x=[1, 2],[3]").values == ([1, 2], [3])
    for bad in ("nothing", "a=", "a=1..x/3", "a=0..1/0"):
        with pytest.raises(SweepError):
            parse_axis(bad)


def test_product_and_zip_with_seeds():
    a, b = Axis("a", (1, 2)), Axis("b", ("x", "y"))
    product = Sweep(base=MESH8, axes=(a, b), seeds=(5, 6)).points()
    assert len(product) == 8
    assert product[0].overrides(()) == ("a=1", "b=x", "simulation.seed=5")
    assert product[-1].label() == {"a": 2, "b": "y"} and product[-1].seed == 6
    zipped = Sweep(base=MESH8, axes=(a, b), mode="zip").points()
    assert [p.label() for p in zipped] == [{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]
    with pytest.raises(SweepError, match="zip needs axes of one length"):
        Sweep(base=MESH8, axes=(a, Axis("c", (1,))), mode="zip").points()
    with pytest.raises(SweepError, match="sweep.mode"):
        Sweep(base=MESH8, mode="cross").check()


def test_sweep_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(
        tomli_w.dumps(
            {
                "sweep": {
                    "base": str(MESH8),
                    "seeds": [1, 2],
                    "set": list(SHORT),
                    "axes": {"traffic[0].load": [0.1, 0.2], "router.kind": ["traditional"]},
                    "saturation": {"axis": "traffic[0].load", "tolerance": 0.02},
                }
            }
        )
    )
    s = read_sweep(path)
    assert len(s.points()) == 4 and s.saturation == Saturation("traffic[0].load", tolerance=0.02)
    path.write_text('[sweep]\nbase = "x.toml"\nrepeat = 2\n')
    with pytest.raises(SweepError, match="sweep.repeat: unknown key"):
        read_sweep(path)


# -- the cache, resume and one table --------------------------------------------------------


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The 20-point sweep run in this process (-j 1)."""
    out = tmp_path_factory.mktemp("j1")
    outcome, _ = run_sweep(mesh_sweep(), out, Pool(jobs=1))
    assert (outcome.ran, outcome.cached, outcome.failed) == (20, 0, {})
    return out


def test_the_table_is_tidy(reference):
    table = pd.read_parquet(reference / "sweep.parquet")
    assert len(table) == 20  # one class
    assert list(table.columns[:4]) == ["traffic[0].load", "seed", "point", "run"]
    assert table["traffic[0].load"].is_monotonic_increasing
    assert table["class"].unique().tolist() == ["best_effort"]
    for run in table["run"]:
        assert (reference / run / "summary.json").is_file()
    # offered load follows the axis
    assert (table["offered_flits_per_node_cycle"] - table["traffic[0].load"]).abs().max() < 0.05


def test_two_processes_give_the_same_bytes_and_a_second_run_is_all_cached(reference, tmp_path):
    code, output = cli(
        "sweep", str(MESH8), "-o", str(tmp_path), "--axis", LOADS, *_sets(), "-j", "2"
    )
    assert code == 0, output
    assert "20 points run, 0 from the cache, 0 failed (2 local processes)" in output
    assert (tmp_path / "sweep.parquet").read_bytes() == (reference / "sweep.parquet").read_bytes()
    code, output = cli("sweep", str(MESH8), "-o", str(tmp_path), "--axis", LOADS, *_sets())
    assert code == 0 and "0 points run, 20 from the cache" in output, output
    # a changed point runs again, the rest does not
    code, output = cli(
        "sweep", str(MESH8), "-o", str(tmp_path), "--axis", LOADS, *_sets(), "--seeds", "1,2"
    )
    assert code == 0 and "20 points run, 20 from the cache" in output, (
        output
    )  # seed 1 is the base's


def _sets() -> list[str]:
    return [arg for s in SHORT for arg in ("--set", s)]


def test_an_interrupted_sweep_resumes_with_only_the_missing_points(tmp_path):
    # Points long enough (8,000 measured cycles, a tenth of a second or more each) that the
    # sweep is still running when the third has finished: with the short points of the
    # other tests a quiet machine ran all 20 between two looks.
    longer = ("simulation.warmup=300", "simulation.measure=8000")
    reference = tmp_path / "reference"
    sweep = Sweep(base=MESH8, axes=(parse_axis(LOADS),), shared=longer)
    outcome, _ = run_sweep(sweep, reference, Pool(jobs=1))
    assert (outcome.ran, outcome.cached, outcome.failed) == (20, 0, {})
    tmp_path = tmp_path / "interrupted"
    argv = [sys.executable, "-m", "qosnet", "sweep", str(MESH8), "-o", str(tmp_path)]
    argv += ["--axis", LOADS, *[a for s in longer for a in ("--set", s)], "-j", "1"]
    # (SIGINT as a terminal gives it: a shell's background job, as CI may run this suite,
    # starts with SIGINT ignored, and a Python started so never raises KeyboardInterrupt;
    # two CI rehearsals ran all 20 points through the interruption and exited 0)
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    runs = tmp_path / "runs"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len([p for p in runs.iterdir() if not p.name.startswith(".")]) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    finished = len([p for p in runs.iterdir() if not p.name.startswith(".")])
    assert proc.returncode == 130 and "interrupted" in stderr, stderr
    assert 3 <= finished < 20
    assert not (tmp_path / "sweep.parquet").exists()
    code, output = cli("sweep", "-o", str(tmp_path), "--resume")
    assert code == 0, output
    assert (
        f"{20 - finished} point{'' if 20 - finished == 1 else 's'} run, {finished} from the cache"
        in output
    )
    assert (tmp_path / "sweep.parquet").read_bytes() == (reference / "sweep.parquet").read_bytes()


# -- Dask ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")  # a dependency: present in CI
    # The scheduler serves /metrics over HTTP even without a dashboard, on 8787 unless told
    # otherwise: ":0" takes a free port, so pytest-xdist's workers never collide on it.
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        yield cluster.scheduler_address


def test_a_dask_cluster_gives_the_same_bytes(reference, dask_cluster, tmp_path, monkeypatch):
    # the address from the environment, as a cluster job would give it
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_cluster)
    code, output = cli("sweep", str(MESH8), "-o", str(tmp_path), "--axis", LOADS, *_sets())
    assert code == 0, output
    assert f"20 points run, 0 from the cache, 0 failed (Dask scheduler {dask_cluster})" in output
    assert (tmp_path / "sweep.parquet").read_bytes() == (reference / "sweep.parquet").read_bytes()
    for run in pd.read_parquet(tmp_path / "sweep.parquet")["run"]:
        for table in ("summary.json", "classes.parquet", "links.parquet"):
            assert (tmp_path / run / table).read_bytes() == (reference / run / table).read_bytes()


def _fails_on_odd(x: int) -> int:
    if x % 2:
        raise ValueError(f"odd {x}")
    return x * 10


@pytest.mark.parametrize("where", ["one", "processes", "dask"])
def test_a_failed_item_loses_none_of_the_others(where, request):
    pool = {
        "one": lambda: Pool(jobs=1),
        "processes": lambda: Pool(jobs=2),
        "dask": lambda: Pool(scheduler=request.getfixturevalue("dask_cluster")),
    }[where]()
    got = dict(map_unordered(_fails_on_odd, list(range(6)), pool))
    assert sorted(got) == list(range(6))
    assert [got[i].value for i in (0, 2, 4)] == [0, 20, 40]
    assert [got[i].error for i in (1, 3, 5)] == [f"ValueError: odd {i}" for i in (1, 3, 5)]
    assert "Traceback" in (got[1].detail or "")


def test_a_failed_point_is_reported_and_the_others_kept(tmp_path, deadlocking):
    base = tmp_path / "torus.toml"
    base.write_text(tomli_w.dumps(deadlocking))
    code, output = cli(
        "sweep", str(base), "-o", str(tmp_path / "out"), "--axis", "traffic[0].load=0.02,0.9"
    )
    assert code == 1
    assert "1 point run, 0 from the cache, 1 failed" in output
    assert "traffic[0].load=0.9" in output and "deadlock" in output
    table = pd.read_parquet(tmp_path / "out" / "sweep.parquet")
    assert table["traffic[0].load"].tolist() == [0.02]
    assert (tmp_path / "out" / "failed.json").is_file()


# -- saturation ------------------------------------------------------------------------------


def test_find_saturation_brackets_the_knee(tmp_path):
    sat = Saturation("traffic[0].load", low=0.05, high=0.8, tolerance=0.04)
    s = Sweep(
        base=MESH8, axes=(Axis("router.input_buffer", (4, 16)),), shared=SHORT, saturation=sat
    )
    outcome, path = find_saturation(s, tmp_path, Pool(jobs=2))
    found = pd.read_parquet(path)
    assert found["status"].tolist() == ["found", "found"]
    assert ((found["high"] - found["low"]) <= 0.04).all()
    runs = pd.read_parquet(tmp_path / "bisection.parquet")
    for row in found.itertuples():
        mine = runs[runs["router.input_buffer"] == row[1]]
        at = mine.set_index("traffic[0].load")["run_saturated"]
        assert not at[row.low] and at[row.high]
        # every run below the bracket was unsaturated, every one above saturated
        assert not at[at.index < row.low].any() and at[at.index > row.high].all()
    # deeper buffers do not saturate earlier
    assert found["saturation"].iloc[1] >= found["saturation"].iloc[0] - 0.04
    # searching again runs nothing
    again, _ = find_saturation(s, tmp_path, Pool(jobs=1))
    assert again.ran == 0 and again.cached == outcome.ran + outcome.cached


def test_find_saturation_from_the_command_line(tmp_path):
    code, output = cli(
        "sweep", str(MESH8), "-o", str(tmp_path), *_sets(), "--find-saturation",
        "--bracket", "0.05..0.8/0.1", "-j", "1",
    )  # fmt: skip
    assert code == 0, output
    assert "saturation at" in output and "flits/node/cycle" in output
    assert os.path.exists(tmp_path / "saturation.parquet")


def test_reproduce_runs_on_the_same_pool(dask_cluster, small_toml, deadlocking, tmp_path):
    from qosnet.reproduce import Experiment, Run, run_experiments
    from qosnet.reproduce.runner import RunFailed

    runs = [Run({"load": x}, small_toml, (f"traffic[0].load={x}",)) for x in (0.05, 0.1, 0.15)]
    e = Experiment("loads", "Loads", "a claim", runs)
    local = run_experiments([e], jobs=1)["loads"]
    on_dask = run_experiments([e], pool=Pool(scheduler=dask_cluster))["loads"]
    wall = ["wall_seconds"]
    pd.testing.assert_frame_equal(
        local.summaries.drop(columns=wall), on_dask.summaries.drop(columns=wall)
    )
    for name, frame in local.tables.items():
        pd.testing.assert_frame_equal(frame, on_dask.tables[name])
    assert local.summaries["load"].tolist() == [0.05, 0.1, 0.15]
    # a failed run is named, after every other run was attempted
    bad = tmp_path / "torus.toml"
    bad.write_text(tomli_w.dumps(deadlocking))
    e.runs.append(Run({"load": 0.9}, bad))
    with pytest.raises(
        RunFailed, match=r"1 of 4 runs failed: loads \{'load': 0.9\}: DeadlockError"
    ):
        run_experiments([e], jobs=2)


def test_the_key_covers_the_files_a_configuration_names(tmp_path):
    from qosnet.sweep.run import config_key

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "trace.txt").write_text("100\n200\n")
        (tmp_path / d / "routes").mkdir()
        (tmp_path / d / "routes" / "r1.txt").write_text("0x1 1\n")
    text = '[topology]\nroutes = "routes"\n[[traffic]]\nprocess = { traces = ["trace.txt"] }\n'
    a, b = config_key(text, tmp_path / "a"), config_key(text, tmp_path / "b")
    assert a == b  # the same contents
    (tmp_path / "b" / "trace.txt").write_text("100\n201\n")
    assert config_key(text, tmp_path / "b") != a
    (tmp_path / "b" / "trace.txt").write_text("100\n200\n")
    (tmp_path / "b" / "routes" / "r2.txt").write_text("0x2 1\n")
    assert config_key(text, tmp_path / "b") != a
    assert config_key(text.replace("[topology]", "[topology]\nkind = 'x'"), tmp_path / "a") != a


# -- repetitions aggregated -----------------------------------------------------------------


def test_aggregate_by_hand():
    from qosnet.sweep.aggregate import aggregate

    table = pd.DataFrame(
        {
            "traffic[0].load": [0.1, 0.1, 0.1, 0.2, 0.2, 0.2],
            "seed": [1, 2, 3, 1, 2, 3],
            "class": ["best_effort"] * 6,
            "latency_mean": [1.0, 2.0, 3.0, 10.0, 10.0, 10.0],
            "run_saturated": [False, False, True, False, False, False],
        }
    )
    agg = aggregate(table, ["traffic[0].load", "class"]).set_index("traffic[0].load")
    assert list(agg["seeds"]) == [3, 3]
    low = agg.loc[0.1]
    # mean 2, sd 1, 95% t interval 2 +- 4.3027 / sqrt(3)
    assert (low["latency_mean_mean"], low["latency_mean_sd"]) == (2.0, 1.0)
    assert low["latency_mean_ci_low"] == pytest.approx(2 - 2.4842, abs=1e-3)
    assert low["latency_mean_ci_high"] == pytest.approx(2 + 2.4842, abs=1e-3)
    # a flag aggregates to the fraction of seeds it holds in
    assert low["run_saturated_mean"] == pytest.approx(1 / 3)
    high = agg.loc[0.2]
    assert high["latency_mean_ci_low"] == high["latency_mean_ci_high"] == 10.0
    assert "seed_mean" not in agg.columns and "point_mean" not in agg.columns


def test_a_sweep_with_seeds_writes_the_aggregated_table(tmp_path):
    code, output = cli(
        "sweep", str(MESH8), "-o", str(tmp_path), "--axis", "traffic[0].load=0.1,0.3",
        *_sets(), "--seeds", "1,2,3", "-j", "1",
    )  # fmt: skip
    assert code == 0, output
    tidy = pd.read_parquet(tmp_path / "sweep.parquet")
    agg = pd.read_parquet(tmp_path / "aggregated.parquet")
    assert len(tidy) == 6 and len(agg) == 2
    assert list(agg.columns[:3]) == ["traffic[0].load", "class", "seeds"]
    for _, row in agg.iterrows():
        runs = tidy[tidy["traffic[0].load"] == row["traffic[0].load"]]["latency_mean"]
        assert row["latency_mean_mean"] == pytest.approx(runs.mean())
        assert row["latency_mean_ci_low"] <= runs.mean() <= row["latency_mean_ci_high"]
    # the report draws the intervals
    code, output = cli("report", str(tmp_path))
    assert code == 0, output
    assert "Latency against load over the seeds" in (tmp_path / "report.html").read_text()
    # one seed: no aggregated table (nothing to aggregate), and a stale one is removed
    code, output = cli(
        "sweep", str(MESH8), "-o", str(tmp_path), "--axis", "traffic[0].load=0.1,0.3",
        *_sets(), "--seeds", "1", "-j", "1",
    )  # fmt: skip
    assert code == 0, output
    assert not (tmp_path / "aggregated.parquet").exists()


def test_long_runs_without_a_terminal_print_progress_lines(monkeypatch, capsys):
    # (a log, CI or a background job sees no bar: a line every LOG_EVERY seconds instead)
    from qosnet.cli import sweep as cli_sweep

    monkeypatch.setattr(cli_sweep, "LOG_EVERY", 0.0)
    with cli_sweep.runs_progress("crosscheck", total=3) as bar:
        bar.advance()
        bar.grow(1)
        bar.advance(2)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("crosscheck: 1 of 3 runs done, ")
    assert lines[1].startswith("crosscheck: 3 of 4 runs done, ")
    monkeypatch.setattr(cli_sweep, "LOG_EVERY", 3600.0)
    with cli_sweep.runs_progress("sweep", total=2) as bar:
        bar.advance(2)
    assert capsys.readouterr().err == ""

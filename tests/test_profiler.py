"""The profiler (document 001 §3.1-3.2): application models on the engine, their curves
and knee points in the middleware's format; §4.2's rate-control experiments' verdicts."""

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from qosnet.cli import app
from qosnet.middleware import Pattern, from_json, knee, load_profiled
from qosnet.middleware.units import MB
from qosnet.profiler import engine_config, max_bandwidth, model, profile, reserve, run_job
from qosnet.reproduce.seed001 import rate_control


def test_a_profile_falls_with_bandwidth_and_is_deterministic():
    store = profile(["is"], bandwidths=[2 * MB, 8 * MB, 35 * MB], node_counts=[4], jobs=1)
    (curve,) = store.curves
    assert (curve.application, curve.nodes) == ("is", 4)
    times = [p.time for p in curve.points]
    assert times == sorted(times, reverse=True) and times[0] > 2 * times[-1]
    assert knee(curve).bandwidth == 35 * MB
    again = profile(["is"], bandwidths=[2 * MB, 8 * MB, 35 * MB], node_counts=[4], jobs=1)
    assert again == store


def test_the_largest_bandwidth_divides_a_link_over_its_flows_each_way():
    # §4.2.1: 210/6 = 35 MB/s per flow on 4 all-to-all nodes, 210/14 = 15 on 8, with
    # 105 MB/s each way
    assert max_bandwidth(model("is"), 4, 105 * MB) == pytest.approx(35 * MB)
    assert max_bandwidth(model("is"), 8, 105 * MB) == pytest.approx(15 * MB)
    assert max_bandwidth(model("ray_tracing"), 16, 105 * MB) == pytest.approx(105 / 4 * MB)


def test_models_refuse_bad_parameters_naming_them():
    with pytest.raises(ValueError, match=r"^image_size: must be one of \(512, 1024\), got 300$"):
        model("ray_tracing").application({"image_size": 300, "interleaving": 0}, 4)
    with pytest.raises(ValueError, match=r"^nodes: must be a power of two"):
        model("polygon_rendering").application({"image_size": 512}, 6)
    with pytest.raises(ValueError, match=r"^application: must be one of is, polygon_rendering"):
        model("fft")


def test_a_bad_engine_configuration_names_the_field():
    import qosnet

    app_ = {**model("is").application({}, 4), "reserve": reserve(5 * MB)}
    cfg = engine_config([app_], rate_control=False)
    with pytest.raises(qosnet.ConfigError) as e:
        run_job(cfg)
    assert any(path == "application[0].reserve" for path, _ in e.value.errors)


def test_the_shipped_profiles_are_the_profiler_s():
    store = load_profiled()
    assert {a.name for a in store.applications} == {"ray_tracing", "polygon_rendering", "is"}
    assert store.application("ray_tracing").pattern is Pattern.HYPERCUBE
    assert len(store.curves) == 12 + 9 + 2
    for c in store.curves:
        times = [p.time for p in c.points]
        assert times[0] > times[-1], c.label
        cap = max_bandwidth(model(c.application), c.nodes, 105 * MB)
        assert c.points[-1].bandwidth <= cap * (1 + 1e-9)


def test_profile_command_writes_a_store(tmp_path: Path):
    out = tmp_path / "is.json"
    r = CliRunner().invoke(
        app, ["profile", "is", "--nodes", "4", "--quick", "-j", "1", "-o", str(out)]
    )
    assert r.exit_code == 0, r.output
    store = from_json(out.read_text())
    assert [len(c.points) for c in store.curves] == [4]  # 1, 5, 15, 35 MB/s
    assert "knee 35 MB/s" in r.output
    r = CliRunner().invoke(app, ["profile", "is", "-o", str(tmp_path / "x.txt")])
    assert r.exit_code != 0


def test_rate_control_verdicts_claim_no_more_than_the_numbers():
    t = pd.DataFrame(
        {
            "application": ["is"] * 3,
            "nodes": [4] * 3,
            "mb_s": [2.0, 5.0, 8.0],
            "time_s": [0.3, 0.14, 0.15],
        }
    )
    (falls, five, eight) = rate_control.verdicts("rate_control", t)
    assert falls[2].startswith("not reproduced")
    assert five[2].startswith("close") and eight[2] == "differs"

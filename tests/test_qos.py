"""The QoS router from Python: router kinds, the traffic mix and its phases, video streams
and their deadline metrics, and `qosnet reproduce` end to end on a tiny budget."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

import qosnet
from qosnet.cli import app
from qosnet.reproduce import seed003

REPO = Path(__file__).resolve().parents[1]

MIX = """\
[simulation]
seed = 3
warmup = "1 ms"
measure = "60 ms"
drain_limit = "40 ms"

[topology]
kind = "star"
ports = 4

[router]
kind = "{kind}"
vcs = 8

[endpoint]
queues = "per_class"
concurrent_packets = 8

[mix]
load = 0.6
phases = [
  {{ duration = "30 ms", real_time = 20, best_effort = 80 }},
  {{ duration = "31 ms", real_time = 80, best_effort = 20 }},
]

[[traffic]]
class = "real_time"
process = {{ kind = "video", mean_rate = "6 Mb/s" }}

[[traffic]]
class = "best_effort"

[[traffic]]
class = "control"
process = {{ kind = "periodic", period = "1 ms" }}
message_flits = 20
packet_flits = 20
"""


@pytest.mark.parametrize("kind", ["traditional", "non_preemptive", "preemptive"])
def test_mix_phases_and_video_tables(kind):
    r = qosnet.run(MIX.format(kind=kind))
    assert r.summary["frames"] > 50
    assert 0.0 <= r.summary["dmp"] <= 1.0
    # two phases x three classes, each with load and latency split
    assert set(r.phases["phase"]) == {0, 1}
    assert {"dmp", "dmt_ms", "inter_frame_mean_ms", "queueing_mean", "network_mean"} <= set(
        r.phases.columns
    )
    rt = r.phases[r.phases["class"] == "real_time"].set_index("phase")
    # the real-time share grows from 20% to 80% of the load
    assert rt.loc[1, "offered_flits_per_node_cycle"] > 3 * rt.loc[0, "offered_flits_per_node_cycle"]
    assert r.streams["frames"].sum() == r.summary["frames"]
    assert (r.streams["vtick"] > 0).all()
    assert len(r.flows) >= len(r.streams)


def test_bad_qos_config_names_the_field():
    with pytest.raises(qosnet.ConfigError) as e:
        qosnet.run(MIX.format(kind="mediaworm"))
    assert "router.kind" in str(e.value)
    with pytest.raises(qosnet.ConfigError) as e:
        qosnet.run(
            MIX.format(kind="preemptive").replace('mean_rate = "6 Mb/s"', "traces = ['nope.st']")
        )
    assert "traffic[0].process.traces[0]" in str(e.value)


def test_reproduce_seed003_quick_writes_report(tmp_path):
    out = tmp_path / "seed003"
    result = CliRunner().invoke(
        app,
        [
            "reproduce",
            "seed003",
            "--quick",
            # (one seed: both readings of the first deadline double the runs; scoring
            # across seeds is tested in test_scoring)
            "--seeds",
            "1",
            "--only",
            "router_kinds",
            "-j",
            "1",
            "-o",
            str(out),
            "--set",
            'simulation.measure="12 ms"',
            "--set",
            'simulation.warmup="1 ms"',
            "--set",
            "topology.ports=4",
            "--set",
            "mix.load=0.3",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "Document 003:" in report and "router_kinds_dmp.png" in report
    assert (out / "router_kinds_dmp.png").stat().st_size > 1000
    import pandas as pd

    phases = pd.read_csv(out / "router_kinds_phases.csv")
    assert set(phases["router"]) == {"TR", "NP", "P"}
    # runs keep their labels; --set applies after each run's own overrides
    # loads relative to the preemptive router's measured saturation (the quick run: the
    # lowest and the highest)
    assert set(phases["load"]) == set(seed003.loads(quick=True))
    p = seed003.SATURATION["P"]
    assert seed003.loads(quick=True) == [round(f * p, 2) for f in (0.67, 0.86)]
    assert seed003.loads() == [0.61, 0.69, 0.78]


def test_stream_rate_comparison_configurations_are_valid():
    """`stream_rates`: the traces in bytes at one rate each, at rates in a common ratio, and
    at their own rates, all valid on the router study's configuration."""
    router8 = REPO / "configs" / "seed003" / "router8.toml"
    for scale in seed003.STREAM_RATES:
        process = f"traffic[0].process={seed003.video_process(scale)}"
        assert qosnet.validate(router8, [process]) == []


def test_reproduce_rejects_unknown_names(tmp_path):
    runner = CliRunner()
    r = runner.invoke(app, ["reproduce", "seed999"])
    assert r.exit_code == 2 and "seed003" in r.output
    r = runner.invoke(app, ["reproduce", "seed003", "--only", "nope", "-o", str(tmp_path)])
    assert r.exit_code == 2 and "router_kinds" in r.output

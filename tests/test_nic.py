"""The NIC models from Python: the traditional and QoS-aware NICs of document 003 §3.3 under
the integrated traffic mix, the NIC columns of the result tables, reservations and their
errors, and `qosnet reproduce seed003-nic` end to end on a tiny budget."""

from pathlib import Path

import pandas as pd
from test_qos import MIX
from typer.testing import CliRunner

import qosnet
from qosnet.cli import app
from qosnet.reproduce.seed003_nic import QOS_NIC, TRADITIONAL_NIC


def _mix(tmp_path: Path, kind: str = "traditional") -> Path:
    path = tmp_path / "mix.toml"
    path.write_text(MIX.format(kind=kind))
    return path


def test_qos_nic_serves_control_and_real_time_ahead_of_best_effort(tmp_path):
    # Document 003 §5.3: with the traditional NIC, control and video wait behind best
    # effort in the one doorbell FIFO and the FCFS link; the QoS NIC's prioritized doorbells
    # and VirtualClock take them first. Same router (TR), same traffic, same seed.
    cfg = _mix(tmp_path)
    load = ("mix.load=0.8",)
    trad = qosnet.run(cfg, [*load, *TRADITIONAL_NIC]).classes.set_index("class")
    qos = qosnet.run(cfg, [*load, *QOS_NIC]).classes.set_index("class")
    assert qos.loc["control", "latency_mean"] < trad.loc["control", "latency_mean"] / 5
    assert qos.loc["real_time", "latency_mean"] < trad.loc["real_time", "latency_mean"]


def test_nic_columns_in_the_tables(tmp_path):
    r = qosnet.run(_mix(tmp_path), list(QOS_NIC))
    nodes = r.nodes
    for col in ("send_cqes", "recv_cqes", "dma_packets", "dma_busy_fraction"):
        assert col in nodes.columns
    # every message sent is a send CQE at its source and a receive CQE at its destination
    assert nodes["send_cqes"].sum() > 0
    assert 0 < nodes["dma_busy_fraction"].max() < 1
    assert {"dst", "idt_cycles", "send_cqes"} <= set(r.flows.columns)


RESERVED = """\
[simulation]
warmup = 5000
measure = 40000
drain_limit = 0

[topology]
kind = "star"
ports = 4

[endpoint]
model = "hca"
queues = "{queues}"

[[traffic]]
sources = [0]
load = 0.9
reserve = "{rate}"
pattern = {{ kind = "fixed", destination = 1 }}
"""


def test_reserved_flow_gets_its_rate_and_bad_reservations_are_refused(tmp_path):
    cfg = tmp_path / "r.toml"
    cfg.write_text(RESERVED.format(queues="rate_control", rate="400 Mb/s"))
    r = qosnet.run(cfg)
    flow = r.flows[r.flows["traffic"] == 0].iloc[0]
    # 400 Mb/s of a 1.6 Gb/s link: a quarter of a flit per cycle
    assert abs(flow["bandwidth_flits_per_cycle"] - 0.25) < 0.01
    runner = CliRunner()
    cfg.write_text(RESERVED.format(queues="fifo", rate="400 Mb/s"))
    out = runner.invoke(app, ["validate", str(cfg)])
    assert out.exit_code != 0 and "traffic[0].reserve" in out.output
    assert "rate_control" in out.output
    # more than the source node can send: call admission refuses it, naming the criterion
    cfg.write_text(RESERVED.format(queues="rate_control", rate="2 Gb/s"))
    out = runner.invoke(app, ["validate", str(cfg)])
    assert out.exit_code != 0 and "traffic[0]" in out.output and "source" in out.output


def test_reproduce_seed003_nic_quick_writes_report(tmp_path):
    out = tmp_path / "nic"
    result = CliRunner().invoke(
        app,
        [
            "reproduce",
            "seed003-nic",
            "--quick",
            # (one seed: both readings of the first deadline double the runs; scoring
            # across seeds is tested in test_scoring)
            "--seeds",
            "1",
            "--only",
            "nic_combinations",
            "-j",
            "1",
            "-o",
            str(out),
            "--set",
            'simulation.measure="6 ms"',
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
    assert "nic_combinations_dmp.png" in report
    phases = pd.read_csv(out / "nic_combinations_phases.csv")
    assert set(phases["nic"]) == {"traditional", "QoS"}
    assert set(phases["router"]) == {"TR", "NP", "P"}

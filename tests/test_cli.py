"""The `qosnet` command, through typer's CliRunner."""

import json
import re
import sys
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

import qosnet
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
    first, memory, cost = result.stdout.strip().splitlines()
    assert first == "ok"
    assert re.fullmatch(r"memory: about [\d.]+ [kMGT]?B \(limit .+\)", memory), memory
    # SMALL: 1000 + 4000 cycles; 16 nodes at load 0.1 offer 1.6 flits per cycle
    assert cost.startswith("cost: 5,000 cycles (the drain at most"), cost
    assert "1.6 flits/cycle offered" in cost and "on this machine" in cost, cost


def test_a_run_past_its_time_limit_keeps_its_partial_results(small_toml, tmp_path):
    """`simulation.time_limit`: the run stops with a clear error, exit 1, and what it
    measured so far is written, marked as stopped."""
    out = tmp_path / "run"
    result = invoke(
        "run",
        small_toml,
        "-o",
        str(out),
        "--json",
        "--set",
        "simulation.measure=100000000",
        "--set",
        'simulation.time_limit="1 s"',
    )
    assert result.exit_code == 1, result.stdout
    assert "past simulation.time_limit (1 s)" in result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped"] == "time_limit"
    assert summary["messages_delivered"] > 0
    bad = invoke("validate", small_toml, "--set", "simulation.time_limit=100")
    assert bad.exit_code == 1 and "simulation.time_limit: is wall-clock time" in bad.stdout


def test_validate_refuses_a_run_over_the_memory_limit(small_toml):
    # issue 21: output_buffer = 65533 on an 8x8 mesh asked for 5.7 GB after validating
    result = invoke(
        "validate",
        small_toml,
        "--set",
        "topology.k=8",
        "--set",
        "router.vcs=16",
        "--set",
        "router.output_buffer=65533",
        "--set",
        "simulation.memory_limit=4 GB",
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("router.output_buffer: the run needs about ")
    assert "more than the limit of 4.00 GB (simulation.memory_limit)" in result.stdout


def test_validate_a_reserved_flow_from_a_missing_node(tmp_path):
    # issue 21: this panicked in the engine (index out of bounds)
    config = Path(__file__).parents[1] / "configs" / "seed004" / "two_flows.toml"
    result = invoke("validate", config, "--set", "traffic[0].sources=[8]")
    assert result.exit_code == 1
    assert result.stdout.strip() == "traffic[0].sources: node 8 does not exist (nodes are 0..7)"


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


def test_validate_names_a_repeated_key(small_toml):
    small_toml.write_text(small_toml.read_text().replace("vcs = 4", "vcs = 4\nvcs = 8"))
    result = invoke("validate", small_toml)
    assert result.exit_code == 1
    assert result.stdout.startswith("router.vcs: duplicate key: it is given twice (line 13")


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


# BookSim2's output on the 4x4 mesh (cut): per-sample lines, then the overall statistics.
BOOKSIM_OUTPUT = """\
Accepted flit rate average= 0.297697
Time taken is 300160 cycles
====== Overall Traffic Statistics ======
====== Traffic class 0 ======
Injected flit rate average = 0.301648 (1 samples)
Accepted flit rate average = 0.3 (1 samples)
\tminimum = 0.282933 (1 samples)
Total run time 6.04655
"""


def fake_booksim(tmp_path, output: str):
    """An executable that prints `output` and exits 255, as BookSim2's `main` returning -1."""
    path = tmp_path / "booksim"
    path.write_text(
        f"#!{sys.executable}\nimport sys\nsys.stdout.write({output!r})\nsys.exit(255)\n"
    )
    path.chmod(0o755)
    return path


@pytest.fixture
def with_booksim_input(small_toml):
    (small_toml.parent / "booksim2").mkdir()
    (small_toml.parent / "booksim2" / "small.cfg").write_text("topology = mesh;\nk = 4;\nn = 2;\n")
    return small_toml


def test_bench_beside_booksim_reads_its_speed(with_booksim_input, tmp_path):
    booksim = fake_booksim(tmp_path, BOOKSIM_OUTPUT)
    result = invoke("bench", with_booksim_input, "--cycles", "500", "--booksim", booksim, "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    rival = row["booksim"]
    assert rival["cycles"] == 300160 and rival["input"].endswith("booksim2/small.cfg")
    assert rival["flits_per_cycle"] == pytest.approx(0.3 * 16)  # the overall rate, 16 nodes
    assert rival["flits_per_second"] == pytest.approx(
        rival["flits_per_cycle"] * rival["cycles"] / rival["wall_seconds"]
    )
    assert row["times_booksim"] == pytest.approx(
        row["cycles_per_second"] / rival["cycles_per_second"]
    )
    table = invoke("bench", with_booksim_input, "--cycles", "500", "--booksim", booksim)
    assert table.exit_code == 0 and "× BookSim2" in table.stdout


def test_bench_rounds_beside_booksim(with_booksim_input, tmp_path):
    booksim = fake_booksim(tmp_path, BOOKSIM_OUTPUT)
    args = ("bench", with_booksim_input, "--cycles", "300", "--booksim", booksim)
    result = invoke(*args, "--rounds", "3", "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert len(row["rounds"]) == len(row["booksim_rounds"]) == 3
    multiples = [
        q["cycles_per_second"] / b["cycles_per_second"]
        for q, b in zip(row["rounds"], row["booksim_rounds"], strict=True)
    ]
    assert row["times_booksim_rounds"] == pytest.approx(multiples)
    assert row["times_booksim"] == pytest.approx(sorted(multiples)[1])
    speeds = sorted(r["cycles_per_second"] for r in row["rounds"])
    assert row["cycles_per_second"] == speeds[1], "the row is the run of median speed"
    table = invoke(*args, "--rounds", "2")
    assert table.exit_code == 0, table.output
    assert "median of 2 rounds" in table.stdout
    assert re.search(r"\d\.\d× \(\d+\.\d-\d+\.\d\)", table.stdout), table.stdout
    refused = invoke(*args, "--rounds", "0")
    assert refused.exit_code == 2
    assert "--rounds" in refused.output


def test_comparison_takes_medians_per_round():
    from qosnet.bench import BenchResult, BooksimResult, Comparison

    def ours(cycles):  # one second each: cycles/s = cycles
        return BenchResult("c.toml", cycles, True, 0.0, 1.0, cycles, cycles, cycles, 2**20)

    def theirs(cycles):
        return BooksimResult("c.cfg", cycles, 1.0, 1.0)

    c = Comparison((ours(10), ours(30), ours(20)), (theirs(1), theirs(2), theirs(4)))
    assert c.run.cycles == 20 and c.rival.cycles == 2
    assert c.multiples == [10.0, 15.0, 5.0] and c.multiple == 10.0
    # of an even count, the slower of the middle two runs; the multiples' mean of the two
    even = Comparison((ours(40), ours(10)), (theirs(2), theirs(1)))
    assert even.run.cycles == 10 and even.rival.cycles == 1 and even.multiple == 15.0
    alone = Comparison((ours(10),), None)
    assert alone.rival is None and alone.multiple is None and "booksim" not in alone.to_dict()
    without_input = Comparison((ours(10),), ())
    assert without_input.to_dict()["booksim"] is None
    assert without_input.to_dict()["times_booksim"] is None


def test_bench_overrides_and_what_booksim_allows(with_booksim_input, tmp_path):
    result = invoke(
        "bench",
        with_booksim_input,
        "--set",
        "simulation.measure=1500",
        "-s",
        "simulation.warmup=0",
        "--json",
    )
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert 1500 <= row["cycles"] < 4000, "the run is the overridden one (then its drain)"
    booksim = fake_booksim(tmp_path, BOOKSIM_OUTPUT)
    result = invoke(
        "bench", with_booksim_input, "--booksim", booksim, "--set", "traffic[0].load=0.5"
    )
    assert result.exit_code == 2
    assert "only simulation.* may be overridden" in re.sub(r"[\s│]+", " ", result.output)
    result = invoke("bench", with_booksim_input, "--set", "router.vcs=0", "--cycles", "10")
    assert result.exit_code == 1
    assert "router.vcs: must be in 1..=32, got 0" in result.stderr


def test_bench_beside_booksim_without_an_input_compares_nothing(small_toml, tmp_path):
    booksim = fake_booksim(tmp_path, BOOKSIM_OUTPUT)
    result = invoke("bench", small_toml, "--cycles", "500", "--booksim", booksim, "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    assert row["booksim"] is None and row["times_booksim"] is None


def test_bench_beside_something_else_is_an_error(with_booksim_input, tmp_path):
    result = invoke("bench", with_booksim_input, "--booksim", fake_booksim(tmp_path, "hello\n"))
    assert result.exit_code == 1
    assert "no 'Time taken is N cycles'" in result.stderr and "small.cfg" in result.stderr
    not_a_program = tmp_path / "notes.txt"
    not_a_program.write_text("")
    result = invoke("bench", with_booksim_input, "--booksim", not_a_program)
    assert result.exit_code == 2
    assert "is not an executable file" in re.sub(r"[\s│]+", " ", result.output)  # rich wraps


def test_a_booksim_that_hangs_is_stopped(with_booksim_input, tmp_path):
    from qosnet.bench import booksim_one

    path = tmp_path / "booksim"
    path.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    path.chmod(0o755)
    cfg = with_booksim_input.parent / "booksim2" / "small.cfg"
    with pytest.raises(qosnet.QosnetError, match=r"still running on small.cfg after 0.5 s"):
        booksim_one(path, cfg, timeout=0.5)


def test_shipped_booksim_inputs_model_the_same_networks():
    """configs/bench/booksim2/NAME.cfg is NAME.toml's network and load in BookSim2's terms."""
    bench_dir = Path(__file__).resolve().parents[1] / "configs" / "bench"
    inputs = sorted((bench_dir / "booksim2").glob("*.cfg"))
    assert [p.stem for p in inputs] == [
        "dragonfly1056",
        "mesh32x32_1flit",
        "mesh4x4_40flit",
        "mesh8x8_1flit",
        "mesh8x8_40flit",
    ]
    for cfg in inputs[1:]:
        ours = tomllib.loads((bench_dir / f"{cfg.stem}.toml").read_text())
        theirs = dict(re.findall(r"^(\w+) = ([^;]+);", cfg.read_text(), re.MULTILINE))
        [traffic] = ours["traffic"]
        assert theirs["topology"] == ours["topology"]["kind"] == "mesh"
        assert (int(theirs["k"]), int(theirs["n"])) == (
            ours["topology"]["k"],
            ours["topology"]["n"],
        )
        assert int(theirs["num_vcs"]) == ours["router"]["vcs"]
        assert int(theirs["vc_buf_size"]) == ours["router"]["input_buffer"]
        assert int(theirs["packet_size"]) == traffic["packet_flits"] == traffic["message_flits"]
        assert theirs["injection_rate_uses_flits"] == "1"
        assert float(theirs["injection_rate"]) == traffic["load"]
        assert theirs["injection_process"] == traffic.get("process", "bernoulli") == "bernoulli"
        assert theirs["traffic"] == traffic["pattern"]["kind"] == "uniform"
        assert (theirs["routing_function"], theirs["router"]) == ("dim_order", "iq")


def test_shipped_dragonfly_booksim_input_reads_as_its_configuration():
    """The dragonfly's BookSim2 input, read by `qosnet run`'s reader, is the network, router
    and load of dragonfly1056.toml (what the reader does not set, e.g. the window, aside)."""
    from qosnet import booksim_cfg

    bench_dir = Path(__file__).resolve().parents[1] / "configs" / "bench"
    ours = tomllib.loads((bench_dir / "dragonfly1056.toml").read_text())
    cfg = bench_dir / "booksim2" / "dragonfly1056.cfg"
    theirs = booksim_cfg.convert(cfg.read_text(), str(cfg)).config
    assert theirs["topology"] == ours["topology"] and theirs["routing"] == ours["routing"]
    assert booksim_cfg.nodes(ours["topology"]) == 1056
    assert theirs["router"] == ours["router"]
    assert theirs["endpoint"] == ours["endpoint"]
    [traffic] = ours["traffic"]
    assert theirs["traffic"] == [traffic]


def test_booksim_speed_counts_a_dragonflys_nodes(tmp_path):
    from qosnet.bench import booksim_one

    cfg = tmp_path / "df.cfg"
    cfg.write_text("topology = dragonflynew;\nk = 2;\nn = 1;\n")
    rival = booksim_one(fake_booksim(tmp_path, BOOKSIM_OUTPUT), cfg)
    # 9 groups of 4 routers with 2 nodes each: the overall rate times 72 nodes
    assert rival.flits_per_cycle == pytest.approx(0.3 * 72)
    cfg.write_text("topology = fly;\nk = 2;\nn = 1;\n")
    with pytest.raises(qosnet.QosnetError, match="only mesh, torus and dragonflynew"):
        booksim_one(fake_booksim(tmp_path, BOOKSIM_OUTPUT), cfg)


@pytest.mark.parametrize("command", [[], ["run"], ["validate"], ["bench"]])
def test_help(command):
    result = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage" in result.stdout


def test_version():
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.startswith("qosnet ")


def test_token_revoke_of_an_unknown_token_is_one_error(tmp_path):
    result = invoke("token", "revoke", "99", "--db", tmp_path / "qosnet.db")
    assert result.exit_code == 1
    assert result.stderr == "error: token 99 does not exist\n"

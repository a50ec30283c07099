"""The Python API: run, RunResult, load_config and overrides."""

import filecmp
import json
from pathlib import Path

import pandas as pd
import pytest

import qosnet
from qosnet import _core
from qosnet.config import load_config, parse_override


def test_run_returns_frames_with_expected_columns(small):
    r = qosnet.run(small)
    assert isinstance(r, qosnet.RunResult)
    for frame in (r.classes, r.nodes, r.links):
        assert isinstance(frame, pd.DataFrame)
    assert {"class", "offered_flits_per_node_cycle", "accepted_flits_per_node_cycle"} <= set(
        r.classes.columns
    )
    assert {"latency_mean", "latency_p99", "messages_delivered"} <= set(r.classes.columns)
    assert {"node", "offered_flits_per_cycle", "accepted_flits_per_cycle"} <= set(r.nodes.columns)
    assert {"kind", "src", "dst", "utilization"} <= set(r.links.columns)
    assert len(r.nodes) == 16
    assert r.messages is None
    assert r.summary["nodes"] == 16
    assert "[topology]" in r.config_toml
    assert r.wall_seconds > 0


def test_record_messages(small):
    r = qosnet.run(small, record_messages=True)
    assert r.messages is not None
    assert {"src", "dst", "class", "flits", "created", "delivered", "latency"} <= set(
        r.messages.columns
    )
    assert len(r.messages) == r.summary["messages_measured"]
    assert (r.messages["latency"] == r.messages["queueing"] + r.messages["network"]).all()


def test_empty_message_table_keeps_its_schema(small, tmp_path):
    # A window too short for any message: the table is empty but still typed.
    small["simulation"]["measure"] = 1
    small["traffic"][0]["load"] = 0.0001
    r = qosnet.run(small, record_messages=True)
    assert len(r.messages) == 0
    assert str(r.messages["class"].dtype) in ("object", "str", "string")
    assert r.messages["created"].dtype == "uint64"
    r.write(tmp_path / "run")
    full = qosnet.run(small | {"simulation": {"measure": 4000}}, record_messages=True)
    full.write(tmp_path / "full")
    import pyarrow.parquet as pq

    empty_schema = pq.read_schema(tmp_path / "run" / "messages.parquet")
    full_schema = pq.read_schema(tmp_path / "full" / "messages.parquet")
    assert empty_schema.types == full_schema.types


def test_accepted_matches_offered_below_saturation(small):
    small["simulation"]["measure"] = 20000
    s = qosnet.run(small).summary
    assert not s["saturated"]
    offered, accepted = s["offered_flits_per_node_cycle"], s["accepted_flits_per_node_cycle"]
    assert offered == pytest.approx(0.1, rel=0.05)
    assert accepted == pytest.approx(offered, rel=0.05)


def test_progress_reports_cycles_up_to_the_window(small):
    calls = []
    r = qosnet.run(small, progress=lambda now, target: calls.append((now, target)))
    assert calls, "progress was never called"
    nows = [c[0] for c in calls]
    assert nows == sorted(nows)
    assert {c[1] for c in calls} == {5000}
    assert nows[-1] == r.summary["cycles"] >= 5000


def test_chunked_run_matches_one_engine_call(small):
    sim = _core.Simulation(json.dumps(small), "json")
    sim.run()
    assert qosnet.run(small).summary == json.loads(sim.result()["summary"])


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_threads_write_the_same_files_as_one(small_toml, tmp_path, fmt):
    """`simulation.threads` (the routers in shards side by side) changes no byte of a run
    directory's tables or summary; its timing and the resolved configuration differ."""
    one = qosnet.run(small_toml, record_messages=True).write(tmp_path / "one", fmt=fmt)
    three = qosnet.run(small_toml, ["simulation.threads=3"], record_messages=True).write(
        tmp_path / "three", fmt=fmt
    )
    assert "threads = 3" in (three / "config.toml").read_text()
    same = [n for n in _run_dir_files(one) if n not in ("timing.json", "config.toml")]
    assert "summary.json" in same and f"messages.{fmt}" in same
    _, mismatch, errors = filecmp.cmpfiles(one, three, same, shallow=False)
    assert not mismatch and not errors


def _run_dir_files(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_two_runs_write_identical_files(small_toml, tmp_path, fmt):
    a = qosnet.run(small_toml, record_messages=True).write(tmp_path / "a", fmt=fmt)
    b = qosnet.run(small_toml, record_messages=True).write(tmp_path / "b", fmt=fmt)
    names = _run_dir_files(a)
    ext = fmt
    expected = {"config.toml", "summary.json", "timing.json"} | {
        f"{t}.{ext}"
        for t in ("classes", "nodes", "links", "flows", "phases", "streams", "messages")
    }
    assert set(names) == expected
    assert names == _run_dir_files(b)
    for name in names:
        if name != "timing.json":
            assert filecmp.cmp(a / name, b / name, shallow=False), name
    summary = json.loads((a / "summary.json").read_text())
    assert "wall_seconds" not in json.dumps(summary)
    assert json.loads((a / "timing.json").read_text())["wall_seconds"] > 0


def test_write_replaces_an_earlier_run(small, tmp_path):
    qosnet.run(small, record_messages=True).write(tmp_path)
    r = qosnet.run(small)
    r.write(tmp_path, fmt="csv")
    assert not list(tmp_path.glob("*.parquet"))
    assert not (tmp_path / "messages.csv").exists()
    back = qosnet.RunResult.read(tmp_path)
    assert back.summary == r.summary
    assert back.messages is None
    pd.testing.assert_frame_equal(back.nodes, r.nodes, check_dtype=False)


def test_resolved_config_reproduces_the_run(small, tmp_path):
    r = qosnet.run(small)
    r.write(tmp_path)
    assert qosnet.run(tmp_path / "config.toml").summary == r.summary


def test_load_config_from_file_text_and_dict(small_toml, small):
    from_file = load_config(small_toml)
    assert from_file.data == small
    assert from_file.base_dir == small_toml.parent.resolve()
    assert load_config(small_toml.read_text()).data == small
    assert load_config(small).data == small
    assert load_config(small, ["router.vcs=8"]).data["router"]["vcs"] == 8
    assert small["router"]["vcs"] == 4, "load_config must not change its input"


@pytest.mark.parametrize(
    ("override", "keys", "value"),
    [
        ("router.vcs=8", ["router", "vcs"], 8),
        ("traffic[0].load = 0.5", ["traffic", 0, "load"], 0.5),
        ("topology.kind=torus", ["topology", "kind"], "torus"),
        ("physical.link_bandwidth=1.6 Gb/s", ["physical", "link_bandwidth"], "1.6 Gb/s"),
        ('router.vcs="8"', ["router", "vcs"], "8"),
        ("simulation.record_messages=true", ["simulation", "record_messages"], True),
        ("traffic[0].pattern={kind='hot_spot', fraction=0.2, nodes=[0]}", None, None),
        ("traffic[0].sources=[0, 1]", ["traffic", 0, "sources"], [0, 1]),
    ],
)
def test_parse_override(override, keys, value):
    got_keys, got_value = parse_override(override)
    if keys is None:
        assert got_value == {"kind": "hot_spot", "fraction": 0.2, "nodes": [0]}
    else:
        assert (got_keys, got_value) == (keys, value)


def test_overrides_reach_the_engine(small):
    r = qosnet.run(small, ["router.vcs=8", "traffic[0].load=0.2", "simulation.seed=3"])
    assert "vcs = 8" in r.config_toml
    assert "seed = 3" in r.config_toml
    assert r.summary["offered_flits_per_node_cycle"] == pytest.approx(0.2, rel=0.1)


def test_override_changes_topology_kind(small):
    r = qosnet.run(small, ["topology.kind=torus", "simulation.measure=500"])
    assert 'kind = "torus"' in r.config_toml


@pytest.mark.parametrize(
    ("override", "words"),
    [
        ("router.vcs", "expected path=value"),
        ("traffic[3].load=0.5", "index 3 is out of range: traffic has 1 entry"),
        ("router.vcs.deep=1", "router.vcs is not a table"),
        ("traffic.load=0.5", "traffic is not a table"),
        ("router[0]=1", "router is not a list"),
        ("nothing[0].x=1", "nothing does not exist"),
        ("router..vcs=1", "bad path"),
        ("=1", "bad path"),
    ],
)
def test_bad_override_names_itself(small, override, words):
    with pytest.raises(qosnet.OverrideError) as info:
        qosnet.run(small, [override])
    assert isinstance(info.value, qosnet.ConfigError)
    assert info.value.errors[0][0] == override
    assert words in info.value.errors[0][1]
    assert override in str(info.value)


def test_engine_errors_keep_engine_paths(small):
    with pytest.raises(qosnet.ConfigError) as info:
        qosnet.run(small, ["router.vcs=99"])
    assert info.value.errors == [("router.vcs", "must be in 1..=32, got 99")]
    with pytest.raises(qosnet.ConfigError) as info:
        qosnet.run(small, ["router.vcs=many"])
    [(path, message)] = info.value.errors
    assert path == "router.vcs"
    assert "line 1 column" not in message, "positions in the generated JSON mean nothing"


def test_deadlock_names_the_stuck_vcs(deadlocking):
    with pytest.raises(qosnet.DeadlockError) as info:
        qosnet.run(deadlocking)
    assert isinstance(info.value, qosnet.SimulationError)
    assert info.value.stuck
    assert all(v.startswith("router[") for v in info.value.stuck)
    # the cyclic dependency, through occupied VCs
    assert len(info.value.waits_for) >= 2
    assert set(info.value.waits_for) <= set(info.value.stuck)
    assert "wait-for cycle: " + " -> ".join(info.value.waits_for) in str(info.value)
    assert [f"router[{r}].in[{p}].vc[{v}]" for r, p, v in info.value.waits_for_vcs] == (
        info.value.waits_for
    )
    assert len(info.value.stuck_vcs) == len(info.value.stuck)


def test_validate_lists_every_problem(small):
    errors = qosnet.validate(small, ["router.vcs=0", "traffic[0].load=2"])
    assert [p for p, _ in errors] == ["router.vcs", "traffic[0].load"]
    assert qosnet.validate(small) == []


def test_non_finite_numbers_are_named(small):
    errors = qosnet.validate(small, ["traffic[0].load=nan"])
    assert errors == [("traffic[0].load", "must be a finite number (JSON has no NaN or inf)")]


def test_bad_toml_is_a_config_error(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text("[topology\nkind = 'mesh'\n")
    with pytest.raises(qosnet.ConfigError, match="bad.toml is not valid TOML"):
        load_config(path)


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_config(tmp_path / "missing.toml")


def test_config_error_is_both_a_qosnet_error_and_a_value_error(small):
    small["router"]["vcs"] = 0
    with pytest.raises(qosnet.QosnetError) as info:
        qosnet.run(small)
    assert isinstance(info.value, ValueError)
    assert ("router.vcs", "must be in 1..=32, got 0") in info.value.errors


# ---- issue 21: the API's quirks, panics and memory ----


def test_a_bare_string_is_one_override(small):
    assert qosnet.validate(small, "router.vcs=0") == [("router.vcs", "must be in 1..=32, got 0")]
    r = qosnet.run(small, "simulation.measure=2000")
    assert r.summary["cycles"] >= 3000


def test_overrides_must_be_strings(small):
    with pytest.raises(TypeError, match="each override must be a path=value string, got int"):
        qosnet.validate(small, [3])
    with pytest.raises(TypeError, match="expected path=value strings, got bytes"):
        load_config(small, b"router.vcs=4")


@pytest.mark.parametrize("value", ["yes", 1, 0.0, [True]])
def test_record_messages_must_be_a_bool(small, value):
    with pytest.raises(TypeError, match="record_messages: must be True, False or None"):
        qosnet.run(small, record_messages=value)


def test_an_error_does_not_echo_a_huge_value(small):
    small["router"]["vcs"] = "x" * 10_000_000
    [(path, message)] = qosnet.validate(small)
    assert path == "router.vcs"
    assert message.endswith("…(10000002 chars)")
    assert len(message) < 300
    with pytest.raises(qosnet.OverrideError) as info:
        load_config(small, ["y" * 100_000])
    assert len(str(info.value)) < 400


def test_a_panic_is_an_internal_error_not_a_base_exception():
    with pytest.raises(qosnet.InternalError, match=r"internal error \(a bug in qosnet.*: boom"):
        _core._panic_for_tests("boom")
    assert issubclass(qosnet.InternalError, qosnet.QosnetError)
    assert issubclass(qosnet.InternalError, Exception)


def test_the_reserved_flow_that_panicked_is_a_config_error():
    config = Path(__file__).parents[1] / "configs" / "seed004" / "two_flows.toml"
    errors = qosnet.validate(config, ["traffic[0].sources=[8]"])
    assert errors == [("traffic[0].sources", "node 8 does not exist (nodes are 0..7)")]
    with pytest.raises(qosnet.ConfigError):
        qosnet.run(config, ["traffic[0].sources=[8]"])


def test_errors_name_the_field_in_the_users_terms(small):
    errors = qosnet.validate(
        small,
        [
            "topology.k=-4",
            "simulation=[3, 0, 200]",
            'router.crossbar_scheduler={ kind = "fair_queueing", weights = [1] }',
            'traffic[0].process={ kind = "poisson", period = 100 }',
        ],
    )
    assert errors == [
        (
            "simulation",
            "must be a table with named keys, got a list of 3 values "
            "(values by position are not accepted)",
        ),
        ("topology.k", "must be a whole number >= 1, got -4"),
        (
            "router.crossbar_scheduler.weights",
            'unknown field `weights`: kind "fair_queueing" takes no parameters',
        ),
        ("traffic[0].process.period", 'unknown field `period`: kind "poisson" takes no parameters'),
    ]


def test_a_repeated_key_is_named(tmp_path):
    text = '[topology]\nkind = "mesh"\nk = 4\nn = 2\n[[traffic]]\nload = 0.1\nload = 0.2\n'
    with pytest.raises(qosnet.ConfigError) as info:
        load_config(text)
    assert info.value.errors == [
        ("traffic[0].load", "duplicate key: it is given twice (line 7, column 1)")
    ]
    path = tmp_path / "dup.json"
    path.write_text('{"topology": {"kind": "mesh", "k": 4, "k": 5, "n": 2}}')
    with pytest.raises(qosnet.ConfigError, match="k: duplicate key"):
        load_config(path)


@pytest.mark.parametrize(
    "text",
    [
        "x = " + "[" * 600 + "]" * 600,
        "x = " + "{a = " * 1100 + "1" + "}" * 1100,
        "x = " + "1" * 100_000,
    ],
    ids=["arrays 600 deep", "inline tables 1100 deep", "100k-digit integer"],
)
def test_deep_or_huge_input_is_a_config_error(tmp_path, small, text):
    """tomllib and json recurse: deep input is refused before they see it (it was a
    RecursionError traceback)."""
    with pytest.raises(qosnet.ConfigError) as info:
        load_config(text)
    ((path, message),) = info.value.errors
    assert path == "<root>" and ("levels deep" in message or "digits" in message)
    assert qosnet.validate(text)[0][0] == "<root>"
    deep: dict = {}
    node = deep
    for _ in range(2000):
        node["a"] = {}
        node = node["a"]
    assert "levels deep" in qosnet.validate(deep)[0][1]
    value = text.removeprefix("x = ")
    ((where, why),) = qosnet.validate(small, f"traffic[0].load={value}")
    assert where.startswith("traffic[0].load=") and ("levels deep" in why or "digits" in why)
    f = tmp_path / "deep.json"
    f.write_text('{"a":' * 5000 + "1" + "}" * 5000)
    with pytest.raises(qosnet.ConfigError, match="levels deep"):
        load_config(f)


def test_estimate_memory(small):
    e = qosnet.estimate_memory(small)
    assert isinstance(e, qosnet.MemoryEstimate)
    assert e.total == sum(p.bytes for p in e.parts)
    names = [p.name for p in e.parts]
    assert names[:3] == ["router input buffers", "router output buffers", "VC records"]
    bigger = qosnet.estimate_memory(small, "router.output_buffer=400")
    assert bigger.parts[1].bytes > 50 * e.parts[1].bytes
    limited = qosnet.estimate_memory(small, "simulation.memory_limit=4 GB")
    assert (limited.limit, limited.limit_source) == (4_000_000_000, "simulation.memory_limit")
    assert "limit 4.00 GB: simulation.memory_limit" in str(limited)


def test_validate_refuses_a_run_over_the_memory_limit(small, monkeypatch):
    monkeypatch.setenv("QOSNET_MEMORY_LIMIT", "1 MB")
    [(path, message)] = qosnet.validate(small)
    assert path == "topology"
    assert "more than the limit of 1.00 MB (QOSNET_MEMORY_LIMIT)" in message
    with pytest.raises(qosnet.ConfigError):
        qosnet.run(small)
    # the configuration's own limit comes first
    assert qosnet.validate(small, "simulation.memory_limit=unlimited") == []

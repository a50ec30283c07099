"""Property test: small random networks keep every engine invariant and run deterministically.

Each example runs a few thousand cycles in chunks of 200, checking the engine's invariants
and the flit counters after every chunk, then runs again in one call and must agree
exactly (same seed, same result, whatever the chunking).
"""

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from qosnet import _core


def _kn(kind: str, k_max: int) -> st.SearchStrategy[dict[str, Any]]:
    return st.builds(
        lambda k, n: {"kind": kind, "k": k, "n": n}, st.integers(2, k_max), st.integers(1, 2)
    )


topologies = st.one_of(
    st.builds(lambda p: {"kind": "star", "ports": p}, st.integers(2, 8)),
    _kn("mesh", 4),
    _kn("torus", 4),
    _kn("fat_tree", 3),
)


# Runs take milliseconds, but a slow CI machine should not fail the health check.
SLOW_OK = [HealthCheck.too_slow]


@st.composite
def configs(draw: st.DrawFn) -> dict[str, Any]:
    topology = draw(topologies)
    min_vcs = 2 if topology["kind"] == "torus" else 1  # dateline routing needs two classes
    message_flits = draw(st.integers(1, 12))
    traffic = {
        "process": draw(st.sampled_from(["poisson", "bernoulli"])),
        "load": draw(st.floats(0.02, 1.0)),
        "message_flits": message_flits,
        "packet_flits": draw(st.integers(1, message_flits)),
    }
    if draw(st.booleans()):
        traffic["pattern"] = {"kind": "hot_spot", "fraction": 0.3, "nodes": [0]}
    return {
        "simulation": {
            "seed": draw(st.integers(0, 2**32)),
            "warmup": 300,
            "measure": 1500,
            "drain_limit": 1500,
            "watchdog": 1000,
        },
        "topology": topology,
        "router": {
            "vcs": draw(st.integers(min_vcs, 4)),
            "input_buffer": draw(st.integers(1, 4)),
            "output_buffer": draw(st.integers(1, 4)),
            "vc_selection": draw(st.sampled_from(["lowest_free", "round_robin"])),
        },
        "traffic": [traffic],
    }


@settings(max_examples=30, deadline=None, database=None, suppress_health_check=SLOW_OK)
@given(configs())
def test_invariants_hold_and_runs_repeat(config: dict[str, Any]) -> None:
    text = json.dumps(config)
    assert _core.validate(text, "json", None) == []

    sim = _core.Simulation(text, "json")
    previous = (0, 0, 0)
    while not sim.advance(200):
        sim.check_invariants()
        injected, ejected, hops = counts = sim.flit_counts
        assert all(now >= before for now, before in zip(counts, previous, strict=True)), (
            counts,
            previous,
        )
        assert injected >= ejected
        assert hops >= ejected, "every delivered flit left at least one router"
        previous = counts
    sim.check_invariants()
    summary = json.loads(sim.result()["summary"])
    totals = (summary["flits_injected"], summary["flits_ejected"], summary["flit_hops"])
    assert totals == sim.flit_counts
    assert summary["cycles"] == sim.now
    assert summary["messages_delivered"] <= summary["messages_measured"]
    if not summary["saturated"]:
        assert summary["messages_delivered"] == summary["messages_measured"]

    again = _core.Simulation(text, "json")
    again.run()
    assert again.flit_counts == sim.flit_counts
    assert json.loads(again.result()["summary"]) == summary

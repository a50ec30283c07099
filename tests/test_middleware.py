"""The QoS middleware of document 001: the knee-point rule, validation, JSON/CSV round
trips, communication patterns, and the QoS translator on the worked example of §3.3-3.4.

Bandwidths are bytes/s; `MB` is document 001's MB/s (10^6 bytes/s).
"""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from qosnet.middleware import (
    MB,
    Alternative,
    Application,
    Curve,
    InvalidData,
    Pattern,
    Point,
    ProfileStore,
    Refusal,
    RefusalReason,
    Request,
    candidates,
    from_csv,
    from_json,
    knee,
    load_examples,
    parse,
    to_csv,
    to_json,
    translate,
)

EXAMPLES = load_examples()


def curve(times: list[float], bandwidths: list[float] | None = None, **params: Any) -> Curve:
    """A curve of application `app` on 4 nodes; bandwidths in MB/s (10, 20, ... by default)."""
    bandwidths = bandwidths or [10.0 * (i + 1) for i in range(len(times))]
    points = [Point(bandwidth=b * MB, time=t) for b, t in zip(bandwidths, times, strict=True)]
    return Curve(application="app", parameters=params, nodes=4, points=tuple(points))


def rt(image_size: int, interleaving: int, nodes: int) -> Curve:
    """One of the example ray-tracing curves."""
    (found,) = EXAMPLES.curves_for(
        "ray_tracing", {"image_size": image_size, "interleaving": interleaving}, nodes
    )
    return found


def time_at(c: Curve, mb: float) -> float:
    (t,) = [p.time for p in c.points if p.bandwidth == mb * MB]
    return t


def least_meeting(c: Curve, t2: float) -> float | None:
    """The least profiled bandwidth (MB/s) whose time is at most t2."""
    return next((p.bandwidth / MB for p in c.points if p.time <= t2), None)


class FakeAllocator:
    """Grants up to `caps[n]` bytes/s per flow on n nodes (0 for an n not listed)."""

    def __init__(self, caps: dict[int, float] | None = None, default: float = 0.0) -> None:
        self.caps = caps or {}
        self.default = default
        self.calls: list[tuple[int, Pattern, float]] = []

    def grantable(self, nodes: int, pattern: Pattern, wanted: float) -> float:
        self.calls.append((nodes, pattern, wanted))
        return min(wanted, self.caps.get(nodes, self.default))


UNLIMITED = math.inf


# --- the knee-point rule (document 001 §3.3) -------------------------------------------


def test_knee_is_the_least_bandwidth_within_5_percent_of_the_time_at_the_largest() -> None:
    c = curve([2.0, 1.5, 1.2, 1.06, 1.04, 1.0])
    assert knee(c) == c.points[4]  # 1.04 <= 1.05; 1.06 is not
    assert knee(c).bandwidth == 50 * MB


def test_knee_bound_is_included() -> None:
    c = curve([4.0, 3.0, 2.5, 2.0])
    assert knee(c, tolerance=0.5) == c.points[1]  # 3.0 == (1 + 0.5) * 2.0 exactly


def test_knee_moves_with_the_tolerance() -> None:
    c = curve([2.0, 1.5, 1.2, 1.06, 1.04, 1.0])
    assert knee(c, tolerance=0.0) == c.points[-1]
    assert knee(c, tolerance=0.1) == c.points[3]
    assert knee(c, tolerance=0.2) == c.points[2]
    assert knee(c, tolerance=1.0) == c.points[0]


def test_knee_of_a_flat_curve_is_its_least_bandwidth() -> None:
    c = curve([1.0, 1.0, 1.0])
    assert knee(c) == c.points[0]
    assert knee(c, tolerance=0.0) == c.points[0]


def test_knee_of_a_single_point_is_that_point() -> None:
    c = curve([3.0])
    assert knee(c) == c.points[0]


def test_knee_takes_the_rule_literally_on_a_noisy_curve() -> None:
    # A low-bandwidth point as fast as the last one is the knee, whatever lies between.
    c = curve([1.02, 3.0, 2.0, 1.0])
    assert knee(c) == c.points[0]


@pytest.mark.parametrize("tolerance", [-0.01, math.nan, math.inf])
def test_knee_rejects_a_bad_tolerance(tolerance: float) -> None:
    with pytest.raises(InvalidData, match=r"^tolerance: must be a finite number >= 0, got"):
        knee(curve([1.0]), tolerance)


# --- validation names the field and the value ------------------------------------------


def example_data() -> dict[str, Any]:
    return json.loads(to_json(EXAMPLES))


def test_a_negative_time_is_named_by_its_path() -> None:
    data = example_data()
    data["curves"][3]["points"][2]["time"] = -1.0
    with pytest.raises(InvalidData) as caught:
        parse(ProfileStore, data)
    assert str(caught.value) == "curves[3].points[2].time: must be > 0, got -1.0"
    (issue,) = caught.value.issues
    assert (issue.path, issue.value) == ("curves[3].points[2].time", -1.0)


def test_nan_zero_and_text_are_rejected_with_their_paths() -> None:
    data = example_data()
    data["curves"][0]["points"][1]["bandwidth"] = math.nan
    data["curves"][1]["points"][0]["bandwidth"] = 0
    data["curves"][2]["points"][0]["time"] = "fast"
    data["curves"][2]["nodes"] = 4.5
    with pytest.raises(InvalidData) as caught:
        parse(ProfileStore, data)
    assert [str(i) for i in caught.value.issues] == [
        "curves[0].points[1].bandwidth: must be a finite number, got nan",
        "curves[1].points[0].bandwidth: must be > 0, got 0",
        "curves[2].nodes: must be an integer, got 4.5",
        "curves[2].points[0].time: must be a number, got 'fast'",
    ]


def test_bandwidths_must_increase_along_a_curve() -> None:
    data = example_data()
    points = data["curves"][5]["points"]
    points[2]["bandwidth"], points[3]["bandwidth"] = points[3]["bandwidth"], points[2]["bandwidth"]
    with pytest.raises(InvalidData) as caught:
        parse(ProfileStore, data)
    assert str(caught.value) == (
        "curves[5].points[3].bandwidth: must be > points[2].bandwidth (4000000.0), got 3000000.0"
    )


def test_a_curve_needs_points() -> None:
    data = example_data()
    data["curves"][0]["points"] = []
    with pytest.raises(InvalidData, match=r"^curves\[0\]\.points: must hold at least one point"):
        parse(ProfileStore, data)


def test_curves_must_fit_their_application() -> None:
    data = example_data()
    data["curves"][0]["parameters"]["image_size"] = 2048
    del data["curves"][1]["parameters"]["interleaving"]
    data["curves"][2]["parameters"]["colour"] = "red"
    data["curves"][3]["nodes"] = 6
    data["curves"][4]["application"] = "ray_trace"
    data["curves"][6] = data["curves"][7]
    with pytest.raises(InvalidData) as caught:
        parse(ProfileStore, data)
    assert [str(i) for i in caught.value.issues] == [
        "curves[0].parameters.image_size: must be one of [512, 1024], got 2048",
        "curves[1].parameters: lacks 'interleaving', a parameter of ray_tracing",
        "curves[2].parameters: ray_tracing has no parameter 'colour', got 'colour'",
        "curves[3].nodes: must be a power of two for the hypercube pattern, got 6",
        "curves[4].application: is not a known application (ray_tracing, polygon_rendering), "
        "got 'ray_trace'",
        "curves[7]: repeats curves[6], got 'ray_tracing image_size=1024 interleaving=0 nodes=8'",
    ]


def test_applications_are_validated() -> None:
    with pytest.raises(InvalidData) as caught:
        parse(
            ProfileStore,
            {
                "applications": [
                    {
                        "name": "a",
                        "parameters": {"time": [1], "x": [1, 1.0, "1"]},
                        "pattern": "ring",
                    },
                    {"name": "a", "parameters": {"y": []}, "pattern": "star"},
                ]
            },
        )
    assert [str(i) for i in caught.value.issues] == [
        "applications[0].parameters: names must not be one of application, nodes, bandwidth, "
        "time, got 'time'",
        "applications[0].parameters.x[1]: repeats a value, got 1.0",
        "applications[0].parameters.x[2]: repeats a value, got '1'",
        "applications[1].pattern: must be one of 'ring', 'hypercube' or 'all_to_all', got 'star'",
    ]


def test_unknown_fields_and_missing_ones_are_named() -> None:
    with pytest.raises(InvalidData) as caught:
        parse(ProfileStore, {"curves": [{"application": "a", "points": [], "colour": 1}]})
    assert [str(i) for i in caught.value.issues] == [
        "curves[0].nodes: is required",
        "curves[0].colour: is not a known field, got 1",
    ]


def test_a_request_needs_t1_at_most_t2() -> None:
    with pytest.raises(InvalidData, match=r"^t1: must be <= t2 \(1.0\), got 3.0$"):
        parse(Request, {"application": "ray_tracing", "t1": 3.0, "t2": 1.0})
    with pytest.raises(InvalidData, match=r"^t2: must be > 0, got -1.0$"):
        parse(Request, {"application": "ray_tracing", "t2": -1.0})


def test_bad_json_is_located() -> None:
    with pytest.raises(InvalidData, match=r"^line 1, column 2: is not JSON"):
        from_json("{applications: []}")


# --- JSON and CSV ----------------------------------------------------------------------

CSV_HEADER = "application,image_size,interleaving,nodes,bandwidth,time\n"


def test_the_examples_round_trip_through_json_and_csv() -> None:
    assert from_json(to_json(EXAMPLES)) == EXAMPLES
    assert from_csv(to_csv(EXAMPLES), EXAMPLES.applications) == EXAMPLES


def test_csv_loads_straight_into_pandas() -> None:
    frame = pd.read_csv(io.StringIO(to_csv(EXAMPLES)))
    assert list(frame.columns) == [
        "application",
        "image_size",
        "interleaving",
        "nodes",
        "bandwidth",
        "time",
    ]
    assert len(frame) == sum(len(c.points) for c in EXAMPLES.curves)
    assert frame.groupby("application").size().to_dict() == {
        "polygon_rendering": 9 * 14,
        "ray_tracing": 12 * 14,
    }
    assert frame["interleaving"].isna().sum() == 9 * 14  # blank for polygon rendering
    assert frame["bandwidth"].max() == 50 * MB


def test_csv_row_order_does_not_matter() -> None:
    rows = to_csv(EXAMPLES).splitlines(keepends=True)
    shuffled = rows[0] + "".join(reversed(rows[1:]))
    again = from_csv(shuffled, EXAMPLES.applications)
    assert {c.label: c for c in again.curves} == {c.label: c for c in EXAMPLES.curves}


def test_csv_problems_are_named_by_line_and_column() -> None:
    text = CSV_HEADER + (
        "ray_tracing,512,0,4,1000000,-1.0\n"
        "ray_tracing,2048,0,4,2000000,1.0\n"
        "ray_tracing,512,0,six,3000000,1.0\n"
        "ray_trace,512,0,4,1000000,1.0\n"
        "polygon_rendering,512,0,4,1000000,1.0\n"
        "ray_tracing,512,0,6,1000000,nan\n"
        "ray_tracing,512,0\n"
        "\n"
        "ray_tracing,512,2,4,1000000,2.0\n"
        "ray_tracing,512,2,4,1000000,2.5\n"
    )
    with pytest.raises(InvalidData) as caught:
        from_csv(text, EXAMPLES.applications, source="rt.csv")
    assert [str(i) for i in caught.value.issues] == [
        "rt.csv line 2, column time: must be > 0, got -1.0",
        "rt.csv line 3, column image_size: must be one of [512, 1024], got '2048'",
        "rt.csv line 4, column nodes: must be an integer, got 'six'",
        "rt.csv line 5, column application: is not a known application "
        "(ray_tracing, polygon_rendering), got 'ray_trace'",
        "rt.csv line 6, column interleaving: must be blank: polygon_rendering has no "
        "such parameter, got '0'",
        "rt.csv line 7, column nodes: must be a power of two for the hypercube pattern, got 6",
        "rt.csv line 7, column time: must be a finite number, got nan",
        "rt.csv line 8: must have 6 cells like the header, got 3",
        "rt.csv line 11, column bandwidth: repeats line 10 of the same curve, got 1000000.0",
    ]


def test_csv_header_problems() -> None:
    text = "application,image_size,colour,image_size,bandwidth,time\n"
    with pytest.raises(InvalidData) as caught:
        from_csv(text, EXAMPLES.applications)
    assert [str(i) for i in caught.value.issues] == [
        "line 1: lacks the column 'nodes'",
        "line 1, column colour: is not a parameter of any application, got 'colour'",
        "line 1, column image_size: repeats a column, got 'image_size'",
    ]
    lacking = "application,image_size,nodes,bandwidth,time\nray_tracing,512,4,1000000,1.0\n"
    with pytest.raises(InvalidData, match=r"lacks the column 'interleaving', a parameter of"):
        from_csv(lacking, EXAMPLES.applications)


def test_polygon_rendering_csv_needs_no_interleaving_column() -> None:
    text = "application,image_size,nodes,bandwidth,time\npolygon_rendering,256,4,1000000,0.9\n"
    store = from_csv(text, EXAMPLES.applications)
    assert store.curves[0].parameters == {"image_size": 256}


@st.composite
def stores(draw: st.DrawFn) -> ProfileStore:
    """Random valid stores: parameter values of every kind, curves of random points."""
    names = draw(st.lists(st.sampled_from(["a", "b2", "c_c"]), min_size=1, max_size=2, unique=True))
    values = st.one_of(
        st.integers(-(10**6), 10**6),
        st.floats(allow_nan=False, allow_infinity=False, width=64),
        st.text(st.sampled_from("ab ,\"'x1."), max_size=4),
    )
    # Values of a parameter must differ both as values and as CSV text.
    canon = lambda v: ("s", v) if isinstance(v, str) else ("n", float(v))  # noqa: E731
    apps, curves = [], []
    positive = st.floats(min_value=1e-6, max_value=1e15, allow_nan=False, allow_infinity=False)
    for name in names:
        params = draw(
            st.dictionaries(
                st.sampled_from(["size", "quality", "mode"]),
                st.lists(values, min_size=1, max_size=3, unique_by=(str, canon)),
                max_size=2,
            )
        )
        pattern = draw(st.sampled_from(list(Pattern)))
        allowed = {k: tuple(v) for k, v in params.items()}
        apps.append(Application(name=name, parameters=allowed, pattern=pattern))
        combos = draw(
            st.lists(
                st.tuples(
                    st.fixed_dictionaries({k: st.sampled_from(v) for k, v in params.items()}),
                    st.sampled_from([1, 2, 4, 8]),
                ),
                max_size=3,
                unique_by=lambda pn: (
                    tuple(sorted((k, canon(v)) for k, v in pn[0].items())),
                    pn[1],
                ),
            )
        )
        for chosen, nodes in combos:
            bandwidths = sorted(draw(st.lists(positive, min_size=1, max_size=5, unique=True)))
            times = draw(st.lists(positive, min_size=len(bandwidths), max_size=len(bandwidths)))
            points = tuple(
                Point(bandwidth=b, time=t) for b, t in zip(bandwidths, times, strict=True)
            )
            curves.append(Curve(application=name, parameters=chosen, nodes=nodes, points=points))
    return ProfileStore(applications=tuple(apps), curves=tuple(curves))


@settings(max_examples=60, deadline=None, database=None)
@given(stores())
def test_export_then_import_is_the_identity(store: ProfileStore) -> None:
    assert from_json(to_json(store)) == store
    assert from_csv(to_csv(store), store.applications) == store
    assert to_csv(from_csv(to_csv(store), store.applications)) == to_csv(store)


# --- communication patterns (document 001 §3.2.1, §4.2.1) ------------------------------


def test_two_neighbours_make_4_flows_per_node_link() -> None:
    # §3.2.1: "2 outgoing and 2 incoming flows on the single link from a node, making 4
    # flows in all ... when the bandwidth assigned per flow is 8 MBps, the actual bandwidth
    # per link for 4 nodes is 8 x 4 = 32 MBps".
    for nodes in (4, 8, 16):
        assert Pattern.RING.flows_per_link(nodes) == 4
        assert Pattern.RING.link_load(nodes, 8 * MB) == 32 * MB
    assert Pattern.RING.partners(0, 4) == (1, 3)
    assert Pattern.HYPERCUBE.flows_per_link(4) == 4
    assert Pattern.HYPERCUBE.link_load(4, 8 * MB) == 32 * MB


def test_the_hypercube_gives_the_document_counts_on_4_and_8_nodes() -> None:
    # §3.2.1: "In the case of 8 nodes, there are 3 outgoing and 3 incoming flows".
    loads = Pattern.HYPERCUBE.link_loads(8, 1.0)
    assert {(load.out, load.into) for load in loads} == {(3.0, 3.0)}
    assert Pattern.HYPERCUBE.flows_per_link(8) == 6
    assert Pattern.HYPERCUBE.flows_per_link(16) == 8
    assert Pattern.HYPERCUBE.partners(5, 8) == (1, 4, 7)
    with pytest.raises(ValueError, match=r"^nodes: must be a power of two .*, got 6$"):
        Pattern.HYPERCUBE.flows(6)


def test_all_to_all_makes_2n_minus_2_flows_per_node_link() -> None:
    for nodes in (2, 4, 8, 16):
        assert Pattern.ALL_TO_ALL.flows_per_link(nodes) == 2 * nodes - 2
        assert len(Pattern.ALL_TO_ALL.flows(nodes)) == nodes * (nodes - 1)
    # §4.2.1: on a 210 MBps link the most per flow is 210/6 = 35 MBps on 4 nodes, 210/14 =
    # 15 MBps on 8.
    assert 210 * MB / Pattern.ALL_TO_ALL.flows_per_link(4) == 35 * MB
    assert 210 * MB / Pattern.ALL_TO_ALL.flows_per_link(8) == 15 * MB


@pytest.mark.parametrize("pattern", list(Pattern))
@pytest.mark.parametrize("nodes", [1, 2, 4, 8, 16])
def test_flows_join_distinct_ranks_both_ways(pattern: Pattern, nodes: int) -> None:
    flows = pattern.flows(nodes)
    assert len(set(flows)) == len(flows)
    assert all(0 <= s < nodes and 0 <= d < nodes and s != d for s, d in flows)
    assert {(d, s) for s, d in flows} == set(flows)
    loads = pattern.link_loads(nodes, 2.0)
    assert sum(load.out for load in loads) == sum(load.into for load in loads) == 2 * len(flows)
    assert pattern.link_load(nodes, 2.0) == 2.0 * pattern.flows_per_link(nodes)


# --- the example profiles against document 001 §3.2-3.4 ---------------------------------


def test_examples_have_the_curves_document_001_describes() -> None:
    labels = {c.label for c in EXAMPLES.curves}
    assert len([c for c in EXAMPLES.curves if c.application == "ray_tracing"]) == 12
    assert len([c for c in EXAMPLES.curves if c.application == "polygon_rendering"]) == 9
    assert "polygon_rendering image_size=256 nodes=16" in labels


def test_examples_reproduce_section_3_2_2() -> None:
    # 512x512, interleaving 0, at most 2 s: >= 2 MBps per flow on 4 nodes, 1 on 8 and 16.
    assert least_meeting(rt(512, 0, 4), 2.0) == 2
    assert least_meeting(rt(512, 0, 8), 2.0) == 1
    assert least_meeting(rt(512, 0, 16), 2.0) == 1
    # 1024x1024, interleaving 0: >= 15 MBps on 16 nodes, impossible on 4 and 8.
    assert least_meeting(rt(1024, 0, 16), 2.0) == 15
    assert least_meeting(rt(1024, 0, 4), 2.0) is None
    assert least_meeting(rt(1024, 0, 8), 2.0) is None


def test_examples_reproduce_the_worked_example_of_section_3_3() -> None:
    # Only 512x512 curves have points below 1 s (Figure 3.4) ...
    below = [c for c in EXAMPLES.curves_for("ray_tracing") if least_meeting(c, 1.0)]
    assert {c.parameters["image_size"] for c in below} == {512}
    assert {c.parameters["interleaving"] for c in below} == {0, 2}
    # ... of which two have interleaving 0 (Figures 3.5, 3.6): 8 and 16 nodes, needing at
    # least 4 and 5 MBps, both with their knee at 40 MBps.
    two = [c for c in below if c.parameters["interleaving"] == 0]
    assert [c.nodes for c in two] == [8, 16]
    assert [least_meeting(c, 1.0) for c in two] == [4, 5]
    assert [knee(c).bandwidth for c in two] == [40 * MB, 40 * MB]
    # Scenario 2: 40 MBps on 16 nodes beats 40 on 8; scenario 3: 20 on 16 beats 30 on 8.
    assert time_at(rt(512, 0, 16), 40) < time_at(rt(512, 0, 8), 40)
    assert time_at(rt(512, 0, 16), 20) < time_at(rt(512, 0, 8), 30)


def test_example_curves_fall_as_bandwidth_grows() -> None:
    for c in EXAMPLES.curves:
        times = [p.time for p in c.points]
        assert times == sorted(times, reverse=True), c.label


# --- the translator on the worked example (document 001 §3.3-3.4) ----------------------

#: §3.3: a frame in at most 1 s, interleaving factor 0, image size left free.
FRAME = Request(application="ray_tracing", parameters={"interleaving": 0}, t2=1.0)


def test_candidates_run_from_the_knee_down_to_the_least_bandwidth_meeting_the_bound() -> None:
    as_mb = lambda c: [p.bandwidth / MB for p in candidates(c, FRAME)]  # noqa: E731
    assert as_mb(rt(512, 0, 8)) == [40, 35, 30, 25, 20, 15, 10, 5, 4]
    assert as_mb(rt(512, 0, 16)) == [40, 35, 30, 25, 20, 15, 10, 5]
    assert as_mb(rt(512, 0, 4)) == []
    assert as_mb(rt(1024, 0, 16)) == []


def test_scenario_1_even_the_least_bandwidth_cannot_be_granted() -> None:
    allocator = FakeAllocator({4: UNLIMITED, 8: 3.9 * MB, 16: 4.9 * MB})
    result = translate(EXAMPLES, FRAME, allocator)
    assert isinstance(result, Refusal)
    assert result.reason is RefusalReason.NOT_ENOUGH_BANDWIDTH
    assert "nodes=8 needs >= 4 MB/s per flow, 3.9 MB/s grantable" in result.detail
    assert "nodes=16 needs >= 5 MB/s per flow, 4.9 MB/s grantable" in result.detail
    assert str(result).startswith("not enough bandwidth: ")


def test_scenario_2_no_other_load_gives_the_knee_on_16_nodes() -> None:
    allocator = FakeAllocator(default=UNLIMITED)
    result = translate(EXAMPLES, FRAME, allocator)
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (40 * MB, 16)
    assert result.time == time_at(rt(512, 0, 16), 40)
    # The free image size became 512 (§3.3: only 512 curves go below 1 s).
    assert result.parameters == {"image_size": 512, "interleaving": 0}
    # One question per matching curve, each for its knee: the allocator is never asked for
    # more than the knee (§3.4), nor about curves that cannot meet the bound.
    assert sorted((n, w) for n, _, w in allocator.calls) == [(8, 40 * MB), (16, 40 * MB)]
    assert {p for _, p, _ in allocator.calls} == {Pattern.HYPERCUBE}


def test_scenario_3_existing_reservations_give_20_mbps_on_16_nodes() -> None:
    # §3.4: "The maximum bandwidth available is only 30 MBps per flow for 8 nodes, and 20
    # MBps per flow for 16 nodes ... allocates 20 MBps per flow, on 16 nodes".
    result = translate(EXAMPLES, FRAME, FakeAllocator({8: 30 * MB, 16: 20 * MB}))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes, result.time) == (20 * MB, 16, 0.395)


def test_a_grant_between_points_takes_the_point_below() -> None:
    result = translate(EXAMPLES, FRAME, FakeAllocator({8: 29 * MB, 16: 12 * MB}))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (25 * MB, 8)  # 0.475 s < 0.58 s at 10 on 16


def test_a_grant_short_by_a_rounding_error_still_grants_the_point() -> None:
    result = translate(EXAMPLES, FRAME, FakeAllocator({16: 20 * MB * (1 - 1e-12)}))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (20 * MB, 16)


def test_at_low_bandwidth_8_nodes_beat_16() -> None:
    # At 4 MBps only the 8-node curve meets 1 s (the 16-node one needs 5).
    result = translate(EXAMPLES, FRAME, FakeAllocator(default=4 * MB))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes, result.time) == (4 * MB, 8, 0.95)


def test_a_free_image_size_adapts_to_the_bandwidth_available() -> None:
    # §3.2.2: at most 2 s with interleaving 0 and under 15 MBps on 16 nodes, "the only
    # option is to execute the application with an image size of 512x512".
    request = Request(application="ray_tracing", parameters={"interleaving": 0}, t2=2.0)
    result = translate(EXAMPLES, request, FakeAllocator({4: 50 * MB, 8: 50 * MB, 16: 10 * MB}))
    assert isinstance(result, Alternative)
    assert result.parameters["image_size"] == 512
    assert (result.bandwidth, result.nodes) == (40 * MB, 8)
    # Fixing 1024 leaves the 16-node curve alone, which needs 15 MBps.
    fixed = Request(
        application="ray_tracing", parameters={"interleaving": 0, "image_size": 1024}, t2=2.0
    )
    refused = translate(EXAMPLES, fixed, FakeAllocator({4: 50 * MB, 8: 50 * MB, 16: 10 * MB}))
    assert isinstance(refused, Refusal)
    assert refused.reason is RefusalReason.NOT_ENOUGH_BANDWIDTH
    granted = translate(EXAMPLES, fixed, FakeAllocator({16: 15 * MB}))
    assert isinstance(granted, Alternative)
    assert (granted.bandwidth, granted.nodes, granted.time) == (15 * MB, 16, 1.93)


def test_an_image_size_that_cannot_meet_the_bound_is_refused() -> None:
    # §3.3: if the application has specified an image size "bigger than 512, then the
    # translator deduces that this request cannot be satisfied".
    request = Request(application="ray_tracing", parameters={"image_size": 1024}, t2=1.0)
    result = translate(EXAMPLES, request, FakeAllocator(default=UNLIMITED))
    assert isinstance(result, Refusal)
    assert result.reason is RefusalReason.NO_TIME_MATCH
    assert "none of the 6 curves of ray_tracing with image_size=1024" in result.detail


def test_the_lower_time_bound_and_fixed_nodes_are_honoured() -> None:
    # Bounds are inclusive: 0.45 s at 15 MBps on 16 nodes is in [0.45, 1].
    request = Request(application="ray_tracing", parameters={"interleaving": 0}, t1=0.45, t2=1.0)
    result = translate(EXAMPLES, request, FakeAllocator(default=UNLIMITED))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes, result.time) == (15 * MB, 16, 0.45)
    on8 = FRAME.model_copy(update={"nodes": 8})
    result = translate(EXAMPLES, on8, FakeAllocator(default=UNLIMITED))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (40 * MB, 8)


def test_polygon_rendering_narrows_by_image_size_and_time() -> None:
    request = Request(application="polygon_rendering", parameters={"image_size": 512}, t2=0.5)
    result = translate(EXAMPLES, request, FakeAllocator({4: UNLIMITED, 8: 20 * MB}))
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (40 * MB, 4)  # 0.314 s; 0.345 s on 8 at 20


def test_the_knee_tolerance_sets_where_the_search_starts() -> None:
    result = translate(EXAMPLES, FRAME, FakeAllocator(default=UNLIMITED), knee_tolerance=0.0)
    assert isinstance(result, Alternative)
    assert (result.bandwidth, result.nodes) == (50 * MB, 16)


@pytest.mark.parametrize(
    ("request_", "detail"),
    [
        (Request(application="ray_trace"), "no application 'ray_trace'"),
        (
            Request(application="ray_tracing", parameters={"colour": "red"}),
            "ray_tracing has no parameter 'colour' (it has: image_size, interleaving)",
        ),
        (
            Request(application="ray_tracing", parameters={"image_size": 2048}),
            "image_size=2048 is not profiled for ray_tracing (allowed: [512, 1024])",
        ),
        (Request(application="ray_tracing", nodes=32), "no curve of ray_tracing with nodes=32"),
    ],
)
def test_requests_without_a_profile_are_refused(request_: Request, detail: str) -> None:
    result = translate(EXAMPLES, request_, FakeAllocator(default=UNLIMITED))
    assert isinstance(result, Refusal)
    assert result.reason is RefusalReason.NO_PROFILE
    assert detail in result.detail


def test_ties_go_to_the_alternative_reserving_less() -> None:
    app = Application(name="app", parameters={"q": (1, 2)}, pattern=Pattern.ALL_TO_ALL)
    fast = [Point(bandwidth=10 * MB, time=2.0), Point(bandwidth=20 * MB, time=1.0)]
    slow = [Point(bandwidth=5 * MB, time=2.0), Point(bandwidth=10 * MB, time=1.0)]
    store = ProfileStore(
        applications=(app,),
        curves=(
            Curve(application="app", parameters={"q": 1}, nodes=4, points=tuple(fast)),
            Curve(application="app", parameters={"q": 2}, nodes=4, points=tuple(slow)),
        ),
    )
    result = translate(store, Request(application="app"), FakeAllocator(default=UNLIMITED))
    assert isinstance(result, Alternative)
    assert (result.parameters, result.bandwidth, result.time) == ({"q": 2}, 10 * MB, 1.0)


def test_an_allocator_granting_more_than_asked_is_an_error() -> None:
    class Greedy:
        def grantable(self, nodes: int, pattern: Pattern, wanted: float) -> float:
            return 2 * wanted

    with pytest.raises(ValueError, match=r"must return a number in \[0, wanted\]"):
        translate(EXAMPLES, FRAME, Greedy())


@pytest.mark.parametrize("name", ["a b", "9a", 'a"b', "a\nb", "ok!", ""])
def test_application_names_are_whole_identifiers(name):
    with pytest.raises(ValidationError):
        Application(name=name, pattern="all_to_all")
    assert Application(name="ray_tracing2", pattern="all_to_all").name == "ray_tracing2"

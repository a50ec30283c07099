"""An ibsim net file as a cluster (crates/qosnet-sim/src/topology/ib_fabric/ibsim.rs):
ibsim's own example (data/ib-topologies, data/SOURCES.md), two switches and two HCAs,
read by the engine and reserved across, from `qosnet.CallAdmission` and the middleware."""

from pathlib import Path

import pytest

import qosnet
from qosnet.middleware import Cluster

DATA = Path(__file__).resolve().parents[1] / "data" / "ib-topologies"

# No `format`: the file's first record (`Switch 8 "Switch1"`) makes it an ibsim net file.
CLUSTER = '[topology]\nkind = "ib_fabric"\nfile = "ibsim-net-example.net"\n'


@pytest.fixture
def base_dir() -> str:
    assert (DATA / "ibsim-net-example.net").is_file(), "the repository ships it (data/SOURCES.md)"
    return str(DATA)


def test_call_admission_reads_the_net_file(base_dir):
    a = qosnet.CallAdmission(CLUSTER, base_dir=base_dir)
    assert (a.nodes, a.routers) == (2, 2)
    assert a.node_names == ["Hca1", "Hca2"]
    # both HCAs hang off Switch1 (ports 1 and 2): one switch between them
    assert [tuple(hop) for hop in a.path(0, 1)] == [(0, 1)]
    # no `w=`: ibsim's 4x at SDR, 8 Gb/s of data on every link
    assert set(a.ports()["capacity_bps"]) == {8e9}
    first = a.admit(0, 1, 6e9)
    assert a.check(0, 1, 3e9)["criterion"] == "source"
    assert a.release(first)
    assert a.check(0, 1, 3e9) is None


def test_a_cluster_reserves_a_flow_across_it(base_dir):
    cluster = Cluster.from_toml(CLUSTER, name="ibsim-example", base_dir=base_dir)
    assert (cluster.nodes, cluster.switches) == (2, 2)
    assert cluster.link_bandwidth == pytest.approx(1e9)  # bytes/s
    engine = cluster.admission()
    flow = engine.admit(1, 0, 4e9)
    assert max(engine.ports()["reserved_bps"]) == pytest.approx(4e9)
    links = cluster.to_dict()["links"]
    # Switch1's ports 3 and 4 are the two parallel links to Switch2, and back
    assert sorted(
        (x["router"], x["port"], x["to"], x["to_id"]) for x in links if x["to"] == "router"
    ) == [
        (0, 2, "router", 1),
        (0, 3, "router", 1),
        (1, 2, "router", 0),
        (1, 3, "router", 0),
    ]
    assert engine.release(flow)


def test_routes_with_an_ibsim_file_name_the_field(base_dir):
    with pytest.raises(qosnet.ConfigError) as e:
        qosnet.CallAdmission(CLUSTER + 'routes = "ibroutes"\n', base_dir=base_dir)
    assert any(path == "topology.routes" and "no LIDs" in msg for path, msg in e.value.errors)

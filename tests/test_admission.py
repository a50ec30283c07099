"""Call admission from Python (document 004 §3.4): the engine's own topology, routes and
capacity accounting, as the control plane will use them."""

from pathlib import Path

import pytest

import qosnet

LINE = """\
[physical]
link_bandwidth = "1 Gb/s"

[topology]
kind = "mesh"
k = 4
n = 1
"""


@pytest.fixture
def line() -> qosnet.CallAdmission:
    return qosnet.CallAdmission(LINE)


def test_paths_are_the_simulators_routes(line):
    assert (line.nodes, line.routers) == (4, 4)
    hops = line.path(0, 3)
    # one output port per switch from 0's switch to 3's, the last one to node 3
    assert [r for r, _ in hops] == [0, 1, 2, 3]
    ports = line.ports()
    last = ports["to"][
        [
            i
            for i, (r, p) in enumerate(zip(ports["router"], ports["port"], strict=True))
            if (r, p) == hops[-1]
        ][0]
    ]
    assert last == "node"


def test_each_criterion_refuses_on_its_own(line):
    cap = line.node(0)[2]
    # a) the source: node 0 cannot send more than its peak
    assert line.check(0, 1, cap * 1.01)["criterion"] == "source"
    # b) a switch port: node 3 may sink twice the link, but switch 1's east port, which
    # 0 -> 3 and 1 -> 3 share, carries one link's worth
    line.set_node_capacity(3, 2 * cap)
    first = line.admit(0, 3, 0.6 * cap)
    refusal = line.check(1, 3, 0.6 * cap)
    assert refusal["criterion"] == "switch_port" and refusal["router"] == 1
    # c) the destination: node 2 sinks at most a third of the link
    line.set_node_capacity(2, cap / 3)
    with pytest.raises(qosnet.AdmissionRefused) as e:
        line.admit(3, 2, cap / 2)
    assert e.value.refusal["criterion"] == "destination" and e.value.refusal["node"] == 2
    assert "destination node 2" in str(e.value)
    # release returns the capacity, once
    assert line.release(first) and not line.release(first)
    assert line.check(1, 3, 0.6 * cap) is None


def test_a_job_is_all_or_nothing(line):
    cap = line.node(0)[2]
    with pytest.raises(qosnet.AdmissionRefused) as e:
        line.admit_all([(0, 3, cap / 2), (1, 3, cap / 2), (2, 3, cap / 2)])
    assert e.value.refusal["flow"] == 2
    assert all(r == 0.0 for r in line.ports()["reserved_bps"])
    ids = line.admit_all([(0, 3, cap / 2), (1, 2, cap / 2)])
    # both cross switch 1's east port
    assert len(ids) == 2 and max(line.ports()["reserved_bps"]) == pytest.approx(cap)


def test_bad_requests_name_the_field(line):
    with pytest.raises(ValueError, match="dst: must be a node in 0..4, got 9"):
        line.path(0, 9)
    assert line.check(0, 0, 1e6)["criterion"] == "invalid"
    assert line.check(0, 1, -5.0)["criterion"] == "invalid"
    with pytest.raises(ValueError, match="bps: must be a positive number"):
        line.set_node_capacity(0, 0.0)
    with pytest.raises(qosnet.ConfigError) as e:
        qosnet.CallAdmission('[topology]\nkind = "mesh"\nk = 0\nn = 2\n')
    assert any(path.startswith("topology") for path, _ in e.value.errors)


def test_a_real_fabric_from_its_dump():
    # data/ib-topologies (data/SOURCES.md): avakas, 281 HCAs behind 25 switch ASICs,
    # routed by its own forwarding tables
    base = Path(__file__).resolve().parents[1] / "data" / "ib-topologies"
    fabric = base / "netloc-avakas"
    assert fabric.is_dir(), "the repository ships it (data/SOURCES.md)"
    sub = "fe80_0000_0000_0000"
    a = qosnet.CallAdmission(
        f'[topology]\nkind = "ib_fabric"\nfile = "{fabric}/ib-subnet-{sub}.txt"\n'
        f'routes = "{fabric}/ibroutes-{sub}"\n'
    )
    assert (a.nodes, a.routers) == (281, 25)
    assert "node179 HCA-1" in a.node_names
    # 4x QDR: 32 Gb/s of data per link
    assert max(a.ports()["capacity_bps"]) == 32e9
    assert len(a.path(0, 280)) <= 3

"""Small configurations shared by the tests: fast enough to run in milliseconds; and the
service tests' databases and running services (imported only by the tests that use them)."""

import copy
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

SMALL_TOML = """\
[simulation]
seed = 11
warmup = 1000
measure = 4000

[topology]
kind = "mesh"
k = 4
n = 2

[router]
vcs = 4
input_buffer = 4
output_buffer = 4

[[traffic]]
load = 0.1
message_flits = 8
packet_flits = 8
"""

SMALL: dict[str, Any] = {
    "simulation": {"seed": 11, "warmup": 1000, "measure": 4000},
    "topology": {"kind": "mesh", "k": 4, "n": 2},
    "router": {"vcs": 4, "input_buffer": 4, "output_buffer": 4},
    "traffic": [{"load": 0.1, "message_flits": 8, "packet_flits": 8}],
}


@pytest.fixture
def small() -> dict[str, Any]:
    """A 4x4 mesh at load 0.1, as a dict the test may change."""
    return copy.deepcopy(SMALL)


@pytest.fixture
def small_toml(tmp_path: Path) -> Path:
    """The same configuration as a TOML file."""
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path


@pytest.fixture
def deadlocking() -> dict[str, Any]:
    """A 5x5 torus under dimension order routing without dateline classes, one VC and
    heavy load: the cyclic channel dependences close and the network deadlocks. (Odd k:
    no distance-k/2 ties, which split between the two directions and make an even torus
    slow to deadlock.)"""
    return {
        "simulation": {"warmup": 1000, "measure": 5000, "watchdog": 500},
        "topology": {"kind": "torus", "k": 5, "n": 2},
        "routing": {"kind": "dor"},
        "router": {"vcs": 1, "input_buffer": 2, "output_buffer": 2},
        "traffic": [{"load": 0.9, "message_flits": 16, "packet_flits": 16}],
    }


@pytest.fixture(scope="module")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server of the test module's own (skipped where there is none)."""
    from qosnet.service.testing import postgres_available, postgres_server

    if not postgres_available():
        pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not on PATH")
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh database of each kind."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/qosnet.db"
    return request.getfixturevalue("postgres").create_database(f"t_{uuid.uuid4().hex[:12]}")


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path}/qosnet.db"


@pytest.fixture(scope="session")
def worked_example(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Document 001's worked example (§3.3-3.4) as service files: the testbed with 210 MB/s
    each way (the example's 40 MB/s per flow on 16 hypercube nodes needs it) and the
    hand-written profiles written to agree with it (the fixture of `middleware/data`)."""
    from qosnet.middleware import DOCUMENT_001_TESTBED, load_examples, to_json

    d = tmp_path_factory.mktemp("worked_example")
    # (named as the built-in testbed is: the cluster's name is its file's stem)
    cluster = d / "document-001.toml"
    cluster.write_text(DOCUMENT_001_TESTBED.replace('"840 Mb/s"', '"1680 Mb/s"'))
    profiles = d / "profiles.json"
    profiles.write_text(to_json(load_examples()))
    return cluster, profiles


@pytest.fixture
def make_service(worked_example: tuple[Path, Path]) -> Iterator[Callable[..., Any]]:
    """Start services (`qosnet.service.testing.start_service`); all stopped afterwards.
    Unless told otherwise the first on a database installs document 001's worked example
    (`worked_example`)."""
    from qosnet.service.testing import start_service

    running: list[Any] = []
    databases: set[str] = set()

    def make(*args: Any, **kw: Any) -> Any:
        # (only the first service on a database: a later one keeps what is stored there)
        if args and args[0] not in databases:
            databases.add(args[0])
            kw.setdefault("cluster_file", worked_example[0])
            kw.setdefault("profiles_file", worked_example[1])
        service = start_service(*args, **kw)
        running.append(service)
        return service

    yield make
    for service in running:
        service.stop()

"""Small configurations shared by the tests: fast enough to run in milliseconds."""

import copy
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
    """A 4x4 torus under dimension order routing without dateline classes, one VC and
    heavy load: the cyclic channel dependences close and the network deadlocks."""
    return {
        "simulation": {"warmup": 1000, "measure": 5000, "watchdog": 500},
        "topology": {"kind": "torus", "k": 4, "n": 2},
        "routing": {"kind": "dor"},
        "router": {"vcs": 1, "input_buffer": 2, "output_buffer": 2},
        "traffic": [{"load": 0.9, "message_flits": 16, "packet_flits": 16}],
    }

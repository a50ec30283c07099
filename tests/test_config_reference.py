"""The configuration reference and JSON Schema (issue 42): generated from the engine's
configuration types, current in docs/, and agreeing with what the engine reads."""

import functools
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from qosnet import _core, validate
from qosnet.cli import app
from qosnet.config_reference import entries, render, render_markdown, schema

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def _shipped_configs() -> list[Path]:
    """Every simulation configuration the repository ships (sweep files and the service's
    clusters aside: a sweep names a configuration; a cluster is one, checked too)."""
    paths = []
    for p in sorted((ROOT / "configs").rglob("*.toml")):
        text = p.read_text(encoding="utf-8")
        if "[sweep]" in text or p.parent.name == "validation" and p.name == "cases.toml":
            continue
        paths.append(p)
    return paths


@functools.cache
def _validator() -> Draft202012Validator:
    s = schema()
    Draft202012Validator.check_schema(s)
    return Draft202012Validator(s)


@pytest.fixture
def validator() -> Draft202012Validator:
    return _validator()


def test_the_committed_reference_and_schema_are_current():
    """`qosnet config reference -o docs/configuration.md` and `qosnet config schema -o
    docs/qosnet-config.schema.json` regenerate them."""
    assert (DOCS / "qosnet-config.schema.json").read_text() == _core.config_schema() + "\n"
    assert (DOCS / "configuration.md").read_text() == render_markdown()


@pytest.mark.parametrize("path", _shipped_configs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_configuration_satisfies_the_schema(path: Path, validator):
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    errors = [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(data)
    ]
    assert not errors, errors


BASE = {"topology": {"kind": "mesh", "k": 4, "n": 2}, "traffic": [{"load": 0.1}]}


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ({"router": {"vcss": 4}}, "router"),  # an unknown key
        ({"physical": {"link_bandwidth": "1.6 Gbit/s"}}, "physical.link_bandwidth"),  # a unit
        ({"simulation": {"measure": "10 parsecs"}}, "simulation.measure"),
        ({"simulation": {"memory_limit": "4 GBytes"}}, "simulation.memory_limit"),
        ({"topology": {"kind": "hypercube", "k": 4}}, "topology"),  # an unknown kind
        ({"topology": {"kind": "mesh", "k": 4, "m": 2}}, "topology"),  # a kind's unknown key
        ({"traffic": [{"load": 0.1, "pattern": "hot_spot"}]}, "traffic"),  # needs parameters
        ({"traffic": [{"load": 0.1, "pattern": {"kind": "uniform", "fraction": 1}}]}, "traffic"),
        ({"router": {"kind": "speculative"}}, "router.kind"),
        ({"router": {"vc_classes": "manual"}}, "router.vc_classes"),
    ],
)
def test_what_the_engine_refuses_the_schema_refuses(change, where, validator):
    config = {**BASE, **change}
    assert validate(config), f"the engine took {change}"
    assert list(validator.iter_errors(config)), f"the schema took {change} ({where})"


@pytest.mark.parametrize(
    "change",
    [
        {"physical": {"link_bandwidth": "10 Gb/s", "flit_bits": 256}},
        {"simulation": {"measure": "2 ms", "warmup": 5000, "memory_limit": "unlimited"}},
        {
            "traffic": [
                {"load": 0.1, "pattern": {"kind": "hot_spot", "fraction": 0.2, "nodes": [0]}}
            ]
        },
        {"router": {"vc_classes": {"control": 1, "real_time": 7, "best_effort": 8}}},
        {
            "router": {
                "crossbar_scheduler": "fair_queueing",
                "output_scheduler": {"kind": "virtual_clock"},
            }
        },
    ],
)
def test_what_the_engine_takes_the_schema_takes(change, validator):
    config = {**BASE, **change}
    assert not validate(config), change
    errors = [e.message for e in validator.iter_errors(config)]
    assert not errors, errors


def test_every_key_has_a_heading_and_a_description_or_type():
    paths = []
    for e in entries():
        paths.append(e.path)
        stack = list(e.children)
        while stack:
            c = stack.pop()
            paths.append(c.path)
            assert c.type or c.description or " = " in c.path, c.path
            stack.extend(c.children)
    for key in ("[simulation]", "simulation.seed", "router.vcs", "[[traffic]]", "traffic[].load"):
        assert key in paths, key
    assert any(p.startswith('traffic[].pattern = { kind = "hot_spot"') for p in paths), paths


def test_one_key_in_the_terminal():
    text = render("router.vcs")
    assert text.startswith("### `router.vcs`") and "default: `16`" in text, text
    r = CliRunner().invoke(app, ["config", "reference", "router.vcs", "--markdown"])
    assert r.exit_code == 0 and "default: `16`" in r.output, r.output
    r = CliRunner().invoke(app, ["config", "reference", "router.vsc"])
    assert r.exit_code == 2 and "did you mean 'router.vcs'" in r.output, r.output


UNITS = ["b/s", "Mb/s", "Gb/s", "MB/s", "Gbps", "Gbit/s", "us", "µs", "ms", "s", "min", "h",
         "cycles", "sec", "B", "kB", "GB", "GiB", "gb", ""]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    number=st.sampled_from(["1", "1.6", "0.5", ".5", "2e3", "10", "-3", "1e", "x"]),
    space=st.sampled_from(["", " ", "  "]),
    unit=st.sampled_from(UNITS),
    key=st.sampled_from(
        [("physical", "link_bandwidth"), ("simulation", "measure"), ("simulation", "memory_limit")]
    ),
)
def test_the_schema_reads_units_as_the_engine_does(number, space, unit, key):
    """A quantity the schema admits is one the engine reads, and the other way round. (The
    pattern checks the form, not the range: a zero bandwidth passes it; and a cycle count in
    exponent form with a fraction, "1.5e3 cycles", is whole but refused by it.)"""
    text = f"{number}{space}{unit}"
    section, name = key
    config = {**BASE, section: {name: text}}
    errors = [m for path, m in validate(config) if path == f"{section}.{name}"]
    if errors and errors[0].startswith("must be"):
        return  # read, and refused for its value (a range), which the pattern does not check
    engine = not errors
    schema_ok = not list(_validator().iter_errors(config))
    assert schema_ok == engine, (text, key, validate(config))

"""The repository holds every data file it uses (issue 25): `data/` matches its checksums and
SOURCES.md, every file a shipped configuration names exists, and nothing reads a `shared/`
folder outside the repository (a clone has none)."""

import hashlib
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"


def test_data_matches_its_checksums():
    listed = {}
    for line in (DATA / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        listed[name.removeprefix("./")] = digest
    present = {
        str(p.relative_to(DATA))
        for p in DATA.rglob("*")
        if p.is_file() and p.name not in ("SHA256SUMS", "SOURCES.md")
    }
    assert present == set(listed), present ^ set(listed)
    for name, digest in listed.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest, name


def test_sources_names_every_data_directory_and_file_kind():
    sources = (DATA / "SOURCES.md").read_text(encoding="utf-8")
    tops = {p.relative_to(DATA).parts[0] for p in DATA.rglob("*") if p.is_file()}
    for top in tops - {"SHA256SUMS", "SOURCES.md"}:
        assert f"`{top}/" in sources, top
    for trace in (DATA / "video-traces").iterdir():
        assert f"`{trace.name}`" in sources or trace.name in sources, trace.name
    assert "Licence" in sources


def _named_files(value, key=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _named_files(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _named_files(v, key)
    elif isinstance(value, str) and key in ("file", "routes", "traces"):
        yield value


def test_every_file_a_shipped_configuration_names_is_in_the_repository():
    named = 0
    for config in sorted((ROOT / "configs").rglob("*.toml")):
        tree = tomllib.loads(config.read_text(encoding="utf-8"))
        for name in _named_files(tree):
            path = (config.parent / name).resolve()
            assert path.exists(), f"{config.relative_to(ROOT)}: {name}"
            assert path.is_relative_to(ROOT), f"{config.relative_to(ROOT)}: {name} is outside"
            named += 1
    assert named >= 12  # seed003's two configurations' traces and the avakas cluster


def test_nothing_reads_a_shared_folder_outside_the_repository():
    pattern = re.compile(r"\.\./shared|\"shared\"\s*/\s*\"data\"|shared/data")
    offenders = []
    for top in ("configs", "python", "tests", "crates"):
        for path in (ROOT / top).rglob("*"):
            if path.suffix in (".py", ".rs", ".toml", ".md") and "target" not in path.parts:
                if pattern.search(path.read_text(encoding="utf-8", errors="replace")):
                    offenders.append(str(path.relative_to(ROOT)))
    offenders = [o for o in offenders if o != "tests/test_data.py"]
    assert not offenders, offenders

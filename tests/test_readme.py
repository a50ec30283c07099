"""The README's examples run as written (issue 25: they cannot rot).

Every fenced block after a `<!-- tested -->` line is run: a `python` block with `exec` in a
fresh directory that holds the repository's `configs` and `data` (so relative paths are
the README's), a `sh` block line by line as `qosnet` commands (a line `A && B` runs the
`qosnet` parts; `pip install` and `bash .ci/run` are what the test suite itself is run by).
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"<!-- tested -->\n```(\w+)\n(.*?)```", re.S)


def _blocks() -> list[tuple[str, str]]:
    return BLOCK.findall((ROOT / "README.md").read_text(encoding="utf-8"))


def qosnet_commands(block: str) -> list[list[str]]:
    """The `qosnet ...` commands of a shell block, comments dropped."""
    commands = []
    for line in block.splitlines():
        line = line.split("  #")[0].strip()
        if line.startswith("#"):
            continue
        for part in line.split("&&"):
            words = shlex.split(part, comments=True)
            if words and words[0] == "qosnet":
                commands.append(words)
    return commands


@pytest.fixture
def clone_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("configs", "data"):
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_readme_marks_its_examples():
    kinds = [kind for kind, _ in _blocks()]
    assert kinds.count("python") >= 1 and kinds.count("sh") >= 2, kinds


@pytest.mark.parametrize("index", [i for i, (k, _) in enumerate(_blocks()) if k == "python"])
def test_python_example(index: int, clone_dir: Path):
    _, code = _blocks()[index]
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # noqa: S102 - the README's own code
    r = namespace["r"]
    assert r.summary["latency"]["mean"] > 0
    assert (clone_dir / "runs" / "x" / "summary.json").is_file()


@pytest.mark.parametrize("index", [i for i, (k, _) in enumerate(_blocks()) if k == "sh"])
def test_cli_example(index: int, clone_dir: Path):
    _, block = _blocks()[index]
    commands = qosnet_commands(block)
    assert commands, block
    for words in commands:
        argv = [sys.executable, "-m", "qosnet", *words[1:]]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{shlex.join(words)}\n{done.stdout}\n{done.stderr}"


def test_the_sweep_file_example_reads(clone_dir: Path):
    from qosnet.sweep import read_sweep

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[sweep]" in b]
    (clone_dir / "sweeps").mkdir()
    path = clone_dir / "sweeps" / "example.toml"
    path.write_text(block)
    sweep = read_sweep(path)
    assert sweep.base.is_file()
    assert len(sweep.points()) == 4 * 2 * 2
    assert sweep.saturation is not None and sweep.saturation.tolerance == 0.01

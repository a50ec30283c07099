"""The README's examples run as written (issue 25: they cannot rot).

Every fenced block after a `<!-- tested -->` line is run in a fresh directory that holds
the repository's `configs` and `data` (so relative paths are the README's): a `python` block
with `exec`, a `sh` block whole, in order, by bash with `set -euo pipefail`, so a line that
fails fails the test. Every `sh` block is tested (a synopsis or an operator's lines for a
real cluster are `text`). Only what the test suite itself is run by is left out: the setup
block's `pip install ... &&` and `bash .ci/run`. The walkthroughs' fixed ports (the
service's 8000, the agents' 7401 and 7402) become free ones, and whatever a block left
running in the background is stopped when it ends.
"""

import os
import re
import shlex
import socket
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def runnable(block: str) -> str:
    """The block as the test runs it: the setup's install and test-suite lines left out,
    fixed ports made free ones."""
    lines = []
    for line in block.splitlines():
        if line.strip() == "bash .ci/run":
            continue
        lines.append(re.sub(r"^pip install [^&]*&& ", "", line))
    text = "\n".join(lines)
    for port in ("8000", "7401", "7402"):
        text = re.sub(rf"(?<=[:\s]){port}\b", str(_free_port()), text)
    return text


def test_every_shell_block_is_tested():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    untested = [
        text.count("\n", 0, m.start()) + 1
        for m in re.finditer(r"^```sh\n", text, re.M)
        if not text[: m.start()].endswith("<!-- tested -->\n")
    ]
    assert not untested, f"README.md lines {untested}: a sh block without <!-- tested -->"


@pytest.mark.parametrize("index", [i for i, (k, _) in enumerate(_blocks()) if k == "sh"])
def test_cli_example(index: int, clone_dir: Path):
    _, block = _blocks()[index]
    assert qosnet_commands(block), block
    shim = clone_dir / "bin" / "qosnet"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m qosnet "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}"}
    for name in ("QOSNET_DB", "QOSNET_URL", "QOSNET_TOKEN", "QOSNET_AGENT_SOCKET"):
        env.pop(name, None)
    script = "set -euo pipefail\ntrap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n"
    done = subprocess.run(
        ["bash", "-c", script + runnable(block)],
        capture_output=True, text=True, timeout=600, env=env, cwd=clone_dir,
    )  # fmt: skip
    assert done.returncode == 0, f"{block}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


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

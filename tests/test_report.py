"""`qosnet report` (issue 25): a self-contained HTML page of a run or a sweep, and the same
beside a reproduction's report.md, checked in a real headless Chromium: the page renders,
every figure decodes, and nothing is fetched from the network.

The browser is Debian's `chromium-headless-shell` (or `chromium`), which `.ci/run` installs;
`QOSNET_CHROMIUM` names another. Screenshots go to `QOSNET_ARTIFACTS` (default: the test's
temporary directory) and their paths are printed.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from qosnet.cli import app

ROOT = Path(__file__).resolve().parents[1]
MESH8 = ROOT / "configs" / "examples" / "mesh8x8_uniform.toml"
ROUTER8 = ROOT / "configs" / "seed003" / "router8.toml"
SHORT = ["--set", "simulation.warmup=500", "--set", "simulation.measure=2000"]


def chromium() -> str:
    for name in (
        os.environ.get("QOSNET_CHROMIUM", ""),
        "chromium-headless-shell",
        "chromium",
        "chromium-browser",
        "google-chrome",
    ):
        if name and shutil.which(name):
            return shutil.which(name) or name
    pytest.fail(
        "no headless Chromium: apt-get install chromium-headless-shell (.ci/run does), "
        "or set QOSNET_CHROMIUM"
    )


def browse(page: Path, screenshot: Path) -> dict[str, int]:
    """Load `page` in headless Chromium, with the network off; the body's figure counts
    once loaded, and a screenshot."""
    base = [
        chromium(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        # every request outside the file itself fails: a page needing the network shows it
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--window-size=1100,2400",
    ]
    url = page.resolve().as_uri()
    dom = subprocess.run(
        [*base, "--dump-dom", url], capture_output=True, text=True, timeout=120, check=True
    ).stdout
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    attrs = dict(re.findall(r'data-([\w-]+)="(\d+)"', body.group(1)))
    subprocess.run(
        [*base, f"--screenshot={screenshot}", url], capture_output=True, timeout=120, check=True
    )
    print(f"screenshot of {page.name}: {screenshot}")
    assert screenshot.stat().st_size > 20_000
    return {k: int(v) for k, v in attrs.items()}


def not_blank(png: Path) -> float:
    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))
    return float(pixels[..., :3].std())


@pytest.fixture
def artifacts(tmp_path: Path) -> Path:
    out = Path(os.environ.get("QOSNET_ARTIFACTS", tmp_path / "artifacts"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def self_contained(html: str) -> None:
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    assert "<img" in html and "data:image/png;base64," in html


def test_a_sweep_report_in_a_browser(tmp_path, artifacts):
    out = tmp_path / "sweep"
    cli(
        "sweep", str(MESH8), "-o", str(out), "--axis", "traffic[0].load=0.1..0.5/3",
        "--axis", "router.input_buffer=4,8", *SHORT, "--find-saturation",
        "--bracket", "0.1..0.9/0.1", "-j", "2",
    )  # fmt: skip
    output = cli("report", str(out))
    assert "report.html" in output and "self-contained" in output
    html = (out / "report.html").read_text(encoding="utf-8")
    self_contained(html)
    for title in (
        "Latency against load",
        "Accepted against offered",
        "Latency by class",
        "Link utilisation",
        "Saturation",
    ):
        assert title in html, title
    shot = artifacts / "sweep_report.png"
    counts = browse(out / "report.html", shot)
    assert counts["figures"] >= 5 and counts["figures-ok"] == counts["figures"], counts
    assert not_blank(shot) > 0.05


def test_a_run_report_with_video_deadlines_in_a_browser(tmp_path, artifacts):
    run = tmp_path / "run"
    cli("run", str(ROUTER8), "-o", str(run), *SHORT, "--set", "simulation.measure=20000")
    cli("report", str(run))
    html = (run / "report.html").read_text(encoding="utf-8")
    self_contained(html)
    assert "Video deadlines by phase" in html and "flits/node/cycle" in html
    counts = browse(run / "report.html", artifacts / "run_report.png")
    assert counts["figures"] == 4 and counts["figures-ok"] == 4, counts


def test_a_reproduction_writes_the_same_page_beside_report_md(tmp_path, artifacts):
    import matplotlib

    from qosnet.report.page import markdown_page

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    fig.savefig(tmp_path / "fig.png")
    plt.close(fig)
    (tmp_path / "report.md").write_text(
        "# A set\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![the figure](fig.png)\n"
    )
    path = markdown_page(tmp_path / "report.md")
    html = path.read_text(encoding="utf-8")
    self_contained(html)
    assert "<table>" in html and "<h1>A set</h1>" in html
    counts = browse(path, artifacts / "reproduce_report.png")
    assert counts == {"figures": 1, "figures-ok": 1}


def test_report_of_a_directory_that_is_neither(tmp_path):
    result = CliRunner().invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 1
    assert "neither a run directory" in result.output

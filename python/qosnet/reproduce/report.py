"""What every reproduction's report.md shares: its head (the title, and a quick run's
warning), a section per experiment opening with the document's claim, and how the page is
written. The tables in it are `qosnet.tables`'."""

from __future__ import annotations

from pathlib import Path

from qosnet.reproduce.runner import Experiment
from qosnet.tables import write_text

__all__ = ["QUICK", "claim_section", "report_head", "write_report"]

#: Why a quick run's numbers carry no weight, as the engine's sets say it.
QUICK = "shortened simulated time; numbers without statistical weight"


def report_head(title: str, quick: bool, why: str = QUICK) -> list[str]:
    """The report's first lines: its title and, for a quick run, the warning."""
    lines = [f"# {title}", ""]
    if quick:
        lines += [f"*Quick run: {why}.*", ""]
    return lines


def claim_section(e: Experiment, document: str) -> list[str]:
    """An experiment's heading and the claim of `document` ("Document 003") it answers."""
    return [f"## {e.title}", "", f"**{document}:** {e.claim}", ""]


def write_report(out: Path, lines: list[str]) -> Path:
    """Write `out`/report.md, a line per item, and the same as a self-contained
    `report.html` (figures embedded); return the Markdown's path."""
    from qosnet.report.page import markdown_page

    path = write_text(out / "report.md", "\n".join(lines) + "\n")
    markdown_page(path)
    return path

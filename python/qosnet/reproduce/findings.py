"""FINDINGS.md as every scored reproduction writes it: a head saying how verdicts are
scored, the table of claims (claim, what the runs give, verdict), what changed since the
FINDINGS.md it replaces, and the notes kept beside it by hand (`notes.md`, carried in
verbatim so a re-run does not drop them; their numbers are not regenerated).

Why the change list: a verdict that flips between runs (another seed count, another
scoring) is itself a finding, and the previous file is the only record of the old one
that the new file can cite.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from qosnet.reproduce.runner import WALL_TIME
from qosnet.reproduce.scoring import LEVEL, Finding
from qosnet.tables import write_text

__all__ = ["SCORING", "previous_verdicts", "wall_time", "write_findings"]

#: How verdicts are scored (`qosnet.reproduce.scoring`), as FINDINGS states it.
SCORING = (
    f"Each claim is scored across seeds: the mean and {LEVEL:.0%} interval (Student's t) of "
    "each side and of their difference, paired by seed (runs of one seed draw the same "
    "traffic). **holds**: the difference's interval excludes zero in the claimed direction; "
    "**not**: it excludes zero the other way; **tie**: it contains zero. A claim over "
    "several mechanisms holds when each pairwise comparison does; a claim over a load range "
    "is scored at every load and says at how many it holds. **untestable at these loads**: "
    "the baseline never misses a deadline there. **not like for like**: the claimed side "
    "wins while refusing over 5% more of the traffic or delivering under 95% of the "
    "other's. **circular**: true by construction. **one seed, no interval**: measured with "
    "one seed only, so not scored. Numbers are means with their "
    "intervals in brackets."
)

#: The heading of the list of changed verdicts: those of the last re-run that changed any.
CHANGED = "## Verdicts changed (the last time any changed, against the FINDINGS.md before)"

_ROW = re.compile(r"^\|(?P<claim>[^|]+)\|(?P<here>.*)\|(?P<verdict>[^|]+)\|\s*$")


def previous_verdicts(path: Path) -> dict[str, str]:
    """Claim -> verdict of the first claims table (headed "| claim") in an existing
    FINDINGS.md: the first cell and the last (empty if there is no file). Only the first:
    notes carried in below it may quote an older table."""
    if not path.is_file():
        return {}
    out: dict[str, str] = {}
    claims = False
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if not m:
            if claims:
                break
            continue
        cell = m["claim"].strip()
        if not claims and cell.lower().startswith("claim"):
            claims = True
        elif claims and not set(cell) <= {"-", ":"}:
            out[cell] = m["verdict"].strip()
    return out


def _changes(
    old: dict[str, str],
    findings: Sequence[Finding],
    renamed: dict[str, str],
) -> list[str]:
    new = {c: v for c, _, v in findings}
    lines = []
    for c, v in new.items():
        was = c if c in old else renamed.get(c)
        if was in old and old[was] != v:
            name = c if was == c else f"{c} (before: {was})"
            lines.append(f"- {name}: {old[was]} → **{v}**")
    matched = {c if c in old else renamed.get(c) for c in new}
    gone = [c for c in old if c not in matched]
    added = [c for c in new if c not in old and renamed.get(c) not in old]
    if gone:
        lines.append("- scored no longer under the same name: " + "; ".join(gone))
    if added:
        lines.append("- new claims: " + "; ".join(added))
    return lines


def _last_changes(text: str) -> list[str]:
    """The changed-verdicts section of a FINDINGS.md, as its lines (empty if none)."""
    lines = text.splitlines()
    start = next((i for i, x in enumerate(lines) if x.startswith("## Verdicts changed")), None)
    if start is None:
        return []
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [CHANGED, *lines[start + 1 : end]]


def wall_time(out: Path) -> list[str]:
    """A section on what the runs cost, from `out`/wall_time.csv (a row per invocation of
    `qosnet reproduce`), or nothing without one."""
    import csv

    path = out / WALL_TIME
    if not path.is_file():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        return []
    lines = [
        "## Wall time",
        "",
        "Each invocation of `qosnet reproduce` that wrote these tables (runs executed, runs "
        "read back from `runs/`, the pool, its elapsed wall time, and the executed runs' "
        "own wall times summed, one core's time each):",
        "",
        "| finished (UTC) | quick | ran | read back | pool | elapsed | runs' own |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['finished_utc']} | {r['quick']} | {r['ran']} | {r['reused']} | {r['pool']} "
            f"| {_hms(r['elapsed_s'])} | {_hms(r['runs_s'])} |"
        )
    return [*lines, ""]


def _hms(seconds: str) -> str:
    s = int(float(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def write_findings(
    out: Path,
    title: str,
    intro: Sequence[str],
    findings: Sequence[Finding],
    quick: bool,
    document: str,
    renamed: dict[str, str] | None = None,
    sections: Sequence[str] = (),
    quick_why: str = "shortened simulated time; numbers without statistical weight",
) -> Path:
    """Write `out`/FINDINGS.md; return its path. `renamed`: a claim's name in the previous
    FINDINGS.md where it differs (several claims may split one old one); `sections`:
    lines after the claims table (headed sections of their own); `quick_why`: what a
    quick run's numbers lack. The wall time of the runs (`wall_time.csv`, written by
    `qosnet reproduce`) closes the generated part."""
    path = out / "FINDINGS.md"
    old = previous_verdicts(path)
    lines = [f"# {title}", ""]
    if quick:
        lines += [f"*Quick run: {quick_why}.*", ""]
    lines += [*intro, "", SCORING, ""]
    lines += [
        f"| claim (document {document}) | here | verdict |",
        "|---|---|---|",
        *[f"| {c} | {h} | {v} |" for c, h, v in findings],
        "",
        *sections,
    ]
    if sections and sections[-1]:
        lines.append("")
    lines += wall_time(out)
    changes = _changes(old, findings, renamed or {}) if old else []
    if changes:
        lines += [f"{CHANGED}", "", *changes, ""]
    elif path.is_file():
        # (nothing changed this time: the record of the last change stays)
        last = _last_changes(path.read_text(encoding="utf-8"))
        lines += [*last, ""] if last and last[-1] else last
    notes = out / "notes.md"
    if notes.is_file():
        lines += [notes.read_text(encoding="utf-8").rstrip(), ""]
    return write_text(path, "\n".join(lines))

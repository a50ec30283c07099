"""FINDINGS.md as the reproductions write it (`qosnet.reproduce.findings`): the verdicts
that changed against the file it replaces, kept until the next change, and notes carried in."""

from qosnet.reproduce.findings import CHANGED, previous_verdicts, write_findings


def _write(out, verdict: str, renamed=None):
    return write_findings(
        out, "T", ["intro"], [("claim a", "here", verdict), ("claim b", "x", "tie")], False, "000",
        renamed,
    )  # fmt: skip


def test_changed_verdicts_are_listed_and_kept_until_the_next_change(tmp_path):
    (tmp_path / "FINDINGS.md").write_text(
        "# old\n\n| claim | document | here | verdict |\n|---|---|---|---|\n"
        "| claim a | 1 | 2 | reproduced |\n| old claim | 1 | 2 | partly |\n\n"
        "| claim (a second table, in notes) | verdict |\n|---|---|\n| claim b | ignored |\n"
    )
    assert previous_verdicts(tmp_path / "FINDINGS.md") == {
        "claim a": "reproduced",
        "old claim": "partly",
    }
    text = _write(tmp_path, "holds").read_text()
    assert CHANGED in text
    assert "- claim a: reproduced → **holds**" in text
    assert "scored no longer under the same name: old claim" in text
    assert "new claims: claim b" in text
    # the same verdicts again: the record of the last change stays
    again = _write(tmp_path, "holds").read_text()
    assert again == text
    # a change against a renamed claim names both
    (tmp_path / "notes.md").write_text("## Notes\n\nby hand\n")
    third = _write(tmp_path, "not").read_text()
    assert "- claim a: holds → **not**" in third
    assert "reproduced" not in third and third.rstrip().endswith("by hand")


def test_a_renamed_claim_is_matched_to_its_old_name(tmp_path):
    (tmp_path / "FINDINGS.md").write_text(
        "| claim | here | verdict |\n|---|---|---|\n| the old name | x | reproduced |\n"
    )
    text = _write(tmp_path, "tie", {"claim a": "the old name"}).read_text()
    assert "- claim a (before: the old name): reproduced → **tie**" in text

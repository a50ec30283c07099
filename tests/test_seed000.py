"""Document 000 on a quick budget: admission control's and the congestion-control agents'
tables reach Python, and `qosnet reproduce seed000` writes its report and findings (Figs. 3
and 5; Fig. 4 needs the video traces, which tests do not read)."""

import re
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from qosnet.api import run
from qosnet.cli import app

REPO = Path(__file__).resolve().parents[1]
CONFIGS = REPO / "configs" / "seed000"
SHORT = ("simulation.warmup=1000", "simulation.measure=6000", "simulation.drain_limit=6000")


def test_admission_and_credit_tables_reach_python():
    r = run(
        CONFIGS / "mesh5x5_onoff.toml",
        (
            *SHORT,
            "mix.load=0.6",
            "endpoint.admission={ retry_after = 500, attempts = 2 }",
            'endpoint.agent={ kind = "credit", hca_messages = 16, best_effort = 6 }',
        ),
    )
    a = r.admission.set_index("class")
    rt = a.loc["real_time"]
    # every ON/OFF connection probed; each was admitted or refused (and maybe gave up)
    assert rt["probes"] >= 20 and rt["admitted"] + rt["refused"] == rt["probes"]
    assert rt["setup_us"] > 0 and 0.0 <= rt["refusal_rate"] <= 1.0
    assert a.loc["best_effort", "probes"] == 0
    c = r.congestion.iloc[0]
    assert c["retried"] <= c["dropped"]
    off = run(CONFIGS / "mesh5x5_onoff.toml", (*SHORT, "mix.load=0.2"))
    assert off.admission is None and off.congestion is None


def test_more_admitted_bandwidth_than_a_link_is_refused():
    # a reservation limit of 10% of a link admits ON/OFF connections of 0.8 x 0.5 = 0.4
    # nowhere: every probe is refused (at the source HCA's own link), none admitted
    r = run(
        CONFIGS / "mesh5x5_onoff.toml",
        (*SHORT, "mix.load=0.5", "endpoint.admission={ limit = 0.1, attempts = 1 }"),
    )
    rt = r.admission.set_index("class").loc["real_time"]
    assert rt["admitted"] == 0 and rt["refused"] == rt["probes"] > 0 and rt["gave_up"] > 0
    rt_flits = r.classes.set_index("class")
    assert "real_time" not in rt_flits.index or rt_flits.loc["real_time", "messages_delivered"] == 0


def test_reproduce_seed000_quick_writes_report_and_findings(tmp_path):
    out = tmp_path / "seed000"
    result = CliRunner().invoke(
        app,
        [
            "reproduce",
            "seed000",
            "--quick",
            "--only",
            "fig3",
            "--only",
            "fig5",
            "-j",
            "1",
            "-o",
            str(out),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "Document 000:" in report and "fig3_latency.png" in report
    assert (out / "fig3_latency.png").stat().st_size > 1000
    findings = (out / "FINDINGS.md").read_text()
    for claim in ("Fig. 3: credit-based (credit 2) beats ALO", "Fig. 5 (real_time): A+C best"):
        assert claim in findings
    # every verdict is the scoring's (qosnet.reproduce.scoring), per load where a claim
    # spans loads; a quick run has two seeds, so intervals exist
    verdict = re.compile(
        r"(holds|tie|not|untestable at these loads|not like for like|not measured)"
        r"( at all \d+ loads)?$|holds at \d+ of \d+ loads \(.*\)$"
    )
    rows = [line for line in findings.splitlines() if line.startswith("| Fig.")]
    assert rows and all(verdict.match(line.rstrip(" |").rsplit("| ", 1)[-1]) for line in rows), rows
    assert "95% interval (Student's t)" in findings
    s = pd.read_csv(out / "fig3_summary.csv")
    assert sorted(s["seed"].unique()) == [1, 2]
    # the intervals are in the lines: "mean [low, high]"
    assert re.search(r"none \d+ \[\d+, \d+\]", findings)
    assert set(s["scheme"]) == {
        "none",
        "ALO",
        "Self-Tuned",
        "credit 2",
        "credit 4",
        "credit 8",
        "credit 16",
    }
    a = pd.read_csv(out / "fig5_admission.csv")
    assert set(a["control"]) == {"A", "A+C"}


def test_rescore_rewrites_findings_from_the_tables_and_records_changed_verdicts(tmp_path):
    out = tmp_path / "seed000"
    argv = ["reproduce", "seed000", "--quick", "--only", "fig3", "-j", "1", "-o", str(out)]
    assert CliRunner().invoke(app, argv, catch_exceptions=False).exit_code == 0
    findings = out / "FINDINGS.md"
    first = findings.read_text()
    # a previous FINDINGS.md whose verdict differs: the rescored one names old and new
    claim = "Fig. 3: no congestion control has the lowest throughput"
    row = next(line for line in first.splitlines() if line.startswith(f"| {claim} |"))
    findings.write_text(first.replace(row, f"| {claim} | one seed | reproduced |"))
    (out / "fig3_latency.png").unlink()
    result = CliRunner().invoke(app, [*argv, "--rescore"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    again = findings.read_text()
    assert (out / "fig3_latency.png").is_file()  # written again, nothing run
    new = row.rstrip(" |").rsplit("| ", 1)[-1]
    assert f"- {claim}: reproduced → **{new}**" in again
    assert again.split("## Verdicts changed")[0].rstrip() == first.rstrip()
    # --seeds must name distinct seeds
    bad = CliRunner().invoke(app, [*argv, "--seeds", "1,1"])
    assert bad.exit_code != 0 and "distinct seeds" in bad.output

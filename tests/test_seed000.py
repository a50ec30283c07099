"""Document 000 on a quick budget: admission control's and the congestion-control agents'
tables reach Python, and `qosnet reproduce seed000` writes its report and findings (Figs. 3
and 5; Fig. 4 needs the video traces, which tests do not read)."""

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
    for claim in ("Fig. 3: credit-based beats ALO", "Fig. 5 (real_time): A+C best"):
        assert claim in findings
    verdicts = {"reproduced", "partly", "not reproduced", "not measured"}
    rows = [line for line in findings.splitlines() if line.startswith("| Fig.")]
    assert rows and all(line.rstrip(" |").rsplit("| ", 1)[-1] in verdicts for line in rows), rows
    s = pd.read_csv(out / "fig3_summary.csv")
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

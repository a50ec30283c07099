"""`qosnet reproduce seed002` (document 002: IBA CC and DRB) end to end on its quick budget,
and the DFS path sets' configuration errors as the Python side sees them."""

from pathlib import Path

import pytest
from typer.testing import CliRunner

from qosnet.cli import app

ROOT = Path(__file__).resolve().parents[1]


def test_reproduce_seed002_quick_writes_report_and_findings(tmp_path):
    out = tmp_path / "seed002"
    result = CliRunner().invoke(
        app,
        ["reproduce", "seed002", "--quick", "-j", "1", "-o", str(out)],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "Document 002:" in report and "fig10.png" in report
    assert (out / "report.html").exists() and (out / "fig8.png").stat().st_size > 1000
    findings = (out / "FINDINGS.md").read_text()
    for claim in ("35-50%", "75%", "alike"):
        assert claim in findings
    import pandas as pd

    curves = pd.read_csv(out / "fig8_curves.csv")
    assert set(curves["scheme"]) == {"none", "IBA CC", "DRB"}
    # the loads are reported against the saturation measured for no control
    assert (curves["saturation"] > 0).all()
    links = pd.read_csv(out / "fig10_links.csv")
    assert set(links["scheme"]) == {"none", "IBA CC", "DRB", "DRB + IBA CC"}
    # scored over the quick run's two seeds (`qosnet.reproduce.scoring`)
    assert set(links["seed"]) == {1, 2} and "95% interval" in findings
    # the victim-flow test: the hot spot's, the victims' and the total throughput
    victims = pd.read_csv(out / "victims_throughput.csv")
    assert {"hot_spot", "victims", "total"} <= set(victims.columns)
    assert set(victims["topology"]) == {"fat tree (4-ary 3-tree)", "8x8 torus"}
    assert "IBA CC, marking rate 0" in set(victims["scheme"])
    assert (victims["total"] - victims["hot_spot"] - victims["victims"]).abs().max() < 1e-9
    # the decomposition: DRB with one path against no control, with either VC release
    decompose = pd.read_csv(out / "decompose_table.csv")
    one = decompose[decompose["variant"] == "DRB, one path"]
    assert set(one["release"]) == {"tail_credit", "tail_sent"}
    # ... and DRB as it runs now, its LIDs sharing the VCs through an escape VC
    assert "DRB, escape VC (marking rate 10)" in set(decompose["variant"])
    assert "Decomposition (issue 36)" in findings
    # beyond the documents: DCQCN beside no control and IBA CC on the same workloads
    dcqcn = pd.read_csv(out / "dcqcn_hot_spot_links.csv")
    assert set(dcqcn["scheme"]) == {"none", "IBA CC", "DCQCN", "DRB + DCQCN"}
    dv = pd.read_csv(out / "dcqcn_victims_throughput.csv")
    assert set(dv["scheme"]) == {"none", "IBA CC", "DCQCN", "DRB + DCQCN"}
    assert "DCQCN keeps the victims' throughput above IBA CC's" in findings
    assert "DRB + DCQCN keeps the victims' throughput above DCQCN's" in findings
    # --only would report the hot spots from tables OUTPUT does not keep: refused before
    # any run (it ran every run, then failed in the report)
    again = CliRunner().invoke(
        app, ["reproduce", "seed002", "--quick", "--only", "fig8", "-o", str(out)]
    )
    assert again.exit_code == 2 and "link_series" in again.output, again.output
    assert "--resume" in again.output


def test_lmc_errors_name_the_field():
    from qosnet.api import run

    with pytest.raises(Exception) as e:
        run(ROOT / "configs" / "seed002" / "mesh8x4.toml", ("routing.lmc=8",))
    assert "routing.lmc" in str(e.value) and "0..=7" in str(e.value)
    with pytest.raises(Exception) as e:
        run(ROOT / "configs" / "seed002" / "torus8x8.toml", ("router.vcs=2",))
    assert "routing.lmc" in str(e.value) and "deadlock" in str(e.value)
    # the escape VC needs dimension order's dateline pair and a VC for the paths
    with pytest.raises(Exception) as e:
        run(
            ROOT / "configs" / "seed002" / "torus8x8.toml",
            ('routing.lid_vcs="escape"', "router.vcs=2"),
        )
    assert "router.vc_classes" in str(e.value) and "3 per class" in str(e.value)

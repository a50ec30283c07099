"""Reproduce the documents' experiments: `qosnet reproduce NAME` runs a named set of
configurations (shipped under `configs/NAME/`), collects their tables into one DataFrame per
table with the run's labels as columns, and writes tables (Parquet and CSV), plots (PNG) and
a Markdown report that sets each result beside the document's claim.

The sets and what each reproduces: `SETS`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from qosnet.reproduce.runner import Experiment, Run, run_experiments

__all__ = ["SETS", "Experiment", "Run", "run_experiments"]

#: Name -> (module defining `experiments(quick: bool) -> list[Experiment]` and
#: `report(...)`, what the set reproduces). The CLI's help lists these, so this table is
#: kept free of heavy imports (`qosnet --help` loads it).
SETS: dict[str, tuple[str, str]] = {
    "seed000": ("qosnet.reproduce.seed000", "document 000: admission and congestion control"),
    "seed001": ("qosnet.reproduce.seed001", "document 001: the QoS middleware, on the engine"),
    "seed002": ("qosnet.reproduce.seed002", "document 002: InfiniBand CC and DRB"),
    "seed003": ("qosnet.reproduce.seed003", "document 003: the QoS router"),
    "seed003-nic": ("qosnet.reproduce.seed003_nic", "document 003 §5.3: the router with NICs"),
    "seed004": ("qosnet.reproduce.seed004", "document 004: NIC-based rate control"),
    # document 004 on real sockets: the data plane's namespace cluster, not the engine
    "seed004-real": (
        "qosnet.dataplane.reproduce",
        "document 004 on real sockets: namespaces, veth and tc; root for namespaces",
    ),
}


def __getattr__(name: str) -> Any:
    # The runner (pandas, the pool) loads only when a set runs.
    if name in ("Experiment", "Run", "run_experiments"):
        from qosnet.reproduce import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Reproduce the documents' experiments: `qosnet reproduce NAME` runs a named set of
configurations (shipped under `configs/NAME/`), collects their tables into one DataFrame per
table with the run's labels as columns, and writes tables (Parquet and CSV), plots (PNG) and
a Markdown report that sets each result beside the document's claim.

Sets: `seed000` (document 000: admission and congestion control), `seed001` (document 001:
the QoS middleware, on the engine), `seed002` (document 002: IBA CC and DRB),
`seed003` (document 003: the QoS router), `seed003-nic`
(document 003 §5.3: the router with NICs), `seed004` (document 004: NIC-based rate control).
"""

from qosnet.reproduce.runner import Experiment, Run, run_experiments

__all__ = ["SETS", "Experiment", "Run", "run_experiments"]


def _sets() -> dict[str, str]:
    return {
        "seed000": "qosnet.reproduce.seed000",
        "seed001": "qosnet.reproduce.seed001",
        "seed002": "qosnet.reproduce.seed002",
        "seed003": "qosnet.reproduce.seed003",
        "seed003-nic": "qosnet.reproduce.seed003_nic",
        "seed004": "qosnet.reproduce.seed004",
        # document 004 on real sockets: the data plane's namespace cluster, not the engine
        "seed004-real": "qosnet.dataplane.reproduce",
    }


#: Name -> module defining `experiments(quick: bool) -> list[Experiment]` and `report(...)`.
SETS = _sets()

"""Document 001's evaluation (§4.2-4.4) on the packet-level engine.

§4.2's rate-control experiments run application models (`qosnet.profiler.models`) on the
engine (`rate_control`). For §4.3-4.4 each run generates a request stream (`workload`),
takes the middleware's decisions on it (translator and resource allocator: `fluid.run_qos`)
and runs every job on the engine twice (`engine_eval`): with the middleware (admitted jobs,
their reservations, NIC rate control) and without it (every job, no reservations). The
metrics are the document's three (§4.4.3), for admitted jobs:

1. improvement (T_noqos - T_qos) / T_qos (Tables 4.1, 4.2);
2. difference from the expected time (T_actual - T_expected) / T_expected, with and
   without the middleware (Figures 4.15, 4.16); T_expected is the time the middleware
   promised (the profiled time of the point it granted). The request's own bound t2 is
   reported too: the document's formula names the "requested response time";
3. admission rate N_admitted / N_total (Figure 4.17).

The profiles are the profiler's (`middleware/data/profiled.json`, measured on the same
engine), and the workload's task sizes, subtask gaps and requested times are choices the
document leaves open (see `workload`), so the numbers are the models', not the document's.

- `workload`: the evaluation's request stream, tasks of subtasks at random times (§4.3);
- `fluid`: the middleware's decisions on the stream (`run_qos`), and a fluid model of the
  cluster (max-min fair sharing) that the engine runs replaced; kept for comparison;
- `rate_control`: §4.2 (Figs. 4.1-4.2, 4.4, 4.6-4.7);
- `engine_eval`: the stream's jobs on the engine, with and without the middleware;
- `evaluation`: the set's settings, runs, metrics and report.

These are the evaluation's, not the product's: the middleware itself (`qosnet.middleware`,
served by `qosnet serve`) neither needs nor imports them.
"""

# The set's interface, as `qosnet reproduce` and the tests use it.
from qosnet.reproduce.seed001.claims import rescore
from qosnet.reproduce.seed001.evaluation import (
    SELF_RUN,
    Setting,
    experiments,
    report,
    run,
    run_all,
    run_setting,
    settings,
    summarise,
)

__all__ = [
    "SELF_RUN",
    "Setting",
    "experiments",
    "report",
    "rescore",
    "run",
    "run_all",
    "run_setting",
    "settings",
    "summarise",
]

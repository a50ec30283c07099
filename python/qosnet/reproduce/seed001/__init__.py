"""Document 001's middleware evaluation (§4.3-4.4), on a fluid model of its cluster.

Not engine simulations: each run generates a request stream (`workload`, §4.3) and plays
it twice through `fluid`, with the QoS middleware (translator and resource allocator,
reserved bandwidth) and without it (every job runs, flows share links max-min fairly).
The metrics are the document's three (§4.4.3), for admitted jobs:

1. improvement (T_noqos - T_qos) / T_qos (Tables 4.1, 4.2);
2. difference from the expected time (T_actual - T_expected) / T_expected, with and
   without the middleware (Figures 4.15, 4.16); T_expected is the time the middleware
   promised (the profiled time of the point it granted). The request's own bound t2 is
   reported too: the document's formula names the "requested response time";
3. admission rate N_admitted / N_total (Figure 4.17).

The profiles are the illustrative ones of `middleware/data` (not measurements), and the
workload's task sizes, subtask gaps and requested times are choices the document leaves
open (see `workload`), so the numbers are the model's, not the document's.

- `workload`: the evaluation's request stream, tasks of subtasks at random times (§4.3);
- `fluid`: a fluid model of the cluster running that stream with and without the
  middleware, flows sharing links max-min fairly without it (§4.4);
- `evaluation`: the set's settings, runs, metrics and report.

These are the evaluation's, not the product's: the middleware itself (`qosnet.middleware`,
served by `qosnet serve`) neither needs nor imports them.
"""

# The set's interface, as `qosnet reproduce` and the tests use it.
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
    "run",
    "run_all",
    "run_setting",
    "settings",
    "summarise",
]

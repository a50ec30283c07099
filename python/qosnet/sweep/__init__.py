"""Parameter sweeps (`qosnet sweep`): a base configuration, axes of values and seeds, every
point run once (cached by the hash of its resolved configuration), one tidy table; and the
saturation load of each curve by bisection.

- `spec`: the sweep file and `--axis` syntax, and the points they expand to;
- `run`: keys, the cache of run directories, running on a `qosnet.pool.Pool`, the table;
- `saturation`: the bisection search.
"""

from qosnet.sweep.run import SweepOutcome, run_sweep
from qosnet.sweep.saturation import find_saturation
from qosnet.sweep.spec import Axis, Saturation, Sweep, SweepError, parse_axis, read_sweep

__all__ = [
    "Axis",
    "Saturation",
    "Sweep",
    "SweepError",
    "SweepOutcome",
    "find_saturation",
    "parse_axis",
    "read_sweep",
    "run_sweep",
]

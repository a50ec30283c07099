"""qosnet: a flit-level simulator of QoS-capable interconnects, with a Python front.

`run` simulates one configuration and returns DataFrames; `load_config` reads a
configuration and applies `path=value` overrides; `validate` lists its problems and
`estimate_memory` says what a run of it needs. Every error the engine raises derives from
`QosnetError` (an `Exception`), a bug in the engine included (`InternalError`). The engine
is Rust (`qosnet._core`).
`run` and `RunResult` are imported on first use, so that `import qosnet` (and the CLI's
`validate`) does not pay for pandas and pyarrow.
"""

from typing import TYPE_CHECKING, Any

from qosnet._core import (
    AdmissionRefused,
    CallAdmission,
    ConfigError,
    DeadlockError,
    InternalError,
    QosnetError,
    SimulationError,
    __version__,
)
from qosnet.config import (
    LoadedConfig,
    MemoryEstimate,
    OverrideError,
    estimate_memory,
    load_config,
    validate,
)

if TYPE_CHECKING:
    from qosnet.api import TimeLimitError, run
    from qosnet.results import RunResult

__all__ = [
    "AdmissionRefused",
    "CallAdmission",
    "ConfigError",
    "DeadlockError",
    "InternalError",
    "LoadedConfig",
    "MemoryEstimate",
    "OverrideError",
    "QosnetError",
    "RunResult",
    "SimulationError",
    "TimeLimitError",
    "__version__",
    "estimate_memory",
    "load_config",
    "run",
    "validate",
]


def __dir__() -> list[str]:
    """The public names (`run` and `RunResult` included, though imported on first use)."""
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    value: Any
    if name == "run":
        from qosnet.api import run

        value = run
    elif name == "RunResult":
        from qosnet.results import RunResult

        value = RunResult
    elif name == "TimeLimitError":
        from qosnet.api import TimeLimitError

        value = TimeLimitError
    else:
        raise AttributeError(f"module 'qosnet' has no attribute {name!r}")
    globals()[name] = value
    return value

"""Type stubs for the Rust engine bindings (checked by `mypy.stubtest` in CI)."""

from typing import Any, final

__all__ = [
    "ConfigError",
    "DeadlockError",
    "QosnetError",
    "Simulation",
    "SimulationError",
    "validate",
    "__version__",
]
__version__: str

class QosnetError(Exception):
    """Base of every qosnet engine error."""

class ConfigError(QosnetError, ValueError):
    """A configuration is invalid; `.errors` lists (path, message) pairs."""

    errors: list[tuple[str, str]]

class SimulationError(QosnetError):
    """A valid configuration failed while running."""

class DeadlockError(SimulationError):
    """No flit moved for the watchdog period; `.stuck` names the occupied VCs."""

    stuck: list[str]

@final
class Simulation:
    """A simulation built from a configuration (TOML or JSON text)."""

    def __new__(cls, text: str, fmt: str = "toml", base_dir: str | None = None) -> Simulation: ...
    @property
    def now(self) -> int: ...
    @property
    def window_end(self) -> int: ...
    @property
    def finished(self) -> bool: ...
    @property
    def flit_counts(self) -> tuple[int, int, int]: ...
    def advance(self, max_cycles: int) -> bool: ...
    def run(self) -> None: ...
    def check_invariants(self) -> None: ...
    def resolved_config(self) -> str: ...
    def result(self) -> dict[str, Any]: ...

def validate(
    text: str, fmt: str = "toml", base_dir: str | None = None
) -> list[tuple[str, str]]: ...

"""Run one configuration to the end and hand back its results.

The engine runs in chunks (`Simulation.advance`) rather than in one `run()` call so that a
progress callback can be fed and Ctrl-C is noticed between chunks; the chunk length adapts
to about a tenth of a second of work. Chunking does not change the results: the engine
stops and resumes at any cycle.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from qosnet._core import SimulationError
from qosnet.config import LoadedConfig, load_config, set_path, simulation
from qosnet.results import RunResult

__all__ = ["Progress", "RunResult", "TimeLimitError", "run"]


class TimeLimitError(SimulationError):
    """The run took longer than `[simulation] time_limit` of wall-clock time. `.result` is
    what it measured so far (a partial run: its summary says `"stopped": "time_limit"`)."""

    def __init__(self, message: str, result: RunResult) -> None:
        super().__init__(message)
        self.result = result


#: Called after every chunk with (cycles simulated so far, end of the measurement window).
#: The first may exceed the second while the run drains the last measured messages.
Progress = Callable[[int, int], None]

_CHUNK_SECONDS = 0.1
_MIN_CHUNK, _MAX_CHUNK = 64, 1 << 24


def run(
    config: str | os.PathLike[str] | Mapping[str, Any] | LoadedConfig,
    overrides: Iterable[str] | str = (),
    progress: Progress | None = None,
    record_messages: bool | None = None,
) -> RunResult:
    """Simulate `config` (a path, TOML text, a dict or a LoadedConfig; see `load_config`)
    with `path=value` overrides applied, until every measured message is delivered or the
    drain limit is reached, or `[simulation] time_limit` of wall-clock time has passed
    (TimeLimitError, carrying the results so far).

    `overrides` is an iterable of `path=value` strings, or one such string.
    `record_messages` overrides `simulation.record_messages` when not None (True or False;
    anything else is a TypeError). Raises ConfigError (OverrideError for a bad override)
    before simulating, SimulationError (DeadlockError when no flit moves) while simulating.
    """
    if record_messages is not None and not isinstance(record_messages, bool):
        raise TypeError(
            f"record_messages: must be True, False or None, got {type(record_messages).__name__}"
        )
    loaded = load_config(config, overrides)
    if record_messages is not None:
        try:
            set_path(loaded.data, "simulation.record_messages", record_messages)
        except ValueError:
            pass  # `simulation` is not a table: the engine reports that with its own path
    sim = simulation(loaded)
    target = sim.window_end
    limit = sim.time_limit
    start = time.perf_counter()
    chunk = 1024
    while True:
        t0 = time.perf_counter()
        finished = sim.advance(chunk)
        if progress is not None:
            progress(sim.now, target)
        if finished:
            break
        elapsed = time.perf_counter() - start
        if limit is not None and elapsed > limit:
            partial = RunResult.from_engine(sim.result(), sim.resolved_config(), elapsed)
            partial.summary["stopped"] = "time_limit"
            raise TimeLimitError(
                f"stopped at cycle {sim.now:,} of {target:,} (the measurement window's end) "
                f"after {elapsed:.1f} s of wall-clock time, past simulation.time_limit "
                f"({limit:g} s); the results so far are kept (a partial run)",
                partial,
            )
        chunk = _next_chunk(chunk, time.perf_counter() - t0)
    raw = sim.result()
    wall = time.perf_counter() - start
    return RunResult.from_engine(raw, sim.resolved_config(), wall)


def _next_chunk(chunk: int, seconds: float) -> int:
    """Scale the chunk toward _CHUNK_SECONDS of work, at most 4x per step either way."""
    scale = _CHUNK_SECONDS / max(seconds, 1e-6)
    scale = min(max(scale, 0.25), 4.0)
    return int(min(max(chunk * scale, _MIN_CHUNK), _MAX_CHUNK))

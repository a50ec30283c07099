"""Speed of the engine on fixed configurations (ARCHITECTURE.md "Speed is measured").

Each configuration runs in a fresh Python process (`python -m qosnet.bench`, reading a job
on stdin and writing one JSON line): peak memory (`getrusage` maxrss) is a high-water mark
of the whole process, so only a process of its own gives each configuration an honest
number, and no configuration runs in the wake of another's heap. The worker imports only
the engine, not pandas.

Wall time covers the simulation only (building it is `setup_seconds`); delivered flits and
flit-hops count the whole run, warm-up included, like BookSim2's figures in
configs/bench/README.md.

`booksim_one` runs BookSim2 (a binary the user built; it is not shipped) on the same network
(`configs/bench/booksim2/<name>.cfg` beside `<name>.toml`), right after qosnet, so the two are
compared in the same minutes: this machine kind's speed drifts by a third from hour to hour,
and a ratio against numbers measured at another time means little. With several rounds
(`compare`), each round runs qosnet and then BookSim2, and the multiple reported is the median
of the rounds' multiples: each is a ratio of two runs made back to back, so the drift between
rounds cancels out of it, where a ratio of the two sides' medians would mix rounds.
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from qosnet import _core
from qosnet.config import LoadedConfig, load_config, simulation
from qosnet.config_errors import config_error

__all__ = [
    "BenchResult",
    "BooksimResult",
    "Comparison",
    "bench",
    "booksim_input",
    "booksim_one",
    "compare",
    "default_configs",
    "find_bench_dir",
]


def _per_second(n: float, seconds: float) -> float:
    return n / seconds if seconds > 0 else float("inf")


@dataclass(frozen=True)
class BenchResult:
    """The speed of one configuration."""

    config: str
    cycles: int
    finished: bool
    setup_seconds: float
    wall_seconds: float
    flits_injected: int
    flits_delivered: int
    flit_hops: int
    #: Peak resident memory of the process that ran the configuration, in bytes.
    peak_rss_bytes: int

    def _per_second(self, n: int) -> float:
        return _per_second(n, self.wall_seconds)

    @property
    def cycles_per_second(self) -> float:
        return self._per_second(self.cycles)

    @property
    def flits_per_second(self) -> float:
        """Delivered flits per second."""
        return self._per_second(self.flits_delivered)

    @property
    def flit_hops_per_second(self) -> float:
        return self._per_second(self.flit_hops)

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "cycles_per_second": self.cycles_per_second,
            "flits_per_second": self.flits_per_second,
            "flit_hops_per_second": self.flit_hops_per_second,
        }


@dataclass(frozen=True)
class BooksimResult:
    """BookSim2's speed on one input: its whole process, like qosnet's run (set-up aside)."""

    input: str
    cycles: int
    wall_seconds: float
    #: Nodes of its network (k ** n) times its accepted flit rate (flits/node/cycle).
    flits_per_cycle: float

    @property
    def cycles_per_second(self) -> float:
        return _per_second(self.cycles, self.wall_seconds)

    @property
    def flits_per_second(self) -> float:
        """Delivered flits per second (the measurement window's rate over the whole run)."""
        return self.flits_per_cycle * self.cycles_per_second

    def to_dict(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "cycles_per_second": self.cycles_per_second,
            "flits_per_second": self.flits_per_second,
        }


def booksim_input(config: str | os.PathLike[str]) -> Path | None:
    """BookSim2's input for a benchmark configuration: `booksim2/<name>.cfg` beside it."""
    path = Path(config)
    found = path.parent / "booksim2" / f"{path.stem}.cfg"
    return found if found.is_file() else None


def _booksim_nodes(text: str, where: Path) -> int:
    """Nodes of a BookSim2 input's network (its accepted rate is per node): k ** n on a mesh
    or torus, BookSim2's dragonflynew of `k` as `booksim_cfg` reads it."""
    from qosnet import booksim_cfg  # (not in the worker: it imports the engine alone)

    topology = re.search(r"^\s*topology\s*=\s*(\w+)\s*;", text, re.MULTILINE)
    kind = topology.group(1) if topology else None
    if kind in ("mesh", "torus"):
        return _cfg_int(text, "k", where) ** _cfg_int(text, "n", where)
    if kind == "dragonflynew":
        return booksim_cfg.nodes(booksim_cfg.dragonfly_shape(_cfg_int(text, "k", where)))
    raise _core.QosnetError(
        f"{where}: only mesh, torus and dragonflynew inputs are compared (to count the nodes)"
    )


def _cfg_int(text: str, key: str, where: Path) -> int:
    m = re.search(rf"^\s*{key}\s*=\s*(\d+)\s*;", text, re.MULTILINE)
    if m is None:
        raise _core.QosnetError(f"{where}: no `{key} = N;` (needed to count the nodes)")
    return int(m.group(1))


def booksim_one(
    booksim: str | os.PathLike[str], cfg: str | os.PathLike[str], timeout: float = 3600.0
) -> BooksimResult:
    """Run BookSim2 binary `booksim` on input `cfg` once and read its speed from its output
    ("Time taken is N cycles", the overall "Accepted flit rate average = X"). Its exit
    status is not read: BookSim2's `main` returns -1 when it succeeds. A run longer than
    `timeout` seconds is stopped and reported."""
    cfg = Path(cfg)
    nodes = _booksim_nodes(cfg.read_text(), cfg)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            [str(booksim), str(cfg)], capture_output=True, text=True, check=False, timeout=timeout
        )
    except OSError as e:
        raise _core.QosnetError(f"--booksim {booksim}: {e.strerror or e}") from None
    except subprocess.TimeoutExpired:
        raise _core.QosnetError(
            f"--booksim {booksim}: still running on {cfg.name} after {timeout:g} s; stopped"
        ) from None
    wall = time.perf_counter() - t0
    cycles = re.findall(r"^Time taken is (\d+) cycles", proc.stdout, re.MULTILINE)
    rate = re.findall(
        r"^Accepted flit rate average = ([0-9.eE+-]+) \(\d+ samples\)", proc.stdout, re.MULTILINE
    )
    if not cycles or not rate:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        raise _core.QosnetError(
            f"--booksim {booksim}: no 'Time taken is N cycles' and overall 'Accepted flit rate "
            f"average' in its output on {cfg.name} (exit {proc.returncode}): " + " | ".join(tail)
        )
    return BooksimResult(
        input=str(cfg),
        cycles=int(cycles[-1]),
        wall_seconds=wall,
        flits_per_cycle=float(rate[-1]) * nodes,
    )


def _median_run(runs: Sequence[Any]) -> Any:
    """The run of median speed (cycles/s; of an even count, the slower of the middle two)."""
    return sorted(runs, key=lambda r: r.cycles_per_second)[(len(runs) - 1) // 2]


@dataclass(frozen=True)
class Comparison:
    """One configuration measured over rounds: qosnet's runs and, where BookSim2 has an input
    for it, BookSim2's run right after each of them."""

    runs: tuple[BenchResult, ...]
    rivals: tuple[BooksimResult, ...] | None

    @property
    def run(self) -> BenchResult:
        """qosnet's run of median speed."""
        return _median_run(self.runs)

    @property
    def rival(self) -> BooksimResult | None:
        """BookSim2's run of median speed."""
        return _median_run(self.rivals) if self.rivals else None

    @property
    def multiples(self) -> list[float] | None:
        """Per round, qosnet's cycles/s over BookSim2's (= delivered flits/s over BookSim2's,
        on the same network and load)."""
        if not self.rivals:
            return None
        return [
            q.cycles_per_second / b.cycles_per_second
            for q, b in zip(self.runs, self.rivals, strict=True)
        ]

    @property
    def multiple(self) -> float | None:
        """The median of the rounds' multiples."""
        m = self.multiples
        return statistics.median(m) if m else None

    def to_dict(self) -> dict[str, Any]:
        """The median run's fields (as `BenchResult.to_dict`), then every round's."""
        row = self.run.to_dict()
        row["rounds"] = [r.to_dict() for r in self.runs]
        if self.rivals is not None:
            row["booksim"] = self.rival.to_dict() if self.rival else None
            row["booksim_rounds"] = [b.to_dict() for b in self.rivals]
            row["times_booksim"] = self.multiple
            row["times_booksim_rounds"] = self.multiples
        return row


def compare(
    config: str | os.PathLike[str],
    rounds: int = 1,
    cycles: int | None = None,
    overrides: Iterable[str] = (),
    booksim: str | os.PathLike[str] | None = None,
    on_step: Callable[[str], Any] | None = None,
) -> Comparison:
    """Benchmark `config` `rounds` times (`bench_one`), with `booksim` (a BookSim2 binary) run
    on its input (`booksim_input`) right after each round's run where it has one.
    `on_step(what)` is told what is about to run (for a progress display)."""
    if rounds < 1:
        raise ValueError(f"rounds: must be >= 1, got {rounds}")
    overrides = tuple(overrides)
    name = Path(config).name
    rival_input = booksim_input(config) if booksim is not None else None
    runs: list[BenchResult] = []
    # (empty, not None, when BookSim2 was asked for but has no input here)
    rivals: list[BooksimResult] | None = [] if booksim is not None else None
    for i in range(rounds):
        of = f" (round {i + 1} of {rounds})" if rounds > 1 else ""
        if on_step:
            on_step(f"benchmarking {name}{of}")
        runs.append(bench_one(config, cycles, overrides))
        if booksim is not None and rivals is not None and rival_input is not None:
            if on_step:
                on_step(f"BookSim2 on {rival_input.name}{of}")
            rivals.append(booksim_one(booksim, rival_input))
    return Comparison(runs=tuple(runs), rivals=None if rivals is None else tuple(rivals))


def find_bench_dir(start: Path | None = None) -> Path | None:
    """configs/bench under the working directory or the repository this package sits in."""
    here = Path(__file__).resolve()
    candidates = [
        (start or Path.cwd()) / "configs" / "bench",
        here.parents[2] / "configs" / "bench",
    ]
    return next((c for c in candidates if c.is_dir()), None)


def default_configs(directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Every `*.toml` in `directory` (default: `find_bench_dir()`), sorted by name."""
    found = Path(directory) if directory is not None else find_bench_dir()
    if found is None:
        raise FileNotFoundError("no configs/bench directory found; name configs or pass --dir")
    if not found.is_dir():
        raise FileNotFoundError(f"{found} is not a directory")
    return sorted(found.glob("*.toml"))


def bench(
    configs: Iterable[str | os.PathLike[str]],
    cycles: int | None = None,
    overrides: Iterable[str] = (),
) -> list[BenchResult]:
    """Benchmark each configuration in its own process; `cycles` caps each run, and
    `overrides` (like `simulation.measure=300000`) apply to each."""
    overrides = tuple(overrides)
    return [bench_one(c, cycles, overrides) for c in configs]


def bench_one(
    config: str | os.PathLike[str], cycles: int | None = None, overrides: Iterable[str] = ()
) -> BenchResult:
    """Benchmark one configuration file in a fresh process. Raises what a run would."""
    loaded = load_config(config, overrides)  # read and parsed here: errors surface here
    job = {
        "config": loaded.data,
        "base_dir": str(loaded.base_dir) if loaded.base_dir else None,
        "cycles": cycles,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "qosnet.bench"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        reply = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = proc.stderr.strip().splitlines()[-5:]
        raise _core.QosnetError(
            f"benchmark worker for {config} failed (exit {proc.returncode}): " + " | ".join(tail)
        ) from None
    if "error" in reply:
        raise _rebuild_error(reply)
    return BenchResult(config=str(config), **reply)


def _measure(loaded: LoadedConfig, cycles: int | None) -> dict[str, Any]:
    """Run one configuration in this process and measure it (the worker's job)."""
    import resource

    t0 = time.perf_counter()
    sim = simulation(loaded)
    t1 = time.perf_counter()
    if cycles is None:
        sim.run()
    else:
        sim.advance(cycles)
    t2 = time.perf_counter()
    injected, ejected, hops = sim.flit_counts
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "cycles": sim.now,
        "finished": sim.finished,
        "setup_seconds": t1 - t0,
        "wall_seconds": t2 - t1,
        "flits_injected": injected,
        "flits_delivered": ejected,
        "flit_hops": hops,
        "peak_rss_bytes": rss if sys.platform == "darwin" else rss * 1024,
    }


def _rebuild_error(reply: dict[str, Any]) -> Exception:
    kind, message = reply["error"], reply["message"]
    if kind == "ConfigError":
        return config_error([tuple(e) for e in reply["errors"]])
    cls = getattr(_core, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, _core.QosnetError)):
        cls = _core.QosnetError
    err: Any = cls(message)  # (a DeadlockError carries its stuck VCs)
    if kind == "DeadlockError":
        err.stuck = reply["stuck"]
        err.waits_for = reply["waits_for"]
    return err


def _worker() -> int:
    job = json.loads(sys.stdin.read())
    base_dir = Path(job["base_dir"]) if job["base_dir"] else None
    try:
        reply = _measure(LoadedConfig(job["config"], base_dir), job["cycles"])
    except _core.ConfigError as e:
        reply = {"error": "ConfigError", "message": str(e), "errors": e.errors}
    except _core.QosnetError as e:
        reply = {
            "error": type(e).__name__,
            "message": str(e),
            "stuck": getattr(e, "stuck", []),
            "waits_for": getattr(e, "waits_for", []),
        }
    print(json.dumps(reply))
    return 0


if __name__ == "__main__":
    sys.exit(_worker())

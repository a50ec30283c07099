"""Where independent runs execute: this machine's processes, or a Dask distributed cluster.

One code path for `qosnet sweep` and `qosnet reproduce` (issue 25): `map_unordered` calls a
module-level function on each item and yields `(index, Outcome)` as each finishes, so the
caller shows progress as results come back, and orders what it keeps by index so that the
output does not depend on which worker finished first. A failed item is an `Outcome` with
the error's text, not an exception: the other items go on.

- `Pool(jobs=1)`: in this process, one item after another (no pickling; a debugger works).
- `Pool(jobs=N)`: N local processes (default: one per core).
- `Pool(scheduler="tcp://host:8786")`, or the `DASK_SCHEDULER_ADDRESS` environment variable:
  items are tasks on that Dask scheduler's workers, which must have qosnet installed and
  see the files the configurations name (traces, fabric dumps) at the same paths. The
  results travel back to this process, which writes every output file.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "Pool", "map_unordered"]

#: The environment variable Dask itself reads for the scheduler's address.
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"


@dataclass(frozen=True)
class Pool:
    """Local processes (`jobs`, default all cores) or a Dask scheduler's address."""

    jobs: int | None = None
    scheduler: str | None = None

    @classmethod
    def from_options(cls, jobs: int | None = None, scheduler: str | None = None) -> Pool:
        """The CLI's `-j` and `--scheduler`; with neither, DASK_SCHEDULER_ADDRESS if set."""
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs: must be >= 1, got {jobs}")
        if scheduler and jobs is not None:
            raise ValueError("jobs: the Dask cluster's workers decide; give -j or --scheduler")
        if jobs is None and not scheduler:
            scheduler = os.environ.get(SCHEDULER_ENV) or None
        return cls(jobs=jobs, scheduler=scheduler)

    def describe(self) -> str:
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        n = self.jobs or os.cpu_count() or 1
        return f"{n} local process{'es' if n != 1 else ''}"


@dataclass(frozen=True)
class Outcome:
    """An item's result, or the error it raised (`error`: one line; `detail`: traceback)."""

    value: Any = None
    error: str | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _guarded(fn: Callable[[Any], Any], item: Any) -> Outcome:
    # Runs where the item runs (a worker process), so the error travels back as text: an
    # exception type the client cannot unpickle never hides which item failed, or why.
    try:
        return Outcome(value=fn(item))
    except Exception as e:  # noqa: BLE001 - reported per item; the others go on
        return Outcome(error=f"{type(e).__name__}: {e}", detail=traceback.format_exc())


def map_unordered(
    fn: Callable[[Any], Any], items: Sequence[Any], pool: Pool
) -> Iterator[tuple[int, Outcome]]:
    """`fn(item)` for every item on `pool`, yielded as `(index, Outcome)` as they finish."""
    if not items:
        return
    if pool.scheduler:
        yield from _dask(fn, items, pool.scheduler)
        return
    jobs = min(pool.jobs or os.cpu_count() or 1, len(items))
    if jobs == 1:
        for i, item in enumerate(items):
            yield i, _guarded(fn, item)
        return
    with ProcessPoolExecutor(max_workers=jobs) as executor:
        futures = {executor.submit(_guarded, fn, item): i for i, item in enumerate(items)}
        try:
            for future in as_completed(futures):
                yield futures[future], future.result()
        except BaseException:
            # interrupted (Ctrl-C) or the caller stopped reading: queued items never start
            for future in futures:
                future.cancel()
            raise


def _dask(
    fn: Callable[[Any], Any], items: Sequence[Any], address: str
) -> Iterator[tuple[int, Outcome]]:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as e:  # pragma: no cover - a dependency of qosnet
        raise RuntimeError("--scheduler needs dask[distributed] (pip install qosnet)") from e
    with Client(address, set_as_default=False) as client:
        # pure=False: equal items are still separate runs (their results are the same,
        # but each is asked for); the order of submission is the order of the items
        futures = [client.submit(_guarded, fn, item, pure=False) for item in items]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future in dask_completed(futures, loop=client.loop):
                i = index[future.key]
                try:
                    outcome = future.result()
                except Exception as e:  # noqa: BLE001 - the worker died, or the task was lost
                    outcome = Outcome(error=f"{type(e).__name__}: {e}")
                yield i, outcome
        finally:
            client.cancel([f for f in futures if not f.done()])

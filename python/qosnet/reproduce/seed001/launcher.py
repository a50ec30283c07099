"""A job launcher on the middleware's request handler (document 001 §3.1): each request
is submitted when it arrives and its reservation released when its job ends, through the
same `RequestHandler` the service (`qosnet serve`) runs, on a clock set to simulated time.

Document 001 §3.4: the resource allocator "keeps track of current reservations in the
system, allocations and de-allocations"; a job's resources come back when it is done.
When that is depends on who says so:

- `"promised"`: at arrival + the time the middleware promised (the profiled time of the
  point it granted). What the evaluation did before, and what a launcher that cannot see
  its jobs would do.
- `"measured"`: when the engine reports the job complete. The engine runs all admitted
  jobs in one simulation, so a release at the measured end is found as a fixed point
  (`decide_measured`): decide with the ends the last engine run measured (a job not in
  that run: its promised end, provisionally), run the admitted jobs on the engine, and
  repeat until the decisions no longer change. Then every release happened exactly when
  the engine run of exactly those decisions finished that job; a run that does not settle
  within `MAX_PASSES` is reported as such, not hidden.
"""

from __future__ import annotations

import heapq
import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from qosnet.reproduce.seed001.fluid import QosOutcome
from qosnet.reproduce.seed001.workload import Subtask

__all__ = ["MAX_PASSES", "Decision", "Launcher", "decide", "decide_measured"]

#: Engine passes before `decide_measured` gives up on a fixed point. Each pass can only
#: settle the jobs admitted by the one before (a newly admitted job is released at its
#: promised end until an engine run has measured it), so jobs that end well before their
#: promise take several: a stand-in engine ending every job at 1/2 (1/10) of its promise
#: took 7 (19) passes on 107 ray-tracing requests. On the engine, where admitted jobs end
#: at their promise, it takes one.
MAX_PASSES = 20

#: The reservation key of a decision: the same job on the same nodes at the same bandwidth
#: has the same end in the same engine run.
Key = tuple[str, tuple[int, ...], float]


@dataclass(frozen=True)
class Decision(QosOutcome):
    """A request's fate with the middleware (`QosOutcome`'s fields: the allocator's own
    decision, made here through the request handler), and when its reservation ended."""

    #: When its reservation was released, s from the start of the run (nan if refused).
    released: float = math.nan

    @property
    def key(self) -> Key:
        return (self.job, self.nodes, self.bandwidth)


class Launcher:
    """The request handler in this process: a fresh SQLite database in `directory`,
    leases longer than any run, no sweeper, a clock the caller moves (`at`)."""

    def __init__(self, directory: Path) -> None:
        from qosnet.service.handler import RequestHandler
        from qosnet.service.settings import Settings
        from qosnet.service.testing import FakeClock
        from qosnet.service.tokens import Principal

        self.clock = FakeClock(start=0.0)
        year = 365 * 86_400.0
        settings = Settings(
            db_url=str(directory / "launcher.db"),
            lease_seconds=year,
            max_lease_seconds=year,
            sweep_seconds=0,
            clock=self.clock,
            sqlite_synchronous="NORMAL",
        )
        self.handler = RequestHandler(settings)
        self.handler.start()
        self.who = Principal(name="launcher", role="admin", token_id=0)

    def at(self, t: float) -> None:
        """Move the clock to `t` s (never back)."""
        self.clock.now = max(self.clock.now, t)

    def submit(self, s: Subtask) -> tuple[str, Decision]:
        """Submit request `s` now: (the service's job id, or "" if refused; the decision)."""
        from qosnet.service.errors import Refused
        from qosnet.service.schemas import SubmitJob

        body = SubmitJob(application=s.application, parameters=dict(s.parameters), t2=s.t2)
        try:
            out, _ = self.handler.submit(self.who, body)
        except Refused as e:
            return "", Decision(s.job, False, None, 0.0, (), s.arrival, math.nan, e.reason)
        curves = self.handler.store.curves_for(out.application, out.parameters, out.node_count)
        if len(curves) != 1:
            raise RuntimeError(f"{s.job}: {len(curves)} curves match the admitted job {out.id}")
        decision = Decision(
            s.job,
            True,
            curves[0],
            out.bandwidth,
            tuple(out.nodes),
            s.arrival,
            out.expected_time,
        )
        return out.id, decision

    def release(self, job_id: str) -> None:
        self.handler.release(self.who, job_id)

    def close(self) -> None:
        self.handler.close()


def decide(subtasks: Sequence[Subtask], ends: Mapping[Key, float] | None = None) -> list[Decision]:
    """Every request through the request handler on arrival (ties: the order given);
    each admitted job released at its end in `ends` (absolute s) if it is there, else at
    its promised end. Decisions in the order of `subtasks`."""
    ends = ends or {}
    order = sorted(range(len(subtasks)), key=lambda i: (subtasks[i].arrival, i))
    out: dict[int, Decision] = {}
    due: list[tuple[float, int, str]] = []  # (release time, request, service job id)
    with tempfile.TemporaryDirectory(prefix="qosnet-launcher-") as tmp:
        launcher = Launcher(Path(tmp))
        try:
            for i in order:
                s = subtasks[i]
                # Jobs done at or before this arrival give their resources back first.
                while due and due[0][0] <= s.arrival:
                    t, k, job_id = heapq.heappop(due)
                    launcher.at(t)
                    launcher.release(job_id)
                    out[k] = _released(out[k], t)
                launcher.at(s.arrival)
                job_id, d = launcher.submit(s)
                out[i] = d
                if d.admitted:
                    end = ends.get(d.key, math.nan)
                    if math.isnan(end):
                        end = s.arrival + d.time
                    heapq.heappush(due, (end, i, job_id))
            for t, k, _ in due:
                out[k] = _released(out[k], t)
        finally:
            launcher.close()
    return [out[i] for i in range(len(subtasks))]


def _released(d: Decision, t: float) -> Decision:
    return Decision(d.job, d.admitted, d.curve, d.bandwidth, d.nodes, d.start, d.time, d.refusal, t)


@dataclass(frozen=True)
class Settled:
    """`decide_measured`'s answer: the decisions, each admitted job's engine time, and how
    the fixed point went."""

    decisions: list[Decision]
    times: list[float]  # per request, its engine time with the middleware (nan if refused)
    passes: int  # engine runs made
    converged: bool


def decide_measured(
    subtasks: Sequence[Subtask],
    run_admitted: Callable[[Sequence[Decision]], list[float]],
    first: tuple[list[Decision], list[float]] | None = None,
) -> Settled:
    """Releases at the ends the engine measures (module docstring). `run_admitted` runs
    the decisions' admitted jobs on the engine and returns each request's time (nan if
    refused); `first` is the promised-end decisions and their engine times, if already
    run (they are this loop's first pass)."""
    decisions, times = first if first is not None else ([], [])
    passes = 1
    if first is None:
        decisions = decide(subtasks)
        times = run_admitted(decisions)
    while passes < MAX_PASSES:
        ends = {d.key: d.start + t for d, t in zip(decisions, times, strict=True) if d.admitted}
        again = decide(subtasks, ends)
        if [_choice(d) for d in again] == [_choice(d) for d in decisions]:
            return Settled(again, times, passes, True)
        decisions = again
        times = run_admitted(decisions)
        passes += 1
    return Settled(decisions, times, passes, False)


def _choice(d: Decision) -> tuple[bool, Key]:
    return (d.admitted, d.key)

"""qosnet beside BookSim2 on matched configurations (`qosnet crosscheck`, issue 22).

`configs/validation/` holds, per network, a qosnet configuration and a BookSim2 input set up
to model the same router (`<base>.toml`, `booksim2/<base>.cfg`; the README there says how
each BookSim2 parameter is matched), and `cases.toml`, the cases: per base, the VC counts,
packet sizes and patterns to run. A case is the base with those four fields set on both
sides, one place (`Case.qosnet_overrides`, `Case.booksim_input`), so the two cannot drift.

For each case and each simulator this module measures
- the zero-load latency: the mean packet latency (source queueing included, as BookSim2's
  "Packet latency average") at `zero_load` flits/node/cycle, over a window of
  `zero_load_window` cycles on both sides: at such a load a 20000-cycle window holds about
  170 40-flit packets on an 8x8 mesh, too few to pin the mean hop count (each router a
  packet crosses is five cycles);
- the saturation load: bisection on the offered load between `low` and `high` until the
  bracket is narrower than `tolerance` of its lower end. A load is saturated when, over the
  measurement window, accepted traffic falls more than 5% short of offered, or the mean
  packet latency exceeds `latency_limit` cycles: BookSim2 stops such a run itself (its
  `latency_thres`, set to the same limit: "Simulation unstable"), testing the mean latency
  with the flits still out counted at their age at the end of each sample and every 1,000
  cycles of its drain, which has no time limit. qosnet's engine takes the same test
  (`stability_latency`); its run ends at its drain limit, so one with measured packets
  still out is judged by the least they can add (`judge_qosnet`) and, where that cannot
  decide, run again with a drain of `drain_retry` cycles. Both sides are judged by one rule.
  (Until session 33 a qosnet run whose drain had not completed counted as saturated, a
  stricter rule than BookSim2's: results/crosscheck/FINDINGS.md.)

BookSim2 is not shipped: the caller names a binary it built (`--booksim`). Each search runs
as one item on `qosnet.pool` (local processes or Dask), one simulator and case per item.
Without one, BookSim2's columns are the recorded ones (`recorded_booksim`): the
repository's `results/crosscheck/crosscheck.csv`, whose FINDINGS.md says how each was made.
"""

from __future__ import annotations

import difflib
import math
import re
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet import _core, booksim_cfg
from qosnet.pool import Outcome, Pool, map_unordered

__all__ = [
    "Case",
    "Plan",
    "Recorded",
    "Search",
    "booksim_point",
    "file_case",
    "load_plan",
    "qosnet_point",
    "recorded_booksim",
    "run_plan",
    "search",
    "summarise",
    "with_recorded",
]

#: Pattern names: qosnet's `pattern.kind` -> BookSim2's `traffic` (the inverse of the
#: reader's table, so the two directions cannot disagree).
BOOKSIM_TRAFFIC = {ours: theirs for theirs, ours in booksim_cfg.TRAFFIC.items()}

#: Accepted traffic below this fraction of offered: saturated (as `qosnet sweep`'s rule).
ACCEPTED_FRACTION = 0.95


@dataclass(frozen=True)
class Limits:
    """How the cases are measured (`cases.toml`'s `[measure]`)."""

    zero_load: float = 0.005
    #: Measurement window (cycles) of the zero-load run, on both simulators (None: the
    #: base configurations' own).
    zero_load_window: float | None = None
    low: float = 0.01
    high: float = 1.0
    #: The bisection stops when high - low <= tolerance * low.
    tolerance: float = 0.02
    #: Mean packet latency (cycles) above which a load counts as saturated.
    latency_limit: float = 1000.0
    #: The drain (cycles) of a qosnet run made again because its measured packets were not
    #: all delivered within its configuration's drain limit and their mean, the ones still
    #: out counted at that limit, stayed within `latency_limit` (`judge_qosnet`).
    drain_retry: float = 400000.0
    timeout: float = 3600.0

    def check(self) -> None:
        if not 0 < self.zero_load < 1:
            raise ValueError(f"measure.zero_load: must be in (0, 1), got {self.zero_load}")
        if self.zero_load_window is not None and not self.zero_load_window >= 1:
            raise ValueError(
                f"measure.zero_load_window: must be >= 1 cycle, got {self.zero_load_window}"
            )
        if not 0 < self.low < self.high <= 1:
            raise ValueError(
                f"measure.low, measure.high: must satisfy 0 < low < high <= 1, "
                f"got {self.low}, {self.high}"
            )
        if not 0 < self.tolerance < 1:
            raise ValueError(f"measure.tolerance: must be in (0, 1), got {self.tolerance}")
        if not self.latency_limit > 0:
            raise ValueError(f"measure.latency_limit: must be > 0, got {self.latency_limit}")
        if not self.drain_retry >= 1:
            raise ValueError(f"measure.drain_retry: must be >= 1 cycle, got {self.drain_retry}")


@dataclass(frozen=True)
class Case:
    """One matched case: a base network with VCs, packet size and pattern set."""

    base: str
    vcs: int
    packet_flits: int
    pattern: str
    directory: Path
    #: The saturation search's (low, high) when the group sets its own (`[[group]]`'s
    #: `low`, `high`), else `[measure]`'s.
    bracket: tuple[float, float] | None = None
    #: A user's BookSim2 file run as it is (`file_case`): qosnet runs its conversion
    #: (`qosnet.booksim_cfg`), BookSim2 the file; only the load and window vary.
    source: Path | None = None

    @property
    def name(self) -> str:
        if self.source is not None:
            return self.base
        return f"{self.base}-{self.vcs}vc-{self.packet_flits}flit-{self.pattern}"

    @property
    def qosnet_config(self) -> Path:
        return self.source or self.directory / f"{self.base}.toml"

    def qosnet_overrides(
        self, load: float, window: int | None = None, seed: int | None = None
    ) -> list[str]:
        """The case and `load` on the base; `window`: the measurement window in cycles
        (the base's when None); `seed`: the master seed (the base's when None)."""
        case = [
            f"router.vcs={self.vcs}",
            f"traffic[0].message_flits={self.packet_flits}",
            f"traffic[0].packet_flits={self.packet_flits}",
            f'traffic[0].pattern={{ kind = "{self.pattern}" }}',
        ]
        return (
            (case if self.source is None else [])
            + [f"traffic[0].load={load!r}"]
            + ([f"simulation.measure={window}"] if window is not None else [])
            + ([f"simulation.seed={seed}"] if seed is not None else [])
        )

    def booksim_input(
        self,
        load: float,
        latency_limit: float,
        window: int | None = None,
        seed: int | None = None,
    ) -> str:
        """The base BookSim2 input with this case's fields and `load` set; `window`: one
        measured sample of that many cycles after a warm-up period as long (the base's
        periods when None); `seed`: BookSim2's `seed` (the file's when None)."""
        cfg = self.source or self.directory / "booksim2" / f"{self.base}.cfg"
        text = cfg.read_text(encoding="utf-8")
        values = {
            "num_vcs": str(self.vcs),
            "packet_size": str(self.packet_flits),
            "traffic": BOOKSIM_TRAFFIC[self.pattern],
            "injection_rate": repr(load),
            # (`load` is in flits/node/cycle, as qosnet's; a user's file may count packets)
            "injection_rate_uses_flits": "1",
            "latency_thres": repr(float(latency_limit)),
        }
        if window is not None:
            # (BookSim2 counts its warm-up among max_samples and has no separate warm-up
            # length: one warm-up period, then one sample)
            values |= {"sample_period": str(window), "warmup_periods": "1", "max_samples": "2"}
        if seed is not None:
            values["seed"] = str(seed)
        for key, value in values.items():
            line = f"{key} = {value};"
            text, n = re.subn(rf"^\s*{key}\s*=.*;\s*$", line, text, flags=re.MULTILINE)
            if n == 0:
                text += f"\n{line}"
        return text + "\n"


def file_case(path: Path) -> Case:
    """A BookSim2 configuration file as one case: its own VCs, packet size and pattern
    (read through `qosnet.booksim_cfg`, which refuses what qosnet cannot run)."""
    config = booksim_cfg.convert(path.read_text(encoding="utf-8"), str(path)).config
    traffic = config["traffic"][0]
    return Case(
        path.stem,
        config["router"]["vcs"],
        traffic["packet_flits"],
        traffic["pattern"]["kind"],
        path.parent,
        source=path,
    )


@dataclass(frozen=True)
class Plan:
    cases: list[Case]
    limits: Limits


def load_plan(directory: Path, select: Iterable[str] = ()) -> Plan:
    """The cases of `directory/cases.toml`, those whose name contains one of `select`
    (all when empty)."""
    path = directory / "cases.toml"
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    known = {f.name for f in Limits.__dataclass_fields__.values()}
    measure = data.get("measure", {})
    unknown = set(measure) - known
    if unknown:
        raise ValueError(
            f"{path}: measure.{sorted(unknown)[0]}: unknown key (known: {sorted(known)})"
        )
    limits = Limits(**{k: float(v) for k, v in measure.items()})
    limits.check()
    cases = []
    for i, group in enumerate(data.get("group", [])):
        where = f"{path}: group[{i}]"
        base = group.get("base")
        if not isinstance(base, str):
            raise ValueError(f"{where}.base: must name a configuration, got {base!r}")
        for needed in (directory / f"{base}.toml", directory / "booksim2" / f"{base}.cfg"):
            if not needed.is_file():
                raise ValueError(f"{where}.base: no {needed}")
        bracket = None
        if "low" in group or "high" in group:
            low = float(group.get("low", limits.low))
            high = float(group.get("high", limits.high))
            if not 0 < low < high <= 1:
                raise ValueError(
                    f"{where}.low, {where}.high: must satisfy 0 < low < high <= 1, "
                    f"got {low}, {high}"
                )
            bracket = (low, high)
        for pattern in group.get("patterns", ["uniform"]):
            if pattern not in BOOKSIM_TRAFFIC:
                raise ValueError(
                    f"{where}.patterns: {pattern!r} is not one of {sorted(BOOKSIM_TRAFFIC)}"
                )
            for vcs in group.get("vcs", [16]):
                for flits in group.get("packet_flits", [1]):
                    cases.append(Case(base, int(vcs), int(flits), pattern, directory, bracket))
    wanted = list(select)
    if wanted:
        names = [c.name for c in cases]
        for w in wanted:
            if not any(w in n for n in names):
                raise ValueError(_unknown_case(w, names, path))
        cases = [c for c in cases if any(w in c.name for w in wanted)]
    return Plan(cases, limits)


def _unknown_case(given: str, names: list[str], path: Path) -> str:
    # (`--case` selects by substring, so a name matching nothing is a typo or a case that
    # does not exist: say which, rather than silently running fewer cases)
    close = difflib.get_close_matches(given, names, n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return (
        f"--case {given!r}: no case of {path} has a name containing it{hint}\n"
        f"valid case names: {', '.join(names)}"
    )


@dataclass(frozen=True)
class Point:
    """One run: its offered load, accepted throughput, mean packet latency."""

    load: float
    accepted: float
    latency: float
    saturated: bool


def qosnet_point(
    case: Case, load: float, limits: Limits, window: int | None = None, seed: int | None = None
) -> Point:
    from qosnet import api

    overrides = case.qosnet_overrides(load, window, seed)
    result = api.run(case.qosnet_config, overrides)
    point = judge_qosnet(load, result.summary, result.classes.iloc[0], limits.latency_limit)
    if point is None:
        # Measured packets still out, too few or too young to put the mean past the limit:
        # BookSim2 would drain on, so qosnet does too.
        longer = [*overrides, f"simulation.drain_limit={int(limits.drain_retry)}"]
        result = api.run(case.qosnet_config, longer)
        row = result.classes.iloc[0]
        point = judge_qosnet(load, result.summary, row, limits.latency_limit)
        if point is None:
            # Still out after the longer drain: counted as saturated (BookSim2 would go on).
            latency = float(row["latency_mean"])
            point = Point(load, float(row["accepted_flits_per_node_cycle"]), latency, True)
    return point


def judge_qosnet(
    load: float, summary: dict[str, Any], row: Any, latency_limit: float
) -> Point | None:
    """A qosnet run judged by BookSim2's rule: saturated when accepted falls more than 5%
    short of offered, or the mean latency passes `latency_limit` as BookSim2 tests it
    (`trafficmanager.cpp`): over the measured packets delivered and, at their age, the flits
    still out, at the end of the measured samples and every 1,000 cycles of the drain
    (qosnet's summary `stability_latency`), and at last over every measured packet. BookSim2
    drains with no time limit; qosnet's run stops at its drain limit, so measured packets
    still out then are counted at the least age they have (the drain's length). None when
    that bound stays within the limit: only a longer drain can tell."""
    accepted = float(row["accepted_flits_per_node_cycle"])
    offered = float(row["offered_flits_per_node_cycle"])
    latency = float(row["latency_mean"])
    if (
        accepted < ACCEPTED_FRACTION * offered
        or not latency <= latency_limit
        or not float(summary["stability_latency"]) <= latency_limit
    ):
        return Point(load, accepted, latency, True)
    if summary["drain_complete"]:
        return Point(load, accepted, latency, False)
    measured = int(summary["messages_measured"])
    delivered = int(summary["messages_delivered"])
    window_end = int(summary["warmup_cycles"]) + int(summary["measure_cycles"])
    drained = int(summary["cycles"]) - window_end
    bound = (latency * delivered + (measured - delivered) * drained) / max(measured, 1)
    if bound > latency_limit:
        return Point(load, accepted, bound, True)
    return None


#: A number as BookSim2 prints it, its C library's "-nan" and "inf" included (a latency
#: average over no packet).
_NUMBER = r"([-+]?(?:nan|inf)|[-+0-9.eE]+)"


def booksim_point(
    booksim: Path,
    case: Case,
    load: float,
    limits: Limits,
    window: int | None = None,
    seed: int | None = None,
) -> Point:
    """Run BookSim2 on the case at `load` and judge it by the same rule as qosnet."""
    with tempfile.TemporaryDirectory(prefix="qosnet-crosscheck-") as tmp:
        cfg = Path(tmp) / f"{case.name}.cfg"
        text = case.booksim_input(load, limits.latency_limit, window, seed)
        cfg.write_text(text, encoding="utf-8")
        try:
            out = subprocess.run(
                [str(booksim), str(cfg)],
                capture_output=True,
                text=True,
                timeout=limits.timeout,
                cwd=tmp,
            ).stdout
        except subprocess.TimeoutExpired:
            raise _core.QosnetError(
                f"BookSim2 ran longer than {limits.timeout:.0f} s on {case.name} at {load}"
            ) from None
    unstable = "Simulation unstable" in out
    overall = out.split("====== Overall Traffic Statistics ======")
    if len(overall) < 2 and not unstable:
        raise _core.QosnetError(
            f"BookSim2 gave no statistics for {case.name} at {load}: {out[-400:]}"
        )
    tail = overall[-1]

    def last(label: str) -> float:
        found = re.findall(rf"{label}\s*=\s*{_NUMBER}", tail)
        return float(found[-1]) if found else math.nan

    accepted = last("Accepted flit rate average")
    latency = last("Packet latency average")
    saturated = unstable or not accepted >= ACCEPTED_FRACTION * load
    return Point(load, accepted, latency, saturated)


@dataclass
class Search:
    """One simulator's measurements of one case."""

    case: Case
    simulator: str
    zero_load_latency: float = math.nan
    low: float = math.nan
    high: float = math.nan
    status: str = "searching"
    points: list[Point] = field(default_factory=list)
    #: The master seed both simulators were given (None: the configuration's own).
    seed: int | None = None

    @property
    def saturation(self) -> float:
        return (self.low + self.high) / 2 if self.status == "found" else math.nan


def search(
    case: Case,
    limits: Limits,
    measure: Callable[[float, int | None], Point],
    simulator: str,
    seed: int | None = None,
) -> Search:
    """Zero-load latency (over `limits.zero_load_window` cycles), then the saturation load
    by bisection (over the base configuration's window). `measure(load, window)` runs one
    point; `window` None means the base's. `seed`: recorded with the search (`measure`
    runs with it)."""
    s = Search(case, simulator, seed=seed)

    def at(load: float, window: int | None = None) -> Point:
        p = measure(round(load, 6), window)
        s.points.append(p)
        return p

    window = None if limits.zero_load_window is None else int(limits.zero_load_window)
    s.zero_load_latency = at(limits.zero_load, window).latency
    low, high = case.bracket or (limits.low, limits.high)
    if at(low).saturated:
        s.status = "saturated at low"
        return s
    if not at(high).saturated:
        s.status = "not saturated at high"
        s.low = s.high = high
        return s
    while high - low > limits.tolerance * low:
        mid = (low + high) / 2
        if at(mid).saturated:
            high = mid
        else:
            low = mid
    s.low, s.high, s.status = low, high, "found"
    return s


@dataclass(frozen=True)
class _Item:
    case: Case
    limits: Limits
    simulator: str
    booksim: Path | None
    seed: int | None = None


def _run_item(item: _Item) -> Search:
    seed = item.seed
    if item.simulator == "booksim2":
        assert item.booksim is not None
        booksim = item.booksim
        return search(
            item.case,
            item.limits,
            lambda x, w: booksim_point(booksim, item.case, x, item.limits, w, seed),
            "booksim2",
            seed,
        )
    return search(
        item.case,
        item.limits,
        lambda x, w: qosnet_point(item.case, x, item.limits, w, seed),
        "qosnet",
        seed,
    )


def seeds_for(repetitions: int) -> list[int | None]:
    """The seeds of `repetitions` searches a side: the configurations' own for one (as
    every recorded row was made), 1..N for more (both simulators given the same
    numbers; their streams differ anyway)."""
    return [None] if repetitions == 1 else list(range(1, repetitions + 1))


def run_plan(
    plan: Plan,
    booksim: Path | None,
    pool: Pool,
    on_done: Callable[[Search | None, Outcome], None] | None = None,
    repetitions: int = 1,
) -> list[Search]:
    """Every case on qosnet, and on BookSim2 when `booksim` is given, `repetitions` times
    a side with different seeds (`seeds_for`)."""
    sims = ["qosnet"] + (["booksim2"] if booksim is not None else [])
    items = [
        _Item(c, plan.limits, s, booksim, seed)
        for c in plan.cases
        for s in sims
        for seed in seeds_for(repetitions)
    ]
    found: dict[int, Search] = {}
    for i, outcome in map_unordered(_run_item, items, pool):
        if outcome.ok:
            found[i] = outcome.value
        elif on_done is None:
            seed = "" if items[i].seed is None else f" (seed {items[i].seed})"
            raise _core.QosnetError(
                f"{items[i].case.name} on {items[i].simulator}{seed}: {outcome.error}"
            )
        if on_done is not None:
            on_done(found.get(i), outcome)
    return [found[i] for i in sorted(found)]


def _difference(ours: float, theirs: float) -> float:
    return (ours - theirs) / theirs if theirs and not math.isnan(theirs) else math.nan


#: The agreement qosnet aims at: within this fraction of BookSim2's value.
MATCH = 0.05
#: The column of `summarise`'s verdict on it, per metric ("saturation_within_5pct").
WITHIN = f"within_{round(MATCH * 100)}pct"


def summarise(searches: list[Search], limits: Limits) -> pd.DataFrame:
    """One row per case: both simulators' zero-load latency and saturation (the mean over
    a side's seeds), and qosnet's difference from BookSim2 as a fraction of BookSim2's.
    Where a side ran several seeds, also each side's 95% interval and the difference's
    (Welch: the two simulators' streams are unrelated), and whether the two agree within
    `MATCH` (`qosnet.reproduce.scoring.relative_match`: holds, tie or not)."""
    from qosnet.reproduce.scoring import interval, relative_match

    by_case: dict[str, dict[str, Any]] = {}
    sides: dict[tuple[str, str], list[Search]] = {}
    for s in searches:
        by_case.setdefault(
            s.case.name,
            {
                "case": s.case.name,
                "base": s.case.base,
                "vcs": s.case.vcs,
                "packet_flits": s.case.packet_flits,
                "pattern": s.case.pattern,
            },
        )
        sides.setdefault((s.case.name, s.simulator), []).append(s)
    values: dict[tuple[str, str, str], list[float]] = {}
    repeated = any(len(ss) > 1 for ss in sides.values())
    for (name, sim), ss in sides.items():
        ss.sort(key=lambda x: -1 if x.seed is None else x.seed)
        row = by_case[name]
        for metric in ("zero_load_latency", "saturation"):
            v = [float(getattr(x, metric)) for x in ss]
            values[name, sim, metric] = v
            i = interval(v)
            row[f"{sim}_{metric}"] = i.mean
            if repeated:
                row[f"{sim}_{metric}_low"], row[f"{sim}_{metric}_high"] = i.low, i.high
        row[f"{sim}_status"] = "; ".join(dict.fromkeys(x.status for x in ss))
        row[f"{sim}_runs"] = sum(len(x.points) for x in ss)
        if repeated:
            row[f"{sim}_seeds"] = len(ss)
    rows = list(by_case.values())
    for row in rows:
        for metric in ("zero_load_latency", "saturation"):
            row[f"{metric}_difference"] = _difference(
                row.get(f"qosnet_{metric}", math.nan), row.get(f"booksim2_{metric}", math.nan)
            )
            if repeated:
                ours = values.get((row["case"], "qosnet", metric), [])
                theirs = values.get((row["case"], "booksim2", metric), [])
                rel, verdict = relative_match(ours, theirs, MATCH)
                row[f"{metric}_difference_low"] = rel.low
                row[f"{metric}_difference_high"] = rel.high
                row[f"{metric}_{WITHIN}"] = verdict
    frame = pd.DataFrame(rows)
    if not frame.empty:
        # (in the cases' order whatever order the searches ended in)
        keys = ["base", "pattern", "vcs", "packet_flits"]
        frame = frame.sort_values(keys, ascending=[True, True, False, True], ignore_index=True)
    frame.attrs["tolerance"] = limits.tolerance
    return frame


#: Where the repository keeps the recorded cross-check, relative to its root (the matched
#: cases are its configs/validation).
RECORDED = Path("results") / "crosscheck" / "crosscheck.csv"
_BOOKSIM_COLUMNS = ("zero_load_latency", "saturation", "status", "runs")


@dataclass(frozen=True)
class Recorded:
    """BookSim2's columns of a recorded cross-check, and where they come from."""

    table: pd.DataFrame
    path: Path
    #: "<short hash> <date>" of the last commit that changed `path`; None outside git.
    commit: str | None
    #: The file differs from that commit.
    modified: bool = False

    def describe(self) -> str:
        where = f"commit {self.commit}" if self.commit else "no git history found"
        if self.modified:
            where += ", with uncommitted changes"
        return (
            f"BookSim2 columns: the recorded numbers of {self.path} ({where}), not run now; "
            f"{self.path.parent / 'FINDINGS.md'} says how each was made. "
            f"Pass --booksim to run BookSim2."
        )


def recorded_booksim(directory: Path) -> Recorded | None:
    """The recorded BookSim2 columns for the cases of `directory` (configs/validation of a
    repository): that repository's `results/crosscheck/crosscheck.csv`; None when it has
    none (a `--dir` outside a repository: its cases were never recorded)."""
    root = directory.resolve().parent.parent
    path = root / RECORDED
    if not path.is_file():
        return None
    table = pd.read_csv(path)
    keep = ["case"] + [f"booksim2_{c}" for c in _BOOKSIM_COLUMNS]
    if not set(keep) <= set(table.columns):
        return None
    table = table[keep].dropna(subset=["booksim2_status"])

    def git(*args: str) -> str | None:
        try:
            run = subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return run.stdout.strip() if run.returncode == 0 else None

    commit = git("log", "-1", "--format=%h %cs", "--", str(RECORDED)) or None
    modified = bool(commit and git("status", "--porcelain", "--", str(RECORDED)))
    return Recorded(table, path, commit, modified)


def with_recorded(table: pd.DataFrame, recorded: Recorded) -> pd.DataFrame:
    """`summarise`'s table of a qosnet-only run with the recorded BookSim2 columns beside
    each case (none for a case never recorded) and qosnet's difference from them;
    `booksim2_source` names the file so the CSV, too, says they were not run now."""
    out = table.drop(columns=[c for c in table.columns if c.startswith("booksim2_")])
    out = out.merge(recorded.table, on="case", how="left")
    for metric in ("zero_load_latency", "saturation"):
        out[f"{metric}_difference"] = [
            _difference(ours, theirs)
            for ours, theirs in zip(out[f"qosnet_{metric}"], out[f"booksim2_{metric}"], strict=True)
        ]
    out["booksim2_source"] = f"recorded: {RECORDED}" + (
        f" @ {recorded.commit}" if recorded.commit else ""
    )
    differences = ["zero_load_latency_difference", "saturation_difference"]
    rest = [c for c in out.columns if c not in differences and c != "booksim2_source"]
    out = out[rest + differences + ["booksim2_source"]]
    out.attrs = dict(table.attrs)
    return out


def points_table(searches: list[Search]) -> pd.DataFrame:
    """Every run the searches made, tidy: case, simulator, load, accepted, latency,
    saturated."""
    return pd.DataFrame(
        [
            {
                "case": s.case.name,
                "simulator": s.simulator,
                "seed": s.seed,
                "load": p.load,
                "accepted": p.accepted,
                "latency": p.latency,
                "saturated": p.saturated,
            }
            for s in searches
            for p in s.points
        ]
    )

"""Scoring a document's claim against runs repeated over seeds: one module for every
reproduction, so a verdict means the same thing in each FINDINGS.md.

A claim compares a measured quantity of two sides (a mechanism and its baseline, two
routers, a run and the document's figure), each measured once per seed. `compare` reports
the mean and 95% interval of each side and of their difference, and its verdict is

- `holds` when the difference's interval excludes zero in the claimed direction;
- `not` when it excludes zero the other way;
- `tie` when it contains zero (the seeds cannot tell the sides apart).

The interval is Student's t on the per-seed values (paired: on the per-seed differences).
Why t and not the bootstrap: with the 3-5 seeds a reproduction can afford, a percentile
bootstrap of the mean draws from at most 35 distinct resamples and its interval is too
narrow (at n = 3 it covers the mean about 75% of the time, not 95%); the t interval is
exact for normal values and the per-seed values are each a run's mean over thousands of
messages, close to normal by the central limit theorem. Why paired: runs with the same
seed draw the same arrivals and destinations (common random numbers, one RNG stream per
component from the master seed), so the difference per seed cancels what the sides share
and its interval is the honest one; sides that are not run on the same seeds (or whose
seeds do not line up) are compared unpaired, with Welch's interval.

A claim over several mechanisms ("A best", "2 < 4 < 8 credits") is the conjunction of its
pairwise comparisons (`combine`); a claim over a load range is scored at every load
(`over_loads`) and says at how many it holds. A claim about deadline misses is untestable
where its baseline never misses (`UNTESTABLE`); a match that holds by construction is
`CIRCULAR`. A comparison between sides that deliver different traffic (admission refusing
streams, sources holding packets back) is reported with both sides' delivered throughput
and refused fraction (`Traffic`), and a "win" of the side that delivers markedly less is
`UNLIKE`, not `holds`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CIRCULAR",
    "Finding",
    "HOLDS",
    "NOT",
    "ONE_SEED",
    "TIE",
    "UNLIKE",
    "UNTESTABLE",
    "Interval",
    "Score",
    "Traffic",
    "combine",
    "compare",
    "interval",
    "matches",
    "over_loads",
    "per_seed",
    "relative_match",
    "within",
]

#: One line of a FINDINGS.md table: (claim, what the runs give, verdict).
Finding = tuple[str, str, str]

HOLDS = "holds"
TIE = "tie"
NOT = "not"
UNTESTABLE = "untestable at these loads"
CIRCULAR = "circular"
#: The claimed side wins only by carrying less traffic than the other (not like against like).
UNLIKE = "not like for like"
#: No value on a side (a run that measured nothing: no frames).
UNMEASURED = "not measured"
#: One seed: a difference without an interval decides nothing.
ONE_SEED = "one seed, no interval"

#: Confidence of every interval.
LEVEL = 0.95
#: Delivered throughput below this fraction of the other side's, or a refused fraction
#: above `REFUSED`, makes two sides unlike traffic (a reviewer's 5%: smaller differences
#: in load change latency far less than the effects the documents claim).
DELIVERED = 0.95
REFUSED = 0.05

Direction = Literal["lower", "higher"]


@dataclass(frozen=True)
class Interval:
    """A mean over seeds and its `LEVEL` interval (low == high == mean for one value)."""

    mean: float
    low: float
    high: float
    n: int

    def text(self, spec: str = ".4g") -> str:
        if self.n == 0 or math.isnan(self.mean):
            return "n/a"
        if self.n == 1:
            return f"{self.mean:{spec}} (1 seed)"
        return f"{self.mean:{spec}} [{self.low:{spec}}, {self.high:{spec}}]"


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (Lentz's
    method, as in Numerical Recipes §6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (
            m * (b - m) * x / ((qam + m2) * (a + m2)),
            -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)),
        ):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _beta_inc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with `df` (real, > 0) degrees of freedom."""
    tail = 0.5 * _beta_inc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """The `p` quantile (0.5 < p < 1) of Student's t, by bisection on `t_cdf`. (No SciPy:
    the project does not depend on it for one function.)"""
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        lo, hi = hi, hi * 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return (lo + hi) / 2.0


def _clean(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def interval(values: Sequence[float]) -> Interval:
    """Mean and Student-t `LEVEL` interval of `values` (NaN and None left out)."""
    v = _clean(values)
    n = len(v)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    mean = sum(v) / n
    if n == 1:
        return Interval(mean, mean, mean, 1)
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
    half = t_quantile(0.5 + LEVEL / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n)


def _welch(a: list[float], b: list[float]) -> Interval:
    """Interval of mean(a) - mean(b) for independent samples (Welch-Satterthwaite)."""
    na, nb = len(a), len(b)
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((x - ma) ** 2 for x in a) / (na - 1)
    vb = sum((x - mb) ** 2 for x in b) / (nb - 1)
    se2 = va / na + vb / nb
    d = ma - mb
    if se2 == 0:
        return Interval(d, d, d, min(na, nb))
    df = se2**2 / ((va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1))
    half = t_quantile(0.5 + LEVEL / 2, df) * math.sqrt(se2)
    return Interval(d, d - half, d + half, min(na, nb))


@dataclass(frozen=True)
class Traffic:
    """What a side delivered: accepted throughput (flits/node/cycle), the fraction of its
    offered streams or messages refused, and its latency in the network and end to end
    (source queueing included), means over seeds."""

    delivered: float
    refused: float = 0.0
    network: float = math.nan
    end_to_end: float = math.nan

    def text(self) -> str:
        parts = [f"delivered {self.delivered:.3f}"]
        if self.refused:
            parts.append(f"refused {self.refused:.0%}")
        if not math.isnan(self.network):
            parts.append(f"network {self.network:.0f}")
        if not math.isnan(self.end_to_end):
            parts.append(f"end to end {self.end_to_end:.0f}")
        return ", ".join(parts)


def unlike(claimed: Traffic, other: Traffic) -> bool:
    """Whether `claimed` carries markedly less than `other` (refuses, or delivers less)."""
    if claimed.refused - other.refused > REFUSED:
        return True
    return claimed.delivered < DELIVERED * other.delivered


@dataclass(frozen=True)
class Score:
    """One comparison: the claimed side `a` against `b` in `direction` ("a lower than b")."""

    a: Interval
    b: Interval
    diff: Interval
    direction: Direction
    verdict: str
    paired: bool
    traffic: tuple[Traffic, Traffic] | None = None

    def text(self, names: tuple[str, str] = ("a", "b"), spec: str = ".4g") -> str:
        """`a` and `b` with their intervals, the difference's, and the traffic beside them."""
        s = (
            f"{names[0]} {self.a.text(spec)} vs {names[1]} {self.b.text(spec)}; "
            f"difference {self.diff.text(spec)}"
        )
        if self.traffic is not None:
            s += f" ({names[0]}: {self.traffic[0].text()}; {names[1]}: {self.traffic[1].text()})"
        return s


def _paired(a: Mapping[int, float] | Sequence[float], b: Mapping[int, float] | Sequence[float]):
    """Per-seed differences when both sides are keyed by the same seeds, else None."""
    if isinstance(a, Mapping) and isinstance(b, Mapping) and set(a) == set(b):
        return [a[s] - b[s] for s in sorted(a)]
    return None


def _values(x: Mapping[int, float] | Sequence[float]) -> list[float]:
    return _clean(list(x.values()) if isinstance(x, Mapping) else list(x))


def _verdict(diff: Interval, direction: Direction) -> str:
    if diff.n == 0 or math.isnan(diff.mean):
        return UNMEASURED
    sign = -1.0 if direction == "lower" else 1.0
    lo, hi = sorted((sign * diff.low, sign * diff.high))
    if lo > 0:
        return HOLDS
    if hi < 0:
        return NOT
    return TIE


def compare(
    a: Mapping[int, float] | Sequence[float],
    b: Mapping[int, float] | Sequence[float],
    direction: Direction = "lower",
    traffic: tuple[Traffic, Traffic] | None = None,
    dmp: bool = False,
) -> Score:
    """Score "a is `direction` than b". Values keyed by seed (dicts with the same keys) are
    paired; lists are not. `dmp=True`: a claim about deadline misses, untestable where the
    side expected to miss more (b for "lower") never misses. `traffic`: the sides' delivered
    traffic; a `holds` of a side carrying markedly less becomes `UNLIKE`."""
    ia, ib = interval(_values(a)), interval(_values(b))
    d = _paired(a, b)
    pairs = None if d is None else _clean(d)
    if pairs is not None and len(pairs) >= 2:
        diff, paired = interval(pairs), True
    else:
        va, vb = _values(a), _values(b)
        if len(va) >= 2 and len(vb) >= 2:
            diff = _welch(va, vb)
        elif va and vb:
            diff = Interval(ia.mean - ib.mean, math.nan, math.nan, 1)
        else:
            diff = Interval(math.nan, math.nan, math.nan, 0)
        paired = False
    if diff.n == 1:
        verdict = UNMEASURED if math.isnan(diff.mean) else ONE_SEED
    else:
        verdict = _verdict(diff, direction)
    baseline = ib if direction == "lower" else ia
    # (a baseline that never misses cannot show a mechanism missing less; one that misses
    # more than a never-missing baseline is still a reversal: `not` stands)
    if dmp and baseline.n and baseline.high <= 0 and verdict != NOT:
        verdict = UNTESTABLE
    if verdict == HOLDS and traffic is not None and unlike(*traffic):
        verdict = UNLIKE
    return Score(ia, ib, diff, direction, verdict, paired, traffic)


def combine(verdicts: Sequence[str]) -> str:
    """A claim made of several comparisons (an ordering, "A best of four"): holds when
    every one holds, not when any is reversed, untestable or unlike when every one that is
    not tied is so; else tie."""
    vs = list(verdicts)
    if not vs:
        return UNMEASURED
    if all(v == HOLDS for v in vs):
        return HOLDS
    if any(v == NOT for v in vs):
        return NOT
    for special in (UNTESTABLE, UNLIKE, CIRCULAR, ONE_SEED, UNMEASURED):
        if any(v == special for v in vs):
            return special
    return TIE


def over_loads(verdicts: Mapping[Any, str], what: str = "loads") -> str:
    """A claim over a load range (or over cases: `what`), scored at each: "holds at K of
    N loads (...)", naming where it does not, or the single verdict where all agree."""
    n = len(verdicts)
    if n == 0:
        return UNMEASURED
    kinds = set(verdicts.values())
    if len(kinds) == 1:
        (only,) = kinds
        return f"{only} at all {n} {what}" if n > 1 else only
    held = [ld for ld, v in verdicts.items() if v == HOLDS]
    rest = ", ".join(f"{_key(ld)}: {v}" for ld, v in verdicts.items() if v != HOLDS)
    return f"holds at {len(held)} of {n} {what} ({rest})"


def _key(k: Any) -> str:
    return f"{k:g}" if isinstance(k, float) else str(k)


def within(values: Mapping[int, float] | Sequence[float], bound: float) -> str:
    """A level claim ("DMP stays about 0.002", read as at most `bound`): holds when the
    interval lies at or below `bound`, not when it lies above, tie when it straddles."""
    i = interval(_values(values))
    if i.n < 2:
        return UNMEASURED if i.n == 0 else ONE_SEED
    if i.high <= bound:
        return HOLDS
    if i.low > bound:
        return NOT
    return TIE


def matches(
    values: Mapping[int, float] | Sequence[float], expected: float, tolerance: float
) -> str:
    """A claim that a quantity equals `expected` (an equivalence test, two one-sided):
    holds when the interval of value - expected lies within +-`tolerance`, not when it
    lies wholly outside, tie otherwise."""
    i = interval([v - expected for v in _values(values)])
    if i.n < 2:
        return UNMEASURED if i.n == 0 else ONE_SEED
    if -tolerance <= i.low and i.high <= tolerance:
        return HOLDS
    if i.low > tolerance or i.high < -tolerance:
        return NOT
    return TIE


def relative_match(
    a: Sequence[float], b: Sequence[float], tolerance: float
) -> tuple[Interval, str]:
    """A claim that two independently seeded measurements agree within +-`tolerance` of
    b's mean (qosnet's saturation against BookSim2's: different simulators, so no pairing):
    the Welch interval of mean(a) - mean(b), as a fraction of mean(b), and the equivalence
    verdict (holds when it lies within +-`tolerance`, not when wholly outside, tie
    otherwise). The denominator's own spread is left out: at a few percent of mean(b) it
    moves the bounds by that fraction of themselves."""
    va, vb = _clean(a), _clean(b)
    if not va or not vb:
        return Interval(math.nan, math.nan, math.nan, 0), UNMEASURED
    mb = sum(vb) / len(vb)
    if len(va) < 2 or len(vb) < 2:
        d = (sum(va) / len(va) - mb) / mb
        return Interval(d, math.nan, math.nan, 1), ONE_SEED
    w = _welch(va, vb)
    rel = Interval(w.mean / mb, w.low / mb, w.high / mb, w.n)
    if -tolerance <= rel.low and rel.high <= tolerance:
        return rel, HOLDS
    if rel.low > tolerance or rel.high < -tolerance:
        return rel, NOT
    return rel, TIE


def per_seed(frame: pd.DataFrame, column: str, **where: Any) -> dict[int, float]:
    """`column` of the rows matching `where` (label = value), keyed by seed (the mean where
    several rows share a seed). Without a seed column, the rows are seed 0."""
    rows = frame
    for k, v in where.items():
        rows = rows[rows[k] == v]
    if "seed" not in rows.columns:
        return {0: float(rows[column].astype(float).mean())} if len(rows) else {}
    means = rows.groupby("seed")[column].apply(lambda c: c.astype(float).mean())
    return {int(k): float(v) for k, v in means.items()}

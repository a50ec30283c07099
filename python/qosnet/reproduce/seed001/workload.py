"""The request stream of document 001's middleware evaluation (§4.3, Figure 4.8).

Document 001 §4.3 models each user as a *task*: a collection of rendering requests
(*subtasks*) that follow each other, since a user looking at an image rotates it,
magnifies a part, looks from another side, and each action is a new rendering. Tasks
arrive at random intervals; so do the subtasks within a task. What it varies (§4.3):

1. the maximum interval between successive tasks: 10, 20 and 50 s, the actual interval
   "varied randomly between 0 and the maximum number" (here: uniform on [0, max]);
2. the random intervals between the subtasks of one task, through the random seed;
3. the ratios of image sizes (512:1024 = 50:50, 30:70, 70:30) and of interleaving factors
   (0:2, the same three) for ray tracing (Table 4.1);
4. for polygon rendering only the image sizes, "approximately equal" numbers of 256, 512
   and 1024 (§4.4.1).

What it does not give, and what this module therefore makes configuration with stated
defaults (`WorkloadConfig`): how many tasks a run has, how many subtasks a task has, the
range of the gaps between subtasks, and the response time each request asks for ("with
desired response times", §4.4.1). A request's time bound is t2 = slack x t_best, where
t_best is the least time any profiled curve with the request's parameters reaches at its
knee-point (§3.3: what an idle cluster would give it) and slack is drawn uniformly from a
range; t1 is 0 ("implicitly assumed to be 0", §3.3).

Each subtask fixes its application parameters (the ratios of item 3 are ratios of what
requests ask for) and leaves the number of nodes free for the translator (§3.3).
Everything is drawn from one `numpy.random.Generator` seeded by the caller, in a fixed
order, so a seed gives one workload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from qosnet.middleware.profiles import KNEE_TOLERANCE, ParamValue, ProfileStore, knee

__all__ = [
    "POLYGON_IMAGE_SIZES",
    "RAY_TRACING_RATIOS",
    "Subtask",
    "WorkloadConfig",
    "best_time",
    "generate",
]

#: Document 001 Table 4.1: the five (image size 512:1024, interleaving 0:2) ratio pairs.
RAY_TRACING_RATIOS: tuple[tuple[tuple[int, int], tuple[int, int]], ...] = (
    ((50, 50), (50, 50)),
    ((30, 70), (50, 50)),
    ((70, 30), (50, 50)),
    ((50, 50), (30, 70)),
    ((50, 50), (70, 30)),
)

#: Document 001 §4.4.1: polygon rendering requests for 256, 512 or 1024 in about equal numbers.
POLYGON_IMAGE_SIZES: dict[ParamValue, float] = {256: 1.0, 512: 1.0, 1024: 1.0}


def ray_tracing_mix(
    image: tuple[float, float] = (50, 50), interleaving: tuple[float, float] = (50, 50)
) -> dict[str, dict[ParamValue, float]]:
    """The parameter mix of a Table 4.1 row: 512:1024 image sizes and 0:2 interleaving."""
    return {
        "image_size": {512: image[0], 1024: image[1]},
        "interleaving": {0: interleaving[0], 2: interleaving[1]},
    }


@dataclass(frozen=True)
class WorkloadConfig:
    """One workload (document 001 §4.3). Times in seconds.

    `mix` maps each application parameter to its values and their relative weights (a
    ratio such as 30:70); every subtask draws each parameter independently with those
    probabilities. Defaults other than `max_interarrival` and `mix` are this module's
    choices, the document giving none (module docstring).
    """

    application: str = "ray_tracing"
    #: §4.3 item 1: 10, 20 or 50 s; the interval is uniform on [0, max].
    max_interarrival: float = 10.0
    #: Tasks per run. Not given; the document's Figures 4.9-4.14 plot a few tens of requests.
    tasks: int = 30
    #: Subtasks per task, uniform on these integers, both included. Not given.
    subtasks: tuple[int, int] = (1, 12)
    #: Gap between successive subtasks of a task, uniform on [0, this]. Not given beyond
    #: "different random time intervals between them" (§4.3).
    max_subtask_gap: float = 6.0
    #: Requested time t2 = slack x best time, slack uniform on this range. Not given.
    slack: tuple[float, float] = (1.0, 3.0)
    #: §4.3 items 3-4, Table 4.1: the parameter mix.
    mix: Mapping[str, Mapping[ParamValue, float]] = field(default_factory=ray_tracing_mix)

    def __post_init__(self) -> None:
        if not self.max_interarrival >= 0:
            raise ValueError(f"max_interarrival: must be >= 0, got {self.max_interarrival!r}")
        if self.tasks < 0:
            raise ValueError(f"tasks: must be >= 0, got {self.tasks!r}")
        lo, hi = self.subtasks
        if not 1 <= lo <= hi:
            raise ValueError(f"subtasks: must be 1 <= low <= high, got {self.subtasks!r}")
        if not self.max_subtask_gap >= 0:
            raise ValueError(f"max_subtask_gap: must be >= 0, got {self.max_subtask_gap!r}")
        if not 0 < self.slack[0] <= self.slack[1]:
            raise ValueError(f"slack: must be 0 < low <= high, got {self.slack!r}")
        for name, weights in self.mix.items():
            if not weights or any(w < 0 for w in weights.values()) or sum(weights.values()) <= 0:
                raise ValueError(f"mix.{name}: weights must be >= 0 with a positive sum")


@dataclass(frozen=True)
class Subtask:
    """One request to the middleware (document 001 §3.5.1: X = {t1, t2, x_1..x_n})."""

    job: str  # "t3.s1": task 3, its subtask 1
    task: int
    index: int
    arrival: float  # seconds from the start of the run
    application: str
    parameters: dict[str, ParamValue]
    t2: float  # requested response time, s (t1 is 0)
    t_best: float  # the least knee time of the matching curves, s


def best_time(
    store: ProfileStore,
    application: str,
    parameters: Mapping[str, ParamValue],
    tolerance: float = KNEE_TOLERANCE,
) -> float:
    """The least execution time the profiles promise for these parameters on an idle
    cluster: the least knee-point time (§3.3) over the matching curves."""
    curves = store.curves_for(application, parameters)
    if not curves:
        raise ValueError(f"no curve of {application} with {dict(parameters)}")
    return min(knee(c, tolerance).time for c in curves)


def generate(config: WorkloadConfig, store: ProfileStore, seed: int) -> list[Subtask]:
    """The workload's subtasks in arrival order (ties: task, then index)."""
    rng = np.random.default_rng(seed)
    names = sorted(config.mix)
    values = {n: list(config.mix[n]) for n in names}
    probs = {
        n: np.asarray([config.mix[n][v] for v in values[n]], dtype=float)
        / sum(config.mix[n].values())
        for n in names
    }
    out: list[Subtask] = []
    start = 0.0
    for task in range(config.tasks):
        # §4.3 item 1: the interval before each task, the first one included.
        start += float(rng.uniform(0.0, config.max_interarrival))
        count = int(rng.integers(config.subtasks[0], config.subtasks[1] + 1))
        at = start
        for index in range(count):
            if index:
                at += float(rng.uniform(0.0, config.max_subtask_gap))
            params = {n: values[n][int(rng.choice(len(values[n]), p=probs[n]))] for n in names}
            t_best = best_time(store, config.application, params)
            slack = float(rng.uniform(*config.slack))
            out.append(
                Subtask(
                    job=f"t{task}.s{index}",
                    task=task,
                    index=index,
                    arrival=at,
                    application=config.application,
                    parameters=params,
                    t2=slack * t_best,
                    t_best=t_best,
                )
            )
    out.sort(key=lambda s: (s.arrival, s.task, s.index))
    return out

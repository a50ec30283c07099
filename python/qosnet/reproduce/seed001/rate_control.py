"""Document 001 §4.2 on the engine: the rate-control experiments that underpin the
middleware, with the application models of `qosnet.profiler.models` run packet by packet.

- Figs. 4.1-4.2 (`sweep`): execution time against a uniform reservation per flow on 4 and
  8 nodes, up to 210/6 = 35 and 210/14 = 15 MB/s (§4.2.1: the 210 MB/s bi-directional link
  over 2N-2 flows).
- Fig. 4.4 (`background`): a job on 4 nodes with 2 and 3 bandwidth-hungry background flows
  sourced at one of its nodes (§4.2.2), with QoS (the job's flows reserved and rate
  controlled, the background unreserved) and without (GM's round robin over every flow).
- Figs. 4.6-4.7 (`multiple`): 2 and 3 jobs at once on the same nodes, each with its own
  reservation, against each one's time alone at that reservation (§4.2.3).

The first testbed (§4.1.1): 8 nodes on one 8-port switch, 210 MB/s bi-directional links
(105 MB/s each way, see `qosnet.middleware.cluster`).
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from qosnet.middleware.units import MB
from qosnet.profiler import engine_config, model, reserve, run_job

__all__ = [
    "APPS",
    "TESTBED_8",
    "TOLERANCE",
    "background",
    "multiple",
    "rate_control_lines",
    "run_all",
    "verdicts",
    "sweep",
]

#: §4.1.1: eight nodes on one 8-port Myrinet switch; 210 MB/s bi-directional per link.
TESTBED_8 = """\
[physical]
link_bandwidth = "840 Mb/s"   # 105 MB/s each way: 210 MB/s bi-directional

[topology]
kind = "star"
ports = 8
"""

#: The applications of Figs. 4.1-4.2 modelled here (name, parameters).
APPS: tuple[tuple[str, dict[str, int]], ...] = (
    ("is", {}),
    ("ray_tracing", {"image_size": 512, "interleaving": 0}),
    ("polygon_rendering", {"image_size": 512}),
)
#: §4.2.1's largest reservation per flow: 210 MB/s over 2N - 2 flows.
CAP = {4: 35 * MB, 8: 15 * MB}
SWEEP = {4: (1, 2, 3, 5, 8, 10, 15, 20, 25, 30, 35), 8: (1, 2, 3, 5, 8, 10, 12, 15)}
SWEEP_QUICK = {4: (2, 5, 8, 35), 8: (2, 15)}
#: Fig. 4.4's reservations per flow (MB/s).
BACKGROUND_MB_S = (20.0, 35.0)
#: Figs. 4.6-4.7 (MB/s per flow, each job's own); the sums stay within the caps.
PAIRS = {4: ((5, 8), (10, 20), (15, 20)), 8: ((3, 5), (5, 10))}
TRIPLES = {4: ((5, 8, 15), (10, 10, 10)), 8: ((3, 5, 7), (4, 4, 4))}
#: How close a job's time with others must be to its time alone (Figs. 4.6-4.7), relative.
TOLERANCE = 0.05
#: §4.1.1: "eight 700 Mhz Quad Pentium III processors": four processors per node. §4.1 runs
#: its jobs "on the same set of nodes, on different sets of processors" and §4.2.2 puts the
#: background flows on "different processors from those on which the application is
#: running": with at most 3 jobs of one rank per node, no rank here waits for a processor.
PROCESSORS = 4


def _app(name: str, values: dict[str, int], nodes: int, bandwidth: float | None) -> dict[str, Any]:
    app = model(name).application(values, nodes)
    app["name"] = name
    if bandwidth is not None:
        app["reserve"] = reserve(bandwidth)
    return app


def _times(args: tuple[list[dict[str, Any]], list[dict[str, Any]], bool]) -> list[float]:
    apps, traffic, rate_control = args
    cfg = engine_config(
        apps, TESTBED_8, traffic=traffic, rate_control=rate_control, processors=PROCESSORS
    )
    return run_job(cfg)


def _map(
    work: list[tuple[list[dict[str, Any]], list[dict[str, Any]], bool]], jobs: int | None
) -> list[list[float]]:
    jobs = jobs or os.cpu_count() or 1
    if jobs == 1 or len(work) == 1:
        return [_times(w) for w in work]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_times, work))


def sweep(quick: bool = False, jobs: int | None = None) -> pd.DataFrame:
    """Figs. 4.1-4.2: one row per (application, nodes, MB/s per flow) with the job's time."""
    grid = SWEEP_QUICK if quick else SWEEP
    apps = APPS[:1] if quick else APPS
    keys = [(a, v, n, b) for a, v in apps for n, bs in grid.items() for b in bs]
    times = _map([([_app(a, v, n, b * MB)], [], True) for a, v, n, b in keys], jobs)
    return pd.DataFrame(
        [
            {"application": a, "nodes": n, "mb_s": float(b), "time_s": t[0]}
            for (a, _, n, b), t in zip(keys, times, strict=True)
        ]
    )


def _background(node: int, count: int) -> list[dict[str, Any]]:
    """`count` bandwidth-hungry flows from `node` to nodes outside the job (§4.2.2: "a
    sender running continuously and pumping out data to a receiver")."""
    return [
        {
            "sources": [node],
            "pattern": {"kind": "fixed", "destination": 4 + k},
            "process": "poisson",
            "load": 0.95,
            # 64 KB messages, as large as the applications' (GM's round robin turns per
            # message: 4 KB ones would hardly be felt)
            "message_flits": 1024,
        }
        for k in range(count)
    ]


def background(quick: bool = False, jobs: int | None = None) -> pd.DataFrame:
    """Fig. 4.4: each application on 4 nodes reserving `BACKGROUND_MB_S` per flow (35 MB/s:
    the most §4.2.1 allows, its flows filling the node links; 20 MB/s: room left for best
    effort), alone and with 2 and 3 background flows at node 0, with QoS and without."""
    apps = APPS[:2] if quick else APPS
    keys: list[tuple[str, float, int, bool]] = []
    work = []
    for a, v in apps:
        for b in BACKGROUND_MB_S[:1] if quick else BACKGROUND_MB_S:
            for count in (0, 2, 3):
                for qos in (True, False):
                    if not qos and b != BACKGROUND_MB_S[0]:
                        continue  # without QoS nothing is reserved: one run is enough
                    keys.append((a, b, count, qos))
                    bw = b * MB if qos else None
                    work.append(([_app(a, v, 4, bw)], _background(0, count), qos))
    times = _map(work, jobs)
    return pd.DataFrame(
        [
            {
                "application": a,
                "background_flows": c,
                "qos": q,
                "mb_s": b if q else float("nan"),
                "time_s": t[0],
            }
            for (a, b, c, q), t in zip(keys, times, strict=True)
        ]
    )


def multiple(quick: bool = False, jobs: int | None = None) -> pd.DataFrame:
    """Figs. 4.6-4.7: 2 and 3 jobs of one application at once on the same 4 (8) nodes, each
    with its own reservation; each job's time beside its time alone at that reservation."""
    apps = APPS[:1] if quick else APPS[:2]
    sets: dict[int, tuple[tuple[int, ...], ...]] = {n: PAIRS[n] + TRIPLES[n] for n in (4, 8)}
    if quick:
        sets = {4: (PAIRS[4][0], TRIPLES[4][0])}
    keys: list[tuple[str, int, tuple[int, ...], int]] = []
    work: list[tuple[list[dict[str, Any]], list[dict[str, Any]], bool]] = []
    alone: dict[tuple[str, int, int], int] = {}
    for a, v in apps:
        for n, group in sets.items():
            for bws in group:
                keys.append((a, n, bws, len(work)))
                work.append(([_app(a, v, n, bw * MB) for bw in bws], [], True))
                for bw in bws:
                    if (a, n, bw) not in alone:
                        alone[(a, n, bw)] = len(work)
                        work.append(([_app(a, v, n, bw * MB)], [], True))
    times = _map(work, jobs)
    rows = []
    for a, n, bws, at in keys:
        together = times[at]
        for j, bw in enumerate(bws):
            solo = times[alone[(a, n, bw)]][0]
            rows.append(
                {
                    "application": a,
                    "nodes": n,
                    "jobs": len(bws),
                    "set": ",".join(map(str, bws)),
                    "mb_s": float(bw),
                    "time_s": together[j],
                    "alone_s": solo,
                    "deviation": together[j] / solo - 1,
                }
            )
    return pd.DataFrame(rows)


def run_all(quick: bool = False, jobs: int | None = None) -> dict[str, pd.DataFrame]:
    """The three experiments' tables."""
    return {
        "rate_control": sweep(quick, jobs),
        "background": background(quick, jobs),
        "multiple_jobs": multiple(quick, jobs),
    }


# -- report ----------------------------------------------------------------------------------

#: Document 001's numbers for IS on 4 nodes (§4.2.3, read off Fig. 4.1): MB/s -> s.
IS_4_NODES = {5.0: 0.1404, 8.0: 0.0925}


def _f(v: float) -> str:
    return "–" if v != v else f"{v:.4g}"


def verdicts(name: str, t: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(claim, ours, verdict) lines for experiment `name`'s table, claiming no more than the
    numbers."""
    out: list[tuple[str, str, str]] = []
    if name == "rate_control":
        for (a, n), g in t.groupby(["application", "nodes"], sort=False):
            g = g.sort_values("mb_s")
            times = g["time_s"].to_numpy()
            falls = bool((times[1:] <= times[:-1] * (1 + 1e-9)).all())
            lo, hi = g["mb_s"].iloc[0], g["mb_s"].iloc[-1]
            ours = f"{_f(times[0])} s at {lo:g} MB/s -> {_f(times[-1])} s at {hi:g}"
            out.append(
                (
                    f"{a} on {n} nodes: time falls as the reservation rises",
                    ours,
                    "reproduced (falls at every step)"
                    if falls
                    else "not reproduced: rises somewhere",
                )
            )
        g = t[(t["application"] == "is") & (t["nodes"] == 4)].set_index("mb_s")["time_s"]
        for mb, doc in IS_4_NODES.items():
            if mb in g.index:
                time_s = float(g.loc[mb])
                dev = time_s / doc - 1
                out.append(
                    (
                        f"IS, 4 nodes, {mb:g} MB/s: {doc} s",
                        f"{_f(time_s)} s ({100 * dev:+.1f}%)",
                        "close (the model's size was chosen near this point: not independent)"
                        if abs(dev) < 0.1
                        else "differs",
                    )
                )
    elif name == "background":
        for a, g in t.groupby("application", sort=False):
            q = g[g["qos"]]
            for mb, gq in q.groupby("mb_s"):
                alone = float(gq[gq["background_flows"] == 0]["time_s"].iloc[0])
                worst = float((gq["time_s"] / alone - 1).max())
                out.append(
                    (
                        f"{a}, QoS at {mb:g} MB/s per flow: predictable with 2 and 3 "
                        "background flows",
                        f"alone {_f(alone)} s, at most {100 * worst:+.1f}% with background",
                        "reproduced" if worst <= TOLERANCE else f"not within {100 * TOLERANCE:g}%",
                    )
                )
            n = g[~g["qos"]].set_index("background_flows")["time_s"]
            if 0 in n.index:
                more = {c: float(n.loc[c]) / float(n.loc[0]) - 1 for c in (2, 3) if c in n.index}
                text = ", ".join(f"{c} flows {100 * v:+.1f}%" for c, v in more.items())
                hurt = max(more.values(), default=0.0)
                out.append(
                    (
                        f"{a}, no QoS: background flows interfere",
                        f"alone {_f(float(n.loc[0]))} s; {text}",
                        "reproduced" if hurt > TOLERANCE else "weak: within the tolerance",
                    )
                )
    elif name == "multiple_jobs":
        for (a, n, k), g in t.groupby(["application", "nodes", "jobs"], sort=False):
            worst = float(g["deviation"].abs().max())
            out.append(
                (
                    f"{a}, {k} jobs at once on {n} nodes: each as alone at its reservation",
                    f"sets {', '.join(dict.fromkeys(g['set']))}: "
                    f"at most {100 * worst:.2f}% from alone",
                    f"reproduced within {100 * TOLERANCE:g}%"
                    if worst <= TOLERANCE
                    else "not reproduced",
                )
            )
    return out


def rate_control_lines(name: str, t: pd.DataFrame, out: Path) -> list[str]:
    """The report's lines for one §4.2 experiment: verdicts, the table and a figure."""
    from qosnet.tables import markdown

    rows = pd.DataFrame(verdicts(name, t), columns=["claim", "here", "verdict"])
    lines = [markdown(rows), "", markdown(t, _cell), ""]
    if name == "rate_control":
        _fig_sweep(t, out / "fig_4_1_4_2_rate_control.png")
        lines += ["![rate control](fig_4_1_4_2_rate_control.png)", ""]
    return lines


def _fig_sweep(t: pd.DataFrame, path: Path) -> None:
    import matplotlib.pyplot as plt

    nodes = sorted(t["nodes"].unique())
    fig, axes = plt.subplots(1, len(nodes), figsize=(5.5 * len(nodes), 4), squeeze=False)
    for ax, n in zip(axes[0], nodes, strict=True):
        for a, g in t[t["nodes"] == n].groupby("application", sort=False):
            ax.plot(g["mb_s"], g["time_s"], "o-", label=a)
        ax.set_xlabel("bandwidth reserved per flow (MB/s)")
        ax.set_ylabel("execution time (s)")
        ax.set_yscale("log")
        ax.set_title(f"{n} nodes (cf. Fig. {'4.1' if n == 4 else '4.2'})")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _cell(col: str, v: object) -> str:
    """Four significant digits for the tables' floats."""
    return _f(v) if isinstance(v, float) else str(v)

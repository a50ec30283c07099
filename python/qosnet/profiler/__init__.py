"""The profiler (document 001 §3.1-3.2): application models run on the engine over node
counts and per-flow bandwidths, written as the profile the middleware reads.

§3.2: "This profiled data stores the execution times obtained for the application for
different user parameters, and for different system parameters" — here each point is one
engine run of an application model (`models`) alone on the testbed, every flow reserved at
the point's bandwidth and dispatched by NIC rate control (document 004's IDT/NDT scheduler),
from "the minimum bandwidth ... to the maximum possible bandwidth that can be supported by
the network" (§3.2): up to a node link's bandwidth divided by the flows one direction of it
carries (§4.2.1's 210/6 = 35 MB/s on 4 all-to-all nodes). The knee points (§3.3, 5%) are the
middleware's `knee` of these curves; nothing here stores them, so they cannot disagree.

- `models`: the applications as compute and communication phases;
- this module: the testbed as an engine configuration, one run, a whole profile.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from qosnet.middleware.cluster import DOCUMENT_001_TESTBED
from qosnet.middleware.profiles import Application, Curve, Point, ProfileStore
from qosnet.middleware.units import MB
from qosnet.profiler.models import MODELS, AppModel, model

__all__ = [
    "BANDWIDTHS",
    "ENGINE",
    "MODELS",
    "AppModel",
    "engine_config",
    "max_bandwidth",
    "run_jobs",
    "model",
    "profile",
    "run_job",
]

#: The bandwidths per flow profiled (bytes/s), as the document's curves (1 to 50 MB/s),
#: those above a configuration's maximum left out.
BANDWIDTHS = tuple(b * MB for b in (1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50))
BANDWIDTHS_QUICK = tuple(b * MB for b in (1, 5, 15, 35))

#: How the engine models the testbed's hosts (document 001 §2.1, §4.1.1): GM on LANai NICs,
#: i.e. document 004's NIC (a host DMA per packet over 64-bit 66 MHz PCI, the firmware
#: dispatching by rate control), 4 KB packets (GM's MTU) of 64-byte flits.
ENGINE: dict[str, Any] = {
    "physical": {"flit_bits": 512},
    "endpoint": {"model": "hca", "queues": "rate_control"},
    "simulation": {"seed": 1, "warmup": 0, "measure": "1 ms", "drain_limit": "1000 s"},
}
PACKET_FLITS = 64


def engine_config(
    applications: Sequence[Mapping[str, Any]],
    cluster: str = DOCUMENT_001_TESTBED,
    traffic: Sequence[Mapping[str, Any]] = (),
    rate_control: bool = True,
    seed: int = 1,
    processors: int | None = None,
) -> dict[str, Any]:
    """A whole engine configuration: `cluster` (TOML network text), the hosts of `ENGINE`,
    the `[[application]]` tables and any `[[traffic]]`. Without `rate_control` the NICs
    interleave their flows' packets (GM without the QoS firmware: document 004 Fig. 4).
    `processors`: each node's processors, shared by the ranks computing on it
    (`endpoint.processors`; None: a processor per rank, jobs meet only in the network)."""
    cfg: dict[str, Any] = tomllib.loads(cluster)
    physical = {**ENGINE["physical"], **cfg.get("physical", {})}
    endpoint = dict(ENGINE["endpoint"])
    if not rate_control:
        endpoint["queues"] = "interleaved"
    if processors is not None:
        endpoint["processors"] = processors
    apps = [{"packet_flits": PACKET_FLITS, **a} for a in applications]
    cfg.update(
        physical=physical,
        endpoint=endpoint,
        simulation={**ENGINE["simulation"], "seed": seed},
        application=apps,
    )
    if traffic:
        cfg["traffic"] = [
            {"packet_flits": PACKET_FLITS, "message_flits": PACKET_FLITS, **t} for t in traffic
        ]
    return cfg


def reserve(bandwidth: float) -> str:
    """A bandwidth in bytes/s as the engine reads it."""
    return f"{bandwidth * 8 / 1e6:.9g} Mb/s"


def run_jobs(cfg: Mapping[str, Any]) -> Any:
    """Run `cfg` on the engine; its `jobs` table (a DataFrame: `time_s`, NaN if the job did
    not complete; `compute_stretch_s`, the compute its ranks lost to shared processors)."""
    from qosnet.api import run

    result = run(cfg)
    if result.jobs is None:
        raise ValueError("the configuration has no [[application]]")
    return result.jobs


def run_job(cfg: Mapping[str, Any]) -> list[float]:
    """Run `cfg` on the engine; each job's completion time (s; NaN if it did not complete)."""
    return [float(t) for t in run_jobs(cfg)["time_s"]]


def max_bandwidth(m: AppModel, nodes: int, link_bandwidth: float) -> float:
    """The most a flow can reserve with every flow of `m` on `nodes` nodes reserved alike:
    a node link's bandwidth each way over the flows one direction carries (§4.2.1)."""
    per_direction = m.pattern.flows_per_link(nodes) // 2
    return link_bandwidth / per_direction if per_direction else link_bandwidth


def _point(args: tuple[str, dict[str, int], int, float, str]) -> float:
    name, values, nodes, bandwidth, cluster = args
    app = {**model(name).application(values, nodes), "reserve": reserve(bandwidth)}
    return run_job(engine_config([app], cluster))[0]


def profile(
    names: Iterable[str] = tuple(MODELS),
    cluster: str = DOCUMENT_001_TESTBED,
    bandwidths: Sequence[float] = BANDWIDTHS,
    node_counts: Sequence[int] | None = None,
    jobs: int | None = None,
) -> ProfileStore:
    """Profile the models `names` on `cluster`: one curve per parameter combination and node
    count (the model's, or `node_counts`), one point per bandwidth up to `max_bandwidth`."""
    from qosnet.middleware.cluster import Cluster

    link = Cluster.from_toml(cluster).link_bandwidth
    models = [model(n) for n in names]
    work: list[tuple[str, dict[str, int], int, float, str]] = []
    keys: list[tuple[str, tuple[tuple[str, int], ...], int]] = []
    for m in models:
        for values in m.curves():
            for nodes in node_counts or m.node_counts:
                if m.pattern.nodes_problem(nodes):
                    continue
                cap = max_bandwidth(m, nodes, link) * (1 + 1e-9)
                for b in bandwidths:
                    if b <= cap:
                        work.append((m.name, values, nodes, b, cluster))
                        keys.append((m.name, tuple(values.items()), nodes))
    if jobs == 1:
        times = [_point(w) for w in work]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            times = list(pool.map(_point, work))
    points: dict[tuple[str, tuple[tuple[str, int], ...], int], list[Point]] = {}
    for key, w, t in zip(keys, work, times, strict=True):
        if t == t:  # a job that did not complete has no point
            points.setdefault(key, []).append(Point(bandwidth=w[3], time=t))
    applications = tuple(
        Application(
            name=m.name,
            parameters={k: tuple(v) for k, v in m.parameters.items()},
            pattern=m.pattern,
            description=m.description,
        )
        for m in models
    )
    curves = tuple(
        Curve(application=name, parameters=dict(values), nodes=nodes, points=tuple(pts))
        for (name, values, nodes), pts in points.items()
    )
    return ProfileStore(applications=applications, curves=curves)

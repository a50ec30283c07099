"""Application models: document 001's applications as compute phases and communication
phases the engine runs (`[[application]]`, `traffic/application.rs`).

Document 001 profiles real programs (ray tracing and polygon rendering, §3.2; NAS IS among
others, §4.1.2) on a Myrinet cluster and shows only their curves. A model here keeps what
the document says about each program's *structure* and states every number it had to choose:

- the pattern: §3.2.1 counts, for both visualisation applications, "2 outgoing and 2
  incoming flows" per node on 4 nodes and 3 and 3 on 8, which is the hypercube of binary-swap
  image compositing (partner r XOR 2^k in stage k; `Pattern.HYPERCUBE` in the middleware).
  IS exchanges keys all-to-all (§4.2.1: "N-1 outgoing flows and N-1 incoming flows").
- the ratio of communication to computation: "higher for [polygon rendering]" (§4.4.3);
  ray tracing's communication "contributes a very small percentage of the total execution
  time".

The compute times and data sizes are this model's choices (`ModelParams`), picked so that
the curves fall in the document's ranges (seconds at 1 MB/s per flow, knees of tens of MB/s;
IS near its Fig. 4.6 times, 0.14 s at 5 MB/s and 0.09 s at 8 MB/s on 4 nodes), not
measurements of any program.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qosnet.middleware.patterns import Pattern

__all__ = ["MODELS", "AppModel", "ModelParams", "model"]


@dataclass(frozen=True)
class ModelParams:
    """The numbers a model chose (documented in FINDINGS and the profile's description).

    `compute_per_pixel` seconds of one node's compute per image pixel at interleaving 0
    (ray tracing: rays; polygon rendering: rasterisation and shading), `compute_fixed`
    seconds of per-frame compute split over the nodes (polygon rendering's geometry),
    `bytes_per_pixel` composited per pixel (colour, or colour and depth), `keys` and
    `iterations` for IS (4-byte keys, NAS IS's ranking loop), `key_compute` seconds per key
    per node per iteration (local bucket sort).
    """

    compute_per_pixel: float = 0.0
    compute_fixed: float = 0.0
    bytes_per_pixel: int = 4
    keys: int = 0
    iterations: int = 1
    key_compute: float = 0.0


@dataclass(frozen=True)
class AppModel:
    """One application: its parameters (allowed values), the pattern its flows make, and
    how a run with given parameters on N nodes becomes phases."""

    name: str
    parameters: Mapping[str, tuple[int, ...]]
    pattern: Pattern
    params: ModelParams
    description: str
    node_counts: tuple[int, ...] = (4, 8, 16)

    def application(self, values: Mapping[str, int], nodes: int) -> dict[str, Any]:
        """The `[[application]]` table of one run on ranks 0..nodes-1 (no reservation)."""
        for name, allowed in self.parameters.items():
            if values.get(name) not in allowed:
                raise ValueError(f"{name}: must be one of {allowed}, got {values.get(name)!r}")
        problem = self.pattern.nodes_problem(nodes)
        if problem:
            raise ValueError(f"nodes: {problem}, got {nodes}")
        p = self.params
        if self.name == "is":
            per_node = p.keys // nodes
            # the keys a rank sends each other rank: its share of every other bucket
            pair_bytes = max(1, 4 * per_node // nodes)
            return {
                "name": self.name,
                "nodes": list(range(nodes)),
                "iterations": p.iterations,
                "phases": [
                    {
                        "compute": f"{p.key_compute * per_node} s",
                        "pattern": "all_to_all",
                        "bytes": pair_bytes,
                    }
                ],
            }
        side = values["image_size"]
        pixels = side * side
        quality = 1 + values.get("interleaving", 0)
        # Interleaving factor f traces every (f+1)-th ray in each direction (§3.2.1:
        # "the smaller the value of the interleaving factor, the better the image quality").
        compute = (p.compute_fixed + p.compute_per_pixel * pixels / quality**2) / nodes
        return {
            "name": self.name,
            "nodes": list(range(nodes)),
            "phases": [
                {
                    "compute": f"{compute} s",
                    "pattern": "binary_swap",
                    "bytes": int(pixels * p.bytes_per_pixel),
                }
            ],
        }

    def curves(self) -> list[dict[str, int]]:
        """Every combination of parameter values, in order."""
        combos: list[dict[str, int]] = [{}]
        for name, allowed in self.parameters.items():
            combos = [{**c, name: v} for c in combos for v in allowed]
        return combos


MODELS: dict[str, AppModel] = {
    m.name: m
    for m in (
        AppModel(
            name="ray_tracing",
            parameters={"image_size": (512, 1024), "interleaving": (0, 2)},
            pattern=Pattern.HYPERCUBE,
            params=ModelParams(compute_per_pixel=2.0e-5, bytes_per_pixel=4),
            description=(
                "Parallel ray tracing (document 001 §3.2.1) as a model on the engine: each "
                "node traces its 1/N of the image's rays (2.0e-5 s per ray; interleaving f "
                "traces 1/(f+1)^2 of them), then binary-swap compositing of 4-byte pixels "
                "(log2 N stages, hypercube partners). Not a measurement: see qosnet.profiler."
            ),
        ),
        AppModel(
            name="polygon_rendering",
            parameters={"image_size": (256, 512, 1024)},
            pattern=Pattern.HYPERCUBE,
            params=ModelParams(compute_per_pixel=1.0e-6, compute_fixed=0.2, bytes_per_pixel=8),
            description=(
                "Parallel polygon rendering (document 001 §3.2.2) as a model on the engine: "
                "0.2 s of geometry split over the nodes plus 1.0e-6 s per pixel of "
                "rasterisation, then sort-last binary-swap compositing of colour and depth "
                "(8 bytes per pixel). Not a measurement: see qosnet.profiler."
            ),
        ),
        AppModel(
            name="is",
            parameters={},
            pattern=Pattern.ALL_TO_ALL,
            params=ModelParams(keys=1 << 18, iterations=10, key_compute=2.0e-8),
            node_counts=(4, 8),
            description=(
                "NAS Integer Sort (document 001 §4.1.2) as a model on the engine: 2^18 4-byte "
                "keys, 10 ranking iterations, each a local bucket pass (2e-8 s per key) and an "
                "all-to-all key exchange. Sized near document 001 Fig. 4.6's 4-node times, not "
                "NAS class A. Not a measurement: see qosnet.profiler."
            ),
        ),
    )
}


def model(name: str) -> AppModel:
    """The model called `name`; ValueError naming the choices otherwise."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(
            f"application: must be one of {', '.join(sorted(MODELS))}, got {name!r}"
        ) from None

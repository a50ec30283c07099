"""How big a cluster is, known before the engine builds it, and the service's limit.

Issue 21: an admin-installed 1024x1024 mesh took 3.3 GB and 19 s to load; under a memory
cap the process died after the cluster was saved, and again at every restart. So the size
is checked before the engine allocates anything, at every load (upload, start, restart):

- a synthetic topology's size follows from its parameters (star `ports`; mesh and torus
  `k`^`n` or the product of `dims`; k-ary n-tree k^n nodes and n k^(n-1) switches);
- a real fabric's follows from its files: the engine reads them whole, so their bytes
  are capped (`FABRIC_BYTES_PER_NODE` per allowed node: the avakas dump and forwarding
  tables are ~3 KiB per HCA);
- after the engine has built it, the exact node and switch counts are checked again,
  before anything is saved or kept.

`Settings.max_cluster_nodes` bounds endpoint nodes and switches each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from qosnet.service.cluster_files import NamedFile
from qosnet.service.errors import Invalid
from qosnet.service.schemas import FieldError

__all__ = ["FABRIC_BYTES_PER_NODE", "ClusterTooLarge", "check_built", "check_estimate"]

#: Bytes of fabric files (dump and forwarding tables) allowed per allowed node.
FABRIC_BYTES_PER_NODE = 16 * 1024


class ClusterTooLarge(Invalid):
    kind = "cluster-too-large"


def _too_large(what: str, limit: int) -> ClusterTooLarge:
    message = f"{what} exceeds this service's limit of {limit} (`qosnet serve --max-cluster-nodes`)"
    return ClusterTooLarge(
        f"toml: topology: {message}", [FieldError(field="toml: topology", message=message)]
    )


def _count(value: Any) -> int | None:
    """A whole number ≥ 1 as written, else None (the engine will say what is wrong)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


#: Counts at or past this are not worth computing exactly.
_HUGE = 2**64


def _product(factors: Iterable[int]) -> int:
    """The product, or `_HUGE` once it gets there (so `n = 10**9` costs 64 steps)."""
    out = 1
    for f in factors:
        out *= f
        if out >= _HUGE:
            return _HUGE
    return out


def _power(k: int, n: int) -> int:
    return 1 if k == 1 else _product(k for _ in range(n))


def estimate(topology: Any) -> tuple[str, int, int] | None:
    """(kind, nodes, switches) from a synthetic topology's parameters; None if they do
    not tell (a fabric, or parameters the engine will refuse)."""
    if not isinstance(topology, dict):
        return None
    kind = topology.get("kind")
    if kind == "star":
        ports = _count(topology.get("ports"))
        return None if ports is None else ("star", ports, 1)
    if kind in ("mesh", "torus"):
        dims = topology.get("dims")
        if isinstance(dims, list) and dims:
            sides = [_count(d) for d in dims]
            if any(s is None for s in sides):
                return None
            nodes = _product(s for s in sides if s is not None)
        else:
            k, n = _count(topology.get("k")), _count(topology.get("n"))
            if k is None or n is None:
                return None
            nodes = _power(k, n)
        return (str(kind), nodes, nodes)
    if kind == "fat_tree":
        k, n = _count(topology.get("k")), _count(topology.get("n"))
        if k is None or n is None:
            return None
        return ("fat_tree", _power(k, n), min(_HUGE, n * _power(k, n - 1)))
    if kind == "dragonfly":
        # a*h + 1 groups of a routers, p nodes a router
        a, p, h = (_count(topology.get(key)) for key in ("a", "p", "h"))
        if a is None or p is None or h is None:
            return None
        switches = min(_HUGE, a * (a * h + 1))
        return ("dragonfly", min(_HUGE, switches * p), switches)
    if kind == "flatfly":
        # k^n routers, c nodes a router
        k, n, c = (_count(topology.get(key)) for key in ("k", "n", "c"))
        if k is None or n is None or c is None:
            return None
        return ("flatfly", min(_HUGE, _power(k, n) * c), _power(k, n))
    if kind == "cmesh":
        # k x k routers, 2 x 2 nodes a router
        k = _count(topology.get("k"))
        if k is None:
            return None
        return ("cmesh", min(_HUGE, 4 * _power(k, 2)), _power(k, 2))
    return None


def check_estimate(doc: dict[str, Any], files: Sequence[NamedFile], limit: int) -> None:
    """Refuse, before the engine runs, a description whose size exceeds `limit`."""
    found = estimate(doc.get("topology"))
    if found is not None:
        kind, nodes, switches = found
        if nodes > limit:
            raise _too_large(f"a {kind} with {_count_of(nodes)} nodes", limit)
        if switches > limit:
            raise _too_large(f"a {kind} with {_count_of(switches)} switches", limit)
    budget = limit * FABRIC_BYTES_PER_NODE
    total = 0
    for f in files:
        total += f.size
    if total > budget:
        raise _too_large(
            f"fabric files of {total} bytes ({FABRIC_BYTES_PER_NODE} allowed per node)", limit
        )


def check_built(nodes: int, switches: int, limit: int) -> None:
    """Refuse a built cluster larger than `limit` (a fabric's size is known only now)."""
    if nodes > limit:
        raise _too_large(f"a network with {nodes} nodes", limit)
    if switches > limit:
        raise _too_large(f"a network with {switches} switches", limit)


def _count_of(count: int) -> str:
    return "more than 2^64" if count >= _HUGE else str(count)

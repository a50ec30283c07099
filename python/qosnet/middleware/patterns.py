"""Communication patterns: which of an application's N nodes send to which.

A profile gives the bandwidth reserved per *flow* (document 001 §3.2: "bandwidths denoted
as reserved per flow"); the allocator accounts bandwidth per *link*. The pattern bridges
the two: a node's link to its switch carries every flow the node sends and every flow it
receives, and "the bandwidth measured on a link is given by the total amount of bandwidth
taken by all the communication flows on that link" (§3.2.1). So a node with 2 outgoing and
2 incoming flows of 8 MB/s each loads its link with 8 x 4 = 32 MB/s.

Nodes are ranks 0..N-1 among the N nodes an application gets; which physical nodes those
are is the allocator's choice. Bandwidths are bytes/s (see `qosnet.middleware.units`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

__all__ = ["Flow", "LinkLoad", "Pattern"]


class Flow(NamedTuple):
    """A communication flow (document 001 §2.1): a stream from rank `src` to rank `dst`."""

    src: int
    dst: int


class LinkLoad(NamedTuple):
    """The load on the link between rank `node` and its switch, in bytes/s.

    `out` is what the node sends, `into` what it receives. Document 001 adds both on one
    link (§3.2.1, §4.2.1: `total`); the allocator, through the engine's call admission
    (document 004 §3.4), accounts each direction of a full-duplex link separately, which
    for these symmetric patterns is the same as a link of twice the capacity.
    """

    node: int
    out: float
    into: float

    @property
    def total(self) -> float:
        return self.out + self.into


class Pattern(StrEnum):
    """Who talks to whom among the N nodes of one application.

    - `ring`: each node talks to its two neighbours, i-1 and i+1 (mod N): 2 outgoing and 2
      incoming flows, 4 per node link whatever N is (1 partner when N = 2).
    - `hypercube`: node i talks to i XOR 2^k for k < log2 N (the partners of binary-swap
      compositing), so log2 N outgoing and log2 N incoming flows: 4 per node link on 4
      nodes and 6 on 8. These are the two counts document 001 §3.2.1 gives for its example
      applications ("2 outgoing and 2 incoming flows" on 4 nodes, "3 outgoing and 3
      incoming flows" on 8), which a ring cannot give on 8 nodes; §3.2.1 is silent about 16
      nodes, where this pattern gives 8. N must be a power of two.
    - `all_to_all`: every node talks to every other: N-1 outgoing and N-1 incoming flows,
      2N-2 per node link (document 001 §4.2.1: 6 flows on 4 nodes, 14 on 8).

    Document 001 names no other pattern (no master/worker), so there is none here.
    """

    RING = "ring"
    HYPERCUBE = "hypercube"
    ALL_TO_ALL = "all_to_all"

    def nodes_problem(self, nodes: int) -> str | None:
        """Why this pattern cannot run on `nodes` nodes, or None if it can."""
        if nodes < 1:
            return "must be >= 1"
        if self is Pattern.HYPERCUBE and nodes & (nodes - 1):
            return "must be a power of two for the hypercube pattern"
        return None

    def partners(self, rank: int, nodes: int) -> tuple[int, ...]:
        """The ranks `rank` sends to (and, every pattern here being symmetric, hears from)."""
        self._check(nodes)
        if not 0 <= rank < nodes:
            raise ValueError(f"rank: must be in 0..{nodes - 1}, got {rank!r}")
        if self is Pattern.RING:
            return tuple(sorted({(rank - 1) % nodes, (rank + 1) % nodes} - {rank}))
        if self is Pattern.HYPERCUBE:
            return tuple(sorted(rank ^ (1 << k) for k in range(nodes.bit_length() - 1)))
        return tuple(r for r in range(nodes) if r != rank)

    def flows(self, nodes: int) -> tuple[Flow, ...]:
        """Every flow of the application on `nodes` nodes, sorted by (src, dst)."""
        return tuple(Flow(src, dst) for src in range(nodes) for dst in self.partners(src, nodes))

    def flows_per_link(self, nodes: int) -> int:
        """Flows (outgoing plus incoming) on the busiest node link."""
        out, into = self._counts(nodes)
        return max((o + i for o, i in zip(out, into, strict=True)), default=0)

    def link_loads(self, nodes: int, bandwidth: float) -> tuple[LinkLoad, ...]:
        """Per rank, the load on its node link when every flow gets `bandwidth` bytes/s."""
        if not bandwidth >= 0:  # also rejects NaN
            raise ValueError(f"bandwidth: must be >= 0, got {bandwidth!r}")
        out, into = self._counts(nodes)
        return tuple(
            LinkLoad(node, out[node] * bandwidth, into[node] * bandwidth) for node in range(nodes)
        )

    def link_load(self, nodes: int, bandwidth: float) -> float:
        """The load on the busiest node link, bytes/s: `bandwidth` x `flows_per_link`."""
        return max((load.total for load in self.link_loads(nodes, bandwidth)), default=0.0)

    def _counts(self, nodes: int) -> tuple[list[int], list[int]]:
        """Per rank, how many flows it sends and how many it receives."""
        out = [0] * nodes
        into = [0] * nodes
        for src, dst in self.flows(nodes):
            out[src] += 1
            into[dst] += 1
        return out, into

    def _check(self, nodes: int) -> None:
        problem = self.nodes_problem(nodes)
        if problem:
            raise ValueError(f"nodes: {problem}, got {nodes!r}")

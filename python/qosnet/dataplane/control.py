"""The link between the control plane (`qosnet serve`) and the hosts' agents.

The service admits jobs (document 001's middleware, 004 §3.4's criteria) and lists every
admitted flow with its reserved bandwidth (`GET /v1/reservations?node=N`: the NIC's IDT
table of node N). A host's `ServiceLink` reads that list and makes its agent hold exactly
those reservations: each flow sourced at the node is reserved toward the destination node's
agent (a host file maps node numbers to agent endpoints), and a flow no longer listed —
its job released, or its lease expired — is removed. Every installed reservation carries
its own lease in the agent (a few sync intervals), renewed at each sync: if the service or
the link goes silent, the agent drops the reservations by itself rather than keep pacing
for a job nobody holds. Flows the service did not admit are refused by a closed agent.

Reading the whole node's table needs a token that sees every tenant's reservations (an
admin token).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qosnet._core import Agent
from qosnet.client import Client

__all__ = ["ServiceLink", "read_hosts"]


def read_hosts(path: Path) -> dict[int, str]:
    """A host file: one `NODE HOST:PORT` per line (`#` starts a comment)."""
    hosts: dict[int, str] = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[0].isdigit() or ":" not in parts[1]:
            raise ValueError(f"{path}:{n}: expected `NODE HOST:PORT`, got {line!r}")
        hosts[int(parts[0])] = parts[1]
    return hosts


class ServiceLink:
    """Keeps `agent`'s reservations equal to the service's admitted flows sourced at `node`.

    `service` is the service's URL or a `Client`; call `sync()` every `interval` seconds.
    """

    def __init__(
        self,
        agent: Agent,
        service: str | Client,
        node: int,
        hosts: dict[int, str],
        *,
        token: str | None = None,
        interval: float = 1.0,
        lease_intervals: float = 3.0,
        priority: int = 0,
    ) -> None:
        self.agent = agent
        self.client = service if isinstance(service, Client) else Client(service, token=token)
        self.node = node
        self.hosts = hosts
        self.interval = interval
        self.lease = interval * lease_intervals
        self.priority = priority
        self.installed: dict[str, float] = {}
        self.unknown_nodes: set[int] = set()

    def sync(self) -> dict[str, Any]:
        """One round: fetch the node's reservations, install, renew and remove. Returns what
        changed. A service that cannot be reached changes nothing (the leases run on)."""
        reservations = self.client.reservations(node=self.node)
        wanted: dict[str, float] = {}
        for r in reservations:
            if r.src != self.node:
                continue
            dst = self.hosts.get(r.dst)
            if dst is None:
                self.unknown_nodes.add(r.dst)
                continue
            # Several jobs' flows between the same two nodes share one agent flow.
            wanted[dst] = wanted.get(dst, 0.0) + r.bandwidth * 8
        added = [d for d in wanted if d not in self.installed]
        removed = [d for d in self.installed if d not in wanted]
        for dst, bps in wanted.items():
            self.agent.reserve(dst, bps, self.priority, self.lease)
        for dst in removed:
            self.agent.release(dst, self.priority)
        self.installed = wanted
        return {"installed": added, "removed": removed, "flows": dict(wanted)}

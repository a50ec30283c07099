"""The link between the control plane (`qosnet serve`) and the hosts' agents.

The service admits jobs (document 001's middleware, 004 §3.4's criteria) and single flows
(`POST /v1/flows`), and lists every admitted flow with its reserved bandwidth
(`GET /v1/reservations?node=N`: the NIC's IDT table of node N). A host's `ServiceLink`
reads that list and makes its agent hold exactly those reservations: each flow sourced at
the node is reserved from its source port toward the destination node's agent and port (a
host file maps node numbers to agent endpoints; jobs' flows are port 0 to port 0), and a
flow no longer listed — its job or flow released, or its lease expired — is removed. Every
installed reservation carries its own lease in the agent (a few sync intervals), renewed
at each sync: if the service or the link goes silent, the agent drops the reservations by
itself rather than keep pacing for a job nobody holds. Flows the service did not admit are
refused by a closed agent.

Reading the whole node's table needs a token that sees every tenant's reservations (an
admin token).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qosnet._core import Agent, Daemon
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
        agent: Agent | Daemon,
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
        #: (source port, destination endpoint, priority) -> bits/s installed.
        self.installed: dict[tuple[int, str, int], float] = {}
        self.unknown_nodes: set[int] = set()

    def sync(self) -> dict[str, Any]:
        """One round: fetch the node's reservations, install, renew and remove. Returns what
        changed. A service that cannot be reached changes nothing (the leases run on)."""
        reservations = self.client.reservations(node=self.node)
        wanted: dict[tuple[int, str, int], float] = {}
        for r in reservations:
            if r.src != self.node:
                continue
            host = self.hosts.get(r.dst)
            if host is None:
                self.unknown_nodes.add(r.dst)
                continue
            # A single flow carries its own priority; jobs' flows take the link's.
            priority = r.priority if r.flow is not None else self.priority
            key = (r.src_port, f"{host}/{r.dst_port}" if r.dst_port else host, priority)
            # Several jobs' flows between the same two ports share one agent flow.
            wanted[key] = wanted.get(key, 0.0) + r.bandwidth * 8
        added = [k for k in wanted if k not in self.installed]
        removed = [k for k in self.installed if k not in wanted]
        for (port, dst, priority), bps in wanted.items():
            if isinstance(self.agent, Daemon):
                self.agent.reserve(dst, bps, priority, self.lease, port=port)
            elif port:
                raise ValueError(
                    f"flow from port {port}: only a daemon's agent has ports other than 0"
                )
            else:
                self.agent.reserve(dst, bps, priority, self.lease)
        for port, dst, priority in removed:
            if isinstance(self.agent, Daemon):
                self.agent.release(dst, priority, port=port)
            else:
                self.agent.release(dst, priority)
        self.installed = wanted
        return {
            "installed": [_name(k) for k in added],
            "removed": [_name(k) for k in removed],
            "flows": {_name(k): v for k, v in wanted.items()},
        }


def _name(key: tuple[int, str, int]) -> str:
    """A flow as the link reports it: the destination, after the source port if not 0."""
    port, dst, _ = key
    return f"{port}->{dst}" if port else dst

"""The link between the control plane (`qosnet serve`) and the hosts' agents.

The service admits jobs (document 001's middleware, 004 §3.4's criteria) and single flows
(`POST /v1/flows`), and lists every admitted flow with its reserved bandwidth
(`GET /v1/reservations?node=N`: the NIC's IDT table of node N). A host's `ServiceLink`
reads that list and makes its agent hold exactly those reservations: each flow sourced at
the node is reserved from its source port toward the destination node's agent and port (a
host file maps node numbers to agent endpoints; jobs' flows are port 0 to port 0), and a
flow no longer listed — its job or flow released, or its lease expired — is removed. The
destination's side too (004 §3.4 (c); `GET /v1/reservations?dst=N`): each flow destined to
the node is admitted in its agent, from the source node's agent and port to its
destination port, and withdrawn when no longer listed. Flows the service did not admit are
refused by a closed agent, at the source (its sends) and at the destination (its
connections).

One lease clock: the service's
-------------------------------
The service grants every lease and keeps its end (`lease_expires`, by its own clock,
`Settings.clock`, stored in its database); only the owner renews it, at the service
(`/renew`); the service ends it (`expire_due`). An agent holds no lease of its own: each
installed reservation and admission carries the time the service's lease had left when the
service answered (`lease_remaining`, measured on the service's clock), counted by the
agent from the answer's arrival on its monotonic clock (`Agent.reserve(..., lease)`;
`expire_leases` in the Rust agent), and replaced, not extended, at every sync. When it runs
out the agent removes the reservation (a closed agent drops what the flow had queued) or
the admission (and closes its connections) by itself, so it never paces for a job nobody
holds, and it never holds one longer than the service did. Why the time left and not the
end: turning an end into a deadline on the host would read the host's wall clock, and
every second it is off from the service's would be a second held too long (capacity the
service has already given to another job) or dropped too early.

- **Hosts' clocks disagree** (skew, or a wall clock stepped by NTP): no effect; the only
  error is the answer's one-way delay, by which the agent holds late (milliseconds).
- **The service (or the network to it) stops**: the agents keep what was installed until
  the service's lease of it ends, then drop it; when the service answers again, the next
  sync installs, renews and removes as usual. A lease renewed at the service after this
  host last heard from it lapses in the agent at the end it was told, until the next sync
  that succeeds (a renewal in the last interval before the end: at most one interval, 1 s
  by default): the agent follows what it was last told rather than guess.
- **The service restarts**: its leases are in its database (ends on its clock), so they
  run on through the restart; the first request after it ends those that passed. The one
  clock is the service host's: a service restarted on another host, or several service
  processes on one database, must have clocks that agree (NTP), or the leases shift by
  the difference.
- **The agent restarts**: it starts with nothing reserved (a closed agent refuses every
  flow) until the first sync installs what the service holds, each with its time left.

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
    """Keeps `agent`'s reservations equal to the service's admitted flows sourced at `node`,
    and its admissions equal to those destined to `node`.

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
        priority: int = 0,
    ) -> None:
        self.agent = agent
        self.client = service if isinstance(service, Client) else Client(service, token=token)
        self.node = node
        self.hosts = hosts
        self.interval = interval
        self.priority = priority
        #: (source port, destination endpoint, priority) -> bits/s installed.
        self.installed: dict[tuple[int, str, int], float] = {}
        #: (source endpoint, destination port, priority) admitted here.
        self.admitted: set[tuple[str, int, int]] = set()
        self.unknown_nodes: set[int] = set()

    def _endpoint(self, node: int, port: int) -> str | None:
        """Node `node`'s agent's port `port`, from the host file (None, noted, if unknown)."""
        host = self.hosts.get(node)
        if host is None:
            self.unknown_nodes.add(node)
            return None
        return f"{host}/{port}" if port else host

    def _priority(self, r: Any) -> int:
        # A single flow carries its own priority; jobs' flows take the link's.
        return int(r.priority) if r.flow is not None else self.priority

    def sync(self) -> dict[str, Any]:
        """One round: fetch the node's reservations (sourced and destined here), install,
        renew and remove. Returns what changed. A service that cannot be reached changes
        nothing (the leases run on)."""
        reservations = self.client.reservations(node=self.node)
        incoming = self.client.reservations(dst=self.node)
        #: Each flow's lease in the agent, seconds: the service's time left (several jobs'
        #: flows on one agent flow: the longest).
        leases: dict[tuple[Any, ...], float] = {}
        wanted: dict[tuple[int, str, int], float] = {}
        for r in reservations:
            if r.src != self.node or r.lease_remaining <= 0:
                continue
            dst = self._endpoint(r.dst, r.dst_port)
            if dst is None:
                continue
            key = (r.src_port, dst, self._priority(r))
            # Several jobs' flows between the same two ports share one agent flow.
            wanted[key] = wanted.get(key, 0.0) + r.bandwidth * 8
            leases[key] = max(leases.get(key, 0.0), r.lease_remaining)
        admit: set[tuple[str, int, int]] = set()
        for r in incoming:
            mine = r.dst == self.node and r.lease_remaining > 0
            src = self._endpoint(r.src, r.src_port) if mine else None
            if src is not None:
                k = (src, r.dst_port, self._priority(r))
                admit.add(k)
                leases[k] = max(leases.get(k, 0.0), r.lease_remaining)
        added = [k for k in wanted if k not in self.installed]
        removed = [k for k in self.installed if k not in wanted]
        for (port, dst, priority), bps in wanted.items():
            lease = leases[(port, dst, priority)]
            if isinstance(self.agent, Daemon):
                self.agent.reserve(dst, bps, priority, lease, port=port)
            elif port:
                raise ValueError(
                    f"flow from port {port}: only a daemon's agent has ports other than 0"
                )
            else:
                self.agent.reserve(dst, bps, priority, lease)
        for port, dst, priority in removed:
            if isinstance(self.agent, Daemon):
                self.agent.release(dst, priority, port=port)
            else:
                self.agent.release(dst, priority)
        self.installed = wanted
        for src, port, priority in admit:
            self.agent.admit(src, port, priority, leases[(src, port, priority)])
        revoked = self.admitted - admit
        for src, port, priority in revoked:
            self.agent.revoke(src, port, priority)
        newly = admit - self.admitted
        self.admitted = admit
        return {
            "installed": [_name(k) for k in added],
            "removed": [_name(k) for k in removed],
            "flows": {_name(k): v for k, v in wanted.items()},
            "admitted": sorted(_incoming(k) for k in newly),
            "revoked": sorted(_incoming(k) for k in revoked),
        }


def _name(key: tuple[int, str, int]) -> str:
    """A flow as the link reports it: the destination, after the source port if not 0."""
    port, dst, _ = key
    return f"{port}->{dst}" if port else dst


def _incoming(key: tuple[str, int, int]) -> str:
    """An admitted incoming flow as the link reports it: the source, then the port if not 0."""
    src, port, _ = key
    return f"{src}->{port}" if port else src

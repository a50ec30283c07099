"""QoS for MPI programs through communicator attributes (document 001 §2.2.2).

MPI identifies an attribute by an integer *keyval*; document 001 gives special keyvals a
QoS meaning: setting the attribute requests (or changes, or with 0 releases) bandwidth to a
peer, and getting it tells whether the request was accepted or denied. `QosComm` wraps an
mpi4py communicator so that its `Set_attr` / `Get_attr` do that for `QOS_BANDWIDTH`:

    qos = QosComm(MPI.COMM_WORLD, capacity="1 Gb/s")   # each host's link
    qos.Set_attr(QOS_BANDWIDTH, {0: "40 Mb/s"})     # this rank -> rank 0
    qos.Get_attr(QOS_BANDWIDTH)                      # {0: ("accepted", 40e6)}
    qos.send(frame, dest=0)                          # paced by this host's agent

Ranks become endpoints (each rank's agent, exchanged with `allgather`, as MPICH-GM turned
process ids into GM node and port ids). A request is admitted by 004 §3.4's source
criterion — the flows reserved from this rank's *host* stay within `capacity`, the host's
link: ranks sharing a host share its NIC and link, as two GM ports shared one NIC — or by
the `admit(src, dst, bps)` callable given (e.g. one asking the control plane), and an
admitted one is reserved in the rank's agent (its IDT from the rate). The ranks of a host
(`COMM_TYPE_SHARED`) keep what each has reserved in a shared-memory window, and a request
is checked and booked under an exclusive lock, so two ranks asking at once cannot both
take the host's last bandwidth (`_HostLedger`). Any other attribute passes to
MPI untouched.
The QoS state is also stored as an MPI attribute of the communicator, whose delete callback
releases the reservations when the communicator is freed.

`send`/`recv` move bytes through the agent: flows that asked for QoS are paced by their
IDT; the others go through the same agent unregulated (it is open). Everything else
(collectives, MPI's own point-to-point) stays MPI's. With `socket`, the ranks go through
their host's agent daemon (`qosnet agent`) as applications, each on its own port, rather
than each running an agent: ranks on one host are then paced by one scheduler (installing
a reservation through the daemon takes a trusted user; otherwise the control plane, e.g.
`admit` asking the service, installs it).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from qosnet._core import Agent, parse_bandwidth

__all__ = ["QOS_BANDWIDTH", "QosComm"]

try:  # pragma: no branch - the module is usable (and documented) without MPI installed
    from mpi4py import MPI
except ImportError:  # pragma: no cover
    MPI = None  # type: ignore[assignment]

#: The QoS keyval: value {peer rank: bandwidth} (a string in physical units or bits/s).
QOS_BANDWIDTH: int = (
    MPI.Comm.Create_keyval(delete_fn=lambda comm, key, state: state.release_all())
    if MPI is not None
    else -1
)


class _HostLedger:
    """What each rank of one host has reserved (bits/s), in a shared-memory window of the
    host's ranks: the host's link is their common capacity (004 §3.4 (a) per node).

    A booking is checked and written under an exclusive lock, so two ranks asking at once
    cannot both take the host's last bandwidth. The lock is a file lock (`flock`) on a file
    the host's ranks share, not MPI's `Win.Lock`: a passive-target lock waits for its
    target rank's MPI progress, and a rank blocked in the agent's receive makes none. The
    window stays in one `Lock_all` epoch (no communication: `MODE_NOCHECK`), and `Win.Sync`
    orders the loads and stores around each booking (MPI's unified memory model)."""

    def __init__(self, comm: Any) -> None:
        import os
        import tempfile

        self.node = comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.rank: int = self.node.Get_rank()
        n = self.node.Get_size()
        self.win = MPI.Win.Allocate_shared(8 * n if self.rank == 0 else 0, 8, comm=self.node)
        buf, _ = self.win.Shared_query(0)
        self.slots = memoryview(buf).cast("B").cast("d")  # type: ignore[arg-type]
        path = None
        if self.rank == 0:
            for i in range(n):
                self.slots[i] = 0.0
            fd, path = tempfile.mkstemp(prefix="qosnet-mpi-host-", suffix=".lock")
            os.close(fd)
        self.path: str = self.node.bcast(path, root=0)
        self.lock = open(self.path, "rb")  # noqa: SIM115 - held for the ledger's life
        self.win.Lock_all(MPI.MODE_NOCHECK)
        self.node.Barrier()

    def book(self, mine: float, capacity: float) -> bool:
        """Set this rank's reserved total to `mine` if the host's total stays within
        `capacity` (always, if it does not grow); True if booked."""
        import fcntl

        fcntl.flock(self.lock, fcntl.LOCK_EX)
        try:
            self.win.Sync()
            others = sum(self.slots) - self.slots[self.rank]
            ok = mine <= self.slots[self.rank] or others + mine <= capacity
            if ok:
                self.slots[self.rank] = mine
            self.win.Sync()
        finally:
            fcntl.flock(self.lock, fcntl.LOCK_UN)
        return ok

    def free(self) -> None:
        """Collective over the host's ranks."""
        import os

        self.win.Unlock_all()
        self.slots.release()
        self.win.Free()
        self.lock.close()
        self.node.Barrier()
        if self.rank == 0:
            os.unlink(self.path)
        self.node.Free()


class _State:
    """What the QoS attribute holds: per peer (status, bits/s), and the host's ledger."""

    def __init__(self, agent: Agent, endpoints: list[str], ledger: _HostLedger) -> None:
        self.agent = agent
        self.endpoints = endpoints
        self.ledger = ledger
        self.status: dict[int, tuple[str, float]] = {}

    def accepted(self, but: int | None = None) -> float:
        """Bits/s this rank has reserved, leaving out peer `but`."""
        return sum(r for p, (s, r) in self.status.items() if s == "accepted" and p != but)

    def release_all(self) -> None:
        for peer, (status, _) in list(self.status.items()):
            if status == "accepted":
                self.agent.release(self.endpoints[peer])
        self.status.clear()
        self.ledger.book(0.0, 0.0)


class QosComm:
    """`comm` with document 001 §2.2.2's QoS attributes and agent-paced send/recv."""

    def __init__(
        self,
        comm: Any,
        *,
        capacity: str | float = "1 Gb/s",  # the host's link, shared by its ranks
        admit: Callable[[int, int, float], bool] | None = None,
        host: str = "127.0.0.1",
        agent: Agent | None = None,
        socket: str | None = None,
    ) -> None:
        if MPI is None:
            raise RuntimeError("qosnet.dataplane.mpi needs mpi4py (pip install 'qosnet[mpi]')")
        self.comm = comm
        self.rank: int = comm.Get_rank()
        self.capacity = parse_bandwidth(capacity) if isinstance(capacity, str) else capacity
        self._admit = admit
        if agent is None:
            agent = Agent.connect(socket) if socket else Agent(listen=f"{host}:0", open=True)
        self.agent = agent
        endpoints: list[str] = comm.allgather(self.agent.endpoint)
        self._rank_of = {e: r for r, e in enumerate(endpoints)}
        self._state = _State(self.agent, endpoints, _HostLedger(comm))
        comm.Set_attr(QOS_BANDWIDTH, self._state)
        self._pending: dict[int, deque[bytes]] = {}

    # --- attributes ---------------------------------------------------------------------

    def Set_attr(self, keyval: int, value: Any) -> None:  # noqa: N802 - MPI's name
        if keyval != QOS_BANDWIDTH:
            self.comm.Set_attr(keyval, value)
            return
        for peer, bw in dict(value).items():
            self._request(int(peer), bw)

    def Get_attr(self, keyval: int) -> Any:  # noqa: N802 - MPI's name
        if keyval != QOS_BANDWIDTH:
            return self.comm.Get_attr(keyval)
        return dict(self._state.status)

    def _request(self, peer: int, bw: str | float) -> None:
        if not 0 <= peer < self.comm.Get_size() or peer == self.rank:
            raise ValueError(
                f"QOS_BANDWIDTH: peer must be another rank in 0..{self.comm.Get_size() - 1}, "
                f"got {peer}"
            )
        bps = parse_bandwidth(bw) if isinstance(bw, str) else float(bw)
        dst = self._state.endpoints[peer]
        others = self._state.accepted(but=peer)
        if bps <= 0:  # a release
            if self._state.status.pop(peer, ("", 0.0))[0] == "accepted":
                self.agent.release(dst)
                self._state.ledger.book(others, self.capacity)
            return
        if self._admit is not None:
            ok = self._admit(self.rank, peer, bps)
        else:
            # Document 004 §3.4 (a): the source node's reserved sum within its capacity;
            # the node is the host, whose ranks share its link.
            ok = self._state.ledger.book(others + bps, self.capacity)
        if ok:
            self.agent.reserve(dst, bps)
            self._state.status[peer] = ("accepted", bps)
        else:
            # A denied change keeps the reservation it had (if any) as it was.
            old = self._state.status.get(peer)
            if old is None or old[0] != "accepted":
                self._state.status[peer] = ("denied", bps)

    # --- point to point through the agent ------------------------------------------------

    def send(self, data: bytes, dest: int) -> None:
        self.agent.send(self._state.endpoints[dest], data)

    def flush(self, dest: int, timeout: float = 60.0) -> None:
        """Wait until everything sent to `dest` has been handed to the network."""
        self.agent.flush(self._state.endpoints[dest], timeout=timeout)

    def recv(self, source: int, timeout: float | None = None) -> bytes:
        """The next message from `source` (messages from other ranks are kept for later)."""
        q = self._pending.get(source)
        if q:
            return q.popleft()
        while True:
            src, _, data = self.agent.recv(timeout)
            rank = self._rank_of.get(src)
            if rank == source:
                return data
            if rank is not None:
                self._pending.setdefault(rank, deque()).append(data)

    def recv_any(self, timeout: float | None = None) -> tuple[int, bytes]:
        """The next message from any rank: (source rank, data)."""
        for r, q in self._pending.items():
            if q:
                return r, q.popleft()
        while True:
            src, _, data = self.agent.recv(timeout)
            if src in self._rank_of:
                return self._rank_of[src], data

    def stats(self) -> dict[str, Any]:
        return self.agent.stats()

    def free(self) -> None:
        """Release the reservations and stop the agent (collective over `comm`: the host's
        ledger is freed with its ranks)."""
        self.comm.Delete_attr(QOS_BANDWIDTH)
        self._state.ledger.free()
        self.agent.close()

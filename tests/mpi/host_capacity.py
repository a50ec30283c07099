"""Run by tests/test_dataplane.py under `mpiexec -n 3` (all ranks on this one host): QoS
requests of several ranks are admitted against the capacity of the host they share, not
each rank's own (document 004 §3.4 (a): the source node's cumulative bandwidth). Rank 0
prints one line per step with every rank's answer, as JSON."""

from __future__ import annotations

import json

from mpi4py import MPI

from qosnet.dataplane.mpi import QOS_BANDWIDTH, QosComm

MB = 1e6  # bits/s per Mb/s


def main() -> None:
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    qos = QosComm(comm, capacity="100 Mb/s")
    peer = (rank + 1) % comm.Get_size()

    def step(name: str, ask: dict[int, float] | None) -> None:
        """Ranks in `ask` (rank -> Mb/s) ask in rank order, one at a time; then every
        rank's status toward its peer is gathered."""
        for r in range(comm.Get_size()):
            if ask is not None and r == rank and r in ask:
                qos.Set_attr(QOS_BANDWIDTH, {peer: ask[r] * MB})
            comm.Barrier()
        status = qos.Get_attr(QOS_BANDWIDTH).get(peer, ("none", 0.0))
        got = comm.gather([status[0], status[1] / MB], root=0)
        if rank == 0:
            print(json.dumps({"step": name, "status": got}), flush=True)

    step("rank 1 asks 60", {1: 60})
    step("rank 2 asks 60 on the same host", {2: 60})
    step("rank 2 asks 40", {2: 40})
    step("rank 1 releases, rank 2 changes to 60", {1: 0, 2: 60})
    step("everyone releases", {0: 0, 1: 0, 2: 0})
    # All three at once, 40 Mb/s each: the host holds two of them (80 <= 100 < 120).
    comm.Barrier()
    qos.Set_attr(QOS_BANDWIDTH, {peer: 40 * MB})
    step("all three ask 40 at once", None)
    qos.free()


if __name__ == "__main__":
    main()

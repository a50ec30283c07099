"""qosnet's data plane: document 004's NIC-based rate control on real sockets.

- `Agent` (Rust, `qosnet-net`): a host's rate-control agent over TCP, the same IDT/NDT
  scheduler as the simulator's NICs (`qosnet-rate`), in this process (library mode), or
  `Agent.connect(socket)`: an application's handle on its host's `Daemon` (`qosnet agent`),
  the trusted agent every send of the host goes through;
- `host`: a host process driven over a pipe (the cluster tests' and `seed004-real`'s hosts);
- `cluster`: a small cluster of network namespaces, veth pairs, a bridge and `tc` rate limits;
- `experiments`: document 004 §5.4's sharing experiments on that cluster (`seed004-real`);
- `overhead`: document 004 §5.2's overhead measurements (ping-pong latency, bandwidth);
- `control`: the link to `qosnet serve`: admitted reservations installed in the agents;
- `mpi`: QoS through MPI communicator attributes (document 001 §2.2.2).
"""

from qosnet._core import Agent, Daemon, FlowNotAdmitted, NetError, parse_bandwidth

__all__ = ["Agent", "Daemon", "FlowNotAdmitted", "NetError", "parse_bandwidth"]

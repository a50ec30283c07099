"""A ray-tracing-like master/worker MPI program with QoS (document 001 §2.2.2).

Rank 0 is the master; the others render tiles of an image (here: a Mandelbrot set, as real
computation) and stream them to the master. Each worker asks for bandwidth to the master
through the QoS communicator attribute; worker 1 asks for twice what worker 2 asks for, and
halfway through worker 1 changes its request (attributes can be changed while running). A
request the source host's capacity cannot hold (its ranks share it) is denied, and the
worker's flow then goes unregulated. The master prints what each worker's flow got.

    mpiexec -n 3 python examples/mpi_qos_ray_tracing.py [--capacity "200 Mb/s"]

With `--socket`, the ranks go through the host's agent daemon instead of each running its
own agent: all ranks' flows are then paced by the one scheduler of the host, as on
document 004's NIC (the daemon must be `--open` for the denied worker's unregulated flow,
and the ranks' user trusted to reserve through it, e.g. the daemon's own):

    qosnet agent --open --socket /tmp/qosnet.sock --listen 127.0.0.1:7400 &
    mpiexec -n 3 python examples/mpi_qos_ray_tracing.py --socket /tmp/qosnet.sock
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mpi4py import MPI

from qosnet.dataplane.mpi import QOS_BANDWIDTH, QosComm

TILE = 128  # pixels per side; a tile is 128*128*4 bytes = 64 KB


def render(tile: int, size: int) -> bytes:
    """Tile `tile` of a `size`x`size` Mandelbrot image, as float32 escape counts."""
    per_row = size // TILE
    y0, x0 = divmod(tile, per_row)
    ys = np.linspace(-1.5, 1.5, size)[y0 * TILE : (y0 + 1) * TILE]
    xs = np.linspace(-2.0, 1.0, size)[x0 * TILE : (x0 + 1) * TILE]
    c = xs[None, :] + 1j * ys[:, None]
    z = np.zeros_like(c)
    n = np.zeros(c.shape, dtype=np.float32)
    for _ in range(24):
        inside = np.abs(z) < 2
        z = np.where(inside, z * z + c, z)  # escaped points stop (no overflow)
        n += inside
    return n.tobytes()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--capacity", default="200 Mb/s", help="Each host's link rate (its ranks share it)."
    )
    ap.add_argument("--rate", default="20 Mb/s", help="Worker 2's request; worker 1 asks twice.")
    ap.add_argument("--seconds", type=float, default=4.0)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--socket", default=None, help="The host's agent daemon (qosnet agent).")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    qos = QosComm(comm, capacity=args.capacity, socket=args.socket)
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank != 0:
        from qosnet.dataplane import parse_bandwidth

        want = parse_bandwidth(args.rate) * (2 if rank == 1 else 1)
        qos.Set_attr(QOS_BANDWIDTH, {0: want})
        status = qos.Get_attr(QOS_BANDWIDTH)[0]
        print(f"rank {rank}: asked {want / 1e6:g} Mb/s to the master: {status[0]}", flush=True)
        tiles = (args.size // TILE) ** 2
        t0 = time.monotonic()
        k = rank
        changed = False
        while time.monotonic() - t0 < args.seconds:
            if rank == 1 and not changed and time.monotonic() - t0 > args.seconds / 2:
                qos.Set_attr(QOS_BANDWIDTH, {0: want / 2})  # changed while running
                now = qos.Get_attr(QOS_BANDWIDTH)[0][0]
                print(f"rank 1: changed to {want / 2e6:g} Mb/s: {now}", flush=True)
                changed = True
            qos.send(render(k % tiles, args.size), 0)
            k += size - 1
        qos.send(b"", 0)  # done
        qos.flush(0)
    else:
        got = {r: 0 for r in range(1, size)}
        done = 0
        t0 = time.monotonic()
        while done < size - 1:
            src, data = qos.recv_any(timeout=120)
            if not data:
                done += 1
            got[src] += len(data)
        secs = time.monotonic() - t0
        print(f"{'worker':>6} {'MB':>8} {'Mb/s':>8}")
        for r, b in got.items():
            print(f"{r:>6} {b / 1e6:8.2f} {b * 8 / secs / 1e6:8.2f}")
    comm.Barrier()
    qos.free()


if __name__ == "__main__":
    main()

"""The cluster: the network admission runs on, installed by an admin while nothing holds a
reservation on the old one, and its links' reserved bandwidth.
"""

from __future__ import annotations

import logging
from typing import Any

from qosnet.middleware.allocator import LinkUsage, ResourceAllocator
from qosnet.middleware.cluster import Cluster
from qosnet.service.cluster_loader import LoadedCluster, Origin
from qosnet.service.db import ClusterRow
from qosnet.service.errors import ClusterUnavailable, Conflict
from qosnet.service.handler.core import HandlerCore

log = logging.getLogger("qosnet.service")


class ClusterAdmin(HandlerCore):
    """The network admission runs on: installed, read, and its reserved bandwidth."""

    def set_cluster(self, text: str, name: str) -> LoadedCluster:
        """Install a new network; refused (409) while any job holds a reservation.

        Loaded and checked whole before anything is written: a cluster that fails (or
        would not fit the size limit) is never saved, so no restart meets it."""
        loaded = self._load(text, name, Origin.UPLOAD, None)
        allocator = ResourceAllocator(
            loaded.cluster, payload_fraction=self.settings.payload_fraction
        )
        base_dir = self.settings.cluster_dir
        with self._write() as txn:
            active = self._active_count(txn.session)
            if active:
                raise Conflict(
                    f"{active} jobs or flows hold reservations on the current cluster; "
                    "release them or let their leases expire first"
                )
            row = txn.session.get(ClusterRow, 1)
            assert row is not None
            row.name, row.toml, row.updated_at = name, text, self.clock()
            # an upload's file names are the cluster directory's
            row.base_dir = str(base_dir) if base_dir else None
            txn.state.cluster_version += 1
            txn.state.revision += 1
            txn.dirty = True
            self._cluster = loaded
            self._allocator = allocator
            self.cluster_error = None
        log.info("cluster %r installed: %d nodes", name, loaded.cluster.nodes)
        return loaded

    def loaded_cluster(self) -> LoadedCluster:
        """The loaded cluster with its description, or `ClusterUnavailable`."""
        self._ensure_fresh()
        with self._lock:
            if self._cluster is None:
                raise ClusterUnavailable(self.cluster_error or "no cluster is loaded")
            return self._cluster

    def current_cluster(self) -> Cluster:
        return self.loaded_cluster().cluster

    def utilisation(self) -> tuple[list[LinkUsage], list[Any], frozenset[int], int, Cluster]:
        """Switch ports, NICs (`NodeUsage`), free nodes, live jobs and the cluster, all
        from one state of the allocator."""
        self._ensure_fresh()
        with self._lock:
            allocator = self.allocator
            nics: list[Any] = getattr(allocator, "node_utilisation", list)()
            return (
                allocator.utilisation(),
                nics,
                allocator.free_nodes(),
                len(allocator.allocations()),
                self.cluster,
            )

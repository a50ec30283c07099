"""The cluster the middleware allocates: a qosnet network description (TOML).

A cluster is the `[physical]`, `[topology]`, `[routing]`, `[router]` and `[endpoint]`
sections of a qosnet configuration, with no `[[traffic]]`. The Rust engine reads it (the
same validation and routing as the simulator's) and keeps the link accounting of document
004 §3.4 in a `qosnet.CallAdmission`; this module only keeps the text, its name and a few
numbers for the API. Nothing here parses units or routes: the engine does both.

Units: the engine counts bits/s, the middleware bytes/s (`qosnet.middleware.units`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

import qosnet

__all__ = ["DOCUMENT_001_TESTBED", "Cluster"]

#: Document 001's middleware testbed. §4.3.1: sixteen nodes "connected by 8-port Myrinet
#: switches" (plural); §4.1.1: "the maximum bi-directional bandwidth that can be supported
#: per link is 210 MBps" (measured on the first testbed's Myrinet; §4.3.1 gives no figure,
#: so the same is assumed). Sixteen nodes on 8-port switches cannot be one switch; the
#: smallest non-blocking network of such switches is a 4-ary 2-tree: 4 leaf switches with
#: 4 nodes and 4 up-links each, 4 top switches, 8 switches of 8 ports in all.
#:
#: 210 MB/s is the *bi-directional* bandwidth of a link: §4.2.1 divides it among a node's
#: outgoing and incoming flows together (2N - 2 flows on N all-to-all nodes: 210/6 = 35 MB/s
#: per flow on 4 nodes, 210/14 = 15 MB/s on 8). The engine accounts each direction of a
#: link on its own (document 004 §3.4), so each direction gets half, 105 MB/s = 840 Mb/s:
#: for the symmetric patterns of document 001 (as many flows into a node as out of it)
#: that is exactly §4.2.1's division (3 x 35 = 7 x 15 = 105 MB/s each way). Assumed, and
#: not said by the document: a one-way stream also gets only 105 MB/s, and switch-to-switch
#: links are the same as node links. Read this way, §3.4's worked example (40 MB/s per flow
#: on 16 hypercube nodes, 4 flows each way = 160 MB/s) cannot be granted even on an idle
#: cluster; the tests of the worked examples use a cluster of 210 MB/s each way.
DOCUMENT_001_TESTBED = """\
# Document 001's middleware testbed (§4.3.1, §4.1.1): 16 nodes on 8-port switches, 210 MB/s
# bi-directional links (105 MB/s each way), as a 4-ary 2-tree (8 switches of 8 ports) with
# deterministic D-mod-K routing.

[physical]
link_bandwidth = "840 Mb/s"   # 105 MB/s each way: 210 MB/s bi-directional

[topology]
kind = "fat_tree"
k = 4
n = 2

[routing]
kind = "d_mod_k"
"""


@dataclass(frozen=True)
class Cluster:
    """A cluster description: a qosnet TOML network (topology, link bandwidth, routing).

    Build one with `from_toml` or `from_file`, which have the engine validate the text.
    `link_bandwidth` (a link's capacity per direction) and `node_bandwidth` (what a node's
    NIC can send, and receive, at most) are bytes/s.
    """

    text: str = field(repr=False)
    name: str
    nodes: int
    switches: int
    link_bandwidth: float
    node_bandwidth: float
    #: The directory relative file names in the text (a fabric dump, its routes) are read
    #: from; None for the working directory.
    base_dir: str | None = None
    #: Whether the files it names must lie inside `base_dir` (an upload to the service).
    confined: bool = False

    @classmethod
    def from_toml(
        cls,
        text: str,
        name: str = "cluster",
        base_dir: str | PathLike[str] | None = None,
        *,
        confined: bool = False,
    ) -> Cluster:
        """The cluster `text` describes, its file names relative to `base_dir` (with
        `confined`, only inside it); `qosnet.ConfigError` (with `.errors`, a list of (path,
        message)) if the engine rejects it."""
        if not isinstance(text, str):
            raise TypeError(f"text: must be a string, got {type(text).__name__}")
        base = None if base_dir is None else str(base_dir)
        engine = qosnet.CallAdmission(text, base_dir=base, confined=confined)
        ports = engine.ports()
        # Every link of a qosnet network has the one `[physical] link_bandwidth`; the
        # engine has already turned "1680 Mb/s" into bits/s, so no second unit parser.
        link_bps = ports["capacity_bps"][0]
        return cls(
            text=text,
            name=name,
            nodes=engine.nodes,
            switches=engine.routers,
            link_bandwidth=link_bps / 8,
            node_bandwidth=engine.node(0)[2] / 8,
            base_dir=base,
            confined=confined,
        )

    @classmethod
    def from_file(cls, path: str | PathLike[str]) -> Cluster:
        """The cluster in a TOML file, named after the file; file names in it are relative
        to its directory (as in a simulation config)."""
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        return cls.from_toml(text, name=path.stem, base_dir=path.parent.resolve())

    def admission(self) -> qosnet.CallAdmission:
        """A fresh accounting object over this cluster, with nothing reserved."""
        return qosnet.CallAdmission(self.text, base_dir=self.base_dir, confined=self.confined)

    def to_dict(self) -> dict[str, Any]:
        """Name, sizes and links, JSON-able (bandwidths bytes/s).

        `links` lists every switch output port: `router`, `port`, where it leads (`to`:
        "router" or "node", and `to_id`) and its `bandwidth` (its capacity).
        """
        ports = self.admission().ports()
        links = [
            {"router": r, "port": p, "to": to, "to_id": to_id, "bandwidth": bps / 8}
            for r, p, to, to_id, bps in zip(
                ports["router"],
                ports["port"],
                ports["to"],
                ports["to_id"],
                ports["capacity_bps"],
                strict=True,
            )
        ]
        return {
            "name": self.name,
            "nodes": self.nodes,
            "switches": self.switches,
            "link_bandwidth": self.link_bandwidth,
            "node_bandwidth": self.node_bandwidth,
            "links": links,
        }

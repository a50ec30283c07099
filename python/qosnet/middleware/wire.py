"""Admission on the wire: a link carries its data plane's headers too, so admission gives out
only the payload a link carries (document 004 §3.4's criteria, counted in the bytes the
agents actually send).

The data plane's agents (`crates/qosnet-net/src/link.rs`) send 4 KB packets, each a
4112-byte frame (16-byte header) cut into TCP segments of 1448 bytes on a 1500-byte MTU,
each segment with 52 bytes of TCP/IP and 38 of Ethernet (header, FCS, preamble, gap): 4382
bytes on the wire for 4096 of payload, 93.47%. So a link of rate R admits 0.9347 R of
reservations, and an admitted flow then gets its payload rate (issue 34: 25 + 75 Mb/s
admitted on a 100 Mb/s link got 70.2 of the 75). The agents report the same figure for
their own settings (`Agent.stats()["payload_fraction"]`; a test checks they agree).
"""

from __future__ import annotations

from typing import Any

__all__ = ["WIRE_PAYLOAD_FRACTION", "on_the_wire"]

#: Payload over wire bytes of a full 4 KB packet on Ethernet with a 1500-byte MTU.
WIRE_PAYLOAD_FRACTION = 4096 / 4382


def on_the_wire(admission: Any, fraction: float) -> Any:
    """Scale every switch port's and node's capacity in `admission` (a `CallAdmission`
    with nothing reserved yet) to the payload it carries; return it."""
    if fraction == 1.0:
        return admission
    ports = admission.ports()
    for r, p, cap in zip(ports["router"], ports["port"], ports["capacity_bps"], strict=True):
        admission.set_port_capacity(r, p, cap * fraction)
    for n in range(admission.nodes):
        admission.set_node_capacity(n, admission.node(n)[2] * fraction)
    return admission

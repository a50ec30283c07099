"""The unit of every number a run reports (summary.json and the tables), in one place: the
CLI's summary, the HTML report and the sweep table's readers all ask `unit_of`.

The engine counts time in cycles (one cycle = one flit time on a link, `cycle_time_ns` of
them per ns, README "Configuration" `[physical]`), load and throughput in flits/node/cycle
(the fraction of link bandwidth); names ending `_ns`, `_ms` or `_gbps...` say theirs.
"""

from __future__ import annotations

__all__ = ["unit_of"]

_EXACT = {
    "cycle_time_ns": "ns per cycle",
    "nodes": "nodes",
    "routers": "routers",
    "dmp": "fraction of frames",
    "frames": "frames",
    "frames_missed": "frames",
    "flit_hops": "flit-hops",
    "utilization": "fraction of cycles",
    "dma_busy_fraction": "fraction of cycles",
    "vtick": "cycles per flit",
    "window_end_latency": "cycles",
    "stability_latency": "cycles",
}


def unit_of(key: str) -> str:
    """The unit of a summary key (`latency.mean`, `offered_flits_per_node_cycle`) or table
    column; "" for flags and identifiers."""
    name = key.rsplit(".", 1)[-1]
    if key.startswith("latency."):
        return "messages" if name == "count" else "cycles"
    if name in _EXACT:
        return _EXACT[name]
    if name.endswith("flits_per_node_cycle"):
        return "flits/node/cycle"
    if name.endswith("flits_per_cycle"):
        return "flits/cycle"
    if "gbps" in name:
        return "Gb/s per node" if name.endswith("per_node") else "Gb/s"
    if name.endswith("_ns"):
        return "ns"
    if name.endswith("_ms"):
        return "ms"
    if name.endswith("_cycles") or name in ("cycles", "start_cycle", "end_cycle"):
        return "cycles"
    if name.startswith(("latency_", "queueing_", "network_")):
        return "cycles"
    if name.startswith("messages_") or name.endswith("_cqes"):
        return "messages"
    if name.startswith("flits_"):
        return "flits"
    if name.endswith("_packets"):
        return "packets"
    return ""

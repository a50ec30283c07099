"""The agent daemon's Prometheus metrics (`qosnet agent --metrics HOST:PORT`): read from the
daemon's counters at each scrape, so nothing is counted twice and an idle daemon costs
nothing between scrapes.

Per flow: bytes and packets sent, queued bytes, the reserved rate; per source: bytes and
messages received; per host: flows, the link rate and the sum of reservations, refusals
(sends not admitted, incoming flows refused at their hello, hellos that did not prove the
cluster key), malformed frames and local requests, expired leases, local clients; and the
control-plane link: whether the last sync reached the service, and failed syncs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry

__all__ = ["AgentCollector", "serve"]


class AgentCollector(Collector):
    """Metrics of `stats()` (a `Daemon`'s) and of `link_state()` (the service link's:
    `{"up": bool, "failures": int}`)."""

    def __init__(
        self,
        stats: Callable[[], dict[str, Any]],
        link_state: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.stats = stats
        self.link_state = link_state

    def collect(self) -> Iterator[Metric]:
        s = self.stats()
        flow_labels = ["port", "dst", "priority"]
        sent = CounterMetricFamily(
            "qosnet_agent_flow_sent_bytes", "Payload bytes sent per flow.", labels=flow_labels
        )
        packets = CounterMetricFamily(
            "qosnet_agent_flow_sent_packets", "Packets sent per flow.", labels=flow_labels
        )
        queued = GaugeMetricFamily(
            "qosnet_agent_flow_queued_bytes", "Bytes queued per flow.", labels=flow_labels
        )
        reserved = GaugeMetricFamily(
            "qosnet_agent_flow_reserved_bps",
            "Reserved rate per flow, bits/s (0: unreserved).",
            labels=flow_labels,
        )
        for f in s["flows"]:
            labels = [str(f.get("port", 0)), f["dst"], str(f["priority"])]
            sent.add_metric(labels, f["bytes_sent"])
            packets.add_metric(labels, f["packets_sent"])
            queued.add_metric(labels, f["queued_bytes"])
            reserved.add_metric(labels, f["reserved_bps"] or 0.0)
        received = CounterMetricFamily(
            "qosnet_agent_received_bytes",
            "Payload bytes received per source.",
            labels=["src", "priority"],
        )
        messages = CounterMetricFamily(
            "qosnet_agent_received_messages",
            "Messages received per source.",
            labels=["src", "priority"],
        )
        for r in s["received"]:
            received.add_metric([r["src"], str(r["priority"])], r["bytes"])
            messages.add_metric([r["src"], str(r["priority"])], r["messages"])
        yield from (sent, packets, queued, reserved, received, messages)
        yield GaugeMetricFamily("qosnet_agent_flows", "Outgoing flows.", value=len(s["flows"]))
        yield GaugeMetricFamily(
            "qosnet_agent_link_bps", "The host's link rate, bits/s.", value=s.get("link_bps") or 0
        )
        yield GaugeMetricFamily(
            "qosnet_agent_reserved_bps",
            "Sum of the host's reservations, bits/s of payload.",
            value=s.get("reserved_bps", 0.0),
        )
        counters = (
            ("refused_sends", "Sends refused: their flow was not admitted."),
            ("refused_flows", "Incoming flows refused at their hello."),
            ("unauthenticated_hellos", "Hellos that did not prove the cluster key."),
            ("malformed_frames", "Frames refused from peers."),
            ("expired_leases", "Reservations and admissions removed by their lease's end."),
            ("undeliverable", "Messages for a port nobody had open."),
        )
        for key, text in counters:
            yield CounterMetricFamily(f"qosnet_agent_{key}", text, value=s.get(key, 0))
        d = s.get("daemon")
        if d is not None:
            yield GaugeMetricFamily(
                "qosnet_agent_clients", "Local connections.", value=d["clients"]
            )
            yield CounterMetricFamily(
                "qosnet_agent_malformed_requests",
                "Local requests refused as malformed.",
                value=d["malformed_requests"],
            )
        if self.link_state is not None:
            ls = self.link_state()
            yield GaugeMetricFamily(
                "qosnet_agent_service_up",
                "1 if the last sync with the service succeeded.",
                value=1 if ls["up"] else 0,
            )
            yield CounterMetricFamily(
                "qosnet_agent_service_sync_failures",
                "Syncs with the service that failed.",
                value=ls["failures"],
            )


def serve(address: str, collector: AgentCollector) -> tuple[Any, Any]:
    """Serve `collector` at http://`address`/metrics (HOST:PORT); the server and its thread
    (`server.shutdown()` stops it)."""
    from prometheus_client import start_http_server

    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"metrics: expected HOST:PORT, got {address!r}")
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)
    server, thread = start_http_server(int(port), addr=host.strip("[]"), registry=registry)
    return server, thread

//! The host's link, as the agent schedules it: document 004 §3.3's sender serves its flows
//! "at most once in every T time units", T being one packet's time at the link's peak
//! bandwidth. The NIC's firmware could not outrun its link; a user-space agent writing into
//! sockets can, and then the kernel's queue (and TCP, among the host's sockets) decides the
//! shares instead of the reservations. So the agent keeps its own clock of the link
//! (`LinkClock`) and dispatches no packet before the link is free: reserved flows then get
//! their IDTs, and unreserved flows only the slots no reserved flow is due in (§3.3: the
//! rest of the bandwidth).
//!
//! A packet's time on the link is its bytes *on the wire* (`WireModel`): the frame the agent
//! writes (its 16-byte header and payload) cut into TCP segments of `mtu`, each carrying
//! IPv4 (20), TCP with timestamps (32) and the link layer's bytes (`frame_overhead`: 38 on
//! Ethernet, its header, FCS, preamble and inter-frame gap). Admission counts the same bytes
//! (`payload_fraction`): with 4 KB packets on a 1500-byte MTU, 93.5% of an Ethernet link is
//! payload, so that is all of a link a reservation can be given.
//!
//! Units: bytes, bits per second, nanosecond ticks (`qosnet_rate::Ticks`).

use crate::frame::HEADER_BYTES;
use qosnet_rate::Ticks;

/// IPv4 (20 bytes) and TCP with the timestamps option (20 + 12) per segment.
pub const TCP_IP_BYTES: u32 = 52;

/// How many bytes a frame costs on the link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WireModel {
    /// The link's MTU (an IP packet's largest size), bytes.
    pub mtu: u32,
    /// Link-layer bytes per IP packet (Ethernet: 14 header + 4 FCS + 8 preamble + 12 gap).
    pub frame_overhead: u32,
}

impl Default for WireModel {
    fn default() -> WireModel {
        WireModel { mtu: 1500, frame_overhead: 38 }
    }
}

impl WireModel {
    /// TCP payload per segment (the MSS).
    pub fn segment_payload(&self) -> u64 {
        (self.mtu.saturating_sub(TCP_IP_BYTES)).max(1) as u64
    }

    /// Bytes on the link for `frame_bytes` written to a TCP socket (header and payload). A
    /// frame is counted as its own segments: under load TCP packs frames back to back, so
    /// this is an upper bound (at most one segment's headers more per frame).
    pub fn wire_bytes(&self, frame_bytes: u64) -> u64 {
        let segments = frame_bytes.div_ceil(self.segment_payload()).max(1);
        frame_bytes + segments * (TCP_IP_BYTES + self.frame_overhead) as u64
    }

    /// The share of the link a flow of full `packet_bytes` packets carries as payload: the
    /// most of a link admission may reserve (004 §3.4 on the wire).
    pub fn payload_fraction(&self, packet_bytes: u32) -> f64 {
        packet_bytes as f64 / self.wire_bytes(packet_bytes as u64 + HEADER_BYTES as u64) as f64
    }
}

/// When the host's link is free again, by the bytes already dispatched onto it.
#[derive(Clone, Debug)]
pub struct LinkClock {
    bits_per_second: f64,
    /// When the last packet dispatched has left the link (virtual finish time).
    free_at: Ticks,
    /// How far ahead of the link the agent may dispatch: what it keeps queued in the
    /// kernel, as a NIC keeps a few packets in its transmit ring, so that a dispatcher
    /// woken late finds the link still busy with what it queued instead of idle.
    ahead: Ticks,
    /// How far behind real time the clock may start a packet: a dispatcher that woke late
    /// catches up by up to this much (a short burst at the line rate), and an idle link
    /// gathers no more credit than this.
    burst: Ticks,
}

impl LinkClock {
    /// A link of `bits_per_second`, with `ahead_bytes` queued ahead of it at most and a
    /// burst of `burst_bytes` after idle or a late wake-up.
    pub fn new(bits_per_second: f64, ahead_bytes: u64, burst_bytes: u64) -> LinkClock {
        let mut l = LinkClock { bits_per_second, free_at: 0, ahead: 0, burst: 0 };
        l.ahead = l.time(ahead_bytes);
        l.burst = l.time(burst_bytes);
        l
    }

    /// Time on the link of `wire_bytes`, ns.
    pub fn time(&self, wire_bytes: u64) -> Ticks {
        (wire_bytes as f64 * 8e9 / self.bits_per_second).round() as Ticks
    }

    pub fn bits_per_second(&self) -> f64 {
        self.bits_per_second
    }

    /// The earliest time the next packet may be dispatched: `ahead` before the link has
    /// carried what was dispatched.
    pub fn ready_at(&self) -> Ticks {
        self.free_at.saturating_sub(self.ahead)
    }

    /// When the link has carried everything dispatched (by its clock).
    pub fn free_at(&self) -> Ticks {
        self.free_at
    }

    /// A packet of `wire_bytes` was dispatched at `now` (not before `ready_at`).
    pub fn sent(&mut self, now: Ticks, wire_bytes: u64) {
        debug_assert!(self.ready_at() <= now, "dispatched before the link was ready");
        self.free_at = self.free_at.max(now.saturating_sub(self.burst)) + self.time(wire_bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-worked: a 4 KB packet is a 4112-byte frame, three segments of at most 1448
    /// bytes on a 1500-byte MTU, each with 52 bytes of TCP/IP and 38 of Ethernet: 4382 bytes
    /// on the wire, of which 4096 payload (93.47%).
    #[test]
    fn a_4k_packet_on_ethernet() {
        let w = WireModel::default();
        assert_eq!(w.segment_payload(), 1448);
        assert_eq!(w.wire_bytes(4112), 4112 + 3 * 90);
        assert!((w.payload_fraction(4096) - 4096.0 / 4382.0).abs() < 1e-12);
        // A 4-byte message: one segment, 20 bytes of frame, 110 on the wire.
        assert_eq!(w.wire_bytes(20), 110);
    }

    /// At 100 Mb/s a 4382-byte packet takes 350,560 ns; back-to-back packets are spaced by
    /// it, and a dispatcher that wakes late catches up by at most the burst.
    #[test]
    fn the_clock_spaces_packets_at_the_link_rate() {
        let mut l = LinkClock::new(100e6, 0, 8764);
        assert_eq!(l.time(4382), 350_560);
        l.sent(1_000_000, 4382);
        assert_eq!(l.free_at(), 1_000_000 - 701_120 + 350_560);
        // Sent again as soon as free: the clock runs on from its own finish time.
        let t = l.free_at();
        l.sent(t, 4382);
        assert_eq!(l.free_at(), t + 350_560);
        // Woken 10 ms late: only the burst (two packets) is made up, not 10 ms of sending.
        let late = l.free_at() + 10_000_000;
        l.sent(late, 4382);
        assert_eq!(l.free_at(), late - 701_120 + 350_560);
    }

    /// With two packets ahead, the next packet may go while the link still carries two:
    /// in steady state the agent dispatches a packet each packet time, two in the kernel.
    #[test]
    fn the_agent_keeps_a_few_packets_ahead_of_the_link() {
        let mut l = LinkClock::new(100e6, 8764, 0);
        l.sent(0, 4382);
        assert_eq!(l.ready_at(), 0, "two ahead: still ready");
        l.sent(0, 4382);
        l.sent(0, 4382);
        assert_eq!((l.free_at(), l.ready_at()), (3 * 350_560, 350_560));
        l.sent(350_560, 4382);
        assert_eq!(l.ready_at(), 2 * 350_560);
    }
}

//! The agent's configuration (`AgentConfig`, `Backend`) and the defaults behind it.

use crate::error::NetError;
use crate::frame::MAX_PACKET_BYTES;
use crate::link::WireModel;
use std::time::Duration;

/// How a host enforces its reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Document 004's algorithm in this process (portable, exact).
    Agent,
    /// Linux's socket pacing (`SO_MAX_PACING_RATE`, with the fq qdisc).
    Kernel,
}

impl std::str::FromStr for Backend {
    type Err = NetError;
    fn from_str(s: &str) -> Result<Backend, NetError> {
        match s {
            "agent" => Ok(Backend::Agent),
            "kernel" => Ok(Backend::Kernel),
            _ => Err(NetError::Config(format!("backend: must be one of agent, kernel, got {s:?}"))),
        }
    }
}

/// An agent's configuration (physical units: bytes, bits per second, seconds).
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Address to listen on (host:port; port 0 picks one).
    pub listen: String,
    pub backend: Backend,
    /// Packet size: all packets of a message but its last are this long (004 §5.2: 4 KB).
    pub packet_bytes: u32,
    /// Unreserved flows may send (unregulated); otherwise they are refused.
    pub open: bool,
    /// Longest message a peer may send us.
    pub max_message_bytes: u64,
    /// Bytes queued per flow before `send` waits.
    pub queue_bytes: u64,
    /// A peer that takes no data for this long fails its flow (a vanished peer must not
    /// wedge the other flows for longer).
    pub peer_timeout: Duration,
    /// Connecting to a peer and its answer to the hello must take no longer than this (a
    /// dead or silent peer fails the flow's first send after it); an incoming connection
    /// must say its hello within it too.
    pub hello_timeout: Duration,
    /// The cluster key's file (`auth`): peers prove it at every hello. A daemon that is not
    /// open needs it.
    pub key_file: Option<std::path::PathBuf>,
    /// Send every message received back to its sender (ping-pong's far end).
    pub echo: bool,
    /// Keep received messages for `recv`; otherwise count and drop them (a sink).
    pub deliver: bool,
    /// Socket send buffer of each flow (bytes; 0 leaves the kernel's autotuning).
    pub send_buffer: u32,
    /// Bytes of received messages a port holds for its reader; past it, the connections
    /// delivering to that port wait (TCP's flow control pushes back on their senders).
    pub inbox_bytes: u64,
    /// The host's link rate, bits/s (`link`): the agent dispatches no faster in all, so
    /// that reserved flows get their IDTs and unreserved ones only what is left (004 §3.3).
    /// None: the link is not known, and nothing holds the unreserved flows back but the
    /// kernel (the agent then shares the host's link only among its reserved flows).
    pub link_bps: Option<f64>,
    /// How a frame's bytes become bytes on the link (`link::WireModel`).
    pub wire: WireModel,
    /// The DSCP reserved flows' packets carry (and `SO_PRIORITY` 6), so that switch ports
    /// (and the host's own qdisc) can serve them first; None leaves every flow unmarked.
    pub dscp: Option<u8>,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig {
            listen: "127.0.0.1:0".into(),
            backend: Backend::Agent,
            packet_bytes: 4096,
            open: false,
            max_message_bytes: 1 << 30,
            queue_bytes: 4 << 20,
            peer_timeout: Duration::from_secs(10),
            hello_timeout: DEFAULT_HELLO_TIMEOUT,
            key_file: None,
            echo: false,
            deliver: true,
            send_buffer: 0,
            inbox_bytes: 64 << 20,
            link_bps: None,
            wire: WireModel::default(),
            dscp: Some(DSCP_EF),
        }
    }
}

impl AgentConfig {
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |m: String| Err(NetError::Config(m));
        if self.packet_bytes == 0 || self.packet_bytes > MAX_PACKET_BYTES {
            return bad(format!(
                "packet_bytes: must be in 1..={MAX_PACKET_BYTES}, got {}",
                self.packet_bytes
            ));
        }
        if self.queue_bytes < self.packet_bytes as u64 {
            return bad(format!(
                "queue_bytes: must be >= packet_bytes ({}), got {}",
                self.packet_bytes, self.queue_bytes
            ));
        }
        if self.max_message_bytes == 0 {
            return bad("max_message_bytes: must be >= 1, got 0".into());
        }
        if self.inbox_bytes == 0 {
            return bad("inbox_bytes: must be >= 1, got 0".into());
        }
        if self.peer_timeout.is_zero() {
            return bad("peer_timeout: must be > 0 s, got 0".into());
        }
        if self.hello_timeout.is_zero() {
            return bad("hello_timeout: must be > 0 s, got 0".into());
        }
        if let Some(r) = self.link_bps.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return bad(format!("link_bps: must be > 0 bit/s, got {r}"));
        }
        if !(576..=65_535).contains(&self.wire.mtu) {
            return bad(format!("mtu: must be in 576..=65535 bytes, got {}", self.wire.mtu));
        }
        if let Some(d) = self.dscp.filter(|d| *d > 63) {
            return bad(format!("dscp: must be in 0..=63, got {d}"));
        }
        Ok(())
    }
}

/// Full packets a dispatcher that woke late may send back to back to catch up with the
/// link's clock (`link::LinkClock`), or `LINK_BURST_SECONDS` of the link if that is more:
/// on a loaded 2-core machine wake-ups come milliseconds late; a burst of 2 packets left
/// 20-25% of a 100 Mb/s link unused, 4 still 3-5% under a load of 8 when reservations
/// filled the link. 8 packets (35 KB, 2.8 ms at 100 Mb/s) is about a switch port's burst
/// (the test cluster's token buckets hold 32 KB; the rest waits in their 10 ms queue).
pub const LINK_BURST_PACKETS: u64 = 8;

/// The least catch-up in time (on fast links 8 packets are microseconds).
pub const LINK_BURST_SECONDS: f64 = 0.002;

/// Full packets the agent keeps queued ahead of the link (a NIC's transmit ring): the link
/// goes on with them while a late dispatcher wakes, where with none it would sit idle and
/// reservations summing to the whole link would lose that time for good. Two packets
/// (8.8 KB) delay a reserved packet behind unreserved ones by at most two packet times.
pub const LINK_AHEAD_PACKETS: u64 = 2;

/// Expedited Forwarding (RFC 3246): the code point switches commonly queue strictly first.
pub const DSCP_EF: u8 = 46;

/// A live agent answers a hello in well under a millisecond, a loaded host within tens; a
/// dead or silent peer holds a flow's first send no longer than this.
pub const DEFAULT_HELLO_TIMEOUT: Duration = Duration::from_secs(2);

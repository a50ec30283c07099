//! What an agent hands over and tells of itself: received messages, per-flow and
//! per-agent counters.

use crate::endpoint::Port;

/// A message received whole.
#[derive(Debug)]
pub struct Message {
    /// The sender's endpoint (its agent's address, and `/N` for a port N other than 0).
    pub src: String,
    pub priority: u8,
    pub data: Vec<u8>,
}

/// What one outgoing flow has done.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FlowStats {
    /// The local port the flow is sent from.
    pub port: Port,
    pub dst: String,
    pub priority: u8,
    /// Reserved rate (bits/s), if reserved.
    pub reserved_bps: Option<f64>,
    /// The reservation's inter-dispatch time, ns (the agent back end's IDT).
    pub idt_ns: Option<u64>,
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub messages_sent: u64,
    pub queued_bytes: u64,
    /// Times the flow's socket was full and the dispatcher went on without it.
    pub stalls: u64,
    /// Its socket is full now (the drain thread is finishing a packet).
    pub blocked: bool,
    pub failed: Option<String>,
}

/// What arrived from one (source, priority).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ReceivedStats {
    pub src: String,
    pub priority: u8,
    pub bytes: u64,
    pub messages: u64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Stats {
    pub endpoint: String,
    pub flows: Vec<FlowStats>,
    pub received: Vec<ReceivedStats>,
    /// Frames refused from peers (each closes its connection).
    pub malformed_frames: u64,
    /// The last refusal's reason.
    pub last_malformed: Option<String>,
    /// Sends refused because their flow was not admitted.
    pub refused_sends: u64,
    /// Reservations and admissions removed by their lease's expiry.
    pub expired_leases: u64,
    /// Messages that arrived for a port nobody had open (dropped).
    pub undeliverable: u64,
    /// Incoming flows refused at their hello (not admitted here, the agent closed).
    pub refused_flows: u64,
    /// The last refusal's reason.
    pub last_refused: Option<String>,
    /// The incoming flows admitted here (closed agents take only these).
    pub admitted: Vec<AdmittedStats>,
    /// Hellos refused because they did not prove the cluster key (a process that is not an
    /// agent, a replayed hello, another cluster's agent).
    #[serde(default)]
    pub unauthenticated_hellos: u64,
    /// The host's link rate the agent schedules (bits/s), if it knows it.
    #[serde(default)]
    pub link_bps: Option<f64>,
    /// The most of the link reservations can be given as payload (`link::WireModel`).
    #[serde(default)]
    pub payload_fraction: f64,
    /// Sum of the reservations (bits/s of payload).
    #[serde(default)]
    pub reserved_bps: f64,
}

/// An incoming flow the control plane admitted at this agent.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AdmittedStats {
    /// The source endpoint (its agent's address, resolved, and `/N` for a port N other than 0).
    pub src: String,
    /// The local port it is destined to.
    pub port: Port,
    pub priority: u8,
}

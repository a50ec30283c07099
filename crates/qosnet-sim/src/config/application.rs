//! `[[application]]`: a parallel job run as compute phases and communication phases
//! (document 001 §3.2, §4.2): the applications the middleware profiles and admits, as the
//! engine runs them. The runtime is `traffic::application`.

use crate::config::TrafficClass;
use crate::units::{Bandwidth, ByteSize, Duration};
use serde::{Deserialize, Serialize};

/// One job: its ranks' nodes, when it starts, its phases (repeated `iterations` times) and,
/// with the middleware, the bandwidth reserved for each of its flows.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplicationConfig {
    /// A label for the `jobs` table.
    #[serde(default = "default_name")]
    pub name: String,
    /// The node of each rank (rank i runs on `nodes[i]`).
    pub nodes: Vec<u32>,
    /// When the job starts (default at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Duration>,
    /// How many times the phases run, one after the other.
    #[serde(default = "default_iterations")]
    pub iterations: u32,
    /// The bandwidth reserved for each of the job's flows (document 001 §3.5: the allocator's
    /// per-flow reservation), dispatched by NIC rate control with idt = T · Bpeak / Breq.
    /// Without it the job's flows are unreserved (no middleware: no rate control).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<Bandwidth>,
    /// The class of its messages (default real-time with a reservation, else best effort).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<TrafficClass>,
    /// Packet length in flits (messages are cut into packets of this size).
    #[serde(default = "default_packet_flits")]
    pub packet_flits: u32,
    /// The job's phases, run in order each iteration: compute, or a communication pattern.
    pub phases: Vec<PhaseConfig>,
}

/// A compute phase on every rank, then the phase's messages (document 001 §4.2: "complex
/// applications with various computation to communication ratios and different
/// communication patterns").
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// Each rank computes this long before it sends the phase's messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute: Option<Duration>,
    /// Who sends to whom in the phase.
    #[serde(default)]
    pub pattern: AppPattern,
    /// The size of each message (for `binary_swap`, the whole image: stage k's messages
    /// are bytes / 2^(k+1)). Required unless the pattern is `none`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<ByteSize>,
}

/// Communication patterns among a job's N ranks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AppPattern {
    /// Compute only.
    #[default]
    None,
    /// Every rank to every other (document 001 §4.2.1: N-1 outgoing and N-1 incoming flows
    /// per node; NAS IS's key exchange).
    AllToAll,
    /// Rank r to r XOR 2^k for every k < log2 N (the partners of binary-swap compositing:
    /// document 001 §3.2.1's 2 flows each way on 4 nodes, 3 on 8). N a power of two.
    Hypercube,
    /// Binary-swap compositing: log2 N stages, in stage k rank r sends half of what it holds
    /// to r XOR 2^k and waits for the other half (bytes / 2^(k+1)). N a power of two.
    BinarySwap,
    /// Every rank but 0 sends to rank 0 (workers return results to the master).
    Gather,
    /// Rank 0 sends to every other rank (the master hands out work).
    Scatter,
    /// Rank r to r + 1 (mod N).
    Ring,
}

fn default_name() -> String {
    "job".to_string()
}

fn default_iterations() -> u32 {
    1
}

fn default_packet_flits() -> u32 {
    256
}

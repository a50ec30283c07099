//! qosnet's data plane: per-flow rate-controlled messaging on real sockets.
//!
//! Document 004's NIC-based rate control, run by a per-host agent (`agent`) over TCP: flows
//! (source endpoint, destination endpoint, priority) between ports of agents (`endpoint`)
//! with an IDT and an NDT each, scheduled by the same code as the simulator's NICs
//! (`qosnet_rate`), messages framed and cut into packets (`frame`), reserved flows first by
//! least NDT and unregulated flows interleaved (`dispatch`), or Linux's socket pacing in the
//! `kernel` back end (`pacing`). On a host, the agent runs as a daemon (`daemon`) that every
//! local application reaches through a Unix socket (`local`, `client`): the trusted rate
//! controller of document 004 §3.2. A library-mode `Agent` in one process is the same agent
//! without the daemon (tests, benchmarks, a single application). Agents prove a cluster key
//! to each other at every connection's hello (`auth`), so only agents reach agents.

pub mod agent;
pub mod auth;
pub mod client;
pub mod daemon;
pub mod dispatch;
pub mod endpoint;
pub mod error;
pub mod frame;
pub mod handle;
pub mod link;
pub mod local;
pub mod pacing;

pub use agent::{AdmittedStats, Agent, AgentConfig, Backend, FlowStats, Message, ReceivedStats, Stats};
pub use client::LocalAgent;
pub use daemon::{Daemon, DaemonConfig, DaemonStats};
pub use error::NetError;
pub use handle::PortHandle;

//! qosnet's data plane: per-flow rate-controlled messaging on real sockets.
//!
//! Document 004's NIC-based rate control, run by a per-host agent (`agent`) over TCP: flows
//! (source endpoint, destination endpoint, priority) with an IDT and an NDT each, scheduled
//! by the same code as the simulator's NICs (`qosnet_rate`), messages framed and cut into
//! packets (`frame`), reserved flows first by least NDT and unregulated flows interleaved
//! (`dispatch`), or Linux's socket pacing in the `kernel` back end (`pacing`).

pub mod agent;
pub mod dispatch;
pub mod frame;
pub mod pacing;

pub use agent::{Agent, AgentConfig, Backend, FlowStats, Message, NetError, ReceivedStats, Stats};

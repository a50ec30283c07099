//! The data plane's errors, one enum for every part (the agent, its daemon, the cluster
//! key, the endpoints), so none of them depends on another for its error type.

use std::io;

/// (A port is `endpoint::Port`, a `u32`, written as such here so that `endpoint`, which
/// returns these errors, is not also needed by them.)
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    Config(String),
    #[error(
        "flow to {dst} (priority {priority}) is not admitted: no reservation, and the agent is not open"
    )]
    NotAdmitted { dst: String, priority: u8 },
    #[error("flow to {dst} (priority {priority}) failed: {reason}")]
    FlowFailed { dst: String, priority: u8, reason: String },
    #[error("flow to {dst} (priority {priority}) was refused by the receiver: {reason}")]
    Refused { dst: String, priority: u8, reason: String },
    #[error("cannot reach {dst}: {source}")]
    Connect { dst: String, source: io::Error },
    #[error("reservation rate: must be > 0 bit/s, got {0}")]
    Rate(f64),
    #[error("the agent has shut down")]
    Shutdown,
    #[error("timed out")]
    Timeout,
    #[error("port {0} is in use")]
    PortInUse(u32),
    #[error("port {0} is not open")]
    PortClosed(u32),
    /// An error the host's daemon reported (its message), for a client of the daemon.
    #[error("{0}")]
    Daemon(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

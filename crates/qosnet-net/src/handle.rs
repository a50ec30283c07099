//! An application's handle on its host's agent: the operations of one local port (004
//! §4.2: a GM port), whether the agent runs in the application's process (`Agent`, its
//! port 0) or is the host's daemon reached over the local socket (`LocalAgent`, the port
//! it opened; its impl is in `client`). One trait, so callers (the Python bindings,
//! benchmarks) are written once for both.

use crate::agent::{Agent, Message, Stats};
use crate::error::NetError;
use std::time::Duration;

/// One local port's operations on its host's agent.
pub trait PortHandle: Send + Sync {
    /// This port's endpoint (`host:port`, or `host:port/N` for a port N other than 0).
    fn endpoint(&self) -> &str;
    /// Install (or change) the reservation of the flow from this port to `dst` at
    /// `priority` (the control plane's; a daemon refuses it to untrusted users).
    fn reserve(
        &self,
        dst: &str,
        priority: u8,
        bits_per_second: f64,
        lease: Option<Duration>,
    ) -> Result<(), NetError>;
    /// Remove the flow's reservation; true if it had one.
    fn release(&self, dst: &str, priority: u8) -> Result<bool, NetError>;
    /// Queue a message on the flow; waits while the flow's queue is full.
    fn send(&self, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError>;
    /// Wait until the flow has handed everything queued to the network.
    fn flush(&self, dst: &str, priority: u8, timeout: Duration) -> Result<(), NetError>;
    /// The next message received whole at this port (None: wait forever).
    fn recv(&self, timeout: Option<Duration>) -> Result<Message, NetError>;
    /// The agent's counters (a daemon shows an untrusted application its own flows).
    fn stats(&self) -> Result<Stats, NetError>;
    /// Stop using the agent: a library-mode agent shuts down, a daemon's client disconnects
    /// (the daemon closes its port).
    fn close(&self);
}

impl PortHandle for Agent {
    fn endpoint(&self) -> &str {
        Agent::endpoint(self)
    }
    fn reserve(
        &self,
        dst: &str,
        priority: u8,
        bits_per_second: f64,
        lease: Option<Duration>,
    ) -> Result<(), NetError> {
        self.reserve_from(0, dst, priority, bits_per_second, lease)
    }
    fn release(&self, dst: &str, priority: u8) -> Result<bool, NetError> {
        Ok(self.release_from(0, dst, priority))
    }
    fn send(&self, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
        self.send_from(0, dst, priority, data)
    }
    fn flush(&self, dst: &str, priority: u8, timeout: Duration) -> Result<(), NetError> {
        self.flush_from(0, dst, priority, timeout)
    }
    fn recv(&self, timeout: Option<Duration>) -> Result<Message, NetError> {
        self.recv_at(0, timeout)
    }
    fn stats(&self) -> Result<Stats, NetError> {
        Ok(Agent::stats(self))
    }
    fn close(&self) {
        self.shutdown();
    }
}

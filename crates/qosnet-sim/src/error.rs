//! Errors of the engine, one enum per layer (ARCHITECTURE.md "Errors").

use crate::ids::RouterId;
use thiserror::Error;

/// One problem in a configuration, with the dotted path of the offending field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{path}: {message}")]
pub struct ConfigError {
    pub path: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

/// Longest piece of a user's value an error message repeats, in characters.
pub const CLIP_CHARS: usize = 200;

/// `text` cut to [`CLIP_CHARS`] characters, with how long it was: an error must not echo a
/// 10 MB value back.
pub fn clip(text: &str) -> std::borrow::Cow<'_, str> {
    let n = text.chars().count();
    if n <= CLIP_CHARS {
        return text.into();
    }
    let head: String = text.chars().take(CLIP_CHARS).collect();
    format!("{head}…({n} chars)").into()
}

/// Every problem found in a configuration (validation does not stop at the first).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl std::fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl From<ConfigError> for ConfigErrors {
    fn from(e: ConfigError) -> Self {
        ConfigErrors(vec![e])
    }
}

/// A router's input VC, as the deadlock report names it: `router[3].in[2].vc[1]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VcPath {
    pub router: RouterId,
    /// The input port.
    pub port: u32,
    /// The lane: a VC, or (the preemptive router) C + v, VC v's extra buffer.
    pub vc: u32,
}

impl std::fmt::Display for VcPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "router[{}].in[{}].vc[{}]", self.router, self.port, self.vc)
    }
}

/// `a, b, c` or `a -> b -> c`.
fn joined(paths: &[VcPath], sep: &str) -> String {
    paths.iter().map(ToString::to_string).collect::<Vec<_>>().join(sep)
}

/// Errors raised while a valid configuration runs.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// No flit moved for `idle_cycles` cycles while flits were in flight.
    #[error(
        "deadlock at cycle {cycle}: no flit moved for {idle_cycles} cycles{}; stuck: {}",
        if waits_for.is_empty() { String::new() } else { format!("; wait-for cycle: {} -> {}", joined(waits_for, " -> "), waits_for[0]) },
        joined(stuck, ", ")
    )]
    Deadlock {
        cycle: u64,
        idle_cycles: u64,
        /// A cycle of occupied VCs each waiting for the next (the last for the first), if
        /// the wait-for graph has one: the cyclic dependency that holds the network.
        waits_for: Vec<VcPath>,
        /// The occupied VCs.
        stuck: Vec<VcPath>,
    },
    /// The run took longer than `[simulation] time_limit` of wall-clock time; the
    /// simulation's results so far are still there (`Simulation::result`).
    #[error(
        "stopped at cycle {cycle} after {elapsed_ms} ms of wall-clock time, past simulation.time_limit \
         ({limit_ms} ms); the results so far are kept (a partial run)"
    )]
    TimeLimit { cycle: u64, elapsed_ms: u64, limit_ms: u64 },
    /// An internal invariant failed (a bug in the engine, reported rather than hidden).
    #[error("invariant violated at cycle {cycle}: {what}")]
    Invariant { cycle: u64, what: String },
}

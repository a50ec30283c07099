//! Control agents at the endpoints (DESIGN.md "Seams"): the admission and congestion
//! control mechanisms of documents 000 and 002 decide, per node and flow, when a message
//! may start. Every endpoint model (ideal, VIA NIC, HCA) consults them alike, at the one
//! place a message starts and the one place it is delivered; nothing else in the cycle
//! loop knows which agent runs.
//!
//! The interface:
//! - `may_start(node, flow, now)`: may this flow start its next message now;
//! - `started(node, flow, now)`: it did;
//! - `delivered(src, flow, now)`: a message of the flow reached its destination whole
//!   at the destination endpoint, its last flit arrived (returns whether that may let a
//!   waiting message start, so the source is woken).
//!
//! A new agent is a file here, a variant of `Agents` and of `config::AgentConfig`, and its
//! arms in the matches below: one build, static dispatch (STYLE.md).

mod window;

use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::units::Cycle;
use window::Window;

/// The agents of a run, one state per node inside each.
#[derive(Clone, Debug)]
pub(crate) enum Agents {
    /// No agent: every message may start.
    None,
    Window(Window),
}

impl Agents {
    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes.
    pub fn build(cfg: Option<&AgentConfig>, nodes: usize) -> Result<Agents, ConfigError> {
        Ok(match cfg {
            None => Agents::None,
            Some(AgentConfig::Window { messages }) => {
                if *messages == 0 {
                    return Err(ConfigError::new(
                        "endpoint.agent.messages",
                        "must be a whole number >= 1 (messages in flight per node), got 0",
                    ));
                }
                Agents::Window(Window::new(*messages, nodes))
            }
        })
    }

    /// Whether `flow` at `node` may start its next message at `now`.
    #[inline(always)]
    pub fn may_start(&self, node: usize, flow: u32, now: Cycle) -> bool {
        let _ = (flow, now);
        match self {
            Agents::None => true,
            Agents::Window(w) => w.may_start(node),
        }
    }

    /// `flow` at `node` started a message at `now`.
    #[inline(always)]
    pub fn started(&mut self, node: usize, flow: u32, now: Cycle) {
        let _ = (flow, now);
        match self {
            Agents::None => {}
            Agents::Window(w) => w.started(node),
        }
    }

    /// A message of `flow` from `src` was delivered whole at `now`. Returns whether a
    /// message waiting at `src` may now start.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> bool {
        let _ = (flow, now);
        match self {
            Agents::None => false,
            Agents::Window(w) => w.delivered(src),
        }
    }
}

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
//!   at the destination endpoint, its last flit arrived: the agent wakes the source (a
//!   waiting message may start), or answers on the control channel (`links::Control`);
//! - `on_control(node, msg, now)`: a control message arrived at `node` (returns whether a
//!   waiting message may now start).
//!
//! A new agent is a file here, a variant of `Agents` and of `config::AgentConfig`, and its
//! arms in the matches below: one build, static dispatch (STYLE.md).

mod window;

use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::links::Control;
use crate::units::{Clock, Cycle};
use window::Window;

/// Longest control-message delay, cycles (the control channel's timing wheel).
const MAX_CONTROL_DELAY: Cycle = 1 << 16;

/// What an agent does when a message is delivered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    Nothing,
    /// Wake the source: a message it holds back may start.
    Wake,
    /// Send `msg` to the source, arriving `delay` cycles later.
    Send {
        delay: Cycle,
        msg: Control,
    },
}

/// The agents of a run, one state per node inside each.
#[derive(Clone, Debug)]
pub(crate) enum Agents {
    /// No agent: every message may start.
    None,
    Window(Window),
}

impl Agents {
    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes.
    pub fn build(cfg: Option<&AgentConfig>, nodes: usize, clock: &Clock) -> Result<Agents, ConfigError> {
        Ok(match cfg {
            None => Agents::None,
            Some(AgentConfig::Window { messages, ack_delay }) => {
                if *messages == 0 {
                    return Err(ConfigError::new(
                        "endpoint.agent.messages",
                        "must be a whole number >= 1 (messages in flight per node), got 0",
                    ));
                }
                let delay = ack_delay.map_or(0, |d| clock.duration_cycles(d));
                if delay > MAX_CONTROL_DELAY {
                    return Err(ConfigError::new(
                        "endpoint.agent.ack_delay",
                        format!("must be at most {MAX_CONTROL_DELAY} cycles, got {delay}"),
                    ));
                }
                Agents::Window(Window::new(*messages, nodes, delay))
            }
        })
    }

    /// The longest delay of the control messages the agents send, cycles.
    pub fn control_delay(&self) -> Cycle {
        match self {
            Agents::None => 0,
            Agents::Window(w) => w.ack_delay(),
        }
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

    /// A message of `flow` from `src` was delivered whole at `now`.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        let _ = now;
        match self {
            Agents::None => Reply::Nothing,
            Agents::Window(w) => w.delivered(src, flow),
        }
    }

    /// Control message `msg` arrived at `node` at `now`. Returns whether a message waiting
    /// at `node` may now start.
    pub fn on_control(&mut self, node: usize, msg: Control, now: Cycle) -> bool {
        let _ = now;
        match (self, msg) {
            (Agents::None, _) => false,
            (Agents::Window(w), Control::Ack { .. }) => w.acknowledged(node),
        }
    }
}

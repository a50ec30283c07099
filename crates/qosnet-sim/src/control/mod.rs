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

mod cct;
mod iba_cc;
mod window;

use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::links::Control;
use crate::units::{Clock, Cycle};
pub(crate) use iba_cc::CcCounters;
use iba_cc::IbaCc;
use std::path::{Path, PathBuf};
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
    /// InfiniBand congestion control's CA side (document 002 §3-4, IBA Annex A10).
    IbaCc(IbaCc),
}

impl Agents {
    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes (files it
    /// names resolve by `resolve`).
    pub fn build(
        cfg: Option<&AgentConfig>,
        nodes: usize,
        clock: &Clock,
        resolve: impl Fn(&Path) -> PathBuf,
    ) -> Result<Agents, ConfigError> {
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
            Some(AgentConfig::IbaCc { ccti_increase, ccti_limit, ccti_min, ccti_timer, cct }) => {
                let cct = cct::Cct::build(cct, "endpoint.agent.cct", clock, MAX_CONTROL_DELAY, resolve)?;
                let ccti_limit = ccti_limit.unwrap_or(cct.last());
                if ccti_limit > cct.last() {
                    return Err(ConfigError::new(
                        "endpoint.agent.ccti_limit",
                        format!("must be at most {} (the CCT's last index), got {ccti_limit}", cct.last()),
                    ));
                }
                if *ccti_min > ccti_limit {
                    return Err(ConfigError::new(
                        "endpoint.agent.ccti_min",
                        format!("must be at most ccti_limit ({ccti_limit}), got {ccti_min}"),
                    ));
                }
                let ccti_timer = clock.duration_cycles(*ccti_timer);
                if ccti_timer == 0 {
                    return Err(ConfigError::new(
                        "endpoint.agent.ccti_timer",
                        "must be a positive duration, got 0",
                    ));
                }
                let setting = iba_cc::CaSetting {
                    ccti_increase: *ccti_increase,
                    ccti_limit,
                    ccti_min: *ccti_min,
                    ccti_timer,
                };
                Agents::IbaCc(IbaCc::new(setting, cct))
            }
        })
    }

    /// Per-flow state for `flows` flows (rows of the results' `flows` table).
    pub fn size_flows(&mut self, flows: usize) {
        if let Agents::IbaCc(a) = self {
            a.size_flows(flows);
        }
    }

    /// Whether destinations answer FECN-marked packets with CNPs (`endpoint/cnp.rs`).
    #[inline(always)]
    pub fn answers_fecn(&self) -> bool {
        matches!(self, Agents::IbaCc(_))
    }

    /// A destination sent a CNP for a marked packet of `flow`.
    pub fn cnp_sent(&mut self, flow: u32) {
        if let Agents::IbaCc(a) = self {
            a.cnp_sent(flow);
        }
    }

    /// A CNP with BECN for `flow` reached its source at `now`.
    pub fn becn(&mut self, flow: u32, now: Cycle) {
        if let Agents::IbaCc(a) = self {
            a.becn(flow, now);
        }
    }

    /// Per-flow congestion-control counters, where the agent keeps them.
    pub fn cc_counters(&self) -> Option<&[CcCounters]> {
        match self {
            Agents::IbaCc(a) => Some(a.counters()),
            _ => None,
        }
    }

    /// The longest delay of the control messages the agents send, cycles.
    pub fn control_delay(&self) -> Cycle {
        match self {
            Agents::None => 0,
            Agents::Window(w) => w.ack_delay(),
            Agents::IbaCc(a) => a.max_delay(),
        }
    }

    /// Whether `flow` at `node` may start its next message at `now`.
    #[inline(always)]
    pub fn may_start(&self, node: usize, flow: u32, now: Cycle) -> bool {
        let _ = (flow, now);
        match self {
            Agents::None => true,
            Agents::Window(w) => w.may_start(node),
            Agents::IbaCc(a) => a.may_start(flow, now),
        }
    }

    /// `flow` at `node` was held back at `now`: when its node should look again (a
    /// `Control::Retry` to send itself), if the agent's own events will not wake it.
    pub fn refused(&mut self, node: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        let _ = node;
        match self {
            Agents::None | Agents::Window(_) => None,
            Agents::IbaCc(a) => a.refused(flow, now),
        }
    }

    /// `flow` at `node` started a message at `now`.
    #[inline(always)]
    pub fn started(&mut self, node: usize, flow: u32, now: Cycle) {
        let _ = (flow, now);
        match self {
            Agents::None => {}
            Agents::Window(w) => w.started(node),
            Agents::IbaCc(a) => a.started(flow, now),
        }
    }

    /// A message of `flow` from `src` was delivered whole at `now`.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        let _ = now;
        match self {
            Agents::None => Reply::Nothing,
            Agents::Window(w) => w.delivered(src, flow),
            Agents::IbaCc(_) => Reply::Nothing,
        }
    }

    /// Control message `msg` arrived at `node` at `now`. Returns whether a message waiting
    /// at `node` may now start.
    pub fn on_control(&mut self, node: usize, msg: Control, now: Cycle) -> bool {
        let _ = now;
        match (self, msg) {
            (_, Control::Retry) => true,
            (Agents::None | Agents::IbaCc(_), Control::Ack { .. }) => false,
            (Agents::Window(w), Control::Ack { .. }) => w.acknowledged(node),
        }
    }
}

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
//! A new agent is a file here, a variant of `Congestion` and of `config::AgentConfig`, and
//! its arms in the matches below: one build, static dispatch (STYLE.md). Admission control
//! (document 000 §4.1, `probe_admission.rs`, `[endpoint.admission]`) runs beside any
//! congestion agent: a connection first needs its reservation, then its credits.

mod credit_cc;
mod probe_admission;
mod reservations;
mod window;

pub use credit_cc::CreditStats;
pub(crate) use credit_cc::{Consumer, CreditCc};
pub use probe_admission::AdmissionStats;
pub(crate) use probe_admission::{AdmissionParams, ProbeAdmission};
pub use reservations::Signal;
pub(crate) use reservations::{HopAction, Reservations, LINK, ROUND};

use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::links::Control;
use crate::units::{Clock, Cycle};
use window::Window;

/// Longest control-message delay, cycles (the control channel's timing wheel).
pub(crate) const MAX_CONTROL_DELAY: Cycle = 1 << 16;

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

/// The congestion-control agent of a run, one state per node inside each.
#[derive(Clone, Debug)]
pub(crate) enum Congestion {
    /// No agent: every message may start.
    None,
    Window(Window),
    /// Credit-based congestion control (document 000 §4.2).
    Credit(CreditCc),
}

/// The agents of a run: a congestion-control agent, and admission control if configured.
#[derive(Clone, Debug)]
pub(crate) struct Agents {
    pub congestion: Congestion,
    pub admission: Option<Box<ProbeAdmission>>,
    /// Control messages the agents time for themselves (retries): (arrival, node, message),
    /// sent by the endpoints.
    pub timers: Vec<(Cycle, u32, Control)>,
}

/// Check a duration that goes through the control channel.
pub(crate) fn control_delay(
    field: &str,
    d: Option<crate::units::Duration>,
    clock: &Clock,
) -> Result<Cycle, ConfigError> {
    let delay = d.map_or(0, |d| clock.duration_cycles(d));
    if delay > MAX_CONTROL_DELAY {
        return Err(ConfigError::new(
            field,
            format!("must be at most {MAX_CONTROL_DELAY} cycles, got {delay}"),
        ));
    }
    Ok(delay)
}

impl Agents {
    /// No agent.
    pub const NONE: Agents = Agents { congestion: Congestion::None, admission: None, timers: Vec::new() };

    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes. The
    /// per-flow agents (credits, admission) are completed once the flows are known
    /// (`build/agents.rs`).
    pub fn build(cfg: Option<&AgentConfig>, nodes: usize, clock: &Clock) -> Result<Agents, ConfigError> {
        let congestion = match cfg {
            None | Some(AgentConfig::Credit { .. }) => Congestion::None,
            Some(AgentConfig::Window { messages, ack_delay }) => {
                if *messages == 0 {
                    return Err(ConfigError::new(
                        "endpoint.agent.messages",
                        "must be a whole number >= 1 (messages in flight per node), got 0",
                    ));
                }
                let delay = control_delay("endpoint.agent.ack_delay", *ack_delay, clock)?;
                Congestion::Window(Window::new(*messages, nodes, delay))
            }
        };
        Ok(Agents { congestion, admission: None, timers: Vec::new() })
    }

    /// The longest delay of the control messages the agents send, cycles.
    pub fn control_delay(&self) -> Cycle {
        let c = match &self.congestion {
            Congestion::None => 0,
            Congestion::Window(w) => w.ack_delay(),
            Congestion::Credit(c) => c.retry_after(),
        };
        // A router's NACK trigger leaves a few cycles after the header it refuses arrived.
        c.max(self.admission.as_ref().map_or(0, |a| a.p.retry_after.max(64)))
    }

    /// Whether the agents have signalling packets or timers for the endpoints to send.
    #[inline(always)]
    pub fn has_outgoing(&self) -> bool {
        !self.timers.is_empty() || self.admission.as_ref().is_some_and(|a| !a.outbox.is_empty())
    }

    /// Whether the congestion agent hears of messages the HCA has injected whole.
    #[inline(always)]
    pub fn counts_sends(&self) -> bool {
        matches!(self.congestion, Congestion::Credit(_))
    }

    /// Whether `flow` at `node` may start its next message at `now`.
    #[inline(always)]
    pub fn may_start(&mut self, node: usize, flow: u32, now: Cycle) -> bool {
        if let Some(a) = &mut self.admission {
            if !a.may_start(flow, now) {
                return false;
            }
        }
        match &mut self.congestion {
            Congestion::None => true,
            Congestion::Window(w) => w.may_start(node),
            Congestion::Credit(c) => {
                let (ok, retry) = c.may_start(node, flow, now);
                self.timers.extend(retry);
                ok
            }
        }
    }

    /// Whether `flow`'s held-back message is dropped instead (its connection gave up).
    #[inline]
    pub fn drops(&mut self, flow: u32) -> bool {
        self.admission.as_mut().is_some_and(|a| a.drops(flow))
    }

    /// `flow` at `node` started a message at `now`. Returns whether it is its connection's
    /// last (its last packet tears the reservation down).
    #[inline(always)]
    pub fn started(&mut self, node: usize, flow: u32, now: Cycle) -> bool {
        let _ = now;
        match &mut self.congestion {
            Congestion::None => {}
            Congestion::Window(w) => w.started(node),
            Congestion::Credit(c) => c.started(flow),
        }
        self.admission.as_mut().is_some_and(|a| a.started(flow))
    }

    /// The HCA at `node` injected a message of `flow` whole (its send CQE). Returns
    /// whether a message waiting at `node` may now start.
    #[inline]
    pub fn sent(&mut self, flow: u32) -> bool {
        match &mut self.congestion {
            Congestion::Credit(c) => c.completed(flow),
            Congestion::None | Congestion::Window(_) => false,
        }
    }

    /// A message of `flow` from `src` was delivered whole at `now`.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        let _ = now;
        match &mut self.congestion {
            Congestion::None | Congestion::Credit(_) => Reply::Nothing,
            Congestion::Window(w) => w.delivered(src, flow),
        }
    }

    /// Control message `msg` arrived at `node` at `now`. Returns whether a message waiting
    /// at `node` may now start.
    pub fn on_control(&mut self, node: usize, msg: Control, now: Cycle) -> bool {
        let _ = now;
        match (&mut self.congestion, msg) {
            (Congestion::Window(w), Control::Ack { .. }) => w.acknowledged(node),
            (Congestion::Credit(c), Control::CreditRetry { flow }) => c.retry(flow),
            (_, Control::Nack { flow }) => {
                if let Some(a) = &mut self.admission {
                    a.nack_from(node as u32, flow);
                }
                false
            }
            (_, Control::Retry { flow }) => self.admission.as_mut().is_some_and(|a| a.retry(flow)),
            _ => false,
        }
    }

    /// A signalling packet of `flow` carrying `signal` was delivered to `node` at `now`.
    /// Returns whether `node` may now start a message it holds back.
    pub fn signal_arrived(&mut self, node: u32, flow: u32, signal: Signal, now: Cycle) -> bool {
        let Some(a) = &mut self.admission else { return false };
        let (retry, wake) = a.arrived(node, flow, signal, now);
        self.timers.extend(retry);
        wake
    }

    /// The source HCA refused `flow`'s probe on its own link at `now`.
    pub fn refused_at_source(&mut self, flow: u32, now: Cycle) {
        if let Some(a) = &mut self.admission {
            let retry = a.refused_at_source(flow, now);
            self.timers.extend(retry);
        }
    }
}

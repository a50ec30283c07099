//! Control agents at the endpoints (ARCHITECTURE.md "One cycle, and where the seams are"):
//! the admission and congestion control mechanisms of documents 000 and 002 decide, per
//! node and flow, when a message may start. Every endpoint model (ideal, VIA NIC, HCA)
//! consults them alike, at the one place a message starts and the one place it is
//! delivered; nothing else in the cycle loop knows which agent runs.
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
//! its arms in the matches below: one build, static dispatch (ARCHITECTURE.md "Static
//! dispatch"). Admission control (document 000 §4.1, `probe_admission.rs`,
//! `[endpoint.admission]`) runs beside any congestion agent: a connection first needs its
//! reservation, then its credits.

mod alo;
mod cct;
mod credit_cc;
mod iba_cc;
mod probe_admission;
mod reservations;
mod self_tuned;
mod window;

pub(crate) use alo::{Alo, Useful};
pub(crate) use self_tuned::{SelfTuned, SelfTunedParams};

pub(crate) use credit_cc::{Consumer, CreditCc};
pub(crate) use iba_cc::CcCounters;
use iba_cc::IbaCc;
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
    /// At-Least-One injection limitation (document 000 §6.1, its reference [1]).
    Alo(Alo),
    /// Self-Tuned congestion control (document 000 §6.1, its reference [15]).
    SelfTuned(SelfTuned),
    /// InfiniBand congestion control's CA side (document 002 §3-4, IBA Annex A10).
    IbaCc(IbaCc),
}

/// The agents of a run: a congestion-control agent, and admission control if configured.
#[derive(Clone, Debug)]
pub(crate) struct Agents {
    pub congestion: Congestion,
    pub admission: Option<Box<ProbeAdmission>>,
    /// Control messages the agents time for themselves (retries): (arrival, node, message),
    /// sent by the endpoints.
    pub timers: Vec<(Cycle, u32, Control)>,
    /// Every how many cycles the agent reads the routers over its side band (0: never).
    pub sideband: Cycle,
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
    pub const NONE: Agents =
        Agents { congestion: Congestion::None, admission: None, timers: Vec::new(), sideband: 0 };

    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes. The
    /// per-flow agents (credits, admission) are completed once the flows are known
    /// (`build/agents.rs`). Files it names are read through `files`.
    pub fn build(
        cfg: Option<&AgentConfig>,
        nodes: usize,
        clock: &Clock,
        files: &crate::config::Files,
    ) -> Result<Agents, ConfigError> {
        let congestion = match cfg {
            // (built once the flows are known: `build/agents.rs`)
            None | Some(AgentConfig::Credit { .. } | AgentConfig::Alo | AgentConfig::SelfTuned { .. }) => {
                Congestion::None
            }
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
            Some(AgentConfig::IbaCc { ccti_increase, ccti_limit, ccti_min, ccti_timer, cct }) => {
                let cct = cct::Cct::build(cct, "endpoint.agent.cct", clock, MAX_CONTROL_DELAY, files)?;
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
                Congestion::IbaCc(IbaCc::new(setting, cct))
            }
        };
        Ok(Agents { congestion, admission: None, timers: Vec::new(), sideband: 0 })
    }

    /// Per-flow state for `flows` flows (rows of the results' `flows` table).
    pub fn size_flows(&mut self, flows: usize) {
        if let Congestion::IbaCc(a) = &mut self.congestion {
            a.size_flows(flows);
        }
    }

    /// Whether destinations answer FECN-marked packets with CNPs (`endpoint/congestion.rs`).
    #[inline(always)]
    pub fn answers_fecn(&self) -> bool {
        matches!(self.congestion, Congestion::IbaCc(_))
    }

    /// A destination sent a CNP for a marked packet of `flow`.
    pub fn cnp_sent(&mut self, flow: u32) {
        if let Congestion::IbaCc(a) = &mut self.congestion {
            a.cnp_sent(flow);
        }
    }

    /// A CNP with BECN for `flow` reached its source at `now`.
    pub fn becn(&mut self, flow: u32, now: Cycle) {
        if let Congestion::IbaCc(a) = &mut self.congestion {
            a.becn(flow, now);
        }
    }

    /// Per-flow congestion-control counters, where the agent keeps them.
    pub fn cc_counters(&self) -> Option<&[CcCounters]> {
        match &self.congestion {
            Congestion::IbaCc(a) => Some(a.counters()),
            _ => None,
        }
    }

    /// `flow` at `node` was held back at `now`: when its node should look again (a
    /// `Control::CcRetry` to send itself), if the agent's own events will not wake it.
    pub fn refused(&mut self, node: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        let _ = node;
        match &mut self.congestion {
            Congestion::IbaCc(a) => a.refused(flow, now),
            _ => None,
        }
    }

    /// The longest delay of the control messages the agents send, cycles.
    pub fn control_delay(&self) -> Cycle {
        let c = match &self.congestion {
            Congestion::None => 0,
            Congestion::Window(w) => w.ack_delay(),
            Congestion::Credit(c) => c.retry_after(),
            Congestion::Alo(_) | Congestion::SelfTuned(_) => 0,
            Congestion::IbaCc(a) => a.max_delay(),
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

    /// Whether any agent runs (the fast path of the cycle loop's calls when none does).
    #[inline(always)]
    fn is_off(&self) -> bool {
        matches!(self.congestion, Congestion::None) && self.admission.is_none()
    }

    /// Whether `flow` at `node` may start its next message (to `dst`) at `now`.
    #[inline(always)]
    pub fn may_start(&mut self, node: usize, flow: u32, dst: u32, now: Cycle) -> bool {
        self.is_off() || self.may_start_agents(node, flow, dst, now)
    }

    #[inline(never)]
    fn may_start_agents(&mut self, node: usize, flow: u32, dst: u32, now: Cycle) -> bool {
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
            Congestion::Alo(a) => a.may_start(node, flow, dst),
            Congestion::SelfTuned(s) => s.may_start(flow),
            Congestion::IbaCc(a) => a.may_start(flow, now),
        }
    }

    /// A message of `flow` was posted at its source at `now` (admission control probes a
    /// new connection at once).
    #[inline(always)]
    pub fn posted(&mut self, flow: u32, now: Cycle) {
        if let Some(a) = &mut self.admission {
            a.posted(flow, now);
        }
    }

    /// Whether `flow` waits for its connection's set-up (its messages are set aside so the
    /// other connections of their class go on).
    #[inline]
    pub fn awaits_admission(&self, flow: u32) -> bool {
        self.admission.as_ref().is_some_and(|a| a.awaits(flow))
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
        !self.is_off() && self.started_agents(node, flow, now)
    }

    #[inline(never)]
    fn started_agents(&mut self, node: usize, flow: u32, now: Cycle) -> bool {
        let last = self.admission.as_mut().is_some_and(|a| a.started(flow));
        match &mut self.congestion {
            Congestion::None | Congestion::Alo(_) | Congestion::SelfTuned(_) => {}
            Congestion::Window(w) => w.started(node),
            Congestion::Credit(c) => {
                c.started(flow);
                if last {
                    // The connection's last message: its credits go back (§4.2 with §4.1).
                    c.closed(flow);
                }
            }
            Congestion::IbaCc(a) => a.started(flow, now),
        }
        last
    }

    /// The HCA at `node` injected a message of `flow` whole (its send CQE). Returns
    /// whether a message waiting at `node` may now start.
    #[inline]
    pub fn sent(&mut self, flow: u32) -> bool {
        match &mut self.congestion {
            Congestion::Credit(c) => c.completed(flow),
            Congestion::None
            | Congestion::Window(_)
            | Congestion::Alo(_)
            | Congestion::SelfTuned(_)
            | Congestion::IbaCc(_) => false,
        }
    }

    /// A message of `flow` from `src` was delivered whole at `now`.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        let _ = now;
        match &mut self.congestion {
            Congestion::None
            | Congestion::Credit(_)
            | Congestion::Alo(_)
            | Congestion::SelfTuned(_)
            | Congestion::IbaCc(_) => Reply::Nothing,
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
            (_, Control::CcRetry) => true,
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
        if wake {
            // Admitted (its ACK): the connection gets its credits (§4.2: C_j per admitted
            // real-time connection).
            if let Congestion::Credit(c) = &mut self.congestion {
                c.admitted(flow);
            }
        }
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

/// What the congestion-control agent did (`Simulation::congestion_stats`); counts an agent
/// does not keep are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CongestionStats {
    /// Credit-based: real-time messages dropped for want of a credit and posted again;
    /// best-effort starts that waited for a credit.
    pub dropped: u64,
    pub retried: u64,
    pub waited: u64,
    /// ALO, Self-Tuned: messages held back by the throttle.
    pub throttles: u64,
    /// Self-Tuned: its threshold now (full buffers), and its moves up and down.
    pub threshold: f64,
    pub raised: u64,
    pub lowered: u64,
}

impl Agents {
    /// The credit-based congestion control's invariants (`CreditCc::check`; `Ok` without it).
    pub fn check_credits(&self) -> Result<(), String> {
        match &self.congestion {
            Congestion::Credit(c) => c.check(),
            _ => Ok(()),
        }
    }

    /// What the congestion-control agent did (`None`: none, or a window).
    pub fn congestion_stats(&self) -> Option<CongestionStats> {
        let d = CongestionStats::default();
        match &self.congestion {
            Congestion::None | Congestion::Window(_) | Congestion::IbaCc(_) => None,
            Congestion::Credit(c) => {
                let s = c.stats;
                Some(CongestionStats { dropped: s.dropped, retried: s.retried, waited: s.waited, ..d })
            }
            Congestion::Alo(a) => Some(CongestionStats { throttles: a.throttles, ..d }),
            Congestion::SelfTuned(s) => Some(CongestionStats {
                throttles: s.throttles,
                threshold: s.threshold,
                raised: s.raised,
                lowered: s.lowered,
                ..d
            }),
        }
    }
}

/// What the side band brings the agents (`Agents::sideband`): how to read the routers.
pub(crate) trait RouterStatus {
    /// Each router output port's free regular VCs.
    fn free_out_vcs(&self, free: &mut [u32]);
    /// Full input VC buffers in the network.
    fn full_buffers(&self) -> u64;
}

impl Agents {
    /// The side band's turn (every `sideband` cycles): the agent reads the routers through
    /// `status`; `delivered`: flits delivered so far. Returns which nodes to wake: `None`
    /// for none, `Some(empty)` for all.
    #[cold]
    pub fn read_sideband(&mut self, status: &impl RouterStatus, delivered: u64) -> Option<Vec<u32>> {
        match &mut self.congestion {
            Congestion::Alo(a) => {
                status.free_out_vcs(&mut a.free);
                (!a.throttled.is_empty()).then(|| std::mem::take(&mut a.throttled))
            }
            Congestion::SelfTuned(s) => s.gathered(status.full_buffers(), delivered).then(Vec::new),
            _ => None,
        }
    }
}

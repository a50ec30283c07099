//! Control agents at the endpoints (ARCHITECTURE.md "One cycle, and where the seams are"):
//! the admission and congestion control mechanisms of documents 000 and 002 decide, per
//! node and flow, when a message may start. Every endpoint model (ideal, VIA NIC, HCA)
//! consults them alike, at the one place a message starts and the one place it is
//! delivered; nothing else in the cycle loop knows which agent runs.
//!
//! The agents answer one interface, `CongestionControl` (`interface.rs`): a message's start
//! (`may_start`, `started`), each packet's (`next_send`, `packet_sent`: a rate-based
//! agent's pacing), a delivery (wake the source, or answer on the control channel,
//! `links::Control`), a mark at the destination, a notification at the source, a timer,
//! and the side band. `Agents` asks the one `Congestion` enum, which delegates; no code
//! outside an agent's file and that enum's registration names a particular agent.
//!
//! A new agent is a file here implementing the interface, a variant of `Congestion` and of
//! `config::AgentConfig`, and its arm in `Agents::build` (or `Agents::for_flows`, for an
//! agent built from the flows, `FlowFacts`): static dispatch (ARCHITECTURE.md
//! "Static dispatch"). Admission control (document 000 §4.1, `probe_admission.rs`,
//! `[endpoint.admission]`) runs beside any congestion agent: a connection first needs its
//! reservation, then its credits.

mod alo;
mod cct;
mod congestion;
mod credit_cc;
mod dcqcn;
mod iba_cc;
mod interface;
mod probe_admission;
mod reservations;
mod self_tuned;
mod window;

pub(crate) use alo::Alo;
pub(crate) use self_tuned::SelfTuned;

pub(crate) use congestion::{Congestion, NoAgent};
pub(crate) use credit_cc::CreditCc;
pub(crate) use interface::{CcCounters, CongestionControl};
pub use probe_admission::AdmissionStats;
pub(crate) use probe_admission::{AdmissionParams, ProbeAdmission};
pub use reservations::Signal;
pub(crate) use reservations::{HopAction, Reservations, LINK, ROUND};

use crate::config::{AgentConfig, TrafficClass};
use crate::error::ConfigError;
use crate::links::Control;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::units::{Clock, Cycle};

/// What the agents that need the flows (credit, ALO, Self-Tuned) are built from once the
/// flows are known (`build/agents.rs` derives it): per flow, the traffic sources in order
/// and then the one control flow, and the network they run on.
pub(crate) struct FlowFacts<'a> {
    /// Per source: its node, its `[[traffic]]` entry, its one destination if it has one
    /// (a stream's, or its pattern's), and the bandwidth it solicits (b_j, flits a cycle;
    /// 0 for a flow that is no connection).
    pub node: Vec<u32>,
    pub spec: Vec<usize>,
    pub dst: Vec<Option<u32>>,
    pub bandwidth: Vec<f64>,
    /// Per flow (sources, then the control flow): its class.
    pub class: Vec<TrafficClass>,
    pub topo: &'a Topology,
    pub routing: &'a Routing,
    /// `router.vcs`, and each class's VCs (control, real time, best effort).
    pub vcs: u32,
    pub class_vcs: [u32; 3],
    pub clock: &'a Clock,
    /// Whether admission control runs beside the agent (`[endpoint] admission`).
    pub admission: bool,
}

impl FlowFacts<'_> {
    /// Flows: the sources and the control flow.
    pub fn flows(&self) -> usize {
        self.node.len() + 1
    }
}

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

/// Check an agent's timer period: at least one cycle (IBA CC's `ccti_timer`, DCQCN's).
pub(crate) fn positive_cycles(
    field: &str,
    d: crate::units::Duration,
    clock: &Clock,
) -> Result<Cycle, ConfigError> {
    let c = clock.duration_cycles(d);
    if c == 0 {
        return Err(ConfigError::new(field, "must be a positive duration, got 0"));
    }
    Ok(c)
}

impl Agents {
    /// No agent.
    pub const NONE: Agents =
        Agents { congestion: Congestion::None(NoAgent), admission: None, timers: Vec::new(), sideband: 0 };

    /// Check `cfg` (`[endpoint] agent`) and build its state for `nodes` nodes: the one
    /// match over the agents' configurations (each agent checks its own parameters). The
    /// per-flow agents (credits, ALO, Self-Tuned) are built once the flows are known
    /// (`for_flows`), admission control's connections beside them (`build/agents.rs`).
    /// Files it names are read through `files`.
    pub fn build(
        cfg: Option<&AgentConfig>,
        nodes: usize,
        clock: &Clock,
        files: &crate::config::Files,
    ) -> Result<Agents, ConfigError> {
        let congestion = match cfg {
            // (built once the flows are known: `build/agents.rs`)
            None | Some(AgentConfig::Credit { .. } | AgentConfig::Alo | AgentConfig::SelfTuned { .. }) => {
                Congestion::None(NoAgent)
            }
            Some(AgentConfig::Window { messages, ack_delay }) => {
                Congestion::Window(window::Window::build(*messages, *ack_delay, nodes, clock)?)
            }
            Some(c @ AgentConfig::IbaCc { .. }) => Congestion::IbaCc(iba_cc::IbaCc::build(c, clock, files)?),
            Some(c @ AgentConfig::Dcqcn { .. }) => Congestion::Dcqcn(dcqcn::Dcqcn::build(c, clock)?),
        };
        Ok(Agents { congestion, admission: None, timers: Vec::new(), sideband: 0 })
    }

    /// The agents that need the flows (the second half of the one match over the agents'
    /// configurations, `build`): `cfg`'s agent built from `f`, with its side band's period
    /// (0: none). Errors name their fields.
    pub fn for_flows(&mut self, cfg: Option<&AgentConfig>, f: &FlowFacts, errs: &mut Vec<ConfigError>) {
        let built = match cfg {
            Some(c @ AgentConfig::Credit { .. }) => {
                CreditCc::for_flows(c, f, errs).map(|a| (Congestion::Credit(a), 0))
            }
            Some(AgentConfig::Alo) => match Alo::for_flows(f) {
                // (ALO reads its router's VCs every cycle)
                Ok(a) => Some((Congestion::Alo(a), 1)),
                Err(e) => {
                    errs.push(e);
                    None
                }
            },
            Some(c @ AgentConfig::SelfTuned { .. }) => {
                let a = SelfTuned::for_flows(c, f);
                let gather = a.p.gather.max(1);
                Some((Congestion::SelfTuned(a), gather))
            }
            _ => None,
        };
        if let Some((congestion, sideband)) = built {
            self.congestion = congestion;
            self.sideband = sideband;
        }
    }

    /// The agent's parameters on their own (ranges, and settings that would do nothing),
    /// checked with the rest of the configuration before the flows exist; each agent
    /// checks its own (`build` for those built with the configuration).
    pub fn check_params(
        cfg: Option<&AgentConfig>,
        admission: bool,
        clock: &Clock,
        errs: &mut Vec<ConfigError>,
    ) {
        match cfg {
            Some(c @ AgentConfig::Credit { .. }) => credit_cc::check_params(c, admission, errs),
            Some(c @ AgentConfig::SelfTuned { .. }) => self_tuned::check_params(c, clock, errs),
            _ => {}
        }
    }

    /// Per-flow state for `flows` flows (rows of the results' `flows` table).
    pub fn size_flows(&mut self, flows: usize) {
        self.congestion.size_flows(flows);
    }

    /// The destination received a marked packet of `flow` at `now`: whether the agent
    /// answers it with a notification (a CNP, `endpoint/congestion.rs`).
    #[inline]
    pub fn on_mark(&mut self, flow: u32, now: Cycle) -> bool {
        self.congestion.on_mark(flow, now)
    }

    /// A notification (CNP with BECN) for `flow` reached its source at `now`.
    pub fn on_notification(&mut self, flow: u32, now: Cycle) {
        self.congestion.on_notification(flow, now);
    }

    /// A marked packet of `flow` that `on_mark` left unanswered at `now`: when to ask
    /// again, if the agent answers it later (`CongestionControl::defer_notification`).
    pub fn defer_notification(&mut self, flow: u32, now: Cycle) -> Option<Cycle> {
        self.congestion.defer_notification(flow, now)
    }

    /// Whether the congestion agent reacts to marked packets (a switch must mark).
    pub fn reacts_to_marks(&self) -> bool {
        self.congestion.reacts_to_marks()
    }

    /// Per-flow congestion-control counters, where the agent keeps them.
    pub fn cc_counters(&self) -> Option<&[CcCounters]> {
        self.congestion.counters()
    }

    /// `flow` at `node` was held back at `now`: when its node should look again (a
    /// `Control::CcRetry` to send itself), if the agent's own events will not wake it.
    pub fn held_back(&mut self, node: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        self.congestion.held_back(node, flow, now)
    }

    /// The longest delay of the control messages the agents send, cycles.
    pub fn control_delay(&self) -> Cycle {
        let c = self.congestion.control_delay();
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
        self.congestion.counts_sends()
    }

    /// Whether any agent runs (the fast path of the cycle loop's calls when none does).
    #[inline(always)]
    fn is_off(&self) -> bool {
        self.congestion.is_none() && self.admission.is_none()
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
        self.congestion.may_start(node, flow, dst, now, &mut self.timers)
    }

    /// Whether a packet of `flow` may start at `now` (asked before each data packet, the
    /// first of a message after `may_start`): a pacing agent's `next_send` has come.
    #[inline(always)]
    pub fn may_send(&mut self, flow: u32, now: Cycle) -> bool {
        !self.congestion.paces() || self.congestion.next_send(flow, now) <= now
    }

    /// A data packet of `flow`, `flits` long, started at `now`.
    #[inline(always)]
    pub fn packet_sent(&mut self, flow: u32, flits: u32, now: Cycle) {
        if self.congestion.paces() {
            self.congestion.packet_sent(flow, flits, now);
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
        self.congestion.started(node, flow, now, last);
        last
    }

    /// The HCA at `node` injected a message of `flow` whole (its send CQE). Returns
    /// whether a message waiting at `node` may now start.
    #[inline]
    pub fn sent(&mut self, flow: u32) -> bool {
        self.congestion.sent(flow)
    }

    /// A message of `flow` from `src` was delivered whole at `now`.
    #[inline(always)]
    pub fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        self.congestion.delivered(src, flow, now)
    }

    /// Control message `msg` arrived at `node` at `now`. Returns whether a message waiting
    /// at `node` may now start.
    pub fn on_control(&mut self, node: usize, msg: Control, now: Cycle) -> bool {
        match msg {
            Control::CcRetry => self.congestion.on_timer(node, now),
            Control::Nack { flow } => {
                if let Some(a) = &mut self.admission {
                    a.nack_from(node as u32, flow);
                }
                false
            }
            Control::Retry { flow } => self.admission.as_mut().is_some_and(|a| a.retry(flow)),
            _ => self.congestion.on_control(node, msg, now),
        }
    }

    /// A signalling packet of `flow` carrying `signal` was delivered to `node` at `now`.
    /// Returns whether `node` may now start a message it holds back.
    pub fn signal_arrived(&mut self, node: u32, flow: u32, signal: Signal, now: Cycle) -> bool {
        let Some(a) = &mut self.admission else { return false };
        let (retry, wake) = a.arrived(node, flow, signal, now);
        self.timers.extend(retry);
        if wake {
            // Admitted (its ACK): the agent hears of it (the credit agent gives the
            // connection its credits, §4.2: C_j per admitted real-time connection).
            self.congestion.admitted(flow);
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
    /// The congestion agent's invariants (the credit agent's: `CreditCc::check`; `Ok` for
    /// agents without).
    pub fn check_credits(&self) -> Result<(), String> {
        self.congestion.check()
    }

    /// What the congestion-control agent did (`None`: none, or one that does not count).
    pub fn congestion_stats(&self) -> Option<CongestionStats> {
        self.congestion.stats()
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
        self.congestion.read_sideband(status, delivered)
    }
}

//! The congestion-control agent of a run as one type: the enum `Congestion` over the
//! agents that implement `CongestionControl` (`interface.rs`), with one `match` per method
//! (the `each!` macro) delegating to the agent that runs — static dispatch, no trait object
//! in the cycle loop (ARCHITECTURE.md "Static dispatch"). The one place that lists every
//! agent, kept apart from the interface so that the agents and the interface do not depend
//! on each other both ways.

use super::interface::{CcCounters, CongestionControl, Timer};
use super::{
    alo::Alo, credit_cc::CreditCc, dcqcn::Dcqcn, iba_cc::IbaCc, self_tuned::SelfTuned, window::Window,
};
use super::{CongestionStats, Reply, RouterStatus};
use crate::links::Control;
use crate::units::Cycle;

/// No agent: every default.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct NoAgent;

impl CongestionControl for NoAgent {}

/// The congestion-control agent of a run, one state per node or flow inside each.
#[derive(Clone, Debug)]
pub(crate) enum Congestion {
    /// No agent: every message may start.
    None(NoAgent),
    Window(Window),
    /// Credit-based congestion control (document 000 §4.2).
    Credit(CreditCc),
    /// At-Least-One injection limitation (document 000 §6.1, its reference [1]).
    Alo(Alo),
    /// Self-Tuned congestion control (document 000 §6.1, its reference [15]).
    SelfTuned(SelfTuned),
    /// InfiniBand congestion control's CA side (document 002 §3-4, IBA Annex A10).
    IbaCc(IbaCc),
    /// DCQCN's reaction and notification points (Zhu et al., SIGCOMM 2015).
    Dcqcn(Dcqcn),
}

/// `$body` with `$a` bound to the agent that runs: the one match per method.
macro_rules! each {
    ($self:expr, $a:ident => $body:expr) => {
        match $self {
            Congestion::None($a) => $body,
            Congestion::Window($a) => $body,
            Congestion::Credit($a) => $body,
            Congestion::Alo($a) => $body,
            Congestion::SelfTuned($a) => $body,
            Congestion::IbaCc($a) => $body,
            Congestion::Dcqcn($a) => $body,
        }
    };
}

impl Congestion {
    /// Whether no agent runs (the cycle loop's fast path).
    #[inline(always)]
    pub fn is_none(&self) -> bool {
        matches!(self, Congestion::None(_))
    }
}

impl CongestionControl for Congestion {
    fn size_flows(&mut self, flows: usize) {
        each!(self, a => CongestionControl::size_flows(a, flows))
    }
    fn control_delay(&self) -> Cycle {
        each!(self, a => CongestionControl::control_delay(a))
    }
    #[inline(always)]
    fn may_start(&mut self, node: usize, flow: u32, dst: u32, now: Cycle, timers: &mut Vec<Timer>) -> bool {
        each!(self, a => CongestionControl::may_start(a, node, flow, dst, now, timers))
    }
    #[inline(always)]
    fn started(&mut self, node: usize, flow: u32, now: Cycle, last: bool) {
        each!(self, a => CongestionControl::started(a, node, flow, now, last))
    }
    fn reacts_to_marks(&self) -> bool {
        each!(self, a => CongestionControl::reacts_to_marks(a))
    }
    #[inline(always)]
    fn paces(&self) -> bool {
        each!(self, a => CongestionControl::paces(a))
    }
    #[inline]
    fn next_send(&mut self, flow: u32, now: Cycle) -> Cycle {
        each!(self, a => CongestionControl::next_send(a, flow, now))
    }
    #[inline]
    fn packet_sent(&mut self, flow: u32, flits: u32, now: Cycle) {
        each!(self, a => CongestionControl::packet_sent(a, flow, flits, now))
    }
    #[inline(always)]
    fn counts_sends(&self) -> bool {
        each!(self, a => CongestionControl::counts_sends(a))
    }
    #[inline]
    fn sent(&mut self, flow: u32) -> bool {
        each!(self, a => CongestionControl::sent(a, flow))
    }
    #[inline(always)]
    fn delivered(&mut self, src: usize, flow: u32, now: Cycle) -> Reply {
        each!(self, a => CongestionControl::delivered(a, src, flow, now))
    }
    fn on_mark(&mut self, flow: u32, now: Cycle) -> bool {
        each!(self, a => CongestionControl::on_mark(a, flow, now))
    }
    fn defer_notification(&mut self, flow: u32, now: Cycle) -> Option<Cycle> {
        each!(self, a => CongestionControl::defer_notification(a, flow, now))
    }

    fn on_notification(&mut self, flow: u32, now: Cycle) {
        each!(self, a => CongestionControl::on_notification(a, flow, now))
    }
    fn held_back(&mut self, node: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        each!(self, a => CongestionControl::held_back(a, node, flow, now))
    }
    fn on_timer(&mut self, node: usize, now: Cycle) -> bool {
        each!(self, a => CongestionControl::on_timer(a, node, now))
    }
    fn on_control(&mut self, node: usize, msg: Control, now: Cycle) -> bool {
        each!(self, a => CongestionControl::on_control(a, node, msg, now))
    }
    fn admitted(&mut self, flow: u32) {
        each!(self, a => CongestionControl::admitted(a, flow))
    }
    fn read_sideband(&mut self, status: &impl RouterStatus, delivered: u64) -> Option<Vec<u32>> {
        each!(self, a => CongestionControl::read_sideband(a, status, delivered))
    }
    fn counters(&self) -> Option<&[CcCounters]> {
        each!(self, a => CongestionControl::counters(a))
    }
    fn stats(&self) -> Option<CongestionStats> {
        each!(self, a => CongestionControl::stats(a))
    }
    fn check(&self) -> Result<(), String> {
        each!(self, a => CongestionControl::check(a))
    }
}

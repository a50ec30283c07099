//! The congestion-control interface (ARCHITECTURE.md "One cycle, and where the seams are"):
//! what every congestion-control agent answers, each method with a default that does
//! nothing, so an agent writes only the reactions it has. The endpoints ask through
//! `Agents` (`mod.rs`), which never names an agent: it calls the enum `Congestion`
//! (`congestion.rs`), whose one `match` per method delegates to the agent that runs —
//! static dispatch, no trait object in the cycle loop (ARCHITECTURE.md "Static dispatch").
//! This file names no agent: the agents depend on it, not it on them.
//!
//! The reactions, in the vocabulary of explicit congestion notification (IBA Annex A10;
//! DCQCN, Zhu et al., SIGCOMM 2015, §3):
//! - a **mark** at the destination (`on_mark`: FECN, or ECN's CE bit) — whether to send the
//!   source a notification;
//! - a **notification** at the source (`on_notification`: BECN, a CNP);
//! - a **timer** (`held_back` asks for one when a flow is held back; `on_timer` is it firing);
//! - and, per packet, `next_send(flow, now)`: the first cycle the flow's next packet may
//!   start (a rate-based agent's pacing), with `packet_sent` telling it one did. Message
//!   starts keep their own gate (`may_start`: windows, credits, IBA CC's injection delay).
//!
//! A new agent is a file implementing `CongestionControl`, a variant of `Congestion`
//! (`congestion.rs`) and of `config::AgentConfig`, and its arm in `Agents::build` (`mod.rs`).

use super::{CongestionStats, Reply, RouterStatus};
use crate::links::Control;
use crate::units::Cycle;

/// A retry an agent times for itself: (arrival, node, message), sent by the endpoints.
pub(crate) type Timer = (Cycle, u32, Control);

/// Per flow: notifications sent and received and cycles throttled (the results' `flows`
/// columns `cnps_sent`, `becns_received`, `throttled_cycles`), for agents that keep them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CcCounters {
    pub becns: u64,
    pub cnps_sent: u64,
    pub throttled_cycles: u64,
}

/// What a congestion-control agent answers (module comment). Every method defaults to
/// "no reaction".
pub(crate) trait CongestionControl {
    /// Per-flow state for `flows` flows (rows of the results' `flows` table).
    fn size_flows(&mut self, _flows: usize) {}

    /// The longest delay of the control messages it sends or times, cycles.
    fn control_delay(&self) -> Cycle {
        0
    }

    /// Whether `flow` at `node` may start its next message (to `dst`) at `now`; a retry it
    /// times goes to `timers`.
    fn may_start(
        &mut self,
        _node: usize,
        _flow: u32,
        _dst: u32,
        _now: Cycle,
        _timers: &mut Vec<Timer>,
    ) -> bool {
        true
    }

    /// `flow` at `node` started a message at `now` (`last`: its connection's last).
    fn started(&mut self, _node: usize, _flow: u32, _now: Cycle, _last: bool) {}

    /// Whether it reacts to marked packets (a switch must mark: `[router] marking`).
    fn reacts_to_marks(&self) -> bool {
        false
    }

    /// Whether it paces packets (`next_send` says anything but "now").
    fn paces(&self) -> bool {
        false
    }

    /// The first cycle `flow`'s next packet may start, as of `now`.
    fn next_send(&mut self, _flow: u32, _now: Cycle) -> Cycle {
        0
    }

    /// A packet of `flow`, `flits` long, started at `now`.
    fn packet_sent(&mut self, _flow: u32, _flits: u32, _now: Cycle) {}

    /// Whether it hears of messages the HCA injected whole (`sent`).
    fn counts_sends(&self) -> bool {
        false
    }

    /// The HCA injected a message of `flow` whole. Returns whether a message waiting at its
    /// node may now start.
    fn sent(&mut self, _flow: u32) -> bool {
        false
    }

    /// A message of `flow` from `src` was delivered whole at `now`.
    fn delivered(&mut self, _src: usize, _flow: u32, _now: Cycle) -> Reply {
        Reply::Nothing
    }

    /// The destination received a marked packet of `flow` at `now`: whether it sends the
    /// source a notification (a CNP).
    fn on_mark(&mut self, _flow: u32, _now: Cycle) -> bool {
        false
    }

    /// A notification (CNP with BECN) for `flow` reached its source at `now`.
    fn on_notification(&mut self, _flow: u32, _now: Cycle) {}

    /// A marked packet of `flow` that `on_mark` left unanswered at `now`: when the
    /// destination should ask `on_mark` again, if the agent answers such marks later (a
    /// `Control::DeferredCnp` the destination sends itself). DCQCN's notification point
    /// sends one CNP at the end of its interval for the marks within it.
    fn defer_notification(&mut self, _flow: u32, _now: Cycle) -> Option<Cycle> {
        None
    }

    /// `flow` at `node` was held back at `now`: when its node should look again (a timer
    /// to set), if its own events will not wake it.
    fn held_back(&mut self, _node: usize, _flow: u32, _now: Cycle) -> Option<Cycle> {
        None
    }

    /// A timer it asked for (`held_back`) fired at `node`: whether the node looks again.
    fn on_timer(&mut self, _node: usize, _now: Cycle) -> bool {
        true
    }

    /// An agent's own control message `msg` arrived at `node`. Returns whether a message
    /// waiting there may now start.
    fn on_control(&mut self, _node: usize, _msg: Control, _now: Cycle) -> bool {
        false
    }

    /// Admission control admitted `flow`'s connection.
    fn admitted(&mut self, _flow: u32) {}

    /// The side band's turn: it reads the routers through `status` (`delivered`: flits
    /// delivered so far). Returns which nodes to wake: `None` for none, `Some(empty)` for all.
    fn read_sideband(&mut self, _status: &impl RouterStatus, _delivered: u64) -> Option<Vec<u32>> {
        None
    }

    /// Per-flow counters, where it keeps them.
    fn counters(&self) -> Option<&[CcCounters]> {
        None
    }

    /// What it did, where it counts.
    fn stats(&self) -> Option<CongestionStats> {
        None
    }

    /// Its invariants.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
}

/// A source agent's waiting for one flow (IBA CC's CCT delay, DCQCN's pacing): since when
/// a ready message or packet has been held back (for `CcCounters::throttled_cycles`) and
/// when the retry timer asked for fires (`Cycle::MAX`: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldBack {
    refused_at: Cycle,
    timer_at: Cycle,
}

impl HeldBack {
    pub const NONE: HeldBack = HeldBack { refused_at: Cycle::MAX, timer_at: Cycle::MAX };

    /// Held back at `now` until `ready`: the retry timer to set, unless one firing no later
    /// (and after `now`) is pending already.
    #[inline]
    pub fn hold(&mut self, now: Cycle, ready: Cycle) -> Option<Cycle> {
        if self.refused_at == Cycle::MAX {
            self.refused_at = now;
        }
        if self.timer_at <= ready && self.timer_at > now {
            return None;
        }
        self.timer_at = ready;
        Some(ready)
    }

    /// The flow started at `now`: the cycles it waited since first held back (0 if not).
    #[inline]
    pub fn release(&mut self, now: Cycle) -> Cycle {
        let waited = if self.refused_at == Cycle::MAX { 0 } else { now - self.refused_at };
        self.refused_at = Cycle::MAX;
        waited
    }
}

#[cfg(test)]
mod held_back_tests {
    use super::HeldBack;

    #[test]
    fn one_timer_at_a_time_and_the_wait_counted_from_the_first_refusal() {
        let mut h = HeldBack::NONE;
        assert_eq!(h.hold(10, 50), Some(50));
        assert_eq!(h.hold(20, 60), None, "a timer at 50 is pending and fires first");
        assert_eq!(h.hold(50, 70), Some(70), "the timer at 50 is firing now: a new one");
        assert_eq!(h.release(80), 70, "held since 10");
        assert_eq!(h.release(90), 0, "not held since");
    }
}

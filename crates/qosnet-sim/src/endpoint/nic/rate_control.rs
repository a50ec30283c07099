//! NIC-based rate control (document 004 §3.3, §4.2) in simulated time.
//!
//! The scheduler itself (per flow an IDT and an NDT, dispatch from the valid flow with the
//! least NDT once it is due, then NDT += IDT) lives in the `qosnet-rate` crate, the one
//! implementation shared with the real data plane's agents (`qosnet-net`). This module only
//! fixes its tick for the simulator: 1/`TICKS_PER_CYCLE` cycle, so that an IDT derived from
//! a bandwidth (idt = T · Bpeak / Breq, §3.4) keeps its fraction and the long-run ratio is
//! exact; the NIC passes cycles and every conversion to ticks is here. Each method is a
//! multiplication and a call, inlined: the NIC's dispatch stays allocation-free and
//! statically dispatched.

use crate::units::Cycle;

/// Sub-cycle resolution of NDT and IDT.
pub const TICKS_PER_CYCLE: u64 = 1024;

/// The rate-control state of one NIC: its reserved flows (IDTs and NDTs in ticks).
#[derive(Clone, Debug, Default)]
pub struct RateControl(qosnet_rate::RateControl);

impl RateControl {
    /// Add a flow with inter-dispatch time `idt_ticks`; returns its index.
    #[inline]
    pub fn add_flow(&mut self, idt_ticks: u64) -> u32 {
        self.0.add_flow(idt_ticks)
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Flow `f` got its first sendable token at cycle `now` (it was not valid before).
    #[inline]
    pub fn became_valid(&mut self, f: u32, now: Cycle) {
        self.0.became_valid(f, now * TICKS_PER_CYCLE)
    }

    /// The valid flow with the least NDT, and that NDT in ticks.
    #[inline]
    pub fn least(&self) -> Option<(u32, u64)> {
        self.0.least()
    }

    /// The flow that may send a packet at cycle `now`: the least NDT, if it is due.
    #[inline]
    pub fn due(&self, now: Cycle) -> Option<u32> {
        self.0.due(now * TICKS_PER_CYCLE)
    }

    /// The flow returned by `due` sent a packet: NDT += IDT; it stays valid while it still
    /// has sendable tokens.
    #[inline]
    pub fn dispatched(&mut self, f: u32, still_valid: bool) {
        self.0.dispatched(f, still_valid)
    }

    /// NDT of flow `f`, in ticks.
    #[inline]
    pub fn ndt(&self, f: u32) -> u64 {
        self.0.ndt(f)
    }

    #[inline]
    pub fn is_valid(&self, f: u32) -> bool {
        self.0.is_valid(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Document 004 Table 1, cycle by cycle: flows A and B with IDTs 2 and 3 (T = 1), both
    /// always backlogged from t = 0.
    #[test]
    fn table_1_cycle_by_cycle() {
        let t = TICKS_PER_CYCLE;
        let mut rc = RateControl::default();
        let a = rc.add_flow(2 * t);
        let b = rc.add_flow(3 * t);
        rc.became_valid(a, 0);
        rc.became_valid(b, 0);
        let expect_ndt_a = [0, 2, 2, 4, 4, 6];
        let expect_ndt_b = [0, 0, 3, 3, 6, 6];
        let expect_sent = [Some(a), Some(b), Some(a), Some(b), Some(a), None];
        for now in 0..6 {
            assert_eq!(rc.ndt(a), expect_ndt_a[now as usize] * t, "NDT(A) at t={now}");
            assert_eq!(rc.ndt(b), expect_ndt_b[now as usize] * t, "NDT(B) at t={now}");
            let sent = rc.due(now);
            assert_eq!(sent, expect_sent[now as usize], "packet dispatched at t={now}");
            if let Some(f) = sent {
                rc.dispatched(f, true);
            }
        }
    }

    #[test]
    fn long_run_ratio_is_inverse_idt() {
        let t = TICKS_PER_CYCLE;
        let mut rc = RateControl::default();
        // IDTs 2, 3 and 6.5 (in T): shares 1/2 : 1/3 : 2/13 of the dispatch slots.
        let flows = [rc.add_flow(2 * t), rc.add_flow(3 * t), rc.add_flow(13 * t / 2)];
        for &f in &flows {
            rc.became_valid(f, 0);
        }
        let mut sent = [0u64; 3];
        for now in 0..26_000 {
            if let Some(f) = rc.due(now) {
                sent[f as usize] += 1;
                rc.dispatched(f, true);
            }
        }
        assert_eq!(sent, [13_000, 8_667, 4_000]);
    }

    #[test]
    fn an_idle_flow_does_not_bank_credit() {
        // NDT = max(now, NDT) when a flow becomes valid again: an idle period earns no burst.
        let t = TICKS_PER_CYCLE;
        let mut rc = RateControl::default();
        let a = rc.add_flow(4 * t);
        rc.became_valid(a, 0);
        assert_eq!(rc.due(0), Some(a));
        rc.dispatched(a, false);
        assert_eq!(rc.due(100), None, "an invalid flow is never due");
        rc.became_valid(a, 100);
        assert_eq!(rc.ndt(a), 100 * t);
        rc.dispatched(a, true);
        assert_eq!(rc.due(103), None);
        assert_eq!(rc.due(104), Some(a));
    }

    #[test]
    fn nothing_is_sent_before_the_least_ndt() {
        let t = TICKS_PER_CYCLE;
        let mut rc = RateControl::default();
        let a = rc.add_flow(10 * t);
        rc.became_valid(a, 5);
        rc.dispatched(a, true);
        for now in 5..15 {
            assert_eq!(rc.due(now), None);
        }
        assert_eq!(rc.due(15), Some(a));
    }
}

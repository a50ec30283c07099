//! NIC-based rate control (document 004 §3.3, §4.2): per flow an inter-dispatch time IDT and
//! a next dispatch time NDT.
//!
//! A flow is *valid* while it has sendable tokens (queued packets). When a token becomes a
//! flow's first sendable one, NDT = max(now, NDT) (§4.2). Each time the NIC can dispatch a
//! packet (at most once per T), it takes the valid flow with the least NDT; if that NDT <=
//! now it sends one packet of the flow and adds IDT to its NDT, otherwise it sends nothing
//! from the reserved flows. With every IDT >= T the flows are served in the ratio
//! 1/idt_1 : 1/idt_2 : ... (§3.3, Table 1).
//!
//! The least NDT is kept ready in a min-heap of the valid flows, so the dispatch decision is
//! a look at the heap's top, off the per-packet critical path (document 001 §2.1.2
//! precomputes the least NDT the same way). Ties go to the lower flow index, which is what
//! Table 1 shows at t = 0.
//!
//! Times are in ticks of 1/`TICKS_PER_CYCLE` cycle so that an IDT derived from a bandwidth
//! (idt = T · Bpeak / Breq, §3.4) keeps its fraction and the long-run ratio is exact.

use crate::units::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Sub-cycle resolution of NDT and IDT.
pub const TICKS_PER_CYCLE: u64 = 1024;

#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    idt: u64,
    ndt: u64,
    valid: bool,
}

/// The rate-control state of one NIC: its reserved flows.
#[derive(Clone, Debug, Default)]
pub struct RateControl {
    flows: Vec<Flow>,
    /// Valid flows by (NDT, flow index); exactly one entry per valid flow.
    heap: BinaryHeap<Reverse<(u64, u32)>>,
}

impl RateControl {
    /// Add a flow with inter-dispatch time `idt_ticks`; returns its index.
    pub fn add_flow(&mut self, idt_ticks: u64) -> u32 {
        self.flows.push(Flow { idt: idt_ticks.max(1), ndt: 0, valid: false });
        (self.flows.len() - 1) as u32
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flow `f` got its first sendable token at cycle `now` (it was not valid before).
    pub fn became_valid(&mut self, f: u32, now: Cycle) {
        let flow = &mut self.flows[f as usize];
        debug_assert!(!flow.valid, "flow {f} is already valid");
        flow.valid = true;
        flow.ndt = flow.ndt.max(now * TICKS_PER_CYCLE);
        self.heap.push(Reverse((flow.ndt, f)));
    }

    /// The valid flow with the least NDT, and that NDT in ticks.
    pub fn least(&self) -> Option<(u32, u64)> {
        self.heap.peek().map(|&Reverse((ndt, f))| (f, ndt))
    }

    /// The flow that may send a packet at cycle `now`: the least NDT, if it is due.
    pub fn due(&self, now: Cycle) -> Option<u32> {
        self.least().filter(|&(_, ndt)| ndt <= now * TICKS_PER_CYCLE).map(|(f, _)| f)
    }

    /// The flow returned by `due` sent a packet: NDT += IDT; it stays valid while it still
    /// has sendable tokens.
    pub fn dispatched(&mut self, f: u32, still_valid: bool) {
        let Reverse((_, top)) = self.heap.pop().expect("a dispatch without a valid flow");
        debug_assert_eq!(top, f, "dispatched a flow other than the least NDT");
        let flow = &mut self.flows[f as usize];
        flow.ndt += flow.idt;
        flow.valid = still_valid;
        if still_valid {
            self.heap.push(Reverse((flow.ndt, f)));
        }
    }

    /// NDT of flow `f`, in ticks.
    pub fn ndt(&self, f: u32) -> u64 {
        self.flows[f as usize].ndt
    }

    pub fn is_valid(&self, f: u32) -> bool {
        self.flows[f as usize].valid
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

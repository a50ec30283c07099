//! NIC-based rate control (document 004 §3.3, §4.2): per flow an inter-dispatch time IDT and
//! a next dispatch time NDT.
//!
//! This crate is the one implementation of the scheduler: the simulator's NICs
//! (`qosnet-sim`, `endpoint/nic/rate_control.rs`, in cycles) and the real data plane's
//! agents (`qosnet-net`, in nanoseconds) both drive it. It has no notion of a clock: times
//! are integer *ticks* whose length the caller chooses, so the same code serves a simulated
//! cycle and a wall-clock nanosecond.
//!
//! A flow is *valid* while it has sendable tokens (queued packets). When a token becomes a
//! flow's first sendable one, NDT = max(now, NDT) (§4.2). Each time the sender can dispatch a
//! packet (at most once per T), it takes the valid flow with the least NDT; if that NDT <=
//! now it sends one packet of the flow and adds IDT to its NDT, otherwise it sends nothing
//! from the reserved flows. With every IDT >= T the flows are served in the ratio
//! 1/idt_1 : 1/idt_2 : ... (§3.3, Table 1).
//!
//! **Cost in bytes** (`dispatched_bytes`): the document assumes every packet has the same
//! size (§2.1), so a dispatch advances NDT by one IDT. A packet shorter than the nominal
//! size costs its own bytes at the flow's rate instead, NDT += IDT · bytes / nominal, so a
//! small message is never held for a whole IDT; a full packet costs exactly IDT, so with
//! nominal packets this is §3.3's algorithm unchanged (Table 1 holds tick for tick).
//!
//! The least NDT is kept ready in a min-heap of the valid flows, so the dispatch decision is
//! a look at the heap's top, off the per-packet critical path (document 001 §2.1.2
//! precomputes the least NDT the same way). Ties go to the lower flow index, which is what
//! Table 1 shows at t = 0. The heap holds at most one entry per flow, so once it has grown
//! to the number of flows no dispatch allocates.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A point or span of time in the caller's ticks.
pub type Ticks = u64;

#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    idt: Ticks,
    ndt: Ticks,
    valid: bool,
}

/// The rate-control state of one sender (a NIC, a host's agent): its reserved flows.
#[derive(Clone, Debug, Default)]
pub struct RateControl {
    flows: Vec<Flow>,
    /// Valid flows by (NDT, flow index); exactly one entry per valid flow.
    heap: BinaryHeap<Reverse<(Ticks, u32)>>,
}

impl RateControl {
    /// Add a flow with inter-dispatch time `idt` (at least one tick); returns its index.
    pub fn add_flow(&mut self, idt: Ticks) -> u32 {
        self.flows.push(Flow { idt: idt.max(1), ndt: 0, valid: false });
        (self.flows.len() - 1) as u32
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flow `f` got its first sendable token at `now` (it was not valid before).
    pub fn became_valid(&mut self, f: u32, now: Ticks) {
        let flow = &mut self.flows[f as usize];
        debug_assert!(!flow.valid, "flow {f} is already valid");
        flow.valid = true;
        flow.ndt = flow.ndt.max(now);
        self.heap.push(Reverse((flow.ndt, f)));
    }

    /// The valid flow with the least NDT, and that NDT.
    pub fn least(&self) -> Option<(u32, Ticks)> {
        self.heap.peek().map(|&Reverse((ndt, f))| (f, ndt))
    }

    /// The flow that may send a packet at `now`: the least NDT, if it is due.
    pub fn due(&self, now: Ticks) -> Option<u32> {
        self.least().filter(|&(_, ndt)| ndt <= now).map(|(f, _)| f)
    }

    /// The flow returned by `due` sent a packet: NDT += IDT; it stays valid while it still
    /// has sendable tokens.
    pub fn dispatched(&mut self, f: u32, still_valid: bool) {
        let idt = self.flows[f as usize].idt;
        self.advance(f, still_valid, idt);
    }

    /// As `dispatched`, for a packet of `bytes` where a full one has `nominal` bytes: NDT
    /// advances by the packet's own time at the flow's rate, IDT · bytes / nominal (rounded
    /// up, at least one tick), which is exactly IDT for a full packet.
    pub fn dispatched_bytes(&mut self, f: u32, still_valid: bool, bytes: u64, nominal: u64) {
        let cost = self.cost(f, bytes, nominal);
        self.advance(f, still_valid, cost);
    }

    /// The ticks a packet of `bytes` costs flow `f` (`dispatched_bytes`): IDT for a full
    /// packet, else IDT · bytes / nominal rounded up, at least one tick.
    pub fn cost(&self, f: u32, bytes: u64, nominal: u64) -> Ticks {
        let idt = self.flows[f as usize].idt;
        if nominal == 0 || bytes == nominal {
            return idt;
        }
        ((idt as u128 * bytes as u128).div_ceil(nominal as u128) as Ticks).max(1)
    }

    fn advance(&mut self, f: u32, still_valid: bool, cost: Ticks) {
        let Reverse((_, top)) = self.heap.pop().expect("a dispatch without a valid flow");
        debug_assert_eq!(top, f, "dispatched a flow other than the least NDT");
        let flow = &mut self.flows[f as usize];
        flow.ndt += cost;
        flow.valid = still_valid;
        if still_valid {
            self.heap.push(Reverse((flow.ndt, f)));
        }
    }

    /// Change flow `f`'s IDT (a reservation changed while running, document 001 §2.2.2);
    /// the next dispatch after the current NDT is spaced by the new value.
    pub fn set_idt(&mut self, f: u32, idt: Ticks) {
        self.flows[f as usize].idt = idt.max(1);
    }

    /// IDT of flow `f`.
    pub fn idt(&self, f: u32) -> Ticks {
        self.flows[f as usize].idt
    }

    /// NDT of flow `f`.
    pub fn ndt(&self, f: u32) -> Ticks {
        self.flows[f as usize].ndt
    }

    pub fn is_valid(&self, f: u32) -> bool {
        self.flows[f as usize].valid
    }
}

/// The IDT of a reservation (document 004 §3.4): idt = T · Bpeak / Breq, where T is the time
/// to dispatch one packet at the peak bandwidth Bpeak, so T · Bpeak is a packet and the IDT
/// is one packet's time at the reserved rate: `packet / reserved`. The one formula, for every
/// caller, in the caller's units: bits and bits/s give seconds (the data plane), flits and
/// flits/cycle give cycles (the simulator's NICs), and Bpeak for `packet` with T = 1 gives
/// periods of T (call admission's answer, `CallAdmission::idt_periods`).
pub fn idt(packet: f64, reserved: f64) -> f64 {
    packet / reserved
}

/// [`idt`] in whole ticks of a scheduler with `ticks_per_unit` ticks in the unit of
/// `packet / reserved` (rounded; at least one tick, since a rate above the peak still
/// dispatches one packet per tick at most).
pub fn idt_ticks(packet: f64, reserved: f64, ticks_per_unit: f64) -> Ticks {
    (idt(packet, reserved) * ticks_per_unit).round().max(1.0) as Ticks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Document 004 Table 1, tick by tick: flows A and B with IDTs 2 and 3 (T = 1), both
    /// always backlogged from t = 0.
    #[test]
    fn table_1_tick_by_tick() {
        let mut rc = RateControl::default();
        let a = rc.add_flow(2);
        let b = rc.add_flow(3);
        rc.became_valid(a, 0);
        rc.became_valid(b, 0);
        let expect_ndt_a = [0, 2, 2, 4, 4, 6];
        let expect_ndt_b = [0, 0, 3, 3, 6, 6];
        let expect_sent = [Some(a), Some(b), Some(a), Some(b), Some(a), None];
        for now in 0..6 {
            assert_eq!(rc.ndt(a), expect_ndt_a[now as usize], "NDT(A) at t={now}");
            assert_eq!(rc.ndt(b), expect_ndt_b[now as usize], "NDT(B) at t={now}");
            let sent = rc.due(now);
            assert_eq!(sent, expect_sent[now as usize], "packet dispatched at t={now}");
            if let Some(f) = sent {
                rc.dispatched(f, true);
            }
        }
    }

    /// Table 1 again, the packets full (4096 bytes of 4096): `dispatched_bytes` is
    /// `dispatched`, tick for tick.
    #[test]
    fn full_packets_cost_exactly_one_idt() {
        let mut rc = RateControl::default();
        let a = rc.add_flow(2);
        let b = rc.add_flow(3);
        rc.became_valid(a, 0);
        rc.became_valid(b, 0);
        let mut sent = vec![];
        for now in 0..6 {
            if let Some(f) = rc.due(now) {
                sent.push(f);
                rc.dispatched_bytes(f, true, 4096, 4096);
            }
        }
        assert_eq!(sent, [a, b, a, b, a]);
        assert_eq!((rc.ndt(a), rc.ndt(b)), (6, 6));
    }

    /// Hand-worked: a flow reserved at 100 Mb/s with 4096-byte packets has IDT 327,680 ns.
    /// A 4-byte message costs ceil(327,680 · 4 / 4096) = 320 ns, so the next one may go
    /// 320 ns later, not a whole IDT; a 1000-byte packet costs 80,000 ns; a 1-byte one at
    /// least a tick.
    #[test]
    fn a_short_packet_costs_its_own_bytes() {
        let mut rc = RateControl::default();
        let idt = idt_ticks(4096.0 * 8.0, 100e6, 1e9);
        assert_eq!(idt, 327_680);
        let a = rc.add_flow(idt);
        rc.became_valid(a, 1_000);
        rc.dispatched_bytes(a, true, 4, 4096);
        assert_eq!(rc.ndt(a), 1_320);
        assert_eq!(rc.due(1_319), None);
        assert_eq!(rc.due(1_320), Some(a));
        rc.dispatched_bytes(a, true, 1000, 4096);
        assert_eq!(rc.ndt(a), 81_320);
        assert_eq!(rc.cost(a, 1, 4096), 80);
        let tiny = rc.add_flow(3);
        assert_eq!(rc.cost(tiny, 1, 4096), 1, "never less than a tick");
    }

    #[test]
    fn a_changed_idt_spaces_the_next_dispatches() {
        let mut rc = RateControl::default();
        let a = rc.add_flow(10);
        rc.became_valid(a, 0);
        rc.dispatched(a, true);
        rc.set_idt(a, 4);
        assert_eq!(rc.due(9), None, "the NDT already set by the old IDT holds");
        assert_eq!(rc.due(10), Some(a));
        rc.dispatched(a, true);
        assert_eq!(rc.ndt(a), 14);
        assert_eq!(rc.idt(a), 4);
    }

    #[test]
    fn idt_is_the_packet_time_at_the_reserved_rate() {
        // 4 KB at 1 Gb/s: 32.768 µs, in nanosecond ticks.
        assert_eq!(idt_ticks(4096.0 * 8.0, 1e9, 1e9), 32_768);
        // Never zero, so NDT always advances.
        assert_eq!(idt_ticks(8.0, 1e18, 1.0), 1);
        // The same formula in the simulator's units (40-flit packets reserving a quarter of
        // the link: 160 cycles) and in call admission's periods of T (Bpeak / Breq).
        assert_eq!(idt(40.0, 0.25), 160.0);
        assert_eq!(idt(1e9, 0.25e9), 4.0);
    }
}

//! Stage 3's VC allocators over a router's input and output VCs, BookSim2's two
//! (`[router] vc_allocator`, its `iq` router's `_VCAllocEvaluate`): iSLIP (`kind =
//! "islip"`, BookSim2's default, `src/allocators/islip.cpp`; McKeown, IEEE/ACM ToN 7(2),
//! 1999) and the separable input-first allocator (`kind = "separable_input_first"`,
//! `src/allocators/separable_input_first.cpp` with round-robin arbiters).
//!
//! Each waiting header asks for every free VC of every way its routing offers.
//! - iSLIP ignores the ways' priorities (so an escape VC is asked for beside the adaptive
//!   ones). Each output VC grants the first asker from its own pointer; each header accepts
//!   the first granting VC from its own pointer; both pointers move past the match only
//!   when it is made in a first round, and unmatched headers and VCs try again in the
//!   next round.
//! - The separable allocator, in one pass: each header's arbiter picks one VC, of its
//!   highest-priority ways (the escape's is lowest) the first from its pointer; each output
//!   VC's arbiter picks among the headers that picked it, the first from its pointer; a
//!   match moves both pointers past it.
//!
//! Why they matter beside the output-port allocator (`vc_alloc.rs`), where a port hands
//! each of its free VCs to a different header in the same cycle: here free VCs may grant
//! the same header (iSLIP, until the pointers spread) and headers may pick the same VC (the
//! separable allocator), so a port may hand out fewer VCs a cycle; and a header takes the
//! VC its own pointer reaches first, so where an escape VC is asked for among the others
//! (BookSim2's `min_adapt` under iSLIP), how many headers fall into the escape is the
//! pointers' doing.
//!
//! Requesters and output VCs are numbered port << 5 | lane (`Requester`): the same cyclic
//! order as BookSim2's input * vcs + vc, so "the first from the pointer" picks the same.

use super::vc_alloc::Requester;
use super::Routers;
use crate::config::VcAllocatorKind;
use crate::net::RouterNet;
use crate::sched::{bits, bits64};
use crate::unchecked::At;
use crate::units::Cycle;

/// A header's ask at one output port: the free VCs there it may take.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ask {
    who: Requester,
    /// The output port, as `router * ports + port`.
    op: u32,
    /// Its VCs free and allowed.
    free: u32,
    /// The way's VCs where it is one of the header's other ways (`OtherWays`); None: its
    /// route.
    other: Option<u32>,
    /// The way is the escape (the separable allocator's lowest priority).
    escape: bool,
}

/// The allocators' pointers and a visit's scratch (`VcAllocation::matching`; empty with
/// the output-port allocator).
#[derive(Clone, Debug, Default)]
pub(crate) struct VcMatching {
    /// Per output VC record (`Params::lane_index`): its pointer, the requester after the
    /// one it was matched with last (iSLIP: in a first round).
    grant_ptr: Vec<u16>,
    /// Per input VC record: its pointer, the output VC (numbered as a `Requester`) after
    /// the one it was matched with last (iSLIP: in a first round).
    accept_ptr: Vec<u16>,
    /// Scratch, reused (nothing is allocated per cycle): the visit's asks.
    asks: Vec<Ask>,
    /// Scratch: a round's grants, (output VC record, the asker's turn, its ask).
    grants: Vec<(u32, u32, u32)>,
    /// Scratch: a round's granted asks, (asker, the output VC's turn, its ask, the VC).
    accepts: Vec<(Requester, u32, u32, u8)>,
    /// The visit's matches, (ask, VC), in the order made.
    matches: Vec<(u32, u8)>,
}

impl VcMatching {
    /// For `records` VC records (input and output alike), `requests` headers a router.
    pub(crate) fn new(records: usize, requests: usize) -> Self {
        VcMatching {
            grant_ptr: vec![0; records],
            accept_ptr: vec![0; records],
            asks: Vec::with_capacity(requests),
            grants: Vec::with_capacity(requests),
            accepts: Vec::with_capacity(requests),
            matches: Vec::with_capacity(requests),
        }
    }

    /// iSLIP's `rounds` over `asks` at a router whose ports are numbered from `base`
    /// (`router * ports`), the VC records found by `lane_index(port, lane)`: the matches
    /// into `matches`, each ask's VCs and asker taken out of the later rounds, the pointers
    /// moved past first-round matches.
    pub(crate) fn islip(&mut self, rounds: u32, base: usize, lane_index: impl Fn(usize, usize) -> usize) {
        self.matches.clear();
        for round in 0..rounds {
            // Grant: each output VC, the first asker from its pointer.
            self.grants.clear();
            for (k, a) in self.asks.iter().enumerate() {
                for ov in bits(a.free) {
                    let rec = lane_index(a.op as usize, ov);
                    self.grants.push((rec as u32, a.who.turn(*self.grant_ptr.at(rec)), k as u32));
                }
            }
            if self.grants.is_empty() {
                break;
            }
            self.grants.sort_unstable();
            // Accept: each asker granted, the first granting VC from its pointer.
            self.accepts.clear();
            let mut last = u32::MAX;
            for &(rec, _, k) in &self.grants {
                if rec == last {
                    continue;
                }
                last = rec;
                let a = self.asks.at(k as usize);
                let ov = rec as usize - lane_index(a.op as usize, 0);
                let out = Requester::new(a.op as usize - base, ov);
                let ivc = lane_index(base + a.who.port(), a.who.lane());
                self.accepts.push((a.who, out.turn(*self.accept_ptr.at(ivc)), k, ov as u8));
            }
            self.accepts.sort_unstable();
            let mut last = None;
            for i in 0..self.accepts.len() {
                let (who, _, k, ov) = *self.accepts.at(i);
                if last == Some(who) {
                    continue;
                }
                last = Some(who);
                let op = self.asks.at(k as usize).op;
                if round == 0 {
                    let ivc = lane_index(base + who.port(), who.lane());
                    *self.grant_ptr.at_mut(lane_index(op as usize, ov as usize)) = who.next();
                    *self.accept_ptr.at_mut(ivc) = Requester::new(op as usize - base, ov as usize).next();
                }
                self.matches.push((k, ov));
                if round + 1 == rounds {
                    continue; // (no next round to take them out of)
                }
                // Out of the next rounds: the asker, and the VC from every ask.
                for a in self.asks.iter_mut() {
                    if a.who == who {
                        a.free = 0;
                    } else if a.op == op {
                        a.free &= !(1 << ov);
                    }
                }
            }
        }
    }

    /// The separable input-first allocator's pass over `asks` (numbered as for `islip`):
    /// the matches into `matches`, each match moving its two pointers.
    pub(crate) fn separable_input_first(&mut self, base: usize, lane_index: impl Fn(usize, usize) -> usize) {
        self.matches.clear();
        // Input arbiters: each asker's VC, the escape last, then the first from its pointer
        // (a turn is below 1 << 11).
        self.accepts.clear();
        for (k, a) in self.asks.iter().enumerate() {
            let ivc = lane_index(base + a.who.port(), a.who.lane());
            for ov in bits(a.free) {
                let out = Requester::new(a.op as usize - base, ov);
                let key = (a.escape as u32) << 11 | out.turn(*self.accept_ptr.at(ivc));
                self.accepts.push((a.who, key, k as u32, ov as u8));
            }
        }
        self.accepts.sort_unstable();
        // Output arbiters: each VC picked, the first of its pickers from its pointer.
        self.grants.clear();
        let mut last = None;
        for &(who, _, k, ov) in &self.accepts {
            if last == Some(who) {
                continue;
            }
            last = Some(who);
            let rec = lane_index(self.asks.at(k as usize).op as usize, ov as usize);
            self.grants.push((rec as u32, who.turn(*self.grant_ptr.at(rec)), k));
        }
        self.grants.sort_unstable();
        let mut last = u32::MAX;
        for i in 0..self.grants.len() {
            let (rec, _, k) = *self.grants.at(i);
            if rec == last {
                continue;
            }
            last = rec;
            let a = *self.asks.at(k as usize);
            let ov = rec as usize - lane_index(a.op as usize, 0);
            *self.grant_ptr.at_mut(rec as usize) = a.who.next();
            let ivc = lane_index(base + a.who.port(), a.who.lane());
            *self.accept_ptr.at_mut(ivc) = Requester::new(a.op as usize - base, ov).next();
            self.matches.push((k, ov as u8));
        }
    }
}

impl Routers {
    /// Stage 3 at router `r` with a VC allocator over input and output VCs (non-preemptive
    /// routers: the validation refuses them with preemption).
    pub(super) fn vc_matching_stage<const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        let mut m = std::mem::take(&mut self.va.matching);
        m.asks.clear();
        // (the same walk over waiting headers as `vc_alloc_stage`'s: a helper taking a
        // closure for both cost the output-port path 1.2% more instructions, measured on the
        // 8x8 40-flit and router8 benches, so the ten lines are written twice)
        for port in bits64(*self.va.r_alloc_ports.at(r)) {
            let ip = r * ports + port;
            let waiting = *self.va.ip_vc_alloc.at(ip);
            if waiting == 0 {
                *self.va.r_alloc_ports.at_mut(r) &= !(1 << port);
                continue;
            }
            for v in bits(waiting) {
                let ivc = self.p.lane_index(ip, v);
                let state = self.in_vc.at(ivc);
                if state.gate > now {
                    continue;
                }
                let who = Requester::new(port, v);
                let op = r * ports + state.out_port as usize;
                let before = m.asks.len();
                let mut ask = |op: usize, vcs: u32, other: Option<u32>, escape: bool| {
                    let free = vcs & !*self.op_allocated.at(op);
                    if free != 0 {
                        m.asks.push(Ask { who, op: op as u32, free, other, escape });
                    }
                };
                ask(op, state.route_vcs, None, false);
                // (`OtherWays`: the second adaptive way, then the escape)
                let ways = self.va.other_ways.get(ivc).map(|w| w.ways).unwrap_or_default();
                for (i, way) in ways.iter().enumerate().filter(|(_, w)| w.vcs != 0) {
                    ask(r * ports + way.port as usize, way.vcs, Some(way.vcs), i == 1);
                }
                if m.asks.len() == before {
                    // Nothing free on any way: parked until one of them frees a VC.
                    self.park(ip, v, op);
                    for way in ways.iter().filter(|w| w.vcs != 0) {
                        self.park(ip, v, r * ports + way.port as usize);
                    }
                }
            }
        }
        let p = &self.p;
        let lane_index = |port, lane| p.lane_index(port, lane);
        match p.vc_allocator {
            VcAllocatorKind::Islip => m.islip(p.vc_iterations, r * ports, lane_index),
            _ => m.separable_input_first(r * ports, lane_index),
        }
        for i in 0..m.matches.len() {
            let (k, ov) = *m.matches.at(i);
            let a = *m.asks.at(k as usize);
            let who = a.who;
            self.take_vc::<false, HOOK>(
                net,
                (r, who.port(), who.lane()),
                (a.op as usize, ov as usize),
                a.other,
                now,
            );
        }
        self.va.matching = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three ports of four lanes at router 0: a VC record is port * 4 + lane.
    fn lane_index(port: usize, lane: usize) -> usize {
        port * 4 + lane
    }

    fn ask(port: usize, lane: usize, op: u32, free: u32) -> Ask {
        Ask { who: Requester::new(port, lane), op, free, other: None, escape: false }
    }

    /// Worked by hand as BookSim2's `iSLIP_Sparse::Allocate` runs: A (port 0, VC 1) and B
    /// (port 2, VC 0) both ask for VCs 0 and 1 of output port 1, every pointer at 0.
    #[test]
    fn output_vcs_grant_in_lockstep_until_their_pointers_spread() {
        let mut is = VcMatching::new(12, 4);
        let (a, b) = (ask(0, 1, 1, 0b11), ask(2, 0, 1, 0b11));
        // Cycle 1: both VCs grant A (1 comes before B's 2 << 5 from 0), A accepts VC 0
        // (1 << 5 | 0 before 1 << 5 | 1): one VC handed out, B waits.
        is.asks = vec![a, b];
        is.islip(1, 0, lane_index);
        assert_eq!(is.matches, vec![(0, 0)]);
        assert_eq!(is.grant_ptr[lane_index(1, 0)], 2, "VC 0's: past A");
        assert_eq!(is.grant_ptr[lane_index(1, 1)], 0, "VC 1 granted, not accepted: unmoved");
        assert_eq!(is.accept_ptr[lane_index(0, 1)], 1 << 5 | 1, "A's: past VC 0");
        // Cycle 2, the same asks (VC 0 free again): VC 0 now grants B (from A + 1), VC 1
        // still A; each accepts its one grant: both matched.
        is.asks = vec![a, b];
        is.islip(1, 0, lane_index);
        assert_eq!(is.matches, vec![(0, 1), (1, 0)]);
        assert_eq!(is.grant_ptr[lane_index(1, 0)], 2 << 5 | 1);
        assert_eq!(is.grant_ptr[lane_index(1, 1)], 2);
        assert_eq!(is.accept_ptr[lane_index(0, 1)], 1 << 5 | 2);
        assert_eq!(is.accept_ptr[lane_index(2, 0)], 1 << 5 | 1);
    }

    /// A second round matches what the first left, and moves no pointer.
    #[test]
    fn later_rounds_match_the_rest_without_moving_pointers() {
        let mut is = VcMatching::new(12, 4);
        is.asks = vec![ask(0, 1, 1, 0b11), ask(2, 0, 1, 0b11)];
        is.islip(2, 0, lane_index);
        assert_eq!(is.matches, vec![(0, 0), (1, 1)]);
        assert_eq!(is.grant_ptr[lane_index(1, 1)], 0);
        assert_eq!(is.accept_ptr[lane_index(2, 0)], 0);
    }

    /// An asker's pointer runs over every port's VCs: past port 1's VC 0 it takes port 1's
    /// VC 1 before port 2's VC 0, and past that, port 2's VC 0 (wrapping past neither).
    #[test]
    fn a_header_accepts_from_its_pointer_across_its_ways() {
        let mut is = VcMatching::new(12, 4);
        is.accept_ptr[lane_index(0, 1)] = 1 << 5 | 1;
        let ways = [ask(0, 1, 1, 0b11), Ask { other: Some(0b1), ..ask(0, 1, 2, 0b1) }];
        is.asks = ways.to_vec();
        is.islip(1, 0, lane_index);
        assert_eq!(is.matches, vec![(0, 1)]);
        is.asks = ways.to_vec();
        is.islip(1, 0, lane_index);
        assert_eq!(is.matches, vec![(1, 0)], "from 1 << 5 | 2: port 2's VC 0 next");
    }

    /// Worked by hand as BookSim2's `SeparableInputFirstAllocator::Allocate` runs, with the
    /// same asks as the iSLIP case: both headers' arbiters pick VC 0 (from 0), its arbiter
    /// picks A; VC 1 stays idle. Next cycle A's arbiter, past VC 0, picks VC 1 and B's
    /// VC 0: both matched.
    #[test]
    fn separable_headers_pick_one_vc_each_and_may_collide() {
        let mut m = VcMatching::new(12, 4);
        let (a, b) = (ask(0, 1, 1, 0b11), ask(2, 0, 1, 0b11));
        m.asks = vec![a, b];
        m.separable_input_first(0, lane_index);
        assert_eq!(m.matches, vec![(0, 0)]);
        assert_eq!(m.grant_ptr[lane_index(1, 0)], 2);
        assert_eq!(m.accept_ptr[lane_index(0, 1)], 1 << 5 | 1);
        assert_eq!(m.accept_ptr[lane_index(2, 0)], 0, "B lost: its pointer stays");
        m.asks = vec![a, b];
        m.separable_input_first(0, lane_index);
        assert_eq!(m.matches, vec![(1, 0), (0, 1)]);
    }

    /// The escape is picked last: past every other way's free VC, whatever the pointer.
    #[test]
    fn separable_headers_pick_the_escape_last() {
        let mut m = VcMatching::new(12, 4);
        let escape = Ask { other: Some(0b1), escape: true, ..ask(0, 1, 1, 0b1) };
        m.asks = vec![escape, ask(0, 1, 1, 0b10)];
        m.separable_input_first(0, lane_index);
        assert_eq!(m.matches, vec![(1, 1)]);
        m.asks = vec![escape];
        m.separable_input_first(0, lane_index);
        assert_eq!(m.matches, vec![(0, 0)], "with nothing else free, the escape");
    }
}

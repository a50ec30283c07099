//! Stage 4's matching of crossbar inputs to outputs, one function per allocator
//! (`[router] allocator`): the separable input-first allocator here, iSLIP in `islip.rs`,
//! the wavefront allocator in `wavefront.rs`. Each is written over a `Crossbar`, which is the
//! request matrix, the arbiters' pointers and what a match does, and nothing else of the
//! router. The router implements it over its state (`crossbar.rs`: the inputs' ready VCs and
//! schedulers, the flit's traversal); the tests here implement it over request matrices
//! worked by hand.

use super::MAX_PORTS;
use crate::sched::bits64;
use crate::unchecked::At;

/// Stage 4's scratch for one router visit, indexed by port. It lives in the simulation,
/// inline (no pointer to load, nothing to zero per visit), and is all-zero between visits
/// except `nominee` and `keys`, which are written before they are read.
#[derive(Clone, Debug)]
pub(crate) struct XbarScratch {
    /// Per output: the inputs asking for it this round.
    pub(super) requests: [u64; MAX_PORTS],
    /// Per input: the VC it nominated this round.
    pub(super) nominee: [u8; MAX_PORTS],
    /// With rate-based keys, per input: its nominee's key (iSLIP: its best key for the
    /// output being granted).
    pub(super) keys: [u64; MAX_PORTS],
    /// iSLIP and wavefront, per input: its VCs that may send now, and the outputs they
    /// head to (those it requests) or, once outputs have granted, those that granted it.
    pub(super) ready: [u32; MAX_PORTS],
    pub(super) wants: [u64; MAX_PORTS],
    /// Under speedup only: flits granted per output and sent per input this cycle, and
    /// per input the VCs it already sent from.
    pub(super) grants: [u8; MAX_PORTS],
    pub(super) sent: [u8; MAX_PORTS],
    pub(super) used: [u32; MAX_PORTS],
}

impl Default for XbarScratch {
    fn default() -> Self {
        Self {
            requests: [0; MAX_PORTS],
            nominee: [0; MAX_PORTS],
            keys: [0; MAX_PORTS],
            ready: [0; MAX_PORTS],
            wants: [0; MAX_PORTS],
            grants: [0; MAX_PORTS],
            sent: [0; MAX_PORTS],
            used: [0; MAX_PORTS],
        }
    }
}

/// A crossbar as an allocator sees it in one cycle.
pub(super) trait Crossbar {
    fn ports(&self) -> usize;
    /// Per-cycle scratch: per output the inputs asking it (all zero between cycles), per
    /// input its key (rate-based order) and the outputs that granted it.
    fn scratch(&mut self) -> &mut XbarScratch;
    fn scratch_ref(&self) -> &XbarScratch;
    /// Where output `o`'s round robin over the inputs starts.
    fn grant_pointer(&self, o: usize) -> u32;
    fn set_grant_pointer(&mut self, o: usize, input: u32);
    /// Where input `i`'s round robin over the outputs starts (iSLIP's accept step).
    fn accept_pointer(&self, i: usize) -> u32;
    fn set_accept_pointer(&mut self, i: usize, output: u32);
    /// iSLIP and wavefront: the outputs input `i`'s ready VCs head to (its row of the
    /// request matrix).
    fn requests(&mut self, i: usize) -> u64;
    /// Under rate-based schedulers: what input `i` offers output `o` (smaller first).
    fn key(&self, i: usize, o: usize) -> u64;
    /// Input `i` was matched with output `o`: one of its VCs toward `o` sends (its scheduler
    /// chooses which). False if none could, leaving both free.
    fn send(&mut self, i: usize, o: usize) -> bool;
    /// The separable allocator: input `i`'s scheduler nominates a VC heading to no output
    /// in `saturated` (its state saved first); the output it heads to.
    fn nominate(&mut self, i: usize, saturated: u64) -> Option<usize>;
    /// The key of input `i`'s nominee (rate-based order).
    fn nominee_key(&self, i: usize) -> u64;
    /// Input `i`'s nominee was granted: it sends.
    fn send_nominee(&mut self, i: usize);
    /// The inputs `losers` lost their nominations: their schedulers' state is restored.
    fn restore(&mut self, losers: u64);
}

/// The position after `i` among `ports`, round robin.
#[inline(always)]
pub(super) fn next(i: usize, ports: usize) -> u32 {
    if i + 1 >= ports {
        0
    } else {
        i as u32 + 1
    }
}

/// The requester among `requests` (a mask of inputs) that a crossbar output grants first:
/// the first in round-robin order from input `start`, or, with rate-based `keys` (per
/// input, its nominee's key), the smallest key, ties to the first in that order.
#[inline(always)]
pub(super) fn first_request(
    requests: u64,
    start: u32,
    ports: usize,
    keys: Option<&[u64; MAX_PORTS]>,
) -> usize {
    debug_assert!(requests != 0 && (start as usize) < ports);
    // The first of `among` from `start` on, else from 0.
    let first = |among: u64| {
        let from_start = among & (u64::MAX << start);
        if from_start != 0 { from_start } else { among }.trailing_zeros() as usize
    };
    let Some(keys) = keys else { return first(requests) };
    // The requesters holding the smallest key, in index order (no rotation per requester:
    // the round robin applies to the ties alone, as `first` does to all requests).
    let (mut best, mut ties) = (u64::MAX, 0u64);
    for p in bits64(requests) {
        let k = *keys.at(p);
        ties = if k < best {
            1 << p
        } else if k == best {
            ties | 1 << p
        } else {
            ties
        };
        best = best.min(k);
    }
    first(ties)
}

/// The separable input-first allocator without speedup (the default; document 003 §3's
/// crossbar): in each of `iterations` rounds every input in the running nominates one VC
/// (its scheduler's choice), each output asked grants the first of its requesters from its
/// pointer (or the smallest key) and moves its pointer past it; a granted input is done for
/// the cycle, an output that granted is saturated, and a loser keeps its scheduler's state
/// and nominates again, for another output, in the next round.
#[inline(always)]
pub(super) fn separable<X: Crossbar>(x: &mut X, inputs: u64, iterations: u32, by_key: bool) {
    let ports = x.ports();
    // Outputs granted this cycle, and inputs that may still nominate: after the first round
    // only those whose nomination lost can find something new.
    let mut saturated = 0u64;
    let mut pending = inputs;
    for _ in 0..iterations {
        let (mut asked, mut nominated) = (0u64, 0u64);
        for i in bits64(pending) {
            let Some(o) = x.nominate(i, saturated) else { continue };
            if by_key {
                let key = x.nominee_key(i);
                *x.scratch().keys.at_mut(i) = key;
            }
            nominated |= 1 << i;
            *x.scratch().requests.at_mut(o) |= 1 << i;
            asked |= 1 << o;
        }
        if asked == 0 {
            break;
        }
        let mut sent = 0u64;
        for o in bits64(asked) {
            let requests = std::mem::take(x.scratch().requests.at_mut(o));
            let start = x.grant_pointer(o);
            let i = first_request(requests, start, ports, by_key.then_some(&x.scratch_ref().keys));
            x.send_nominee(i);
            x.set_grant_pointer(o, next(i, ports));
            sent |= 1 << i;
            x.restore(requests & !(1 << i));
        }
        saturated |= asked;
        pending = nominated & !sent;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::sched::rotated;
    use proptest::prelude::*;

    /// A crossbar over a hand-written request matrix: `rows[i]`, the outputs input `i`
    /// requests; for the separable allocator `vcs[i]`, input `i`'s VCs as the outputs they
    /// head to, nominated round robin from `vc_pointer[i]` (a VC that sends moves it past).
    /// It records every match in order, with the round it was made in.
    #[derive(Default)]
    pub(in crate::router) struct Matrix {
        pub ports: usize,
        pub rows: Vec<u64>,
        pub vcs: Vec<Vec<usize>>,
        pub vc_pointer: Vec<usize>,
        pub saved: Vec<usize>,
        pub nominee: Vec<usize>,
        pub grant: Vec<u32>,
        pub accept: Vec<u32>,
        pub keys: Vec<Vec<u64>>,
        pub matched: Vec<(usize, usize)>,
        scratch: Box<XbarScratch>,
    }

    impl Matrix {
        pub fn new(rows: &[u64]) -> Self {
            let ports = rows.len();
            Self {
                ports,
                rows: rows.to_vec(),
                vcs: vec![Vec::new(); ports],
                vc_pointer: vec![0; ports],
                saved: vec![0; ports],
                nominee: vec![0; ports],
                grant: vec![0; ports],
                accept: vec![0; ports],
                ..Self::default()
            }
        }

        /// Input `i`'s VCs (by the output each heads to) for the separable allocator.
        pub fn with_vcs(vcs: &[&[usize]]) -> Self {
            let rows: Vec<u64> = vcs.iter().map(|v| v.iter().fold(0, |m, &o| m | 1 << o)).collect();
            let mut m = Self::new(&rows);
            m.vcs = vcs.iter().map(|v| v.to_vec()).collect();
            m
        }

        /// A new cycle: the matches so far are forgotten (the pointers are kept).
        pub fn take_matches(&mut self) -> Vec<(usize, usize)> {
            std::mem::take(&mut self.matched)
        }
    }

    impl Crossbar for Matrix {
        fn ports(&self) -> usize {
            self.ports
        }
        fn scratch(&mut self) -> &mut XbarScratch {
            &mut self.scratch
        }
        fn scratch_ref(&self) -> &XbarScratch {
            &self.scratch
        }
        fn grant_pointer(&self, o: usize) -> u32 {
            self.grant[o]
        }
        fn set_grant_pointer(&mut self, o: usize, input: u32) {
            self.grant[o] = input;
        }
        fn accept_pointer(&self, i: usize) -> u32 {
            self.accept[i]
        }
        fn set_accept_pointer(&mut self, i: usize, output: u32) {
            self.accept[i] = output;
        }
        fn requests(&mut self, i: usize) -> u64 {
            self.rows[i]
        }
        fn key(&self, i: usize, o: usize) -> u64 {
            self.keys[i][o]
        }
        fn send(&mut self, i: usize, o: usize) -> bool {
            assert!(self.rows[i] >> o & 1 == 1, "input {i} matched with output {o} it did not request");
            self.matched.push((i, o));
            true
        }
        fn nominate(&mut self, i: usize, saturated: u64) -> Option<usize> {
            self.saved[i] = self.vc_pointer[i];
            let n = self.vcs[i].len();
            let v = (0..n)
                .map(|k| (self.vc_pointer[i] + k) % n)
                .find(|&v| saturated >> self.vcs[i][v] & 1 == 0)?;
            self.nominee[i] = v;
            self.vc_pointer[i] = (v + 1) % n;
            Some(self.vcs[i][v])
        }
        fn nominee_key(&self, _: usize) -> u64 {
            0
        }
        fn send_nominee(&mut self, i: usize) {
            let o = self.vcs[i][self.nominee[i]];
            self.matched.push((i, o));
        }
        fn restore(&mut self, losers: u64) {
            for i in bits64(losers) {
                self.vc_pointer[i] = self.saved[i];
            }
        }
    }

    /// Separable input-first, 4x4, every grant pointer at input 0, every input's VC pointer
    /// at its first VC. Input VCs (the output each heads to):
    ///   in0: [o0, o1]   in1: [o0, o1]   in2: [o0]   in3: [o2, o3]
    /// Round 1: nominations in0->o0, in1->o0, in2->o0, in3->o2. o0 grants in0 (the first
    ///   from its pointer 0) and moves to in1; o2 grants in3 and moves to in0. Matched
    ///   (0,0), (3,2); o0 and o2 saturated; in1 and in2 lost, their VC pointers restored.
    /// One iteration stops here: [(0,0), (3,2)].
    /// Round 2: in1 passes over its o0 VC (saturated) and nominates its o1 VC; in2's only
    ///   VC heads to o0: no nomination. o1 grants in1 and moves to in2. Matched (1,1).
    /// Round 3: no input left that lost: nothing asked. Three iterations:
    ///   [(0,0), (3,2), (1,1)]; in1 sent its last VC, so its VC pointer wraps to 0.
    #[test]
    fn separable_three_iterations_match_what_one_leaves() {
        let vcs: &[&[usize]] = &[&[0, 1], &[0, 1], &[0], &[2, 3]];
        let mut one = Matrix::with_vcs(vcs);
        separable(&mut one, 0b1111, 1, false);
        assert_eq!(one.take_matches(), vec![(0, 0), (3, 2)]);
        // o0 moved past in0, o2 past in3; o1 and o3 untouched
        assert_eq!(one.grant, vec![1, 0, 0, 0]);
        // the losers' VC pointers are where they were; the winners' moved past the VC sent
        assert_eq!(one.vc_pointer, vec![1, 0, 0, 1]);

        let mut three = Matrix::with_vcs(vcs);
        separable(&mut three, 0b1111, 3, false);
        assert_eq!(three.take_matches(), vec![(0, 0), (3, 2), (1, 1)]);
        assert_eq!(three.grant, vec![1, 2, 0, 0]);
        // in1 sent its second VC (to o1): its pointer wraps to its first
        assert_eq!(three.vc_pointer, vec![1, 0, 0, 1]);
    }

    /// Next cycle of the same switch with one iteration: grant pointers o0 -> in1, o2 -> in0;
    /// VC pointers in0 at its o1 VC, in3 at its o3 VC. Nominations: in0->o1, in1->o0,
    /// in2->o0, in3->o3. o0 grants from in1: in1; o1: in0; o3: in3. in2 lost again.
    #[test]
    fn separable_pointers_carry_over_to_the_next_cycle() {
        let vcs: &[&[usize]] = &[&[0, 1], &[0, 1], &[0], &[2, 3]];
        let mut x = Matrix::with_vcs(vcs);
        separable(&mut x, 0b1111, 1, false);
        x.take_matches();
        separable(&mut x, 0b1111, 1, false);
        assert_eq!(x.take_matches(), vec![(1, 0), (0, 1), (3, 3)]);
    }

    proptest! {
        /// The first grant is the head of the grant order that the speedup rounds use:
        /// the rotation from `start`, stably sorted by key when there are keys.
        #[test]
        fn first_request_heads_the_grant_order(
            ports in 1usize..=64,
            requests in any::<u64>(),
            start in any::<u32>(),
            raw_keys in prop::collection::vec(0u64..4, 64),
            by_key in any::<bool>(),
        ) {
            let requests = if ports == 64 { requests } else { requests & ((1u64 << ports) - 1) };
            prop_assume!(requests != 0);
            let start = start % ports as u32;
            let mut keys = [0u64; MAX_PORTS];
            keys.copy_from_slice(&raw_keys);
            let mut order: Vec<usize> = rotated(requests, start, ports).collect();
            if by_key {
                order.sort_by_key(|&p| keys[p]);
            }
            prop_assert_eq!(first_request(requests, start, ports, by_key.then_some(&keys)), order[0]);
        }
    }
}

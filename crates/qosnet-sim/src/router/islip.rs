//! Stage 4's iSLIP allocator (McKeown, "The iSLIP scheduling algorithm for input-queued
//! switches", IEEE/ACM Transactions on Networking 7(2), 1999), over VCs as BookSim2's `iq`
//! router runs it (`sw_allocator = islip`), chosen by `[router] allocator`:
//! 1. request: each unmatched input asks every unmatched output that one of its ready VCs
//!    heads to;
//! 2. grant: each output asked grants one input, the first from its grant pointer (round
//!    robin) or, with rate-based keys, the one whose best VC toward it has the smallest key
//!    (ties in round-robin order);
//! 3. accept: each input granted accepts one output the same way from its accept pointer,
//!    and its crossbar scheduler picks which of its VCs toward that output sends.
//!
//! Pointers move one past the match only for matches of the first iteration (what keeps
//! iSLIP's outputs from granting in lockstep); unmatched inputs and outputs try again in
//! the next. The QoS order holds within each output (it grants the smallest key that asked
//! it) and each input (it sends the smallest key among the outputs that granted it).

use super::matching::{first_request, next, Crossbar};
use crate::sched::{bits64, low_bits, rotated};
use crate::unchecked::At;

/// iSLIP's `iterations` over the crossbar inputs `inputs` (no speedup).
#[inline(always)]
pub(super) fn islip<X: Crossbar>(x: &mut X, inputs: u64, iterations: u32, by_key: bool) {
    let ports = x.ports();
    let mut pending = inputs;
    let mut free = low_bits(ports);
    for iteration in 0..iterations {
        // 1. requests (`wants` is cleared to collect the grants)
        let mut asked = 0u64;
        for i in bits64(pending) {
            let wants = x.requests(i) & free;
            if wants == 0 {
                // (what it could send heads to outputs already matched this cycle)
                pending &= !(1 << i);
                continue;
            }
            let s = x.scratch();
            *s.wants.at_mut(i) = 0;
            for o in bits64(wants) {
                *s.requests.at_mut(o) |= 1 << i;
            }
            asked |= wants;
        }
        if asked == 0 {
            break;
        }
        // 2. grants
        let mut granted = 0u64;
        for o in bits64(asked) {
            let requests = std::mem::take(x.scratch().requests.at_mut(o));
            if by_key {
                for i in bits64(requests) {
                    let key = x.key(i, o);
                    *x.scratch().keys.at_mut(i) = key;
                }
            }
            let start = x.grant_pointer(o);
            let i = first_request(requests, start, ports, by_key.then_some(&x.scratch_ref().keys));
            *x.scratch().wants.at_mut(i) |= 1 << o;
            granted |= 1 << i;
        }
        // 3. accepts
        for i in bits64(granted) {
            let offers = *x.scratch_ref().wants.at(i);
            let mut best = (u64::MAX, usize::MAX);
            for o in rotated(offers, x.accept_pointer(i), ports) {
                let key = if by_key { x.key(i, o) } else { 0 };
                if best.1 == usize::MAX || key < best.0 {
                    best = (key, o);
                }
            }
            let o = best.1;
            if !x.send(i, o) {
                continue;
            }
            if iteration == 0 {
                x.set_grant_pointer(o, next(i, ports));
                x.set_accept_pointer(i, next(o, ports));
            }
            pending &= !(1 << i);
            free &= !(1 << o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::matching::tests::Matrix;
    use super::*;

    /// Cycle 1, 3x3, all grant and accept pointers at 0. Request matrix (rows: inputs):
    ///   in0: o0 o1      in1: o0 o1      in2: o0
    /// Iteration 1: o0 asked by in0, in1, in2 grants in0 (pointer 0); o1 asked by in0, in1
    ///   grants in0. in0, granted by o0 and o1, accepts o0 (its pointer 0). Matched (0,0):
    ///   a first-iteration accept, so o0's grant pointer moves past in0 to 1 and in0's
    ///   accept pointer past o0 to 1. o1's grant was not accepted: its pointer stays at 0.
    /// Iteration 2: in1 and in2 ask the free o1 (in1) and nothing (in2: only o0, taken).
    ///   o1 grants in1, in1 accepts: matched (1,1), but pointers do not move.
    /// After cycle 1: grant = [1, 0, 0], accept = [1, 0, 0].
    /// Cycle 2, same requests. Iteration 1: o0 grants from in1: in1; o1 grants from in0:
    ///   in0. in0 accepts o1 (its only grant); in1 accepts o0. Matched (0,1), (1,0), both
    ///   first-iteration: o1 -> 1, in0 -> 2 (past o1); o0 -> 2, in1 -> 1 (past o0).
    ///   Iteration 2: in2 asks o0, taken: nothing.
    /// With one iteration cycle 1 would have left o1 idle: [(0,0)] alone.
    #[test]
    fn islip_moves_pointers_on_first_iteration_accepts_only() {
        let rows = [0b011, 0b011, 0b001];
        let mut x = Matrix::new(&rows);
        islip(&mut x, 0b111, 2, false);
        assert_eq!(x.take_matches(), vec![(0, 0), (1, 1)]);
        assert_eq!((x.grant.clone(), x.accept.clone()), (vec![1, 0, 0], vec![1, 0, 0]));
        islip(&mut x, 0b111, 2, false);
        assert_eq!(x.take_matches(), vec![(0, 1), (1, 0)]);
        assert_eq!((x.grant.clone(), x.accept.clone()), (vec![2, 1, 0], vec![2, 1, 0]));

        let mut once = Matrix::new(&rows);
        islip(&mut once, 0b111, 1, false);
        assert_eq!(once.take_matches(), vec![(0, 0)]);
    }

    /// Rate-based keys override the pointers: 2x2, both inputs ask both outputs, grant
    /// and accept pointers at 0. Keys (input, output): in0 offers 9 to both, in1 offers 3
    /// to o0 and 5 to o1. o0 and o1 both grant in1 (smaller key); in1 accepts o0 (3 < 5).
    /// Iteration 2: in0 asks the free o1 and gets it.
    #[test]
    fn islip_by_key_grants_and_accepts_the_smallest() {
        let mut x = Matrix::new(&[0b11, 0b11]);
        x.keys = vec![vec![9, 9], vec![3, 5]];
        islip(&mut x, 0b11, 2, true);
        assert_eq!(x.take_matches(), vec![(1, 0), (0, 1)]);
    }
}

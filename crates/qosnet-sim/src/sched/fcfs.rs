//! First come, first served: the eligible candidate whose flit is oldest (smallest stamp)
//! wins; ties go to the lowest VC so the choice is deterministic. The traditional router's
//! scheduler (document 003 §3, "TR"), and with VirtualClock stamps or finish tags as keys
//! the rate-based ones.
//!
//! The scan looks only at keys (a branch-free minimum); whether the winner may go now is
//! asked of the winner alone, and if it may not, the scan repeats without it. That is the
//! minimum over the ready candidates, found without testing every candidate's readiness:
//! a candidate that is not ready is rare (a flit that has just arrived, a header still in
//! stages 2-3), the test per candidate was not.

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Fcfs {
    #[inline]
    pub fn select(
        &mut self,
        offered: VcMask,
        key: impl Fn(usize) -> u64,
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut left = offered;
        while left != 0 {
            let first = left.trailing_zeros() as usize;
            let (mut best_key, mut best) = (key(first), first);
            for vc in bits(left & (left - 1)) {
                let k = key(vc);
                // (strictly smaller: ties stay with the lower VC, visited first)
                let better = k < best_key;
                best_key = if better { k } else { best_key };
                best = if better { vc } else { best };
            }
            if ready(best) {
                return Some(best);
            }
            left &= !(1 << best);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Asking the winner alone and rescanning gives the smallest key among the ready
        /// candidates, ties to the lowest VC: the plain definition.
        #[test]
        fn same_as_minimum_over_ready_candidates(
            keys in prop::collection::vec(0u64..8, 32),
            offered in any::<u32>(),
            ready in any::<u32>(),
        ) {
            let plain = (0..32)
                .filter(|&v| offered >> v & 1 == 1 && ready >> v & 1 == 1)
                .min_by_key(|&v| (keys[v], v));
            let got = Fcfs.select(offered, |v| keys[v], |v| ready >> v & 1 == 1);
            prop_assert_eq!(got, plain);
        }
    }

    #[test]
    fn oldest_eligible_first_ties_to_lowest() {
        let stamps = [9u64, 4, 7, 4];
        let key = |v: usize| stamps[v];
        let mut s = Fcfs;
        assert_eq!(s.select(0b1111, key, |_| true), Some(1));
        assert_eq!(s.select(0b1101, key, |_| true), Some(3));
        assert_eq!(s.select(0b0101, key, |_| true), Some(2));
        // VC 1 is the oldest but not ready; then VC 3 neither
        assert_eq!(s.select(0b1111, key, |v| v != 1), Some(3));
        assert_eq!(s.select(0b1111, key, |v| v != 1 && v != 3), Some(2));
        assert_eq!(s.select(0b1111, key, |_| false), None);
        assert_eq!(s.select(0, key, |_| true), None);
        // the largest key is a key like any other
        assert_eq!(s.select(0b11, |_| u64::MAX, |_| true), Some(0));
    }
}

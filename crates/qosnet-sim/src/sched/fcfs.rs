//! First come, first served: the candidate whose flit is oldest (smallest stamp) wins;
//! ties go to the lowest VC so the choice is deterministic. The traditional router's
//! scheduler (document 003 §3, "TR").

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Fcfs {
    #[inline]
    pub fn select(&mut self, candidates: VcMask, stamp: impl Fn(usize) -> u64) -> usize {
        let mut best = (u64::MAX, usize::MAX);
        for vc in bits(candidates) {
            let s = stamp(vc);
            if s < best.0 {
                best = (s, vc);
            }
        }
        best.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_first_ties_to_lowest() {
        let stamps = [9u64, 4, 7, 4];
        let mut s = Fcfs;
        assert_eq!(s.select(0b1111, |v| stamps[v]), 1);
        assert_eq!(s.select(0b1101, |v| stamps[v]), 3);
        assert_eq!(s.select(0b0101, |v| stamps[v]), 2);
    }
}

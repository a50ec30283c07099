//! First come, first served: the eligible candidate whose flit is oldest (smallest stamp)
//! wins; ties go to the lowest VC so the choice is deterministic. The traditional router's
//! scheduler (document 003 §3, "TR").

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct Fcfs;

impl Fcfs {
    #[inline]
    pub fn select(
        &mut self,
        offered: VcMask,
        mut eligible: impl FnMut(usize) -> Option<u64>,
    ) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for vc in bits(offered) {
            if let Some(s) = eligible(vc) {
                if best.is_none_or(|(b, _)| s < b) {
                    best = Some((s, vc));
                }
            }
        }
        best.map(|(_, vc)| vc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oldest_eligible_first_ties_to_lowest() {
        let stamps = [9u64, 4, 7, 4];
        let mut s = Fcfs;
        assert_eq!(s.select(0b1111, |v| Some(stamps[v])), Some(1));
        assert_eq!(s.select(0b1101, |v| Some(stamps[v])), Some(3));
        assert_eq!(s.select(0b0101, |v| Some(stamps[v])), Some(2));
        // VC 1 is the oldest but not eligible
        assert_eq!(s.select(0b1111, |v| (v != 1).then_some(stamps[v])), Some(3));
        assert_eq!(s.select(0b1111, |_| None), None);
    }
}

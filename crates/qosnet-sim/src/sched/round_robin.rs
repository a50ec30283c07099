//! Round robin: the first eligible candidate after the VC served last, wrapping around.

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    last: u8,
}

impl RoundRobin {
    #[inline]
    pub fn select(
        &mut self,
        offered: VcMask,
        mut eligible: impl FnMut(usize) -> Option<u64>,
    ) -> Option<usize> {
        let after = if self.last >= 31 { 0 } else { offered & (u32::MAX << (self.last + 1)) };
        let vc = bits(after).chain(bits(offered & !after)).find(|&v| eligible(v).is_some())?;
        self.last = vc as u8;
        Some(vc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_over_eligible_candidates() {
        let mut s = RoundRobin::default();
        let seq: Vec<usize> = (0..5).map(|_| s.select(0b1011, |_| Some(0)).unwrap()).collect();
        assert_eq!(seq, vec![1, 3, 0, 1, 3]);
        // a candidate that appears takes its turn in order
        assert_eq!(s.select(0b1111, |_| Some(0)), Some(0));
        assert_eq!(s.select(0b1111, |_| Some(0)), Some(1));
        // an ineligible VC is skipped without losing the others' turns
        assert_eq!(s.select(0b1111, |v| (v != 2).then_some(0)), Some(3));
        assert_eq!(s.select(0b1111, |_| None), None);
        assert_eq!(s.select(0b1111, |_| Some(0)), Some(0));
    }
}

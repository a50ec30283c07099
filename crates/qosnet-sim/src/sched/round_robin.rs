//! Round robin: the first eligible candidate after the VC served last, wrapping around.

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    last: u8,
}

impl RoundRobin {
    #[inline]
    pub fn select(&mut self, offered: VcMask, ready: impl Fn(usize) -> bool) -> Option<usize> {
        let after = if self.last >= 31 { 0 } else { offered & (u32::MAX << (self.last + 1)) };
        let vc = bits(after).chain(bits(offered & !after)).find(|&v| ready(v))?;
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
        let seq: Vec<usize> = (0..5).map(|_| s.select(0b1011, |_| true).unwrap()).collect();
        assert_eq!(seq, vec![1, 3, 0, 1, 3]);
        // a candidate that appears takes its turn in order
        assert_eq!(s.select(0b1111, |_| true), Some(0));
        assert_eq!(s.select(0b1111, |_| true), Some(1));
        // an ineligible VC is skipped without losing the others' turns
        assert_eq!(s.select(0b1111, |v| v != 2), Some(3));
        assert_eq!(s.select(0b1111, |_| false), None);
        assert_eq!(s.select(0b1111, |_| true), Some(0));
    }
}

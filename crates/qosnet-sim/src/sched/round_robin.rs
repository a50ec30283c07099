//! Round robin: the first candidate after the VC served last, wrapping around.

use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct RoundRobin {
    last: u8,
}

impl RoundRobin {
    #[inline]
    pub fn select(&mut self, candidates: VcMask) -> usize {
        let after = if self.last >= 31 { 0 } else { candidates & (u32::MAX << (self.last + 1)) };
        let vc = if after != 0 { after.trailing_zeros() } else { candidates.trailing_zeros() };
        self.last = vc as u8;
        vc as usize
    }

    #[inline]
    pub fn served(&mut self, vc: usize) {
        self.last = vc as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_over_candidates() {
        let mut s = RoundRobin::default();
        let seq: Vec<usize> = (0..5).map(|_| s.select(0b1011)).collect();
        assert_eq!(seq, vec![1, 3, 0, 1, 3]);
        // a candidate that appears takes its turn in order
        assert_eq!(s.select(0b1111), 0);
        assert_eq!(s.select(0b1111), 1);
        assert_eq!(s.select(0b1111), 2);
    }
}

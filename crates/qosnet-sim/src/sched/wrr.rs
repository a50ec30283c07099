//! Weighted round robin (document 000 §3.1, §3.3; document 003 §3.1 lists it among the
//! rate-based alternatives): VCs are visited in round-robin order and the one being
//! visited may send up to its weight in flits before the turn passes on. A VC with nothing
//! eligible loses the rest of its turn, so the scheme is work conserving. Weights (flits
//! per round, per VC) come from configuration or from reservations (admission control).

use super::bits;
use crate::routing::VcMask;

#[derive(Clone, Copy, Debug, Default)]
pub struct Wrr {
    current: u8,
    left: u16,
}

impl Wrr {
    #[inline]
    pub fn select(
        &mut self,
        offered: VcMask,
        weights: &[u16; 32],
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let cur = self.current as usize;
        if self.left > 0 && offered >> cur & 1 == 1 && ready(cur) {
            self.left -= 1;
            return Some(cur);
        }
        // The turn passes to the next VC (after the current one) that can send.
        let after = if cur >= 31 { 0 } else { offered & (u32::MAX << (cur + 1)) };
        let v = bits(after).chain(bits(offered & !after)).find(|&v| weights[v] > 0 && ready(v))?;
        self.current = v as u8;
        self.left = weights[v] - 1;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_give_flits_per_round() {
        let mut w = [1u16; 32];
        w[0] = 3;
        w[1] = 1;
        w[2] = 2;
        let mut s = Wrr::default();
        let seq: Vec<usize> = (0..12).map(|_| s.select(0b111, &w, |_| true).unwrap()).collect();
        // starts after VC 0: 1, then 2 2, then 0 0 0, then 1, ...
        assert_eq!(seq, vec![1, 2, 2, 0, 0, 0, 1, 2, 2, 0, 0, 0]);
    }

    #[test]
    fn an_idle_vc_loses_its_turn() {
        let mut w = [4u16; 32];
        w[1] = 1;
        let mut s = Wrr::default();
        assert_eq!(s.select(0b11, &w, |_| true), Some(1));
        assert_eq!(s.select(0b11, &w, |_| true), Some(0));
        // VC 0 has nothing now: VC 1 goes, VC 0's remaining turn is lost
        assert_eq!(s.select(0b11, &w, |v| v == 1), Some(1));
        let seq: Vec<usize> = (0..5).map(|_| s.select(0b11, &w, |_| true).unwrap()).collect();
        assert_eq!(seq, vec![0, 0, 0, 0, 1]);
        // zero weight: never served
        w[0] = 0;
        assert_eq!(s.select(0b01, &w, |_| true), None);
    }
}

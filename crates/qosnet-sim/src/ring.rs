//! Many fixed-capacity FIFO queues in one flat allocation (the VC buffers).
//!
//! The flits live here; each queue's position (`RingState`, 4 bytes) lives with the rest of
//! its VC's state (`InVc`, `OutVc`), so a stage's look at a VC touches one cache line for
//! the bookkeeping and one for the flit, not a line per array.

use crate::flit::Flit;
use crate::unchecked::At;

/// Largest buffer depth in flits: positions are 16-bit, and a preemptive router's input
/// buffer has two more slots than its depth, for dummy flits (so at most `u16::MAX`).
pub const MAX_DEPTH: u32 = u16::MAX as u32 - 2;

/// Where a queue stands: its first slot and how many flits it holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RingState {
    head: u16,
    len: u16,
}

impl RingState {
    #[inline]
    pub fn len(&self) -> u32 {
        self.len as u32
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[derive(Clone, Debug)]
pub struct Rings {
    cap: u32,
    data: Vec<Flit>,
}

impl Rings {
    pub fn new(count: usize, cap: u32) -> Self {
        debug_assert!(cap <= u16::MAX as u32);
        Self { cap, data: vec![Flit::default(); count * cap as usize] }
    }
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.cap
    }
    #[inline]
    pub fn front(&self, s: &RingState, q: usize) -> &Flit {
        debug_assert!(s.len > 0);
        self.data.at(q * self.cap as usize + s.head as usize)
    }
    /// Push at the back; the caller has checked for space (credits guarantee it).
    #[inline]
    pub fn push(&mut self, s: &mut RingState, q: usize, f: Flit) {
        let cap = self.cap;
        debug_assert!((s.len as u32) < cap, "ring {q} overflow");
        let mut slot = s.head as u32 + s.len as u32;
        if slot >= cap {
            slot -= cap;
        }
        *self.data.at_mut(q * cap as usize + slot as usize) = f;
        s.len += 1;
    }
    /// Push at the front (a dummy flit made inside the buffer by preemption).
    #[inline]
    pub fn push_front(&mut self, s: &mut RingState, q: usize, f: Flit) {
        let cap = self.cap;
        debug_assert!((s.len as u32) < cap, "ring {q} overflow");
        let h = if s.head == 0 { cap - 1 } else { s.head as u32 - 1 };
        *self.data.at_mut(q * cap as usize + h as usize) = f;
        *s = RingState { head: h as u16, len: s.len + 1 };
    }
    /// Pop the front. An emptied queue starts again at its first slot: at low load a
    /// buffer then keeps using one cache line instead of each of its slots in turn.
    #[inline]
    pub fn pop(&mut self, s: &mut RingState, q: usize) -> Flit {
        let cap = self.cap;
        debug_assert!(s.len > 0);
        let h = s.head as u32;
        let f = *self.data.at(q * cap as usize + h as usize);
        let next = if h + 1 == cap || s.len == 1 { 0 } else { h + 1 };
        *s = RingState { head: next as u16, len: s.len - 1 };
        f
    }
    /// The flits of queue `q`, front first (for invariant checks).
    pub fn iter<'a>(&'a self, s: &RingState, q: usize) -> impl Iterator<Item = &'a Flit> + 'a {
        let cap = self.cap as usize;
        let (head, len) = (s.head as usize, s.len as usize);
        (0..len).map(move |i| self.data.at(q * cap + (head + i) % cap))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flit(seq: u16) -> Flit {
        Flit { seq, ..Flit::default() }
    }

    #[test]
    fn fifo_with_wrap_push_front_and_restart_when_empty() {
        let mut r = Rings::new(2, 3);
        let mut s = RingState::default();
        r.push(&mut s, 1, flit(1));
        r.push(&mut s, 1, flit(2));
        assert_eq!(r.pop(&mut s, 1).seq, 1);
        r.push(&mut s, 1, flit(3));
        r.push(&mut s, 1, flit(4)); // wraps to slot 0
        assert_eq!(r.iter(&s, 1).map(|f| f.seq).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(r.pop(&mut s, 1).seq, 2);
        r.push_front(&mut s, 1, flit(9));
        assert_eq!(r.front(&s, 1).seq, 9);
        let out: Vec<u16> = (0..3).map(|_| r.pop(&mut s, 1).seq).collect();
        assert_eq!(out, vec![9, 3, 4]);
        assert!(s.is_empty());
        // an emptied queue starts at its first slot again
        assert_eq!(s, RingState::default());
        // queue 0 untouched
        let s0 = RingState::default();
        assert_eq!(r.iter(&s0, 0).count(), 0);
    }
}

//! Many fixed-capacity FIFO queues (the VC buffers): each queue's front flit and position
//! (`RingState`) live with the rest of its VC's state (`InVc`, `OutVc`), the flits behind
//! the front in one flat allocation.
//!
//! Why the front flit is kept apart: in a wormhole network a VC mostly holds one flit at a
//! time (each moves on in the cycle after it arrives), and then a stage's look at the VC,
//! the push and the pop touch the VC's own cache line and no buffer slot.

use crate::flit::Flit;
use crate::unchecked::At;

/// Largest buffer depth in flits: positions are 16-bit, and a preemptive router's input
/// buffer has two more slots than its depth, for dummy flits (so at most `u16::MAX`).
pub const MAX_DEPTH: u32 = u16::MAX as u32 - 2;

/// A queue's front flit (valid while it is non-empty) and where the others stand: their
/// first slot and how many flits the queue holds, the front included.
#[derive(Clone, Copy, Debug, Default)]
pub struct RingState {
    first: Flit,
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
    /// The front flit (the queue is non-empty).
    #[inline]
    pub fn front(&self) -> &Flit {
        debug_assert!(self.len > 0);
        &self.first
    }
}

#[derive(Clone, Debug)]
pub struct Rings {
    /// Slots per queue: one less than its capacity (the front flit is not stored here).
    slots: u32,
    /// The flits behind the fronts, as plain words (`Flit::to_words`). Why: a vector of
    /// zeros is allocated zeroed, so a large network's buffers (a 32x32 mesh with 16 VCs
    /// of 40 flits: over 100 MB) cost no time to build and no memory until flits reach
    /// them; a shard of a threaded run (`Shards`) maps only its own routers' buffers.
    data: Vec<[u64; 2]>,
}

impl Rings {
    /// `count` queues of `cap` flits each.
    pub fn new(count: usize, cap: u32) -> Self {
        debug_assert!(cap <= u16::MAX as u32);
        let slots = cap.saturating_sub(1).max(1);
        Self { slots, data: vec![[0; 2]; count * slots as usize] }
    }
    /// Push at the back; the caller has checked for space (credits guarantee it).
    #[inline]
    pub fn push(&mut self, s: &mut RingState, q: usize, f: Flit) {
        if s.len == 0 {
            s.first = f;
        } else {
            let n = self.slots;
            debug_assert!((s.len as u32) <= n, "ring {q} overflow");
            let mut slot = s.head as u32 + s.len as u32 - 1;
            if slot >= n {
                slot -= n;
            }
            *self.data.at_mut(q * n as usize + slot as usize) = f.to_words();
        }
        s.len += 1;
    }
    /// Push at the front (a dummy flit made inside the buffer by preemption).
    #[inline]
    pub fn push_front(&mut self, s: &mut RingState, q: usize, f: Flit) {
        if s.len > 0 {
            let n = self.slots;
            debug_assert!((s.len as u32) <= n, "ring {q} overflow");
            let h = if s.head == 0 { n - 1 } else { s.head as u32 - 1 };
            *self.data.at_mut(q * n as usize + h as usize) = s.first.to_words();
            s.head = h as u16;
        }
        s.first = f;
        s.len += 1;
    }
    /// Pop the front. When the slots empty they start again at the first: at low load a
    /// buffer then keeps using one cache line instead of each of its slots in turn.
    #[inline]
    pub fn pop(&mut self, s: &mut RingState, q: usize) -> Flit {
        debug_assert!(s.len > 0);
        let f = s.first;
        if s.len > 1 {
            let n = self.slots;
            let h = s.head as u32;
            s.first = Flit::from_words(*self.data.at(q * n as usize + h as usize));
            s.head = if h + 1 == n || s.len == 2 { 0 } else { h as u16 + 1 };
        }
        s.len -= 1;
        f
    }
    /// The flits of queue `q`, front first (for invariant checks).
    pub fn iter<'a>(&'a self, s: &'a RingState, q: usize) -> impl Iterator<Item = Flit> + 'a {
        let n = self.slots as usize;
        let (head, behind) = (s.head as usize, (s.len as usize).saturating_sub(1));
        let first = (s.len > 0).then_some(s.first);
        first.into_iter().chain((0..behind).map(move |i| Flit::from_words(self.data[q * n + (head + i) % n])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::VecDeque;

    fn flit(seq: u16) -> Flit {
        Flit::new(crate::ids::PacketId(0), seq, 0, 0, 0)
    }

    #[test]
    fn fifo_with_wrap_push_front_and_restart_when_empty() {
        let mut r = Rings::new(2, 3);
        let mut s = RingState::default();
        r.push(&mut s, 1, flit(1));
        r.push(&mut s, 1, flit(2));
        assert_eq!(r.pop(&mut s, 1).seq(), 1);
        r.push(&mut s, 1, flit(3));
        r.push(&mut s, 1, flit(4)); // behind the front: wraps to slot 0
        assert_eq!(r.iter(&s, 1).map(|f| f.seq()).collect::<Vec<_>>(), vec![2, 3, 4]);
        assert_eq!(r.pop(&mut s, 1).seq(), 2);
        r.push_front(&mut s, 1, flit(9));
        assert_eq!(s.front().seq(), 9);
        let out: Vec<u16> = (0..3).map(|_| r.pop(&mut s, 1).seq()).collect();
        assert_eq!(out, vec![9, 3, 4]);
        assert!(s.is_empty());
        // emptied slots start at the first again
        assert!(s.is_empty());
        assert_eq!(s.head, 0);
        // queue 0 untouched
        let s0 = RingState::default();
        assert_eq!(r.iter(&s0, 0).count(), 0);
    }

    proptest! {
        /// Any sequence of pushes, front pushes and pops on queues of any capacity behaves
        /// as a `VecDeque`, and leaves the neighbouring queues alone.
        #[test]
        fn behaves_as_a_deque(cap in 1u32..6, ops in prop::collection::vec(0u8..3, 0..200)) {
            let mut r = Rings::new(3, cap);
            let (mut s, mut model) = (RingState::default(), VecDeque::new());
            let mut next = 0u16;
            for op in ops {
                match op {
                    0 | 1 if model.len() < cap as usize => {
                        next += 1;
                        if op == 0 {
                            r.push(&mut s, 1, flit(next));
                            model.push_back(next);
                        } else {
                            r.push_front(&mut s, 1, flit(next));
                            model.push_front(next);
                        }
                    }
                    2 if !model.is_empty() => {
                        prop_assert_eq!(r.pop(&mut s, 1).seq(), model.pop_front().unwrap());
                    }
                    _ => {}
                }
                prop_assert_eq!(s.len() as usize, model.len());
                let seqs: Vec<u16> = r.iter(&s, 1).map(|f| f.seq()).collect();
                prop_assert_eq!(&seqs, &Vec::from(model.clone()));
                if let Some(&f) = model.front() {
                    prop_assert_eq!(s.front().seq(), f);
                }
            }
            let untouched = |q: usize| r.data[q * r.slots as usize..][..r.slots as usize].iter().all(|f| Flit::from_words(*f).seq() == 0);
            prop_assert!(untouched(0) && untouched(2));
        }
    }
}

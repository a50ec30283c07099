//! Many fixed-capacity FIFO queues in one flat allocation (the VC buffers).

use crate::flit::Flit;

#[derive(Clone, Debug)]
pub struct Rings {
    cap: u32,
    data: Vec<Flit>,
    /// Per queue (head, len), together so one cache line serves both.
    state: Vec<(u32, u32)>,
}

impl Rings {
    pub fn new(count: usize, cap: u32) -> Self {
        Self { cap, data: vec![Flit::default(); count * cap as usize], state: vec![(0, 0); count] }
    }
    #[inline]
    pub fn len(&self, q: usize) -> u32 {
        self.state[q].1
    }
    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.state[q].1 == 0
    }
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.cap
    }
    #[inline]
    pub fn front(&self, q: usize) -> &Flit {
        debug_assert!(self.state[q].1 > 0);
        &self.data[q * self.cap as usize + self.state[q].0 as usize]
    }
    /// Push at the back; the caller has checked for space (credits guarantee it).
    #[inline]
    pub fn push(&mut self, q: usize, f: Flit) {
        let cap = self.cap;
        let (head, len) = self.state[q];
        debug_assert!(len < cap, "ring {q} overflow");
        let mut slot = head + len;
        if slot >= cap {
            slot -= cap;
        }
        self.data[q * cap as usize + slot as usize] = f;
        self.state[q].1 = len + 1;
    }
    /// Push at the front (a dummy flit made inside the buffer by preemption).
    #[inline]
    pub fn push_front(&mut self, q: usize, f: Flit) {
        let cap = self.cap;
        let (head, len) = self.state[q];
        debug_assert!(len < cap, "ring {q} overflow");
        let h = if head == 0 { cap - 1 } else { head - 1 };
        self.data[q * cap as usize + h as usize] = f;
        self.state[q] = (h, len + 1);
    }
    #[inline]
    pub fn pop(&mut self, q: usize) -> Flit {
        let cap = self.cap;
        let (h, len) = self.state[q];
        debug_assert!(len > 0);
        let f = self.data[q * cap as usize + h as usize];
        self.state[q] = (if h + 1 == cap { 0 } else { h + 1 }, len - 1);
        f
    }
    /// The flits of queue `q`, front first (for invariant checks).
    pub fn iter(&self, q: usize) -> impl Iterator<Item = &Flit> + '_ {
        let cap = self.cap as usize;
        let (head, len) = self.state[q];
        (0..len as usize).map(move |i| &self.data[q * cap + (head as usize + i) % cap])
    }
}

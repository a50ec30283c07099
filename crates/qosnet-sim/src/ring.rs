//! Many fixed-capacity FIFO queues in one flat allocation (the VC buffers).

use crate::flit::Flit;

#[derive(Clone, Debug)]
pub struct Rings {
    cap: u32,
    data: Vec<Flit>,
    head: Vec<u32>,
    len: Vec<u32>,
}

impl Rings {
    pub fn new(count: usize, cap: u32) -> Self {
        Self {
            cap,
            data: vec![Flit::default(); count * cap as usize],
            head: vec![0; count],
            len: vec![0; count],
        }
    }
    #[inline]
    pub fn len(&self, q: usize) -> u32 {
        self.len[q]
    }
    #[inline]
    pub fn is_empty(&self, q: usize) -> bool {
        self.len[q] == 0
    }
    #[inline]
    pub fn capacity(&self) -> u32 {
        self.cap
    }
    #[inline]
    pub fn front(&self, q: usize) -> &Flit {
        debug_assert!(self.len[q] > 0);
        &self.data[q * self.cap as usize + self.head[q] as usize]
    }
    /// Push at the back; the caller has checked for space (credits guarantee it).
    #[inline]
    pub fn push(&mut self, q: usize, f: Flit) {
        let (cap, len) = (self.cap, self.len[q]);
        debug_assert!(len < cap, "ring {q} overflow");
        let mut slot = self.head[q] + len;
        if slot >= cap {
            slot -= cap;
        }
        self.data[q * cap as usize + slot as usize] = f;
        self.len[q] = len + 1;
    }
    #[inline]
    pub fn pop(&mut self, q: usize) -> Flit {
        debug_assert!(self.len[q] > 0);
        let cap = self.cap;
        let h = self.head[q];
        let f = self.data[q * cap as usize + h as usize];
        self.head[q] = if h + 1 == cap { 0 } else { h + 1 };
        self.len[q] -= 1;
        f
    }
    /// The flits of queue `q`, front first (for invariant checks).
    pub fn iter(&self, q: usize) -> impl Iterator<Item = &Flit> + '_ {
        let cap = self.cap as usize;
        (0..self.len[q] as usize)
            .map(move |i| &self.data[q * cap + (self.head[q] as usize + i) % cap])
    }
}

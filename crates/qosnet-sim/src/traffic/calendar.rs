//! The calendar of the sources' next message creations: a timing wheel over the next
//! `HORIZON` cycles, with a heap for creations further off.
//!
//! Why not one binary heap: a loaded network creates a message at most nodes every few
//! cycles (the 1-flit 8x8 mesh at 0.4: 26 a cycle), and each paid a heap pop and push,
//! O(log sources) with a comparison of three keys at every level: 2.6% of that bench's
//! instructions. A creation within the horizon now costs one push onto its cycle's slot,
//! and a cycle's creations one small sort. Sources that create rarely (long gaps, video
//! frames) go to the heap as before.
//!
//! Order: creations come out exactly as a heap of `(cycle, source, epoch)` gives them —
//! by cycle, then by source — including a creation pushed for the cycle being served
//! (a Poisson source can create twice in one cycle), so a run's output does not depend on
//! which structure held its calendar.

use crate::unchecked::At;
use crate::units::Cycle;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Cycles the wheel covers (a power of two). Why 1024: geometric gaps at the loads where
/// the calendar's cost shows (a message every few to a few hundred cycles per source) fall
/// within it; the wheel's bitmap is then 16 words to scan when the network is idle.
const HORIZON: usize = 1024;
const WORDS: usize = HORIZON / 64;

/// A creation: (source, the source's epoch when queued), packed with the source in the
/// high half so that keys order as (source, epoch).
type Key = u64;

fn key(source: u32, epoch: u32) -> Key {
    (source as u64) << 32 | epoch as u64
}

/// Creations due, by cycle then source.
pub(crate) struct Calendar {
    /// Slot `t % HORIZON`: creations due at cycle t, for t in `[base, base + HORIZON)`.
    slots: Vec<Vec<Key>>,
    /// Bit `s` set: slot s holds something.
    occupied: [u64; WORDS],
    /// Creations at or past `base + HORIZON` when queued.
    later: BinaryHeap<Reverse<(Cycle, Key)>>,
    /// The first cycle not yet served.
    base: Cycle,
    /// The cycle being served, and its creations in order from `due[next]` on.
    now: Cycle,
    due: Vec<Key>,
    next: usize,
}

impl Calendar {
    pub fn new() -> Self {
        Calendar {
            slots: (0..HORIZON).map(|_| Vec::new()).collect(),
            occupied: [0; WORDS],
            later: BinaryHeap::new(),
            base: 0,
            now: 0,
            due: Vec::new(),
            next: 0,
        }
    }

    /// Queue a creation of `source` at cycle `t` (not before the cycle being served).
    #[inline(always)]
    pub fn push(&mut self, t: Cycle, source: u32, epoch: u32) {
        let k = key(source, epoch);
        if t < self.base {
            // For the cycle being served (`t == now`): into its place among those still due.
            debug_assert_eq!(t, self.now, "a creation queued for a cycle already served");
            let at = self.next + self.due[self.next..].partition_point(|&d| d < k);
            self.due.insert(at, k);
        } else if t - self.base < HORIZON as Cycle {
            let s = t as usize % HORIZON;
            self.slots.at_mut(s).push(k);
            *self.occupied.at_mut(s / 64) |= 1 << (s % 64);
        } else {
            self.later.push(Reverse((t, k)));
        }
    }

    /// Serve cycle `now`: its creations become what `pop` gives.
    ///
    /// `now` is at most `next()` when the previous cycle served was left: the engine steps
    /// through every cycle or jumps to the next creation (`Engine::advance`), so nothing
    /// due earlier is left behind. (Were it, it would be served now, after the due
    /// creations of lower source number.)
    #[inline(always)]
    pub fn begin(&mut self, now: Cycle) {
        debug_assert!(now >= self.base, "cycle {now} served twice");
        self.due.clear();
        self.next = 0;
        if now != self.base {
            self.jump(now);
        }
        let s = now as usize % HORIZON;
        let bit = 1 << (s % 64);
        if *self.occupied.at(s / 64) & bit != 0 {
            *self.occupied.at_mut(s / 64) &= !bit;
            std::mem::swap(&mut self.due, self.slots.at_mut(s));
        }
        while let Some(&Reverse((t, k))) = self.later.peek() {
            if t > now {
                break;
            }
            self.later.pop();
            self.due.push(k);
        }
        if self.due.len() > 1 {
            self.due.sort_unstable();
        }
        self.now = now;
        self.base = now + 1;
    }

    /// Move the creations of cycles in `[base, now)`, if any, to `now`'s slot (see
    /// `begin`: the engine leaves none).
    #[cold]
    fn jump(&mut self, now: Cycle) {
        let last = now.min(self.base + HORIZON as Cycle);
        let to = now as usize % HORIZON;
        for t in self.base..last {
            let s = t as usize % HORIZON;
            if self.occupied[s / 64] & 1 << (s % 64) != 0 {
                debug_assert!(false, "creations at cycle {t} skipped to {now}");
                self.occupied[s / 64] &= !(1 << (s % 64));
                let moved = std::mem::take(&mut self.slots[s]);
                self.slots[to].extend(moved);
                self.occupied[to / 64] |= 1 << (to % 64);
            }
        }
    }

    /// The next creation due in the cycle being served: (source, epoch).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(u32, u32)> {
        let k = *self.due.get(self.next)?;
        self.next += 1;
        Some(((k >> 32) as u32, k as u32))
    }

    /// The first cycle with a creation due, or `Cycle::MAX`.
    pub fn next(&self) -> Cycle {
        if self.next < self.due.len() {
            return self.now;
        }
        let later = self.later.peek().map_or(Cycle::MAX, |Reverse((t, _))| *t);
        // The first occupied slot from `base`, in wheel order.
        let start = self.base as usize % HORIZON;
        for step in 0..=WORDS {
            let w = (start / 64 + step) % WORDS;
            let mut bits = self.occupied[w];
            if step == 0 {
                bits &= !0 << (start % 64); // slots before `start` in this word come last
            } else if step == WORDS {
                bits &= !(!0 << (start % 64));
            }
            if bits != 0 {
                let s = w * 64 + bits.trailing_zeros() as usize;
                let ahead = (s + HORIZON - start) % HORIZON;
                return (self.base + ahead as Cycle).min(later);
            }
        }
        later
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Serve every cycle up to `until` (jumping over idle cycles as the engine does),
    /// re-queueing with `again` after each creation; the order creations came out in.
    fn serve(
        c: &mut Calendar,
        until: Cycle,
        mut again: impl FnMut(Cycle, u32, u32) -> Option<Cycle>,
    ) -> Vec<(Cycle, u32, u32)> {
        let mut out = Vec::new();
        let mut now = 0;
        while now <= until {
            c.begin(now);
            while let Some((source, epoch)) = c.pop() {
                out.push((now, source, epoch));
                if let Some(t) = again(now, source, epoch) {
                    c.push(t, source, epoch);
                }
            }
            now = (now + 1).max(c.next());
        }
        out
    }

    #[test]
    fn creations_come_out_by_cycle_then_source_across_wheel_and_heap() {
        let mut c = Calendar::new();
        c.push(5, 3, 0);
        c.push(5, 1, 0);
        c.push(HORIZON as Cycle + 7, 0, 0); // beyond the wheel
        c.push(2, 9, 0);
        assert_eq!(c.next(), 2);
        let out = serve(&mut c, 5000, |_, _, _| None);
        assert_eq!(out, [(2, 9, 0), (5, 1, 0), (5, 3, 0), (HORIZON as Cycle + 7, 0, 0)]);
        assert_eq!(c.next(), Cycle::MAX);
    }

    #[test]
    fn a_creation_for_the_cycle_being_served_takes_its_place_by_source() {
        // Sources 1, 4 and 6 due at cycle 3; source 1 creates again in cycle 3: it comes
        // before 4 and 6, as a heap would give it.
        let mut c = Calendar::new();
        for s in [6, 1, 4] {
            c.push(3, s, 0);
        }
        let mut twice = true;
        let out = serve(&mut c, 10, |now, s, e| {
            if s == 1 && std::mem::take(&mut twice) {
                return Some(now);
            }
            let _ = e;
            None
        });
        assert_eq!(out, [(3, 1, 0), (3, 1, 0), (3, 4, 0), (3, 6, 0)]);
    }

    #[test]
    fn the_next_creation_is_found_across_the_wheels_end() {
        let mut c = Calendar::new();
        c.push(1000, 0, 0);
        c.begin(1000);
        assert_eq!(c.pop(), Some((0, 0)));
        assert_eq!(c.pop(), None);
        // base 1001: cycle 1030 sits in slot 6, behind the wheel's start.
        c.push(1030, 2, 0);
        c.push(1020, 1, 0);
        assert_eq!(c.next(), 1020);
        c.begin(1020);
        assert_eq!(c.pop(), Some((1, 0)));
        assert_eq!(c.next(), 1030);
    }

    proptest! {
        /// The calendar gives exactly what a binary heap of (cycle, source, epoch) gives,
        /// for gaps within and beyond the wheel, creations in the cycle being served, and
        /// jumps over idle cycles.
        #[test]
        fn same_order_as_a_heap(
            starts in proptest::collection::vec(0u64..3000, 1..40),
            gaps in proptest::collection::vec(0u64..2500, 1..64),
        ) {
            let mut c = Calendar::new();
            let mut heap = BinaryHeap::new();
            for (s, &t) in starts.iter().enumerate() {
                c.push(t, s as u32, 7);
                heap.push(Reverse((t, s as u32, 7u32)));
            }
            // mostly short gaps, some zero (a second creation in the same cycle, never
            // two in a row: the run must end), some past the wheel
            let gap = |i: usize, now: Cycle| {
                let g = gaps[i % gaps.len()];
                match g {
                    g if g > 2000 => now + g * 4,
                    g if g % 40 == 0 && i % 2 == 0 => now,
                    g => now + 1 + g % 40,
                }
            };
            let until = 20_000;
            let mut expected = Vec::new();
            let mut i = 0;
            while let Some(Reverse((t, s, e))) = heap.pop() {
                if t > until { break; }
                expected.push((t, s, e));
                i += 1;
                heap.push(Reverse((gap(i, t), s, e)));
            }
            i = 0;
            let got = serve(&mut c, until, |now, _, _| {
                i += 1;
                Some(gap(i, now))
            });
            prop_assert_eq!(got, expected);
        }
    }
}

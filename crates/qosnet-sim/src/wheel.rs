//! The links' timing wheels: flits on their way downstream and credits on their way back
//! (document 003 §3, credit-based flow control). What is sent in cycle t with a delay
//! d >= 1 is delivered at the start of cycle t + d, so nothing a component does in a
//! cycle reaches another before the next one (ARCHITECTURE.md "Two-phase update").
//!
//! Each slot keeps one list per kind of receiver, routers and endpoints. Why: delivery
//! then runs one loop per kind, where one mixed list took a branch per item on which
//! kind it was, and the kinds come in no order a predictor can learn. On the 4x4 mesh
//! bench those two branches (flits and credits) were a seventh of all mispredicted
//! branches (measured: configs/bench/README.md). The sender picks the list by
//! arithmetic on the address, not by a branch.

use crate::unchecked::At;
use crate::units::Cycle;

#[cfg(test)]
use crate::ids::{TO_ENDPOINT, TO_ROUTER};

/// A timing wheel of items of type `T`, one list per slot and receiver kind.
#[derive(Clone, Debug)]
pub(crate) struct Wheel<T> {
    /// Slot s, kind k: list `2 * s + k`.
    lists: Vec<Vec<T>>,
    mask: usize,
}

impl<T> Wheel<T> {
    /// A wheel for delays of at most `max_delay` cycles.
    pub fn new(max_delay: usize) -> Self {
        let slots = (max_delay + 1).next_power_of_two();
        Self { lists: (0..2 * slots).map(|_| Vec::new()).collect(), mask: slots - 1 }
    }

    #[inline(always)]
    fn list(&self, at: Cycle, kind: usize) -> usize {
        (at as usize & self.mask) << 1 | kind
    }

    /// Send `item` to a receiver of `kind`, delivered at cycle `at`.
    #[inline(always)]
    pub fn push(&mut self, at: Cycle, kind: usize, item: T) {
        let i = self.list(at, kind);
        self.lists.at_mut(i).push(item);
    }

    /// The items for receivers of `kind` delivered at `now`, taken out (give the emptied
    /// list back with `restore`, keeping its capacity: nothing is allocated per cycle).
    #[inline(always)]
    pub fn take(&mut self, now: Cycle, kind: usize) -> Vec<T> {
        let i = self.list(now, kind);
        std::mem::take(self.lists.at_mut(i))
    }

    #[inline(always)]
    pub fn restore(&mut self, now: Cycle, kind: usize, list: Vec<T>) {
        debug_assert!(list.is_empty());
        let i = self.list(now, kind);
        *self.lists.at_mut(i) = list;
    }

    /// Whether nothing is in flight.
    pub fn is_empty(&self) -> bool {
        self.lists.iter().all(Vec::is_empty)
    }

    /// Everything in flight, with its receiver kind (for invariant checks).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &T)> {
        self.lists.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |x| (i & 1, x)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_arrive_after_their_delay_by_kind_in_sending_order() {
        let mut w = Wheel::new(3);
        // sent in cycle 4, with delays 1 and 3
        w.push(5, TO_ROUTER, 'a');
        w.push(5, TO_ENDPOINT, 'b');
        w.push(5, TO_ROUTER, 'c');
        w.push(7, TO_ROUTER, 'd');
        assert_eq!(w.iter().count(), 4);
        // (the wheel is read once per cycle, in order, as the cycle loop does)
        assert!(w.take(4, TO_ROUTER).is_empty() && w.take(4, TO_ENDPOINT).is_empty());
        let mut routers = w.take(5, TO_ROUTER);
        assert_eq!(routers, ['a', 'c']);
        assert_eq!(w.take(5, TO_ENDPOINT), ['b']);
        routers.clear();
        w.restore(5, TO_ROUTER, routers);
        assert!(w.take(6, TO_ROUTER).is_empty());
        assert_eq!(w.take(7, TO_ROUTER), ['d']);
        assert!(w.is_empty());
    }
}

//! The links between components: flits downstream and credits back (document 003 §3,
//! credit-based flow control), each through a timing wheel with a fixed delay of at least
//! one cycle. Components talk through nothing else, so nothing one does in cycle t is seen
//! by another before t + 1 and the order components are visited in does not matter
//! (two-phase update, STYLE.md).

use crate::flit::Flit;
use crate::units::Cycle;
use crate::wheel::{split, Wheel, UNCONNECTED};

/// A flit on a link, for the router port or node (the wheel's list says which) `to`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Arrival {
    pub to: u32,
    pub flit: Flit,
}

/// A credit on its way back, for the output port or NIC (the wheel's list says which) `to`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CreditMsg {
    pub to: u32,
    pub vc: u8,
    pub tail: bool,
}

/// Every link of the network: what is on its way, by arrival cycle and receiver kind.
#[derive(Clone, Debug)]
pub(crate) struct Links {
    pub flits: Wheel<Arrival>,
    pub credits: Wheel<CreditMsg>,
}

impl Links {
    /// Links whose delays are at most `max_delay` cycles.
    pub fn new(max_delay: usize) -> Links {
        Links { flits: Wheel::new(max_delay), credits: Wheel::new(max_delay) }
    }

    /// Put `flit` on the link to `to` (a router input port or `ENDPOINT | node`), arriving
    /// at `at`.
    #[inline(always)]
    pub fn send_flit(&mut self, at: Cycle, to: u32, flit: Flit) {
        debug_assert!(to != UNCONNECTED, "flit sent on an unconnected port");
        let (kind, to) = split(to);
        self.flits.push(at, kind, Arrival { to, flit });
    }

    /// Return a credit for lane `vc` to `to` (an output port or `ENDPOINT | node`),
    /// arriving at `at`.
    #[inline(always)]
    pub fn send_credit(&mut self, at: Cycle, to: u32, vc: u8, tail: bool) {
        debug_assert!(to != UNCONNECTED, "credit returned on an unconnected port");
        let (kind, to) = split(to);
        self.credits.push(at, kind, CreditMsg { to, vc, tail });
    }
}

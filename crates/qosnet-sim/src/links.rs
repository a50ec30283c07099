//! The links between components: flits downstream and credits back (document 003 §3,
//! credit-based flow control), each through a timing wheel with a fixed delay of at least
//! one cycle. Components talk through nothing else, so nothing one does in cycle t is seen
//! by another before t + 1 and the order components are visited in does not matter
//! (ARCHITECTURE.md "Two-phase update").

use crate::flit::Flit;
use crate::ids::{LinkEnd, NodeId, TO_ENDPOINT};
use crate::units::Cycle;
use crate::wheel::Wheel;

/// A flit on a link, for the router port or node (the wheel's list says which) `to`
/// (`LinkEnd::split`).
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

/// What travels between endpoints besides flits: the control agents' acknowledgements and
/// notifications, out of band, each with the delay its agent gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Control {
    /// A message of `flow` was delivered (to its source).
    Ack { flow: u32 },
    /// The router whose port this node is refused `flow`'s probe: send the NACK naming it
    /// (document 000 §4.1; to the refusing router's own node port).
    Nack { flow: u32 },
    /// `flow`'s admission back-off is over (the source to itself).
    Retry { flow: u32 },
    /// A real-time message of `flow` dropped for want of a credit is posted again
    /// (document 000 §4.2; the source to itself).
    CreditRetry { flow: u32 },
    /// A node's own timer: a flow its agent held back may start now (IBA CC's injection
    /// delay ran out, `control/iba_cc.rs`).
    CcRetry,
    /// A destination's own timer: the CNP its agent deferred for `flow`'s packets marked
    /// since the last one (DCQCN's notification point), to `src`, about `path`.
    DeferredCnp { flow: u32, src: u32, path: u8 },
}

/// A control message on its way to endpoint `to`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ControlMsg {
    pub to: NodeId,
    pub msg: Control,
}

/// Every link of the network: what is on its way, by arrival cycle and receiver kind.
#[derive(Clone, Debug)]
pub(crate) struct Links {
    pub flits: Wheel<Arrival>,
    pub credits: Wheel<CreditMsg>,
    /// The typed control channel between endpoints (`Control`).
    pub control: Wheel<ControlMsg>,
}

impl Links {
    /// Links whose flit and credit delays are at most `max_delay` cycles, and whose control
    /// messages take at most `max_control_delay`.
    pub fn new(max_delay: usize, max_control_delay: usize) -> Links {
        Links {
            flits: Wheel::new(max_delay),
            credits: Wheel::new(max_delay),
            control: Wheel::new(max_control_delay.max(1)),
        }
    }

    /// Send `msg` to endpoint `node`, arriving at `at` (after now).
    #[inline]
    pub fn send_control(&mut self, at: Cycle, node: NodeId, msg: Control) {
        self.control.push(at, TO_ENDPOINT, ControlMsg { to: node, msg });
    }

    /// Put `flit` on the link to `to` (a router input port or an endpoint), arriving at `at`.
    #[inline(always)]
    pub fn send_flit(&mut self, at: Cycle, to: LinkEnd, flit: Flit) {
        debug_assert!(to.is_connected(), "flit sent on an unconnected port");
        let (kind, to) = to.split();
        self.flits.push(at, kind, Arrival { to, flit });
    }

    /// Return a credit for lane `vc` to `to` (an output port or an endpoint's NIC),
    /// arriving at `at`.
    #[inline(always)]
    pub fn send_credit(&mut self, at: Cycle, to: LinkEnd, vc: u8, tail: bool) {
        debug_assert!(to.is_connected(), "credit returned on an unconnected port");
        let (kind, to) = to.split();
        self.credits.push(at, kind, CreditMsg { to, vc, tail });
    }
}

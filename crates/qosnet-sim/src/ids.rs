//! Identifiers as types: what crosses from one component to another is named by a type
//! that says what it is, not by a bare integer, so a node cannot be passed where a router
//! port is meant and a packed address is decoded in one place.
//!
//! Inside a component, per-port and per-lane state lives in flat vectors (struct of arrays,
//! ARCHITECTURE.md "Units of data") and its stages index them with plain `usize` computed
//! from these types; the types are what the stages hand each other and the links carry. All
//! are `repr(transparent)` over an integer: they cost nothing in the cycle loop.

use std::fmt;

/// An id type over `u32`: construction from and conversion to an index.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        #[repr(transparent)]
        pub struct $name(pub u32);

        impl $name {
            #[inline(always)]
            pub const fn new(i: u32) -> Self {
                Self(i)
            }
            /// The id as an index into the vectors it names.
            #[inline(always)]
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

id_type! {
    /// A node: an endpoint (processor and NIC or HCA) of the network.
    NodeId
}

id_type! {
    /// A router (switch) of the network.
    RouterId
}

id_type! {
    /// A packet in flight: its index in the packet slab (`Net::packets`).
    PacketId
}

id_type! {
    /// A message: its index in the message slab (`Net::messages`).
    MessageId
}

impl PacketId {
    /// No packet (an output VC that guards none).
    pub const NONE: PacketId = PacketId(u32::MAX);
}

/// What a slab hands out and takes back (`flit::Slab`).
pub trait SlabId: Copy {
    fn from_index(i: u32) -> Self;
    fn slot(self) -> usize;
}

/// Slab ids: the id types the packet and message slabs hand out.
macro_rules! slab_id {
    ($($name:ident),*) => {$(
        impl SlabId for $name {
            #[inline(always)]
            fn from_index(i: u32) -> Self {
                $name(i)
            }
            #[inline(always)]
            fn slot(self) -> usize {
                self.index()
            }
        }
    )*};
}

slab_id!(PacketId, MessageId);

/// The receiver kinds at the end of a link: the timing wheels keep a list for each
/// (`wheel.rs`).
pub(crate) const TO_ROUTER: usize = 0;
pub(crate) const TO_ENDPOINT: usize = 1;

/// Where a link leads: a router port (`router * ports + port`) or an endpoint (its sink
/// for flits, its NIC for credits), or nothing (a port the topology leaves open).
///
/// Packed in one word, the endpoint bit on top, because the sender picks the wheel's list
/// by arithmetic on it rather than by a branch (`wheel.rs`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(transparent)]
pub(crate) struct LinkEnd(u32);

impl LinkEnd {
    const ENDPOINT: u32 = 1 << 31;
    /// A port nothing is connected to.
    pub const UNCONNECTED: LinkEnd = LinkEnd(u32::MAX);

    /// Router port `port` (`router * ports + port`).
    #[inline(always)]
    pub const fn router_port(port: u32) -> LinkEnd {
        LinkEnd(port)
    }
    /// Endpoint `node`.
    #[inline(always)]
    pub const fn endpoint(node: NodeId) -> LinkEnd {
        LinkEnd(Self::ENDPOINT | node.0)
    }
    #[cfg(test)]
    pub const fn is_endpoint(self) -> bool {
        self.0 & Self::ENDPOINT != 0 && self.0 != u32::MAX
    }
    #[inline(always)]
    pub const fn is_connected(self) -> bool {
        self.0 != u32::MAX
    }
    /// The router port (`router * ports + port`) or node it names.
    #[inline(always)]
    pub const fn index(self) -> usize {
        (self.0 & !Self::ENDPOINT) as usize
    }
    /// The receiver kind: `TO_ROUTER` or `TO_ENDPOINT`.
    #[inline(always)]
    pub const fn kind(self) -> usize {
        (self.0 >> 31) as usize
    }
    /// The receiver kind (`TO_ROUTER` or `TO_ENDPOINT`) and its index (router port or node).
    #[inline(always)]
    pub const fn split(self) -> (usize, u32) {
        ((self.0 >> 31) as usize, self.0 & !Self::ENDPOINT)
    }
}

impl fmt::Debug for LinkEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.split() {
            _ if !self.is_connected() => write!(f, "Unconnected"),
            (TO_ENDPOINT, node) => write!(f, "Endpoint({node})"),
            (_, port) => write!(f, "RouterPort({port})"),
        }
    }
}

/// An input VC of the network as its output VC's holder knows it: (input port, counted
/// over all routers as `router * ports + port`, and lane).
///
/// Packed as `port << 5 | lane` (32 lanes at most) so an output VC's record keeps it in
/// one word and stays one cache line (`router::OutVc`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(transparent)]
pub(crate) struct InputLane(u32);

impl InputLane {
    #[inline(always)]
    pub const fn new(port: usize, lane: usize) -> InputLane {
        debug_assert!(port < 1 << 27 && lane < 32);
        InputLane((port << 5 | lane) as u32)
    }
    #[inline(always)]
    pub const fn port(self) -> usize {
        (self.0 >> 5) as usize
    }
    #[inline(always)]
    pub const fn lane(self) -> usize {
        (self.0 & 31) as usize
    }
}

impl fmt::Debug for InputLane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "in[{}].vc[{}]", self.port(), self.lane())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_link_end_splits_into_kind_and_index() {
        assert_eq!(LinkEnd::endpoint(NodeId(9)).split(), (TO_ENDPOINT, 9));
        assert_eq!(LinkEnd::router_port(41).split(), (TO_ROUTER, 41));
        assert!(LinkEnd::endpoint(NodeId(0)).is_endpoint());
        assert!(!LinkEnd::router_port(3).is_endpoint());
        assert!(!LinkEnd::UNCONNECTED.is_connected() && !LinkEnd::UNCONNECTED.is_endpoint());
        assert_eq!(format!("{:?}", LinkEnd::endpoint(NodeId(2))), "Endpoint(2)");
    }

    proptest! {
        #[test]
        fn an_input_lane_keeps_port_and_lane(port in 0usize..1 << 27, lane in 0usize..32) {
            let l = InputLane::new(port, lane);
            prop_assert_eq!((l.port(), l.lane()), (port, lane));
        }
    }
}

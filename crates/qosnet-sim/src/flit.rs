//! Units of data: messages are cut into packets, packets move as flits (ARCHITECTURE.md
//! "Units of data").
//!
//! A flit is a small `Copy` record; everything else about its packet lives once in the
//! packet slab, indexed by `Flit::packet`.

use crate::config::TrafficClass;
use crate::ids::{MessageId, NodeId, PacketId, SlabId};
use crate::units::Cycle;

pub const HEAD: u8 = 1;
pub const TAIL: u8 = 2;
/// A dummy tail or header made by preemption (document 003 §3.2.1): no payload, it only
/// releases (tail) or re-acquires (header) the path of a preempted message.
pub const DUMMY: u8 = 4;
/// Made inside this router's input buffer, so no credit stands for it upstream.
pub const LOCAL: u8 = 8;

/// A flit: its ready cycle and, packed in one word, its packet, position, kind and VC.
///
/// Why two words: a struct of two scalars is kept by the compiler as two register values
/// and copied as two 8-byte moves. As five fields it was copied as one 16-byte block
/// through the stack, and setting `ready` or `vc` on the copy before pushing it into a
/// buffer stalled every hop on a store-to-load forwarding failure (an 8-byte store read
/// back by a 16-byte load): 9% of the 4x4 benchmark's profile samples sat on those copies
/// (measured: configs/bench/README.md).
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct Flit {
    /// Cycle from which the current stage may act on it; also its FCFS age stamp.
    pub ready: Cycle,
    /// packet (bits 0-31), seq (32-47), kind (48-55), vc (56-63).
    word: u64,
}

impl Flit {
    /// A flit of `packet` at position `seq` (0 = header), `kind` (`HEAD`, `TAIL`, ...
    /// bits; a one-flit packet is both), travelling on `vc` (the downstream input VC).
    #[inline]
    pub const fn new(packet: PacketId, seq: u16, kind: u8, vc: u8, ready: Cycle) -> Flit {
        Flit { ready, word: packet.0 as u64 | (seq as u64) << 32 | (kind as u64) << 48 | (vc as u64) << 56 }
    }
    /// The flit as two plain words (`ring::Rings` stores them so: a buffer of plain words
    /// is allocated zeroed, and the pages of a large network's buffers are then only
    /// mapped as flits first reach them).
    #[inline(always)]
    pub(crate) fn to_words(self) -> [u64; 2] {
        [self.ready, self.word]
    }
    /// The flit `to_words` gave.
    #[inline(always)]
    pub(crate) fn from_words(w: [u64; 2]) -> Flit {
        Flit { ready: w[0], word: w[1] }
    }
    /// Index into the packet slab.
    #[inline]
    pub fn packet(&self) -> PacketId {
        PacketId(self.word as u32)
    }
    /// Position in the packet, 0 = header.
    #[inline]
    pub fn seq(&self) -> u16 {
        (self.word >> 32) as u16
    }
    /// `HEAD` and/or `TAIL` bits, and `DUMMY`, `LOCAL`.
    #[inline]
    pub fn kind(&self) -> u8 {
        (self.word >> 48) as u8
    }
    /// VC on the link the flit travels (the downstream input VC).
    #[inline]
    pub fn vc(&self) -> u8 {
        (self.word >> 56) as u8
    }
    #[inline]
    pub fn set_vc(&mut self, vc: u8) {
        self.word = self.word & !(0xff << 56) | (vc as u64) << 56;
    }
    #[inline]
    pub fn set_kind(&mut self, kind: u8) {
        self.word = self.word & !(0xff << 48) | (kind as u64) << 48;
    }
    #[inline]
    pub fn set_seq(&mut self, seq: u16) {
        self.word = self.word & !(0xffff << 32) | (seq as u64) << 32;
    }
    #[inline]
    pub fn is_head(&self) -> bool {
        self.kind() & HEAD != 0
    }
    #[inline]
    pub fn is_tail(&self) -> bool {
        self.kind() & TAIL != 0
    }
    #[inline]
    pub fn is_dummy(&self) -> bool {
        self.kind() & DUMMY != 0
    }
}

impl std::fmt::Debug for Flit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flit")
            .field("packet", &self.packet())
            .field("seq", &self.seq())
            .field("kind", &self.kind())
            .field("vc", &self.vc())
            .field("ready", &self.ready)
            .finish()
    }
}

/// What a packet carries for admission control (document 000 §4.1; the header field the
/// HCAs and routers read, `control::Reservations`); `Data` for every ordinary packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Signal {
    #[default]
    Data,
    /// Asks each hop for the connection's bandwidth (source to destination).
    Probe,
    /// A probe refused upstream, or a release past its last hop: it only travels on.
    Spent,
    /// Gives back what a refused probe reserved, up to the hop before the refuser.
    Release,
    /// The connection's last data packet: each hop gives its reservation back.
    Teardown,
    /// The destination accepted the probe (destination to source).
    Ack,
    /// A router refused the probe (refusing router to source).
    Nack,
}

impl Signal {
    /// Whether the packet is admission control's own (not a connection's data).
    #[inline(always)]
    pub fn is_signalling(self) -> bool {
        !matches!(self, Signal::Data | Signal::Teardown)
    }
}

#[derive(Clone, Debug, Default)]
pub struct Packet {
    pub message: MessageId,
    pub src: NodeId,
    pub dst: NodeId,
    pub size: u16,
    /// Flits received at the destination so far.
    pub received: u16,
    /// The message's class, copied so ejection need not look the message up per flit.
    pub class: TrafficClass,
    /// VirtualClock Vtick (cycles per flit) the header carries (document 003 §3.1).
    pub vtick: u32,
    /// The message's flow (for bandwidth received per flow).
    pub flow: u32,
    /// A switch output found its buffer filling as the packet passed (`router::Marking`).
    pub marked: bool,
    /// The path it takes to its destination (`Routing::paths`), chosen at the source.
    pub path: u8,
    /// Its way where the routing draws one at the source router (`Routing::choose_via`):
    /// Valiant's intermediate group + 1, or 0 for the minimal path (Valiant, UGAL); its up
    /// port at every level of a fat tree (NCA); else 0.
    pub via: u16,
    /// What it carries for admission control (document 000 §4.1): `Data` but for probes,
    /// ACKs, NACKs, releases and a connection's last data packet.
    pub signal: Signal,
}

#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub src: NodeId,
    pub dst: NodeId,
    pub class: TrafficClass,
    pub size: u32,
    pub packet_flits: u32,
    /// Flits already cut into packets.
    pub packetized: u32,
    /// Flits delivered to the destination.
    pub delivered: u32,
    pub created: Cycle,
    /// Cycle the first header flit entered the network (`Cycle::MAX` until then).
    pub injected: Cycle,
    pub measured: bool,
    /// VirtualClock Vtick, cycles per flit.
    pub vtick: u32,
    /// The flow (stream or source) the message belongs to.
    pub flow: u32,
    /// Frame number within a video stream (`u32::MAX` for other traffic).
    pub frame: u32,
    /// The phase of the mix it was created in.
    pub phase: u16,
    /// Flits that have left the source NIC (a send CQE when all have).
    pub sent: u32,
    /// When the receive side finished with its packets so far (NIC models).
    pub done: Cycle,
    /// The path its packets take (`Routing::paths`), chosen at the source.
    pub path: u8,
    /// Admission control's signal, carried by its last packet (`Packet::signal`).
    pub signal: Signal,
    /// For a CNP (IBA CC's congestion notification, `endpoint/congestion.rs`): the flow it
    /// carries BECN for; `u32::MAX` for every other message.
    pub becn: u32,
    /// For a CNP: the path the notified packet took (DRB counts notifications per path).
    pub becn_path: u8,
}

/// A slab of `T` named by ids of type `I`, with a free list: ids are reused, nothing is
/// allocated once it has grown.
#[derive(Clone, Debug)]
pub struct Slab<T, I> {
    items: Vec<T>,
    free: Vec<I>,
}

impl<T, I> Default for Slab<T, I> {
    fn default() -> Self {
        Self { items: Vec::new(), free: Vec::new() }
    }
}

impl<T, I: SlabId> Slab<T, I> {
    pub fn insert(&mut self, item: T) -> I {
        if let Some(id) = self.free.pop() {
            self.items[id.slot()] = item;
            id
        } else {
            self.items.push(item);
            I::from_index((self.items.len() - 1) as u32)
        }
    }
    #[inline]
    pub fn remove(&mut self, id: I) {
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: I) -> &T {
        &self.items[id.slot()]
    }
    #[inline]
    pub fn get_mut(&mut self, id: I) -> &mut T {
        &mut self.items[id.slot()]
    }
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }

    /// The items in use: a pass over the whole slab (for a count made now and then, not in
    /// every cycle).
    pub fn live_items(&self) -> impl Iterator<Item = &T> {
        let mut free = vec![false; self.items.len()];
        for id in &self.free {
            free[id.slot()] = true;
        }
        self.items.iter().zip(free).filter(|(_, f)| !f).map(|(t, _)| t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The packed word keeps each field whole, and a setter changes its field alone.
        #[test]
        fn fields_round_trip(packet in any::<u32>(), seq in any::<u16>(), kind in any::<u8>(),
                             vc in any::<u8>(), ready in any::<u64>(), vc2 in any::<u8>(),
                             kind2 in any::<u8>(), seq2 in any::<u16>()) {
            let packet = PacketId(packet);
            let mut f = Flit::new(packet, seq, kind, vc, ready);
            prop_assert_eq!((f.packet(), f.seq(), f.kind(), f.vc(), f.ready), (packet, seq, kind, vc, ready));
            f.set_vc(vc2);
            prop_assert_eq!((f.packet(), f.seq(), f.kind(), f.vc()), (packet, seq, kind, vc2));
            f.set_kind(kind2);
            prop_assert_eq!((f.packet(), f.seq(), f.kind(), f.vc()), (packet, seq, kind2, vc2));
            f.set_seq(seq2);
            prop_assert_eq!((f.packet(), f.seq(), f.kind(), f.vc()), (packet, seq2, kind2, vc2));
        }
    }

    #[test]
    fn kind_bits_and_debug_name_the_fields() {
        let f = Flit::new(PacketId(7), 0, HEAD | TAIL, 3, 12);
        assert!(f.is_head() && f.is_tail() && !f.is_dummy());
        assert_eq!(format!("{f:?}"), "Flit { packet: PacketId(7), seq: 0, kind: 3, vc: 3, ready: 12 }");
    }
}

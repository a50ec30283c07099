//! Units of data: messages are cut into packets, packets move as flits (DESIGN.md).
//!
//! A flit is a small `Copy` record; everything else about its packet lives once in the
//! packet slab, indexed by `Flit::packet`.

use crate::config::TrafficClass;
use crate::units::Cycle;

pub const HEAD: u8 = 1;
pub const TAIL: u8 = 2;
/// A dummy tail or header made by preemption (document 003 §3.2.1): no payload, it only
/// releases (tail) or re-acquires (header) the path of a preempted message.
pub const DUMMY: u8 = 4;
/// Made inside this router's input buffer, so no credit stands for it upstream.
pub const LOCAL: u8 = 8;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flit {
    /// Index into the packet slab.
    pub packet: u32,
    /// Position in the packet, 0 = header.
    pub seq: u16,
    /// `HEAD` and/or `TAIL` bits (a one-flit packet is both).
    pub kind: u8,
    /// VC on the link the flit travels (the downstream input VC).
    pub vc: u8,
    /// Cycle from which the current stage may act on it; also its FCFS age stamp.
    pub ready: Cycle,
}

impl Flit {
    #[inline]
    pub fn is_head(&self) -> bool {
        self.kind & HEAD != 0
    }
    #[inline]
    pub fn is_tail(&self) -> bool {
        self.kind & TAIL != 0
    }
    #[inline]
    pub fn is_dummy(&self) -> bool {
        self.kind & DUMMY != 0
    }
}

#[derive(Clone, Debug, Default)]
pub struct Packet {
    pub message: u32,
    pub src: u32,
    pub dst: u32,
    pub size: u16,
    /// Flits received at the destination so far.
    pub received: u16,
    /// The message's class, copied so ejection need not look the message up per flit.
    pub class: TrafficClass,
    /// VirtualClock Vtick (cycles per flit) the header carries (document 003 §3.1).
    pub vtick: u32,
    /// The message's flow (for bandwidth received per flow).
    pub flow: u32,
}

#[derive(Clone, Copy, Debug)]
pub struct Message {
    pub src: u32,
    pub dst: u32,
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
}

/// A slab of `T` with a free list: ids are reused, nothing is allocated once it has grown.
#[derive(Clone, Debug)]
pub struct Slab<T> {
    items: Vec<T>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self { items: Vec::new(), free: Vec::new() }
    }
}

impl<T> Slab<T> {
    pub fn insert(&mut self, item: T) -> u32 {
        if let Some(id) = self.free.pop() {
            self.items[id as usize] = item;
            id
        } else {
            self.items.push(item);
            (self.items.len() - 1) as u32
        }
    }
    #[inline]
    pub fn remove(&mut self, id: u32) {
        self.free.push(id);
    }
    #[inline]
    pub fn get(&self, id: u32) -> &T {
        &self.items[id as usize]
    }
    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut T {
        &mut self.items[id as usize]
    }
    pub fn live(&self) -> usize {
        self.items.len() - self.free.len()
    }
}

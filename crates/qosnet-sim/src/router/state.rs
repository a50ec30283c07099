//! The routers' state, owned by the routers: per input and output VC records and buffers,
//! per-port bit masks (a bit per VC) that let each stage find its work without a scan,
//! the schedulers' state, and which routers and ports have work. The stages (`input`,
//! `routing_stage`, `vc_alloc`, `crossbar`, `output`, `preemption`) are methods on
//! `Routers` that reach the rest of the simulation only through `Net`.

use super::params::Params;
use crate::ids::{InputLane, LinkEnd, PacketId};
use crate::ring::{RingState, Rings};
use crate::routing::Routing;
use crate::sched::RateKeys;
use crate::topology::Topology;
use crate::units::Cycle;

/// What an input VC knows about the packet it holds (one packet at a time) and its
/// buffer's front flit and position: kept together (64 bytes, aligned) so one cache line
/// serves a stage's look at a VC.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub(crate) struct InVc {
    /// What the crossbar input scheduler sees of the front flit (valid while the buffer
    /// is non-empty). `ready` includes, for a header, the end of stages 2-3 (`gate`).
    pub front: Front,
    /// The VC buffer's front flit and position in `Simulation::inbuf`.
    pub buf: RingState,
    /// Cycle from which the header may take its next step (stages 2-4).
    pub gate: Cycle,
    /// Output VCs the route allows.
    pub route_vcs: u32,
    /// The output port and VC held (valid once allocated).
    pub out_port: u16,
    pub out_vc: u8,
    /// Traffic class of the packet held (`TrafficClass::index`).
    pub class: u8,
    /// The packet held (from its header's arrival).
    pub packet: PacketId,
    /// The header is a dummy header: the packet resumes after a preemption.
    pub resumed: bool,
}

/// An output port and the VCs a header may take there (`vcs` 0: no such way).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Way {
    pub port: u16,
    pub vcs: u32,
}

/// A header's other ways where the routing offers more than its route
/// (`Routing::has_other_ways`, Duato's protocol): a second adaptive way (minimal adaptive
/// routing's next dimension, `routing/min_adapt.rs`) and the escape (dimension order, or
/// LID 0's way, on the escape VCs, `routing/lid_paths.rs`), in the order the VC allocator
/// asks for them. Kept beside `InVc` (full at 64 bytes).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OtherWays {
    /// The second adaptive way, then the escape.
    pub ways: [Way; 2],
    /// This cycle's VC request: 0 for the route, 1 + i for `ways[i]` (set as requests are
    /// formed, read as they are granted: a way may leave by the route's own port).
    pub asked: u8,
}

/// An output VC's buffer and state, together (64 bytes, aligned) for the same reason as
/// `InVc`.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct OutVc {
    /// The output scheduler's key for its front flit.
    pub key: u64,
    /// The VC buffer's front flit and position in `Simulation::outbuf`.
    pub buf: RingState,
    /// Credits for the downstream input buffer.
    pub credits: u32,
    /// The input VC holding it (valid while allocated).
    pub owner: InputLane,
    /// The packet whose dummy tail it carries until that tail's credit returns
    /// (`PacketId::NONE`: none): the packet's resumed part may not overtake it.
    pub guard: PacketId,
}

// The records are laid out for one cache line each (see their comments).
const _: () = assert!(std::mem::size_of::<InVc>() == 64 && std::mem::size_of::<OutVc>() == 64);

/// What a scheduler sees of the flit at the front of a VC buffer: the cycle from which it
/// may go and its key (its age, VirtualClock stamp or finish tag; see `sched::RateKeys`),
/// together so one cache line serves a candidate.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Front {
    pub ready: Cycle,
    /// 0 while the VC is accelerated (document 003 §3.2.2: its flits carry the lowest
    /// key until its tail crosses); folded in here, where the key is written, so the
    /// crossbar's scan reads a key and nothing else.
    pub key: u64,
}

impl InVc {
    /// A new front flit, ready from `ready` (a header not before its `gate`) with `key`,
    /// or the lowest key while the lane is `accelerated`.
    #[inline]
    pub fn set_front(&mut self, ready: Cycle, key: u64, accelerated: bool) {
        self.front = Front { ready: ready.max(self.gate), key: if accelerated { 0 } else { key } };
    }
}

impl OutVc {
    /// The input VC holding it, as (input port, lane).
    #[inline]
    pub fn owner_input(&self) -> (usize, usize) {
        (self.owner.port(), self.owner.lane())
    }
}

/// Every router of the network (struct of arrays: per-port and per-VC state of all routers
/// in flat vectors, indexed by `router * ports + port` and `Params::lane_index`).
pub(crate) struct Routers {
    pub p: Params,
    pub topo: Topology,
    /// Stage 2's routing function (ARCHITECTURE.md: one routing, shared with the control plane).
    pub routing: Routing,
    // --- each stage's own state ---
    /// Stage 3, VC allocation (`vc_alloc.rs`).
    pub(crate) va: super::vc_alloc::VcAllocation,
    /// Stage 4, the crossbar's allocation (`crossbar.rs`).
    pub(crate) sa: super::crossbar::SwitchAllocation,
    /// Stage 5, the output ports (`output.rs`).
    pub(crate) out: super::output::OutputStage,
    /// The preemptive router's (document 003 §3.2.1, `preemption.rs`).
    pub(crate) pre: super::preemption::Preemption,
    /// What an output VC does as a flit enters it (`marking.rs`).
    pub marking: super::Marking,
    /// The marking's state: IBA CC's marking-rate counters, RED's draws (`marking.rs`;
    /// empty for other markings).
    pub(crate) mark_state: super::marking::MarkState,
    /// IBA CC's queue per output port and VL, kept as flits come and go (`marking.rs`).
    pub(crate) port_queues: super::marking::PortQueues,
    // --- the buffers and what the stages share: input side (per input VC / port) ---
    pub(crate) inbuf: Rings,
    /// Per input VC: the routing and allocation state of the packet it holds.
    pub(crate) in_vc: Vec<InVc>,
    /// Per input port: VCs holding flits.
    pub(crate) ip_nonempty: Vec<u32>,
    /// Per input port: VCs whose packet holds an output VC (past VC allocation).
    pub(crate) ip_active: Vec<u32>,
    /// VCs whose output VC buffer was found full; re-enabled when that buffer sends a flit.
    pub(crate) ip_blocked: Vec<u32>,
    /// Per (input port, output port): the active VCs of the input heading to that output.
    pub(crate) ip_to_out: Vec<u32>,
    /// Per input VC: the rate-scheduler state behind `InVc::front`'s keys.
    pub(crate) in_keys: RateKeys,
    /// Per input port: the upstream output port (or NIC) its credits go to.
    pub(crate) credit_return: Vec<LinkEnd>,
    /// Per input port: the delay of the credits it returns upstream (`Params::credit`,
    /// longer over a longer link).
    pub(crate) credit_delay: Vec<Cycle>,
    /// Per input port: (router, port), so the hot path needs no division.
    pub(crate) ip_place: Vec<(u32, u32)>,
    // --- output side (per output VC / port) ---
    pub(crate) outbuf: Rings,
    /// Per output VC: its buffer position, credits, holder and key (`OutVc`).
    pub(crate) out_vc: Vec<OutVc>,
    /// Per output port: VCs allocated to a packet.
    pub(crate) op_allocated: Vec<u32>,
    /// Per output port: VCs holding flits.
    pub(crate) op_nonempty: Vec<u32>,
    /// Output VCs holding at least one credit.
    pub(crate) op_credited: Vec<u32>,
    /// Per output port: VCs whose holder's tail has not crossed the crossbar yet.
    pub(crate) op_open: Vec<u32>,
    /// Per output port and class: the (regular) VCs held by a packet of that class.
    pub(crate) op_held: Vec<[u32; 3]>,
    /// Arbitration tables follow admission control's reservations (the routers' outputs'
    /// and the HCAs', kept with the reservations): the run takes the `HOOK` variant
    /// (`Variant::reweighted`).
    pub(crate) reweighted: bool,
    // --- activity ---
    pub(crate) work: Vec<u32>,
    /// Routers with work (a bit each): visited in index order, so neighbouring routers'
    /// per-port state shares cache lines, with no list to sort or compact.
    pub(crate) active: Vec<u64>,
}

//! The routers' shape and per-stage delays, resolved from the configuration once
//! (`build/`), and where each lane's records lie in the per-lane arrays. Kept apart from
//! the routers' state (`state.rs`) so that a part that needs only the shape (marking's
//! counters, `marking.rs`) does not depend on the whole state.

use crate::config::{AllocatorKind, RouterKind, VcAllocatorKind, VcSelection};
use crate::units::Cycle;

/// The routers' shape and per-stage delays, resolved (delays in cycles).
#[derive(Clone, Debug)]
pub(crate) struct Params {
    pub vcs: usize,
    /// Buffers per port: the C VCs, and in the preemptive router C more, the extra
    /// buffers (lane C + v is VC v's extra buffer, document 003 §3.2.1).
    pub lanes: usize,
    /// Depth of an extra buffer, flits.
    pub extra_depth: u32,
    /// Per-lane records of consecutive ports lie this many records apart: the lanes, plus
    /// one unused record when `lanes` is even (`lane_index`).
    pub lane_stride: usize,
    pub acceleration: bool,
    pub ports: usize,
    pub input_depth: u32,
    pub output_depth: u32,
    pub d_sync: Cycle,
    pub d_routing: Cycle,
    pub d_vc_alloc: Cycle,
    pub d_crossbar: Cycle,
    pub d_output: Cycle,
    /// Link latency by the receiver kind at its end (`ids::TO_ROUTER`, `TO_ENDPOINT`): the
    /// routers' links and the ejection links.
    pub link: [Cycle; 2],
    pub credit: Cycle,
    pub speedup: u32,
    /// BookSim2's crossbar expansion (`config::RouterConfig::input_speedup`,
    /// `output_speedup`): crossbar inputs per input port and outputs per output port.
    pub input_speedup: usize,
    pub output_speedup: usize,
    /// The VCs each of an input port's crossbar inputs serves: input k the VCs v with
    /// v mod `input_speedup` = k (`Params::input_lanes_of`; made once, read per request).
    pub input_lanes: [u32; MAX_SPEEDUP],
    /// Which of stage 4's rounds run (from the allocator and the speedups).
    pub rounds: Rounds,
    /// Passes of stages 3 and 4 a cycle (`config::RouterConfig::internal_speedup`).
    pub internal_speedup: u32,
    /// The crossbar allocator (stage 4) and its request-grant rounds per cycle.
    pub allocator: AllocatorKind,
    pub iterations: u32,
    pub vc_selection: VcSelection,
    /// Stage 3's allocator (`vc_alloc.rs`, `vc_matching.rs`) and iSLIP's rounds a cycle.
    pub vc_allocator: VcAllocatorKind,
    pub vc_iterations: u32,
    /// Output VCs are free once their holder's tail has crossed (`VcRelease::TailSent`),
    /// not when its credit returns.
    pub release_on_send: bool,
    /// A flit takes its downstream credit at the crossbar, not at the output multiplexer
    /// (`config::CreditAt::Crossbar`, BookSim2's `iq` router; a `HOOK` run's).
    pub credit_at_crossbar: bool,
    pub kind: RouterKind,
    /// Per traffic class (`TrafficClass::index`): the VCs it may be given.
    pub class_vcs: [u32; 3],
    /// Per class: its own VCs in the configured split (the preemptive router prefers them).
    pub home_vcs: [u32; 3],
}

/// The largest of BookSim2's speedups, `router.input_speedup`, `output_speedup` and
/// `internal_speedup` (validation's bound, `input_lanes`' size).
pub(crate) const MAX_SPEEDUP: usize = 16;

/// Stage 4's rounds (`crossbar.rs`), chosen once from the allocator and the speedups, so
/// the stage dispatches on one value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rounds {
    /// The separable input-first allocator, no speedup (`matching::separable`).
    Separable,
    /// The same with BookSim2's input arbiters: each input chooses an output first
    /// (`config::InputChoice::Output`; validation allows it without speedups only).
    OutputFirst,
    /// iSLIP, no speedup (`islip.rs`).
    Islip,
    /// The wavefront allocator, no speedup (`wavefront.rs`).
    Wavefront,
    /// qosnet's own speedup (`config::RouterConfig::speedup`), separable allocator.
    Speedup(u8),
    /// BookSim2's expanded crossbar with the configured allocator (`crossbar::Expanded`).
    Expanded,
}

impl Rounds {
    pub fn of(
        allocator: AllocatorKind,
        output_first: bool,
        speedup: u32,
        input_speedup: u32,
        output_speedup: u32,
    ) -> Rounds {
        match allocator {
            _ if input_speedup > 1 || output_speedup > 1 => Rounds::Expanded,
            // (validation allows qosnet's speedup with the separable allocator alone)
            _ if speedup > 1 => Rounds::Speedup(speedup as u8),
            AllocatorKind::SeparableInputFirst if output_first => Rounds::OutputFirst,
            AllocatorKind::SeparableInputFirst => Rounds::Separable,
            AllocatorKind::Islip => Rounds::Islip,
            AllocatorKind::Wavefront => Rounds::Wavefront,
        }
    }
}

impl Params {
    /// Where lane `lane` of port `port` (router * ports + port) is in the per-lane arrays
    /// (VC records, buffers). Why a port's block is an odd number of records: the lanes
    /// a network uses most are the same few of every port (the lowest free VC), and
    /// with 16 lanes of 64 bytes every port's VC v fell in the same 4 of the L1 cache's
    /// 64 sets, input and output side alike, so they evicted each other within a cycle
    /// or two (measured: configs/bench/README.md).
    #[inline]
    pub fn lane_index(&self, port: usize, lane: usize) -> usize {
        port * self.lane_stride + lane
    }

    /// The (port, lane) of a per-lane index (`lane_index`'s inverse).
    pub fn lane_place(&self, i: usize) -> (usize, usize) {
        (i / self.lane_stride, i % self.lane_stride)
    }

    /// `input_lanes` for an input speedup of `s` (at most `MAX_SPEEDUP`, as validated):
    /// the VCs v (of a port's at most 32) with v mod `s` = k, for each k below `s`.
    pub fn input_lanes_of(s: u32) -> [u32; MAX_SPEEDUP] {
        let s = s as usize;
        std::array::from_fn(|k| if k < s { (k..32).step_by(s).fold(0, |m, v| m | 1 << v) } else { 0 })
    }

    /// Crossbar ports per router port: each of the allocators' per-port records (pointers,
    /// saved scheduler states) comes this many times (`Rounds::Expanded`).
    #[inline]
    pub fn expansion(&self) -> usize {
        self.input_speedup.max(self.output_speedup)
    }

    /// Depth of lane `lane` of an input port: a VC's buffer, or (lanes C and up, the
    /// preemptive router) an extra buffer.
    #[inline]
    pub fn lane_depth(&self, lane: usize) -> u32 {
        if lane < self.vcs {
            self.input_depth
        } else {
            self.extra_depth
        }
    }
}

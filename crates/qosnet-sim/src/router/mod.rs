//! The five-stage pipelined wormhole router of document 003 §3 (Fig. 1) and document 000
//! §3.1, visited once per cycle while it holds flits.
//!
//! Stage 1 (synchronise, demultiplex into one of C VC buffers) runs when a flit arrives
//! (`Simulation::receive`). Header flits then go through stage 2 (routing: its decision is
//! made as the header enters, effective after the stage's delay, `route_header`) and stage
//! 3 (output-VC arbitration); body and tail flits skip both. Stage 4 is the crossbar with a
//! scheduler at each crossbar input choosing one VC of that port; stage 5 buffers flits per
//! output VC and multiplexes the physical channel among them, with credit-based flow
//! control toward the next input buffer. Wormhole switching: the output VC is held from
//! the header until the downstream buffer has drained the tail (its tail credit returns),
//! so a VC buffer never holds flits of two packets.
//!
//! Timing: a stage with delay d lets the flit act in the next stage d cycles later; the
//! per-hop zero-load latency of a header is sync + routing + vc_alloc + crossbar + output +
//! link cycles. Within a router the stages run 3, 5, 4 so a stage-5 slot freed this
//! cycle can be refilled by the crossbar in the same cycle, as in a real pipeline register.

mod crossbar;
pub(crate) use crossbar::XbarScratch;
mod output;
mod preemption;

pub(crate) use preemption::victim;
mod routing_stage;
mod vc_alloc;

use crate::config::RouterKind;
use crate::engine::Simulation;
use crate::units::Cycle;

/// Routers have at most this many ports (enforced by the topologies).
pub const MAX_PORTS: usize = 64;

/// The router variant of a run, fixed when it is built and dispatched once per cycle
/// (`Simulation::step`), so the per-flit paths of the cycle loop are compiled for it and
/// test nothing about the others (STYLE.md: the hot loop dispatches statically). As const
/// parameters of the cycle loop's functions:
/// - `PRE`: the preemptive router (document 003 §3.2.1);
/// - `AGE`: the crossbar and output schedulers both order by age (FCFS, round robin, WRR,
///   VL arbitration): no rate keys (VirtualClock stamps, finish tags) are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Variant {
    pub preemptive: bool,
    pub age: bool,
}

impl Simulation {
    /// This run's variant, read from the configuration it was built with.
    #[inline]
    pub(crate) fn variant(&self) -> Variant {
        Variant {
            preemptive: self.p.kind == RouterKind::Preemptive,
            age: self.in_keys.mode.is_age() && self.out_keys.mode.is_age(),
        }
    }

    #[inline(always)]
    pub(crate) fn router_cycle<const PRE: bool, const AGE: bool>(&mut self, r: usize, now: Cycle) {
        self.vc_alloc_stage::<PRE>(r, now);
        self.output_stage::<AGE>(r, now);
        self.crossbar_stage::<PRE, AGE>(r, now);
    }
}

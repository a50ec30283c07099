//! The five-stage pipelined wormhole router of document 003 §3 (Fig. 1) and document 000
//! §3.1, visited once per cycle while it holds flits.
//!
//! Stage 1 (synchronise, demultiplex into one of C VC buffers) runs when a flit arrives
//! (`input.rs`). Header flits then go through stage 2 (routing: its decision is
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

#[cfg(test)]
mod credit_at_tests;
mod crossbar;
mod deadlock;
use matching::XbarScratch;
pub(crate) mod inbox;
mod input;
mod islip;
pub(crate) mod marking;
mod matching;
mod output;
#[cfg(test)]
mod output_first_tests;
mod params;
pub(crate) mod port_queue;
mod preemption;
mod routing_stage;
pub(crate) mod shards;
mod sideband;
#[cfg(test)]
mod speedup_tests;
mod stalls;
mod state;
mod vc_alloc;
mod vc_matching;
mod wavefront;

pub(crate) use marking::Marking;
pub(crate) use params::{Params, Rounds, MAX_SPEEDUP};
pub(crate) use state::{InVc, OtherWays, OutVc, Routers, Way};

use crate::config::{RouterKind, SchedulerConfig};
use crate::ids::{InputLane, LinkEnd, PacketId};
use crate::net::RouterNet;
use crate::ring::{RingState, Rings};
use crate::routing::{all_vcs, Routing};
use crate::sched::{KeyMode, RateKeys, SchedTables, Scheduler};
use crate::topology::{Peer, Topology};
use crate::unchecked::At;
use crate::units::{Clock, Cycle};

pub(crate) use crate::topology::MAX_PORTS;

/// The router variant of a run, fixed when it is built and dispatched once per cycle
/// (`Simulation::step`), so the per-flit paths of the cycle loop are compiled for it and
/// test nothing about the others (ARCHITECTURE.md "Static dispatch"). As const
/// parameters of the cycle loop's functions:
/// - `PRE`: the preemptive router (document 003 §3.2.1);
/// - `AGE`: the crossbar and output schedulers both order by age (FCFS, round robin, WRR,
///   VL arbitration): no rate keys (VirtualClock stamps, finish tags) are computed;
/// - `HOOK` (chosen by the engine): the per-flit hooks are compiled in — the switch
///   outputs' marking (`marking.rs`), the per-flit recordings of `[trace]`
///   (`metrics/trace.rs`) and VC release at the tail (`config::VcRelease::TailSent`: a
///   VC buffer then holds packets one after another) and credits taken at the crossbar
///   (`config::CreditAt::Crossbar`); without them the run carries none of their code.
///   A run whose crossbar and output schedulers order by different kinds of key (one by
///   age, the other by VirtualClock stamps or finish tags) takes it too, so that without
///   `HOOK` a run not `AGE` is by rate keys on both sides, known at compile time
///   (`RateKeys::key_in`: the test of the key mode per flit is compiled out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Variant {
    pub preemptive: bool,
    pub age: bool,
    /// The switch outputs mark packets, or VCs are released at the tail (reasons for
    /// `HOOK`).
    pub marking: bool,
    pub release_on_send: bool,
    /// Flits take their credits at the crossbar (`config::CreditAt::Crossbar`).
    pub credit_at_crossbar: bool,
    /// Arbitration tables follow admission control's reservations (the routers' outputs'
    /// and the HCAs', kept with the reservations): a reason for `HOOK` too.
    pub reweighted: bool,
    /// One of the crossbar and output schedulers orders by age, the other by rate keys
    /// (a reason for `HOOK`).
    pub mixed_keys: bool,
}

impl Routers {
    /// The routers of `topo` with parameters `p`, their crossbar inputs scheduled by
    /// `xbar_cfg` and their outputs by `out_cfg` (`block`: block-level multiplexing), their
    /// outputs marking packets by `marking`.
    #[allow(clippy::too_many_arguments)] // one per part the build resolved
    pub(crate) fn new(
        p: Params,
        topo: Topology,
        routing: Routing,
        xbar_cfg: &SchedulerConfig,
        out_cfg: &SchedulerConfig,
        clock: &Clock,
        block: u32,
        marking: Marking,
        seed: u64,
    ) -> Routers {
        let (vcs, lanes, ports) = (p.vcs, p.lanes, p.ports);
        let preemptive = p.kind == RouterKind::Preemptive;
        let n_ports = topo.routers * ports;
        let n_vcs = n_ports * p.lane_stride;
        // Room for the dummy flits preemption makes inside a buffer (not covered by credits).
        let in_cap = p.input_depth.max(p.extra_depth) + if preemptive { 2 } else { 0 };
        let mut out_target = vec![LinkEnd::UNCONNECTED; n_ports];
        let mut credit_return = vec![LinkEnd::UNCONNECTED; n_ports];
        for (i, t) in out_target.iter_mut().enumerate() {
            match topo.peer[i] {
                Peer::Router { router, port } => {
                    *t = LinkEnd::router_port(router.0 * ports as u32 + port);
                    credit_return[router.index() * ports + port as usize] = LinkEnd::router_port(i as u32);
                }
                // (a port takes the node's flits where it injects and sends it flits where
                // it ejects: the same port but on a fly, whose other ways stay unconnected)
                Peer::Endpoint { node } => {
                    let at = (crate::ids::RouterId((i / ports) as u32), (i % ports) as u32);
                    if topo.eject[node.index()] == at {
                        *t = LinkEnd::endpoint(node);
                    }
                    if topo.attach[node.index()] == at {
                        credit_return[i] = LinkEnd::endpoint(node);
                    }
                }
                Peer::None => {}
            }
        }
        // Each link's latency, and its credits' (as much longer than `p.credit` as the
        // link is than `p.link`), where the topology sets some (`Topology::link_cycles`).
        let out_link: Vec<Cycle> = (0..n_ports)
            .map(|i| match topo.link_cycles.get(i) {
                Some(&c) if c > 0 => c as Cycle,
                _ => p.link[out_target[i].kind()],
            })
            .collect();
        let credit_delay: Vec<Cycle> = (0..n_ports)
            .map(|i| match topo.link_cycles.get(i) {
                Some(&c) if c > 0 => p.credit + (c as Cycle).saturating_sub(p.link[0]),
                _ => p.credit,
            })
            .collect();
        Routers {
            credit_delay,
            inbuf: Rings::new(n_vcs, in_cap),
            in_vc: vec![InVc::default(); n_vcs],
            out: output::OutputStage {
                sched: vec![Scheduler::build(out_cfg, block); n_ports],
                tables: SchedTables::build(out_cfg, clock, vcs, preemptive, block),
                keys: RateKeys::new(KeyMode::of(out_cfg), n_ports, lanes),
                target: out_target,
                link: out_link,
                r_ports: vec![0; topo.routers],
            },
            sa: crossbar::SwitchAllocation {
                sched: vec![Scheduler::build(xbar_cfg, block); n_ports],
                tables: SchedTables::build(xbar_cfg, clock, vcs, preemptive, block),
                rr: vec![0; n_ports * p.expansion()],
                accept: vec![0; n_ports * p.expansion()],
                wave_priority: vec![0; topo.routers],
                saved: vec![Scheduler::build(xbar_cfg, block); ports * p.expansion()],
                out_rr: vec![0; if p.rounds == Rounds::OutputFirst { n_ports } else { 0 }],
                saved_out: vec![0; if p.rounds == Rounds::OutputFirst { ports } else { 0 }],
                scratch: XbarScratch::default(),
                r_ports: vec![0; topo.routers],
            },
            pre: preemption::Preemption::new(topo.routers, n_ports, n_vcs),
            va: vc_alloc::VcAllocation::new(
                topo.routers,
                ports,
                lanes,
                n_vcs,
                routing.has_other_ways(),
                p.vc_allocator != crate::config::VcAllocatorKind::OutputPort,
            ),
            ip_nonempty: vec![0; n_ports],
            ip_active: vec![0; n_ports],
            ip_blocked: vec![0; n_ports],
            ip_to_out: vec![0; n_ports * ports],
            in_keys: RateKeys::new(KeyMode::of(xbar_cfg), n_ports, lanes),
            credit_return,
            ip_place: (0..n_ports).map(|i| ((i / ports) as u32, (i % ports) as u32)).collect(),
            outbuf: Rings::new(n_vcs, p.output_depth),
            out_vc: (0..n_vcs)
                .map(|i| OutVc {
                    key: 0,
                    buf: RingState::default(),
                    credits: p.lane_depth(i % p.lane_stride),
                    owner: InputLane::default(),
                    guard: PacketId::NONE,
                })
                .collect(),
            op_allocated: vec![0; n_ports],
            op_nonempty: vec![0; n_ports],
            op_credited: vec![all_vcs(lanes as u32); n_ports],
            op_open: vec![0; n_ports],
            op_held: vec![[0; 3]; n_ports],
            reweighted: false,
            work: vec![0; topo.routers],
            active: vec![0; topo.routers.div_ceil(64)],
            mark_state: marking::MarkState::new(marking, n_ports, n_vcs, seed),
            port_queues: marking::PortQueues::new(marking, n_vcs),
            marking,
            p,
            topo,
            routing,
        }
    }

    /// VirtualClock state per stream (`[router] virtual_clock.state = "stream"`, document
    /// 003 §3.1's connection read as §4.2's video connection) at the crossbar inputs and
    /// the output multiplexers, for flows `0..flows`.
    pub(crate) fn keep_stream_clocks(&mut self, flows: usize) {
        self.in_keys.keep_streams(flows);
        self.out.keys.keep_streams(flows);
    }

    /// This run's variant, read from the configuration it was built with.
    #[inline]
    pub(crate) fn variant(&self) -> Variant {
        Variant {
            preemptive: self.p.kind == RouterKind::Preemptive,
            age: self.in_keys.mode.is_age() && self.out.keys.mode.is_age(),
            marking: self.marking != Marking::None,
            release_on_send: self.p.release_on_send,
            credit_at_crossbar: self.p.credit_at_crossbar,
            reweighted: self.reweighted,
            mixed_keys: self.in_keys.mode.is_age() != self.out.keys.mode.is_age(),
        }
    }

    /// Admission control runs (document 000 §4.1): each output port's arbitration tables
    /// follow its link's reservations from now on, if the output scheduler (`out_cfg`) has
    /// weights (WRR, VL arbitration). `lanes`: the (real-time, best-effort) VCs. The
    /// tables live with the reservations (`Reservations::out_tables`), which change them.
    pub(crate) fn follow_reservations(
        &self,
        out_cfg: &SchedulerConfig,
        clock: &Clock,
        lanes: [u32; 2],
    ) -> Option<Box<crate::sched::PortTables>> {
        let weighted = matches!(out_cfg, SchedulerConfig::Wrr { .. } | SchedulerConfig::VlArbitration { .. });
        let ports = self.out.sched.len();
        let unit = clock.bytes_to_flits(64.0);
        crate::sched::PortTables::new(&self.out.tables, weighted, lanes, unit, self.p.vcs, ports)
            .map(Box::new)
    }

    /// Stages 3, 5 and 4 of router `r` (see the module comment for the order).
    #[inline(always)]
    pub(crate) fn router_cycle<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        self.vc_alloc_stage::<PRE, HOOK>(net, r, now);
        self.output_stage::<AGE, HOOK>(net, r, now);
        self.crossbar_stage::<PRE, AGE, HOOK>(net, r, now);
    }

    /// One more pass of stages 3 and 4 of router `r` within the cycle: BookSim2's internal
    /// speedup (`Params::internal_speedup`; its `Router::Evaluate` runs a router's internal
    /// step that many times a cycle). The output stage and the links run once a cycle, so
    /// what the crossbar moves beyond a flit a cycle queues in the output VC buffers. The
    /// engine runs the passes after every router's visit (`Simulation::visit_routers`):
    /// routers meet only through links, so the order is free (ARCHITECTURE.md "Two-phase
    /// update"), and a run without them tests for them once a cycle.
    #[inline(always)]
    pub(crate) fn internal_pass<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        self.vc_alloc_stage::<PRE, HOOK>(net, r, now);
        self.crossbar_stage::<PRE, AGE, HOOK>(net, r, now);
    }

    /// `visit(self, net, r)` for every router `r` with work, in index order (so
    /// neighbouring routers' per-port state shares cache lines; in reverse when `reverse`:
    /// a test's), each left inactive once it has none. A router activates only itself
    /// while it runs: arrivals came first.
    #[inline(always)]
    pub(crate) fn visit_active<N: RouterNet>(
        &mut self,
        net: &mut N,
        reverse: bool,
        visit: impl FnMut(&mut Routers, &mut N, usize),
    ) {
        self.visit_range(net, 0..self.topo.routers, reverse, visit);
    }

    /// `visit_active` for routers `range` alone (a block of them, `inbox.rs`).
    #[inline(always)]
    pub(crate) fn visit_range<N: RouterNet>(
        &mut self,
        net: &mut N,
        range: std::ops::Range<usize>,
        reverse: bool,
        mut visit: impl FnMut(&mut Routers, &mut N, usize),
    ) {
        if range.is_empty() {
            return;
        }
        let (first, last) = (range.start / 64, (range.end - 1) / 64);
        for i in 0..=last - first {
            let w = if reverse { last - i } else { first + i };
            // (the range's part of word w: a block may start or end inside a word)
            let lo = range.start.max(w * 64) - w * 64;
            let hi = range.end.min(w * 64 + 64) - w * 64;
            let part = if hi - lo == 64 { !0 } else { ((1u64 << (hi - lo)) - 1) << lo };
            let mut m = *self.active.at(w) & part;
            while m != 0 {
                let b = if reverse { 63 - m.leading_zeros() } else { m.trailing_zeros() };
                m &= !(1u64 << b);
                let r = w * 64 + b as usize;
                visit(self, net, r);
                if *self.work.at(r) == 0 {
                    *self.active.at_mut(w) &= !(1u64 << b);
                }
            }
        }
    }

    /// Router `r` has work: it is visited from this cycle on.
    #[inline]
    pub(crate) fn activate(&mut self, r: usize) {
        *self.active.at_mut(r >> 6) |= 1 << (r & 63);
    }

    /// Whether no router holds a flit or has work pending.
    pub(crate) fn is_idle(&self) -> bool {
        self.active.iter().all(|&w| w == 0)
    }

    /// The number of per-lane records (input or output VCs, with padding) of all routers.
    pub(crate) fn lane_records(&self) -> usize {
        self.topo.routers * self.p.ports * self.p.lane_stride
    }
}

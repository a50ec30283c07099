//! The cycle loop.
//!
//! Components (routers, NICs) own their state in flat arrays and talk only through two
//! timing wheels — flits on links and credits back — each with a delay of at least one
//! cycle. So nothing a component does in cycle t is visible to another before t + 1, and
//! the result does not depend on the order components are visited (two-phase update,
//! STYLE.md). Only active routers and NICs are visited; when nothing is in flight the loop
//! jumps to the next source event.

use crate::config::{Config, RouterKind, TrafficClass, VcSelection};
use crate::error::{ConfigErrors, SimError};
use crate::flit::{Flit, Message, Packet, Slab};
use crate::metrics::deadline::StreamDeadlines;
use crate::metrics::Metrics;
use crate::ring::{RingState, Rings};
use crate::routing::{all_vcs, Routing};
use crate::sched::{KeyMode, RateKeys, RoundRobin, SchedTables, Scheduler};
use crate::topology::{Peer, Topology};
use crate::traffic::{ProcessSpec, Source, TrafficSpec};
use crate::unchecked::At;
use crate::units::{Clock, Cycle};
use crate::wheel::{split, Wheel, ENDPOINT, TO_ENDPOINT, TO_ROUTER, UNCONNECTED};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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

/// Per-stage delays and other resolved parameters, in cycles.
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
    pub link: Cycle,
    pub credit: Cycle,
    pub speedup: u32,
    pub vc_selection: VcSelection,
    pub nic_vc_selection: VcSelection,
    pub kind: RouterKind,
    /// Per traffic class (`TrafficClass::index`): the VCs it may be given.
    pub class_vcs: [u32; 3],
    /// Per class: its own VCs in the configured split (the preemptive router prefers them).
    pub home_vcs: [u32; 3],
    /// Per-class source queues served by priority (else one FIFO).
    pub per_class_queues: bool,
    /// Packets a NIC injects at once.
    pub concurrent_packets: u32,
    pub window_end: Cycle,
    pub drain_end: Cycle,
    pub watchdog: Cycle,
}

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
    pub packet: u32,
    /// The header is a dummy header: the packet resumes after a preemption.
    pub resumed: bool,
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
    /// The input VC holding it as `input port << 5 | vc` (valid while allocated).
    pub owner: u32,
    /// The packet whose dummy tail it carries until that tail's credit returns
    /// (`u32::MAX`: none): the packet's resumed part may not overtake it.
    pub guard: u32,
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
    /// The input VC holding it, as (input port, lane): `owner` decoded.
    #[inline]
    pub fn owner_input(&self) -> (usize, usize) {
        ((self.owner >> 5) as usize, (self.owner & 31) as usize)
    }
}

impl Params {
    /// Where lane `lane` of port `port` (router * ports + port) is in the per-lane arrays
    /// (VC records, buffers). Why a port's block is an odd number of records: the lanes
    /// a network uses most are the same few of every port (the lowest free VC), and
    /// with 16 lanes of 64 bytes every port's VC v fell in the same 4 of the L1 cache's
    /// 64 sets, input and output side alike, so they evicted each other within a cycle
    /// or two (session 11, configs/bench/README.md).
    #[inline]
    pub fn lane_index(&self, port: usize, lane: usize) -> usize {
        port * self.lane_stride + lane
    }

    /// The (port, lane) of a per-lane index (`lane_index`'s inverse).
    pub fn lane_place(&self, i: usize) -> (usize, usize) {
        (i / self.lane_stride, i % self.lane_stride)
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

/// A packet a NIC is injecting (one per VC).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Injecting {
    pub packet: u32,
    pub seq: u16,
    pub size: u16,
    /// Cycle the packet entered the NIC VC (all its flits are there from then on).
    pub start: Cycle,
    /// Injection scheduler key of the next flit.
    pub key: u64,
    /// NIC models: when the packet's data transfer into the NIC began (0: ideal endpoint).
    pub data_start: Cycle,
    /// When the next flit is in the NIC and may go.
    pub avail: Cycle,
}

/// A whole simulated network and its run state.
pub struct Simulation {
    pub(crate) config: Config,
    pub(crate) topo: Topology,
    pub(crate) routing: Routing,
    pub(crate) clock: Clock,
    pub(crate) p: Params,
    // --- routers: input side (per input VC / per input port) ---
    pub(crate) inbuf: Rings,
    /// Per input VC: the routing and allocation state of the packet it holds.
    pub(crate) in_vc: Vec<InVc>,
    pub(crate) ip_nonempty: Vec<u32>,
    pub(crate) ip_vc_alloc: Vec<u32>,
    /// Headers that found no output VC to win (none free, none preemptable): parked out
    /// of `ip_vc_alloc` until their output port's VCs change (`wake_vc_alloc`), so blocked
    /// headers cost nothing per cycle.
    pub(crate) ip_parked: Vec<u32>,
    /// Per output port: the input ports (bits) with headers parked on it.
    pub(crate) op_parked: Vec<u64>,
    pub(crate) ip_active: Vec<u32>,
    /// VCs whose output VC buffer was found full; re-enabled when that buffer sends a flit.
    pub(crate) ip_blocked: Vec<u32>,
    /// Per (input port, output port): the active VCs of the input heading to that output.
    pub(crate) ip_to_out: Vec<u32>,
    pub(crate) xbar_sched: Vec<Scheduler>,
    pub(crate) xbar_tables: SchedTables,
    /// Per input VC: the rate-scheduler state behind `InVc::front`'s keys.
    pub(crate) in_keys: RateKeys,
    // --- preemption (document 003 §3.2.1), per input port, masks over its C VCs ---
    /// VCs whose extra buffer holds a preempting message (the VC itself waits).
    pub(crate) ip_preempting: Vec<u32>,
    /// VCs whose preempted message's dummy tail must cross first.
    pub(crate) ip_draining: Vec<u32>,
    /// VCs whose preempted message resumes with a dummy header (its history-stack entry).
    pub(crate) ip_resume: Vec<u32>,
    /// Lanes holding a message whose tail has not arrived yet.
    pub(crate) ip_open: Vec<u32>,
    /// Lanes whose flits are accelerated (the lowest key) until their tail crosses.
    pub(crate) ip_accel: Vec<u32>,
    /// Per input VC: the preempted packet a dummy header will resume.
    pub(crate) resume_packet: Vec<u32>,
    /// Per input port: the upstream output port its credits go to (`ENDPOINT | node`: a NIC).
    pub(crate) credit_return: Vec<u32>,
    /// Per input port: (router, port), so the hot path needs no division.
    pub(crate) ip_place: Vec<(u32, u32)>,
    // --- routers: output side (per output VC / per output port) ---
    pub(crate) outbuf: Rings,
    /// Per output VC: its buffer position, credits, holder and key (`OutVc`).
    pub(crate) out_vc: Vec<OutVc>,
    pub(crate) op_allocated: Vec<u32>,
    pub(crate) op_nonempty: Vec<u32>,
    /// Output VCs holding at least one credit.
    pub(crate) op_credited: Vec<u32>,
    /// Per output port: VCs whose holder's tail has not crossed the crossbar yet.
    pub(crate) op_open: Vec<u32>,
    /// Per output port and class: the (regular) VCs held by a packet of that class.
    pub(crate) op_held: Vec<[u32; 3]>,
    pub(crate) out_sched: Vec<Scheduler>,
    pub(crate) out_tables: SchedTables,
    pub(crate) out_keys: RateKeys,
    /// Per output port: where its link leads, a router input port or `ENDPOINT | node`.
    pub(crate) out_target: Vec<u32>,
    pub(crate) vc_rr: Vec<RoundRobin>,
    /// Per output port: the input port after the one the crossbar output served last.
    pub(crate) xbar_rr: Vec<u8>,
    /// Per output port: the (input port << 5 | VC) after the header granted a VC last.
    pub(crate) va_rr: Vec<u16>,
    /// Scratch for stage 3's requests and stage 4's saved input-scheduler states (reused:
    /// nothing is allocated per cycle).
    pub(crate) va_requests: Vec<(u32, u32, u32)>,
    pub(crate) xbar_saved: Vec<Scheduler>,
    /// Stage 4's per-router-visit scratch (`router::XbarScratch`).
    pub(crate) xbar: crate::router::XbarScratch,
    // --- routers: activity ---
    pub(crate) work: Vec<u32>,
    /// Routers with work (a bit each): visited in index order, so neighbouring routers'
    /// per-port state shares cache lines, with no list to sort or compact.
    pub(crate) active: Vec<u64>,
    /// Per router, a bit per port that may have work in a stage (set eagerly, cleared
    /// lazily when the stage finds the port idle): VC allocation, crossbar, output.
    pub(crate) r_alloc_ports: Vec<u64>,
    pub(crate) r_xbar_ports: Vec<u64>,
    pub(crate) r_out_ports: Vec<u64>,
    // --- endpoints ---
    /// Per node, 3 source queues (one per class, or only the first as a FIFO).
    pub(crate) nic_queue: Vec<VecDeque<u32>>,
    /// Per node and VC: the packet being injected on it (valid where `nic_sending` is set).
    pub(crate) nic_pkt: Vec<Injecting>,
    /// Per node: VCs with flits left to inject.
    pub(crate) nic_sending: Vec<u32>,
    pub(crate) nic_credits: Vec<u32>,
    /// Per node: lanes holding at least one credit (as `op_credited` for routers).
    pub(crate) nic_credited: Vec<u32>,
    /// Per node: VCs held by a packet, from its header until its tail credit returns.
    pub(crate) nic_busy: Vec<u32>,
    pub(crate) nic_rr: Vec<RoundRobin>,
    /// Per node and lane: the class of the packet holding it.
    pub(crate) nic_class: Vec<u8>,
    /// Per node and class: the regular VCs (not extra lanes) that class holds, kept with
    /// `nic_busy` so a preempting message finds its victim without a scan.
    pub(crate) nic_held: Vec<[u32; 3]>,
    /// Per node and class: the lanes with flits of that class left to inject (a split of
    /// `nic_sending`), so "does a lower class hold the link" is a mask test.
    pub(crate) nic_sending_class: Vec<[u32; 3]>,
    /// Per node (ideal endpoint): no queued message could start when last tried, and
    /// nothing that could change that (a new message, a lane sent out or freed) has
    /// happened since, so the node does not try again.
    pub(crate) nic_start_blocked: Vec<bool>,
    pub(crate) nic_sched: Vec<Scheduler>,
    pub(crate) nic_tables: SchedTables,
    pub(crate) nic_keys: RateKeys,
    pub(crate) nic_active: Vec<u32>,
    pub(crate) nic_is_active: Vec<bool>,
    /// The NIC model, resolved (the ideal endpoint: `model` Ideal).
    pub(crate) nic_p: crate::nic::NicParams,
    /// Per node: the NIC model's state (empty for the ideal endpoint).
    pub(crate) nics: Vec<crate::nic::Nic>,
    /// Per source: its reserved flow's IDT in rate-control ticks (0: unreserved).
    pub(crate) nic_idt: Vec<u64>,
    /// Per node: the router port (router * ports + port) it attaches to. Its input side
    /// receives the node's injected flits; its output side ejects to the node and gets the
    /// node's credits.
    pub(crate) attach_port: Vec<u32>,
    // --- traffic ---
    pub(crate) specs: Vec<TrafficSpec>,
    pub(crate) sources: Vec<Source>,
    /// Message creations due: (cycle, source, the source's epoch when it was queued).
    pub(crate) events: BinaryHeap<Reverse<(Cycle, u32, u32)>>,
    /// Start cycles of the mix's phases after the first (document 003 §4.2).
    pub(crate) phase_starts: Vec<Cycle>,
    /// The phase in force now.
    pub(crate) phase: usize,
    /// Per video stream: its frames' deadlines (document 003 §4.2); `deadline_of[source]`
    /// indexes it (`u32::MAX` for other sources).
    pub(crate) deadlines: Vec<StreamDeadlines>,
    pub(crate) deadline_of: Vec<u32>,
    // --- links ---
    pub(crate) arrivals: Wheel<Arrival>,
    pub(crate) credit_wheel: Wheel<CreditMsg>,
    // --- data ---
    pub(crate) packets: Slab<Packet>,
    pub(crate) messages: Slab<Message>,
    // --- run state ---
    pub(crate) now: Cycle,
    pub(crate) in_flight: u64,
    pub(crate) last_progress: Cycle,
    /// The latest cycle a header was routed at (its ready time, which may lie ahead): stage
    /// 2 is decided early (`route_header`) but counts as progress when it takes place, as
    /// it did when it ran as its own per-cycle stage, so the watchdog is unchanged.
    pub(crate) routed_at: Cycle,
    pub(crate) flits_injected: u64,
    pub(crate) flits_ejected: u64,
    pub(crate) flit_hops: u64,
    /// Dummy tails and headers made by preemption (flit conservation counts them).
    pub(crate) dummy_flits: u64,
    pub(crate) measured_outstanding: u64,
    pub(crate) finished: bool,
    /// Whether the current cycle lies in the measurement window (set once per cycle).
    pub(crate) measuring: bool,
    /// Visit routers in reverse order (a test hook: results must not change).
    pub(crate) reverse_visits: bool,
    /// The drain limit passed with measured messages still undelivered.
    pub(crate) drain_incomplete: bool,
    pub(crate) violation: Option<String>,
    pub(crate) metrics: Metrics,
}

impl Simulation {
    /// Build a simulation from a TOML document (relative paths resolve against `base_dir`).
    pub fn from_toml(text: &str, base_dir: Option<&std::path::Path>) -> Result<Simulation, ConfigErrors> {
        let mut cfg = Config::from_toml_str(text)?;
        cfg.base_dir = base_dir.map(|p| p.to_path_buf());
        Simulation::new(cfg)
    }

    /// Validate `config` completely and build the network.
    pub fn new(config: Config) -> Result<Simulation, ConfigErrors> {
        let v = crate::config::validate(&config)?;
        let (topo, routing, specs, nic_p) = (v.topology, v.routing, v.specs, v.nic);
        let clock = v.clock;
        let rc = &config.router;
        let (vcs, ports) = (rc.vcs as usize, topo.ports);
        let cyc = |d| clock.duration_cycles(d);
        let warmup = cyc(config.simulation.warmup);
        let window_end = warmup.saturating_add(cyc(config.simulation.measure));
        let preemptive = rc.kind == RouterKind::Preemptive;
        let lanes = if preemptive { 2 * vcs } else { vcs };
        let p = Params {
            vcs,
            lanes,
            extra_depth: rc.preemption.extra_buffer,
            lane_stride: lanes | 1,
            acceleration: rc.preemption.acceleration,
            ports,
            input_depth: rc.input_buffer,
            output_depth: rc.output_buffer,
            d_sync: rc.pipeline.sync as Cycle,
            d_routing: rc.pipeline.routing as Cycle,
            d_vc_alloc: rc.pipeline.vc_alloc as Cycle,
            d_crossbar: rc.pipeline.crossbar as Cycle,
            d_output: rc.pipeline.output as Cycle,
            link: rc.link_latency as Cycle,
            credit: rc.credit_latency as Cycle,
            speedup: rc.speedup,
            vc_selection: rc.vc_selection,
            nic_vc_selection: config.endpoint.vc_selection,
            kind: rc.kind,
            class_vcs: v.class_vcs,
            home_vcs: v.home_vcs,
            per_class_queues: config.endpoint.queues == crate::config::SourceQueues::PerClass,
            concurrent_packets: config.endpoint.concurrent_packets,
            window_end,
            drain_end: window_end.saturating_add(cyc(config.simulation.drain_limit)),
            watchdog: cyc(config.simulation.watchdog).max(1),
        };
        let n_ports = topo.routers * ports;
        let n_vcs = n_ports * p.lane_stride;
        let lane_depths = |n: usize, stride: usize| -> Vec<u32> {
            (0..n * stride).map(|i| p.lane_depth(i % stride)).collect()
        };
        // Room for the dummy flits preemption makes inside a buffer (not covered by credits).
        let in_cap = p.input_depth.max(p.extra_depth) + if preemptive { 2 } else { 0 };
        let mut out_target = vec![UNCONNECTED; n_ports];
        let mut credit_return = vec![UNCONNECTED; n_ports];
        for (i, t) in out_target.iter_mut().enumerate() {
            match topo.peer[i] {
                Peer::Router { router, port } => {
                    *t = router * ports as u32 + port;
                    credit_return[router as usize * ports + port as usize] = i as u32;
                }
                Peer::Endpoint { node } => {
                    *t = ENDPOINT | node;
                    credit_return[i] = ENDPOINT | node;
                }
                Peer::None => {}
            }
        }
        let attach_port = topo.attach.iter().map(|&(r, p)| r * ports as u32 + p).collect();
        let ip_place = (0..n_ports).map(|i| ((i / ports) as u32, (i % ports) as u32)).collect();
        let max_delay = (p.d_output + p.link).max(p.credit).max(p.link) as usize;
        let (xbar_cfg, out_cfg) = (rc.crossbar(), rc.output());
        let nic_cfg = config.endpoint.scheduler.clone().unwrap_or_else(|| xbar_cfg.clone());
        let block = rc.block_size;
        let nodes = topo.nodes;
        let mut sources = Vec::new();
        let mut events = BinaryHeap::new();
        let n_phases = config.mix.as_ref().map_or(1, |m| m.phases.len().max(1));
        let (mut deadlines, mut deadline_of) = (Vec::new(), Vec::new());
        for (si, spec) in specs.iter().enumerate() {
            for &node in &v.spec_nodes[si] {
                if spec.pattern.is_silent(node as usize) || spec.rate_by_phase.iter().all(|&r| r <= 0.0) {
                    continue;
                }
                for stream in 0..spec.sources_per_node() {
                    let mut s = Source::new(node, si as u32, stream, spec, config.simulation.seed);
                    if let Some(t) = s.start(spec, 0, 0) {
                        events.push(Reverse((t, sources.len() as u32, s.epoch)));
                    }
                    if let ProcessSpec::Video(v) = &spec.process {
                        deadline_of.push(deadlines.len() as u32);
                        deadlines.push(StreamDeadlines::new(v.period, n_phases));
                    } else {
                        deadline_of.push(u32::MAX);
                    }
                    sources.push(s);
                }
            }
        }
        let mut metrics = Metrics::new(warmup, window_end, nodes, n_ports, config.simulation.record_messages);
        metrics.flows = vec![Default::default(); sources.len() + 1];
        metrics.phases = vec![Default::default(); n_phases];
        Ok(Simulation {
            inbuf: Rings::new(n_vcs, in_cap),
            in_vc: vec![InVc::default(); n_vcs],
            ip_nonempty: vec![0; n_ports],
            ip_vc_alloc: vec![0; n_ports],
            ip_parked: vec![0; n_ports],
            op_parked: vec![0; n_ports],
            ip_active: vec![0; n_ports],
            ip_blocked: vec![0; n_ports],
            ip_to_out: vec![0; n_ports * ports],
            xbar_sched: vec![Scheduler::build(&xbar_cfg, block); n_ports],
            xbar_tables: SchedTables::build(&xbar_cfg, &clock, vcs, preemptive, block),
            in_keys: RateKeys::new(KeyMode::of(&xbar_cfg), n_ports, lanes),
            ip_preempting: vec![0; n_ports],
            ip_draining: vec![0; n_ports],
            ip_resume: vec![0; n_ports],
            ip_open: vec![0; n_ports],
            ip_accel: vec![0; n_ports],
            resume_packet: vec![0; n_vcs],
            credit_return,
            ip_place,
            outbuf: Rings::new(n_vcs, p.output_depth),
            out_vc: lane_depths(n_ports, p.lane_stride)
                .into_iter()
                .map(|credits| OutVc {
                    key: 0,
                    buf: RingState::default(),
                    credits,
                    owner: 0,
                    guard: u32::MAX,
                })
                .collect(),
            op_allocated: vec![0; n_ports],
            op_nonempty: vec![0; n_ports],
            op_credited: vec![all_vcs(lanes as u32); n_ports],
            op_open: vec![0; n_ports],
            op_held: vec![[0; 3]; n_ports],
            out_sched: vec![Scheduler::build(&out_cfg, block); n_ports],
            out_tables: SchedTables::build(&out_cfg, &clock, vcs, preemptive, block),
            out_keys: RateKeys::new(KeyMode::of(&out_cfg), n_ports, lanes),
            out_target,
            vc_rr: vec![RoundRobin::default(); n_ports],
            xbar_rr: vec![0; n_ports],
            va_rr: vec![0; n_ports],
            va_requests: Vec::with_capacity(ports * lanes),
            xbar_saved: vec![Scheduler::build(&xbar_cfg, block); ports],
            xbar: crate::router::XbarScratch::default(),
            work: vec![0; topo.routers],
            active: vec![0; topo.routers.div_ceil(64)],
            r_alloc_ports: vec![0; topo.routers],
            r_xbar_ports: vec![0; topo.routers],
            r_out_ports: vec![0; topo.routers],
            nic_queue: vec![VecDeque::new(); nodes * 3],
            nic_pkt: vec![Injecting::default(); nodes * lanes],
            nic_sending: vec![0; nodes],
            nic_credits: lane_depths(nodes, lanes),
            nic_credited: vec![all_vcs(lanes as u32); nodes],
            nic_class: vec![0; nodes * lanes],
            nic_held: vec![[0; 3]; nodes],
            nic_sending_class: vec![[0; 3]; nodes],
            nic_start_blocked: vec![false; nodes],
            nic_busy: vec![0; nodes],
            nic_rr: vec![RoundRobin::default(); nodes],
            // The simple endpoint keeps no injection block: its link is its own.
            nic_sched: vec![Scheduler::build(&nic_cfg, 1); nodes],
            nic_tables: SchedTables::build(&nic_cfg, &clock, vcs, preemptive, 1),
            nic_keys: RateKeys::new(KeyMode::of(&nic_cfg), nodes, lanes),
            nics: if nic_p.is_nic() { vec![crate::nic::Nic::new(&nic_p, vcs); nodes] } else { Vec::new() },
            nic_idt: {
                let max_packet = specs.iter().map(|s| s.packet_flits.min(s.message_flits)).max().unwrap_or(1);
                sources
                    .iter()
                    .map(|s| {
                        let spec = &specs[s.spec as usize];
                        nic_p.idt_ticks(spec.reserve, spec.idt, max_packet)
                    })
                    .collect()
            },
            nic_p,
            nic_active: Vec::with_capacity(nodes),
            nic_is_active: vec![false; nodes],
            attach_port,
            specs,
            sources,
            events,
            phase_starts: config.mix.as_ref().map_or(Vec::new(), |m| {
                m.phases
                    .iter()
                    .take(m.phases.len().saturating_sub(1))
                    .scan(0u64, |t, p| {
                        *t = t.saturating_add(cyc(p.duration));
                        Some(*t)
                    })
                    .collect()
            }),
            phase: 0,
            deadlines,
            deadline_of,
            arrivals: Wheel::new(max_delay),
            credit_wheel: Wheel::new(max_delay),
            packets: Slab::default(),
            messages: Slab::default(),
            now: 0,
            in_flight: 0,
            last_progress: 0,
            routed_at: 0,
            flits_injected: 0,
            flits_ejected: 0,
            flit_hops: 0,
            dummy_flits: 0,
            measured_outstanding: 0,
            finished: false,
            measuring: false,
            reverse_visits: false,
            drain_incomplete: false,
            violation: None,
            metrics,
            config,
            topo,
            routing,
            clock,
            p,
        })
    }

    pub fn now(&self) -> Cycle {
        self.now
    }

    /// End of the measurement window (for progress reporting).
    pub fn window_end(&self) -> Cycle {
        self.p.window_end
    }

    /// Visit active routers in reverse order each cycle. Components only talk through
    /// delayed link and credit channels, so this must not change any result; tests use it
    /// to check that claim.
    #[doc(hidden)]
    pub fn set_reverse_visits(&mut self, on: bool) {
        self.reverse_visits = on;
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    pub fn routing(&self) -> &Routing {
        &self.routing
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Flits injected / ejected / router-to-anything link traversals so far.
    pub fn flit_counts(&self) -> (u64, u64, u64) {
        (self.flits_injected, self.flits_ejected, self.flit_hops)
    }

    /// Run until finished; then the results.
    pub fn run(&mut self) -> Result<crate::results::RunResult, SimError> {
        while !self.advance(u64::MAX)? {}
        Ok(self.result())
    }

    /// Simulate at most `max_cycles` more cycles. Returns whether the run has finished:
    /// every measured message delivered after the window, or the drain limit reached
    /// (saturation).
    pub fn advance(&mut self, max_cycles: u64) -> Result<bool, SimError> {
        let stop = self.now.saturating_add(max_cycles);
        while !self.finished && self.now < stop {
            if self.now >= self.p.window_end && self.measured_outstanding == 0 {
                self.finished = true;
                break;
            }
            if self.now >= self.p.drain_end {
                self.finished = true;
                self.drain_incomplete = true;
                break;
            }
            if self.is_idle() {
                // Nothing in flight: jump to the next message creation (or the end).
                let next = self.events.peek().map_or(Cycle::MAX, |Reverse((t, _, _))| *t);
                let next = next.min(self.phase_starts.get(self.phase).copied().unwrap_or(Cycle::MAX));
                let target = next.min(self.p.drain_end).min(stop);
                let target =
                    if self.now < self.p.window_end { target.min(self.p.window_end) } else { target };
                if target > self.now {
                    self.now = target;
                    self.last_progress = self.now;
                    continue;
                }
            }
            self.step()?;
        }
        if let Some(v) = self.violation.take() {
            return Err(SimError::Invariant { cycle: self.now, what: v });
        }
        Ok(self.finished)
    }

    fn is_idle(&self) -> bool {
        // (credits in flight are looked for last: no count of them is kept per credit)
        self.in_flight == 0
            && self.nic_active.is_empty()
            && self.active.iter().all(|&w| w == 0)
            && self.credit_wheel.is_empty()
    }

    /// One cycle.
    pub fn step(&mut self) -> Result<(), SimError> {
        let v = self.variant();
        match (v.preemptive, v.age) {
            (false, true) => self.cycle::<false, true>(),
            (false, false) => self.cycle::<false, false>(),
            (true, true) => self.cycle::<true, true>(),
            (true, false) => self.cycle::<true, false>(),
        }
    }

    /// One cycle of a run of router variant `PRE`, `AGE` (`router::Variant`). (Not
    /// inlined: each variant is then one function with its stages inlined, as before.)
    #[inline(never)]
    fn cycle<const PRE: bool, const AGE: bool>(&mut self) -> Result<(), SimError> {
        let now = self.now;
        self.measuring = self.metrics.in_window(now);
        self.generate(now);
        self.deliver_credits(now);
        self.deliver_arrivals::<PRE, AGE>(now);
        // (a router activates only itself while it runs: arrivals came first)
        let words = self.active.len();
        for i in 0..words {
            let w = if self.reverse_visits { words - 1 - i } else { i };
            let mut m = *self.active.at(w);
            while m != 0 {
                let b = if self.reverse_visits { 63 - m.leading_zeros() } else { m.trailing_zeros() };
                m &= !(1u64 << b);
                let r = w * 64 + b as usize;
                self.router_cycle::<PRE, AGE>(r, now);
                if *self.work.at(r) == 0 {
                    *self.active.at_mut(w) &= !(1u64 << b);
                }
            }
        }
        self.inject(now);
        if self.in_flight > 0 && now - self.progress(now) > self.p.watchdog {
            return Err(self.deadlock());
        }
        self.now += 1;
        Ok(())
    }

    /// The last cycle up to `now` in which anything moved.
    #[inline]
    pub(crate) fn progress(&self, now: Cycle) -> Cycle {
        self.last_progress.max(self.routed_at.min(now))
    }

    /// Queue a message at node `src` now, outside any traffic source (tests and hand-worked
    /// scenarios). It belongs to the flow after the sources' (the last row of `flows`) and is
    /// measured if created inside the window.
    #[doc(hidden)]
    pub fn post_message(&mut self, src: u32, dst: u32, class: TrafficClass, size: u32, vtick: u32) -> u32 {
        self.measuring = self.metrics.in_window(self.now);
        let flow = self.sources.len() as u32;
        self.create_message(src, dst, class, size, vtick, flow, u32::MAX, self.now)
    }

    /// Dummy flits preemption has made so far.
    pub fn dummy_flits(&self) -> u64 {
        self.dummy_flits
    }

    #[inline]
    pub(crate) fn activate_router(&mut self, r: usize) {
        *self.active.at_mut(r >> 6) |= 1 << (r & 63);
    }

    #[inline]
    pub(crate) fn activate_nic(&mut self, n: usize) {
        if !*self.nic_is_active.at(n) {
            *self.nic_is_active.at_mut(n) = true;
            self.nic_active.push(n as u32);
        }
    }

    /// Put `flit` on the link to `to` (a router input port or `ENDPOINT | node`), arriving
    /// at `at`.
    #[inline]
    pub(crate) fn send_flit(&mut self, at: Cycle, to: u32, flit: Flit) {
        debug_assert!(to != UNCONNECTED, "flit sent on an unconnected port");
        let (kind, to) = split(to);
        self.arrivals.push(at, kind, Arrival { to, flit });
    }

    /// Return a credit for lane `vc` to `to` (an output port or `ENDPOINT | node`),
    /// arriving at `at`.
    #[inline]
    pub(crate) fn send_credit(&mut self, at: Cycle, to: u32, vc: u8, tail: bool) {
        debug_assert!(to != UNCONNECTED, "credit returned on an unconnected port");
        let (kind, to) = split(to);
        self.credit_wheel.push(at, kind, CreditMsg { to, vc, tail });
    }

    /// Hand each item for receivers of `kind` due now on `wheel` to `f`, in sending order.
    /// (The list is out of the wheel while `f` changes the simulation, and goes back with
    /// its capacity: nothing is allocated per cycle. Nothing is sent into the slot being
    /// delivered: every delay is at least one cycle.)
    #[inline(always)]
    fn deliver<T: Copy>(
        &mut self,
        wheel: impl Fn(&mut Self) -> &mut Wheel<T>,
        now: Cycle,
        kind: usize,
        mut f: impl FnMut(&mut Self, T),
    ) {
        let mut batch = wheel(self).take(now, kind);
        for &item in &batch {
            f(self, item);
        }
        batch.clear();
        wheel(self).restore(now, kind, batch);
    }

    /// The credits arriving now: at routers' output ports, then at NICs.
    #[inline(always)]
    fn deliver_credits(&mut self, now: Cycle) {
        self.deliver(
            |s| &mut s.credit_wheel,
            now,
            TO_ROUTER,
            // (left to itself LLVM kept this closure out of line, a call per credit:
            // inlined, 0.3-0.7% fewer instructions on the bench configurations)
            #[inline(always)]
            |s, c| {
                let bit = 1u32 << c.vc;
                let op = c.to as usize;
                let out_vc = s.out_vc.at_mut(s.p.lane_index(op, c.vc as usize));
                out_vc.credits += 1;
                if c.tail {
                    out_vc.guard = u32::MAX;
                }
                *s.op_credited.at_mut(op) |= bit;
                if c.tail {
                    *s.op_allocated.at_mut(op) &= !bit;
                    for held in s.op_held.at_mut(op) {
                        *held &= !bit;
                    }
                    s.wake_vc_alloc(op);
                }
            },
        );
        let vcs = self.p.lanes;
        self.deliver(
            |s| &mut s.credit_wheel,
            now,
            TO_ENDPOINT,
            |s, c| {
                let bit = 1u32 << c.vc;
                let node = c.to as usize;
                *s.nic_credits.at_mut(node * vcs + c.vc as usize) += 1;
                *s.nic_credited.at_mut(node) |= bit;
                if c.tail {
                    *s.nic_busy.at_mut(node) &= !bit;
                    *s.nic_start_blocked.at_mut(node) = false;
                    for held in s.nic_held.at_mut(node) {
                        *held &= !bit;
                    }
                }
            },
        );
    }

    /// The flits arriving now: into routers' input ports (stage 1), then into the sinks.
    /// (Neither reads what the other changes, so the order between them does not matter.)
    #[inline]
    fn deliver_arrivals<const PRE: bool, const AGE: bool>(&mut self, now: Cycle) {
        self.deliver(
            |s| &mut s.arrivals,
            now,
            TO_ROUTER,
            |s, a| s.receive::<PRE, AGE>(a.to as usize, a.flit, now),
        );
        self.deliver(|s| &mut s.arrivals, now, TO_ENDPOINT, |s, a| s.eject(a.to as usize, a.flit, now));
    }

    /// Stage 1 of the router: a flit from the link is synchronised and demultiplexed into
    /// its VC buffer; a header is routed (stage 2, `route_header`).
    #[inline]
    fn receive<const PRE: bool, const AGE: bool>(&mut self, ip: usize, mut flit: Flit, now: Cycle) {
        let v = flit.vc() as usize;
        let ivc = self.p.lane_index(ip, v);
        flit.ready = now + self.p.d_sync;
        let (r, port) = *self.ip_place.at(ip);
        let (r, port) = (r as usize, port as usize);
        // (which lanes hold an open message only matters to preemption)
        if PRE && flit.is_tail() {
            *self.ip_open.at_mut(ip) &= !(1 << v);
        }
        if flit.is_head() {
            debug_assert!(self.in_vc.at(ivc).buf.is_empty(), "header into an occupied VC");
            if PRE && !flit.is_tail() {
                *self.ip_open.at_mut(ip) |= 1 << v;
            }
            self.in_vc.at_mut(ivc).packet = flit.packet();
            self.in_vc.at_mut(ivc).resumed = PRE && flit.is_dummy();
            if PRE && v >= self.p.vcs {
                self.preempt(ip, v - self.p.vcs, now);
            }
        } else {
            *self.r_xbar_ports.at_mut(r) |= 1 << port;
        }
        let in_vc = self.in_vc.at_mut(ivc);
        if in_vc.buf.is_empty() {
            if !AGE && flit.is_head() && !self.in_keys.mode.is_age() {
                let pkt = self.packets.get(flit.packet());
                self.in_keys.set_vtick(ip, v, pkt.vtick);
            }
            let key = self.in_keys.key_in::<AGE>(ip, v, now, flit.ready);
            let accelerated = PRE && *self.ip_accel.at(ip) >> v & 1 == 1;
            in_vc.set_front(flit.ready, key, accelerated);
        }
        self.inbuf.push(&mut in_vc.buf, ivc, flit);
        if flit.is_head() {
            self.route_header(ip, v, flit.ready);
        }
        *self.ip_nonempty.at_mut(ip) |= 1 << v;
        *self.work.at_mut(r) += 1;
        self.last_progress = now;
        self.activate_router(r);
    }

    /// Pick a free VC among `free` (non-empty) by the configured policy.
    #[inline]
    pub(crate) fn select_vc(policy: VcSelection, free: u32, rr: &mut RoundRobin) -> usize {
        debug_assert!(free != 0);
        match policy {
            VcSelection::LowestFree => free.trailing_zeros() as usize,
            VcSelection::RoundRobin => rr.select(free, |_| true).unwrap_or(0),
        }
    }

    pub(crate) fn inbuf_len(&self) -> usize {
        self.topo.routers * self.p.ports * self.p.lane_stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (port, lane) has its own record, `lane_place` inverts `lane_index`, and a
    /// port's block is an odd number of records (padding only where the lanes are even).
    #[test]
    fn lane_index_is_one_to_one_with_odd_port_blocks() {
        for (vcs, kind, stride) in [(16, "traditional", 17), (3, "traditional", 3), (4, "preemptive", 9)] {
            let toml = format!(
                "[topology]\nkind = \"mesh\"\nk = 2\nn = 2\n[router]\nvcs = {vcs}\nkind = \"{kind}\"\n\
                 [[traffic]]\nprocess = \"bernoulli\"\nload = 0.1\npattern = {{ kind = \"uniform\" }}\n"
            );
            let sim = Simulation::from_toml(&toml, None).unwrap();
            let p = &sim.p;
            assert_eq!(p.lane_stride, stride);
            let mut seen = vec![false; sim.inbuf_len()];
            for port in 0..sim.topo.routers * p.ports {
                for lane in 0..p.lanes {
                    let i = p.lane_index(port, lane);
                    assert!(!std::mem::replace(&mut seen[i], true), "{port}.{lane} shares record {i}");
                    assert_eq!(p.lane_place(i), (port, lane));
                }
            }
            assert_eq!(sim.in_vc.len(), sim.inbuf_len());
            assert_eq!(sim.out_vc.len(), sim.inbuf_len());
        }
    }
}

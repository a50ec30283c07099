//! The endpoints' state, owned by the endpoints: per node its source queues, the packets
//! it is injecting (one per lane), its credits for the router's input buffers, its
//! injection scheduler, and the NIC model's state (document 003 §3.3, document 000 §3.2,
//! document 004 §3-4).

use super::nic::{Nic, NicParams};
use super::PathChoice;
use crate::config::SchedulerConfig;
use crate::config::VcSelection;
use crate::control::Agents;
use crate::ids::{LinkEnd, MessageId, PacketId};
use crate::routing::all_vcs;
use crate::sched::{KeyMode, RateKeys, RoundRobin, SchedTables, Scheduler};
use crate::units::{Clock, Cycle};
use std::collections::VecDeque;

/// What the endpoints need to know of the network they inject into, resolved.
#[derive(Clone, Debug)]
pub(crate) struct EndpointParams {
    /// The router's VCs, and its lanes per port (the preemptive router: VCs and their
    /// extra buffers).
    pub vcs: usize,
    pub lanes: usize,
    pub preemptive: bool,
    /// Per traffic class (`TrafficClass::index`): the VCs it may be given, and its own.
    pub class_vcs: [u32; 3],
    pub home_vcs: [u32; 3],
    pub vc_selection: VcSelection,
    /// A packet starts only on a lane with a credit (`config::EndpointConfig::vc_needs_credit`).
    pub vc_needs_credit: bool,
    /// Per-class source queues served by priority (else one FIFO).
    pub per_class_queues: bool,
    /// A source queue per VC (`SourceQueues::PerVc`, `vc_queues.rs`), instead of the above.
    pub per_vc_queues: bool,
    /// The master seed (`per_vc_queues`: the VC each real-time connection is bound to).
    pub seed: u64,
    /// Packets the ideal endpoint injects at once.
    pub concurrent_packets: u32,
    /// A lane is free once its packet's tail has been sent, not when its credit returns
    /// (`config::VcRelease`).
    pub release_on_send: bool,
    /// Cycles from an injected flit's send to its router: the endpoint's output stage
    /// (`[endpoint] output_stage`) plus the injection link.
    pub link: Cycle,
    /// Delay of the credits sent back on ejection, cycles.
    pub credit: Cycle,
}

/// A packet a NIC is injecting (one per VC).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Injecting {
    pub packet: PacketId,
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

/// The endpoint model of a run, matched once per cycle phase: the functions of the cycle
/// loop are compiled for it (`const NIC: bool`) and test nothing about the other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EndpointModel {
    /// No host costs: messages go straight from the source queues to the wire.
    Ideal,
    /// A VIA NIC or an InfiniBand HCA (`nic/`): doorbells or QPs, DMA, NIC buffers.
    Nic,
}

/// Every endpoint of the network (struct of arrays, per node and per node and lane).
pub(crate) struct Endpoints {
    pub p: EndpointParams,
    /// Per node, 3 source queues (one per class, or only the first as a FIFO).
    pub(crate) nic_queue: Vec<VecDeque<MessageId>>,
    /// `per_vc_queues` (`vc_queues.rs`): per node and regular VC, the real-time streams'
    /// queue bound to it (empty otherwise); and per node, the VCs whose queue holds a message.
    pub(crate) vc_queue: Vec<VecDeque<MessageId>>,
    pub(crate) vc_queued: Vec<u32>,
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
    pub(crate) nic_p: NicParams,
    /// Per node: the NIC model's state (empty for the ideal endpoint).
    pub(crate) nics: Vec<Nic>,
    /// The control agents (admission, congestion control) every endpoint model consults.
    pub(crate) agents: Agents,
    /// Which of several paths each message takes.
    pub(crate) path_choice: PathChoice,
    /// The flow CNPs belong to (traffic outside the sources: `flows`' last row).
    pub(crate) cnp_flow: u32,
    /// Per source: its reserved flow's IDT in rate-control ticks (0: unreserved).
    pub(crate) nic_idt: Vec<u64>,
    /// Admission control: per flow whose connection is being set up, its source queue,
    /// class and the messages set aside from it until the ACK (or the give-up).
    pub(crate) held: std::collections::HashMap<u32, (usize, usize, Vec<crate::ids::MessageId>)>,
    /// Per node: the router port (router * ports + port) it injects into
    /// (`Topology::attach`): its input side receives the node's flits.
    pub(crate) attach_port: Vec<LinkEnd>,
    /// Per node: the router port it ejects from (`Topology::eject`; `attach_port` but on a
    /// fly): its output side sends the node its flits and gets the node's credits.
    pub(crate) eject_port: Vec<LinkEnd>,
}

impl Endpoints {
    /// Admission control runs (document 000 §4.1): each node's injection tables follow
    /// its link's reservations from now on, if the injection scheduler (`sched_cfg`) has
    /// weights. `lanes`: the (real-time, best-effort) VCs. The tables live with the
    /// reservations (`Reservations::hca_tables`), which change them.
    pub(crate) fn follow_reservations(
        &self,
        sched_cfg: &SchedulerConfig,
        clock: &Clock,
        lanes: [u32; 2],
    ) -> Option<Box<crate::sched::PortTables>> {
        let weighted =
            matches!(sched_cfg, SchedulerConfig::Wrr { .. } | SchedulerConfig::VlArbitration { .. });
        let unit = clock.bytes_to_flits(64.0);
        let nodes = self.nic_sched.len();
        crate::sched::PortTables::new(&self.nic_tables, weighted, lanes, unit, self.p.vcs, nodes)
            .map(Box::new)
    }

    /// This run's endpoint model.
    #[inline]
    pub(crate) fn model(&self) -> EndpointModel {
        if self.nic_p.is_nic() {
            EndpointModel::Nic
        } else {
            EndpointModel::Ideal
        }
    }

    /// Each node's router port of `at` (`Topology::attach` or `eject`) as a link's end.
    fn ports(topo: &crate::topology::Topology, at: &[(crate::ids::RouterId, u32)]) -> Vec<LinkEnd> {
        at.iter().map(|&(r, p)| LinkEnd::router_port(r.0 * topo.ports as u32 + p)).collect()
    }

    /// The endpoints of `nodes` nodes, injecting under scheduler `sched_cfg`, with NIC model
    /// `nic_p`, attached at the router ports `topo` gives (`lane_depth`: the router's input
    /// buffer depth of each lane, its credits), and per flow the IDT `nic_idt`.
    #[allow(clippy::too_many_arguments)] // one per part the build resolved
    pub(crate) fn new(
        p: EndpointParams,
        nodes: usize,
        sched_cfg: &SchedulerConfig,
        clock: &Clock,
        nic_p: NicParams,
        agents: Agents,
        path_choice: PathChoice,
        topo: &crate::topology::Topology,
        lane_depth: impl Fn(usize) -> u32,
        nic_idt: Vec<u64>,
    ) -> Endpoints {
        let (vcs, lanes) = (p.vcs, p.lanes);
        Endpoints {
            nic_queue: vec![VecDeque::new(); nodes * 3],
            vc_queue: vec![VecDeque::new(); if p.per_vc_queues { nodes * vcs } else { 0 }],
            vc_queued: vec![0; if p.per_vc_queues { nodes } else { 0 }],
            nic_pkt: vec![Injecting::default(); nodes * lanes],
            nic_sending: vec![0; nodes],
            nic_credits: (0..nodes * lanes).map(|i| lane_depth(i % lanes)).collect(),
            nic_credited: vec![all_vcs(lanes as u32); nodes],
            nic_class: vec![0; nodes * lanes],
            nic_held: vec![[0; 3]; nodes],
            nic_sending_class: vec![[0; 3]; nodes],
            nic_start_blocked: vec![false; nodes],
            nic_busy: vec![0; nodes],
            nic_rr: vec![RoundRobin::default(); nodes],
            // The simple endpoint keeps no injection block: its link is its own.
            nic_sched: vec![Scheduler::build(sched_cfg, 1); nodes],
            nic_tables: SchedTables::build(sched_cfg, clock, vcs, p.preemptive, 1),
            nic_keys: RateKeys::new(KeyMode::of(sched_cfg), nodes, lanes),
            nics: if nic_p.is_nic() { vec![Nic::new(&nic_p, vcs); nodes] } else { Vec::new() },
            nic_idt,
            nic_p,
            agents,
            path_choice,
            cnp_flow: 0,
            nic_active: Vec::with_capacity(nodes),
            nic_is_active: vec![false; nodes],
            attach_port: Self::ports(topo, &topo.attach),
            eject_port: Self::ports(topo, &topo.eject),
            held: std::collections::HashMap::new(),
            p,
        }
    }
}

//! NIC models (document 003 §3.3, document 000 §3.2, document 004 §3–4): what happens
//! between an application posting a send and the first flit reaching the wire, and between
//! the last flit arriving and the receiving application seeing the message.
//!
//! Send side, per node:
//! 1. **Host queues.** A VIA send posts a descriptor and rings a doorbell; an HCA consumer
//!    posts a WQE to a QP. The traditional NIC keeps one FCFS doorbell queue; the QoS NIC
//!    one per traffic class served by priority (prioritized doorbells / prioritized QP
//!    scheduling, FCFS within a class so a class is never reordered). A queue head whose
//!    NIC buffer has no room may be passed over (`skip_blocked`). With per-VC queues a
//!    real-time connection's doorbells are for its own VC buffer (`vc_queues.rs`), so a
//!    frame's packets wait in their VC's buffer and other connections' doorbells go on.
//!    GM-style send queues per flow with round robin, interleaved round robin or rate
//!    control are in `send_queues`.
//! 2. **DMA.** When the host DMA engine is free the firmware takes the next packet and
//!    programs the DMA: VIA moves the descriptor, then the data (two transfers); the HCA
//!    on the system bus one (`dma`). Buffer room for the packet is taken when the DMA is
//!    programmed.
//! 3. **NIC buffer.** Split into the router's C VCs (VC-aware buffer management), each an
//!    FCFS queue of packets; or one shared FIFO (the traditional NIC).
//! 4. **Injection.** Flit-level: every VC buffer with a packet whose router VC is free
//!    sends, multiplexed flit by flit by the hardware scheduler (VirtualClock, the HCA's
//!    VL arbitration, ...) with no DMA cost per flit. Message-level: the scheduler picks
//!    one packet and a send DMA moves it whole, paying `message_setup` each time. A send
//!    CQE is posted when a message's last flit has gone.
//!
//! Receive side: each arriving packet is moved to the host by the receive DMA engine (FCFS,
//! same timing as the send side); VIA then writes the descriptor's status (a second
//! transfer) once the message is whole; the message is delivered, and a receive CQE
//! posted, when that completes. NIC memory is taken to be large enough to stage arriving
//! packets, so the receive side adds latency but never back-pressure.

pub mod dma;
pub mod rate_control;
pub mod send_queues;

use super::{Endpoints, Injecting};
use crate::config::{Config, Injection, NicBuffer, NicModel, SourceQueues, TrafficClass};
use crate::error::ConfigError;
use crate::flit::Signal;
use crate::ids::{MessageId, PacketId};
use crate::net::Net;
use crate::sched::vc_choice::select_vc;
use crate::units::{Clock, Cycle};
use dma::DmaTiming;
use rate_control::TICKS_PER_CYCLE;
use send_queues::SendQueues;
use std::collections::VecDeque;

/// The NIC configuration resolved into cycles (one per simulation).
#[derive(Clone, Debug)]
pub struct NicParams {
    pub model: NicModel,
    pub queues: SourceQueues,
    pub skip_blocked: bool,
    pub shared_buffer: bool,
    /// Flits of room per VC buffer, or of the whole shared buffer.
    pub buffer_room: u32,
    pub message_level: bool,
    pub message_setup: Cycle,
    pub dma: DmaTiming,
    /// VIA: a descriptor DMA before a send's data and a status write after a receive.
    pub descriptor: bool,
    /// Rate control's dispatch period T, cycles.
    pub period: Cycle,
    /// The NIC's peak achievable bandwidth Bpeak: a longest packet per T, b/s.
    pub peak_bps: f64,
}

impl NicParams {
    /// Resolve `cfg.endpoint` for packets of at most `max_packet` flits; problems go to `errs`.
    pub fn build(cfg: &Config, clock: &Clock, max_packet: u32, errs: &mut Vec<ConfigError>) -> NicParams {
        let e = &cfg.endpoint;
        let vcs = cfg.router.vcs.max(1);
        let max_packet = max_packet.max(1);
        let nic = e.model != NicModel::Ideal;
        if !nic {
            for (field, set) in [
                (
                    "queues",
                    matches!(
                        e.queues,
                        SourceQueues::RoundRobin | SourceQueues::Interleaved | SourceQueues::RateControl
                    ),
                ),
                ("injection", e.injection == Injection::Message),
                ("buffer", e.buffer == NicBuffer::Shared),
                ("buffer_flits", e.buffer_flits.is_some()),
            ] {
                if set {
                    errs.push(ConfigError::new(
                        format!("endpoint.{field}"),
                        "needs a NIC model: set endpoint.model to \"via\" or \"hca\" (the ideal endpoint has no NIC)",
                    ));
                }
            }
        }
        if e.queues == SourceQueues::PerVc {
            if nic && e.buffer == NicBuffer::Shared {
                errs.push(ConfigError::new(
                    "endpoint.buffer",
                    "must be \"per_vc\" with endpoint.queues = \"per_vc\" (a real-time connection's \
                     doorbells are bound to its VC's NIC buffer), got \"shared\"",
                ));
            }
            for (field, set) in [("agent", e.agent.is_some()), ("admission", e.admission.is_some())] {
                if set {
                    errs.push(ConfigError::new(
                        format!("endpoint.{field}"),
                        "is not available with endpoint.queues = \"per_vc\": use \"fifo\" or \"per_class\"",
                    ));
                }
            }
        }
        let d = &e.dma;
        if !(d.bandwidth.bits_per_second > 0.0 && d.bandwidth.bits_per_second.is_finite()) {
            errs.push(ConfigError::new(
                "endpoint.dma.bandwidth",
                format!("must be > 0, got {}", d.bandwidth),
            ));
        }
        if d.descriptor_bytes > 1 << 20 {
            errs.push(ConfigError::new(
                "endpoint.dma.descriptor_bytes",
                format!("must be at most 1048576, got {}", d.descriptor_bytes),
            ));
        }
        let setup_limit = 1_000_000;
        let check_setup = |errs: &mut Vec<ConfigError>, path: &str, c: Cycle| {
            if c > setup_limit {
                errs.push(ConfigError::new(
                    path,
                    format!("must be at most {setup_limit} cycles, got {c} cycles"),
                ));
            }
        };
        check_setup(errs, "endpoint.dma.setup", clock.duration_cycles(d.setup));
        let message_setup =
            e.message_setup.map_or(clock.duration_cycles(d.setup), |s| clock.duration_cycles(s));
        check_setup(errs, "endpoint.message_setup", message_setup);
        let dma = if d.bandwidth.bits_per_second > 0.0 && d.bandwidth.bits_per_second.is_finite() {
            DmaTiming::new(d, clock, max_packet)
        } else {
            DmaTiming {
                setup: 0,
                cycles_per_flit: 0.0,
                descriptor: 0,
                flit_ready: vec![0; max_packet as usize],
            }
        };
        let buffers = if e.buffer == NicBuffer::Shared { 1 } else { vcs };
        let total = e.buffer_flits.unwrap_or(2 * max_packet * vcs);
        let buffer_room = total / buffers;
        if nic && buffer_room < max_packet {
            errs.push(ConfigError::new(
                "endpoint.buffer_flits",
                format!(
                    "must give every {} room for a longest packet ({max_packet} flits): at least {}, got {total}",
                    if buffers == 1 { "buffer" } else { "VC buffer" },
                    max_packet * buffers
                ),
            ));
        }
        // T: the NIC cannot dispatch longest packets faster than the link or the DMA moves them.
        let wire = max_packet as Cycle;
        let dma_time = if nic { dma.data(max_packet) } else { 0 };
        let period = match e.rate_period {
            Some(t) => {
                let c = clock.duration_cycles(t);
                if c == 0 || c > 1 << 40 {
                    errs.push(ConfigError::new(
                        "endpoint.rate_period",
                        format!("must be between 1 cycle and 2^40 cycles, got {c} cycles"),
                    ));
                }
                c.max(1)
            }
            None => wire.max(dma_time),
        };
        let peak_bps = (max_packet as f64 * clock.flit_bits as f64) / clock.cycles_to_seconds(period as f64);
        NicParams {
            model: e.model,
            queues: e.queues,
            skip_blocked: e.skip_blocked,
            shared_buffer: e.buffer == NicBuffer::Shared,
            buffer_room,
            message_level: e.injection == Injection::Message,
            message_setup,
            dma,
            descriptor: e.model == NicModel::Via,
            period,
            peak_bps,
        }
    }

    pub fn is_nic(&self) -> bool {
        self.model != NicModel::Ideal
    }

    /// Flow-based send queues (GM style) rather than doorbell queues.
    pub fn flow_queues(&self) -> bool {
        matches!(
            self.queues,
            SourceQueues::RoundRobin | SourceQueues::Interleaved | SourceQueues::RateControl
        )
    }

    /// A reserved flow's IDT in rate-control ticks: idt = T · Bpeak / Breq (document 004
    /// §3.4), which is a longest packet's time at the reserved rate; or `idt_t` periods.
    pub fn idt_ticks(
        &self,
        reserve_flits_per_cycle: Option<f64>,
        idt_t: Option<f64>,
        max_packet: u32,
    ) -> u64 {
        match (idt_t, reserve_flits_per_cycle) {
            (Some(k), _) => ((k * self.period as f64) * TICKS_PER_CYCLE as f64).round().max(1.0) as u64,
            (None, Some(r)) => qosnet_rate::idt_ticks(max_packet as f64, r, TICKS_PER_CYCLE as f64),
            (None, None) => 0,
        }
    }
}

/// A packet in a NIC buffer, its data arriving from `data_start` on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Buffered {
    pub packet: PacketId,
    pub data_start: Cycle,
}

/// No VC chosen yet (the shared buffer chooses at injection).
const ANY_VC: u8 = u8::MAX;
/// `doorbell_pick`'s queue for a real-time connection's doorbell (per-VC queues).
const STREAM_DOORBELL: usize = usize::MAX;
/// Message-level injection: no packet being sent.
const NO_VC: u8 = u8::MAX;

/// One node's NIC state.
#[derive(Clone, Debug)]
pub(crate) struct Nic {
    /// The host DMA engine (send) is busy until then.
    pub dma_free: Cycle,
    /// Rate control: no dispatch before then (one per T).
    pub next_dispatch: Cycle,
    /// The receive DMA engine is busy until then.
    pub rx_free: Cycle,
    /// Free flits per VC buffer (or `[0]`: the shared buffer).
    pub room: Vec<u32>,
    /// Per VC buffer (or `[0]`), its packets in FCFS order.
    pub buffered: Vec<VecDeque<Buffered>>,
    /// VC buffers holding a packet not yet started.
    pub buffered_mask: u32,
    /// GM-style send queues (flow-based disciplines).
    pub queues: SendQueues,
    /// Doorbells queued per class (bounds the head-of-line skipping scan).
    pub doorbells: [u32; 3],
    /// Message-level injection: the lane being sent, or `NO_VC`.
    pub sending_lane: u8,
    pub send_cqes: u64,
    pub recv_cqes: u64,
    /// Packets the host DMA moved into the NIC, and the cycles it was busy doing so.
    pub dma_packets: u64,
    pub dma_busy: Cycle,
}

impl Nic {
    pub fn new(p: &NicParams, vcs: usize) -> Nic {
        let buffers = if p.shared_buffer { 1 } else { vcs };
        Nic {
            dma_free: 0,
            next_dispatch: 0,
            rx_free: 0,
            room: vec![p.buffer_room; buffers],
            buffered: vec![VecDeque::new(); buffers],
            buffered_mask: 0,
            queues: SendQueues::new(p.queues),
            doorbells: [0; 3],
            sending_lane: NO_VC,
            send_cqes: 0,
            recv_cqes: 0,
            dma_packets: 0,
            dma_busy: 0,
        }
    }
}

impl Endpoints {
    /// Queue message `m` from source `flow` at node `n`'s NIC.
    pub(crate) fn nic_post(&mut self, net: &mut Net, n: usize, m: MessageId, now: Cycle) {
        let msg = net.messages.get(m);
        if self.nic_p.flow_queues() {
            let idt = self.nic_idt.get(msg.flow as usize).copied().filter(|&t| t > 0);
            let (flow, dst) = (msg.flow, msg.dst);
            // (the send queues are the rate-control scheduler's, which names messages and
            // destinations by plain handles)
            self.nics[n].queues.post(flow, dst.0, idt, m.0, now);
        } else if self.p.per_vc_queues && msg.class == TrafficClass::RealTime {
            // (document 003 §3.3.1, §4.2: a connection's doorbells are for its VC's buffer)
            let flow = msg.flow;
            self.nics[n].doorbells[TrafficClass::RealTime.index()] += 1;
            self.queue_on_vc(n, flow, m);
        } else {
            let q = self.source_queue(n, msg.class);
            self.nics[n].doorbells[msg.class.index()] += 1;
            self.nic_queue[q].push_back(m);
        }
        self.activate(n);
    }

    /// Whether node `n`'s NIC has anything left to do.
    pub(crate) fn nic_has_work<const NIC: bool>(&self, n: usize) -> bool {
        self.nic_sending[n] != 0
            || self.nic_queue[n * 3..n * 3 + 3].iter().any(|q| !q.is_empty())
            || (self.p.per_vc_queues && self.vc_queued[n] != 0)
            || (NIC && (self.nics[n].buffered_mask != 0 || self.nics[n].queues.pending() > 0))
    }

    /// The NIC model's send side this cycle: the firmware dispatches at most one packet
    /// into the NIC buffer, then buffered packets start on free VCs.
    pub(crate) fn nic_send_side(&mut self, net: &mut Net, n: usize, now: Cycle) {
        let nic = &self.nics[n];
        if nic.dma_free <= now && nic.next_dispatch <= now {
            self.nic_dispatch(net, n, now);
        }
        if self.nics[n].buffered_mask != 0 {
            self.nic_start(net, n, now);
        }
    }

    /// The firmware picks the next packet by the host-queue discipline and programs the DMA.
    fn nic_dispatch(&mut self, net: &mut Net, n: usize, now: Cycle) {
        let (m, vc, pick) = if self.nic_p.flow_queues() {
            let Some(pick) = self.nics[n].queues.pick(now) else { return };
            let msg = net.messages.get(MessageId(pick.message));
            if msg.packetized == 0
                && msg.signal == Signal::Data
                && !self.agents.may_start(n, msg.flow, msg.dst.0, now)
            {
                let flow = msg.flow;
                self.held_back(net, n, flow, now);
                return;
            }
            // Each data packet waits for a pacing agent's next send (`paced`).
            if paced(msg) && !self.agents.may_send(msg.flow, now) {
                let flow = msg.flow;
                self.held_back(net, n, flow, now);
                return;
            }
            let size = msg.packet_flits.min(msg.size - msg.packetized);
            // A head without room waits: flows are not reordered (document 004 §4.2).
            let Some(vc) = self.nic_buffer_for(n, msg.class.index(), size) else { return };
            (MessageId(pick.message), vc, Some(pick))
        } else {
            let Some((q, i, vc)) = self.doorbell_pick(net, n) else { return };
            if q == STREAM_DOORBELL {
                // A real-time connection's doorbell, on its VC (`i`); per-VC queues take no
                // control agent (`NicParams::build`).
                let queue = n * self.p.vcs + i;
                let m = *self.vc_queue[queue].front().expect("a stream doorbell without a message");
                let msg = net.messages.get(m);
                if msg.packetized + msg.packet_flits.min(msg.size - msg.packetized) == msg.size {
                    self.nics[n].doorbells[TrafficClass::RealTime.index()] -= 1;
                    self.vc_queue[queue].pop_front();
                    if self.vc_queue[queue].is_empty() {
                        self.vc_queued[n] &= !(1 << i);
                    }
                }
                (m, vc, None)
            } else {
                let m = self.nic_queue[q][i];
                let msg = net.messages.get(m);
                if msg.packetized == 0
                    && msg.signal == Signal::Data
                    && !self.agents.may_start(n, msg.flow, msg.dst.0, now)
                {
                    // A connection being set up (document 000 §4.1) has its own QP with nothing
                    // the firmware may take yet: it is set aside, and the class's other QPs go
                    // on from the next pick.
                    let (flow, class) = (msg.flow, msg.class.index());
                    if !self.set_aside(net, q, i, class, m) {
                        self.held_back(net, n, flow, now);
                    }
                    return;
                }
                if paced(msg) && !self.agents.may_send(msg.flow, now) {
                    let flow = msg.flow;
                    self.held_back(net, n, flow, now);
                    return;
                }
                if msg.packetized + msg.packet_flits.min(msg.size - msg.packetized) == msg.size {
                    self.nics[n].doorbells[msg.class.index()] -= 1;
                    self.nic_queue[q].remove(i);
                }
                (m, vc, None)
            }
        };
        let vc = if vc == 0 { ANY_VC } else { select_vc(self.p.vc_selection, vc, &mut self.nic_rr[n]) as u8 };
        let msg = net.messages.get(m);
        let first = msg.packetized == 0;
        if first && msg.signal == Signal::Data && self.agents.started(n, msg.flow, now) {
            // The connection's last message: its last packet tears it down.
            net.messages.get_mut(m).signal = Signal::Teardown;
        }
        let msg = net.messages.get(m);
        let (flow, data) = (msg.flow, paced(msg));
        let (packet, size, last) = net.cut_packet(m);
        if data {
            self.agents.packet_sent(flow, size, now);
        }
        if let Some(pick) = pick {
            self.nics[n].queues.dispatched(pick, last);
        }
        let p = &self.nic_p;
        let data_start = now + if p.descriptor && first { p.dma.descriptor } else { 0 };
        let busy_until = data_start + p.dma.data(size);
        let period = p.period;
        let rate_control = p.queues == SourceQueues::RateControl;
        let nic = &mut self.nics[n];
        nic.dma_busy += busy_until - now;
        nic.dma_packets += 1;
        nic.dma_free = busy_until;
        if rate_control {
            nic.next_dispatch = now + period;
        }
        let b = if vc == ANY_VC { 0 } else { vc as usize };
        nic.room[b] -= size;
        nic.buffered[b].push_back(Buffered { packet, data_start });
        nic.buffered_mask |= 1 << b;
    }

    /// Doorbell queues (document 003 §3.3.1, document 000 §3.2): the first message, in
    /// priority order if per class, whose packet fits its NIC buffer; with `skip_blocked`
    /// a blocked head is passed over (a class's messages share its buffers, so a class is
    /// never reordered). With per-VC queues a real-time connection's doorbells are bound to
    /// its VC's buffer, and the class's first doorbell whose VC buffer has room goes ("if
    /// the NIC buffer (virtual channel) corresponding to a doorbell is full, the scheduler
    /// can pick up the next doorbell", §3.3.1; a connection is never reordered). Returns
    /// (queue, position, VC buffers), or (`STREAM_DOORBELL`, VC, its buffer).
    fn doorbell_pick(&self, net: &Net, n: usize) -> Option<(usize, usize, u32)> {
        let skip = self.nic_p.skip_blocked;
        let per_class = self.p.per_class_queues;
        // Classes with a doorbell queued: the scan ends once each of them is blocked, so a
        // long backlog of one blocked class is not walked every cycle.
        let queued = self.nics[n].doorbells;
        let present = (0..3).filter(|&c| queued[c] > 0).fold(0u8, |m, c| m | 1 << c);
        let mut blocked = 0u8;
        for q in n * 3..n * 3 + 3 {
            if self.p.per_vc_queues && q == n * 3 + TrafficClass::RealTime.index() {
                let rt = TrafficClass::RealTime.index();
                if present & (1 << rt) == 0 {
                    continue;
                }
                if let Some(vc) = self.stream_doorbell(net, n, skip) {
                    return Some((STREAM_DOORBELL, vc, 1 << vc));
                }
                blocked |= 1 << rt;
                if !skip || blocked & present == present {
                    return None;
                }
                continue;
            }
            for (i, &m) in self.nic_queue[q].iter().enumerate() {
                let msg = net.messages.get(m);
                let class = msg.class.index();
                if blocked & (1 << class) == 0 {
                    let size = msg.packet_flits.min(msg.size - msg.packetized);
                    if let Some(vc) = self.nic_buffer_for(n, class, size) {
                        return Some((q, i, vc));
                    }
                    blocked |= 1 << class;
                }
                if !skip || blocked & present == present {
                    return None;
                }
                if per_class {
                    // the rest of this queue is the same, blocked class
                    break;
                }
            }
        }
        None
    }

    /// The VC of node `n`'s first real-time doorbell (the oldest at the front of a
    /// connection's VC queue) whose packet fits its VC buffer; with `skip` false, only the
    /// very first is looked at. The fronts are in post order within a VC, so the oldest
    /// front is the class's first doorbell, and the oldest that fits is the first the
    /// firmware reaches when it passes over full buffers.
    fn stream_doorbell(&self, net: &Net, n: usize, skip: bool) -> Option<usize> {
        let nic = &self.nics[n];
        let mut first: Option<(Cycle, MessageId, usize, bool)> = None;
        for vc in crate::sched::bits(self.vc_queued[n]) {
            let m = *self.vc_queue[n * self.p.vcs + vc].front().expect("vc_queued out of step");
            let msg = net.messages.get(m);
            let fits = nic.room[vc] >= msg.packet_flits.min(msg.size - msg.packetized);
            if (skip && !fits) || first.is_some_and(|(c, f, _, _)| (c, f.0) <= (msg.created, m.0)) {
                continue;
            }
            first = Some((msg.created, m, vc, fits));
        }
        first.filter(|f| f.3).map(|f| f.2)
    }

    /// The buffers a packet of `class` and `size` flits may go to: `Some(0)` for the
    /// shared buffer if it has room, else the VC buffers of the class with room (its own
    /// VCs, and idle ones, preferred); `None` if none has room.
    fn nic_buffer_for(&self, n: usize, class: usize, size: u32) -> Option<u32> {
        let nic = &self.nics[n];
        if self.nic_p.shared_buffer {
            return (nic.room[0] >= size).then_some(0);
        }
        let mut fits = 0u32;
        for v in crate::sched::bits(self.p.class_vcs[class]) {
            if nic.room[v] >= size {
                fits |= 1 << v;
            }
        }
        if fits == 0 {
            return None;
        }
        let home = fits & self.p.home_vcs[class];
        let fits = if home != 0 { home } else { fits };
        let idle = fits & !nic.buffered_mask & !self.nic_busy[n];
        Some(if idle != 0 { idle } else { fits })
    }

    /// Buffered packets whose router VC is free start injection (the shared buffer: in
    /// order, each on a free VC of its class). In the preemptive router a packet that
    /// outranks the one holding its VC takes the VC's extra buffer (document 003 §3.2.1).
    fn nic_start(&mut self, net: &mut Net, n: usize, now: Cycle) {
        let vcs = self.p.vcs;
        if self.nic_p.shared_buffer {
            while let Some(&b) = self.nics[n].buffered[0].front() {
                let class = net.packets.get(b.packet).class.index();
                let free = self.p.class_vcs[class] & !self.nic_busy[n];
                if free == 0 {
                    break;
                }
                let home = free & self.p.home_vcs[class];
                let free = if home != 0 { home } else { free };
                let lane = select_vc(self.p.vc_selection, free, &mut self.nic_rr[n]);
                self.nics[n].buffered[0].pop_front();
                self.nic_begin(net, n, lane, b, now);
            }
            if self.nics[n].buffered[0].is_empty() {
                self.nics[n].buffered_mask = 0;
            }
            return;
        }
        let preemptive = self.p.lanes > vcs;
        for v in crate::sched::bits(self.nics[n].buffered_mask) {
            let b = *self.nics[n].buffered[v].front().expect("buffered mask out of step");
            let lane = if self.nic_busy[n] & (1 << v) == 0 {
                v
            } else if preemptive
                && self.nic_busy[n] & (1 << (vcs + v)) == 0
                && (net.packets.get(b.packet).class.index() as u8) < self.nic_class[n * self.p.lanes + v]
            {
                vcs + v
            } else {
                continue;
            };
            let nic = &mut self.nics[n];
            nic.buffered[v].pop_front();
            if nic.buffered[v].is_empty() {
                nic.buffered_mask &= !(1 << v);
            }
            self.nic_begin(net, n, lane, b, now);
        }
    }

    /// Packet `b` starts injection on `lane`.
    fn nic_begin(&mut self, net: &mut Net, n: usize, lane: usize, b: Buffered, now: Cycle) {
        let lanes = self.p.lanes;
        let pkt = net.packets.get(b.packet);
        let (class, vtick, size, flow) = (pkt.class, pkt.vtick, pkt.size, pkt.flow);
        self.hold_nic_lane(n, lane, class.index() as u8);
        self.nic_keys.set_vtick(n, lane, vtick, flow);
        let start = b.data_start.max(now);
        let key = self.nic_keys.key(n, lane, start, start);
        let avail = b.data_start + self.nic_p.dma.flit(0);
        self.nic_pkt[n * lanes + lane] =
            Injecting { packet: b.packet, seq: 0, size, start, key, data_start: b.data_start, avail };
    }

    /// Message-level injection (document 003 §3.3.1): only one packet goes at a time; when
    /// none is going, the scheduler picks one and the send DMA's set-up is paid. Returns
    /// the lanes that may send this cycle.
    pub(crate) fn message_level_lanes<const HOOK: bool>(
        &mut self,
        n: usize,
        sending: u32,
        now: Cycle,
        res: &crate::control::Reservations,
    ) -> u32 {
        let lane = self.nics[n].sending_lane;
        if lane != NO_VC {
            return sending & (1 << lane);
        }
        // A VC whose extra buffer holds a preempting message waits for it (§3.2.1).
        let sending = sending & !(sending >> self.p.vcs);
        let vcs = self.p.lanes;
        // Pick among packets whose header is in the NIC; the DMA set-up follows the choice.
        let Some(v) = self.select_lane::<true, HOOK>(n, sending, now, res) else {
            return 0;
        };
        self.nics[n].sending_lane = v as u8;
        let setup = self.nic_p.message_setup;
        let p = &mut self.nic_pkt[n * vcs + v];
        // The remaining flits stream behind the header at the DMA rate from then on.
        let shift = (now + setup).saturating_sub(p.avail);
        p.data_start += shift;
        p.avail += shift;
        1 << v
    }

    /// A flit left node `n`'s NIC from `lane`: its buffer space frees; at a packet's tail
    /// the message-level sender is free again, and at a message's last flit a send CQE is
    /// posted.
    pub(crate) fn nic_flit_sent(
        &mut self,
        net: &mut Net,
        n: usize,
        lane: usize,
        packet: PacketId,
        tail: bool,
    ) {
        let b = if self.nic_p.shared_buffer { 0 } else { lane % self.p.vcs };
        self.nics[n].room[b] += 1;
        if !tail {
            return;
        }
        if self.nics[n].sending_lane as usize == lane {
            self.nics[n].sending_lane = NO_VC;
        }
        let pkt = net.packets.get(packet);
        let (m, size) = (pkt.message, pkt.size as u32);
        let msg = net.messages.get_mut(m);
        msg.sent += size;
        if msg.sent == msg.size {
            let (flow, signal) = (msg.flow, msg.signal);
            self.nics[n].send_cqes += 1;
            net.obs.send_completed(flow);
            self.message_sent(n, flow, signal);
        }
    }

    /// A packet of `flits` flits arrived whole at node `n` at `now`: the receive DMA moves
    /// it to the host, then (VIA, at a message's last packet) writes the descriptor status.
    /// Returns when that is done.
    pub(crate) fn nic_receive(&mut self, n: usize, flits: u32, message_done: bool, now: Cycle) -> Cycle {
        let p = &self.nic_p;
        let nic = &mut self.nics[n];
        let mut done = nic.rx_free.max(now) + p.dma.data(flits);
        if message_done && p.descriptor {
            done += p.dma.descriptor;
        }
        nic.rx_free = done;
        if message_done {
            nic.recv_cqes += 1;
        }
        done
    }

    /// Send and receive CQEs posted so far at `node` (the HCA's completion queue; the
    /// credit-based congestion control counts them).
    pub(crate) fn completions(&self, node: usize) -> (u64, u64) {
        self.nics.get(node).map_or((0, 0), |n| (n.send_cqes, n.recv_cqes))
    }
}

/// Whether a pacing agent paces `msg`'s packets: data, not the control class (the CNPs'
/// flow row is shared by every node).
#[inline]
fn paced(msg: &crate::flit::Message) -> bool {
    !msg.signal.is_signalling() && msg.class != TrafficClass::Control
}

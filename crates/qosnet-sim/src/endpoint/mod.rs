//! Simple endpoints (the NIC issue replaces them with NIC and HCA models): source queues
//! per node (one FIFO, or one per class served by priority), messages cut into packets and
//! packets into flits; up to `concurrent_packets` packets are injected at once, each on a
//! VC its class may use, multiplexed on the link one flit per cycle by the injection
//! scheduler (the same schedulers as the router's). A sink consumes one flit per cycle per
//! link and returns its credit.

mod congestion;
mod drb;
pub mod nic;
mod path_choice;
mod state;
mod vc_queues;

pub(crate) use path_choice::PathChoice;

pub(crate) use state::{EndpointModel, EndpointParams, Endpoints, Injecting};

use crate::config::TrafficClass;
use crate::control::{HopAction, Reply, RouterStatus};
use crate::flit::{Flit, Message, Signal, HEAD, TAIL};
use crate::ids::{MessageId, NodeId, PacketId};
use crate::links::Control;
use crate::metrics::trace::Hop;
use crate::net::Net;
use crate::sched::bits;
use crate::sched::vc_choice::{select_vc, victim};
use crate::unchecked::At;
use crate::units::Cycle;

/// A message to create: who sends it where, its class, size and how it is cut, and the
/// flow (row of the per-flow table), video frame (or `u32::MAX`) and mix phase it is of.
#[derive(Clone, Copy, Debug)]
pub(crate) struct NewMessage {
    pub src: NodeId,
    pub dst: NodeId,
    pub class: TrafficClass,
    pub size: u32,
    pub packet_flits: u32,
    pub vtick: u32,
    pub flow: u32,
    pub frame: u32,
    pub phase: usize,
}

impl Endpoints {
    /// Create message `m` at `now` and queue it at its source; it is measured if created
    /// in the measurement window. Its flow's agent hears of it (a new connection probes).
    /// (Always inlined: with a second caller, application models' out-of-line step, LLVM
    /// stopped inlining it into the sources' hot path, +0.4% instructions on 1-flit meshes.)
    #[inline(always)]
    pub(crate) fn create_message<const NIC: bool>(
        &mut self,
        net: &mut Net,
        m: NewMessage,
        now: Cycle,
    ) -> MessageId {
        let flow = m.flow;
        let id = self.enqueue_message::<NIC>(net, m, now);
        self.agents.posted(flow, now);
        id
    }

    /// `create_message` without telling the agents (their own signalling packets).
    #[inline(always)]
    fn enqueue_message<const NIC: bool>(&mut self, net: &mut Net, m: NewMessage, now: Cycle) -> MessageId {
        let measured = net.obs.measuring;
        let NewMessage { src, dst, class, size, packet_flits, vtick, flow, frame, phase } = m;
        let m = net.messages.insert(Message {
            src,
            dst,
            class,
            size,
            packet_flits,
            packetized: 0,
            delivered: 0,
            created: now,
            injected: Cycle::MAX,
            measured,
            vtick,
            flow,
            frame,
            phase: phase as u16,
            sent: 0,
            done: 0,
            path: self.path_choice.choose(flow, now),
            signal: Signal::Data,
            becn: congestion::NO_BECN,
            becn_path: 0,
        });
        if measured {
            net.progress.measured_outstanding += 1;
            net.obs.message_offered(phase, class, src, size);
        }
        self.queue_message::<NIC>(net, src.index(), class, m, now);
        m
    }

    /// Queue message `m` of `class` at its source `n`'s NIC.
    #[inline]
    fn queue_message<const NIC: bool>(
        &mut self,
        net: &mut Net,
        n: usize,
        class: TrafficClass,
        m: MessageId,
        now: Cycle,
    ) {
        if NIC {
            self.nic_post(net, n, m, now);
        } else {
            if self.p.per_vc_queues && class == TrafficClass::RealTime {
                let flow = net.messages.get(m).flow;
                self.queue_on_vc(n, flow, m);
            } else {
                let q = self.source_queue(n, class);
                self.nic_queue.at_mut(q).push_back(m);
            }
            *self.nic_start_blocked.at_mut(n) = false;
            self.activate(n);
        }
    }

    /// Each active NIC sends at most one flit this cycle.
    #[inline(always)]
    pub(crate) fn inject<const NIC: bool, const HOOK: bool>(&mut self, net: &mut Net, now: Cycle) {
        if self.agents.has_outgoing() {
            self.send_signals::<NIC>(net, now);
        }
        let mut active = std::mem::take(&mut self.nic_active);
        for &n in &active {
            self.inject_one::<NIC, HOOK>(net, n as usize, now);
        }
        active.retain(|&n| {
            let keep = self.nic_has_work::<NIC>(n as usize);
            *self.nic_is_active.at_mut(n as usize) = keep;
            keep
        });
        active.append(&mut self.nic_active);
        self.nic_active = active;
    }

    /// The source queue a message waits in: its class's, or the single FIFO.
    #[inline]
    pub(crate) fn source_queue(&self, node: usize, class: TrafficClass) -> usize {
        node * 3 + if self.p.per_class_queues { class.index() } else { 0 }
    }

    /// Start packets while the NIC may inject more at once: the first message of each
    /// queue, in priority order (control, real-time, best effort; a class that finds no free
    /// VC does not hold up the next one), takes a free VC its class may use.
    #[inline]
    fn start_packets(&mut self, net: &mut Net, n: usize, now: Cycle) {
        // If nothing starts, nothing will until a message arrives or a lane is sent out
        // or freed. A start is tried again: it may give a higher class a lane to preempt.
        *self.nic_start_blocked.at_mut(n) = true;
        for q in n * 3..n * 3 + 3 {
            if !self.start_from_queue(net, n, q, now) {
                return;
            }
        }
    }

    /// Start the front messages of source queue `q` of node `n` on free VCs of their class
    /// while they find one. Returns false if the node may start nothing more this cycle
    /// (at its limit of packets in injection, with no preemption to make room).
    #[inline]
    pub(crate) fn start_from_queue(&mut self, net: &mut Net, n: usize, q: usize, now: Cycle) -> bool {
        loop {
            // At the limit, in the preemptive router, a message may still start if it
            // outranks one being sent: it does not wait for a lower one's slot.
            let preemptive = self.p.preemptive;
            let at_limit = self.nic_sending.at(n).count_ones() >= self.p.concurrent_packets;
            if at_limit && !preemptive {
                return false;
            }
            let Some(&m) = self.nic_queue.at(q).front() else { return true };
            let msg = net.messages.get(m);
            let (class, flow, dst, first) = (msg.class.index(), msg.flow, msg.dst, msg.packetized == 0);
            // The control agent may hold the message back (the queue waits behind it);
            // the agents' own signalling packets go unasked.
            let asks = first && msg.signal == Signal::Data;
            if asks && !self.agents.may_start(n, flow, dst.0, now) {
                if self.set_aside(net, q, 0, class, m) {
                    continue;
                }
                self.held_back(net, n, flow, now);
                return true;
            }
            // Each data packet, the first included, waits for a pacing agent's next send
            // (control-class packets, the CNPs among them, are never paced: their flow row
            // is shared by every node).
            let data = !msg.signal.is_signalling() && class != TrafficClass::Control.index();
            if data && !self.agents.may_send(flow, now) {
                self.held_back(net, n, flow, now);
                return true;
            }
            if at_limit && !self.nic_outranks(n, class as u8) {
                return true;
            }
            let mut free = *self.p.class_vcs.at(class) & !*self.nic_busy.at(n);
            if self.p.vc_needs_credit {
                // (BookSim2's source: a VC neither in use nor full; `credit_arrived` retries)
                free &= *self.nic_credited.at(n);
            }
            let vc = if free != 0 {
                let home = free & *self.p.home_vcs.at(class);
                let free = if home != 0 { home } else { free };
                select_vc(self.p.vc_selection, free, self.nic_rr.at_mut(n))
            } else if preemptive {
                match self.nic_preempt(n, class as u8) {
                    Some(lane) => lane,
                    None => return true,
                }
            } else {
                return true;
            };
            if asks && self.agents.started(n, flow, now) {
                // The connection's last message: its last packet tears it down.
                net.messages.get_mut(m).signal = Signal::Teardown;
            }
            let (packet, size, last) = net.cut_packet(m);
            if data {
                self.agents.packet_sent(flow, size, now);
            }
            if last {
                self.nic_queue.at_mut(q).pop_front();
            }
            self.start_packet(net, n, vc, class as u8, packet, size, now);
        }
    }

    #[inline(always)]
    fn inject_one<const NIC: bool, const HOOK: bool>(&mut self, net: &mut Net, n: usize, now: Cycle) {
        let vcs = self.p.lanes;
        let nic = NIC;
        if nic {
            self.nic_send_side(net, n, now);
        } else if !*self.nic_start_blocked.at(n) {
            if self.p.per_vc_queues {
                self.start_per_vc(net, n, now);
            } else {
                self.start_packets(net, n, now);
            }
        }
        let mut sending = *self.nic_sending.at(n);
        if sending == 0 {
            return;
        }
        if nic && self.nic_p.message_level {
            // One packet at a time: the one being sent finishes even if a preemptor has
            // since taken its VC's extra buffer (which then goes next).
            sending = self.message_level_lanes::<HOOK>(n, sending, now, &net.reservations);
        } else {
            // A VC whose extra buffer is being sent a preempting message waits (§3.2.1).
            sending &= !(sending >> self.p.vcs);
        }
        // The injection link is multiplexed flit by flit among the packets in progress
        // whose next flit is in the NIC.
        let Some(vc) = self.select_lane::<NIC, HOOK>(n, sending, now, &net.reservations) else {
            return;
        };
        let ci = n * vcs + vc;
        let cur = *self.nic_pkt.at(ci);
        let credits = self.nic_credits.at_mut(ci);
        *credits -= 1;
        if *credits == 0 {
            *self.nic_credited.at_mut(n) &= !(1 << vc);
        }
        let mut kind = 0;
        if cur.seq == 0 {
            kind |= HEAD;
            let pkt = net.packets.get(cur.packet);
            if pkt.signal == Signal::Teardown {
                // The last data packet gives the HCA's own link back as it leaves (§4.1).
                net.reservations.release_at_hca(n, pkt.flow);
            }
            let m = pkt.message;
            let msg = net.messages.get_mut(m);
            if msg.injected == Cycle::MAX {
                msg.injected = now;
            }
        }
        let last = cur.seq + 1 == cur.size;
        if last {
            kind |= TAIL;
            *self.nic_sending.at_mut(n) &= !(1 << vc);
            self.nic_sending_class.at_mut(n)[*self.nic_class.at(ci) as usize] &= !(1 << vc);
            *self.nic_start_blocked.at_mut(n) = false;
            if self.p.release_on_send {
                self.free_lane(n, vc);
            }
        } else {
            // The packet's age orders it (FCFS); the next flit may still be on its way in.
            let key = self.nic_keys.key(n, vc, cur.start, cur.start);
            let avail = if nic { cur.data_start + self.nic_p.dma.flit(cur.seq as u32 + 1) } else { 0 };
            let p = self.nic_pkt.at_mut(ci);
            (p.seq, p.key, p.avail) = (cur.seq + 1, key, avail);
        }
        if nic {
            self.nic_flit_sent(net, n, vc, cur.packet, last);
        } else if last && self.agents.counts_sends() {
            self.packet_sent(net, n, cur.packet);
        }
        let flit = Flit::new(cur.packet, cur.seq, kind, vc as u8, now);
        if cur.seq == 0 && net.obs.trace.watch.is_some() {
            let flow = net.packets.get(cur.packet).flow;
            net.obs.hop(now, flow, cur.packet, Hop::Injected, n, 0, vc);
        }
        net.links.send_flit(now + self.p.link, *self.attach_port.at(n), flit);
        net.progress.in_flight += 1;
        net.progress.flits_injected += 1;
        net.progress.last_progress = now;
        net.obs.flit_injected(n);
    }

    /// The injection scheduler's choice among `lanes` of node `n`: a lane with a credit
    /// for the router's input buffer whose next flit is in the NIC.
    #[inline]
    /// (`res`: where admission control keeps the HCAs' rewritten tables, read in `HOOK`
    /// runs only.)
    pub(crate) fn select_lane<const NIC: bool, const HOOK: bool>(
        &mut self,
        n: usize,
        lanes: u32,
        now: Cycle,
        res: &crate::control::Reservations,
    ) -> Option<usize> {
        let vcs = self.p.lanes;
        let pkts = self.nic_pkt.span(n * vcs, vcs);
        let mut offered = lanes & *self.nic_credited.at(n);
        if NIC {
            // Flits still on their way in by DMA: filtered here, not by `ready`, since
            // many lanes may wait for data at once (the ideal endpoint has all its data).
            for v in bits(offered) {
                if pkts.at(v).avail > now {
                    offered &= !(1 << v);
                }
            }
        }
        // (admission control's per-link tables, document 000 §4.1: `HOOK` runs only)
        let tables = if HOOK {
            res.hca_tables.as_ref().map_or(&self.nic_tables, |t| t.get(n))
        } else {
            &self.nic_tables
        };
        tables.select(self.nic_sched.at_mut(n), offered, |v| pkts.at(v).key, |_| true)
    }

    /// Whether a message of `class` outranks a packet node `n` is sending.
    fn nic_outranks(&self, n: usize, class: u8) -> bool {
        self.nic_sending_class.at(n)[class as usize + 1..].iter().any(|&m| m != 0)
    }

    /// The preemptive router's NIC (document 003 §3.2.1): no VC of the class is free, so
    /// take the extra lane of the VC held by the lowest-priority packet below `class`
    /// whose extra lane is free; the held packet's remaining flits wait for it.
    fn nic_preempt(&self, n: usize, class: u8) -> Option<usize> {
        let vcs = self.p.vcs;
        let busy = *self.nic_busy.at(n);
        let regular = busy & crate::routing::all_vcs(vcs as u32);
        victim(self.nic_held.at(n), regular & !(busy >> vcs), class).map(|v| vcs + v)
    }

    /// A packet of `class` starts injection on lane `lane` of node `n`'s link, and holds
    /// the lane until its tail credit returns.
    #[inline]
    pub(crate) fn hold_nic_lane(&mut self, n: usize, lane: usize, class: u8) {
        *self.nic_sending.at_mut(n) |= 1 << lane;
        self.nic_sending_class.at_mut(n)[class as usize] |= 1 << lane;
        *self.nic_busy.at_mut(n) |= 1 << lane;
        *self.nic_class.at_mut(n * self.p.lanes + lane) = class;
        if lane < self.p.vcs {
            self.nic_held.at_mut(n)[class as usize] |= 1 << lane;
        }
    }

    /// The ideal endpoint starts `packet` (`size` flits, of `class`) on lane `lane` of
    /// node `n`'s link now: the lane is held, and its injection key stamped with the
    /// packet's Vtick (per-class and per-VC source queues alike: `vc_queues.rs`).
    #[allow(clippy::too_many_arguments)] // the lane and the packet it starts
    #[inline(always)]
    pub(crate) fn start_packet(
        &mut self,
        net: &Net,
        n: usize,
        lane: usize,
        class: u8,
        packet: PacketId,
        size: u32,
        now: Cycle,
    ) {
        let pkt = net.packets.get(packet);
        let (vtick, flow) = (pkt.vtick, pkt.flow);
        self.hold_nic_lane(n, lane, class);
        *self.nic_start_blocked.at_mut(n) = false;
        self.nic_keys.set_vtick(n, lane, vtick, flow);
        let key = self.nic_keys.key(n, lane, now, now);
        *self.nic_pkt.at_mut(n * self.p.lanes + lane) =
            Injecting { packet, seq: 0, size: size as u16, start: now, key, data_start: 0, avail: 0 };
    }

    /// Node `n` has work: it is visited from this cycle on.
    #[inline]
    pub(crate) fn activate(&mut self, n: usize) {
        if !*self.nic_is_active.at(n) {
            *self.nic_is_active.at_mut(n) = true;
            self.nic_active.push(n as u32);
        }
    }

    /// A message the control agent held back at node `n` may start now.
    #[inline]
    fn wake(&mut self, n: usize) {
        *self.nic_start_blocked.at_mut(n) = false;
        self.activate(n);
    }

    /// The ideal endpoint sent the last flit of `packet` from node `n`: when it was its
    /// message's last, the agent hears of the completion (the HCA's send CQE).
    #[cold]
    fn packet_sent(&mut self, net: &mut Net, n: usize, packet: PacketId) {
        let pkt = net.packets.get(packet);
        let (m, size) = (pkt.message, pkt.size as u32);
        let msg = net.messages.get_mut(m);
        msg.sent += size;
        if msg.sent == msg.size {
            self.message_sent(n, msg.flow, msg.signal);
        }
    }

    /// Node `n` injected a message of `flow` whole: the agent hears of its completion.
    #[inline]
    pub(crate) fn message_sent(&mut self, n: usize, flow: u32, signal: Signal) {
        if !signal.is_signalling() && self.agents.sent(flow) {
            self.wake(n);
        }
    }

    /// Drop message `m`, held back at its source by an agent (a connection that gave up).
    fn drop_message(&mut self, net: &mut Net, m: MessageId) {
        let measured = net.messages.get(m).measured;
        net.messages.remove(m);
        if measured {
            net.progress.measured_outstanding -= 1;
        }
    }

    /// Send what the agents asked for: their timers on the control channel, and their
    /// signalling packets (document 000 §4.1) as control-class messages. The source HCA
    /// checks its own link before a probe leaves, and gives it back as a release leaves.
    /// Signalling is not measured as traffic: the agent counts it.
    #[cold]
    pub(crate) fn send_signals<const NIC: bool>(&mut self, net: &mut Net, now: Cycle) {
        for (at, node, msg) in std::mem::take(&mut self.agents.timers) {
            net.links.send_control(at.max(now + 1), NodeId::new(node), msg);
        }
        let Some(a) = self.agents.admission.as_mut() else { return };
        let flits = a.p.signal_flits;
        for o in std::mem::take(&mut a.outbox) {
            match o.signal {
                Signal::Probe
                    if net.reservations.probe_at_hca(o.from as usize, o.flow) == HopAction::Refused =>
                {
                    self.agents.refused_at_source(o.flow, now);
                    continue;
                }
                Signal::Release => {
                    net.reservations.release_at_hca(o.from as usize, o.flow);
                }
                _ => {}
            }
            let measuring = std::mem::replace(&mut net.obs.measuring, false);
            let m = self.enqueue_message::<NIC>(
                net,
                NewMessage {
                    src: NodeId::new(o.from),
                    dst: NodeId::new(o.to),
                    class: TrafficClass::Control,
                    size: flits,
                    packet_flits: flits,
                    vtick: 1,
                    flow: o.flow,
                    frame: u32::MAX,
                    phase: 0,
                },
                now,
            );
            net.obs.measuring = measuring;
            net.messages.get_mut(m).signal = o.signal;
            if !NIC {
                // Signalling goes ahead of the data it is for (a FIFO source queue would
                // hold a probe behind the very message that waits for its ACK).
                let q = self.source_queue(o.from as usize, TrafficClass::Control);
                let queue = self.nic_queue.at_mut(q);
                queue.pop_back();
                queue.push_front(m);
            }
        }
        // Timers set while sending (a refusal at the source) go out next cycle.
    }

    /// The agents' side band (every `agents.sideband` cycles): they read the routers'
    /// status; the nodes they held back are woken if it changed.
    #[cold]
    pub(crate) fn read_sideband(&mut self, status: &impl RouterStatus, delivered: u64) {
        match self.agents.read_sideband(status, delivered) {
            None => {}
            Some(nodes) if nodes.is_empty() => {
                for n in 0..self.nic_is_active.len() {
                    self.wake(n);
                }
            }
            Some(nodes) => {
                for n in nodes {
                    self.wake(n as usize);
                }
            }
        }
    }

    /// Control message `msg` arrived at node `n` (`links::Control`): its agent hears it.
    pub(crate) fn control_arrived(&mut self, net: &mut Net, n: usize, msg: Control, now: Cycle) {
        if let Control::DeferredCnp { flow, src, path } = msg {
            return self.deferred_cnp(net, n, flow, NodeId::new(src), path, now);
        }
        if self.agents.on_control(n, msg, now) {
            if let Control::Retry { flow } = msg {
                // Probe again (or give up and drop them): from the queue's head.
                self.release_held(flow);
            }
            self.wake(n);
        }
    }

    /// Message `m` (of `class`, at position `i` of source queue `q`) was held back by
    /// admission control: taken out of the queue and dropped if its connection gave up, or
    /// set aside until the answer if its connection is being set up, so other connections
    /// of the class go on (each has its own QP in the document's HCA, and one not yet
    /// admitted posts nothing). Returns whether it was taken out.
    #[cold]
    #[inline(never)]
    pub(crate) fn set_aside(
        &mut self,
        net: &mut Net,
        q: usize,
        i: usize,
        class: usize,
        m: MessageId,
    ) -> bool {
        let flow = net.messages.get(m).flow;
        let drop = self.agents.drops(flow);
        if !drop && !self.agents.awaits_admission(flow) {
            return false;
        }
        self.nic_queue.at_mut(q).remove(i);
        if let Some(nic) = self.nics.get_mut(q / 3) {
            // (the HCA model's doorbells; rung again by `release_held`)
            nic.doorbells[class] -= 1;
        }
        if drop {
            self.drop_message(net, m);
        } else {
            self.held.entry(flow).or_insert((q, class, Vec::new())).2.push(m);
        }
        true
    }

    /// Put the messages set aside for `flow`'s set-up back at the head of their queue, in
    /// their order (they are older than anything behind them).
    fn release_held(&mut self, flow: u32) {
        if let Some((q, class, ms)) = self.held.remove(&flow) {
            let queue = self.nic_queue.at_mut(q);
            for &m in ms.iter().rev() {
                queue.push_front(m);
            }
            if let Some(nic) = self.nics.get_mut(q / 3) {
                // (the HCA model's doorbells, rung again)
                nic.doorbells[class] += ms.len() as u32;
            }
        }
    }

    /// Whether no endpoint has anything to inject.
    pub(crate) fn is_idle(&self) -> bool {
        self.nic_active.is_empty()
    }

    /// A credit for lane `vc` of node `n`'s link into the router came back; with the
    /// packet's `tail` the lane is free again.
    #[inline(always)]
    pub(crate) fn credit_arrived(&mut self, n: usize, vc: u8, tail: bool) {
        let bit = 1u32 << vc;
        *self.nic_credits.at_mut(n * self.p.lanes + vc as usize) += 1;
        *self.nic_credited.at_mut(n) |= bit;
        if self.p.vc_needs_credit {
            *self.nic_start_blocked.at_mut(n) = false;
        }
        if tail && !self.p.release_on_send {
            self.free_lane(n, vc as usize);
        }
    }

    /// Lane `lane` of node `n` may take another packet: when its tail's credit returns, or
    /// (`VcRelease::TailSent`) once the tail has been sent.
    #[inline]
    fn free_lane(&mut self, n: usize, lane: usize) {
        *self.nic_busy.at_mut(n) &= !(1 << lane);
        *self.nic_start_blocked.at_mut(n) = false;
        for held in self.nic_held.at_mut(n) {
            *held &= !(1 << lane);
        }
    }

    /// The sink at node `n` consumes a flit arriving from the router's ejection port
    /// (`HOOK`: the engine's variant with per-flit hooks, the one application models run in).
    #[inline(always)]
    pub(crate) fn eject<const NIC: bool, const HOOK: bool>(
        &mut self,
        net: &mut Net,
        n: usize,
        flit: Flit,
        now: Cycle,
    ) {
        net.links.send_credit(now + self.p.credit, *self.eject_port.at(n), flit.vc(), flit.is_tail());
        net.progress.in_flight -= 1;
        net.progress.flits_ejected += 1;
        net.progress.last_progress = now;
        if flit.is_dummy() {
            // A preempted packet's dummy tail or header carries nothing.
            return;
        }
        let pkt = net.packets.get_mut(flit.packet());
        if pkt.dst.index() != n || flit.seq() != pkt.received {
            let (expected, dst) = (pkt.received, pkt.dst);
            net.progress.violated(|| {
                format!(
                    "packet {} flit {} reached node {n} out of order or misrouted (expected flit {expected} at node {dst})",
                    flit.packet(),
                    flit.seq(),
                )
            });
        }
        let pkt = net.packets.get_mut(flit.packet());
        pkt.received += 1;
        let (m, size, received, class, pkt_flow, marked, signal, pkt_src, pkt_path) = (
            pkt.message,
            pkt.size,
            pkt.received,
            pkt.class,
            pkt.flow,
            pkt.marked,
            pkt.signal,
            pkt.src,
            pkt.path,
        );
        net.obs.flit_accepted(n, class, pkt_flow);
        if !flit.is_tail() {
            return;
        }
        if received != size {
            net.progress
                .violated(|| format!("packet {} ended after {received} of {size} flits", flit.packet()));
        }
        net.packets.remove(flit.packet());
        if net.obs.trace.watch.is_some() {
            net.obs.hop(now, pkt_flow, flit.packet(), Hop::Ejected, n, 0, flit.vc() as usize);
        }
        let becn = net.messages.get(m).becn;
        if marked {
            net.obs.packet_marked(pkt_flow);
            // FECN → CNP (the agent's answer, or DRB's notifications: `congestion.rs`); a
            // CNP itself is never answered.
            if becn == congestion::NO_BECN {
                let answer = self.agents.on_mark(pkt_flow, now);
                if answer || self.path_choice.hears_notifications() {
                    self.send_cnp::<NIC>(net, n, pkt_src, pkt_flow, pkt_path, now);
                } else {
                    self.defer_cnp(net, n, pkt_src, pkt_flow, pkt_path, now);
                }
            }
        }
        let msg = net.messages.get(m);
        let whole = msg.delivered + size as u32 == msg.size;
        // The NIC models' receive side moves the packet to the host first.
        let done = if NIC { self.nic_receive(n, size as u32, whole, now) } else { now };
        let msg = net.messages.get_mut(m);
        msg.delivered += size as u32;
        msg.done = msg.done.max(done);
        if !whole {
            return;
        }
        let msg = *msg;
        net.messages.remove(m);
        if signal.is_signalling() {
            // A probe, ACK, NACK or release reached its end (its last packet's signal: a
            // refused probe arrives spent).
            if self.agents.signal_arrived(n as u32, msg.flow, signal, now) {
                self.release_held(msg.flow);
                self.wake(n);
            }
            return;
        }
        if becn != congestion::NO_BECN {
            // A CNP reached the source of the flow it notifies: BECN.
            self.agents.on_notification(becn, now);
            self.path_choice.notified(becn, msg.becn_path, now);
            return;
        }
        match self.agents.delivered(msg.src.index(), msg.flow, now) {
            Reply::Nothing => {}
            Reply::Wake => self.wake(msg.src.index()),
            Reply::Send { delay, msg: control } => net.links.send_control(now + delay, msg.src, control),
        }
        if msg.measured {
            net.progress.measured_outstanding -= 1;
        }
        // (application models run only in the engine's `HOOK` variant)
        if HOOK && net.app_deliveries.watches(msg.flow) {
            net.app_deliveries.record(&msg);
        }
        net.obs.message_delivered(&msg, msg.done);
    }
}

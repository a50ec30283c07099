//! Simple endpoints (the NIC issue replaces them with NIC and HCA models): source queues
//! per node (one FIFO, or one per class served by priority), messages cut into packets and
//! packets into flits; up to `concurrent_packets` packets are injected at once, each on a
//! VC its class may use, multiplexed on the link one flit per cycle by the injection
//! scheduler (the same schedulers as the router's). A sink consumes one flit per cycle per
//! link and returns its credit.

use crate::config::{RouterKind, TrafficClass};
use crate::engine::Injecting;
use crate::engine::Simulation;
use crate::flit::{Flit, Message, HEAD, TAIL};
use crate::sched::bits;
use crate::traffic::video::frame_flits;
use crate::traffic::ProcessSpec;
use crate::unchecked::At;
use crate::units::Cycle;
use std::cmp::Reverse;

impl Simulation {
    /// Create the messages whose time has come and queue them at their source NICs.
    #[inline(always)]
    pub(crate) fn generate(&mut self, now: Cycle) {
        if self.phase_starts.get(self.phase) == Some(&now) {
            self.next_phase(now);
        }
        while let Some(&Reverse((t, s, epoch))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            if epoch != self.sources.at(s as usize).epoch {
                continue; // rescheduled by a phase change
            }
            self.source_event(s as usize, now);
            let source = self.sources.at_mut(s as usize);
            let next = source.advance(self.specs.at(source.spec as usize), self.phase, now);
            self.events.push(Reverse((next, s, source.epoch)));
        }
    }

    /// Source `s` is due: a message, or for a video stream a frame cut into messages
    /// (document 003 §4.2), all created now.
    fn source_event(&mut self, s: usize, now: Cycle) {
        let source = self.sources.at_mut(s);
        let spec = self.specs.at(source.spec as usize);
        let (node, class, vtick, flits) = (source.node, spec.class, source.vtick, spec.message_flits);
        if let ProcessSpec::Video(v) = &spec.process {
            let v = v.clone();
            let bytes = source.next_frame_bytes(&v);
            let (frame, dst) = (source.frames - 1, source.dst);
            if dst == u32::MAX {
                return;
            }
            let total = frame_flits(bytes, self.clock.flit_bits);
            let messages = total.div_ceil(flits);
            let measured = self.measuring;
            let d = *self.deadline_of.at(s) as usize;
            self.deadlines.at_mut(d).expect_frame(frame as u64, now, messages, self.phase, measured);
            for k in 0..messages {
                let size = flits.min(total - k * flits);
                self.create_message(node, dst, class, size, vtick, s as u32, frame, now);
            }
            return;
        }
        let dst = if source.dst != u32::MAX {
            Some(source.dst as usize)
        } else {
            spec.pattern.destination(node as usize, &mut source.rng)
        };
        if let Some(dst) = dst {
            self.create_message(node, dst as u32, class, flits, vtick, s as u32, u32::MAX, now);
        }
    }

    /// Create a message now and queue it at its source NIC; it is measured if created in
    /// the window. `flow` indexes the per-flow table; `frame` is its video frame or MAX.
    #[allow(clippy::too_many_arguments)] // one per field a message is born with
    pub(crate) fn create_message(
        &mut self,
        src: u32,
        dst: u32,
        class: TrafficClass,
        size: u32,
        vtick: u32,
        flow: u32,
        frame: u32,
        now: Cycle,
    ) -> u32 {
        let measured = self.measuring;
        let packet_flits =
            self.sources.get(flow as usize).map_or(size, |s| self.specs.at(s.spec as usize).packet_flits);
        let m = self.messages.insert(Message {
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
            phase: self.phase as u16,
            sent: 0,
            done: 0,
        });
        if measured {
            let c = class.index();
            self.metrics.phases.at_mut(self.phase)[c].flits_offered += size as u64;
            self.measured_outstanding += 1;
            self.metrics.classes.at_mut(c).messages_measured += 1;
            self.metrics.classes.at_mut(c).flits_offered += size as u64;
            self.metrics.nodes.at_mut(src as usize).flits_offered += size as u64;
        }
        if self.nic_p.is_nic() {
            self.nic_post(src as usize, m, now);
        } else {
            let q = self.source_queue(src as usize, class);
            self.nic_queue.at_mut(q).push_back(m);
            *self.nic_start_blocked.at_mut(src as usize) = false;
            self.activate_nic(src as usize);
        }
        m
    }

    /// A new phase of the mix begins: sources whose rate changes restart at the new rate
    /// (exact for memoryless processes).
    fn next_phase(&mut self, now: Cycle) {
        let (old, new) = (self.phase, self.phase + 1);
        self.phase = new;
        for (i, source) in self.sources.iter_mut().enumerate() {
            let spec = self.specs.at(source.spec as usize);
            if spec.source_rate(source.stream, old) == spec.source_rate(source.stream, new) {
                continue;
            }
            if let Some(t) = source.start(spec, new, now) {
                self.events.push(Reverse((t, i as u32, source.epoch)));
            }
        }
    }

    /// Each active NIC sends at most one flit this cycle.
    #[inline(always)]
    pub(crate) fn inject(&mut self, now: Cycle) {
        let mut active = std::mem::take(&mut self.nic_active);
        for &n in &active {
            self.inject_one(n as usize, now);
        }
        active.retain(|&n| {
            let keep = self.nic_has_work(n as usize);
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
    fn start_packets(&mut self, n: usize, now: Cycle) {
        let vcs = self.p.lanes;
        // If nothing starts, nothing will until a message arrives or a lane is sent out
        // or freed. A start is tried again: it may give a higher class a lane to preempt.
        *self.nic_start_blocked.at_mut(n) = true;
        for q in n * 3..n * 3 + 3 {
            loop {
                // At the limit, in the preemptive router, a message may still start if it
                // outranks one being sent: it does not wait for a lower one's slot.
                let preemptive = self.p.kind == RouterKind::Preemptive;
                let at_limit = self.nic_sending.at(n).count_ones() >= self.p.concurrent_packets;
                if at_limit && !preemptive {
                    return;
                }
                let Some(&m) = self.nic_queue.at(q).front() else { break };
                let class = self.messages.get(m).class.index();
                if at_limit && !self.nic_outranks(n, class as u8) {
                    break;
                }
                let free = *self.p.class_vcs.at(class) & !*self.nic_busy.at(n);
                let vc = if free != 0 {
                    let home = free & *self.p.home_vcs.at(class);
                    let free = if home != 0 { home } else { free };
                    Self::select_vc(self.p.nic_vc_selection, free, self.nic_rr.at_mut(n))
                } else if preemptive {
                    match self.nic_preempt(n, class as u8) {
                        Some(lane) => lane,
                        None => break,
                    }
                } else {
                    break;
                };
                let (packet, size, last) = self.cut_packet(m);
                if last {
                    self.nic_queue.at_mut(q).pop_front();
                }
                let vtick = self.packets.get(packet).vtick;
                self.hold_nic_lane(n, vc, class as u8);
                *self.nic_start_blocked.at_mut(n) = false;
                self.nic_keys.set_vtick(n, vc, vtick);
                let key = self.nic_keys.key(n, vc, now, now);
                *self.nic_pkt.at_mut(n * vcs + vc) =
                    Injecting { packet, seq: 0, size: size as u16, start: now, key, data_start: 0, avail: 0 };
            }
        }
    }

    #[inline(always)]
    fn inject_one(&mut self, n: usize, now: Cycle) {
        let vcs = self.p.lanes;
        let nic = self.nic_p.is_nic();
        if nic {
            self.nic_send_side(n, now);
        } else if !*self.nic_start_blocked.at(n) {
            self.start_packets(n, now);
        }
        let mut sending = *self.nic_sending.at(n);
        if sending == 0 {
            return;
        }
        if nic && self.nic_p.message_level {
            // One packet at a time: the one being sent finishes even if a preemptor has
            // since taken its VC's extra buffer (which then goes next).
            sending = self.message_level_lanes(n, sending, now);
        } else {
            // A VC whose extra buffer is being sent a preempting message waits (§3.2.1).
            sending &= !(sending >> self.p.vcs);
        }
        // The injection link is multiplexed flit by flit among the packets in progress
        // whose next flit is in the NIC.
        let Some(vc) = self.select_lane(n, sending, now) else {
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
            let m = self.packets.get(cur.packet).message;
            let msg = self.messages.get_mut(m);
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
        } else {
            // The packet's age orders it (FCFS); the next flit may still be on its way in.
            let key = self.nic_keys.key(n, vc, cur.start, cur.start);
            let avail = if nic { cur.data_start + self.nic_p.dma.flit(cur.seq as u32 + 1) } else { 0 };
            let p = self.nic_pkt.at_mut(ci);
            (p.seq, p.key, p.avail) = (cur.seq + 1, key, avail);
        }
        if nic {
            self.nic_flit_sent(n, vc, cur.packet, last);
        }
        let flit = Flit::new(cur.packet, cur.seq, kind, vc as u8, now);
        self.send_flit(now + self.p.link, *self.attach_port.at(n), flit);
        self.in_flight += 1;
        self.flits_injected += 1;
        self.last_progress = now;
        if self.measuring {
            self.metrics.nodes.at_mut(n).flits_injected += 1;
            *self.metrics.nic_link_flits.at_mut(n) += 1;
        }
    }

    /// The injection scheduler's choice among `lanes` of node `n`: a lane with a credit
    /// for the router's input buffer whose next flit is in the NIC.
    #[inline]
    pub(crate) fn select_lane(&mut self, n: usize, lanes: u32, now: Cycle) -> Option<usize> {
        let vcs = self.p.lanes;
        let pkts = self.nic_pkt.span(n * vcs, vcs);
        let mut offered = lanes & *self.nic_credited.at(n);
        if self.nic_p.is_nic() {
            // Flits still on their way in by DMA: filtered here, not by `ready`, since
            // many lanes may wait for data at once (the ideal endpoint has all its data).
            for v in bits(offered) {
                if pkts.at(v).avail > now {
                    offered &= !(1 << v);
                }
            }
        }
        self.nic_tables.select(self.nic_sched.at_mut(n), offered, |v| pkts.at(v).key, |_| true)
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
        crate::router::victim(self.nic_held.at(n), regular & !(busy >> vcs), class).map(|v| vcs + v)
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

    /// The sink at node `n` consumes a flit arriving from the router's ejection port.
    #[inline(always)]
    pub(crate) fn eject(&mut self, n: usize, flit: Flit, now: Cycle) {
        self.send_credit(now + self.p.credit, *self.attach_port.at(n), flit.vc(), flit.is_tail());
        self.in_flight -= 1;
        self.flits_ejected += 1;
        self.last_progress = now;
        if flit.is_dummy() {
            // A preempted packet's dummy tail or header carries nothing.
            return;
        }
        let measuring = self.measuring;
        let pkt = self.packets.get_mut(flit.packet());
        if pkt.dst as usize != n || flit.seq() != pkt.received {
            self.violation.get_or_insert(format!(
                "packet {} flit {} reached node {n} out of order or misrouted (expected flit {} at node {})",
                flit.packet(),
                flit.seq(),
                pkt.received,
                pkt.dst
            ));
        }
        pkt.received += 1;
        let (m, size, received, class, pkt_flow) = (pkt.message, pkt.size, pkt.received, pkt.class, pkt.flow);
        if measuring {
            self.metrics.nodes.at_mut(n).flits_accepted += 1;
            self.metrics.classes.at_mut(class.index()).flits_accepted += 1;
            self.metrics.flows.at_mut(pkt_flow as usize).flits += 1;
        }
        if !flit.is_tail() {
            return;
        }
        if received != size {
            self.violation
                .get_or_insert(format!("packet {} ended after {received} of {size} flits", flit.packet()));
        }
        self.packets.remove(flit.packet());
        let msg = self.messages.get(m);
        let whole = msg.delivered + size as u32 == msg.size;
        // The NIC models' receive side moves the packet to the host first.
        let done = if self.nic_p.is_nic() { self.nic_receive(n, size as u32, whole, now) } else { now };
        let msg = self.messages.get_mut(m);
        msg.delivered += size as u32;
        msg.done = msg.done.max(done);
        if !whole {
            return;
        }
        let msg = *msg;
        let now = msg.done;
        self.messages.remove(m);
        if self.measuring {
            let f = self.metrics.flows.at_mut(msg.flow as usize);
            f.messages += 1;
            f.latency_sum += now - msg.created;
        }
        if msg.frame != u32::MAX {
            let d = *self.deadline_of.at(msg.flow as usize) as usize;
            self.deadlines.at_mut(d).message_delivered(msg.frame as u64, now);
        }
        if msg.measured {
            self.measured_outstanding -= 1;
            self.metrics.delivered(msg.class, msg.src, msg.dst, msg.size, msg.created, msg.injected, now);
            let p = &mut self.metrics.phases.at_mut(msg.phase as usize)[msg.class.index()];
            p.messages += 1;
            p.flits += msg.size as u64;
            p.queueing_sum += msg.injected - msg.created;
            p.network_sum += now - msg.injected;
        }
    }
}

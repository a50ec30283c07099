//! Simple endpoints (the NIC issue replaces them): a source queue per node, messages cut
//! into packets and packets into flits, one packet at a time injected at one flit per
//! cycle onto a VC chosen by the configured policy, and a sink that consumes one flit per
//! cycle per link and returns its credit.

use crate::engine::{Simulation, Target};
use crate::flit::{Flit, Message, Packet, HEAD, TAIL};
use crate::units::Cycle;
use std::cmp::Reverse;

impl Simulation {
    /// Create the messages whose time has come and queue them at their source NICs.
    #[inline]
    pub(crate) fn generate(&mut self, now: Cycle) {
        while let Some(&Reverse((t, s))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            let source = &mut self.sources[s as usize];
            let spec = &self.specs[source.spec as usize];
            let node = source.node as usize;
            if let Some(dst) = spec.pattern.destination(node, &mut source.rng) {
                let measured = self.measuring;
                let class = spec.class;
                let size = spec.message_flits;
                let m = self.messages.insert(Message {
                    src: node as u32,
                    dst: dst as u32,
                    class,
                    size,
                    packet_flits: spec.packet_flits,
                    packetized: 0,
                    delivered: 0,
                    created: now,
                    injected: Cycle::MAX,
                    measured,
                });
                if measured {
                    self.measured_outstanding += 1;
                    self.metrics.classes[class.index()].messages_measured += 1;
                    self.metrics.classes[class.index()].flits_offered += size as u64;
                    self.metrics.nodes[node].flits_offered += size as u64;
                }
                self.nic_queue[node].push_back(m);
                self.activate_nic(node);
            }
            let source = &mut self.sources[s as usize];
            let next = source.advance(&self.specs[source.spec as usize], now);
            self.events.push(Reverse((next, s)));
        }
    }

    /// Each active NIC sends at most one flit this cycle.
    #[inline]
    pub(crate) fn inject(&mut self, now: Cycle) {
        let mut active = std::mem::take(&mut self.nic_active);
        for &n in &active {
            self.inject_one(n as usize, now);
        }
        active.retain(|&n| {
            let n = n as usize;
            let keep = self.nic_cur[n].is_some() || !self.nic_queue[n].is_empty();
            self.nic_is_active[n] = keep;
            keep
        });
        active.append(&mut self.nic_active);
        self.nic_active = active;
    }

    #[inline]
    fn inject_one(&mut self, n: usize, now: Cycle) {
        let vcs = self.p.vcs;
        let cur = match self.nic_cur[n] {
            Some(c) => c,
            None => {
                let free = self.all_vcs() & !self.nic_busy[n];
                let Some(&m) = self.nic_queue[n].front() else {
                    return;
                };
                if free == 0 {
                    return;
                }
                let msg = self.messages.get_mut(m);
                let size = msg.packet_flits.min(msg.size - msg.packetized);
                msg.packetized += size;
                let last = msg.packetized == msg.size;
                let (src, dst, class) = (msg.src, msg.dst, msg.class);
                if last {
                    self.nic_queue[n].pop_front();
                }
                let packet = self.packets.insert(Packet {
                    message: m,
                    src,
                    dst,
                    size: size as u16,
                    received: 0,
                    class,
                });
                let vc = Self::select_vc(self.p.nic_vc_selection, free, &mut self.nic_rr[n]);
                self.nic_busy[n] |= 1 << vc;
                let c = crate::engine::Injecting { packet, seq: 0, size: size as u16, vc: vc as u8 };
                self.nic_cur[n] = Some(c);
                c
            }
        };
        let ci = n * vcs + cur.vc as usize;
        if self.nic_credits[ci] == 0 {
            return;
        }
        self.nic_credits[ci] -= 1;
        let mut kind = 0;
        if cur.seq == 0 {
            kind |= HEAD;
            let m = self.packets.get(cur.packet).message;
            let msg = self.messages.get_mut(m);
            if msg.injected == Cycle::MAX {
                msg.injected = now;
            }
        }
        if cur.seq + 1 == cur.size {
            kind |= TAIL;
        }
        let flit = Flit { packet: cur.packet, seq: cur.seq, kind, vc: cur.vc, ready: now };
        let to = Target::Router(self.attach_port[n]);
        self.send_flit(now + self.p.link, to, flit);
        self.in_flight += 1;
        self.flits_injected += 1;
        self.last_progress = now;
        if self.measuring {
            self.metrics.nodes[n].flits_injected += 1;
            self.metrics.nic_link_flits[n] += 1;
        }
        self.nic_cur[n] = if cur.seq + 1 == cur.size {
            None
        } else {
            Some(crate::engine::Injecting { seq: cur.seq + 1, ..cur })
        };
    }

    /// The sink at node `n` consumes a flit arriving from the router's ejection port.
    #[inline]
    pub(crate) fn eject(&mut self, n: usize, flit: Flit, now: Cycle) {
        self.send_credit(now + self.p.credit, self.attach_port[n], flit.vc, flit.is_tail());
        self.in_flight -= 1;
        self.flits_ejected += 1;
        self.last_progress = now;
        let measuring = self.measuring;
        let pkt = self.packets.get_mut(flit.packet);
        if pkt.dst as usize != n || flit.seq != pkt.received {
            self.violation.get_or_insert(format!(
                "packet {} flit {} reached node {n} out of order or misrouted (expected flit {} at node {})",
                flit.packet, flit.seq, pkt.received, pkt.dst
            ));
        }
        pkt.received += 1;
        let (m, size, received, class) = (pkt.message, pkt.size, pkt.received, pkt.class);
        if measuring {
            self.metrics.nodes[n].flits_accepted += 1;
            self.metrics.classes[class.index()].flits_accepted += 1;
        }
        if !flit.is_tail() {
            return;
        }
        if received != size {
            self.violation
                .get_or_insert(format!("packet {} ended after {received} of {size} flits", flit.packet));
        }
        self.packets.remove(flit.packet);
        let msg = self.messages.get_mut(m);
        msg.delivered += size as u32;
        if msg.delivered < msg.size {
            return;
        }
        let msg = *msg;
        self.messages.remove(m);
        if msg.measured {
            self.measured_outstanding -= 1;
            self.metrics.delivered(msg.class, msg.src, msg.dst, msg.size, msg.created, msg.injected, now);
        }
    }
}

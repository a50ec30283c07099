//! The preemptive router (document 003 §3.2): any class may use any VC, and a message of
//! higher priority may take a VC held by one of lower priority.
//!
//! Each input VC v has an extra buffer (lane C + v, `router.preemption.extra_buffer` flits,
//! s − 1 = 2 for the documents' three priority levels) with its own credits. A sender — a
//! NIC, or an upstream router's VC allocator — sends a higher-priority message into the
//! extra buffer of a VC whose regular buffer is held by a lower-priority one. When its
//! header arrives (stage 1), preemption begins:
//! - if the held message's tail has not passed the decoder yet, a **dummy tail** is made
//!   for it and crosses first, releasing the path the message holds downstream; the
//!   message's routing information goes on the VC's **history stack** (`ip_resume`,
//!   `resume_packet`), and after the preemptor has gone a **dummy header** made from it
//!   routes the rest of the message again;
//! - the preempted message's remaining flits wait in the input buffer while the extra
//!   buffer's message crosses.
//!
//! Flit acceleration (§3.2.2): the flits of a preempted message (its dummy tail) and of a
//! lower-priority message holding the output VC a higher-priority header wants (Fig. 2b)
//! get the lowest scheduler key until their tail crosses the crossbar. A header may take
//! an output VC held by a lower-priority message only once that message's tail has crossed
//! (no interleaving in the output buffer), into the downstream extra buffer.
//!
//! One level of preemption per VC (a history stack of depth 1): a VC whose extra buffer is
//! in use cannot be preempted again until it is free.

use super::Routers;
use crate::config::RouterKind;
use crate::flit::{Flit, DUMMY, HEAD, LOCAL, TAIL};
use crate::ids::PacketId;
use crate::net::RouterNet;
use crate::sched::vc_choice::victim;
use crate::unchecked::At;
use crate::units::Cycle;

/// The preemptive router's own state (`Routers::pre`), per input port masks over its VCs
/// unless said otherwise; untouched by the other routers.
#[derive(Clone, Debug)]
pub(crate) struct Preemption {
    /// VCs whose extra buffer holds a preempting message (the VC itself waits).
    pub ip_preempting: Vec<u32>,
    /// VCs whose preempted message's dummy tail must cross first.
    pub ip_draining: Vec<u32>,
    /// VCs whose preempted message resumes with a dummy header (its history-stack entry).
    pub ip_resume: Vec<u32>,
    /// Lanes holding a message whose tail has not arrived yet.
    pub ip_open: Vec<u32>,
    /// Lanes whose flits are accelerated (the lowest key) until their tail crosses.
    pub ip_accel: Vec<u32>,
    /// Per input VC: the preempted packet a dummy header will resume.
    pub resume_packet: Vec<PacketId>,
    /// Per router, a bit per input port with a preemption under way (`ip_preempting` or
    /// `ip_draining` non-empty): the crossbar reads those two masks only for these ports
    /// (`preemption_blocked`), where they are nearly always empty and their lines cold.
    pub r_preempting: Vec<u64>,
}

impl Preemption {
    /// For `routers` routers of `n_ports` ports in all and `n_vcs` input VC records.
    pub(crate) fn new(routers: usize, n_ports: usize, n_vcs: usize) -> Self {
        Preemption {
            ip_preempting: vec![0; n_ports],
            ip_draining: vec![0; n_ports],
            ip_resume: vec![0; n_ports],
            ip_open: vec![0; n_ports],
            ip_accel: vec![0; n_ports],
            resume_packet: vec![PacketId::NONE; n_vcs],
            r_preempting: vec![0; routers],
        }
    }
}

impl Routers {
    /// A preempting header arrived in the extra buffer of VC `v` of input port `ip`.
    pub(crate) fn preempt(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, now: Cycle) {
        *self.pre.ip_preempting.at_mut(ip) |= 1 << v;
        self.note_preemption(ip);
        // Only a message that is on its way out (holds an output VC, its header has crossed)
        // and is still arriving is cut by a dummy tail; any other keeps what it holds. One
        // whose header crosses later, during the preemption, is cut then (`traverse`).
        let ivc = self.p.lane_index(ip, v);
        if *self.ip_active.at(ip) & *self.pre.ip_open.at(ip) & (1 << v) != 0
            && (self.in_vc.at(ivc).buf.is_empty() || !self.in_vc.at(ivc).buf.front().is_head())
        {
            self.cut(net, ip, v, now);
        }
    }

    /// Cut the message holding VC `v` with a dummy tail that goes first; push its routing
    /// information on the history stack.
    pub(crate) fn cut(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, now: Cycle) {
        let bit = 1u32 << v;
        let ivc = self.p.lane_index(ip, v);
        let packet = self.in_vc.at(ivc).packet;
        let dummy = Flit::new(packet, 0, TAIL | DUMMY | LOCAL, v as u8, now + self.p.d_sync);
        self.insert_front(net, ip, v, dummy, now);
        *self.pre.resume_packet.at_mut(ivc) = packet;
        *self.pre.ip_resume.at_mut(ip) |= bit;
        *self.pre.ip_draining.at_mut(ip) |= bit;
        self.note_preemption(ip);
        if self.p.acceleration {
            self.accelerate(ip, v);
        }
    }

    /// The preempting message's tail crossed: the preempted VC goes on, resumed by a dummy
    /// header if it was cut.
    pub(crate) fn preemption_done(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, now: Cycle) {
        let bit = 1u32 << v;
        *self.pre.ip_preempting.at_mut(ip) &= !bit;
        self.note_preemption(ip);
        if *self.pre.ip_resume.at(ip) & bit == 0 {
            return;
        }
        *self.pre.ip_resume.at_mut(ip) &= !bit;
        let ivc = self.p.lane_index(ip, v);
        let packet = *self.pre.resume_packet.at(ivc);
        self.in_vc.at_mut(ivc).packet = packet;
        self.in_vc.at_mut(ivc).resumed = true;
        let dummy = Flit::new(packet, 0, HEAD | DUMMY | LOCAL, v as u8, now + 1);
        self.insert_front(net, ip, v, dummy, now);
        self.route_header(net, ip, v, dummy.ready);
        self.requeue(ip, v);
    }

    /// Put a flit made here at the front of input VC `v`'s buffer.
    fn insert_front(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, flit: Flit, now: Cycle) {
        let ivc = self.p.lane_index(ip, v);
        let (r, port) = *self.ip_place.at(ip);
        if flit.is_head() {
            let pkt = net.packet(flit.packet());
            self.in_keys.set_vtick(ip, v, pkt.vtick, pkt.flow);
        }
        self.inbuf.push_front(&mut self.in_vc.at_mut(ivc).buf, ivc, flit);
        if self.port_queues.on {
            self.port_queues.flit_in(&self.p, ivc);
        }
        // The keys of the flits behind are recomputed as they reach the front; the dummy's
        // own key is its arrival's.
        let key = self.in_keys.key(ip, v, now, flit.ready);
        let accelerated = *self.pre.ip_accel.at(ip) >> v & 1 == 1;
        self.in_vc.at_mut(ivc).set_front(flit.ready, key, accelerated);
        *self.ip_nonempty.at_mut(ip) |= 1 << v;
        *self.sa.r_ports.at_mut(r as usize) |= 1 << port;
        *self.work.at_mut(r as usize) += 1;
        net.progress().in_flight += 1;
        net.progress().dummy_flits += 1;
        net.progress().last_progress = now;
        self.activate(r as usize);
    }

    /// Accelerate lane `v` of input port `ip` until its tail crosses (§3.2.2): its front
    /// flit, and each flit reaching the front after it, carries the lowest key.
    fn accelerate(&mut self, ip: usize, v: usize) {
        *self.pre.ip_accel.at_mut(ip) |= 1 << v;
        self.in_vc.at_mut(self.p.lane_index(ip, v)).front.key = 0;
    }

    /// The preemption bookkeeping of a flit that crossed from lane `v` of input `ip`: a
    /// header or a tail (a body flit changes nothing here, so the crossbar calls it for
    /// the packet's ends alone).
    pub(crate) fn after_traverse(
        &mut self,
        net: &mut impl RouterNet,
        ip: usize,
        v: usize,
        flit: &Flit,
        local: bool,
        now: Cycle,
    ) {
        if flit.is_tail() {
            *self.pre.ip_accel.at_mut(ip) &= !(1 << v);
            if local {
                // A dummy tail made here has gone: the extra buffer may go now.
                *self.pre.ip_draining.at_mut(ip) &= !(1 << v);
                self.note_preemption(ip);
            }
            if v >= self.p.vcs {
                self.preemption_done(net, ip, v - self.p.vcs, now);
            }
        } else if flit.is_head() && (*self.pre.ip_preempting.at(ip) & *self.pre.ip_open.at(ip)) >> v & 1 == 1
        {
            // Its header crossed during a preemption while the rest is still arriving.
            self.cut(net, ip, v, now);
        }
    }

    /// A resumed packet (dummy header) must not overtake its own earlier part: it waits
    /// while a VC of output `op` still carries that part's dummy tail.
    #[inline]
    pub(crate) fn resumption_waits(&self, op: usize, packet: PacketId) -> bool {
        crate::sched::bits(*self.op_allocated.at(op))
            .any(|l| self.out_vc.at(self.p.lane_index(op, l)).guard == packet)
    }

    /// Lanes of input port `ip` the crossbar may not serve now: a preempted VC waits while
    /// its extra buffer's message goes (holds an output VC) — until then its flits are
    /// accelerated instead, so a preemptor waiting for the VC they hold gets it — except
    /// for its dummy tail, which goes first; the extra buffer waits for that dummy tail.
    /// (`ip` is input `port` of router `r`.)
    #[inline]
    pub(crate) fn preemption_blocked(&self, r: usize, port: usize, ip: usize) -> u32 {
        if *self.pre.r_preempting.at(r) >> port & 1 == 0 {
            debug_assert_eq!(*self.pre.ip_preempting.at(ip) | *self.pre.ip_draining.at(ip), 0);
            return 0;
        }
        let (pre, drain) = (*self.pre.ip_preempting.at(ip), *self.pre.ip_draining.at(ip));
        (pre & (*self.ip_active.at(ip) >> self.p.vcs) & !drain) | (drain << self.p.vcs)
    }

    /// Input port `ip`'s preempting or draining VCs changed: its bit in `r_preempting`
    /// follows (a preemption's start and end, rare beside the crossbar's reads).
    fn note_preemption(&mut self, ip: usize) {
        let (r, port) = *self.ip_place.at(ip);
        let bit = 1u64 << port;
        let busy = *self.pre.ip_preempting.at(ip) | *self.pre.ip_draining.at(ip) != 0;
        let mask = self.pre.r_preempting.at_mut(r as usize);
        *mask = if busy { *mask | bit } else { *mask & !bit };
    }

    /// Whether a header of `class` could take an output VC of `op` by preemption now (the
    /// preemptive router only: callers test their `PRE` variant first, at compile time).
    #[inline]
    pub(crate) fn may_preempt(&self, op: usize, route_vcs: u32, class: u8) -> bool {
        debug_assert_eq!(self.p.kind, RouterKind::Preemptive);
        let candidates = route_vcs & !(*self.op_allocated.at(op) >> self.p.vcs);
        (class as usize + 1..3).any(|c| self.op_held.at(op)[c] & candidates != 0)
    }

    /// Stage 3 of the preemptive router when no VC of the route is free: the VC held by
    /// the lowest-priority message below `class` whose tail has crossed and whose extra
    /// buffer is free, as its extra lane; else accelerate such a holder and wait.
    pub(crate) fn preempt_output(&mut self, op: usize, route_vcs: u32, class: u8) -> Option<usize> {
        let vcs = self.p.vcs;
        let allocated = *self.op_allocated.at(op);
        // The lowest-priority class below `class` holding a VC of the route whose extra
        // buffer is free (per-class masks: no scan over the VCs).
        let v = victim(self.op_held.at(op), route_vcs & !(allocated >> vcs), class)?;
        if *self.op_open.at(op) >> v & 1 == 1 {
            // Fig. 2(b): the holder's remaining flits must reach the output buffer first.
            if self.p.acceleration {
                let (oip, ov) = self.out_vc.at(self.p.lane_index(op, v)).owner_input();
                self.accelerate(oip, ov);
            }
            return None;
        }
        Some(vcs + v)
    }
}

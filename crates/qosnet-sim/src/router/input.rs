//! Stage 1 of the router (document 003 §3, Fig. 1): a flit from the link is synchronised
//! and demultiplexed into its VC buffer; a header is routed at once (stage 2,
//! `route_header`). And the other thing a link brings a router: a credit for one of its
//! output VCs, from the downstream buffer that drained a flit.

use super::Routers;
use crate::flit::Flit;
use crate::ids::PacketId;
use crate::metrics::trace::Hop;
use crate::net::RouterNet;
use crate::unchecked::At;
use crate::units::Cycle;

impl Routers {
    /// Stage 1: `flit` arrives at input port `ip`.
    #[inline(always)]
    pub(crate) fn receive<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        ip: usize,
        mut flit: Flit,
        now: Cycle,
    ) {
        let v = flit.vc() as usize;
        let ivc = self.p.lane_index(ip, v);
        flit.ready = now + self.p.d_sync;
        let (r, port) = *self.ip_place.at(ip);
        let (r, port) = (r as usize, port as usize);
        // (which lanes hold an open message only matters to preemption)
        if PRE && flit.is_tail() {
            *self.pre.ip_open.at_mut(ip) &= !(1 << v);
        }
        // A header behind another packet's flits (`VcRelease::TailSent` only) waits in the
        // buffer and is routed when it reaches the front (`Routers::next_packet`).
        let front_head = flit.is_head() && (!HOOK || self.in_vc.at(ivc).buf.is_empty());
        debug_assert!(
            !flit.is_head() || self.in_vc.at(ivc).buf.is_empty() || (HOOK && self.p.release_on_send && !PRE),
            "header into an occupied VC"
        );
        if front_head {
            if PRE && !flit.is_tail() {
                *self.pre.ip_open.at_mut(ip) |= 1 << v;
            }
            self.in_vc.at_mut(ivc).packet = flit.packet();
            self.in_vc.at_mut(ivc).resumed = PRE && flit.is_dummy();
            if PRE && v >= self.p.vcs {
                self.preempt(net, ip, v - self.p.vcs, now);
            }
        } else if !flit.is_head() {
            *self.sa.r_ports.at_mut(r) |= 1 << port;
        }
        let in_vc = self.in_vc.at_mut(ivc);
        if in_vc.buf.is_empty() {
            // (`!HOOK`: a run not by age is then by rate keys at both schedulers, `Variant`)
            if flit.is_head() && self.in_keys.rated_in::<AGE>(!HOOK) {
                let pkt = net.packet(flit.packet());
                self.in_keys.set_vtick(ip, v, pkt.vtick, pkt.flow);
            }
            let key = self.in_keys.key_in::<AGE>(!HOOK, ip, v, now, flit.ready);
            let accelerated = PRE && *self.pre.ip_accel.at(ip) >> v & 1 == 1;
            in_vc.set_front(flit.ready, key, accelerated);
        }
        self.inbuf.push(&mut in_vc.buf, ivc, flit);
        if HOOK && self.port_queues.on {
            self.port_queues.flit_in(&self.p, ivc);
        }
        if front_head {
            self.route_header(net, ip, v, flit.ready);
            if HOOK {
                self.requeue(ip, v);
            }
        }
        if HOOK && flit.is_head() && !flit.is_dummy() {
            let flow = net.packet(flit.packet()).flow;
            net.hop(now, flow, flit.packet(), Hop::Arrived, r, port, v);
        }
        *self.ip_nonempty.at_mut(ip) |= 1 << v;
        *self.work.at_mut(r) += 1;
        net.progress().last_progress = now;
        self.activate(r);
    }

    /// A credit for lane `vc` of output port `op` came back; with the packet's `tail` the
    /// output VC is free again (its holder's last flit has left the downstream buffer).
    #[inline(always)]
    pub(crate) fn credit_arrived<const HOOK: bool>(&mut self, op: usize, vc: u8, tail: bool) {
        let bit = 1u32 << vc;
        let out_vc = self.out_vc.at_mut(self.p.lane_index(op, vc as usize));
        out_vc.credits += 1;
        if tail {
            out_vc.guard = PacketId::NONE;
        }
        *self.op_credited.at_mut(op) |= bit;
        // (`CreditAt::Crossbar`: the input VC feeding it may have waited for one, if its
        // buffer has room)
        if HOOK && self.p.credit_at_crossbar && out_vc.credits == 1 && out_vc.buf.len() < self.p.output_depth
        {
            let (ports, owner) = (self.p.ports, out_vc.owner_input());
            self.wake_feeder(op / ports, op % ports, vc as usize, owner);
        }
        if tail && !self.p.release_on_send {
            self.free_output_vc(op, vc as usize);
        }
    }

    /// Output VC `ov` of port `op` may be allocated to another packet: when its holder's
    /// tail credit returns, or (`VcRelease::TailSent`) once the tail has crossed.
    #[inline]
    pub(crate) fn free_output_vc(&mut self, op: usize, ov: usize) {
        let bit = 1u32 << ov;
        *self.op_allocated.at_mut(op) &= !bit;
        for held in self.op_held.at_mut(op) {
            *held &= !bit;
        }
        self.wake_vc_alloc(op);
    }
}

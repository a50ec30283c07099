//! Stage 2: the routing decision for header flits (document 003 §3).

use crate::engine::Simulation;
use crate::sched::{bits, bits64};
use crate::units::Cycle;

impl Simulation {
    #[inline]
    pub(crate) fn routing_stage(&mut self, r: usize, now: Cycle) {
        let (ports, lanes, vcs) = (self.p.ports, self.p.lanes, self.p.vcs);
        for port in bits64(self.r_route_ports[r]) {
            let ip = r * ports + port;
            let waiting = self.ip_routing[ip];
            if waiting == 0 {
                self.r_route_ports[r] &= !(1 << port);
                continue;
            }
            for v in bits(waiting) {
                let ivc = ip * lanes + v;
                // The header is at the front (a header only enters an empty buffer, or is
                // put at its front by preemption): its arrival is the front's `ready`, its
                // packet the VC's.
                debug_assert!(self.inbuf.front(&self.in_vc[ivc].buf, ivc).is_head());
                if self.in_front[ivc].ready > now {
                    continue;
                }
                let pkt = self.packets.get(self.in_vc[ivc].packet);
                let (dst, class) = (pkt.dst as usize, pkt.class.index());
                // An extra (preemption) lane routes as its VC.
                let vc = if v >= vcs { v - vcs } else { v };
                let route = self.routing.route(&self.topo, r, port, vc, dst, vcs as u32);
                self.in_vc[ivc].out_port = route.port as u16;
                // The route's VCs that the message's class may use (document 003 §3.2).
                self.in_vc[ivc].route_vcs = route.vcs & self.p.class_vcs[class];
                self.in_vc[ivc].class = class as u8;
                self.in_vc[ivc].gate = now + self.p.d_routing;
                self.in_front[ivc].ready = self.in_front[ivc].ready.max(now + self.p.d_routing);
                self.ip_routing[ip] &= !(1 << v);
                self.ip_vc_alloc[ip] |= 1 << v;
                self.r_alloc_ports[r] |= 1 << port;
                self.last_progress = now;
            }
        }
    }
}

//! Stage 3: output-VC arbitration for header flits. Input ports are served in an order that
//! rotates every cycle, so no input port is favoured; a header takes a free VC among those
//! its route allows (lowest free, or round robin per output port).

use crate::engine::Simulation;
use crate::sched::{bits, rotated};
use crate::units::Cycle;

impl Simulation {
    #[inline]
    pub(crate) fn vc_alloc_stage(&mut self, r: usize, now: Cycle) {
        let (ports, vcs) = (self.p.ports, self.p.vcs);
        for port in rotated(self.r_alloc_ports[r], self.rr_start[r] as u32, ports) {
            let ip = r * ports + port;
            let waiting = self.ip_vc_alloc[ip];
            if waiting == 0 {
                self.r_alloc_ports[r] &= !(1 << port);
                continue;
            }
            for v in bits(waiting) {
                let ivc = ip * vcs + v;
                if self.in_vc[ivc].gate > now {
                    continue;
                }
                let op = r * ports + self.in_vc[ivc].out_port as usize;
                let free = self.in_vc[ivc].route_vcs & !self.op_allocated[op];
                if free == 0 {
                    continue;
                }
                let ov = Self::select_vc(self.p.vc_selection, free, &mut self.vc_rr[op]);
                self.op_allocated[op] |= 1 << ov;
                self.in_vc[ivc].out_vc = ov as u8;
                self.in_vc[ivc].ovc = (op * vcs + ov) as u32;
                self.ovc_owner[op * vcs + ov] = (ip << 5 | v) as u32;
                self.r_xbar_ports[r] |= 1 << port;
                self.in_vc[ivc].gate = now + self.p.d_vc_alloc;
                self.ip_vc_alloc[ip] &= !(1 << v);
                self.ip_active[ip] |= 1 << v;
                self.ip_to_out[ip * ports + self.in_vc[ivc].out_port as usize] |= 1 << v;
                self.last_progress = now;
            }
        }
    }
}

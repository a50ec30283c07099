//! Stage 4: the crossbar. The scheduler at each crossbar input chooses one of that port's
//! VCs whose front flit is ready and whose output VC buffer has room (document 003 §3,
//! Fig. 1). With speedup S an input may send, and an output accept, S flits per cycle.
//! Moving a flit out of the input buffer returns a credit upstream.

use super::MAX_PORTS;
use crate::engine::Simulation;
use crate::sched::{bits64, rotated};
use crate::units::Cycle;

impl Simulation {
    #[inline]
    pub(crate) fn crossbar_stage(&mut self, r: usize, now: Cycle) {
        let (ports, vcs) = (self.p.ports, self.p.vcs);
        let speedup = self.p.speedup as u8;
        let out_depth = self.p.output_depth;
        let mut grants = [0u8; MAX_PORTS];
        // Output ports that have taken all the flits they can this cycle.
        let mut saturated = 0u64;
        for port in rotated(self.r_xbar_ports[r], self.rr_start[r] as u32, ports) {
            let ip = r * ports + port;
            if self.ip_active[ip] & self.ip_nonempty[ip] & !self.ip_blocked[ip] == 0 {
                self.r_xbar_ports[r] &= !(1 << port);
                continue;
            }
            let mut used = 0u32;
            for _ in 0..speedup {
                // VCs heading to a saturated output are not even looked at.
                let mut excluded = 0u32;
                for out in bits64(saturated) {
                    excluded |= self.ip_to_out[ip * ports + out];
                }
                let waiting =
                    self.ip_active[ip] & self.ip_nonempty[ip] & !self.ip_blocked[ip] & !used & !excluded;
                if waiting == 0 {
                    break;
                }
                let blocked = std::cell::Cell::new(0u32);
                let (inbuf, outbuf, in_vc) = (&self.inbuf, &self.outbuf, &self.in_vc);
                let eligible = |v: usize| {
                    let ivc = ip * vcs + v;
                    let state = &in_vc[ivc];
                    if outbuf.len(state.ovc as usize) >= out_depth {
                        // Nothing to do until the output VC sends (output stage unblocks).
                        blocked.set(blocked.get() | 1 << v);
                        return None;
                    }
                    let ready = state.front_ready;
                    debug_assert_eq!(ready, inbuf.front(ivc).ready);
                    debug_assert!(grants[state.out_port as usize] < speedup);
                    (ready <= now && state.gate <= now).then_some(ready)
                };
                let chosen = self.xbar_sched[ip].select(waiting, eligible);
                self.ip_blocked[ip] |= blocked.get();
                let Some(v) = chosen else { break };
                let ivc = ip * vcs + v;
                let mut flit = self.inbuf.pop(ivc);
                if self.inbuf.is_empty(ivc) {
                    self.ip_nonempty[ip] &= !(1 << v);
                } else {
                    self.in_vc[ivc].front_ready = self.inbuf.front(ivc).ready;
                }
                let out = self.in_vc[ivc].out_port as usize;
                let ov = self.in_vc[ivc].out_vc as usize;
                let op = r * ports + out;
                flit.ready = now + self.p.d_crossbar;
                flit.vc = ov as u8;
                self.outbuf.push(self.in_vc[ivc].ovc as usize, flit);
                self.op_nonempty[op] |= 1 << ov;
                self.r_out_ports[r] |= 1 << out;
                grants[out] += 1;
                if grants[out] >= speedup {
                    saturated |= 1 << out;
                }
                used |= 1 << v;
                let tail = flit.is_tail();
                if tail {
                    self.ip_active[ip] &= !(1 << v);
                    self.ip_to_out[ip * ports + out] &= !(1 << v);
                }
                let up = self.credit_return[ip];
                self.send_credit(now + self.p.credit, up, v as u8, tail);
                self.last_progress = now;
            }
        }
    }
}

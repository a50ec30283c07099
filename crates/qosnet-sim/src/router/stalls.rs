//! Stall counting (`[trace] stalls`): at the end of every cycle, each occupied router VC
//! whose front flit was ready and did not move is charged to the reason it waits —
//! - `vc_alloc`: a header with no output VC yet (stage 3),
//! - `switch`: it holds an output VC with room and was not sent through the crossbar
//!   (lost the input's or the output's arbitration, or waits behind a preemption; stage 4),
//! - `output_full`: its output VC buffer is full (stage 5 is not draining it),
//!
//! and each output VC with a ready flit but no credit for the buffer downstream to
//! `no_credit` (back-pressure from the next hop). Runs with the per-flit hooks only.

use super::Routers;
use crate::metrics::trace::Stalls;
use crate::sched::{bits, bits64};
use crate::unchecked::At;
use crate::units::Cycle;

impl Routers {
    /// Charge this cycle's stalls of every router with flits.
    pub(crate) fn count_stalls(&self, now: Cycle, stalls: &mut Stalls) {
        let ports = self.p.ports;
        for (w, &word) in self.active.iter().enumerate() {
            for b in bits64(word) {
                let r = w * 64 + b;
                for ip in r * ports..(r + 1) * ports {
                    for v in bits(*self.ip_nonempty.at(ip)) {
                        let ivc = self.p.lane_index(ip, v);
                        let s = self.in_vc.at(ivc);
                        if s.front.ready > now || *stalls.moved_at.at(ivc) == now {
                            continue;
                        }
                        let cause = if *self.ip_active.at(ip) >> v & 1 == 0 {
                            0
                        } else if *self.ip_blocked.at(ip) >> v & 1 == 1 {
                            2
                        } else {
                            1
                        };
                        stalls.cycles.at_mut(ivc)[cause] += 1;
                    }
                    // (with credits taken at the crossbar its flits hold theirs: a VC out of
                    // them stalls at its input, as blocked)
                    let waiting = if self.p.credit_at_crossbar {
                        0
                    } else {
                        *self.op_nonempty.at(ip) & !*self.op_credited.at(ip)
                    };
                    for v in bits(waiting) {
                        let ovc = self.p.lane_index(ip, v);
                        if self.out_vc.at(ovc).buf.front().ready <= now {
                            stalls.cycles.at_mut(ovc)[3] += 1;
                        }
                    }
                }
            }
        }
    }
}

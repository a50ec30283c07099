//! What the congestion-control agents of document 000 §6.1 read of the routers over a side
//! band: each output port's free VCs (At-Least-One) and the number of full input buffers
//! in the network (Self-Tuned). Read by the engine between cycles, only when such an agent
//! runs; the cycle loop does not know of it.

use super::Routers;
use crate::control::RouterStatus;
use crate::routing::all_vcs;
use crate::unchecked::At;

impl RouterStatus for Routers {
    /// Each output port's (router * ports + port) regular VCs not held by a packet.
    fn free_out_vcs(&self, free: &mut [u32]) {
        let all = all_vcs(self.p.vcs as u32);
        for (port, f) in free.iter_mut().enumerate() {
            *f = all & !*self.op_allocated.at(port);
        }
    }

    /// Input VC buffers (regular VCs) holding as many flits as they can.
    fn full_buffers(&self) -> u64 {
        let ports = self.ip_place.len();
        let mut full = 0;
        for ip in 0..ports {
            for v in 0..self.p.vcs {
                if self.in_vc.at(self.p.lane_index(ip, v)).buf.len() >= self.p.input_depth {
                    full += 1;
                }
            }
        }
        full
    }
}

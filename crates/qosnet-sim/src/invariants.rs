//! A full consistency check of the network state, for tests (DESIGN.md "Invariants"):
//! flit conservation, credits within [0, depth] and conserved per VC, flits of one packet
//! only and in order in every VC buffer, the bookkeeping masks matching the buffers.

use crate::engine::{Simulation, Target, NIC_CREDIT};
use crate::error::SimError;
use crate::flit::LOCAL;

impl Simulation {
    pub fn check_invariants(&self) -> Result<(), SimError> {
        let fail = |what: String| Err(SimError::Invariant { cycle: self.now, what });
        let (ports, vcs) = (self.p.ports, self.p.lanes);
        let lane_depth = |v: usize| if v < self.p.vcs { self.p.input_depth } else { self.p.extra_depth };
        let n_vcs = self.inbuf_len();

        // Flits and credits in the timing wheels, by destination.
        let mut wheel_flits = vec![0u32; n_vcs];
        let mut wheel_flits_nic = 0u64;
        let mut wheel_total = 0u64;
        for a in self.arrivals.iter().flatten() {
            wheel_total += 1;
            match a.to {
                Target::Router(ip) => wheel_flits[ip as usize * vcs + a.flit.vc as usize] += 1,
                Target::Endpoint(_) => wheel_flits_nic += 1,
                Target::None => return fail("flit on an unconnected link".into()),
            }
        }
        let mut wheel_credits = vec![0u32; n_vcs];
        let mut wheel_credits_nic = vec![0u32; self.nic_credits.len()];
        for c in self.credit_wheel.iter().flatten() {
            if c.to & NIC_CREDIT != 0 {
                wheel_credits_nic[(c.to & !NIC_CREDIT) as usize * vcs + c.vc as usize] += 1;
            } else {
                wheel_credits[c.to as usize * vcs + c.vc as usize] += 1;
            }
        }
        let _ = wheel_flits_nic;

        // Conservation: injected = ejected + in buffers + on links.
        let buffered: u64 =
            (0..n_vcs).map(|q| (self.in_vc[q].buf.len() + self.out_vc[q].buf.len()) as u64).sum();
        if self.flits_injected + self.dummy_flits != self.flits_ejected + buffered + wheel_total {
            return fail(format!(
                "flit conservation: injected {} + dummies {} != ejected {} + buffered {} + on links {}",
                self.flits_injected, self.dummy_flits, self.flits_ejected, buffered, wheel_total
            ));
        }
        if self.in_flight != buffered + wheel_total {
            return fail(format!("in-flight counter {} != {}", self.in_flight, buffered + wheel_total));
        }

        // Credits: for every link, credits + downstream occupancy + flits and credits on the
        // wire equal the downstream buffer depth.
        for ip in 0..self.topo.routers * ports {
            let up = self.credit_return[ip];
            if up == u32::MAX {
                continue;
            }
            for v in 0..vcs {
                let ivc = ip * vcs + v;
                let depth = lane_depth(v);
                let (credits, wire_credits) = if up & NIC_CREDIT != 0 {
                    let i = (up & !NIC_CREDIT) as usize * vcs + v;
                    (self.nic_credits[i], wheel_credits_nic[i])
                } else {
                    let i = up as usize * vcs + v;
                    (self.out_vc[i].credits, wheel_credits[i])
                };
                let credited = if up & NIC_CREDIT != 0 {
                    self.nic_credited[(up & !NIC_CREDIT) as usize]
                } else {
                    self.op_credited[up as usize]
                };
                if (credited >> v & 1 == 1) != (credits > 0) {
                    return fail(format!(
                        "router[{}].in[{}].vc[{v}]: upstream credit mask out of date",
                        ip / ports,
                        ip % ports
                    ));
                }
                if credits > depth {
                    return fail(format!(
                        "router[{}].in[{}].vc[{v}]: upstream holds {credits} credits > depth {depth}",
                        ip / ports,
                        ip % ports
                    ));
                }
                // Dummy flits made here hold no credit.
                let buf = &self.in_vc[ivc].buf;
                let held = self.inbuf.iter(buf, ivc).filter(|f| f.kind & LOCAL == 0).count() as u32;
                let total = credits + held + wheel_flits[ivc] + wire_credits;
                if total != depth {
                    return fail(format!(
                        "router[{}].in[{}].vc[{v}]: credits {credits} + buffered {held} + on wire {} + credits on wire {wire_credits} != depth {depth}",
                        ip / ports, ip % ports, wheel_flits[ivc]
                    ));
                }
                // One packet per VC buffer, flits in order; masks match the buffer.
                let mut prev: Option<(u32, u16)> = None;
                for f in self.inbuf.iter(buf, ivc).filter(|f| !f.is_dummy()) {
                    if let Some((p, s)) = prev {
                        if f.packet != p || f.seq != s + 1 {
                            return fail(format!(
                                "router[{}].in[{}].vc[{v}]: flits interleaved or out of order",
                                ip / ports,
                                ip % ports
                            ));
                        }
                    }
                    prev = Some((f.packet, f.seq));
                }
                if (self.ip_nonempty[ip] >> v & 1 == 1) == buf.is_empty() {
                    return fail(format!(
                        "router[{}].in[{}].vc[{v}]: occupancy mask out of date",
                        ip / ports,
                        ip % ports
                    ));
                }
            }
        }
        // Ejection links: the sink consumes at once, so credits + wire = depth.
        for node in 0..self.topo.nodes {
            for v in 0..vcs {
                let depth = lane_depth(v);
                let i = self.attach_port[node] as usize * vcs + v;
                let on_wire = self
                    .arrivals
                    .iter()
                    .flatten()
                    .filter(|a| a.to == Target::Endpoint(node as u32) && a.flit.vc as usize == v)
                    .count() as u32;
                if self.out_vc[i].credits + wheel_credits[i] + on_wire != depth {
                    return fail(format!("ejection credits of node {node} vc {v} not conserved"));
                }
            }
        }
        for r in 0..self.topo.routers {
            let held: u32 = (0..ports)
                .flat_map(|p| (0..vcs).map(move |v| ((r * ports + p) * vcs + v, p)))
                .map(|(q, _)| self.in_vc[q].buf.len() + self.out_vc[q].buf.len())
                .sum();
            if held != self.work[r] {
                return fail(format!("router[{r}] work counter {} != flits held {held}", self.work[r]));
            }
        }
        if let Some(v) = &self.violation {
            return fail(v.clone());
        }
        Ok(())
    }

    /// Packets and messages currently alive (for exactly-once checks in tests).
    pub fn live_packets(&self) -> usize {
        self.packets.live()
    }
}

//! A full consistency check of the network state, for tests (ARCHITECTURE.md "Invariants"):
//! flit conservation, credits within [0, depth] and conserved per VC, flits of one packet
//! only and in order in every VC buffer, the bookkeeping masks matching the buffers.

use crate::engine::Simulation;
use crate::error::SimError;
use crate::flit::{Flit, LOCAL};
use crate::ids::{TO_ENDPOINT, TO_ROUTER};

/// Flits and credits on the links (in the two timing wheels), by where they are bound.
struct OnWire {
    /// Flits per router input VC, and in all (ejection links included).
    flits: Vec<u32>,
    total: u64,
    /// Flits per node and VC on its ejection link.
    ejecting: Vec<u32>,
    /// Credits per router output VC and per NIC lane.
    credits: Vec<u32>,
    credits_nic: Vec<u32>,
}

impl Simulation {
    /// Every invariant of the network state, the first one broken as an error naming it.
    pub fn check_invariants(&self) -> Result<(), SimError> {
        let wire = self.on_wire()?;
        self.check_conservation(&wire)?;
        for ip in 0..self.routers.topo.routers * self.routers.p.ports {
            if !self.routers.credit_return[ip].is_connected() {
                continue; // an unconnected port
            }
            for v in 0..self.routers.p.lanes {
                self.check_credits(ip, v, &wire)?;
                self.check_buffer(ip, v)?;
            }
        }
        self.check_ejection_credits(&wire)?;
        self.check_work_counters()?;
        self.check_port_queues()?;
        match &self.net.progress.violation {
            Some(v) => self.broken(v.clone()),
            None => Ok(()),
        }
    }

    /// Run to the end, checking every invariant after each `every` cycles (the tests'
    /// oracle: the first error, of the run or of an invariant, ends it).
    pub fn run_checking_invariants(&mut self, every: u64) -> Result<(), SimError> {
        loop {
            let done = self.advance(every)?;
            self.check_invariants()?;
            if done {
                return Ok(());
            }
        }
    }

    fn broken<T>(&self, what: String) -> Result<T, SimError> {
        Err(SimError::Invariant { cycle: self.now, what })
    }

    /// `router[r].in[p].vc[v]` for input port `ip` (router * ports + port).
    fn input_vc_name(&self, ip: usize, v: usize) -> String {
        self.all_routers().input_vc_path(self.routers.p.lane_index(ip, v)).to_string()
    }

    fn on_wire(&self) -> Result<OnWire, SimError> {
        let vcs = self.routers.p.lanes;
        let mut wire = OnWire {
            flits: vec![0; self.routers.lane_records()],
            total: 0,
            ejecting: vec![0; self.routers.topo.nodes * vcs],
            credits: vec![0; self.routers.lane_records()],
            credits_nic: vec![0; self.endpoints.nic_credits.len()],
        };
        let n_ports = self.routers.topo.routers * self.routers.p.ports;
        for (kind, a) in self.net.links.flits.iter() {
            wire.total += 1;
            let v = a.flit.vc() as usize;
            let to = a.to as usize;
            match kind {
                TO_ROUTER if to < n_ports => wire.flits[self.routers.p.lane_index(to, v)] += 1,
                TO_ENDPOINT if to < self.routers.topo.nodes => wire.ejecting[to * vcs + v] += 1,
                _ => return self.broken("flit on an unconnected link".into()),
            }
        }
        for (kind, c) in self.net.links.credits.iter() {
            if kind == TO_ENDPOINT {
                wire.credits_nic[c.to as usize * vcs + c.vc as usize] += 1;
            } else {
                wire.credits[self.routers.p.lane_index(c.to as usize, c.vc as usize)] += 1;
            }
        }
        Ok(wire)
    }

    /// Flit conservation: injected (and dummies made) = ejected + buffered + on links.
    fn check_conservation(&self, wire: &OnWire) -> Result<(), SimError> {
        let all = self.all_routers();
        let buffered: u64 = (0..all.lane_records())
            .map(|q| (all.of_lane(q).in_vc[q].buf.len() + all.of_lane(q).out_vc[q].buf.len()) as u64)
            .sum();
        if self.net.progress.flits_injected + self.net.progress.dummy_flits
            != self.net.progress.flits_ejected + buffered + wire.total
        {
            return self.broken(format!(
                "flit conservation: injected {} + dummies {} != ejected {} + buffered {} + on links {}",
                self.net.progress.flits_injected,
                self.net.progress.dummy_flits,
                self.net.progress.flits_ejected,
                buffered,
                wire.total
            ));
        }
        if self.net.progress.in_flight != buffered + wire.total {
            return self.broken(format!(
                "in-flight counter {} != {}",
                self.net.progress.in_flight,
                buffered + wire.total
            ));
        }
        Ok(())
    }

    /// Credits of the link into input VC `v` of port `ip`: the sender's credits, the
    /// flits in the buffer and on the wire, and the credits on their way back add up to
    /// the buffer's depth; the sender's credit mask matches its count.
    fn check_credits(&self, ip: usize, v: usize, wire: &OnWire) -> Result<(), SimError> {
        let vcs = self.routers.p.lanes;
        let up = self.routers.credit_return[ip];
        let depth = self.routers.p.lane_depth(v);
        let (kind, up) = up.split();
        let (credits, credits_on_wire, credited, taken) = if kind == TO_ENDPOINT {
            let node = up as usize;
            let i = node * vcs + v;
            (self.endpoints.nic_credits[i], wire.credits_nic[i], self.endpoints.nic_credited[node], 0)
        } else {
            let i = self.routers.p.lane_index(up as usize, v);
            let upstream = self.all_routers().of_lane(i);
            // (`CreditAt::Crossbar`: the flits in the output VC buffer took theirs)
            let taken = upstream.credits_taken(i);
            (upstream.out_vc[i].credits, wire.credits[i], upstream.op_credited[up as usize], taken)
        };
        let name = || self.input_vc_name(ip, v);
        if (credited >> v & 1 == 1) != (credits > 0) {
            return self.broken(format!("{}: upstream credit mask out of date", name()));
        }
        // (the upstream output VC's flits that took a credit count as credits held)
        let credits = credits + taken;
        if credits > depth {
            return self.broken(format!("{}: upstream holds {credits} credits > depth {depth}", name()));
        }
        // Dummy flits made here hold no credit.
        let ivc = self.routers.p.lane_index(ip, v);
        let here = self.all_routers().of_lane(ivc);
        let buf = &here.in_vc[ivc].buf;
        let held = here.inbuf.iter(buf, ivc).filter(|f| f.kind() & LOCAL == 0).count() as u32;
        let flits_on_wire = wire.flits[ivc];
        if credits + held + flits_on_wire + credits_on_wire != depth {
            return self.broken(format!(
                "{}: credits {credits} + buffered {held} + on wire {flits_on_wire} + credits on wire {credits_on_wire} != depth {depth}",
                name()
            ));
        }
        Ok(())
    }

    /// Input VC `v` of port `ip` holds flits of one packet, in order (dummies aside), or
    /// with `VcRelease::TailSent` whole packets one after another, and its occupancy bit
    /// matches.
    fn check_buffer(&self, ip: usize, v: usize) -> Result<(), SimError> {
        let ivc = self.routers.p.lane_index(ip, v);
        let here = self.all_routers().of_lane(ivc);
        let buf = &here.in_vc[ivc].buf;
        let flits: Vec<_> = here.inbuf.iter(buf, ivc).filter(|f| !f.is_dummy()).collect();
        // (with `VcRelease::TailSent` a whole packet may follow a tail)
        let next_packet = |a: &Flit, b: &Flit| self.routers.p.release_on_send && a.is_tail() && b.is_head();
        let in_order = |a: &Flit, b: &Flit| b.packet() == a.packet() && b.seq() == a.seq() + 1;
        if flits.windows(2).any(|w| !in_order(&w[0], &w[1]) && !next_packet(&w[0], &w[1])) {
            return self.broken(format!("{}: flits interleaved or out of order", self.input_vc_name(ip, v)));
        }
        if (here.ip_nonempty[ip] >> v & 1 == 1) == buf.is_empty() {
            return self.broken(format!("{}: occupancy mask out of date", self.input_vc_name(ip, v)));
        }
        Ok(())
    }

    /// Ejection links: the sink consumes at once, so credits + flits on the wire + credits
    /// on the wire = depth (+ the flits in the output VC buffer, which took theirs with
    /// `CreditAt::Crossbar`).
    fn check_ejection_credits(&self, wire: &OnWire) -> Result<(), SimError> {
        let vcs = self.routers.p.lanes;
        for node in 0..self.routers.topo.nodes {
            for v in 0..vcs {
                let i = self.routers.p.lane_index(self.endpoints.eject_port[node].index(), v);
                let upstream = self.all_routers().of_lane(i);
                let (credits, taken) = (upstream.out_vc[i].credits, upstream.credits_taken(i));
                let total = credits + taken + wire.credits[i] + wire.ejecting[node * vcs + v];
                if total != self.routers.p.lane_depth(v) {
                    return self.broken(format!("ejection credits of node {node} vc {v} not conserved"));
                }
            }
        }
        Ok(())
    }

    /// Each router's work counter is the number of flits its buffers hold.
    fn check_work_counters(&self) -> Result<(), SimError> {
        let per_router = self.routers.p.ports * self.routers.p.lane_stride;
        for r in 0..self.routers.topo.routers {
            let here = self.all_routers().of(r);
            let held: u32 = (r * per_router..(r + 1) * per_router)
                .map(|q| here.in_vc[q].buf.len() + here.out_vc[q].buf.len())
                .sum();
            if held != here.work[r] {
                return self
                    .broken(format!("router[{r}] work counter {} != flits held {held}", here.work[r]));
            }
        }
        Ok(())
    }

    /// IBA CC's queues per output port and VL (`router::marking::PortQueues`), kept as
    /// flits come and go, equal what a scan of the router's input VCs finds.
    fn check_port_queues(&self) -> Result<(), SimError> {
        let rs = &self.routers;
        if !rs.port_queues.on {
            return Ok(());
        }
        let ports = rs.p.ports;
        for r in 0..rs.topo.routers {
            let (alloc, parked) = (&rs.va.ip_vc_alloc, &rs.va.ip_parked);
            let count = rs.port_queues.count_waiting;
            let waiting = |ip: usize| if count { alloc[ip] | parked[ip] } else { 0 };
            for out in 0..ports {
                for ov in 0..rs.p.lanes {
                    let ips = r * ports..(r + 1) * ports;
                    let scan = crate::router::port_queue::port_queue(
                        &rs.p,
                        &rs.in_vc,
                        ips,
                        &rs.ip_active,
                        waiting,
                        (out, ov),
                        0,
                    );
                    let kept = rs.port_queues.queued(rs.p.lane_index(r * ports + out, ov));
                    if kept != scan {
                        return self.broken(format!(
                            "router[{r}].out[{out}].vc[{ov}]: IBA CC's queue is kept as {kept}, the input VCs hold {scan}"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Packets and messages currently alive (for exactly-once checks in tests).
    pub fn live_packets(&self) -> usize {
        self.net.packets.live()
    }
}

#[cfg(test)]
mod tests {
    //! The checker catches each kind of corruption: a network in mid-run passes, and one
    //! wrong count or bit is reported by name.
    use super::*;

    fn busy() -> Simulation {
        let mut sim = Simulation::from_toml(
            r#"
            [simulation]
            seed = 3
            [topology]
            kind = "mesh"
            k = 4
            n = 2
            [router]
            vcs = 4
            input_buffer = 4
            output_buffer = 4
            [[traffic]]
            process = "bernoulli"
            load = 0.5
            message_flits = 40
            packet_flits = 40
            pattern = { kind = "uniform" }
            "#,
            None,
        )
        .unwrap();
        sim.advance(600).unwrap();
        sim.check_invariants().unwrap();
        sim
    }

    fn broken(sim: &Simulation) -> String {
        match sim.check_invariants() {
            Err(SimError::Invariant { what, .. }) => what,
            other => panic!("corruption not caught: {other:?}"),
        }
    }

    /// Some input port fed by a router (not a NIC), and a VC of it, such that `pick`.
    fn router_fed(sim: &Simulation, pick: impl Fn(usize, usize) -> bool) -> (usize, usize) {
        (0..sim.routers.topo.routers * sim.routers.p.ports)
            .filter(|&ip| {
                sim.routers.credit_return[ip].is_connected() && !sim.routers.credit_return[ip].is_endpoint()
            })
            .flat_map(|ip| (0..sim.routers.p.lanes).map(move |v| (ip, v)))
            .find(|&(ip, v)| pick(ip, v))
            .expect("a busy network has one")
    }

    #[test]
    fn a_lost_flit_breaks_conservation() {
        let mut sim = busy();
        sim.net.progress.flits_injected += 1;
        assert!(broken(&sim).starts_with("flit conservation"));
    }

    #[test]
    fn a_credit_too_many_is_named_by_vc() {
        let mut sim = busy();
        let depth = sim.routers.p.input_depth;
        let up = |sim: &Simulation, ip: usize, v: usize| {
            sim.routers.p.lane_index(sim.routers.credit_return[ip].index(), v)
        };
        let (ip, v) =
            router_fed(&sim, |ip, v| (1..depth).contains(&sim.routers.out_vc[up(&sim, ip, v)].credits));
        let i = up(&sim, ip, v);
        sim.routers.out_vc[i].credits += 1;
        let what = broken(&sim);
        assert!(
            what.starts_with(&sim.input_vc_name(ip, v)) && what.ends_with(&format!("!= depth {depth}")),
            "{what}"
        );
    }

    #[test]
    fn a_stale_credit_mask() {
        let mut sim = busy();
        let (ip, v) = router_fed(&sim, |ip, v| {
            sim.routers.out_vc[sim.routers.p.lane_index(sim.routers.credit_return[ip].index(), v)].credits > 0
        });
        sim.routers.op_credited[sim.routers.credit_return[ip].index()] &= !(1 << v);
        assert_eq!(broken(&sim), format!("{}: upstream credit mask out of date", sim.input_vc_name(ip, v)));
    }

    #[test]
    fn a_stale_occupancy_mask() {
        let mut sim = busy();
        let (ip, v) =
            router_fed(&sim, |ip, v| !sim.routers.in_vc[sim.routers.p.lane_index(ip, v)].buf.is_empty());
        sim.routers.ip_nonempty[ip] &= !(1 << v);
        assert_eq!(broken(&sim), format!("{}: occupancy mask out of date", sim.input_vc_name(ip, v)));
    }

    #[test]
    fn flits_out_of_order() {
        let mut sim = busy();
        // a buffer holding two flits or more: its front flit's place taken by a later one
        let mut found = None;
        for _ in 0..2000 {
            found = (0..sim.routers.lane_records()).find(|&q| sim.routers.in_vc[q].buf.len() >= 2);
            if found.is_some() {
                break;
            }
            sim.step().unwrap();
        }
        let ivc = found.expect("some buffer fills within 2000 cycles at load 0.5");
        let mut state = sim.routers.in_vc[ivc].buf;
        let mut front = sim.routers.inbuf.pop(&mut state, ivc);
        front.set_seq(front.seq() + 5);
        sim.routers.inbuf.push_front(&mut state, ivc, front);
        sim.routers.in_vc[ivc].buf = state;
        let what = broken(&sim);
        assert_eq!(what, {
            let (ip, v) = sim.routers.p.lane_place(ivc);
            format!("{}: flits interleaved or out of order", sim.input_vc_name(ip, v))
        });
    }

    #[test]
    fn an_ejection_credit_too_many() {
        let mut sim = busy();
        let node = 5;
        let i = sim.routers.p.lane_index(sim.endpoints.eject_port[node].index(), 0);
        sim.routers.out_vc[i].credits += 1;
        assert_eq!(broken(&sim), format!("ejection credits of node {node} vc 0 not conserved"));
    }

    #[test]
    fn a_wrong_work_counter() {
        let mut sim = busy();
        sim.routers.work[2] += 1;
        assert!(broken(&sim).starts_with("router[2] work counter"));
    }
}

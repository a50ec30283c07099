//! At-Least-One (ALO) injection limitation: E. Baydal, P. López and J. Duato, "A Simple
//! and Efficient Mechanism to Prevent Saturation in Wormhole Networks", IPDPS 2000 (document
//! 000's reference [1], §6.1). Congestion is estimated locally at the source's router: a
//! new message may enter the network only if at least one VC is free in every useful
//! output channel (the channels the routing function offers toward its destination), or
//! at least one useful channel has all its VCs free; otherwise it is throttled.
//!
//! Document 000 extends the scheme with the HCA buffer's status: the message also needs a
//! free VC of its class on the HCA's own link. Here that is the endpoint's own condition
//! for starting a packet (a free lane), checked after the agent's, so ALO adds the router
//! side. Control traffic is never throttled (it has the highest priority, §5.2).
//!
//! The router's state reaches the agent over a side band: the engine copies each output
//! port's free VCs at the end of every cycle (`Simulation::sideband`), so the source sees
//! its router as of the previous cycle, as a node reading its router's status lines would.

use super::interface::{CongestionControl, Timer};
use super::{CongestionStats, FlowFacts, RouterStatus};
use crate::config::TrafficClass;
use crate::error::ConfigError;
use crate::units::Cycle;

/// Most nodes ALO's first-hop table (nodes² entries) is built for.
const MAX_NODES: usize = 4096;

/// A useful output channel: the source router's output port and the VCs the route allows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Useful {
    pub port: u32,
    pub vcs: u32,
}

/// ALO's per-node view of its router and the routes from it.
#[derive(Clone, Debug)]
pub(crate) struct Alo {
    nodes: usize,
    /// Per (source node, destination): the useful channels (one per path the routing
    /// function offers; deterministic routing offers one).
    first_hop: Vec<Vec<Useful>>,
    /// Per router output port (router * ports + port): its free output VCs (the side band).
    pub free: Vec<u32>,
    /// Per flow: its class (control is never throttled), and per class its VCs.
    class: Vec<TrafficClass>,
    class_vcs: [u32; 3],
    /// Nodes throttled since the last refresh (woken when the view changes).
    pub throttled: Vec<u32>,
    /// Messages held back (counted once per refusal).
    pub throttles: u64,
}

impl Alo {
    /// The agent for the flows `f` (`Agents::for_flows`): per (source, destination) the
    /// useful channels at the source's router, one per path the routing offers, with the
    /// VCs the route allows.
    pub fn for_flows(f: &FlowFacts) -> Result<Alo, ConfigError> {
        let (topo, nodes) = (f.topo, f.topo.nodes);
        if nodes > MAX_NODES {
            return Err(ConfigError::new(
                "endpoint.agent",
                format!(
                    "ALO keeps a first-hop table of nodes^2 entries: at most {MAX_NODES} nodes, got {nodes}"
                ),
            ));
        }
        let mut first_hop = Vec::with_capacity(nodes * nodes);
        for src in 0..nodes {
            let (r, p) = topo.attach[src];
            for dst in 0..nodes {
                let useful = (0..f.routing.paths())
                    .map(|path| {
                        let route = f.routing.route(topo, r.index(), p as usize, 0, dst, path, f.vcs);
                        Useful { port: r.0 * topo.ports as u32 + route.port, vcs: route.vcs }
                    })
                    .collect();
                first_hop.push(useful);
            }
        }
        Ok(Alo::new(nodes, first_hop, topo.routers * topo.ports, f.class.clone(), f.class_vcs))
    }

    /// `first_hop[src * nodes + dst]`: the useful channels (as router output port indices);
    /// `ports`: router ports in the network; `class[f]`: flow f's class.
    pub fn new(
        nodes: usize,
        first_hop: Vec<Vec<Useful>>,
        ports: usize,
        class: Vec<TrafficClass>,
        class_vcs: [u32; 3],
    ) -> Alo {
        Alo { nodes, first_hop, free: vec![0; ports], class, class_vcs, throttled: Vec::new(), throttles: 0 }
    }

    /// May a message of `flow` from `node` to `dst` enter the network now?
    pub fn may_start(&mut self, node: usize, flow: u32, dst: u32) -> bool {
        let class = match self.class.get(flow as usize) {
            None | Some(TrafficClass::Control) => return true,
            Some(&c) => c,
        };
        // The VCs of each useful channel the message's class may take.
        let vcs = self.class_vcs[class.index()];
        let useful = &self.first_hop[node * self.nodes + dst as usize];
        let every_has_one = useful.iter().all(|u| self.free[u.port as usize] & u.vcs & vcs != 0);
        let one_all_free = useful.iter().any(|u| self.free[u.port as usize] & u.vcs & vcs == u.vcs & vcs);
        let ok = every_has_one || one_all_free;
        if !ok {
            self.throttles += 1;
            self.throttled.push(node as u32);
        }
        ok
    }
}

impl CongestionControl for Alo {
    #[inline]
    fn may_start(&mut self, node: usize, flow: u32, dst: u32, _: Cycle, _: &mut Vec<Timer>) -> bool {
        Alo::may_start(self, node, flow, dst)
    }
    /// The free output VCs of every router port, read each cycle; the nodes throttled
    /// since are woken.
    fn read_sideband(&mut self, status: &impl RouterStatus, _: u64) -> Option<Vec<u32>> {
        status.free_out_vcs(&mut self.free);
        (!self.throttled.is_empty()).then(|| std::mem::take(&mut self.throttled))
    }
    fn stats(&self) -> Option<CongestionStats> {
        Some(CongestionStats { throttles: self.throttles, ..Default::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BE: TrafficClass = TrafficClass::BestEffort;

    /// Two nodes; node 0 reaches node 1 through ports 3 and 5 (two useful channels of VCs
    /// 0-3), and node 1 reaches node 0 through port 7 alone.
    fn alo() -> Alo {
        let u = |port| Useful { port, vcs: 0b1111 };
        let first_hop = vec![vec![], vec![u(3), u(5)], vec![u(7)], vec![]];
        Alo::new(2, first_hop, 8, vec![BE, TrafficClass::Control], [0, 0, 0b1111])
    }

    #[test]
    fn one_free_vc_in_every_useful_channel_or_one_channel_all_free() {
        let mut a = alo();
        // Port 3 has VC 2 free, port 5 VC 0: at least one in each.
        a.free[3] = 0b0100;
        a.free[5] = 0b0001;
        assert!(a.may_start(0, 0, 1));
        // Port 5 full: not every channel has one, and none is all free.
        a.free[5] = 0;
        assert!(!a.may_start(0, 0, 1));
        assert_eq!((a.throttles, a.throttled.as_slice()), (1, &[0][..]));
        // Port 3 all free: one channel with all its VCs free is enough.
        a.free[3] = 0b1111;
        assert!(a.may_start(0, 0, 1));
        // VCs outside the route's do not count.
        a.free[7] = 0b1_0000;
        assert!(!a.may_start(1, 0, 0));
        // Control is never throttled.
        assert!(a.may_start(1, 1, 0));
    }
}

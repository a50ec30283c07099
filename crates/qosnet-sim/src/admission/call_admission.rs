//! Call admission for rate-controlled flows (document 004 §3.4).
//!
//! A new flow with bandwidth requirement B_req from `src` to `dst` is admitted only if,
//! with it,
//! a) the flows sourced at `src` stay within the source node's peak capacity,
//! b) the flows through every switch output port on the flow's deterministic path stay
//!    within that port's outgoing link capacity (the last one is the port to `dst`),
//! c) the flows sinking at `dst` stay within the destination node's peak capacity.
//!
//! Clusters route deterministically, so a flow's path is fixed and is taken from the one
//! routing implementation the simulator uses (`Routing::path`). Refusals name the criterion
//! and the resource. Capacities and reservations are in bits per second (whole b/s for
//! reservations, so accounting is exact).

use crate::ids::NodeId;
use crate::routing::Routing;
use crate::topology::Topology;
use std::fmt;

/// Relative slack on capacity comparisons, so that reservations that add up to exactly the
/// capacity (e.g. 4 x 25%) are admitted despite rounding.
const SLACK: f64 = 1e-9;

/// An admitted flow.
#[derive(Clone, Debug, PartialEq)]
pub struct Reservation {
    pub src: u32,
    pub dst: u32,
    pub bits_per_second: f64,
    /// (router, output port) hops, the last being the port to `dst`.
    pub path: Vec<(u32, u32)>,
}

/// Why a flow was refused: the first criterion of document 004 §3.4 it would break.
#[derive(Clone, Debug, PartialEq)]
pub enum Rejection {
    /// Criterion a): the source node's peak capacity.
    Source { node: u32, reserved: f64, requested: f64, capacity: f64 },
    /// Criterion b): a switch output port's link capacity.
    SwitchPort { router: u32, port: u32, reserved: f64, requested: f64, capacity: f64 },
    /// Criterion c): the destination node's peak capacity.
    Destination { node: u32, reserved: f64, requested: f64, capacity: f64 },
    /// The request itself is malformed.
    Invalid(String),
}

fn mbps(b: f64) -> String {
    format!("{:.3} Mb/s", b / 1e6)
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Source { node, reserved, requested, capacity } => write!(
                f,
                "source node {node}: {} reserved + {} requested exceeds its peak capacity {}",
                mbps(*reserved),
                mbps(*requested),
                mbps(*capacity)
            ),
            Rejection::SwitchPort { router, port, reserved, requested, capacity } => write!(
                f,
                "switch {router} output port {port}: {} reserved + {} requested exceeds the link capacity {}",
                mbps(*reserved),
                mbps(*requested),
                mbps(*capacity)
            ),
            Rejection::Destination { node, reserved, requested, capacity } => write!(
                f,
                "destination node {node}: {} reserved + {} requested exceeds its peak capacity {}",
                mbps(*reserved),
                mbps(*requested),
                mbps(*capacity)
            ),
            Rejection::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for Rejection {}

/// Reserved bandwidth at every node and switch output port of one network.
#[derive(Clone, Debug)]
pub struct CallAdmission {
    topo: Topology,
    routing: Routing,
    vcs: u32,
    /// Per node: peak capacity as a source and as a destination.
    pub(crate) node_capacity: Vec<f64>,
    /// Per (router * ports + port): the outgoing link's capacity.
    pub(crate) port_capacity: Vec<f64>,
    sourced: Vec<f64>,
    sunk: Vec<f64>,
    through: Vec<f64>,
    flows: Vec<Option<Reservation>>,
}

impl CallAdmission {
    /// Every link carries `link_bps`; every node can source and sink `node_bps` (its NIC's
    /// peak achievable bandwidth, at most the link's).
    pub fn new(topo: &Topology, routing: &Routing, vcs: u32, link_bps: f64, node_bps: f64) -> CallAdmission {
        let ports = topo.routers * topo.ports;
        CallAdmission {
            topo: topo.clone(),
            routing: routing.clone(),
            vcs,
            node_capacity: vec![node_bps; topo.nodes],
            port_capacity: vec![link_bps; ports],
            sourced: vec![0.0; topo.nodes],
            sunk: vec![0.0; topo.nodes],
            through: vec![0.0; ports],
            flows: Vec::new(),
        }
    }

    /// Set one switch output port's link capacity (heterogeneous links).
    pub fn set_port_capacity(&mut self, router: u32, port: u32, bps: f64) {
        self.port_capacity[router as usize * self.topo.ports + port as usize] = bps;
    }

    /// Set one node's peak capacity.
    pub fn set_node_capacity(&mut self, node: u32, bps: f64) {
        self.node_capacity[node as usize] = bps;
    }

    /// The deterministic path of a flow, as (router, output port) numbers: admission's
    /// callers (the bindings, the service) name nodes and switches by number, checked here.
    pub fn path(&self, src: u32, dst: u32) -> Vec<(u32, u32)> {
        let path = self.routing.path(&self.topo, self.vcs, NodeId(src), NodeId(dst));
        path.into_iter().map(|(router, port)| (router.0, port)).collect()
    }

    /// Whether the flow would be admitted now, and its path if so. Changes nothing.
    pub fn check(&self, src: u32, dst: u32, bps: f64) -> Result<Vec<(u32, u32)>, Rejection> {
        let nodes = self.topo.nodes as u32;
        if src >= nodes || dst >= nodes {
            return Err(Rejection::Invalid(format!(
                "nodes must be in 0..{nodes}, got source {src} and destination {dst}"
            )));
        }
        if src == dst {
            return Err(Rejection::Invalid(format!("source and destination are both node {src}")));
        }
        if !(bps.is_finite() && bps >= 0.5) {
            return Err(Rejection::Invalid(format!("bandwidth must be at least 1 b/s, got {bps}")));
        }
        // Whole bits per second: sums and differences of integers below 2^53 are exact in
        // f64, so releasing every flow returns each count to exactly zero.
        let bps = bps.round();
        let over = |used: f64, cap: f64| used + bps > cap * (1.0 + SLACK);
        let (s, d) = (src as usize, dst as usize);
        if over(self.sourced[s], self.node_capacity[s]) {
            let (reserved, capacity) = (self.sourced[s], self.node_capacity[s]);
            return Err(Rejection::Source { node: src, reserved, requested: bps, capacity });
        }
        let path = self.path(src, dst);
        for &(router, port) in &path {
            let i = router as usize * self.topo.ports + port as usize;
            if over(self.through[i], self.port_capacity[i]) {
                let (reserved, capacity) = (self.through[i], self.port_capacity[i]);
                return Err(Rejection::SwitchPort { router, port, reserved, requested: bps, capacity });
            }
        }
        if over(self.sunk[d], self.node_capacity[d]) {
            let (reserved, capacity) = (self.sunk[d], self.node_capacity[d]);
            return Err(Rejection::Destination { node: dst, reserved, requested: bps, capacity });
        }
        Ok(path)
    }

    /// Admit the flow (reserving its bandwidth everywhere on its path) or refuse it,
    /// leaving every reservation unchanged.
    pub fn admit(&mut self, src: u32, dst: u32, bps: f64) -> Result<u32, Rejection> {
        let path = self.check(src, dst, bps)?;
        let bps = bps.round();
        self.sourced[src as usize] += bps;
        self.sunk[dst as usize] += bps;
        for &(router, port) in &path {
            self.through[router as usize * self.topo.ports + port as usize] += bps;
        }
        self.flows.push(Some(Reservation { src, dst, bits_per_second: bps, path }));
        Ok((self.flows.len() - 1) as u32)
    }

    /// Admit every flow of a job or none of them (document 001 §3.4: a job's allocation is
    /// all-or-nothing). Flows are checked against each other's reservations as well, so two
    /// flows of the job sharing a port count twice. Returns their ids in order, or the first
    /// refusal with its flow's index, leaving every reservation unchanged.
    pub fn admit_all(&mut self, flows: &[(u32, u32, f64)]) -> Result<Vec<u32>, (usize, Rejection)> {
        let mut ids = Vec::with_capacity(flows.len());
        for (i, &(src, dst, bps)) in flows.iter().enumerate() {
            match self.admit(src, dst, bps) {
                Ok(id) => ids.push(id),
                Err(why) => {
                    for &id in ids.iter().rev() {
                        self.release(id);
                    }
                    return Err((i, why));
                }
            }
        }
        Ok(ids)
    }

    /// Release an admitted flow, returning its bandwidth everywhere; `None` if `id` is not
    /// an admitted flow.
    pub fn release(&mut self, id: u32) -> Option<Reservation> {
        let r = self.flows.get_mut(id as usize)?.take()?;
        let bps = r.bits_per_second;
        // Clamp at zero: releases in any order must not leave -1e-10 behind.
        let sub = |x: &mut f64| *x = (*x - bps).max(0.0);
        sub(&mut self.sourced[r.src as usize]);
        sub(&mut self.sunk[r.dst as usize]);
        for &(router, port) in &r.path {
            sub(&mut self.through[router as usize * self.topo.ports + port as usize]);
        }
        Some(r)
    }

    pub fn reservation(&self, id: u32) -> Option<&Reservation> {
        self.flows.get(id as usize)?.as_ref()
    }

    /// Reserved bandwidth leaving through switch output port (router, port).
    pub fn port_reserved(&self, router: u32, port: u32) -> f64 {
        self.through[router as usize * self.topo.ports + port as usize]
    }

    pub fn port_capacity(&self, router: u32, port: u32) -> f64 {
        self.port_capacity[router as usize * self.topo.ports + port as usize]
    }

    /// Reserved bandwidth sourced at and sunk at `node`.
    pub fn node_reserved(&self, node: u32) -> (f64, f64) {
        (self.sourced[node as usize], self.sunk[node as usize])
    }

    pub fn node_capacity(&self, node: u32) -> f64 {
        self.node_capacity[node as usize]
    }

    pub fn topology(&self) -> &Topology {
        &self.topo
    }

    /// The largest bandwidth, b/s, that every one of `flows` (src, dst) could be given at
    /// once, each the same (document 001 §3.4's allocator asks this of each candidate node
    /// set): the least, over every source, switch output port and destination the flows
    /// use, of its room now divided by the flows through it. Changes nothing; 0 when a
    /// resource is full; infinite for no flows.
    pub fn grantable(&self, flows: &[(u32, u32)]) -> Result<f64, Rejection> {
        let nodes = self.topo.nodes as u32;
        // How many of the flows use each resource: sources, sinks, then ports.
        let mut count = vec![0u32; 2 * self.topo.nodes + self.through.len()];
        for &(src, dst) in flows {
            if src >= nodes || dst >= nodes || src == dst {
                return Err(Rejection::Invalid(format!(
                    "a flow needs two different nodes in 0..{nodes}, got {src} -> {dst}"
                )));
            }
            count[src as usize] += 1;
            count[self.topo.nodes + dst as usize] += 1;
            for (router, port) in self.path(src, dst) {
                count[2 * self.topo.nodes + router as usize * self.topo.ports + port as usize] += 1;
            }
        }
        let n = self.topo.nodes;
        let room = |i: usize| match i {
            i if i < n => self.node_capacity[i] - self.sourced[i],
            i if i < 2 * n => self.node_capacity[i - n] - self.sunk[i - n],
            i => self.port_capacity[i - 2 * n] - self.through[i - 2 * n],
        };
        Ok(count
            .iter()
            .enumerate()
            .filter(|&(_, &c)| c > 0)
            .map(|(i, &c)| (room(i) / c as f64).max(0.0))
            .fold(f64::INFINITY, f64::min))
    }

    /// The inter-dispatch time of a flow from `src` reserving `bps`, in rate-control
    /// periods T: idt = T · Bpeak / Breq with Bpeak the source NIC's peak bandwidth, its
    /// capacity here (document 004 §3.4: `qosnet_rate::idt`, as the simulator's NICs and
    /// the data plane use it).
    pub fn idt_periods(&self, src: u32, bps: f64) -> Result<f64, Rejection> {
        let Some(&peak) = self.node_capacity.get(src as usize) else {
            return Err(Rejection::Invalid(format!("nodes must be in 0..{}, got {src}", self.topo.nodes)));
        };
        if !(bps.is_finite() && bps > 0.0) {
            return Err(Rejection::Invalid(format!("bandwidth must be > 0 b/s, got {bps}")));
        }
        Ok(qosnet_rate::idt(peak, bps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RoutingKind, TopologyConfig};

    /// A line of 4 routers (4-ary 1-mesh), one node each, 1 Gb/s links, NICs at 0.8 Gb/s.
    fn line() -> CallAdmission {
        let cfg: TopologyConfig = toml::from_str("kind = \"mesh\"\nk = 4\nn = 1").unwrap();
        let topo = Topology::build(&cfg).unwrap();
        let routing = Routing::build(RoutingKind::default(), &topo, 4).unwrap();
        CallAdmission::new(&topo, &routing, 4, 1e9, 0.8e9)
    }

    #[test]
    fn source_criterion_rejects_on_its_own() {
        let mut ca = line();
        ca.admit(0, 1, 0.5e9).unwrap();
        // 0 -> 3 shares no switch port with 0 -> 1's last hop and its destination is idle.
        let r = ca.admit(0, 3, 0.4e9).unwrap_err();
        assert!(matches!(r, Rejection::Source { node: 0, .. }), "{r}");
        assert!(r.to_string().contains("source node 0"));
        ca.admit(0, 3, 0.3e9).unwrap();
    }

    #[test]
    fn switch_port_criterion_rejects_on_its_own() {
        // Node capacity at the link rate so only a port can refuse. 0 -> 2 and 1 -> 3 both
        // leave router 1 eastwards; their sources and destinations differ.
        let mut ca = line();
        for n in 0..4 {
            ca.set_node_capacity(n, 1e9);
        }
        ca.admit(0, 2, 0.6e9).unwrap();
        let path = ca.path(1, 3);
        let r = ca.admit(1, 3, 0.6e9).unwrap_err();
        match r {
            Rejection::SwitchPort { router, port, .. } => {
                assert_eq!(router, 1);
                assert_eq!((router, port), path[0]);
            }
            other => panic!("expected a switch-port refusal, got {other}"),
        }
        ca.admit(1, 3, 0.4e9).unwrap();
    }

    #[test]
    fn destination_criterion_rejects_on_its_own() {
        // Sources 0 and 2 send to 1 from opposite sides: no shared switch port until the
        // ejection port, whose link (1 Gb/s) is above the NIC's 0.8 Gb/s.
        let mut ca = line();
        ca.admit(0, 1, 0.5e9).unwrap();
        let r = ca.admit(2, 1, 0.4e9).unwrap_err();
        assert!(matches!(r, Rejection::Destination { node: 1, .. }), "{r}");
    }

    #[test]
    fn a_refusal_changes_nothing_and_release_returns_everything() {
        let mut ca = line();
        let a = ca.admit(0, 3, 0.5e9).unwrap();
        let before: Vec<f64> = (0..4).map(|r| ca.port_reserved(r, 1)).collect();
        assert!(ca.admit(0, 2, 0.5e9).is_err());
        let after: Vec<f64> = (0..4).map(|r| ca.port_reserved(r, 1)).collect();
        assert_eq!(before, after);
        assert!(ca.release(a).is_some());
        assert!(ca.release(a).is_none(), "a second release is refused");
        for r in 0..4 {
            for p in 0..ca.topology().ports as u32 {
                assert_eq!(ca.port_reserved(r, p), 0.0);
            }
        }
        assert_eq!(ca.node_reserved(0), (0.0, 0.0));
        ca.admit(0, 2, 0.8e9).unwrap();
    }

    #[test]
    fn exact_fill_is_admitted() {
        let mut ca = line();
        for _ in 0..4 {
            ca.admit(0, 1, 0.2e9).unwrap();
        }
        assert!(ca.admit(0, 1, 1.0).is_err());
    }

    #[test]
    fn malformed_requests_are_refused() {
        let mut ca = line();
        assert!(matches!(ca.admit(0, 0, 1e6), Err(Rejection::Invalid(_))));
        assert!(matches!(ca.admit(0, 9, 1e6), Err(Rejection::Invalid(_))));
        assert!(matches!(ca.admit(0, 1, f64::NAN), Err(Rejection::Invalid(_))));
        assert!(matches!(ca.admit(0, 1, -1.0), Err(Rejection::Invalid(_))));
    }

    #[test]
    fn a_job_is_admitted_whole_or_not_at_all() {
        let mut a = line();
        // 0 -> 3 and 1 -> 3 share switch 2's east port and the destination: 0.5 + 0.4 fit
        // the port (1 Gb/s) and node 3's 0.8 Gb/s does not.
        let err = a.admit_all(&[(0, 3, 0.5e9), (1, 3, 0.4e9)]).unwrap_err();
        assert_eq!(err.0, 1);
        assert!(matches!(err.1, Rejection::Destination { node: 3, .. }), "{}", err.1);
        // nothing stayed reserved
        assert_eq!(a.node_reserved(0), (0.0, 0.0));
        assert_eq!(a.node_reserved(3), (0.0, 0.0));
        assert!((0..4).all(|r| (0..a.topology().ports as u32).all(|p| a.port_reserved(r, p) == 0.0)));
        let ids = a.admit_all(&[(0, 3, 0.4e9), (1, 3, 0.4e9)]).unwrap();
        assert_eq!(ids.len(), 2);
        assert_eq!(a.node_reserved(3), (0.0, 0.8e9));
    }

    #[test]
    fn grantable_is_the_least_room_per_flow_and_idt_is_peak_over_request() {
        // A star of 4 nodes, 1 Gb/s links and NICs: two flows into node 3 share its link.
        let topo = Topology::build(&crate::config::TopologyConfig::Star { ports: 4 }).unwrap();
        let routing = Routing::build(crate::config::RoutingKind::default(), &topo, 4).unwrap();
        let mut a = CallAdmission::new(&topo, &routing, 4, 1e9, 1e9);
        assert_eq!(a.grantable(&[(0, 3), (1, 3)]).unwrap(), 0.5e9);
        assert_eq!(a.grantable(&[(0, 1)]).unwrap(), 1e9);
        a.admit(2, 3, 0.4e9).unwrap();
        assert_eq!(a.grantable(&[(0, 3), (1, 3)]).unwrap(), 0.3e9, "room 0.6 Gb/s for two");
        assert!(a.grantable(&[]).unwrap().is_infinite());
        assert!(a.grantable(&[(0, 0)]).is_err() && a.grantable(&[(0, 9)]).is_err());
        assert_eq!(a.idt_periods(0, 0.25e9).unwrap(), 4.0);
        assert!(a.idt_periods(0, 0.0).is_err() && a.idt_periods(7, 1.0).is_err());
    }
}

//! Bandwidth reserved on every link by probe-based admission control (document 000 §4.1):
//! the per-link bookkeeping the HCAs and routers do as probes, releases and last data
//! packets pass them. It lives in `Net` because both components touch it: the source HCA
//! checks its own link, each router the output link toward the destination.
//!
//! Links are directed: node `n`'s injection link is link `n`; router `r`'s output port `p`
//! (to the next router, or to a node: the ejection link) is link `nodes + r * ports + p`.
//! Each link is reserved once, by the hop that sends on it; the document's "incoming
//! physical link" of a router is the upstream hop's output link, already counted there.
//!
//! Bandwidth is kept in integer units (millionths of a flit per cycle) so a release
//! restores a link's reservation exactly (a sum of floats would not return to its prior
//! value), and every change recomputes the link's VL-arbitration weights (§4.1: "weight
//! calculation for the WRR scheduling is also performed").

pub use crate::flit::Signal;

/// Bandwidth unit: one millionth of a flit per cycle (a link carries `LINK` of them).
pub(crate) const LINK: u64 = 1_000_000;

/// The weight units one arbitration round has on a link (IBA VL-arbitration weights are
/// 8-bit; a round of 255 units is one table entry's full range).
pub(crate) const ROUND: u32 = 255;

/// What a hop did with a reservation-carrying packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HopAction {
    /// Nothing to do here (a data packet, a spent one, a link not held).
    Pass,
    Reserved,
    /// This hop refused the probe: it sends a NACK naming itself.
    Refused,
    Released,
    /// A release reached the refuser: it goes no further.
    Stop,
}

/// One admission-controlled connection (a real-time flow).
#[derive(Clone, Debug, Default)]
struct Connection {
    /// Its bandwidth, units of `LINK`.
    bw: u64,
    /// The links it holds a reservation on, in path order.
    held: Vec<u32>,
    /// The router that refused its last probe (`u32::MAX`: none; `HCA`: its own HCA).
    refuser: u32,
}

/// Refused at the source HCA's own link.
pub(crate) const HCA: u32 = u32::MAX - 1;
const NONE: u32 = u32::MAX;

/// Reservations of every link, and the connections that hold them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reservations {
    nodes: usize,
    ports: usize,
    /// Per link: reserved bandwidth, and the most that may be reserved (units of `LINK`).
    reserved: Vec<u64>,
    limit: u64,
    /// Per link: (real-time, best-effort) VL-arbitration weights, recomputed on change.
    weights: Vec<[u32; 2]>,
    /// Weight recomputations so far (what tests and the report see of them).
    pub recomputed: u64,
    /// Per flow: its connection (bandwidth 0: not admission controlled).
    conns: Vec<Connection>,
    /// Per router: the node port it sends its NACKs from (its first attached node).
    pub router_node: Vec<u32>,
    /// The routers' output ports' and the HCAs' injection arbitration tables, rewritten
    /// here as their links' weights change (when that scheduler has weights): the one
    /// place an accept or release takes effect, read by stage 5 and the injection
    /// scheduler in the `HOOK` variant only.
    pub out_tables: Option<Box<crate::sched::PortTables>>,
    pub hca_tables: Option<Box<crate::sched::PortTables>>,
}

impl Reservations {
    /// Reservations over `nodes` nodes and `routers` routers of `ports` ports; at most
    /// `limit` (units of `LINK`) of a link may be reserved; `flows[f]`: flow f's bandwidth
    /// (0: not a connection).
    pub fn new(nodes: usize, routers: usize, ports: usize, limit: u64, flows: &[u64]) -> Self {
        let links = nodes + routers * ports;
        let conns = flows.iter().map(|&bw| Connection { bw, held: Vec::new(), refuser: NONE }).collect();
        Reservations {
            nodes,
            ports,
            reserved: vec![0; links],
            limit,
            weights: vec![[0, ROUND]; links],
            recomputed: 0,
            conns,
            router_node: Vec::new(),
            out_tables: None,
            hca_tables: None,
        }
    }

    /// Whether admission control runs (any connection).
    #[inline(always)]
    pub fn is_on(&self) -> bool {
        !self.reserved.is_empty()
    }

    /// Node `n`'s injection link.
    pub fn injection_link(&self, n: usize) -> u32 {
        n as u32
    }

    /// Router `r`'s output link `p`.
    pub fn output_link(&self, r: usize, p: usize) -> u32 {
        (self.nodes + r * self.ports + p) as u32
    }

    pub fn reserved(&self, link: u32) -> u64 {
        self.reserved[link as usize]
    }

    pub fn weights(&self, link: u32) -> [u32; 2] {
        self.weights[link as usize]
    }

    /// The router (or `HCA`) that refused flow `flow`'s last probe.
    #[cfg(test)]
    pub fn refuser(&self, flow: u32) -> u32 {
        self.conns[flow as usize].refuser
    }

    /// Whether flow `flow` holds no reservation anywhere.
    #[cfg(test)]
    pub fn is_released(&self, flow: u32) -> bool {
        self.conns[flow as usize].held.is_empty()
    }

    /// The source HCA's check of its own link (§4.1: "the first admission control check is
    /// performed at the corresponding HCA"): reserve, or refuse without changing anything.
    pub fn probe_at_hca(&mut self, node: usize, flow: u32) -> HopAction {
        self.conns[flow as usize].refuser = NONE;
        let link = self.injection_link(node);
        if self.reserve(link, flow) {
            HopAction::Reserved
        } else {
            self.conns[flow as usize].refuser = HCA;
            HopAction::Refused
        }
    }

    /// The source HCA gives its own link back (a release it sends, or the last data
    /// packet leaving it).
    pub fn release_at_hca(&mut self, node: usize, flow: u32) -> HopAction {
        let link = self.injection_link(node);
        if self.give_back(link, flow) {
            HopAction::Released
        } else {
            HopAction::Pass
        }
    }

    /// Router `router` routes the header of a packet of `flow` carrying `signal` to its
    /// output `out_port`: a probe reserves the output link or is refused; a release or a
    /// last data packet gives it back (a release stops at the refuser, which reserved
    /// nothing). `Spent`, `Ack`, `Nack` and data pass.
    #[inline(never)]
    pub fn at_router(&mut self, router: usize, out_port: usize, flow: u32, signal: Signal) -> HopAction {
        let link = self.output_link(router, out_port);
        match signal {
            Signal::Probe => {
                if self.reserve(link, flow) {
                    HopAction::Reserved
                } else {
                    self.conns[flow as usize].refuser = router as u32;
                    HopAction::Refused
                }
            }
            Signal::Release if self.conns[flow as usize].refuser == router as u32 => HopAction::Stop,
            Signal::Release | Signal::Teardown => {
                if self.give_back(link, flow) {
                    HopAction::Released
                } else {
                    HopAction::Pass
                }
            }
            Signal::Data | Signal::Spent | Signal::Ack | Signal::Nack => HopAction::Pass,
        }
    }

    fn reserve(&mut self, link: u32, flow: u32) -> bool {
        let c = &mut self.conns[flow as usize];
        let r = &mut self.reserved[link as usize];
        if c.held.contains(&link) {
            // A header routed again (a preempted packet's dummy header) reserves nothing.
            return true;
        }
        if *r + c.bw > self.limit {
            return false;
        }
        *r += c.bw;
        c.held.push(link);
        self.recompute(link);
        true
    }

    fn give_back(&mut self, link: u32, flow: u32) -> bool {
        let c = &mut self.conns[flow as usize];
        let Some(i) = c.held.iter().position(|&l| l == link) else { return false };
        c.held.remove(i);
        self.reserved[link as usize] -= c.bw;
        self.recompute(link);
        true
    }

    /// The link's WRR weights from its reservations (§4.1): real time gets the reserved
    /// share of a round, best effort the rest (at least one unit each while anything is
    /// reserved, so neither starves: IBA's forward-progress rule).
    fn recompute(&mut self, link: u32) {
        let r = self.reserved[link as usize];
        let rt = ((r as u128 * ROUND as u128).div_ceil(LINK as u128)) as u32;
        let rt = if r == 0 { 0 } else { rt.clamp(1, ROUND - 1) };
        self.weights[link as usize] = [rt, ROUND - rt];
        self.recomputed += 1;
        // The link's arbiter follows (the configured table when nothing is reserved on it
        // any more): a router's output port, or the HCA's port.
        let shares = (r > 0).then_some([rt, ROUND - rt]);
        let l = link as usize;
        let (tables, i) =
            if l < self.nodes { (&mut self.hca_tables, l) } else { (&mut self.out_tables, l - self.nodes) };
        if let Some(t) = tables {
            t.apply(i, shares);
        }
    }

    /// The reservation invariant: every link's reservation is the sum of the bandwidths of
    /// the connections holding it, and at most the limit.
    pub fn check(&self) -> Result<(), String> {
        let mut sum = vec![0u64; self.reserved.len()];
        for (f, c) in self.conns.iter().enumerate() {
            for &l in &c.held {
                if c.held.iter().filter(|&&m| m == l).count() > 1 {
                    return Err(format!("flow {f} holds link {l} twice"));
                }
                sum[l as usize] += c.bw;
            }
        }
        for (l, (&r, &s)) in self.reserved.iter().zip(&sum).enumerate() {
            if r != s {
                return Err(format!("link {l}: reserved {r}, but its connections hold {s}"));
            }
            if r > self.limit {
                return Err(format!("link {l}: reserved {r} over the limit {}", self.limit));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of 4 routers of 3 ports (0: node, 1: east, 2: west), one node each: node 0
    /// to node 3 goes HCA 0, router 0 port 1, router 1 port 1, router 2 port 1, router 3
    /// port 0 (the ejection link).
    fn line(flows: &[u64]) -> Reservations {
        Reservations::new(4, 4, 3, LINK * 8 / 10, flows)
    }

    #[test]
    fn a_probe_refused_at_the_third_hop_is_released_up_to_the_hop_before_it() {
        // Flow 0 holds 0.5 of router 2's east link; flow 1 asks for 0.4 along the line.
        let mut r = line(&[LINK / 2, LINK * 4 / 10]);
        assert_eq!(r.at_router(2, 1, 0, Signal::Probe), HopAction::Reserved);
        let before: Vec<u64> = r.reserved.clone();
        let weights_before = r.weights.clone();
        assert_eq!(r.probe_at_hca(0, 1), HopAction::Reserved);
        assert_eq!(r.at_router(0, 1, 1, Signal::Probe), HopAction::Reserved);
        assert_eq!(r.at_router(1, 1, 1, Signal::Probe), HopAction::Reserved);
        assert_eq!(r.reserved(r.output_link(1, 1)), LINK * 4 / 10);
        assert_eq!(r.weights(r.output_link(1, 1)), [102, 153], "0.4 of a 255-unit round");
        // Router 2: 0.5 + 0.4 > 0.8: refused, the NACK names router 2.
        assert_eq!(r.at_router(2, 1, 1, Signal::Probe), HopAction::Refused);
        assert_eq!(r.refuser(1), 2);
        r.check().unwrap();
        // The release: the HCA gives its link back, then routers 0 and 1; router 2 stops it.
        assert_eq!(r.release_at_hca(0, 1), HopAction::Released);
        assert_eq!(r.at_router(0, 1, 1, Signal::Release), HopAction::Released);
        assert_eq!(r.at_router(1, 1, 1, Signal::Release), HopAction::Released);
        assert_eq!(r.at_router(2, 1, 1, Signal::Release), HopAction::Stop);
        assert_eq!(r.reserved, before, "every link back to exactly its prior reservation");
        assert_eq!(r.weights, weights_before, "and its weights");
        assert!(r.is_released(1));
        r.check().unwrap();
    }

    #[test]
    fn the_last_data_packet_tears_the_connection_down_hop_by_hop() {
        let mut r = line(&[LINK * 3 / 10]);
        let n0 = r.recomputed;
        assert_eq!(r.probe_at_hca(0, 0), HopAction::Reserved);
        for router in 0..3 {
            assert_eq!(r.at_router(router, 1, 0, Signal::Probe), HopAction::Reserved);
        }
        assert_eq!(r.at_router(3, 0, 0, Signal::Probe), HopAction::Reserved);
        assert_eq!(r.recomputed - n0, 5, "weights recomputed at every accept");
        assert_eq!(r.weights(r.output_link(3, 0)), [77, 178]);
        assert_eq!(r.at_router(1, 1, 0, Signal::Data), HopAction::Pass, "data passes");
        assert_eq!(r.release_at_hca(0, 0), HopAction::Released);
        for router in 0..3 {
            assert_eq!(r.at_router(router, 1, 0, Signal::Teardown), HopAction::Released);
            r.check().unwrap();
        }
        assert!(!r.is_released(0), "the ejection link is still held");
        assert_eq!(r.at_router(3, 0, 0, Signal::Teardown), HopAction::Released);
        assert!(r.is_released(0));
        assert_eq!(r.recomputed - n0, 10, "and at every release");
        assert!(r.reserved.iter().all(|&x| x == 0));
        assert!(r.weights.iter().all(|&w| w == [0, ROUND]));
        assert_eq!(r.at_router(3, 0, 0, Signal::Teardown), HopAction::Pass, "twice is nothing");
    }

    #[test]
    fn the_hca_refuses_its_own_full_link_and_a_rerouted_header_reserves_once() {
        let mut r = line(&[LINK / 2, LINK / 2]);
        assert_eq!(r.probe_at_hca(0, 0), HopAction::Reserved);
        assert_eq!(r.probe_at_hca(0, 1), HopAction::Refused);
        assert_eq!(r.refuser(1), HCA);
        assert_eq!(r.at_router(0, 1, 0, Signal::Probe), HopAction::Reserved);
        assert_eq!(r.at_router(0, 1, 0, Signal::Probe), HopAction::Reserved);
        assert_eq!(r.reserved(r.output_link(0, 1)), LINK / 2);
        r.check().unwrap();
    }
}

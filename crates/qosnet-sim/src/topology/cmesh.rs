//! Concentrated mesh, as BookSim2's `cmesh` builds it (src/networks/cmesh.cpp, the reference
//! behaviour here): a k x k mesh of routers, each with a 2 x 2 block of terminals (the
//! concentration c = 4, the only one BookSim2's cmesh accepts).
//!
//! Numbering, BookSim2's, so that a `.cfg` user's node, router and port numbers mean the same
//! here and a traffic pattern sends the same node to the same node:
//! - the nodes lie on a 2k x 2k grid, numbered row by row: node `row * 2k + col`;
//! - router `y * k + x` holds the nodes of rows 2y, 2y + 1 and columns 2x, 2x + 1, node
//!   `(2y + dy) * 2k + 2x + dx` on port `2 dy + dx` (BookSim2's NodeToRouter, NodeToPort);
//! - ports 4, 5, 6, 7 lead +x, -x, +y, -y.
//!
//! Express channels: an edge router's port that would lead off the mesh joins, port to same
//! port, the edge router k/2 along that edge (left and right columns pair rows y and
//! y ± k/2, bottom and top rows pair columns x and x ± k/2). BookSim2 wires them whatever
//! the routing; only its `dor` routing uses them (`routing/cmesh.rs`). With an odd k
//! BookSim2's pairing is not one-to-one (k/2 rounds down), so here they exist for even k
//! only and the edge ports of an odd-k mesh stay unconnected.

use super::{Peer, Shape, Topology};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

/// Terminals per router: a 2 x 2 block of the node grid.
pub const CONCENTRATION: u32 = 4;

/// Ports per router: the terminals, then + and - in x and y.
pub const PORTS: usize = CONCENTRATION as usize + 4;

/// The port of a router leading + (`plus_port`) or - (`minus_port`) in dimension `dim`
/// (0: x, 1: y), after the four terminal ports.
#[inline]
pub fn plus_port(dim: usize) -> usize {
    CONCENTRATION as usize + 2 * dim
}

#[inline]
pub fn minus_port(dim: usize) -> usize {
    CONCENTRATION as usize + 2 * dim + 1
}

/// A concentrated mesh's side and the arithmetic of its numbering, shared by the topology
/// and its routing so the two cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CMesh {
    /// Routers per side.
    pub k: u32,
}

impl CMesh {
    #[inline]
    pub fn routers(&self) -> usize {
        (self.k * self.k) as usize
    }

    /// The router's coordinates: (x, y) for dimensions 0, 1.
    #[inline]
    pub fn coords(&self, router: usize) -> [u32; 2] {
        let k = self.k as usize;
        [(router % k) as u32, (router / k) as u32]
    }

    /// The router at coordinates (x, y).
    #[inline]
    pub fn router_at(&self, c: [u32; 2]) -> usize {
        (c[1] * self.k + c[0]) as usize
    }

    /// The router a node is attached to (BookSim2's NodeToRouter).
    #[inline]
    pub fn router_of(&self, node: usize) -> usize {
        let side = 2 * self.k as usize;
        (node / side / 2) * self.k as usize + (node % side) / 2
    }

    /// The router port a node is attached to (BookSim2's NodeToPort).
    #[inline]
    pub fn port_of(&self, node: usize) -> usize {
        let side = 2 * self.k as usize;
        2 * (node / side % 2) + node % 2
    }

    /// The node on terminal port `port` (< 4) of `router`.
    #[inline]
    pub fn node(&self, router: usize, port: usize) -> usize {
        let [x, y] = self.coords(router).map(|c| c as usize);
        (2 * y + port / 2) * 2 * self.k as usize + 2 * x + port % 2
    }

    /// Whether the mesh has express channels (BookSim2 pairs edge routers k/2 apart).
    #[inline]
    pub fn has_express(&self) -> bool {
        self.k % 2 == 0
    }

    /// The coordinate an express channel from coordinate `c` leads to along its edge.
    #[inline]
    pub fn express_partner(&self, c: u32) -> u32 {
        let half = self.k / 2;
        if c < half {
            c + half
        } else {
            c - half
        }
    }

    /// Whether `port` of `router` is an express channel (an edge router's port off the mesh,
    /// where the mesh has them).
    #[inline]
    pub fn is_express(&self, router: usize, port: usize) -> bool {
        let c = self.coords(router);
        self.has_express()
            && (0..2).any(|dim| {
                (port == minus_port(dim) && c[dim] == 0) || (port == plus_port(dim) && c[dim] == self.k - 1)
            })
    }
}

pub(super) fn build(k: u32, c: Option<u32>, express_latency: Option<u32>) -> Result<Topology, ConfigError> {
    if let Some(c) = c.filter(|&c| c != CONCENTRATION) {
        return Err(ConfigError::new(
            "topology.c",
            format!("must be 4 (a 2 x 2 block of nodes a router, the only concentration of BookSim2's cmesh), got {c}"),
        ));
    }
    if k < 2 {
        return Err(ConfigError::new("topology.k", format!("must be >= 2, got {k}")));
    }
    if (k as u64).pow(2) > super::MAX_ROUTERS {
        return Err(ConfigError::new(
            "topology.k",
            format!("{k} x {k} routers is more than the supported {}", super::MAX_ROUTERS),
        ));
    }
    let m = CMesh { k };
    let (routers, ports) = (m.routers(), PORTS);
    let mut peer = vec![Peer::None; routers * ports];
    for r in 0..routers {
        for port in 0..CONCENTRATION as usize {
            peer[r * ports + port] = Peer::Endpoint { node: NodeId(m.node(r, port) as u32) };
        }
        let here = m.coords(r);
        // (port `port` of the router whose coordinate `dim` is `to`, the other as here's)
        let link = |dim: usize, to: u32, port: usize| {
            let mut c = here;
            c[dim] = to;
            Peer::Router { router: RouterId(m.router_at(c) as u32), port: port as u32 }
        };
        for dim in 0..2 {
            // (an express channel runs along the edge: the other coordinate changes)
            let other = 1 - dim;
            let express = |port| {
                if m.has_express() {
                    link(other, m.express_partner(here[other]), port)
                } else {
                    Peer::None
                }
            };
            peer[r * ports + plus_port(dim)] = if here[dim] + 1 < k {
                link(dim, here[dim] + 1, minus_port(dim))
            } else {
                express(plus_port(dim))
            };
            peer[r * ports + minus_port(dim)] = if here[dim] > 0 {
                link(dim, here[dim] - 1, plus_port(dim))
            } else {
                express(minus_port(dim))
            };
        }
    }
    let mut t = Topology::from_parts(Shape::CMesh(m), routers, ports, peer);
    if let Some(cycles) = express_latency {
        t.set_long_links("topology.express_latency", cycles, |r, port| m.is_express(r, port))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_of_a_4x4_cmesh_by_hand() {
        // The 8 x 8 node grid: node 0 (row 0, col 0) on router 0 port 0; node 9 (row 1,
        // col 1) router 0 port 3; node 10 (row 1, col 2) router 1 port 2; node 27 (row 3,
        // col 3) router 5 = (1, 1) port 3; node 63 (row 7, col 7) router 15 port 3; node 56
        // (row 7, col 0) router 12 port 2.
        let m = CMesh { k: 4 };
        for (node, router, port) in [
            (0, 0, 0),
            (1, 0, 1),
            (8, 0, 2),
            (9, 0, 3),
            (10, 1, 2),
            (27, 5, 3),
            (63, 15, 3),
            (56, 12, 2),
            (6, 3, 0),
        ] {
            assert_eq!((m.router_of(node), m.port_of(node)), (router, port), "node {node}");
            assert_eq!(m.node(router, port), node);
        }
        let t = build(4, None, None).unwrap();
        assert_eq!((t.routers, t.ports, t.nodes), (16, 8, 64));
        for node in 0..64 {
            assert_eq!(t.attach[node], (RouterId(m.router_of(node) as u32), m.port_of(node) as u32));
        }
    }

    #[test]
    fn mesh_and_express_links_by_hand() {
        let t = build(4, Some(4), None).unwrap();
        assert!(t.is_symmetric());
        assert!(t.peer.iter().all(|p| *p != Peer::None), "every port of an even-k cmesh is wired");
        let at = |r: u32, port: usize| Peer::Router { router: RouterId(r), port: port as u32 };
        // router 5 = (1, 1): +x to 6, -x to 4, +y to 9, -y to 1
        assert_eq!(t.peer(5, plus_port(0)), at(6, minus_port(0)));
        assert_eq!(t.peer(5, minus_port(0)), at(4, plus_port(0)));
        assert_eq!(t.peer(5, plus_port(1)), at(9, minus_port(1)));
        assert_eq!(t.peer(5, minus_port(1)), at(1, plus_port(1)));
        // express: left column (0,0) <-> (0,2) on -x; right column (3,1) <-> (3,3) on +x;
        // bottom row (1,0) <-> (3,0) on -y; top row (0,3) <-> (2,3) on +y
        assert_eq!(t.peer(0, minus_port(0)), at(8, minus_port(0)));
        assert_eq!(t.peer(7, plus_port(0)), at(15, plus_port(0)));
        assert_eq!(t.peer(1, minus_port(1)), at(3, minus_port(1)));
        assert_eq!(t.peer(12, plus_port(1)), at(14, plus_port(1)));
        assert!(t.link_cycles.is_empty());
        // with their own latency: the express ports alone
        let t = build(4, None, Some(4)).unwrap();
        let express: Vec<usize> = (0..t.peer.len()).filter(|&i| t.link_cycles[i] == 4).collect();
        // 4 edges x 4 routers, one port each (the corners have two)
        assert_eq!(express.len(), 16);
        assert!(express.iter().all(|&i| CMesh { k: 4 }.is_express(i / 8, i % 8)));
    }

    #[test]
    fn odd_sides_have_no_express_channels() {
        let t = build(3, None, Some(7)).unwrap();
        assert!(t.is_symmetric());
        assert_eq!(t.peer(0, minus_port(0)), Peer::None);
        assert_eq!(t.peer(8, plus_port(1)), Peer::None);
        assert!(t.link_cycles.iter().all(|&c| c == 0), "no link of its own latency");
    }

    #[test]
    fn sizes_are_refused_naming_the_field() {
        assert_eq!(build(1, None, None).unwrap_err().path, "topology.k");
        let e = build(4, Some(2), None).unwrap_err();
        assert_eq!(e.path, "topology.c");
        assert!(e.to_string().contains("must be 4"), "{e}");
        assert_eq!(build(2000, None, None).unwrap_err().path, "topology.k");
        assert_eq!(build(4, None, Some(0)).unwrap_err().path, "topology.express_latency");
    }
}

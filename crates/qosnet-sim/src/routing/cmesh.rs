//! Dimension-order routing on a concentrated mesh (`topology/cmesh.rs`), as BookSim2's
//! `dor_no_express` and `dor` on its `cmesh` (src/networks/cmesh.cpp): between routers x
//! first, then y, then the destination's terminal port.
//!
//! With express channels (`express`, BookSim2's `dor`): in a dimension with more than k/2 - 1
//! routers still to cross, a router on the mesh's edge parallel to it takes its express
//! channel, k/2 routers along the edge in one hop, instead of the mesh channel. The channel
//! only ever moves the packet toward its destination (from below k/2 to c + k/2 <= the
//! destination's coordinate, or from k/2 up to c - k/2 >= it), and an express channel
//! carries packets of one dimension only (the bottom row's -y ports move them in x; no
//! packet leaves row 0 by -y in its y phase): each dimension's channels are used in
//! monotone order and y never turns back to x, so one VC suffices, as on a mesh.

use super::{all_vcs, Route};
use crate::topology::cmesh::{minus_port, plus_port, CMesh};

#[inline]
pub(super) fn route(m: &CMesh, router: usize, dst: usize, express: bool, vcs: u32) -> Route {
    let (port, _) = route_in_order(m, router, dst, express, false);
    Route { port: port as u32, vcs: all_vcs(vcs) }
}

/// O1TURN's VC layers: one per order.
pub const LAYERS: u32 = 2;

/// O1TURN's route toward node `dst` at `router` for a packet whose order is `via` (0: x
/// first, 1: y first): the output port and the layer it leaves in, `None` for the
/// ejection (every VC).
#[inline]
pub(super) fn route_turns(
    m: &CMesh,
    router: usize,
    dst: usize,
    express: bool,
    via: u32,
) -> (usize, Option<u32>) {
    let (port, eject) = route_in_order(m, router, dst, express, via & 1 == 1);
    (port, (!eject).then_some(via & 1))
}

/// The output port toward node `dst` at `router`, x first or (`y_first`) y first (O1TURN,
/// BookSim2's `xy_yx` and `xy_yx_no_express` on a `cmesh`, each order on its own VC
/// layer), and whether it is the ejection.
#[inline]
pub(super) fn route_in_order(
    m: &CMesh,
    router: usize,
    dst: usize,
    express: bool,
    y_first: bool,
) -> (usize, bool) {
    let (here, there) = (m.coords(router), m.coords(m.router_of(dst)));
    let order = if y_first { [1, 0] } else { [0, 1] };
    for dim in order {
        let (c, t) = (here[dim], there[dim]);
        if c == t {
            continue;
        }
        let other = here[1 - dim];
        let port = if express && c.abs_diff(t) > m.k / 2 - 1 && (other == 0 || other == m.k - 1) {
            // (the edge's port off the mesh is its express channel; row or column 0 first,
            // as BookSim2's cmesh_next, when k = 2 makes both edges one)
            if other == 0 {
                minus_port(1 - dim)
            } else {
                plus_port(1 - dim)
            }
        } else if t > c {
            plus_port(dim)
        } else {
            minus_port(dim)
        };
        return (port, false);
    }
    (m.port_of(dst), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::topology::{Peer, Topology};

    /// Every node to every node along the routes: the routers passed (their coordinates
    /// after each hop), checking that each walk ends at its node.
    fn walks(k: u32, express: bool) -> Vec<(usize, usize, Vec<[u32; 2]>)> {
        walks_in_order(k, express, false)
    }

    /// `walks`, x first or (`y_first`) y first.
    fn walks_in_order(k: u32, express: bool, y_first: bool) -> Vec<(usize, usize, Vec<[u32; 2]>)> {
        let t = Topology::build(&TopologyConfig::Cmesh { k, c: None, express_latency: None }).unwrap();
        let m = CMesh { k };
        let mut out = Vec::new();
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                let mut r = m.router_of(src);
                let mut seen = vec![m.coords(r)];
                loop {
                    let (port, eject) = route_in_order(&m, r, dst, express, y_first);
                    match t.peer(r, port) {
                        Peer::Endpoint { node } => {
                            assert!(eject, "an ejection says so");
                            assert_eq!(node.index(), dst, "from {src}");
                            break;
                        }
                        Peer::Router { router, .. } => r = router.index(),
                        Peer::None => panic!("from {src} to {dst}: an unconnected port"),
                    }
                    seen.push(m.coords(r));
                    assert!(seen.len() <= 4 * k as usize, "from {src} to {dst}: a loop");
                }
                out.push((src, dst, seen));
            }
        }
        out
    }

    #[test]
    fn x_then_y_in_the_fewest_hops_without_express() {
        for k in [2, 3, 4, 5] {
            let m = CMesh { k };
            for (src, dst, seen) in walks(k, false) {
                let (a, b) = (m.coords(m.router_of(src)), m.coords(m.router_of(dst)));
                let fewest = a[0].abs_diff(b[0]) + a[1].abs_diff(b[1]);
                assert_eq!(seen.len() as u32 - 1, fewest, "k = {k}, from {src} to {dst}");
                // y never turns back to x: once y has changed, x stays
                let first_y = seen.windows(2).position(|w| w[0][1] != w[1][1]);
                if let Some(i) = first_y {
                    assert!(seen[i..].iter().all(|c| c[0] == b[0]), "k = {k}, from {src} to {dst}: {seen:?}");
                }
            }
        }
    }

    #[test]
    fn y_first_mirrors_x_first() {
        // O1TURN's second order: y's hops before x's, as many as x first without the express
        // channels, at most the mesh's with them
        for k in [2, 3, 4, 6] {
            for express in [false, k % 2 == 0] {
                let (xy, yx) = (walks_in_order(k, express, false), walks_in_order(k, express, true));
                for ((src, dst, a), (_, _, b)) in xy.iter().zip(&yx) {
                    let m = CMesh { k };
                    let (from, to) = (m.coords(m.router_of(*src)), m.coords(m.router_of(*dst)));
                    let manhattan = (from[0].abs_diff(to[0]) + from[1].abs_diff(to[1])) as usize;
                    if express {
                        // (an edge's express channel serves one order's leg and not the
                        // other's: the two may differ, neither longer than the mesh's)
                        assert!(b.len() - 1 <= manhattan, "k = {k}, from {src} to {dst}: {b:?}");
                    } else {
                        assert_eq!(
                            (a.len() - 1, b.len() - 1),
                            (manhattan, manhattan),
                            "k = {k}, from {src} to {dst}"
                        );
                    }
                    // once x has changed, y stays
                    if let Some(i) = b.windows(2).position(|w| w[0][0] != w[1][0]) {
                        assert!(b[i..].iter().all(|c| c[1] == to[1]), "k = {k}: {b:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn express_channels_shorten_routes_along_the_edges() {
        for k in [2, 4, 6, 8] {
            let m = CMesh { k };
            for (src, dst, seen) in walks(k, true) {
                let (a, b) = (m.coords(m.router_of(src)), m.coords(m.router_of(dst)));
                let manhattan = a[0].abs_diff(b[0]) + a[1].abs_diff(b[1]);
                assert!(seen.len() as u32 - 1 <= manhattan, "k = {k}, from {src} to {dst}");
                // each hop moves one coordinate, toward the destination, x before y
                let mut in_y = false;
                for w in seen.windows(2) {
                    let dim = usize::from(w[0][0] == w[1][0]);
                    assert_eq!(w[0][1 - dim], w[1][1 - dim], "one coordinate a hop");
                    assert!(w[0][dim].abs_diff(b[dim]) > w[1][dim].abs_diff(b[dim]), "toward: {seen:?}");
                    assert!(!(in_y && dim == 0), "y turned to x: {seen:?}");
                    in_y |= dim == 1;
                }
            }
        }
        // by hand on a 4x4: router 0 to router 3 (x 0 -> 3 on the bottom row): express to
        // (2, 0), then +x to (3, 0); router 4 = (0, 1) to router 7 = (3, 1): three +x hops
        let m = CMesh { k: 4 };
        let node = |r| m.node(r, 0);
        assert_eq!(route(&m, 0, node(3), true, 1).port, minus_port(1) as u32);
        assert_eq!(route(&m, 2, node(3), true, 1).port, plus_port(0) as u32);
        assert_eq!(route(&m, 4, node(7), true, 1).port, plus_port(0) as u32);
        // in y on the left column: router 0 to router 12 = (0, 3): express (-x) to (0, 2)
        assert_eq!(route(&m, 0, node(12), true, 1).port, minus_port(0) as u32);
        assert_eq!(route(&m, 0, node(12), false, 1).port, plus_port(1) as u32);
    }
}

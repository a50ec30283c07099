//! Routes over a fabric without forwarding tables: minimal-hop routes spread over equally
//! short ports by destination (D-mod-K style). (`routing::check_fabric_routes` checks every
//! fabric's routes.)

use super::NO_ROUTE;
use crate::topology::{Peer, Topology};
use std::collections::VecDeque;

/// Minimal-hop routes: a breadth-first search back from each destination's switch; each
/// switch forwards toward a switch one hop nearer, on the `node mod count`-th such port.
pub(in crate::topology) fn minimal_routes(t: &Topology) -> Vec<u8> {
    let (peer, routers, ports, nodes) = (&t.peer, t.routers, t.ports, t.nodes);
    let mut table = vec![NO_ROUTE; routers * nodes];
    let mut dist = vec![u32::MAX; routers];
    let mut queue = VecDeque::new();
    for (n, &(home, port)) in t.attach.iter().enumerate() {
        let (home, port) = (home.index(), port as usize);
        dist.fill(u32::MAX);
        dist[home] = 0;
        queue.clear();
        queue.push_back(home);
        while let Some(r) = queue.pop_front() {
            for p in 0..ports {
                if let Peer::Router { router, .. } = peer[r * ports + p] {
                    let next = router.index();
                    if dist[next] == u32::MAX {
                        dist[next] = dist[r] + 1;
                        queue.push_back(next);
                    }
                }
            }
        }
        table[home * nodes + n] = port as u8;
        for r in (0..routers).filter(|&r| r != home && dist[r] != u32::MAX) {
            // Spread destinations over the equally short ports (D-mod-K style), so that
            // parallel links share the load instead of all routes taking the lowest port.
            let toward = |p: &usize| matches!(peer[r * ports + p], Peer::Router { router, .. } if dist[router.index()].wrapping_add(1) == dist[r]);
            let count = (0..ports).filter(toward).count();
            if let Some(p) = (0..ports).filter(toward).nth(n % count.max(1)) {
                table[r * nodes + n] = p as u8;
            }
        }
    }
    table
}

//! Dimension-order routing on a flattened butterfly (Kim, Dally & Abts, ISCA 2007, §3.1's
//! minimal routing taken in a fixed order): in each dimension where the router's
//! coordinate differs from the destination router's, one hop straight to it, dimension 0
//! first. Every hop goes to a higher dimension than the one before, so channels are used
//! in one order and no cycle of waits can form: one VC suffices (as dimension order on a
//! mesh).

use super::{all_vcs, Route};
use crate::topology::flatfly::FlatFly;

#[inline]
pub(super) fn route(f: &FlatFly, router: usize, dst: usize, vcs: u32) -> Route {
    let to = dst / f.c as usize;
    for dim in 0..f.n {
        let want = f.coord(to, dim);
        if f.coord(router, dim) != want {
            return Route { port: f.port(router, dim, want) as u32, vcs: all_vcs(vcs) };
        }
    }
    Route { port: (dst % f.c as usize) as u32, vcs: all_vcs(vcs) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::topology::{Peer, Topology};

    #[test]
    fn one_hop_per_differing_dimension_in_order() {
        let (k, n, c) = (3, 3, 2);
        let t = Topology::build(&TopologyConfig::Flatfly { k, n, c, placement: None }).unwrap();
        let f = FlatFly { k, n, c };
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                let (mut r, mut hops, mut last_dim) = (src / 2, 0, None);
                loop {
                    let route = route(&f, r, dst, 1);
                    match t.peer(r, route.port as usize) {
                        Peer::Endpoint { node } => {
                            assert_eq!(node.index(), dst);
                            break;
                        }
                        Peer::Router { router, .. } => {
                            let dim = (0..n).find(|&d| f.coord(r, d) != f.coord(router.index(), d)).unwrap();
                            assert!(last_dim < Some(dim), "dimensions in order");
                            (r, hops, last_dim) = (router.index(), hops + 1, Some(dim));
                        }
                        Peer::None => panic!("unconnected"),
                    }
                }
                let differing = (0..n).filter(|&d| f.coord(src / 2, d) != f.coord(dst / 2, d)).count();
                assert_eq!(hops, differing, "from {src} to {dst}");
            }
        }
    }
}

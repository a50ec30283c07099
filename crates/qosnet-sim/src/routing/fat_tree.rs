//! Deterministic up/down routing on a k-ary n-tree with D-mod-K up-port selection:
//! at level l the up port is digit l of the destination node, which spreads destinations
//! evenly over the up links (Zahavi et al.'s D-mod-K); down is the only path. Path p of
//! several (`[routing] multipath`, as a subnet manager gives a node 2^LMC addresses) turns
//! every up choice p ports further: paths 0..k to a destination then share no up link at
//! any level, and stay up/down (deadlock-free).

use super::{all_vcs, Route};
use crate::topology::fat_tree::digit;
use crate::topology::Topology;

pub(super) fn route(
    k: usize,
    n: u32,
    topo: &Topology,
    router: usize,
    dst: usize,
    path: u32,
    vcs: u32,
) -> Route {
    let per_level = topo.routers / n as usize;
    let (level, w) = ((router / per_level) as u32, router % per_level);
    let leaf = dst / k;
    let is_ancestor = (level..n - 1).all(|pos| digit(w, k, pos) == digit(leaf, k, pos));
    let port = if is_ancestor {
        if level == 0 {
            dst % k
        } else {
            digit(leaf, k, level - 1)
        }
    } else {
        k + (digit(dst, k, level) + path as usize) % k
    };
    Route { port: port as u32, vcs: all_vcs(vcs) }
}

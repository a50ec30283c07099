//! Up/down routing on a k-ary n-tree: up to the nearest common ancestor of the source and
//! the destination, then down the only way. Every up port reaches an ancestor, so the
//! routings differ only in which up port they take at each level (`Up`):
//! - D-mod-K (deterministic): at level l, digit l of the destination node, which spreads
//!   destinations evenly over the up links (Zahavi et al.). Path p of several (`[routing]
//!   multipath`, as a subnet manager gives a node 2^LMC addresses) turns every up choice p
//!   ports further: paths 0..k to a destination then share no up link at any level.
//! - NCA (BookSim2's `nca`, fattree_nca in its routefunc.cpp): a port drawn uniformly at
//!   every level for every packet. A packet climbs each level once, so the draws are made at
//!   its source router as one (n-1)-digit base-k word (`Packet::via`, `choose_up`) whose
//!   digit l is its level-l port: the same distribution as a draw per hop, and a preempted
//!   packet's rest follows its first part.
//!
//! - Adaptive NCA (BookSim2's `anca`, fattree_anca): at each router on the way up, two up
//!   ports drawn uniformly and the one with fewer credits in use taken (the first on a tie),
//!   the power of two choices over the router's own view of its up links. The router that
//!   takes the port chooses it (`choose_up_adaptive`), writing it into the packet's word,
//!   where the route reads it as NCA's.
//!
//! All stay up/down, which has no cyclic channel dependency (deadlock-free on one VC).

use super::{all_vcs, Route};
use crate::topology::fat_tree::digit;
use crate::topology::Topology;

/// How a packet picks its up port at each level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Up {
    /// D-mod-K, turned `path` ports further for path number `path`.
    DModK { path: u32 },
    /// NCA: digit l of the packet's drawn word (`choose_up`) at level l.
    Drawn { word: u32 },
}

/// The most words NCA can draw (`Packet::via` holds one in 16 bits).
pub const MAX_UP_WORDS: u64 = u16::MAX as u64 + 1;

/// The up ports' words of a k-ary n-tree NCA draws from: k^(n-1), one digit per level below
/// the top.
pub fn up_words(k: u32, n: u32) -> u64 {
    (k as u64).pow(n - 1)
}

/// NCA's draw for a packet (at its source router, from a uniform 64-bit `draw`): its up
/// port at every level at once. The modulo's bias is below 2^-47 (at most 2^16 words).
#[inline]
pub fn choose_up(k: u32, n: u32, draw: u64) -> u16 {
    (draw % up_words(k, n)) as u16
}

/// Adaptive NCA's choice at `router` (of a k-ary n-tree whose routers are numbered level by
/// level, as `route` reads them) from a uniform `draw` and its queue toward each output port
/// (credits in use): the packet's word `via` with this level's digit set to the less loaded
/// of two up ports drawn. A router with no up port (the top level) leaves it as it is; one
/// the packet descends from never reads it.
#[inline]
pub fn choose_up_adaptive(
    k: u32,
    n: u32,
    router: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
    via: u16,
) -> u16 {
    let routers_per_level = (k as usize).pow(n - 1);
    let level = (router / routers_per_level) as u32;
    if level + 1 >= n {
        return via;
    }
    let (k64, scale) = (k as u64, (k as u64).pow(level));
    let (first, second) = (draw % k64, draw / k64 % k64);
    let up = |p: u64| queue(k as usize + p as usize);
    let port = if up(first) > up(second) { second } else { first };
    let old = via as u64 / scale % k64;
    (via as u64 - old * scale + port * scale) as u16
}

pub(super) fn route(k: usize, n: u32, topo: &Topology, router: usize, dst: usize, up: Up, vcs: u32) -> Route {
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
        k + match up {
            Up::DModK { path } => (digit(dst, k, level) + path as usize) % k,
            Up::Drawn { word } => digit(word as usize, k, level),
        }
    };
    Route { port: port as u32, vcs: all_vcs(vcs) }
}

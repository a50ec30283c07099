//! k-ary n-tree (Petrini & Vanneschi): k^n endpoints and n levels of k^(n-1) switches.
//!
//! Switch (level l, word w), w an (n-1)-digit base-k number, has index `l * k^(n-1) + w`.
//! Ports `0..k` go down, `k..2k` go up. Leaf switch w serves nodes `w*k .. w*k+k`. Up port
//! `k + j` of (l, w) reaches (l+1, w with digit l set to j), arriving on its down port
//! `digit_l(w)`. The top level's up ports are unconnected.

use super::{Peer, Shape, Topology};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

#[inline]
pub fn digit(x: usize, k: usize, pos: u32) -> usize {
    (x / k.pow(pos)) % k
}

#[inline]
pub fn with_digit(x: usize, k: usize, pos: u32, v: usize) -> usize {
    x - digit(x, k, pos) * k.pow(pos) + v * k.pow(pos)
}

pub(super) fn build(k: u32, n: u32) -> Result<Topology, ConfigError> {
    if !(2..=32).contains(&k) {
        return Err(ConfigError::new("topology.k", format!("must be in 2..=32, got {k}")));
    }
    if !(1..=8).contains(&n) {
        return Err(ConfigError::new("topology.n", format!("must be in 1..=8, got {n}")));
    }
    if (k as u64).pow(n) > 1 << 20 {
        return Err(ConfigError::new("topology", format!("{k}-ary {n}-tree has too many nodes")));
    }
    let (ku, per_level) = (k as usize, (k as usize).pow(n - 1));
    let routers = per_level * n as usize;
    let ports = 2 * ku;
    let mut peer = vec![Peer::None; routers * ports];
    for l in 0..n {
        for w in 0..per_level {
            let r = l as usize * per_level + w;
            for j in 0..ku {
                peer[r * ports + j] = if l == 0 {
                    Peer::Endpoint { node: NodeId((w * ku + j) as u32) }
                } else {
                    let child = (l as usize - 1) * per_level + with_digit(w, ku, l - 1, j);
                    Peer::Router { router: RouterId(child as u32), port: (ku + digit(w, ku, l - 1)) as u32 }
                };
                if l + 1 < n {
                    let parent = (l as usize + 1) * per_level + with_digit(w, ku, l, j);
                    peer[r * ports + ku + j] =
                        Peer::Router { router: RouterId(parent as u32), port: digit(w, ku, l) as u32 };
                }
            }
        }
    }
    Ok(Topology::from_parts(Shape::FatTree { k, n }, routers, ports, peer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ary_three_tree() {
        let t = build(4, 3).unwrap();
        assert_eq!((t.nodes, t.routers, t.ports), (64, 48, 8));
        assert!(t.is_symmetric());
        // every non-top switch port is connected
        for r in 0..32 {
            for p in 0..8 {
                assert_ne!(t.peer(r, p), Peer::None, "router {r} port {p}");
            }
        }
    }
}

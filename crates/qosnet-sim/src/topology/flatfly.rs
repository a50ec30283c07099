//! Flattened butterfly (Kim, Dally & Abts, "Flattened Butterfly: A Cost-Efficient Topology
//! for High-Radix Networks", ISCA 2007): a k-ary n-flat, k^n routers each with `c`
//! terminals (the concentration), a router joined directly to every router that differs
//! from it in one coordinate: k - 1 channels per dimension (§2, the butterfly's rows of
//! switches merged into one router).
//!
//! Router index = mixed-radix number of its n coordinates, coordinate 0 fastest (as BookSim2's
//! `flatfly`); node `r*c + j` is terminal j of router r, on port j; dimension d's channels are
//! ports `c + d*(k-1) + j'`, leading to the router whose coordinate d is j (j' = j below the
//! router's own coordinate, j - 1 above it).

use super::{Peer, Shape, Topology, MAX_PORTS};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

/// A flattened butterfly's sizes and the arithmetic of its numbering, shared by the
/// topology and its routing so the two cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlatFly {
    /// Routers per dimension.
    pub k: u32,
    /// Dimensions.
    pub n: u32,
    /// Terminals per router.
    pub c: u32,
}

impl FlatFly {
    #[inline]
    pub fn routers(&self) -> usize {
        (self.k as usize).pow(self.n)
    }

    #[inline]
    pub fn ports(&self) -> usize {
        (self.c + self.n * (self.k - 1)) as usize
    }

    /// Stride of dimension `dim` in the router index.
    #[inline]
    pub fn stride(&self, dim: u32) -> usize {
        (self.k as usize).pow(dim)
    }

    /// Coordinate `dim` of router `router`.
    #[inline]
    pub fn coord(&self, router: usize, dim: u32) -> usize {
        router / self.stride(dim) % self.k as usize
    }

    /// The port of `router` toward the router whose coordinate `dim` is `to` (≠ its own).
    #[inline]
    pub fn port(&self, router: usize, dim: u32, to: usize) -> usize {
        let own = self.coord(router, dim);
        (self.c + dim * (self.k - 1)) as usize + if to < own { to } else { to - 1 }
    }
}

pub(super) fn build(k: u32, n: u32, c: u32) -> Result<Topology, ConfigError> {
    if k < 2 {
        return Err(ConfigError::new("topology.k", format!("must be >= 2, got {k}")));
    }
    if !(1..=8).contains(&n) {
        return Err(ConfigError::new("topology.n", format!("must be in 1..=8, got {n}")));
    }
    if c == 0 {
        return Err(ConfigError::new("topology.c", "must be >= 1, got 0"));
    }
    let ports = c as u64 + n as u64 * (k as u64 - 1);
    if ports > MAX_PORTS as u64 {
        return Err(ConfigError::new(
            "topology",
            format!("routers would have c + n*(k-1) = {ports} ports; at most {MAX_PORTS}"),
        ));
    }
    let routers = (k as u64).checked_pow(n).filter(|&r| r <= super::MAX_ROUTERS);
    let Some(routers) = routers else {
        return Err(ConfigError::new(
            "topology",
            format!("k^n routers is more than the supported {}", super::MAX_ROUTERS),
        ));
    };
    let f = FlatFly { k, n, c };
    let (routers, ports) = (routers as usize, f.ports());
    let mut peer = vec![Peer::None; routers * ports];
    for r in 0..routers {
        for j in 0..c as usize {
            peer[r * ports + j] = Peer::Endpoint { node: NodeId((r * c as usize + j) as u32) };
        }
        for dim in 0..n {
            let own = f.coord(r, dim);
            for to in (0..k as usize).filter(|&t| t != own) {
                let other = r - own * f.stride(dim) + to * f.stride(dim);
                peer[r * ports + f.port(r, dim, to)] =
                    Peer::Router { router: RouterId(other as u32), port: f.port(other, dim, own) as u32 };
            }
        }
    }
    Ok(Topology::from_parts(Shape::FlatFly(f), routers, ports, peer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ary_two_flat_with_concentration_four() {
        // BookSim2's flatflyconfig: k = 4, n = 2, c = 4: 16 routers of radix 4 + 2*3 = 10.
        let t = build(4, 2, 4).unwrap();
        assert_eq!((t.routers, t.ports, t.nodes), (16, 10, 64));
        assert!(t.is_symmetric());
        assert!(t.peer.iter().all(|p| *p != Peer::None));
        // router 5 = (1, 1): its dimension-0 ports lead to (0,1), (2,1), (3,1) = 4, 6, 7,
        // its dimension-1 ports to (1,0), (1,2), (1,3) = 1, 9, 13
        let to = |port| match t.peer(5, port) {
            Peer::Router { router, .. } => router.index(),
            _ => usize::MAX,
        };
        assert_eq!((4..10).map(to).collect::<Vec<_>>(), [4, 6, 7, 1, 9, 13]);
        assert_eq!(t.peer(5, 3), Peer::Endpoint { node: NodeId(23) });
    }

    #[test]
    fn sizes_are_refused_naming_the_field() {
        assert_eq!(build(1, 2, 1).unwrap_err().path, "topology.k");
        assert_eq!(build(2, 0, 1).unwrap_err().path, "topology.n");
        assert_eq!(build(2, 2, 0).unwrap_err().path, "topology.c");
        assert!(build(33, 2, 4).unwrap_err().to_string().contains("ports"));
    }
}

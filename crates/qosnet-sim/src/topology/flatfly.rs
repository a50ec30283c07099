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
//!
//! On a chip (`placement`, BookSim2's `use_noc_latency` in flatfly_onchip.cpp) a channel is
//! as long as its routers lie apart on the layout: router r at column r mod `columns`, row
//! r div `columns`, a router's tile `tile[0]` nodes across and `tile[1]` down, a node's
//! pitch a cycle: `tile[0] |Δcolumn| + tile[1] |Δrow|` cycles, its credits alike.

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

/// The most cycles a channel on a chip may take (the links' timing wheels are as long).
const MAX_CHANNEL: u64 = 10_000;

pub(super) fn build(
    k: u32,
    n: u32,
    c: u32,
    placement: Option<&crate::config::FlatflyPlacement>,
) -> Result<Topology, ConfigError> {
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
    if let Some(p) = placement {
        check_placement(routers, c, p)?;
    }
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
    let mut t = Topology::from_parts(Shape::FlatFly(f), routers, ports, peer);
    if let Some(p) = placement {
        t.link_cycles = channel_lengths(&t, p);
    }
    Ok(t)
}

/// A layout's sizes, before anything is built: at least one column and a node a tile, the
/// tile the router's `c` terminals, no channel longer than `MAX_CHANNEL`.
fn check_placement(routers: u64, c: u32, p: &crate::config::FlatflyPlacement) -> Result<(), ConfigError> {
    let [across, down] = p.tile;
    if p.columns == 0 || across == 0 || down == 0 {
        return Err(ConfigError::new(
            "topology.placement",
            format!("columns and tile must be >= 1, got columns = {}, tile = [{across}, {down}]", p.columns),
        ));
    }
    if across as u64 * down as u64 != c as u64 {
        return Err(ConfigError::new(
            "topology.placement.tile",
            format!("a router's tile holds its c = {c} terminals: tile[0] x tile[1] must be {c}, got {across} x {down}"),
        ));
    }
    let columns = (p.columns as u64).min(routers);
    let longest = across as u64 * (columns - 1) + down as u64 * (routers.div_ceil(columns) - 1);
    if longest > MAX_CHANNEL {
        return Err(ConfigError::new(
            "topology.placement",
            format!("its longest channel would take {longest} cycles; at most {MAX_CHANNEL}"),
        ));
    }
    Ok(())
}

/// Each router port's channel length on the chip (`placement`, checked), 0 for the
/// terminals'.
fn channel_lengths(t: &Topology, p: &crate::config::FlatflyPlacement) -> Vec<u32> {
    let [across, down] = p.tile;
    let at = |r: usize| (r as u32 % p.columns, r as u32 / p.columns);
    (0..t.routers * t.ports)
        .map(|i| match t.peer[i] {
            Peer::Router { router, .. } => {
                let ((x0, y0), (x1, y1)) = (at(i / t.ports), at(router.index()));
                across * x0.abs_diff(x1) + down * y0.abs_diff(y1)
            }
            _ => 0,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_ary_two_flat_with_concentration_four() {
        // BookSim2's flatflyconfig: k = 4, n = 2, c = 4: 16 routers of radix 4 + 2*3 = 10.
        let t = build(4, 2, 4, None).unwrap();
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
    fn on_a_chip_a_channel_is_as_long_as_its_routers_lie_apart() {
        // BookSim2's flatflyconfig with use_noc_latency = 1: 4x4 routers on 4 columns, tiles
        // of 2x2 nodes. Router 5 = column 1, row 1: to router 4 (column 0) 2 cycles, to 7
        // (column 3) 4; to router 1 (row 0) 2, to 9 (row 2) 2, to 13 (row 3) 4.
        let p = crate::config::FlatflyPlacement { columns: 4, tile: [2, 2] };
        let t = build(4, 2, 4, Some(&p)).unwrap();
        let len = |port: usize| t.link_cycles[5 * t.ports + port];
        assert_eq!((4..10).map(len).collect::<Vec<_>>(), [2, 2, 4, 2, 2, 4]);
        assert_eq!(len(0), 0, "a terminal's link keeps endpoint.link_latency");
        // symmetric: the way back is as long
        for r in 0..t.routers {
            for port in 4..10 {
                let Peer::Router { router, port: back } = t.peer(r, port) else { panic!() };
                assert_eq!(
                    t.link_cycles[r * t.ports + port],
                    t.link_cycles[router.index() * t.ports + back as usize]
                );
            }
        }
        assert_eq!(t.longest_link(), 6); // (0,0) to (3,0) is 6; (0,0) to (0,3) 6
                                         // BookSim2's default x = 8 with 16 routers of one node: two rows of eight
        let p = crate::config::FlatflyPlacement { columns: 8, tile: [1, 1] };
        let t = build(4, 2, 1, Some(&p)).unwrap();
        // router 0 to router 12 (dimension 1, coordinate 3): column 4, row 1: 4 + 1 cycles
        assert_eq!(t.link_cycles[t.ports - 1], 5);
    }

    #[test]
    fn sizes_are_refused_naming_the_field() {
        assert_eq!(build(1, 2, 1, None).unwrap_err().path, "topology.k");
        assert_eq!(build(2, 0, 1, None).unwrap_err().path, "topology.n");
        assert_eq!(build(2, 2, 0, None).unwrap_err().path, "topology.c");
        assert!(build(33, 2, 4, None).unwrap_err().to_string().contains("ports"));
        let place = |columns, tile| crate::config::FlatflyPlacement { columns, tile };
        let e = build(4, 2, 4, Some(&place(4, [2, 1]))).unwrap_err();
        assert_eq!(e.path, "topology.placement.tile");
        assert!(e.message.contains("must be 4, got 2 x 1"), "{}", e.message);
        assert_eq!(build(4, 2, 4, Some(&place(0, [2, 2]))).unwrap_err().path, "topology.placement");
        // (65,536 routers in a row: refused before any is built)
        let e = build(4, 8, 1, Some(&place(65_536, [1, 1]))).unwrap_err();
        assert!(e.message.contains("at most 10000"), "{}", e.message);
    }
}

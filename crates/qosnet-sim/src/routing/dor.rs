//! Dimension-order routing for meshes and tori; dateline VC classes for tori.
//!
//! A torus ring needs two VC classes to be deadlock free (Dally & Seitz). The class is
//! chosen as a packet enters a dimension and kept through it, as BookSim2's deterministic
//! dateline does (`dor_next_torus`): going +, a packet whose route wraps from k-1 to 0 takes
//! the upper half of the VCs, any other the lower half; going -, the one whose route stays
//! on the same side of the wrap link (destination below it) takes the upper half. In
//! either direction one class never crosses the wrap link and the other never uses the
//! link half a ring from it, so neither class's channels form a cycle.
//!
//! Minimal direction. A tie (k even, distance k/2) goes + from an even coordinate and -
//! from an odd one: under dimension order a packet enters a dimension at its source's
//! coordinate in it, so the ties of uniform traffic split evenly between the two
//! directions (going + always loaded the + links 0.38 against 0.23 at load 0.3 on an 8x8
//! torus). BookSim2 draws at random as the packet turns into the dimension
//! (`dor_next_torus`): `Ties::Drawn`, a bit a dimension drawn with the packet's way at its
//! source (`config::TorusTies::Random`). After the first hop the distance is below k/2, so
//! the packet keeps its direction, and either direction is deadlock free with the classes.

use super::{all_vcs, Route};
use crate::topology::mesh::{coord, minus_port, plus_port, EJECT_PORT};

/// The side lengths of a mesh/torus and every router's coordinates, precomputed so routing
/// a header needs no division.
#[derive(Clone, Debug)]
pub struct Grid {
    pub dims: Vec<u32>,
    /// `coords[router * dims.len() + dim]`.
    coords: Vec<u16>,
}

impl Grid {
    pub fn new(dims: &[u32]) -> Grid {
        let routers: usize = dims.iter().map(|&d| d as usize).product();
        let coords =
            (0..routers).flat_map(|r| (0..dims.len()).map(move |d| coord(dims, r, d) as u16)).collect();
        Grid { dims: dims.to_vec(), coords }
    }

    #[inline]
    pub(super) fn at(&self, router: usize) -> &[u16] {
        let n = self.dims.len();
        &self.coords[router * n..router * n + n]
    }
}

/// How a tie on a torus ring is broken (module comment; `config::TorusTies`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ties {
    /// Toward + from an even coordinate, - from an odd one.
    Parity,
    /// Toward + where bit `dim` of the packet's drawn word is set.
    Drawn(u32),
}

impl Ties {
    /// `n` tie bits (one a dimension, for `Drawn`) from a packet's draw at its source: from
    /// its upper half, apart from the low bits its way's other choices take.
    #[inline]
    pub fn drawn_bits(draw: u64, n: u32) -> u32 {
        (draw >> 32) as u32 & ((1 << n) - 1)
    }

    #[inline(always)]
    fn plus(self, dim: usize, c: u32) -> bool {
        match self {
            Ties::Parity => c % 2 == 0,
            Ties::Drawn(word) => word >> dim & 1 == 1,
        }
    }
}

/// How the wrap-around links of a torus are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// A mesh: no wrap-around links.
    Mesh,
    /// A torus with minimal routing but no dateline classes: deadlock-prone, offered so
    /// that deadlock itself can be studied (the watchdog reports it).
    Unsafe,
    /// A torus with the two dateline VC classes; the input (port, VC) tells the class.
    Dateline { in_port: usize, in_vc: usize, ties: Ties },
}

/// Dimension order's next hop from `router` toward router `to`: the dimension, whether it
/// goes +, and the two coordinates in it (here, there); `None` at `to`. On a torus
/// (`wrap`) the minimal direction, a tie broken by `ties` (module comment).
#[inline(always)]
fn next_hop(
    grid: &Grid,
    router: usize,
    to: usize,
    wrap: bool,
    ties: Ties,
) -> Option<(usize, bool, u32, u32)> {
    let (here, there) = (grid.at(router), grid.at(to));
    for (dim, &k) in grid.dims.iter().enumerate() {
        let (c, t) = (here[dim] as u32, there[dim] as u32);
        if c == t {
            continue;
        }
        let plus = if wrap {
            let forward = (t + k - c) % k;
            forward < k - forward || (forward == k - forward && ties.plus(dim, c))
        } else {
            t > c
        };
        return Some((dim, plus, c, t));
    }
    None
}

/// The dateline class (upper: true) of a hop in dimension `dim` from coordinate `c` toward
/// `t`, for a header that arrived on `in_port` in the upper class or not (`arrived_upper`):
/// continuing in the dimension keeps its class; entering it, going + a route that wraps
/// takes the upper class, going - one that does not ("c > t" tells both).
#[inline(always)]
fn dateline_upper(dim: usize, in_port: usize, arrived_upper: bool, c: u32, t: u32) -> bool {
    let continuing = in_port == plus_port(dim) || in_port == minus_port(dim);
    if continuing {
        arrived_upper
    } else {
        c > t
    }
}

pub(super) fn route(grid: &Grid, router: usize, dst: usize, wrap: Wrap, vcs: u32) -> Route {
    let ties = if let Wrap::Dateline { ties, .. } = wrap { ties } else { Ties::Parity };
    let Some((dim, plus, c, t)) = next_hop(grid, router, dst, wrap != Wrap::Mesh, ties) else {
        return Route { port: EJECT_PORT as u32, vcs: all_vcs(vcs) };
    };
    let port = if plus { plus_port(dim) } else { minus_port(dim) } as u32;
    let Wrap::Dateline { in_port, in_vc, .. } = wrap else {
        return Route { port, vcs: all_vcs(vcs) };
    };
    let half = vcs / 2;
    let upper = dateline_upper(dim, in_port, in_vc as u32 >= half, c, t);
    let lower = all_vcs(half);
    Route { port, vcs: if upper { all_vcs(vcs) & !lower } else { lower } }
}

/// Dimension order on a torus with its dateline classes, as `route` with `Wrap::Dateline`,
/// for a routing that keeps the class itself (Valiant's phases, `oblivious.rs`): the next
/// hop from `router` toward router `to` of a header that arrived on `in_port` in the upper
/// class or not, as its output port and class; `None` at `to`.
#[inline]
pub(super) fn torus_hop(
    grid: &Grid,
    router: usize,
    to: usize,
    in_port: usize,
    arrived_upper: bool,
    ties: Ties,
) -> Option<(usize, bool)> {
    let (dim, plus, c, t) = next_hop(grid, router, to, true, ties)?;
    let port = if plus { plus_port(dim) } else { minus_port(dim) };
    Some((port, dateline_upper(dim, in_port, arrived_upper, c, t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dateline_class_is_chosen_on_entering_a_dimension_and_kept() {
        let ring = Grid::new(&[4u32]);
        let from_nic = Wrap::Dateline { in_port: EJECT_PORT, in_vc: 0, ties: Ties::Parity };
        let (plus, minus) = (plus_port(0) as u32, minus_port(0) as u32);
        // x=3 to x=0 (+, distance 1): the route wraps -> upper half
        assert_eq!(route(&ring, 3, 0, from_nic, 4), Route { port: plus, vcs: 0b1100 });
        // x=1 to x=2 (+): no wrap -> lower half
        assert_eq!(route(&ring, 1, 2, from_nic, 4), Route { port: plus, vcs: 0b0011 });
        // x=0 to x=3 (-, distance 1): the route wraps -> lower half; x=2 to x=1 (-): upper
        assert_eq!(route(&ring, 0, 3, from_nic, 4), Route { port: minus, vcs: 0b0011 });
        assert_eq!(route(&ring, 2, 1, from_nic, 4), Route { port: minus, vcs: 0b1100 });
        // continuing in the dimension keeps the class it arrived on
        let r =
            route(&ring, 0, 1, Wrap::Dateline { in_port: minus_port(0), in_vc: 2, ties: Ties::Parity }, 4);
        assert_eq!(r.vcs, 0b1100);
        let r =
            route(&ring, 0, 1, Wrap::Dateline { in_port: minus_port(0), in_vc: 1, ties: Ties::Parity }, 4);
        assert_eq!(r.vcs, 0b0011);
        // a mesh never wraps: x=3 to x=0 goes -
        assert_eq!(route(&ring, 3, 0, Wrap::Mesh, 4).port, minus);
    }

    #[test]
    fn ties_split_by_the_entering_coordinate() {
        let ring = Grid::new(&[8u32]);
        let from_nic = Wrap::Dateline { in_port: EJECT_PORT, in_vc: 0, ties: Ties::Parity };
        // distance 4 either way: + from even x, - from odd x
        for x in 0..8usize {
            let r = route(&ring, x, (x + 4) % 8, from_nic, 2);
            let expect = if x % 2 == 0 { plus_port(0) } else { minus_port(0) };
            assert_eq!(r.port, expect as u32, "from x={x}");
        }
        // one hop on, the rest of the way is shorter than k/2: the direction holds
        let r =
            route(&ring, 0, 3, Wrap::Dateline { in_port: minus_port(0), in_vc: 0, ties: Ties::Parity }, 2);
        assert_eq!(r.port, plus_port(0) as u32);
        let r = route(&ring, 0, 5, Wrap::Dateline { in_port: plus_port(0), in_vc: 0, ties: Ties::Parity }, 2);
        assert_eq!(r.port, minus_port(0) as u32);
    }

    /// BookSim2's rule (`Ties::Drawn`): a tie goes + where the packet's bit for the
    /// dimension is set, from any coordinate; a distance below k/2 ignores the bits.
    #[test]
    fn drawn_ties_follow_the_packets_bit_for_the_dimension() {
        let grid = Grid::new(&[8u32, 8]);
        let from_nic = |word| Wrap::Dateline { in_port: EJECT_PORT, in_vc: 0, ties: Ties::Drawn(word) };
        for x in 0..8usize {
            // x to x + 4 in dimension 0 (bit 0), then y 0 to 4 in dimension 1 (bit 1)
            for word in 0..4u32 {
                let r = route(&grid, x, (x + 4) % 8, from_nic(word), 2);
                let expect = if word & 1 == 1 { plus_port(0) } else { minus_port(0) };
                assert_eq!(r.port, expect as u32, "x={x}, word {word:b}");
                let r = route(&grid, x, x + 8 * 4, from_nic(word), 2);
                let expect = if word & 2 == 2 { plus_port(1) } else { minus_port(1) };
                assert_eq!(r.port, expect as u32, "y 0 to 4 from x={x}, word {word:b}");
            }
            // no tie: the shorter way whatever the bits
            for word in [0, u32::MAX] {
                assert_eq!(route(&grid, x, (x + 1) % 8, from_nic(word), 2).port, plus_port(0) as u32);
                assert_eq!(route(&grid, x, (x + 7) % 8, from_nic(word), 2).port, minus_port(0) as u32);
            }
        }
    }
}

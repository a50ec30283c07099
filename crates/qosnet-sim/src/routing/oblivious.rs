//! Oblivious randomized routing on a mesh, each packet's choice drawn at its source router
//! (`Packet::via`, `choose`) and kept deadlock free by two VC layers (the traffic class's
//! VCs of even rank, then odd: `super::class_layer`):
//! - Valiant (Valiant & Brebner; BookSim2's `valiant_mesh`): dimension order to a random
//!   intermediate router on layer 0, then dimension order to the destination on layer 1.
//!   Each phase is dimension order's, and a packet only rises from layer 0 to 1.
//! - Valiant on a torus (BookSim2's `valiant_torus`): the same two phases, each in dimension
//!   order with the torus's two dateline classes (`dor.rs`), so four layers: 2 x phase +
//!   class. Within a phase the dateline classes keep each ring acyclic, and a packet only
//!   rises from phase 0 to 1; at the intermediate it starts phase 1 as if just injected (each
//!   dimension's class chosen on entering it). With drawn ties (`config::TorusTies::Random`,
//!   BookSim2's) the packet's `via` also holds a tie bit a dimension a phase, drawn with
//!   the intermediate: `TieBits`.
//! - O1TURN (Seo et al., ISCA 2005; BookSim2's `xy_yx_mesh`): dimension order lowest
//!   dimension first (XY) on layer 0 or highest first (YX) on layer 1, half the packets each.
//!   Either order alone is acyclic and the layers keep them apart.
//!
//! At the destination router the ejection takes every VC of the class (as BookSim2's: the
//! layers separate the channels between routers only).

use super::dor::{self, Grid};
use crate::topology::mesh::{minus_port, plus_port, EJECT_PORT};

/// Which oblivious routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Oblivious {
    Valiant,
    /// Valiant on a torus, its phases on the dateline classes (module comment); its ties
    /// drawn (`random_ties`) or by parity (`dor::Ties`).
    ValiantTorus {
        random_ties: bool,
    },
    XyYx,
    /// O1TURN with the order chosen by the first hops' queues (`choose`).
    AdaptiveXyYx,
}

/// The VC layers each needs (module comment): two, four for Valiant on a torus.
#[inline(always)]
pub fn layers(mode: Oblivious) -> u32 {
    match mode {
        Oblivious::ValiantTorus { .. } => 4,
        _ => 2,
    }
}

/// Where Valiant on a torus with drawn ties keeps them in a packet's 16-bit `via`: the
/// intermediate router + 1 below `shift`, then phase 0's bits (one a dimension), then
/// phase 1's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TieBits {
    pub shift: u32,
    pub dims: u32,
}

impl TieBits {
    pub fn of(grid: &Grid) -> TieBits {
        let dims = grid.dims.len() as u32;
        TieBits { shift: 16u32.saturating_sub(2 * dims), dims }
    }

    /// The most routers the bits below `shift` can name (as intermediate + 1).
    pub fn most_routers(self) -> u64 {
        (1u64 << self.shift) - 1
    }

    /// `via` (the intermediate + 1) with `draw`'s tie bits above it.
    fn with_ties(self, via: u16, draw: u64) -> u16 {
        let bits = dor::Ties::drawn_bits(draw, 2 * self.dims);
        (via as u32 | bits << self.shift) as u16
    }

    /// The intermediate + 1, and each phase's ties, of a packet's `via`.
    fn split(self, via: u32) -> (u32, [dor::Ties; 2]) {
        let phase = |p: u32| dor::Ties::Drawn(via >> (self.shift + p * self.dims));
        (via & ((1 << self.shift) - 1), [phase(0), phase(1)])
    }
}

/// Dimension order on a mesh from `router` toward router `to`, lowest dimension first or
/// (`descending`) highest first; `None` at `to`.
#[inline]
fn toward(grid: &Grid, router: usize, to: usize, descending: bool) -> Option<usize> {
    let (here, there) = (grid.at(router), grid.at(to));
    let n = grid.dims.len();
    let differs = |d: &usize| here[*d] != there[*d];
    let dim = if descending { (0..n).rev().find(differs) } else { (0..n).find(differs) }?;
    Some(if there[dim] > here[dim] { plus_port(dim) } else { minus_port(dim) })
}

/// The route of a header at `router` arriving on `in_port` in VC layer `in_layer`, to
/// router `dst` (a mesh's node is its router) with the packet's choice `via`: the output
/// port and the layer it leaves in, `None` for the ejection (every VC).
#[inline]
pub(super) fn route(
    grid: &Grid,
    mode: Oblivious,
    router: usize,
    in_port: usize,
    in_layer: u32,
    dst: usize,
    via: u32,
) -> (usize, Option<u32>) {
    match mode {
        Oblivious::Valiant => {
            // (from the terminal: the first phase)
            let layer = if in_port == EJECT_PORT { 0 } else { in_layer };
            if via != 0 && layer == 0 {
                if let Some(port) = toward(grid, router, via as usize - 1, false) {
                    return (port, Some(0));
                }
            }
            match toward(grid, router, dst, false) {
                Some(port) => (port, Some(1)),
                None => (EJECT_PORT, None),
            }
        }
        Oblivious::ValiantTorus { random_ties } => {
            // (the layer is 2 x phase + dateline class; from the terminal: phase 0)
            let (phase, mut upper) =
                if in_port == EJECT_PORT { (0, false) } else { (in_layer / 2, in_layer % 2 == 1) };
            let (via, ties) =
                if random_ties { TieBits::of(grid).split(via) } else { (via, [dor::Ties::Parity; 2]) };
            let mut in_port = in_port;
            if via != 0 && phase == 0 {
                let to = via as usize - 1;
                if let Some((port, up)) = dor::torus_hop(grid, router, to, in_port, upper, ties[0]) {
                    return (port, Some(up as u32));
                }
                // at the intermediate: phase 1 starts as from the terminal
                (in_port, upper) = (EJECT_PORT, false);
            }
            match dor::torus_hop(grid, router, dst, in_port, upper, ties[1]) {
                Some((port, up)) => (port, Some(2 + up as u32)),
                None => (EJECT_PORT, None),
            }
        }
        Oblivious::XyYx | Oblivious::AdaptiveXyYx => match toward(grid, router, dst, via == 1) {
            Some(port) => (port, Some(via)),
            None => (EJECT_PORT, None),
        },
    }
}

/// A packet's choice at its source router `router` for router `dst` from a uniform `draw`
/// and the router's queue toward each output port (flits waiting downstream, as its
/// credits tell): Valiant's intermediate router + 1 (0 where it is the source's own: the
/// minimal path, on layer 1), O1TURN's order (0: XY, 1: YX; adaptive: the order whose
/// first hop has the shorter queue, drawn on a tie, as BookSim2's `adaptive_xy_yx_mesh`).
#[inline]
pub fn choose(
    grid: &Grid,
    mode: Oblivious,
    router: usize,
    dst: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
) -> u16 {
    match mode {
        Oblivious::Valiant | Oblivious::ValiantTorus { .. } => {
            let routers: usize = grid.dims.iter().map(|&d| d as usize).product();
            let via = (draw % routers as u64) as usize;
            let via = if via == router { 0 } else { (via + 1) as u16 };
            match mode {
                Oblivious::ValiantTorus { random_ties: true } => TieBits::of(grid).with_ties(via, draw),
                _ => via,
            }
        }
        Oblivious::XyYx => (draw & 1) as u16,
        Oblivious::AdaptiveXyYx => {
            let first = |descending| toward(grid, router, dst, descending).map_or(0, &queue);
            super::order_by_queues(first(false), first(true), draw)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::topology::{Peer, Topology};

    /// Walk from router `src` to `dst` with choice `via`: the routers crossed and the layers.
    fn walk(
        t: &Topology,
        grid: &Grid,
        mode: Oblivious,
        src: usize,
        dst: usize,
        via: u32,
    ) -> (Vec<usize>, Vec<u32>) {
        let (mut r, mut in_port, mut layer) = (src, EJECT_PORT, 0);
        let (mut routers, mut layers) = (vec![src], vec![]);
        loop {
            let (port, out) = route(grid, mode, r, in_port, layer, dst, via);
            let Some(out) = out else {
                assert_eq!(port, EJECT_PORT);
                assert_eq!(r, dst);
                return (routers, layers);
            };
            layers.push(out);
            let Peer::Router { router, port: back } = t.peer(r, port) else { panic!("off the grid") };
            (r, in_port, layer) = (router.index(), back as usize, out);
            routers.push(r);
            assert!(routers.len() < 64, "loops");
        }
    }

    #[test]
    fn valiant_goes_through_its_intermediate_in_layer_0_then_on_in_layer_1() {
        let t = Topology::build(&TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None }).unwrap();
        let grid = Grid::new(&[4, 4]);
        let dist = |a: usize, b: usize| (a % 4).abs_diff(b % 4) + (a / 4).abs_diff(b / 4);
        for src in 0..16 {
            for dst in 0..16 {
                for via in 0..=16u32 {
                    let (routers, layers) = walk(&t, &grid, Oblivious::Valiant, src, dst, via);
                    let hops = match via {
                        0 => dist(src, dst),
                        v => dist(src, v as usize - 1) + dist(v as usize - 1, dst),
                    };
                    assert_eq!(routers.len() - 1, hops, "{src} -> {dst} via {via}");
                    assert!(layers.windows(2).all(|w| w[0] <= w[1]), "layers only rise");
                    if via != 0 {
                        let at = routers.iter().position(|&r| r == via as usize - 1).unwrap();
                        assert!(layers[..at].iter().all(|&l| l == 0) && layers[at..].iter().all(|&l| l == 1));
                    }
                }
            }
        }
    }

    #[test]
    fn valiant_on_a_torus_runs_each_phase_as_dateline_dimension_order() {
        // every source, destination and intermediate of a 4x4 torus: phase 0 is the
        // dateline walk to the intermediate (layers 0/1 its classes), phase 1 the walk on
        // from it as from a terminal (layers 2/3); the layer only rises by phase. With
        // drawn ties, every word of tie bits too: each phase breaks its ties by its own
        // two bits (`TieBits`: above bit 12 here, phase 1's on top)
        let t = Topology::build(&TopologyConfig::Torus { k: Some(4), n: Some(2), dims: None }).unwrap();
        let grid = Grid::new(&[4, 4]);
        let dateline = |from: usize, to: usize, ties: dor::Ties| {
            // (dimension order with the dateline classes, as the torus's own routing)
            let (mut r, mut in_port, mut upper) = (from, EJECT_PORT, false);
            let (mut routers, mut classes) = (vec![], vec![]);
            while let Some((port, up)) = dor::torus_hop(&grid, r, to, in_port, upper, ties) {
                let wrap = dor::Wrap::Dateline { in_port, in_vc: upper as usize * 2, ties };
                let vcs = dor::route(&grid, r, to, wrap, 4).vcs;
                assert_eq!(vcs, if up { 0b1100 } else { 0b0011 }, "torus_hop's class is dor::route's");
                let Peer::Router { router, port: back } = t.peer(r, port) else { panic!("off the torus") };
                (r, in_port, upper) = (router.index(), back as usize, up);
                routers.push(r);
                classes.push(up as u32);
            }
            (routers, classes)
        };
        assert_eq!(TieBits::of(&grid), TieBits { shift: 12, dims: 2 });
        for (random_ties, words) in [(false, 0..1u32), (true, 0..16)] {
            let mode = Oblivious::ValiantTorus { random_ties };
            for word in words {
                let ties = |phase: u32| match random_ties {
                    true => dor::Ties::Drawn(word >> (2 * phase) & 3),
                    false => dor::Ties::Parity,
                };
                for src in 0..16 {
                    for dst in 0..16 {
                        for via in 0..=16u32 {
                            let (routers, layers) = walk(&t, &grid, mode, src, dst, via | word << 12);
                            let (mut expect, mut expect_layers) = (vec![src], vec![]);
                            let from = match via {
                                0 => src,
                                v => {
                                    let (r, c) = dateline(src, v as usize - 1, ties(0));
                                    expect.extend(r);
                                    expect_layers.extend(c);
                                    v as usize - 1
                                }
                            };
                            let (r, c) = dateline(from, dst, ties(1));
                            expect.extend(r);
                            expect_layers.extend(c.into_iter().map(|c| 2 + c));
                            let what = format!("{src} -> {dst} via {via}, ties {word:04b}");
                            assert_eq!((&routers, &layers), (&expect, &expect_layers), "{what}");
                            assert!(layers.windows(2).all(|w| w[0] / 2 <= w[1] / 2), "phases only rise");
                        }
                    }
                }
            }
        }
        assert_eq!(
            (layers(Oblivious::ValiantTorus { random_ties: false }), layers(Oblivious::Valiant)),
            (4, 2)
        );
    }

    /// `choose` keeps the intermediate below the tie bits and takes the bits from the
    /// draw's upper half, so the intermediate's draw (its lower bits) is the same with
    /// either rule.
    #[test]
    fn drawn_ties_ride_above_the_intermediate() {
        let grid = Grid::new(&[4, 4]);
        let none = |_: usize| 0;
        for draw in [0u64, 5, 0xF_0000_0007, 0xA_0000_0010, u64::MAX] {
            let parity = choose(&grid, Oblivious::ValiantTorus { random_ties: false }, 3, 9, draw, none);
            let drawn = choose(&grid, Oblivious::ValiantTorus { random_ties: true }, 3, 9, draw, none);
            assert_eq!(drawn & 0x0FFF, parity, "draw {draw:x}");
            assert_eq!(drawn >> 12, (draw >> 32) as u16 & 0xF, "draw {draw:x}");
        }
    }

    #[test]
    fn o1turn_goes_xy_on_layer_0_or_yx_on_layer_1() {
        let t = Topology::build(&TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None }).unwrap();
        let grid = Grid::new(&[4, 4]);
        // (0,0) to (2,3): XY crosses x first (routers 1, 2), YX y first (4, 8, 12)
        let (xy, layers) = walk(&t, &grid, Oblivious::XyYx, 0, 14, 0);
        assert_eq!(xy, [0, 1, 2, 6, 10, 14]);
        assert!(layers.iter().all(|&l| l == 0));
        let (yx, layers) = walk(&t, &grid, Oblivious::XyYx, 0, 14, 1);
        assert_eq!(yx, [0, 4, 8, 12, 13, 14]);
        assert!(layers.iter().all(|&l| l == 1));
        let none = |_: usize| 0;
        assert_eq!(
            (choose(&grid, Oblivious::XyYx, 0, 14, 6, none), choose(&grid, Oblivious::XyYx, 0, 14, 7, none)),
            (0, 1)
        );
        // Valiant: the draw's router, but the source's own means minimal
        assert_eq!(choose(&grid, Oblivious::Valiant, 3, 14, 16 + 9, none), 10);
        assert_eq!(choose(&grid, Oblivious::Valiant, 9, 14, 16 + 9, none), 0);
        // adaptive: the order whose first hop (XY: +x, YX: +y) has fewer flits waiting,
        // the draw's bit on a tie
        let (px, py) = (plus_port(0), plus_port(1));
        let queue = |qx: u32, qy: u32| {
            move |p: usize| {
                if p == px {
                    qx
                } else if p == py {
                    qy
                } else {
                    99
                }
            }
        };
        let a = Oblivious::AdaptiveXyYx;
        assert_eq!(choose(&grid, a, 0, 14, 0, queue(3, 1)), 1, "x busier: YX");
        assert_eq!(choose(&grid, a, 0, 14, 1, queue(1, 3)), 0, "y busier: XY");
        assert_eq!(
            (choose(&grid, a, 0, 14, 6, queue(2, 2)), choose(&grid, a, 0, 14, 7, queue(2, 2))),
            (0, 1)
        );
        // and it routes as O1TURN does on the order it chose
        assert_eq!(walk(&t, &grid, a, 0, 14, 1).0, yx);
    }
}

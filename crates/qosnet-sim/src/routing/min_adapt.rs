//! Minimal adaptive routing on a mesh or torus with an escape VC (Duato's protocol), the
//! routing BookSim2 calls `min_adapt` (`routing_function = min_adapt`).
//!
//! A header may take any minimal direction still to cross, on a traffic class's adaptive
//! VCs, in any order: the channels among adaptive VCs may close cycles. Beside them it is
//! offered dimension order on the escape VCs — the first VC of the class on a mesh, the
//! first two on a torus, where they are dimension order's dateline pair — and once on an
//! escape VC it keeps to dimension order. Dimension order's channel dependencies are
//! acyclic, so the escape channels always drain and a header blocked on adaptive channels
//! eventually gets one (Duato 1993's condition with the escape kept once taken). A header
//! entering the escape takes its dateline class as if it were injected where it is, which
//! is what BookSim2's `min_adapt_torus` does too.
//!
//! The output-port VC allocator (`router/vc_alloc.rs`) asks for the first adaptive way,
//! then the second where the first has no VC free (or where both have and the second
//! more), then the escape; BookSim2's two (`router/vc_matching.rs`) ask for every way at
//! once, the separable one picking the escape last. Differences from BookSim2: its torus
//! variant puts adaptive traffic on VC 3 alone (VC 2 idle, 4 VCs needed), ours on every
//! VC from 2; a tie of distance k/2 goes as dimension order's does (+ from an even
//! coordinate), BookSim2's goes -; and with more than two dimensions still to cross only
//! the first two are offered at once.
//!
//! BookSim2's `min_adapt` as it ships (commit 28f43299) is not adaptive in direction: its
//! routing function adds every minimal direction to an output set, a `std::set` ordered by
//! priority alone (`outputset.hpp`), which keeps the first of equal priority and drops the
//! rest, so the lowest dimension still to cross is all it offers, with the escape on the
//! same port. `[routing] min_adapt = { directions = "first" }` does the same. BookSim2's
//! iSLIP VC allocator then asks for the escape VC among the others, blind to the priority
//! that puts it last: `router.vc_allocator = "islip"` does that, and `escape = "alongside"`
//! approximates it with the output-port allocator (`config::MinAdaptConfig`;
//! results/crosscheck/FINDINGS.md).

use super::dor::{self, Grid, Wrap};
use super::{all_vcs, Route, VcMask, Ways};
use crate::config::{EscapeRequest, MinAdaptConfig, MinAdaptDirections};
use crate::topology::mesh::{minus_port, plus_port, EJECT_PORT};

/// The escape VCs per class: dimension order's one on a mesh, its dateline pair on a torus.
#[inline]
pub fn escape_vcs(torus: bool) -> u32 {
    if torus {
        2
    } else {
        1
    }
}

/// The ways at `router` of a header for `dst` that arrived by `in_port` on the
/// `in_rank`-th of its class's `class_size` VCs; `opts`: BookSim2's variant
/// (`config::MinAdaptConfig`).
#[allow(clippy::too_many_arguments)] // the header's place and the routing's shape
pub(super) fn route(
    grid: &Grid,
    torus: bool,
    opts: MinAdaptConfig,
    router: usize,
    in_port: usize,
    in_rank: u32,
    dst: usize,
    class_size: u32,
) -> Ways {
    let (here, there) = (grid.at(router), grid.at(dst));
    let all = all_vcs(class_size);
    let escapes = escape_vcs(torus);
    if here == there {
        return Ways { first: Route { port: EJECT_PORT as u32, vcs: all }, second: None, escape: None };
    }
    let on_escape = in_port != EJECT_PORT && in_rank < escapes;
    // Dimension order on the escape class: continuing the run it is on, or entering it
    // afresh from here (as if injected here: `dor.rs` picks the dateline class then).
    let wrap = match (torus, on_escape) {
        (false, _) => Wrap::Mesh,
        (true, true) => Wrap::Dateline { in_port, in_vc: in_rank as usize, ties: dor::Ties::Parity },
        (true, false) => Wrap::Dateline { in_port: EJECT_PORT, in_vc: 0, ties: dor::Ties::Parity },
    };
    let escape = dor::route(grid, router, dst, wrap, escapes);
    let escape = Route { port: escape.port, vcs: escape.vcs & all_vcs(escapes) };
    if on_escape {
        return Ways { first: escape, second: None, escape: None };
    }
    let adaptive: VcMask = all & !all_vcs(escapes);
    let mut ways = (0..grid.dims.len()).filter(|&d| here[d] != there[d]).map(|d| {
        let (c, t, k) = (here[d] as u32, there[d] as u32, grid.dims[d]);
        let plus = if torus {
            let forward = (t + k - c) % k;
            forward < k - forward || (forward == k - forward && c % 2 == 0)
        } else {
            t > c
        };
        Route { port: if plus { plus_port(d) } else { minus_port(d) } as u32, vcs: adaptive }
    });
    let first = ways.next().expect("a coordinate differs");
    match (opts.directions, opts.escape) {
        (MinAdaptDirections::All, _) => Ways { first, second: ways.next(), escape: Some(escape) },
        (MinAdaptDirections::First, EscapeRequest::Last) => {
            Ways { first, second: None, escape: Some(escape) }
        }
        // (the first direction is dimension order's, the escape's port: one route, its VCs
        // and the escape's handed out alike)
        (MinAdaptDirections::First, EscapeRequest::Alongside) => {
            debug_assert_eq!(first.port, escape.port);
            Ways {
                first: Route { port: first.port, vcs: first.vcs | escape.vcs },
                second: None,
                escape: None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Duato's protocol: every minimal direction, the escape last.
    const D: MinAdaptConfig =
        MinAdaptConfig { directions: MinAdaptDirections::All, escape: EscapeRequest::Last };

    /// Worked on a 4x4 grid (router x + 4y), 3 VCs on a mesh (VC 0 the escape) and 4 on a
    /// torus (VCs 0-1 the dateline pair).
    #[test]
    fn every_minimal_direction_beside_dimension_order_on_the_escape() {
        let g = Grid::new(&[4, 4]);
        let (px, mx, py, my) =
            (plus_port(0) as u32, minus_port(0) as u32, plus_port(1) as u32, minus_port(1) as u32);
        let inj = EJECT_PORT;
        // mesh, (0,0) -> (2,3): +x or +y on VCs 1-2; the escape +x on VC 0
        let w = route(&g, false, D, 0, inj, 0, 14, 3);
        assert_eq!(w.first, Route { port: px, vcs: 0b110 });
        assert_eq!(w.second, Some(Route { port: py, vcs: 0b110 }));
        assert_eq!(w.escape, Some(Route { port: px, vcs: 0b001 }));
        // x done at (2,0): only +y is minimal
        let w = route(&g, false, D, 2, minus_port(0), 2, 14, 3);
        assert_eq!((w.first, w.second), (Route { port: py, vcs: 0b110 }, None));
        // arrived on the escape VC: dimension order alone, on it
        let w = route(&g, false, D, 1, minus_port(0), 0, 14, 3);
        assert_eq!(w, Ways { first: Route { port: px, vcs: 0b001 }, second: None, escape: None });
        // at the destination: the ejection, every VC
        assert_eq!(
            route(&g, false, D, 14, minus_port(1), 1, 14, 3).first,
            Route { port: EJECT_PORT as u32, vcs: 0b111 }
        );
        // torus, (3,0) -> (0,3): +x over the wrap and -y over the wrap are minimal; the
        // escape is +x on the upper dateline class (its run wraps), VCs 2-3 adaptive
        let w = route(&g, true, D, 3, inj, 0, 12, 4);
        assert_eq!(w.first, Route { port: px, vcs: 0b1100 });
        assert_eq!(w.second, Some(Route { port: my, vcs: 0b1100 }));
        assert_eq!(w.escape, Some(Route { port: px, vcs: 0b0010 }));
        // entering the escape mid-ring from an adaptive VC takes the class afresh: at
        // (2,0) toward (3,0) the run does not wrap (lower), though it came on VC 3
        let w = route(&g, true, D, 2, minus_port(0), 3, 3, 4);
        assert_eq!(w.escape, Some(Route { port: px, vcs: 0b0001 }));
        // ... and on the escape's upper class it continues upper (dimension order's rule)
        let w = route(&g, true, D, 0, minus_port(0), 1, 1, 4);
        assert_eq!(w, Ways { first: Route { port: px, vcs: 0b0010 }, second: None, escape: None });
        // a tie (distance 2 on a 4-ring) goes + from an even x, - from an odd one
        assert_eq!(route(&g, true, D, 0, inj, 0, 2, 4).first.port, px);
        assert_eq!(route(&g, true, D, 1, inj, 0, 3, 4).first.port, mx);
    }

    /// BookSim2's `min_adapt` as shipped (`config::MinAdaptConfig`), on the 4x4 mesh with
    /// 3 VCs: (0,0) -> (2,3) is offered +x alone (the lowest dimension still to cross),
    /// on VCs 1-2 with the escape +x on VC 0 asked last, or with an iSLIP VC allocator on
    /// VCs 0-2 alike; on the escape it keeps to it, and at the destination every VC.
    #[test]
    fn booksim2s_min_adapt_offers_the_first_direction_alone() {
        let g = Grid::new(&[4, 4]);
        let px = plus_port(0) as u32;
        let first = MinAdaptConfig { directions: MinAdaptDirections::First, escape: EscapeRequest::Last };
        let alongside =
            MinAdaptConfig { directions: MinAdaptDirections::First, escape: EscapeRequest::Alongside };
        let w = route(&g, false, first, 0, EJECT_PORT, 0, 14, 3);
        assert_eq!(
            w,
            Ways {
                first: Route { port: px, vcs: 0b110 },
                second: None,
                escape: Some(Route { port: px, vcs: 0b001 })
            }
        );
        let w = route(&g, false, alongside, 0, EJECT_PORT, 0, 14, 3);
        assert_eq!(w, Ways { first: Route { port: px, vcs: 0b111 }, second: None, escape: None });
        // x done at (2,0): +y, the same way as Duato's
        let py = plus_port(1) as u32;
        assert_eq!(
            route(&g, false, alongside, 2, minus_port(0), 2, 14, 3).first,
            Route { port: py, vcs: 0b111 }
        );
        // arrived on the escape VC: dimension order on it alone, whatever the options
        for opts in [first, alongside] {
            let w = route(&g, false, opts, 1, minus_port(0), 0, 14, 3);
            assert_eq!(w, Ways { first: Route { port: px, vcs: 0b001 }, second: None, escape: None });
            assert_eq!(route(&g, false, opts, 14, minus_port(1), 1, 14, 3).first.vcs, 0b111);
        }
    }
}

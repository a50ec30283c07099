//! Routing on a flattened butterfly (Kim, Dally & Abts, ISCA 2007, §3.1).
//!
//! Dimension order (the minimal routing taken in a fixed order): in each dimension where
//! the router's coordinate differs from the destination router's, one hop straight to it,
//! dimension 0 first. Every hop goes to a higher dimension than the one before, so channels
//! are used in one order and no cycle of waits can form: one VC suffices (as dimension
//! order on a mesh).
//!
//! Valiant and UGAL-L (§3.1's non-minimal routings, as BookSim2's `valiant_flatfly` and
//! `ugal_flatfly` in flatfly_onchip.cpp): dimension order to an intermediate router, then
//! dimension order to the destination, each phase on its own VC layer (the traffic class's
//! VCs of even rank, then odd: `super::class_layer`), so each layer is dimension order's and
//! a packet only rises: two layers suffice. A packet going minimally takes the second layer
//! (BookSim2's second half of the VCs). A Valiant packet whose way to its intermediate
//! passes its destination's router leaves there (BookSim2's `valiant_flatfly`); UGAL's
//! goes on to its intermediate (its `ugal_flatfly`). The choice is the packet's `via` (intermediate
//! router + 1, 0 for minimal), made at its source router (`choose_via`):
//! - Valiant: an intermediate router drawn uniformly among all (its own or the
//!   destination's means the minimal path);
//! - UGAL-L: an intermediate drawn in the dimensions where source and destination differ
//!   (BookSim2's `find_ran_intm`: the others keep their coordinate), taken unless the minimal
//!   path's first output queue times its hops is at most the detour's plus [`UGAL_BIAS`].
//!
//! UGAL-L with O1TURN (BookSim2's `ugal_xyyx_flatfly`): the same choice, every phase in one
//! dimension order drawn at the source, ascending or descending; the queues weighed are
//! those of that order's first hops. Four layers: the order's pair (0-1 ascending, 2-3
//! descending), in each the two phases as above (BookSim2's halves of the VCs by order,
//! each halved by phase). The packet's `via` keeps the order in its lowest bit, above it
//! the intermediate router + 1 (`split_via`).
//!
//! O1TURN (Seo et al., ISCA 2005; BookSim2's `xyyx_flatfly` and `adaptive_xyyx_flatfly`):
//! minimal, one hop per differing dimension, in ascending order (XY) on VC layer 0 or
//! descending (YX) on layer 1, the order drawn at the source router or (adaptive) chosen
//! there by which first hop has the shorter queue, drawn on a tie. Either order alone is
//! dimension order's, acyclic, and the layers keep them apart.

use super::{all_vcs, Mode, Route};
use crate::topology::flatfly::FlatFly;

/// The VC layers Valiant and UGAL need (module comment).
pub const DETOUR_LAYERS: u32 = 2;

/// The VC layers a detour needs, in one dimension order or (`turns`: UGAL with O1TURN)
/// in either (module comment).
#[inline]
pub const fn detour_layers(turns: bool) -> u32 {
    if turns {
        DETOUR_LAYERS * TURN_LAYERS
    } else {
        DETOUR_LAYERS
    }
}

/// A detour's `via` as its intermediate router + 1 (0: minimal) and (`turns`) whether its
/// dimensions go in descending order, kept in the lowest bit (module comment).
#[inline]
fn split_via(via: u32, turns: bool) -> (u32, bool) {
    if turns {
        (via >> 1, via & 1 == 1)
    } else {
        (via, false)
    }
}

/// UGAL-L's bias toward the minimal path, in flits of queue x hops: BookSim2's
/// `ugal_flatfly_onchip` uses 2 (its `threshold`).
pub const UGAL_BIAS: u32 = 2;

/// Routers' coordinates that differ: the hops of dimension order between them.
#[inline]
fn hops(f: &FlatFly, a: usize, b: usize) -> u32 {
    (0..f.n).filter(|&d| f.coord(a, d) != f.coord(b, d)).count() as u32
}

/// The route of a header at `router` arriving on `in_port` in VC layer `in_layer`, to node
/// `dst` with Valiant choice `via` (Valiant, UGAL; `turns`: UGAL with O1TURN): the output
/// port and the layer it leaves in, `None` for the ejection (every VC).
#[inline]
#[allow(clippy::too_many_arguments)] // where the header is, where it goes, which way
pub(super) fn route_detour(
    f: &FlatFly,
    mode: Mode,
    turns: bool,
    router: usize,
    in_port: usize,
    in_layer: u32,
    dst: usize,
    via: u32,
) -> (usize, Option<u32>) {
    let (via, descending) = split_via(via, turns);
    // (the order's pair of layers; from a terminal: the first phase)
    let base = if descending { DETOUR_LAYERS } else { 0 };
    let phase = if in_port < f.c as usize { 0 } else { in_layer % DETOUR_LAYERS };
    // Valiant turns at its intermediate, or at the destination's router if its way there
    // passes it (BookSim2's valiant_flatfly checks both at every router); UGAL-L at its
    // intermediate only (as BookSim2's ugal_flatfly).
    let arrived = mode == Mode::Valiant && router == dst / f.c as usize;
    if via != 0 && phase == 0 && router != via as usize - 1 && !arrived {
        let port = toward(f, router, via as usize - 1, descending).expect("not at the intermediate");
        return (port, Some(base));
    }
    match toward(f, router, dst / f.c as usize, descending) {
        Some(port) => (port, Some(base + 1)),
        None => (dst % f.c as usize, None),
    }
}

/// The Valiant choice for a packet entering the network at `router` toward node `dst`
/// (module comment): `draw` picks the intermediate (and, `turns`, the order first), UGAL-L
/// weighs `queue(port)` (flits waiting for that output, as the router knows from its
/// credits) times the hops.
pub fn choose_via(
    f: &FlatFly,
    mode: Mode,
    turns: bool,
    router: usize,
    dst: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
) -> u16 {
    let (descending, draw) = if turns { (draw & 1 == 1, draw >> 1) } else { (false, draw) };
    let via = detour(f, mode, descending, router, dst, draw, queue);
    if turns {
        via << 1 | descending as u16
    } else {
        via
    }
}

/// `choose_via`'s intermediate router + 1, or 0 for the minimal path.
fn detour(
    f: &FlatFly,
    mode: Mode,
    descending: bool,
    router: usize,
    dst: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
) -> u16 {
    let to = dst / f.c as usize;
    let via = match mode {
        Mode::Min => return 0,
        Mode::Valiant => (draw % f.routers() as u64) as usize,
        Mode::Ugal => {
            let (mut via, mut draw) = (0, draw);
            for d in 0..f.n {
                let own = f.coord(router, d);
                let c = if own == f.coord(to, d) { own } else { (draw % f.k as u64) as usize };
                draw /= f.k as u64;
                via += c * f.stride(d);
            }
            via
        }
    };
    if via == router || via == to {
        return 0;
    }
    if mode == Mode::Ugal {
        let port = |r: usize| toward(f, router, r, descending).expect("another router");
        let minimal = queue(port(to)) * hops(f, router, to);
        let detour = queue(port(via)) * (hops(f, router, via) + hops(f, via, to));
        if minimal <= detour + UGAL_BIAS {
            return 0;
        }
    }
    (via + 1) as u16
}

/// The VC layers O1TURN needs (module comment).
pub const TURN_LAYERS: u32 = 2;

/// The port of the next hop from `router` toward router `to`, dimensions taken in
/// ascending order or (`descending`) descending; `None` at `to`.
#[inline]
fn toward(f: &FlatFly, router: usize, to: usize, descending: bool) -> Option<usize> {
    let differs = |d: &u32| f.coord(router, *d) != f.coord(to, *d);
    let dim = if descending { (0..f.n).rev().find(differs) } else { (0..f.n).find(differs) }?;
    Some(f.port(router, dim, f.coord(to, dim)))
}

/// O1TURN's route at `router` to node `dst` in the order `via` (0: ascending, 1:
/// descending): the output port and the layer it leaves in, `None` for the ejection.
#[inline]
pub(super) fn route_turns(f: &FlatFly, router: usize, dst: usize, via: u32) -> (usize, Option<u32>) {
    match toward(f, router, dst / f.c as usize, via == 1) {
        Some(port) => (port, Some(via)),
        None => (dst % f.c as usize, None),
    }
}

/// O1TURN's order for a packet entering at `router` toward node `dst`: `draw`'s lowest bit,
/// or (`adaptive`) the order whose first hop has the shorter `queue` (module comment).
#[inline]
pub fn choose_turn(
    f: &FlatFly,
    adaptive: bool,
    router: usize,
    dst: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
) -> u16 {
    if !adaptive {
        return (draw & 1) as u16;
    }
    let to = dst / f.c as usize;
    let first = |descending| toward(f, router, to, descending).map_or(0, &queue);
    super::order_by_queues(first(false), first(true), draw)
}

/// Dimension order's route at `router` to node `dst`: `toward` the destination's router in
/// ascending order, or the ejection there.
#[inline]
pub(super) fn route(f: &FlatFly, router: usize, dst: usize, vcs: u32) -> Route {
    let port = toward(f, router, dst / f.c as usize, false).unwrap_or(dst % f.c as usize);
    Route { port: port as u32, vcs: all_vcs(vcs) }
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

    #[test]
    fn a_detour_reaches_its_intermediate_in_layer_0_then_the_destination_in_layer_1() {
        // (UGAL's way: to the intermediate whatever it passes; Valiant's below)
        let (k, n, c) = (3, 2, 2);
        let t = Topology::build(&TopologyConfig::Flatfly { k, n, c, placement: None }).unwrap();
        let f = FlatFly { k, n, c };
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                for via in 0..=f.routers() as u32 {
                    let (at, mut in_port) = t.attach[src];
                    let (mut r, mut seen_via, mut crossed, mut in_layer) = (at.index(), via == 0, 0, 0);
                    loop {
                        seen_via |= via != 0 && r == via as usize - 1;
                        let (port, out) =
                            route_detour(&f, Mode::Ugal, false, r, in_port as usize, in_layer, dst, via);
                        let Some(out) = out else {
                            // (no layer: the ejection, and only there)
                            assert!(
                                matches!(t.peer(r, port), Peer::Endpoint { node } if node.index() == dst)
                            );
                            break;
                        };
                        assert!(out >= in_layer || in_port < c, "layers only rise");
                        // (layer 0 only before the intermediate)
                        assert_eq!(out == 0, !seen_via, "from {src} to {dst} via {via}, at {r}");
                        match t.peer(r, port) {
                            Peer::Endpoint { .. } => panic!("an ejection with a layer"),
                            Peer::Router { router, port } => {
                                (r, in_port, in_layer, crossed) = (router.index(), port, out, crossed + 1);
                            }
                            Peer::None => panic!("unconnected"),
                        }
                    }
                    let (from, to) = (src / c as usize, dst / c as usize);
                    let expect = match via {
                        0 => hops(&f, from, to),
                        v => hops(&f, from, v as usize - 1) + hops(&f, v as usize - 1, to),
                    };
                    assert_eq!(crossed, expect, "from {src} to {dst} via {via}");
                }
            }
        }
    }

    #[test]
    fn valiant_leaves_at_the_destination_router_on_its_way_to_the_intermediate() {
        // 4-ary 2-flat, one node a router: from router 0 = (0,0) to router 1 = (1,0) via
        // router 5 = (1,1): dimension order to (1,1) passes (1,0) first, and Valiant ejects
        // there in one hop; UGAL goes on to (1,1) and back (3 hops).
        let t = Topology::build(&TopologyConfig::Flatfly { k: 4, n: 2, c: 1, placement: None }).unwrap();
        let f = FlatFly { k: 4, n: 2, c: 1 };
        let walk = |mode| {
            let (mut r, mut in_port, mut layer, mut hops) = (0usize, 0u32, 0u32, 0);
            loop {
                let (port, out) = route_detour(&f, mode, false, r, in_port as usize, layer, 1, 6);
                match t.peer(r, port) {
                    Peer::Endpoint { node } => return (node.index(), hops),
                    Peer::Router { router, port } => {
                        (r, in_port, layer, hops) =
                            (router.index(), port, out.expect("a layer between routers"), hops + 1)
                    }
                    Peer::None => panic!("unconnected"),
                }
            }
        };
        assert_eq!(walk(Mode::Valiant), (1, 1));
        assert_eq!(walk(Mode::Ugal), (1, 3));
    }

    #[test]
    fn ugal_weighs_queue_times_hops_with_booksim2s_bias() {
        // A 4-ary 2-flat, one node a router. From router 0 = (0,0) to router 5 = (1,1): both
        // coordinates differ, so the draw picks both digits: 2 + 4 x 2 = router 10 = (2,2).
        let f = FlatFly { k: 4, n: 2, c: 1 };
        let draw = 2 + 4 * 2;
        let (minimal_port, detour_port) = (route(&f, 0, 5, 1).port, route(&f, 0, 10, 1).port);
        let q = |min: u32, detour: u32| {
            move |p: usize| {
                if p == minimal_port as usize {
                    min
                } else if p == detour_port as usize {
                    detour
                } else {
                    0
                }
            }
        };
        // minimal: 2 hops; the detour: 2 to (2,2), 2 back to (1,1) = 4 hops
        assert_eq!(choose_via(&f, Mode::Ugal, false, 0, 5, draw, q(3, 1)), 0); // 3 x 2 <= 1 x 4 + 2
        assert_eq!(choose_via(&f, Mode::Ugal, false, 0, 5, draw, q(4, 1)), 11); // 8 > 6: router 10 + 1
                                                                                // from (0,0) to (1,0): dimension 1 agrees and keeps 0; the draw's first digit only
        let via = choose_via(&f, Mode::Ugal, false, 0, 1, 3, |p| {
            if p == route(&f, 0, 1, 1).port as usize {
                9
            } else {
                0
            }
        });
        assert_eq!(via, 4, "router 3 = (3,0) + 1");
        // Valiant: any router, but its own or the destination's means minimal
        assert_eq!(choose_via(&f, Mode::Valiant, false, 0, 5, 7, |_| 0), 8);
        assert_eq!(choose_via(&f, Mode::Valiant, false, 0, 5, 16, |_| 0), 0);
        assert_eq!(choose_via(&f, Mode::Valiant, false, 0, 5, 5, |_| 0), 0);
        assert_eq!(choose_via(&f, Mode::Min, false, 0, 5, 7, |_| 99), 0);
    }

    #[test]
    fn o1turn_takes_the_dimensions_up_on_layer_0_or_down_on_layer_1() {
        // a 3-ary 3-flat, 2 nodes a router: every pair, both orders
        let (k, n, c) = (3, 3, 2);
        let t = Topology::build(&TopologyConfig::Flatfly { k, n, c, placement: None }).unwrap();
        let f = FlatFly { k, n, c };
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                for via in 0..2u32 {
                    let (mut r, mut dims) = (src / 2, vec![]);
                    loop {
                        let (port, layer) = route_turns(&f, r, dst, via);
                        match t.peer(r, port) {
                            Peer::Endpoint { node } => {
                                assert_eq!((node.index(), layer), (dst, None));
                                break;
                            }
                            Peer::Router { router, .. } => {
                                assert_eq!(layer, Some(via));
                                let next = router.index();
                                let dim = (0..n).find(|&d| f.coord(r, d) != f.coord(next, d)).unwrap();
                                assert_eq!(f.coord(next, dim), f.coord(dst / 2, dim), "straight to it");
                                dims.push(dim);
                                r = next;
                            }
                            _ => panic!("off the network"),
                        }
                    }
                    let ordered = dims.windows(2).all(|w| if via == 0 { w[0] < w[1] } else { w[0] > w[1] });
                    assert!(ordered, "{src} -> {dst} order {via}: {dims:?}");
                }
            }
        }
        // the adaptive order: the shorter first-hop queue, the draw on a tie; router 0
        // (0,0,0) to router 13 (1,1,1): XY leaves in dimension 0, YX in dimension 2
        let (xy, yx) = (f.port(0, 0, 1), f.port(0, 2, 1));
        let q = |a: u32, b: u32| {
            move |p: usize| {
                if p == xy {
                    a
                } else if p == yx {
                    b
                } else {
                    99
                }
            }
        };
        assert_eq!(choose_turn(&f, true, 0, 26, 0, q(3, 1)), 1);
        assert_eq!(choose_turn(&f, true, 0, 26, 0, q(1, 3)), 0);
        assert_eq!(
            (choose_turn(&f, true, 0, 26, 6, q(2, 2)), choose_turn(&f, true, 0, 26, 7, q(2, 2))),
            (0, 1)
        );
        assert_eq!(
            (choose_turn(&f, false, 0, 26, 6, q(0, 9)), choose_turn(&f, false, 0, 26, 7, q(0, 9))),
            (0, 1)
        );
    }

    #[test]
    fn ugal_with_o1turn_keeps_its_order_in_both_phases_on_that_orders_two_layers() {
        // a 3-ary 3-flat, 2 nodes a router: every pair, every intermediate, both orders
        let (k, n, c) = (3, 3, 2);
        let t = Topology::build(&TopologyConfig::Flatfly { k, n, c, placement: None }).unwrap();
        let f = FlatFly { k, n, c };
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                for (intermediate, descending) in
                    (0..=f.routers() as u32).flat_map(|v| [(v, false), (v, true)])
                {
                    let via = intermediate << 1 | descending as u32;
                    let base = if descending { 2 } else { 0 };
                    let (at, mut in_port) = t.attach[src];
                    let (mut r, mut in_layer, mut seen, mut dims) =
                        (at.index(), 0, intermediate == 0, vec![]);
                    loop {
                        seen |= intermediate != 0 && r == intermediate as usize - 1;
                        let (port, out) =
                            route_detour(&f, Mode::Ugal, true, r, in_port as usize, in_layer, dst, via);
                        let Some(out) = out else {
                            assert!(
                                matches!(t.peer(r, port), Peer::Endpoint { node } if node.index() == dst)
                            );
                            break;
                        };
                        // the order's pair, phase 0 until the intermediate, 1 after
                        assert_eq!(out, base + if seen { 1 } else { 0 }, "{src} -> {dst} via {via}, at {r}");
                        let Peer::Router { router, port } = t.peer(r, port) else {
                            panic!("off the network")
                        };
                        let next = router.index();
                        let dim = (0..n).find(|&d| f.coord(r, d) != f.coord(next, d)).unwrap();
                        dims.push((out, dim));
                        (r, in_port, in_layer) = (next, port, out);
                    }
                    // within a phase, dimensions in the packet's order
                    let ordered = dims.windows(2).filter(|w| w[0].0 == w[1].0).all(|w| {
                        if descending {
                            w[0].1 > w[1].1
                        } else {
                            w[0].1 < w[1].1
                        }
                    });
                    assert!(ordered, "{src} -> {dst} via {via}: {dims:?}");
                }
            }
        }
    }

    #[test]
    fn ugal_with_o1turn_draws_the_order_and_weighs_that_orders_first_hops() {
        // A 4-ary 2-flat, one node a router, from router 0 = (0,0) to router 5 = (1,1); the
        // draw's lowest bit is the order, the rest picks the intermediate (2,2) = router 10
        // as above. Ascending leaves in dimension 0, descending in dimension 1.
        let f = FlatFly { k: 4, n: 2, c: 1 };
        let draw = (2 + 4 * 2) << 1;
        let first = |to: usize, descending| toward(&f, 0, to, descending).unwrap();
        let q = |descending: bool, min: u32, detour: u32| {
            let (m, d) = (first(5, descending), first(10, descending));
            move |p: usize| {
                if p == m {
                    min
                } else if p == d {
                    detour
                } else {
                    50
                }
            }
        };
        // the ascending order's queues decide for an ascending packet, the descending's
        // for a descending one (the other order's ports read 50 and are not weighed)
        assert_eq!(choose_via(&f, Mode::Ugal, true, 0, 5, draw, q(false, 3, 1)), 0);
        assert_eq!(choose_via(&f, Mode::Ugal, true, 0, 5, draw, q(false, 4, 1)), 11 << 1);
        assert_eq!(choose_via(&f, Mode::Ugal, true, 0, 5, draw | 1, q(true, 3, 1)), 1);
        assert_eq!(choose_via(&f, Mode::Ugal, true, 0, 5, draw | 1, q(true, 4, 1)), 11 << 1 | 1);
        assert_ne!(first(10, false), first(10, true), "the orders leave by different ports");
    }
}

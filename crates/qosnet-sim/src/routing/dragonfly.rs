//! Routing on a dragonfly (Kim, Dally, Scott & Abts, ISCA 2008, §4): minimal, Valiant
//! and UGAL-L.
//!
//! Minimal: within the source group to the router holding the global channel to the
//! destination group, across it, then within the destination group (at most local,
//! global, local). Valiant (§4.1): first minimally to a random intermediate group, then
//! minimally to the destination (at most local, global, local, global, local). UGAL-L
//! (§4.2, "UGAL with local information"): at the source router, the minimal path unless
//! its output queue times its hop count exceeds a Valiant path's (to a random group) by
//! more than a bias.
//!
//! Deadlock freedom by VC layers (§4.1, the VCs of Figure 10): a packet's layer is the
//! number of global channels it has crossed, counting the one it is crossing, so layers
//! only rise along a path and within a layer a path is local, global, local at most, with
//! no cycle: minimal routing needs two layers (local 0, global 1, local 1), Valiant and
//! UGAL three (0, 1, 1, 2, 2). The layer travels as the VC (layer k is the traffic class's
//! VCs whose rank is k modulo the layers, `super::class_layer`), so a router reads it from
//! the arriving VC; a packet from a terminal is in layer 0.
//!
//! The Valiant choice is the packet's `via` (`flit::Packet`): its intermediate group + 1,
//! 0 for minimal; before its first global hop (layer 0) a packet with a `via` heads for
//! that group, after it (layer 1, in the intermediate group) for its destination.
//!
//! BookSim2's `ugal_dragonflynew` (`routing.kind = "ugal_router"`, `Detour::Router`)
//! differs in three ways, kept apart here so that its files run as it runs them: the
//! detour goes to a random intermediate *router* (a node drawn uniformly, its router), in
//! any group but the source's, the destination's included; the choice weighs the queues
//! by 1 and 2, not by hops; and a packet's VC is its phase, not its global hops: VC 0 to
//! the intermediate router (local, global, local), VC 1 from there (or from the source,
//! minimal) up to the global hop, VC 2 from it (and within the source group's own
//! traffic). VC 0's leg crosses into another group and on within it, so VC 0's channels
//! can wait on each other around a ring of groups: BookSim2 accepts that, and so does
//! this variant (a deadlock, should one form, is reported by the watchdog). `via` is then
//! the intermediate router + 1.

use crate::topology::dragonfly::Dragonfly;

pub use super::Mode;

/// UGAL-L's bias toward the minimal path, in flits of queue × hops: BookSim2's
/// `ugal_dragonflynew` uses 30 ("biases the adaptive decision toward minimum routing").
pub const UGAL_BIAS: u32 = 30;

/// Where a Valiant or UGAL detour goes (module comment).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detour {
    /// A random intermediate group, minimally on from the first router reached in it
    /// (Kim et al. §4.1); VC layers by global hops.
    Group,
    /// A random intermediate router, as BookSim2's `ugal_dragonflynew`; VCs by phase.
    Router,
}

/// BookSim2's weights of the minimal and the detour's queue (`ugal_dragonflynew`: "could
/// use hopcnt instead of 1 and 2").
const ROUTER_WEIGHTS: (u32, u32) = (1, 2);

/// The VC layers each routing needs (module comment).
pub fn layers(mode: Mode) -> u32 {
    match mode {
        Mode::Min => 2,
        Mode::Valiant | Mode::Ugal => 3,
    }
}

/// The output port toward node `dst` along the minimal path from `router`.
#[inline]
pub fn minimal_port(d: &Dragonfly, router: usize, dst: usize) -> usize {
    let to = d.router_of_node(dst);
    if to == router {
        return dst % d.p as usize;
    }
    let (g, gd) = (d.group_of(router), d.group_of(to));
    let target = if g == gd {
        to
    } else {
        let (holder, port) = d.channel_end(g, d.channel_to(g, gd));
        if holder == router {
            return port;
        }
        holder
    };
    d.local_port(router, target)
}

/// The output port from `router` toward group `group` (≠ its own).
#[inline]
fn port_to_group(d: &Dragonfly, router: usize, group: usize) -> usize {
    let (holder, port) = d.channel_end(d.group_of(router), d.channel_to(d.group_of(router), group));
    if holder == router {
        port
    } else {
        d.local_port(router, holder)
    }
}

/// The output port from `router` toward router `to` (≠ `router`): within the group
/// directly, else toward its group.
#[inline]
fn port_toward(d: &Dragonfly, router: usize, to: usize) -> usize {
    if d.group_of(to) == d.group_of(router) {
        d.local_port(router, to)
    } else {
        port_to_group(d, router, d.group_of(to))
    }
}

/// Router-to-router hops of the minimal path from `router` to router `to`.
fn minimal_hops(d: &Dragonfly, router: usize, to: usize) -> u32 {
    let (g, gd) = (d.group_of(router), d.group_of(to));
    if router == to {
        0
    } else if g == gd {
        1
    } else {
        let out = d.channel_end(g, d.channel_to(g, gd)).0;
        let landing = d.channel_end(gd, d.channel_to(gd, g)).0;
        u32::from(out != router) + 1 + u32::from(landing != to)
    }
}

/// Router-to-router hops of the Valiant path from `router` through group `via` to router `to`.
fn valiant_hops(d: &Dragonfly, router: usize, via: usize, to: usize) -> u32 {
    let g = d.group_of(router);
    let out = d.channel_end(g, d.channel_to(g, via)).0;
    let landing = d.channel_end(via, d.channel_to(via, g)).0;
    u32::from(out != router) + 1 + minimal_hops(d, landing, to)
}

/// The route of a header at `router` arriving on `in_port` in VC layer `in_layer`, to node
/// `dst` with Valiant choice `via`: the output port and the layer it leaves in.
#[inline]
pub fn route(
    d: &Dragonfly,
    detour: Detour,
    router: usize,
    in_port: usize,
    in_layer: u32,
    dst: usize,
    via: u32,
) -> (usize, u32) {
    if detour == Detour::Router {
        return route_by_phase(d, router, in_port, in_layer, dst, via);
    }
    let layer = if d.is_terminal(in_port) { 0 } else { in_layer };
    let port = if via != 0 && layer == 0 {
        port_to_group(d, router, via as usize - 1)
    } else {
        minimal_port(d, router, dst)
    };
    (port, layer + u32::from(d.is_global(port)))
}

/// `route` with `Detour::Router`: the layer is BookSim2's phase (module comment). From a
/// terminal: 2 within the group, 1 minimal, 0 with a detour; phase 0 ends at the
/// intermediate router (`via` - 1), phase 1 at the global hop.
#[inline]
fn route_by_phase(
    d: &Dragonfly,
    router: usize,
    in_port: usize,
    in_layer: u32,
    dst: usize,
    via: u32,
) -> (usize, u32) {
    let mut phase = if !d.is_terminal(in_port) {
        in_layer
    } else if d.group_of(router) == d.group_of(d.router_of_node(dst)) {
        2
    } else {
        u32::from(via == 0)
    };
    if phase == 0 && router == via as usize - 1 {
        phase = 1;
    }
    let port =
        if phase == 0 { port_toward(d, router, via as usize - 1) } else { minimal_port(d, router, dst) };
    // ("optical dateline": the minimal leg's global hop raises it)
    if phase == 1 && d.is_global(port) {
        phase = 2;
    }
    (port, phase)
}

/// The Valiant choice for a packet entering the network at `router` toward node `dst`:
/// `draw` picks the intermediate group uniformly among all groups (the source's or the
/// destination's mean minimal routing, as Kim et al. §4.1); UGAL-L then keeps the minimal
/// path unless `queue(port)` (flits waiting for that output, as the router knows from its
/// credits) times the hops is larger there by more than [`UGAL_BIAS`].
/// With `Detour::Router`, BookSim2's choice: the intermediate a router drawn uniformly (a
/// node's), minimal where it is in the source's group, the queues weighed 1 and 2.
pub fn choose_via(
    d: &Dragonfly,
    mode: Mode,
    detour: Detour,
    router: usize,
    dst: usize,
    draw: u64,
    queue: impl Fn(usize) -> u32,
) -> u16 {
    let to = d.router_of_node(dst);
    let (g, gd) = (d.group_of(router), d.group_of(to));
    if detour == Detour::Router {
        let via = (draw % d.routers() as u64) as usize;
        if mode == Mode::Min || g == gd || d.group_of(via) == g {
            return 0;
        }
        let (wm, wv) = ROUTER_WEIGHTS;
        if mode == Mode::Ugal
            && wm * queue(minimal_port(d, router, dst)) <= wv * queue(port_toward(d, router, via)) + UGAL_BIAS
        {
            return 0;
        }
        return (via + 1) as u16;
    }
    let via = (draw % d.groups() as u64) as usize;
    if mode == Mode::Min || g == gd || via == g || via == gd {
        return 0;
    }
    if mode == Mode::Ugal {
        let minimal = queue(minimal_port(d, router, dst)) * minimal_hops(d, router, to);
        let valiant = queue(port_to_group(d, router, via)) * valiant_hops(d, router, via, to);
        if minimal <= valiant + UGAL_BIAS {
            return 0;
        }
    }
    (via + 1) as u16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use crate::topology::{Peer, Topology};

    /// Follow `route` from `src` to `dst` over the built topology: the ports and layers.
    fn walk(t: &Topology, d: &Dragonfly, src: usize, dst: usize, via: u32) -> Vec<(usize, u32)> {
        walk_with(t, d, Detour::Group, src, dst, via)
    }

    fn walk_with(
        t: &Topology,
        d: &Dragonfly,
        detour: Detour,
        src: usize,
        dst: usize,
        via: u32,
    ) -> Vec<(usize, u32)> {
        let (mut r, mut in_port) = (d.router_of_node(src), src % d.p as usize);
        let mut layer = 0;
        let mut hops = Vec::new();
        loop {
            let (port, l) = route(d, detour, r, in_port, layer, dst, via);
            hops.push((port, l));
            assert!(hops.len() < 8, "loops");
            match t.peer(r, port) {
                Peer::Endpoint { node } => {
                    assert_eq!(node.index(), dst);
                    return hops;
                }
                Peer::Router { router, port } => {
                    (r, in_port, layer) = (router.index(), port as usize, l);
                }
                Peer::None => panic!("unconnected port"),
            }
        }
    }

    #[test]
    fn minimal_paths_are_local_global_local_with_the_layer_rising_at_the_global_hop() {
        let (a, p, h) = (4, 2, 2);
        let t = Topology::build(&TopologyConfig::Dragonfly { a, p, h, global_latency: None }).unwrap();
        let d = Dragonfly { a, p, h };
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                let hops = walk(&t, &d, src, dst, 0);
                let routers = hops.len() as u32 - 1;
                assert_eq!(routers, minimal_hops(&d, d.router_of_node(src), d.router_of_node(dst)));
                assert!(routers <= 3);
                let globals = hops.iter().filter(|(port, _)| d.is_global(*port)).count();
                assert_eq!(globals, usize::from(d.group_of(src / 2) != d.group_of(dst / 2)));
                // layers: 0 before the global hop, 1 from it on; never falling
                assert!(hops.windows(2).all(|w| w[0].1 <= w[1].1));
                assert!(hops.iter().all(|&(_, l)| l <= 1));
            }
        }
    }

    #[test]
    fn valiant_paths_cross_the_intermediate_group_in_three_layers() {
        let (a, p, h) = (2, 1, 2);
        let t = Topology::build(&TopologyConfig::Dragonfly { a, p, h, global_latency: None }).unwrap();
        let d = Dragonfly { a, p, h };
        let groups = d.groups();
        for src in 0..t.nodes {
            for dst in 0..t.nodes {
                let (g, gd) = (d.group_of(src), d.group_of(dst));
                for via in (0..groups).filter(|&v| v != g && v != gd && g != gd) {
                    let hops = walk(&t, &d, src, dst, via as u32 + 1);
                    let globals: Vec<u32> =
                        hops.iter().filter(|(port, _)| d.is_global(*port)).map(|&(_, l)| l).collect();
                    assert_eq!(globals, [1, 2], "two global hops, in layers 1 and 2");
                    assert_eq!(hops.len() as u32 - 1, valiant_hops(&d, src, via, dst));
                    assert!(hops.windows(2).all(|w| w[0].1 <= w[1].1));
                }
            }
        }
    }

    #[test]
    fn ugal_keeps_the_minimal_path_until_its_queue_outweighs_the_bias() {
        // 3 groups of 2 routers, p = 1, h = 1: from router 0 (group 0) to node 3 (router 3,
        // group 1). Minimal: router 0 holds group 0's channel to group 1 (port 2), lands on
        // router 2, one local hop to router 3: 2 hops. Valiant via group 2: local to router 1
        // (port 1), global to router 4, local to router 5, global to router 3: 4 hops.
        let d = Dragonfly { a: 2, p: 1, h: 1 };
        assert_eq!((minimal_port(&d, 0, 3), minimal_hops(&d, 0, 3)), (2, 2));
        assert_eq!((port_to_group(&d, 0, 2), valiant_hops(&d, 0, 2, 3)), (1, 4));
        let draw = 2; // group 2
        let q = |min: u32, nonmin: u32| move |port: usize| if port == 2 { min } else { nonmin };
        // 2*q_min <= 4*q_nm + 30
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Group, 0, 3, draw, q(15, 0)), 0);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Group, 0, 3, draw, q(16, 0)), 3);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Group, 0, 3, draw, q(17, 1)), 0);
        // Valiant always takes the drawn group, unless it is the source's or destination's
        assert_eq!(choose_via(&d, Mode::Valiant, Detour::Group, 0, 3, draw, q(0, 99)), 3);
        assert_eq!(choose_via(&d, Mode::Valiant, Detour::Group, 0, 3, 1, q(0, 99)), 0);
        assert_eq!(choose_via(&d, Mode::Valiant, Detour::Group, 0, 3, 0, q(0, 99)), 0);
        // within a group: always minimal
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Group, 0, 1, draw, q(99, 0)), 0);
    }

    /// BookSim2's `ugal_dragonflynew` paths (`Detour::Router`), every source, destination
    /// and intermediate router of a 9-group dragonfly: each ends at its destination, passes
    /// its intermediate router, and carries its phase as VC: 0 up to the intermediate
    /// router, 1 from it to the global hop, 2 from there; minimal paths 1 then 2, and a
    /// group's own traffic 2 throughout.
    #[test]
    fn booksim2_detours_pass_the_intermediate_router_with_the_vc_as_phase() {
        let (a, p, h) = (4, 2, 2);
        let t = Topology::build(&TopologyConfig::Dragonfly { a, p, h, global_latency: None }).unwrap();
        let d = Dragonfly { a, p, h };
        for src in 0..t.nodes {
            let g = d.group_of(d.router_of_node(src));
            for dst in 0..t.nodes {
                let gd = d.group_of(d.router_of_node(dst));
                let minimal = walk_with(&t, &d, Detour::Router, src, dst, 0);
                let phases: Vec<u32> = minimal.iter().map(|&(_, l)| l).collect();
                if g == gd {
                    assert!(phases.iter().all(|&l| l == 2), "{src} -> {dst}: {phases:?}");
                } else {
                    // the minimal path of `Detour::Group`, in phases 1 then 2 (from the global hop)
                    let ports: Vec<usize> = minimal.iter().map(|&(port, _)| port).collect();
                    let group_ports: Vec<usize> =
                        walk(&t, &d, src, dst, 0).iter().map(|&(port, _)| port).collect();
                    assert_eq!(ports, group_ports);
                    let global = minimal.iter().position(|&(port, _)| d.is_global(port)).unwrap();
                    assert!(
                        phases[..global].iter().all(|&l| l == 1) && phases[global..].iter().all(|&l| l == 2)
                    );
                }
                for via in (0..d.routers()).filter(|&v| d.group_of(v) != g && g != gd) {
                    let hops = walk_with(&t, &d, Detour::Router, src, dst, via as u32 + 1);
                    // the routers visited: from the source's, each hop's far end
                    let mut at = vec![d.router_of_node(src)];
                    for &(port, _) in &hops[..hops.len() - 1] {
                        let Peer::Router { router, .. } = t.peer(*at.last().unwrap(), port) else {
                            unreachable!()
                        };
                        at.push(router.index());
                    }
                    let reached = at.iter().position(|&r| r == via).expect("passes the intermediate router");
                    let phases: Vec<u32> = hops.iter().map(|&(_, l)| l).collect();
                    assert!(
                        phases[..reached].iter().all(|&l| l == 0),
                        "{src} -> {dst} via {via}: {phases:?}"
                    );
                    assert!(phases[reached..].iter().all(|&l| l >= 1));
                    assert!(phases.windows(2).all(|w| w[0] <= w[1]));
                    let globals = hops.iter().filter(|(port, _)| d.is_global(*port)).count();
                    assert!(globals == 1 + usize::from(d.group_of(via) != gd));
                }
            }
        }
    }

    /// BookSim2's choice, by hand on the 3-group dragonfly above: intermediate router 4
    /// (group 2) for router 0's packet to node 3, its port toward it 1 (local to router 1,
    /// which holds the channel to group 2); minimal while q_min <= 2 q_detour + 30.
    #[test]
    fn booksim2_choice_weighs_the_queues_one_and_two() {
        let d = Dragonfly { a: 2, p: 1, h: 1 };
        assert_eq!((minimal_port(&d, 0, 3), port_toward(&d, 0, 4)), (2, 1));
        let q = |min: u32, nonmin: u32| move |port: usize| if port == 2 { min } else { nonmin };
        let draw = 4; // router 4
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, draw, q(30, 0)), 0);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, draw, q(31, 0)), 5);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, draw, q(34, 2)), 0);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, draw, q(35, 2)), 5);
        // an intermediate router in the destination's group (router 2) leaves by the
        // minimal port: the same queue weighed 1 against 2, so never taken
        assert_eq!(port_toward(&d, 0, 2), 2);
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, 2, q(99, 0)), 0);
        // in the source's group (router 1): minimal
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 3, 1, q(99, 0)), 0);
        // within a group: always minimal
        assert_eq!(choose_via(&d, Mode::Ugal, Detour::Router, 0, 1, draw, q(99, 0)), 0);
    }
}

//! Any network as a list of connections, in BookSim2's `anynet` file format (`topology =
//! anynet; network_file = ...`): each line names a router or a node and what it is
//! connected to, `router 0 node 0 node 1 router 1` (router 0 joins nodes 0 and 1 and
//! router 1). A connection written once is both ways (router 1 need not list router 0); a
//! node joins exactly one router; node numbers are the terminals' numbers, 0 to N-1, each
//! once. Routers are numbered by their numbers in the file, in increasing order, and a
//! router's ports in the order its connections are first written (from either side).
//!
//! Routes are minimal-hop, one per destination, spread over equally short ports by
//! destination (`ib_fabric/routes.rs`, as a fabric without forwarding tables), as BookSim2's
//! `min` routing takes a shortest path (its ties may break otherwise). Deadlock freedom is
//! not given on every graph (a ring of routers can close a cycle): the watchdog reports a
//! deadlock; `[routing] lmc = 0` puts each path in a VC layer that keeps the channel
//! dependencies acyclic (`routing/lid_paths.rs`, as OpenSM's DFSSSP).
//!
//! A number after a connection between routers is that channel's latency in cycles, one
//! way (BookSim2's newer format: `router 0 router 1 15` gives the channel from router 0 to
//! router 1 15 cycles, and its credits as long; the way back takes its own number, written on
//! router 1's line, or `[router] link_latency`). Refused, naming the line: a latency on a
//! node's link (BookSim2 gives its injection and ejection channels that latency; qosnet's
//! node links take `[endpoint] link_latency`).

use super::{ib_fabric, Peer, Shape, Topology};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};
use std::collections::BTreeMap;

/// Largest router or node number read (a typo of a huge number would otherwise ask for a
/// table that size).
const MAX_ID: u64 = 1 << 20;

/// Longest channel latency read, in cycles (the links' timing wheels are as long).
const MAX_LATENCY: u64 = 10_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum End {
    Router(u32),
    Node(u32),
}

/// Build the network in `text` (`shown`: the file's name for messages).
pub(super) fn build(text: &str, shown: &str) -> Result<Topology, ConfigError> {
    let err =
        |line: usize, why: String| ConfigError::new("topology.file", format!("{shown} line {line}: {why}"));
    // every connection once, as (router, other end), in the order written
    let mut links: Vec<(u32, End)> = Vec::new();
    // the router pairs joined so far, lower number first (a pair written from both sides
    // is one link)
    let mut joined = std::collections::HashSet::new();
    let mut routers = std::collections::BTreeSet::new();
    let mut node_router: BTreeMap<u32, (u32, usize)> = BTreeMap::new();
    // the channels given a latency: (from router, to router) -> cycles
    let mut latency: BTreeMap<(u32, u32), u32> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.split("//").next().unwrap_or("");
        let mut words = line.split_whitespace().peekable();
        let Some(head_kind) = words.next() else { continue };
        let parse_end = |kind: &str, id: Option<&str>| -> Result<End, ConfigError> {
            if kind != "router" && kind != "node" {
                let number = kind.parse::<u64>().is_ok();
                return Err(err(
                    line_no,
                    format!(
                        "{kind:?} is neither `router` nor `node`{}",
                        if number { " (a latency follows a connection, once)" } else { "" }
                    ),
                ));
            }
            let id = id.ok_or_else(|| err(line_no, format!("`{kind}` without a number")))?;
            let n: u64 = id
                .parse()
                .map_err(|_| err(line_no, format!("`{kind} {id}`: expected a whole number, got {id:?}")))?;
            if n > MAX_ID {
                return Err(err(line_no, format!("`{kind} {id}`: numbers go up to {MAX_ID}")));
            }
            Ok(if kind == "router" { End::Router(n as u32) } else { End::Node(n as u32) })
        };
        let head = parse_end(head_kind, words.next())?;
        while let Some(kind) = words.next() {
            let body = parse_end(kind, words.next())?;
            // (a number after the connection: its latency, one way)
            if let Some(cycles) = words.next_if(|w| w.parse::<u64>().is_ok()) {
                let cycles: u64 = cycles.parse().expect("checked");
                let (End::Router(from), End::Router(to)) = (head, body) else {
                    return Err(err(
                        line_no,
                        format!(
                            "a latency ({cycles}) on a node's link: qosnet's node links take \
                             [endpoint] link_latency (give latencies between routers only)"
                        ),
                    ));
                };
                if !(1..=MAX_LATENCY).contains(&cycles) {
                    return Err(err(
                        line_no,
                        format!(
                            "router {from} to router {to}: a latency must be 1..={MAX_LATENCY} cycles, got {cycles}"
                        ),
                    ));
                }
                latency.insert((from, to), cycles as u32);
            }
            let (router, other) = match (head, body) {
                (End::Node(_), End::Node(_)) => {
                    return Err(err(line_no, "a node is connected to a node: nodes join routers".into()))
                }
                (End::Router(r), e) | (e @ End::Node(_), End::Router(r)) => (r, e),
            };
            routers.insert(router);
            if let End::Router(o) = other {
                if o == router {
                    return Err(err(line_no, format!("router {router} is connected to itself")));
                }
                routers.insert(o);
            }
            if let End::Node(n) = other {
                match node_router.get(&n) {
                    Some(&(r, _)) if r != router => {
                        return Err(err(
                            line_no,
                            format!("node {n} is connected to routers {r} and {router}: a node joins one"),
                        ))
                    }
                    Some(_) => continue, // (the same connection written again)
                    None => {
                        node_router.insert(n, (router, line_no));
                    }
                }
            }
            let new = match other {
                End::Router(o) => joined.insert((router.min(o), router.max(o))),
                End::Node(_) => true,
            };
            if new {
                links.push((router, other));
            }
        }
    }
    if node_router.is_empty() {
        return Err(ConfigError::new("topology.file", format!("{shown}: no node is connected to a router")));
    }
    let nodes = node_router.len();
    if let Some((&n, _)) =
        node_router.iter().enumerate().find(|(i, (&n, _))| n as usize != *i).map(|(_, x)| x)
    {
        let missing = (0..nodes as u32).find(|i| !node_router.contains_key(i)).unwrap_or(0);
        return Err(ConfigError::new(
            "topology.file",
            format!(
                "{shown}: nodes are the terminals 0 to N-1, each connected once; node {missing} is \
                 missing (and node {n} is beyond the {nodes} nodes)"
            ),
        ));
    }
    // Routers in increasing number; ports in the order the connections were written.
    let index: BTreeMap<u32, usize> = routers.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    let mut ports_of = vec![Vec::new(); index.len()];
    for &(r, other) in &links {
        ports_of[index[&r]].push(other);
        if let End::Router(o) = other {
            ports_of[index[&o]].push(End::Router(r));
        }
    }
    let ports = ports_of.iter().map(Vec::len).max().unwrap_or(0);
    if ports > u8::MAX as usize - 1 {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: a router has {ports} connections; at most {} are supported", u8::MAX - 1),
        ));
    }
    let mut peer = vec![Peer::None; index.len() * ports];
    for (ri, (&r, ends)) in routers.iter().zip(&ports_of).enumerate() {
        for (p, &e) in ends.iter().enumerate() {
            peer[ri * ports + p] = match e {
                End::Node(n) => Peer::Endpoint { node: NodeId(n) },
                End::Router(o) => {
                    let oi = index[&o];
                    // (its port back: where router r stands among o's ends)
                    let back = ports_of[oi].iter().position(|&x| x == End::Router(r)).expect("both sides");
                    Peer::Router { router: RouterId(oi as u32), port: back as u32 }
                }
            };
        }
    }
    let mut t =
        Topology::from_parts(Shape::Fabric { routes: Vec::new(), lmc: None }, index.len(), ports, peer);
    if !latency.is_empty() {
        // (each channel's own latency, from the router its port belongs to)
        let numbers: Vec<u32> = routers.iter().copied().collect();
        t.link_cycles = (0..t.routers * ports)
            .map(|i| match t.peer[i] {
                Peer::Router { router: o, .. } => {
                    latency.get(&(numbers[i / ports], numbers[o.index()])).copied().unwrap_or(0)
                }
                _ => 0,
            })
            .collect();
    }
    let routes = ib_fabric::minimal_routes(&t);
    if let Some(d) =
        (0..t.nodes).find(|&d| (0..t.routers).any(|r| routes[r * t.nodes + d] == ib_fabric::NO_ROUTE))
    {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: node {d} cannot be reached from every router (the network is not connected)"),
        ));
    }
    t.shape = Shape::Fabric { routes, lmc: None };
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BookSim2's own example (`src/examples/anynet/anynet_file`): three routers in a
    /// triangle, three nodes each.
    const EXAMPLE: &str = "router 0 node 0 node 1 node 2 router 1\n\
                           router 1 node 3 node 4 node 5\n\
                           router 2 node 6 node 7 node 8 router 1 router 0\n";

    #[test]
    fn booksim2s_example_reads_as_three_routers_in_a_triangle() {
        let t = build(EXAMPLE, "anynet_file").unwrap();
        assert_eq!((t.routers, t.nodes, t.ports), (3, 9, 5));
        // router 0: nodes 0-2, then router 1, then router 2 (written on router 2's line)
        assert_eq!(t.peer(0, 0), Peer::Endpoint { node: NodeId(0) });
        assert_eq!(t.peer(0, 3), Peer::Router { router: RouterId(1), port: 0 });
        assert_eq!(t.peer(0, 4), Peer::Router { router: RouterId(2), port: 4 });
        // router 1: router 0 (written on line 1), nodes 3-5 (line 2), router 2 (line 3)
        assert_eq!(t.peer(1, 0), Peer::Router { router: RouterId(0), port: 3 });
        assert_eq!(t.peer(1, 1), Peer::Endpoint { node: NodeId(3) });
        assert_eq!(t.peer(2, 3), Peer::Router { router: RouterId(1), port: 4 });
        assert_eq!(t.attach[7], (RouterId(2), 1));
        // every pair one hop between routers at most: node 0 -> node 7 through router 2
        let Shape::Fabric { routes, .. } = &t.shape else { panic!() };
        assert_eq!(routes[7], 4, "router 0 sends node 7's packets to router 2");
        assert_eq!(routes[2 * 9 + 7], 1, "router 2 ejects to node 7");
    }

    #[test]
    fn a_number_after_a_connection_between_routers_is_its_latency_one_way() {
        // BookSim2's anynet.cpp: 0 -> 1 takes 15 cycles, 1 -> 0 what its own line says (7);
        // 1 -> 2 and back take [router] link_latency (0 here: the topology sets none)
        let t =
            build("router 0 node 0 router 1 15\nrouter 1 node 1 router 0 7 router 2\nrouter 2 node 2", "f")
                .unwrap();
        let at = |r: usize, to: u32| {
            let p =
                (0..t.ports).find(|&p| matches!(t.peer(r, p), Peer::Router { router, .. } if router.0 == to));
            t.link_cycles[r * t.ports + p.unwrap()]
        };
        assert_eq!((at(0, 1), at(1, 0), at(1, 2), at(2, 1)), (15, 7, 0, 0));
        assert_eq!(t.longest_link(), 15);
        // without numbers the topology sets no latency
        assert!(build(EXAMPLE, "f").unwrap().link_cycles.is_empty());
    }

    #[test]
    fn bad_files_name_the_line_and_what_is_wrong() {
        let e = |text: &str| build(text, "f").unwrap_err().to_string();
        assert!(e("router 0 node 0 node 0 node 1\nrouter 1 node 0")
            .contains("line 2: node 0 is connected to routers 0 and 1"));
        assert!(e("node 0 node 1").contains("line 1: a node is connected to a node"));
        assert!(e("router 0 node 0 5 router 1").contains("line 1: a latency (5) on a node's link"));
        assert!(e("router 0 node 0 router 1 0\nrouter 1 node 1").contains("must be 1..=10000 cycles, got 0"));
        assert!(e("router 0 node 0 router 1 3 4\nrouter 1 node 1")
            .contains("\"4\" is neither `router` nor `node` (a latency follows a connection, once)"));
        assert!(e("router 0 node 0 switch 2").contains("\"switch\" is neither"));
        assert!(e("router 0 node x").contains("expected a whole number"));
        assert!(e("router 0 node 0 node 2").contains("node 1 is missing"));
        assert!(e("router 0 node 0\nrouter 1 node 1").contains("not connected"));
        assert!(e("router 0 router 0 node 0").contains("connected to itself"));
        assert!(e("// nothing\n").contains("no node"));
        assert!(e("router 0 node 99999999").contains("numbers go up to"));
    }
}

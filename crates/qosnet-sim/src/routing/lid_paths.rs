//! Several paths per destination from the subnet manager's LIDs (document 002 §3-4, what
//! DRB builds on): with an LMC, the subnet manager gives each CA port 2^LMC LIDs — "permite
//! asignar hasta 2^LMC identificadores locales a cada puerto. Esta multiplicidad de nombres
//! proporciona la manera de establecer múltiples trayectorias" (§3) — and, since the
//! specification gives no algorithm for the paths, the document's subnet manager "genera
//! caminos múltiples y selecciona los disjuntos, para cada par de nodos de la red" by a
//! depth-first search (§4). Switches forward by destination LID (a linear forwarding table
//! per switch), so each LID of a destination is one tree of next hops toward it, and path
//! l of a pair is where LID l's tree leads from the source's switch.
//!
//! The trees, per destination d:
//! - LID 0 is the topology's own deterministic routing (dimension order, the fabric's
//!   tables): the "trayectoria original" of minimal length DRB falls back to (§4).
//! - LID l >= 1: for each source in turn, a depth-first search from its switch toward d,
//!   trying neighbours nearest to d first ("las trayectorias ... deben ser lo más cortas
//!   posible", §4), within `slack` hops of the shortest; it avoids every link the pair's
//!   paths of LIDs below l use (disjoint), and where it reaches a switch that LID l's tree
//!   already routes it follows that entry (one forwarding table per LID). When no disjoint
//!   path fits, the search runs again without disjointness and merges into the tree at
//!   the first switch it can (the pair then shares links between two LIDs;
//!   `LidPaths::shared` counts them).
//!
//! Deadlock. Arbitrary paths on a mesh or torus can close cycles of channel dependencies;
//! so the VCs are split into layers and each path — (source, destination, LID) — is put
//! in the first layer whose channel dependency graph stays acyclic with it (links as
//! channels), as OpenSM's DFSSSP gives each path a service level. A packet enters its
//! path's layer at the first switch (the source's choice of SL, the switches' SL-to-VL
//! mapping) and keeps it to the end, so layers never depend on each other, and acyclic
//! dependency graphs per layer make the routing deadlock free (Dally & Seitz). A path set
//! that needs more layers than there are VCs is refused with the reason: the first path
//! that closes a cycle in every layer. On a torus this replaces the dateline classes: the
//! wrap links' cycles are broken by the layers, which the check proves for each
//! configuration.

use super::{Route, Routing, VcMask};
use crate::topology::{Peer, Topology};

/// No entry in a LID's forwarding table.
const NONE: u8 = u8::MAX;

/// The forwarding tables of every LID and the VC layer of each.
#[derive(Clone, Debug)]
pub struct LidPaths {
    /// LIDs per destination (2^LMC).
    pub paths: u32,
    nodes: usize,
    /// `next[(router * nodes + dst) * paths + lid]`: the output port.
    next: Vec<u8>,
    /// `layer[(src * nodes + dst) * paths + lid]`: the path's VC layer.
    layer: Vec<u8>,
    /// Per (router * ports + port): the node attached there (`u32::MAX`: a switch or
    /// nothing), whose packets enter their path's layer at that port.
    source_at: Vec<u32>,
    /// Per layer: its VCs (VC v is in layer v mod layers).
    layer_vcs: Vec<VcMask>,
    /// Layers used.
    pub layers: u32,
    /// (source, destination, LID) paths that could not avoid the pair's lower LIDs' links.
    pub shared: usize,
}

/// Largest number of switches a search visits for one path before giving up on
/// disjointness (the search is exponential in the slack at worst).
const SEARCH_LIMIT: usize = 200_000;

impl LidPaths {
    /// Path sets of 2^`lmc` LIDs per destination, LID 0 along `base`, the others by DFS
    /// within `slack` hops of the shortest, split over at most `vcs` VC layers.
    pub fn build(topo: &Topology, base: &Routing, lmc: u8, slack: u32, vcs: u32) -> Result<LidPaths, String> {
        let paths = 1u32 << lmc;
        let (nodes, routers, ports) = (topo.nodes, topo.routers, topo.ports);
        let mut next = vec![NONE; routers * nodes * paths as usize];
        let mut shared = 0;
        let mut trees = Vec::with_capacity(nodes * paths as usize);
        for d in 0..nodes {
            let (rd, pd) = topo.attach[d];
            let dist = distances(topo, rd.index());
            let mut lid_trees: Vec<Vec<u8>> = Vec::with_capacity(paths as usize);
            // LID 0: the topology's own routing, from every switch.
            let mut t0 = vec![NONE; routers];
            for (r, e) in t0.iter_mut().enumerate() {
                *e = base.route(topo, r, 0, 0, d, 0, vcs).port as u8;
            }
            t0[rd.index()] = pd as u8;
            lid_trees.push(t0);
            for _ in 1..paths {
                let mut t = vec![NONE; routers];
                t[rd.index()] = pd as u8;
                for s in 0..nodes {
                    let rs = topo.attach[s].0.index();
                    if rs == rd.index() {
                        continue;
                    }
                    // (the ejection link is every path's last: not a link to avoid)
                    let used: Vec<usize> = lid_trees
                        .iter()
                        .filter_map(|lt| chain(topo, lt, rs))
                        .flat_map(|c| c[..c.len() - 1].to_vec())
                        .collect();
                    let budget = dist[rs] + slack as usize;
                    let mut search = Search { topo, dist: &dist, tree: &t, used: &used, budget, steps: 0 };
                    let found = match search.from(rs) {
                        Some(p) => Some(p),
                        None => {
                            shared += 1;
                            search.used = &[];
                            search.budget = usize::MAX;
                            search.steps = 0;
                            search.from(rs)
                        }
                    };
                    let Some(path) = found else {
                        return Err(format!("no path from switch {rs} to node {d}"));
                    };
                    for link in path {
                        let (r, p) = (link / ports, link % ports);
                        if t[r] == NONE {
                            t[r] = p as u8;
                        }
                    }
                }
                lid_trees.push(t);
            }
            for (l, t) in lid_trees.iter().enumerate() {
                for (r, &p) in t.iter().enumerate() {
                    next[(r * nodes + d) * paths as usize + l] = p;
                }
            }
            trees.extend(lid_trees);
        }
        let (layer, layers) = layer(topo, &trees, paths as usize, vcs).map_err(|(src, d, l)| {
            format!(
                "the path sets can deadlock: the path of LID {l} from node {src} to node {d} closes \
                 a cycle of channel dependencies in each of the {vcs} VC layers (router.vcs); use \
                 more VCs, a smaller routing.lmc or routing.slack"
            )
        })?;
        let layer_vcs =
            (0..layers).map(|k| (0..vcs).filter(|v| v % layers == k).fold(0, |m, v| m | 1 << v)).collect();
        let mut source_at = vec![u32::MAX; routers * ports];
        for (n, &(r, p)) in topo.attach.iter().enumerate() {
            source_at[r.index() * ports + p as usize] = n as u32;
        }
        Ok(LidPaths { paths, nodes, next, layer, source_at, layer_vcs, layers, shared })
    }

    /// Route a header at `router`, arrived by `in_port` on `in_vc`, toward `dst` on LID
    /// `lid`: the port of the LID's table, and the VCs of the path's layer (entered at the
    /// source's switch, kept from then on).
    #[inline]
    pub fn route(
        &self,
        router: usize,
        ports: usize,
        in_port: usize,
        in_vc: usize,
        dst: usize,
        lid: u32,
    ) -> Route {
        let paths = self.paths as usize;
        let port = self.next[(router * self.nodes + dst) * paths + lid as usize];
        let port = if port == NONE { u32::MAX } else { port as u32 };
        let src = self.source_at[router * ports + in_port];
        let k = if src != u32::MAX {
            self.layer[(src as usize * self.nodes + dst) * paths + lid as usize] as usize
        } else {
            in_vc % self.layers as usize
        };
        Route { port, vcs: self.layer_vcs[k] }
    }
}

/// Hops from every switch to switch `to` (breadth first over the links between switches).
fn distances(topo: &Topology, to: usize) -> Vec<usize> {
    let mut dist = vec![usize::MAX; topo.routers];
    dist[to] = 0;
    let mut queue = std::collections::VecDeque::from([to]);
    while let Some(r) = queue.pop_front() {
        for p in 0..topo.ports {
            if let Peer::Router { router, .. } = topo.peer(r, p) {
                if dist[router.index()] == usize::MAX {
                    dist[router.index()] = dist[r] + 1;
                    queue.push_back(router.index());
                }
            }
        }
    }
    dist
}

/// The links (`router * ports + port`) LID tree `t` leads through from switch `r` to its
/// destination, or `None` where it has no entry or loops.
fn chain(topo: &Topology, t: &[u8], mut r: usize) -> Option<Vec<usize>> {
    let mut links = Vec::new();
    loop {
        let p = t[r];
        if p == NONE || links.len() > topo.routers {
            return None;
        }
        links.push(r * topo.ports + p as usize);
        match topo.peer(r, p as usize) {
            Peer::Router { router, .. } => r = router.index(),
            Peer::Endpoint { .. } => return Some(links),
            Peer::None => return None,
        }
    }
}

/// One depth-first search for a path to the destination of LID tree `tree`.
struct Search<'a> {
    topo: &'a Topology,
    dist: &'a [usize],
    tree: &'a [u8],
    /// Links the path may not use (the pair's lower LIDs'), sorted or not: few.
    used: &'a [usize],
    /// Most links between switches the path may take.
    budget: usize,
    steps: usize,
}

impl Search<'_> {
    /// A path from switch `from`: its links, the last one into the destination node.
    fn from(&mut self, from: usize) -> Option<Vec<usize>> {
        let mut path = Vec::new();
        let mut on_path = vec![false; self.topo.routers];
        on_path[from] = true;
        self.extend(from, &mut path, &mut on_path).then_some(path)
    }

    fn extend(&mut self, r: usize, path: &mut Vec<usize>, on_path: &mut [bool]) -> bool {
        self.steps += 1;
        if self.steps > SEARCH_LIMIT {
            return false;
        }
        let ports = self.topo.ports;
        if self.tree[r] != NONE {
            // Switch r forwards this LID already: the rest of the way is its tree's.
            let Some(rest) = chain(self.topo, self.tree, r) else { return false };
            let hops = rest.len() - 1;
            let fits = path.len() + hops <= self.budget
                && rest.iter().all(|l| !self.used.contains(l))
                && rest[..hops].iter().all(|&l| match self.topo.peer(l / ports, l % ports) {
                    Peer::Router { router, .. } => !on_path[router.index()],
                    _ => true,
                });
            if fits {
                path.extend(rest);
            }
            return fits;
        }
        // Nearest to the destination first; ties by port number.
        let mut options: Vec<(usize, usize, usize)> = (0..ports)
            .filter_map(|p| match self.topo.peer(r, p) {
                Peer::Router { router, .. } => Some((self.dist[router.index()], p, router.index())),
                _ => None,
            })
            .filter(|&(d, p, n)| {
                d != usize::MAX
                    && !on_path[n]
                    && !self.used.contains(&(r * ports + p))
                    && path.len() + 1 + d <= self.budget
            })
            .collect();
        options.sort_unstable();
        for (_, p, n) in options {
            path.push(r * ports + p);
            on_path[n] = true;
            if self.extend(n, path, on_path) {
                return true;
            }
            on_path[n] = false;
            path.pop();
        }
        false
    }
}

/// Each path's VC layer (`[(src * nodes + dst) * paths + lid]`), the first whose channel
/// dependency graph stays acyclic with it, and the layers used; or the (source,
/// destination, LID) of a path no layer takes. `trees[d * paths + l]` is LID l's table
/// toward node d.
fn layer(
    topo: &Topology,
    trees: &[Vec<u8>],
    paths: usize,
    vcs: u32,
) -> Result<(Vec<u8>, u32), (usize, usize, usize)> {
    let (nodes, links) = (topo.nodes, topo.routers * topo.ports);
    let mut graphs: Vec<Vec<Vec<usize>>> = Vec::new();
    let mut layer_of = vec![0u8; nodes * nodes * paths];
    let mut seen = vec![0u32; links];
    let mut mark = 0u32;
    // (LID by LID: every pair's original path first, so the alternatives fit around them)
    for l in 0..paths {
        for s in 0..nodes {
            let rs = topo.attach[s].0.index();
            for d in (0..nodes).filter(|&d| d != s) {
                let Some(path) = chain(topo, &trees[d * paths + l], rs) else {
                    return Err((s, d, l));
                };
                let mut placed = None;
                for k in 0..vcs as usize {
                    if k == graphs.len() {
                        graphs.push(vec![Vec::new(); links]);
                    }
                    let g = &mut graphs[k];
                    let mut added = Vec::new();
                    let mut cycle = false;
                    for w in path.windows(2) {
                        let (a, b) = (w[0], w[1]);
                        if g[a].contains(&b) {
                            continue;
                        }
                        // (a -> b closes a cycle when b already reaches a)
                        mark += 1;
                        if reaches(g, b, a, &mut seen, mark) {
                            cycle = true;
                            break;
                        }
                        g[a].push(b);
                        added.push(a);
                    }
                    if !cycle {
                        placed = Some(k as u8);
                        break;
                    }
                    for &a in added.iter().rev() {
                        g[a].pop();
                    }
                }
                match placed {
                    Some(k) => layer_of[(s * nodes + d) * paths + l] = k,
                    None => return Err((s, d, l)),
                }
            }
        }
    }
    Ok((layer_of, graphs.len().max(1) as u32))
}

/// Whether `to` can be reached from `from` in `g` (`seen[v] == mark`: visited this time).
fn reaches(g: &[Vec<usize>], from: usize, to: usize, seen: &mut [u32], mark: u32) -> bool {
    let mut stack = vec![from];
    seen[from] = mark;
    while let Some(v) = stack.pop() {
        if v == to {
            return true;
        }
        for &b in &g[v] {
            if seen[b] != mark {
                seen[b] = mark;
                stack.push(b);
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RoutingKind, TopologyConfig};
    use crate::ids::{NodeId, RouterId};
    use crate::topology::mesh::{minus_port, plus_port, EJECT_PORT};

    fn torus(k: u32) -> Topology {
        Topology::build(&TopologyConfig::Torus { k: Some(k), n: Some(2), dims: None }).unwrap()
    }

    fn lids(topo: &Topology, lmc: u8, slack: u32, vcs: u32) -> Result<Routing, crate::error::ConfigError> {
        Routing::build(RoutingKind::Auto, topo, vcs)?.with_lids(topo, lmc, slack, vcs)?.with_paths(1 << lmc)
    }

    fn hops(r: &Routing, topo: &Topology, s: u32, d: u32, lid: u32) -> Vec<(RouterId, u32)> {
        r.walk(topo, 3, NodeId(s), NodeId(d), lid).unwrap()
    }

    /// On a 4x4 torus (router x + 4y), the two LIDs of a pair worked by hand: LID 0 is
    /// dimension order; the search for LID 1 may not reuse LID 0's links and tries the
    /// neighbours nearest the destination first.
    #[test]
    fn dfs_finds_disjoint_paths_on_a_4x4_torus() {
        let t = torus(4);
        let r = lids(&t, 1, 2, 3).unwrap();
        let (px, mx, py) = (plus_port(0) as u32, minus_port(0) as u32, plus_port(1) as u32);
        let e = EJECT_PORT as u32;
        // (0,0) -> (1,1): x first, then y; LID 1 may not leave by +x, so +y (as near as
        // +x: one hop from (1,1)) and then +x.
        assert_eq!(hops(&r, &t, 0, 5, 0), [(RouterId(0), px), (RouterId(1), py), (RouterId(5), e)]);
        assert_eq!(hops(&r, &t, 0, 5, 1), [(RouterId(0), py), (RouterId(4), px), (RouterId(5), e)]);
        // (0,0) -> (2,0), half the ring: dimension order goes + from an even x; LID 1 the
        // other way round, through (3,0).
        assert_eq!(hops(&r, &t, 0, 2, 0), [(RouterId(0), px), (RouterId(1), px), (RouterId(2), e)]);
        assert_eq!(hops(&r, &t, 0, 2, 1), [(RouterId(0), mx), (RouterId(3), mx), (RouterId(2), e)]);
        // Every LID of every pair arrives. One table per LID means a pair's path merges
        // into the LID's tree where another source's path made it already, so some pairs
        // cannot have disjoint paths; those are counted (`shared`), and every other pair's
        // LID 1 path is disjoint from its LID 0 path and within the slack.
        let Routing::Lids { table, .. } = &r else { panic!() };
        let mut overlapping = 0;
        for s in 0..16 {
            for d in (0..16).filter(|&d| d != s) {
                let (a, b) = (hops(&r, &t, s, d, 0), hops(&r, &t, s, d, 1));
                let inner = |h: &[(RouterId, u32)]| h[..h.len() - 1].to_vec();
                if inner(&a).iter().any(|l| inner(&b).contains(l)) {
                    overlapping += 1;
                } else {
                    assert!(b.len() <= a.len() + 2, "{s}->{d}: {a:?} {b:?}");
                }
            }
        }
        assert!(overlapping <= table.shared, "{overlapping} pairs overlap, {} counted", table.shared);
        assert!(table.shared * 3 < 240, "most of the 240 pairs have disjoint paths: {}", table.shared);
    }

    #[test]
    fn path_sets_that_could_deadlock_are_refused() {
        // One VC: a torus ring's channels close a cycle whatever the LIDs do.
        let t = torus(4);
        let dor = Routing::build(RoutingKind::Dor, &t, 1).unwrap();
        let e = dor.with_lids(&t, 1, 2, 1).unwrap_err().to_string();
        assert!(e.contains("routing.lmc") && e.contains("deadlock") && e.contains("1 VC layers"), "{e}");
        // With VCs enough, every layer's channel dependency graph is acyclic.
        let r = lids(&torus(4), 1, 2, 3).unwrap();
        let Routing::Lids { table, .. } = &r else { panic!() };
        assert!(table.layers >= 2 && table.layers <= 3, "{}", table.layers);
        // A mesh's dimension order and its disjoint alternatives.
        let mesh =
            Topology::build(&TopologyConfig::Mesh { k: None, n: None, dims: Some(vec![8, 4]) }).unwrap();
        assert!(lids(&mesh, 2, 2, 3).is_ok());
    }

    #[test]
    fn bad_lmc_and_slack_are_named() {
        let t = torus(4);
        let e = lids(&t, 8, 2, 3).unwrap_err().to_string();
        assert!(e.contains("routing.lmc") && e.contains("0..=7") && e.contains("got 8"), "{e}");
        let e = lids(&t, 1, 65, 3).unwrap_err().to_string();
        assert!(e.contains("routing.slack") && e.contains("got 65"), "{e}");
        let tree = Topology::build(&TopologyConfig::FatTree { k: 4, n: 2 }).unwrap();
        let e = lids(&tree, 1, 2, 3).unwrap_err().to_string();
        assert!(e.contains("routing.lmc") && e.contains("fat_tree"), "{e}");
        let e = lids(&t, 1, 2, 3).unwrap().with_paths(3).unwrap_err().to_string();
        assert!(e.contains("routing.multipath.paths") && e.contains("1..=2"), "{e}");
    }
}

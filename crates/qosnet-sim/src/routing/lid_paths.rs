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
//! Deadlock. Arbitrary paths can close cycles of channel dependencies, so the path sets
//! are built so that a channel dependency graph over (link, VC class) is acyclic, and
//! that graph is checked (Dally & Seitz: acyclic means deadlock free); a path set that
//! fails is refused with the reason.
//! - On a 2-D mesh or torus (`Moves`), the dateline scheme generalised to every path: a
//!   hop's VC class is the number of wrap-around links the path has crossed, that one
//!   included, so a ring's cycle is cut where it wraps, as by Dally & Seitz's dateline
//!   (document 002's switches have 3 VCs: classes 0, 1, 2, enough for the two wraps a
//!   minimal 2-D path makes); the search takes no path with more wraps than classes. A
//!   class's channels other than the wrap links (which only a lower class leads into)
//!   form a mesh, where the search keeps to west-first turns (Glass & Ni's turn model: no
//!   turn into -x after another direction), which leave that mesh no cycle. Dimension
//!   order (LID 0) is west-first.
//!   That scheme gives every hop one VC when there are 3 (VC k carries the hops after
//!   k wraps, so most hops share VC 0), where the base routing's dateline gives a packet
//!   half of them; it cost the 8x8 torus 3-9% of its saturation throughput with one path
//!   and twice the cost of CNP traffic (issue 36's decomposition). So on a torus the
//!   paths first try the base routing's own classes, per run: a run (consecutive hops in
//!   one dimension and direction) takes the dateline class BookSim2's dateline gives it
//!   on entering the dimension — going +, upper if the run wraps; going -, upper if it
//!   does not — and keeps it through the run; the classes are two layers of the VCs (VCs
//!   0, 2, .. and 1, 3, ..). Where that class graph is not proved acyclic (a run longer
//!   than half the ring can close a class's ring), the wrap-count classes above are used.
//! - On a fabric (or other grids), the VCs are split into layers and each path — (source,
//!   destination, LID) — goes in the first layer whose dependency graph stays acyclic with
//!   it, as OpenSM's DFSSSP gives each path a service level; the packet enters its layer
//!   at the source's switch and keeps it.
//! - Or, with `[routing] lid_vcs = "escape"`, an escape VC in the style of Duato's protocol
//!   instead of classes per path: within each traffic class's VCs, the first (mesh,
//!   fabric) or first two (torus: the dateline pair) carry LID 0's routing, dimension
//!   order with its dateline classes on a torus, and the others carry every LID's path
//!   freely, in any turn. A header on an adaptive VC may take the escape at any hop (the
//!   VC allocator offers it where the path's VCs are all taken) and keeps to it from
//!   there. The escape channels only wait on escape channels, and their dependency graph
//!   — LID 0's way from every switch, as a header entering there would take it — is
//!   checked acyclic, so they always drain and every header blocked on an adaptive VC
//!   eventually gets one (Duato 1993's sufficient condition with the escape kept once
//!   taken). It gives the alternative paths the VCs the layers took from them: with 3
//!   VCs on a torus, LID 0's hops two VCs and the others one adaptive VC plus the
//!   escape, where the wrap-count classes gave most hops one.

use super::{Route, Routing, VcMask};
use crate::topology::mesh::{coord, minus_port, plus_port};
use crate::topology::{Peer, Shape, Topology};

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
    /// `layer[(src * nodes + dst) * paths + lid]`: the path's VC layer (layer scheme;
    /// empty on a grid).
    layer: Vec<u8>,
    /// Per (router * ports + port): whether the link wraps around a torus ring (grid
    /// scheme: the class rises by one on it; empty for the layer scheme).
    wraps: Vec<bool>,
    /// Dateline scheme (torus, `dateline` non-empty): per `(router * nodes + dst) * paths
    /// + lid`, whether a run entering its dimension there takes the upper class; and per
    /// (router * ports + port) the dimension of the port's link (`NO_DIR` for a node's).
    pub(crate) dateline: Vec<bool>,
    port_dim: Vec<u8>,
    /// Per (router * ports + port): the node attached there (`u32::MAX`: a switch or
    /// nothing), whose packets enter their path's layer at that port.
    source_at: Vec<u32>,
    /// Per class (layer, or wraps crossed): its VCs (VC v is in class v mod classes).
    class_vcs: Vec<VcMask>,
    /// VC classes used (escape mode: the escape classes and the adaptive one).
    pub layers: u32,
    /// Escape mode (`LidVcs::Escape`): the escape classes at the bottom of each traffic
    /// class's VCs (1 on a mesh or fabric, 2 on a torus); 0 for the layer schemes.
    pub(crate) escape: u32,
    /// The VCs per port (`route` without a traffic class takes them all).
    vcs: u32,
    /// (source, destination, LID) paths that could not avoid the pair's lower LIDs' links.
    pub shared: usize,
}

/// Largest number of switches a search visits for one path before giving up on
/// disjointness (the search is exponential in the slack at worst).
const SEARCH_LIMIT: usize = 200_000;

/// Most alternative paths (source, destination, LID >= 1) built: each is a depth-first
/// search, 10-100 us apiece on the networks measured (a 16x16 mesh with LMC 2, 196k paths,
/// 7 s; a 24x24 one, 1.3M paths, 71 s; an 8x128 one, 3.1M paths, 394 s), so past this a
/// configuration is refused with the count rather than left to run for minutes inside
/// `validate`. Document 002's 64-node torus with LMC 2 builds 12k; the 281-node Avakas
/// fabric 237k.
pub const MAX_LID_SEARCHES: u128 = 1_000_000;

/// The alternative paths a LID path set over `nodes` nodes with LMC `lmc` builds.
pub fn lid_searches(nodes: u128, lmc: u8) -> u128 {
    nodes.saturating_mul(nodes.saturating_sub(1)).saturating_mul((1u128 << lmc.min(7)) - 1)
}

impl LidPaths {
    /// Path sets of 2^`lmc` LIDs per destination, LID 0 along `base`, the others by DFS
    /// within `slack` hops of the shortest, split over at most `vcs` VC layers — or, with
    /// `escape`, free on the VCs above LID 0's escape classes (module comment).
    pub fn build(
        topo: &Topology,
        base: &Routing,
        lmc: u8,
        slack: u32,
        vcs: u32,
        escape: bool,
    ) -> Result<LidPaths, String> {
        let paths = 1u32 << lmc;
        let (nodes, routers, ports) = (topo.nodes, topo.routers, topo.ports);
        let searches = lid_searches(nodes as u128, lmc);
        if searches > MAX_LID_SEARCHES {
            return Err(format!(
                "{} LIDs per node on {nodes} nodes means {searches} alternative paths to search                  (each pair of nodes, each LID above 0); at most {MAX_LID_SEARCHES} are built                  (about a minute): use a smaller routing.lmc or a smaller network",
                paths
            ));
        }
        let moves = Moves::of(topo, vcs);
        let torus = matches!(topo.shape, Shape::Torus { .. });
        if escape && moves.is_none() && !matches!(topo.shape, Shape::Fabric { .. }) {
            return Err(format!(
                "lid_vcs = \"escape\" applies to a 2-D mesh or torus or an ib_fabric, not this {}",
                topo.shape.name()
            ));
        }
        // (the escape keeps deadlock away: the alternative paths may take any turn)
        let search_moves = if escape { None } else { moves.as_ref() };
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
                    let mut search = Search {
                        topo,
                        moves: search_moves,
                        dist: &dist,
                        tree: &t,
                        used: &used,
                        budget,
                        steps: 0,
                    };
                    // (no disjoint path within the slack: share links, but stay within the
                    // slack first — "lo más cortas posible", §4 — and only where no path
                    // fits it either take any length; a fallback of any length straight
                    // away made 8x8-torus paths at slack 0 so long that four paths in turn
                    // accepted 42% less than one, issue 36)
                    let found = search.from(rs).or_else(|| {
                        shared += 1;
                        search.used = &[];
                        search.steps = 0;
                        search.from(rs).or_else(|| {
                            search.budget = usize::MAX;
                            search.steps = 0;
                            search.from(rs)
                        })
                    });
                    let Some(path) = found else {
                        return Err(format!(
                            "no path of LID {} from switch {rs} to node {d} fits the deadlock-free \
                             moves (at most {} wrap-around links, west-first turns); use more VCs \
                             (router.vcs) or a smaller routing.lmc",
                            lid_trees.len(),
                            search_moves.map_or(0, |m| m.classes - 1)
                        ));
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
        let escape_classes = match escape {
            false => 0,
            true if torus => 2,
            true => 1,
        };
        let dateline = if escape {
            // LID 0's dateline classes on a torus (used for it alone), and the escape's proof
            let m = moves.as_ref().filter(|_| torus);
            let upper = m.map(|m| dateline_entries(topo, m, &trees, paths as usize)).unwrap_or_default();
            if !check_escape(topo, m, &trees, paths as usize, &upper) {
                return Err("the escape routing (LID 0's) can deadlock: its channel dependencies \
                            from every switch close a cycle; use lid_vcs = \"layers\""
                    .to_string());
            }
            m.map(|_| upper)
        } else {
            moves.as_ref().filter(|m| m.classes > 1 && vcs >= 2).and_then(|m| {
                let upper = dateline_entries(topo, m, &trees, paths as usize);
                check_dateline(topo, m, &trees, paths as usize, &upper).then_some(upper)
            })
        };
        let port_dim = match (&moves, &dateline) {
            (Some(m), Some(_)) => {
                m.hops.iter().map(|h| if h.0 == NO_DIR { NO_DIR } else { h.0 / 2 }).collect()
            }
            _ => Vec::new(),
        };
        let (layer, layers, wraps) = match &moves {
            _ if escape => (Vec::new(), escape_classes + 1, Vec::new()),
            Some(_) if dateline.is_some() => (Vec::new(), 2, Vec::new()),
            Some(m) => {
                check_classes(topo, m, &trees, paths as usize).map_err(|(src, d, l, wraps)| {
                    let why = if wraps {
                        format!(
                            "crosses more wrap-around links than the {} VC classes (router.vcs) \
                             can tell apart (a torus needs 3 VCs)",
                            m.classes
                        )
                    } else {
                        format!("closes a cycle of channel dependencies over the {} VC classes", m.classes)
                    };
                    format!(
                        "the path sets can deadlock: the path of LID {l} from node {src} to node {d} {why}"
                    )
                })?;
                (Vec::new(), m.classes, m.hops.iter().map(|h| h.1).collect())
            }
            None => {
                let (layer, layers) = layer(topo, &trees, paths as usize, vcs).map_err(|(src, d, l)| {
                    format!(
                        "the path sets can deadlock: the path of LID {l} from node {src} to node {d} \
                         closes a cycle of channel dependencies in each of the {vcs} VC layers \
                         (router.vcs); use more VCs, a smaller routing.lmc or routing.slack"
                    )
                })?;
                (layer, layers, Vec::new())
            }
        };
        let class_vcs =
            (0..layers).map(|k| (0..vcs).filter(|v| v % layers == k).fold(0, |m, v| m | 1 << v)).collect();
        let mut source_at = vec![u32::MAX; routers * ports];
        for (n, &(r, p)) in topo.attach.iter().enumerate() {
            source_at[r.index() * ports + p as usize] = n as u32;
        }
        let dateline = dateline.unwrap_or_default();
        Ok(LidPaths {
            paths,
            nodes,
            next,
            layer,
            wraps,
            dateline,
            port_dim,
            source_at,
            class_vcs,
            layers,
            escape: escape_classes,
            vcs,
            shared,
        })
    }

    /// Escape mode (`LidVcs::Escape`, module comment): the route of a header arrived on the
    /// `in_rank`-th VC of its traffic class's `class_size`, with VCs as masks over the
    /// class's VCs by rank: its LID's way on the adaptive VCs (ranks from `escape` on), and
    /// LID 0's way on its escape class, which the VC allocator takes only where no adaptive
    /// VC is free (Duato's protocol prefers the adaptive channels). A header of LID 1 and up
    /// that arrived on an escape VC keeps to LID 0's way; one of LID 0 may come back to the
    /// adaptive VCs, whose way is the escape's own (dimension order from here is the rest
    /// of dimension order from where it took the escape, so no dependency between escape
    /// channels appears that dimension order lacks, beyond a run's upper dateline class
    /// leading to its lower one). The ejection takes every VC.
    #[inline]
    #[allow(clippy::too_many_arguments)] // `route`'s, and the class's size
    pub(crate) fn route_escape(
        &self,
        router: usize,
        ports: usize,
        in_port: usize,
        in_rank: u32,
        dst: usize,
        lid: u32,
        class_size: u32,
    ) -> super::Ways {
        let i = (router * self.nodes + dst) * self.paths as usize;
        let port_of = |p: u8| if p == NONE { u32::MAX } else { p as u32 };
        let (port, esc_port) = (port_of(self.next[i + lid as usize]), port_of(self.next[i]));
        let all = super::all_vcs(class_size);
        let dim = |p: u32| if p == u32::MAX { NO_DIR } else { self.port_dim[router * ports + p as usize] };
        if esc_port != u32::MAX && self.source_at[router * ports + esc_port as usize] == dst as u32 {
            return super::Ways { first: Route { port: esc_port, vcs: all }, second: None, escape: None };
        }
        let on_escape = self.source_at[router * ports + in_port] == u32::MAX && in_rank < self.escape;
        // LID 0's class: one on a mesh or fabric; on a torus the dateline's, kept through a
        // run a header on the escape continues, else taken afresh as it enters here
        let class = if self.escape < 2 {
            0
        } else if on_escape && dim(in_port as u32) == dim(esc_port) {
            in_rank
        } else {
            self.dateline[i] as u32
        };
        let escape = Route { port: esc_port, vcs: 1 << class };
        if on_escape && lid != 0 {
            return super::Ways { first: escape, second: None, escape: None };
        }
        let first = Route { port, vcs: all & !super::all_vcs(self.escape) };
        super::Ways { first, second: None, escape: Some(escape) }
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
        if self.escape > 0 {
            return self.route_escape(router, ports, in_port, in_vc as u32, dst, lid, self.vcs).first;
        }
        let paths = self.paths as usize;
        let port = self.next[(router * self.nodes + dst) * paths + lid as usize];
        let port = if port == NONE { u32::MAX } else { port as u32 };
        let src = self.source_at[router * ports + in_port];
        let classes = self.layers as usize;
        let k = if !self.dateline.is_empty() {
            // the run's class: kept while it continues in its dimension, else its entry's
            let dim = |p: usize| self.port_dim[router * ports + p];
            let out_dim = if port == u32::MAX { NO_DIR } else { dim(port as usize) };
            if src == u32::MAX && out_dim != NO_DIR && dim(in_port) == out_dim {
                in_vc % 2
            } else {
                let i = (router * self.nodes + dst) * paths + lid as usize;
                (out_dim != NO_DIR && self.dateline[i]) as usize
            }
        } else if self.wraps.is_empty() {
            // the layer of the path, entered at the source's switch
            if src != u32::MAX {
                self.layer[(src as usize * self.nodes + dst) * paths + lid as usize] as usize
            } else {
                in_vc % classes
            }
        } else {
            // wraps crossed so far, this hop's included
            let before = if src != u32::MAX { 0 } else { in_vc % classes };
            let here = port != u32::MAX && self.wraps[router * ports + port as usize];
            (before + here as usize).min(classes - 1)
        };
        Route { port, vcs: self.class_vcs[k] }
    }
}

/// The deadlock-free moves on a 2-D mesh or torus (module comment): per link its
/// direction and whether it wraps, and how many VC classes (wraps + 1) there are.
struct Moves {
    /// Per (router * ports + port): (dimension * 2 + 1 if going +, wraps), `NO_DIR` for a
    /// link to a node or nothing.
    hops: Vec<(u8, bool)>,
    classes: u32,
}

const NO_DIR: u8 = u8::MAX;
/// Going -x: the turn west-first allows only first.
const WEST: u8 = 0;

impl Moves {
    /// The moves of a 2-D mesh or torus with `vcs` VCs (None for other shapes).
    fn of(topo: &Topology, vcs: u32) -> Option<Moves> {
        let (dims, torus) = match &topo.shape {
            Shape::Mesh { dims } => (dims, false),
            Shape::Torus { dims } => (dims, true),
            _ => return None,
        };
        if dims.len() != 2 {
            return None;
        }
        let mut hops = vec![(NO_DIR, false); topo.routers * topo.ports];
        for r in 0..topo.routers {
            for d in 0..2 {
                let c = coord(dims, r, d);
                let k = dims[d];
                for (p, plus) in [(minus_port(d), false), (plus_port(d), true)] {
                    if let Peer::Router { .. } = topo.peer(r, p) {
                        let wraps = torus && if plus { c == k - 1 } else { c == 0 };
                        hops[r * topo.ports + p] = ((d * 2 + plus as usize) as u8, wraps);
                    }
                }
            }
        }
        // a mesh has one class; a 2-D torus's minimal paths wrap at most twice
        let classes = if torus { vcs.min(3) } else { 1 };
        Some(Moves { hops, classes })
    }

    /// The wraps after taking link `next` with `wraps` crossed and `last` the link taken
    /// before (None at the source), or None where the move is not allowed.
    fn step(&self, last: Option<usize>, next: usize, wraps: u32) -> Option<u32> {
        let (dir, wrap) = self.hops[next];
        if dir == NO_DIR {
            return Some(wraps); // the ejection
        }
        let wraps = wraps + wrap as u32;
        if wraps >= self.classes {
            return None;
        }
        if let Some(l) = last {
            let (ldir, lwrap) = self.hops[l];
            // west-first between two links of one class's mesh
            if !lwrap && !wrap && dir == WEST && ldir != WEST {
                return None;
            }
        }
        Some(wraps)
    }
}

/// The grid scheme's check: every path's hops as (link, class) channels, their
/// dependencies one graph, which must be acyclic; else the (source, destination, LID) of
/// a path on a cycle's first closing.
fn check_classes(
    topo: &Topology,
    m: &Moves,
    trees: &[Vec<u8>],
    paths: usize,
) -> Result<(), (usize, usize, usize, bool)> {
    let classes = m.classes as usize;
    let mut g: Vec<Vec<usize>> = vec![Vec::new(); topo.routers * topo.ports * classes];
    let mut owner = Vec::new();
    for s in 0..topo.nodes {
        let rs = topo.attach[s].0.index();
        for d in (0..topo.nodes).filter(|&d| d != s) {
            for l in 0..paths {
                let path = chain(topo, &trees[d * paths + l], rs).ok_or((s, d, l, false))?;
                let mut wraps = 0usize;
                let mut prev: Option<usize> = None;
                for &link in &path {
                    wraps += m.hops[link].1 as usize;
                    if wraps >= classes {
                        return Err((s, d, l, true));
                    }
                    let ch = link * classes + wraps;
                    if let Some(p) = prev {
                        if !g[p].contains(&ch) {
                            g[p].push(ch);
                            owner.push((s, d, l, false));
                        }
                    }
                    prev = Some(ch);
                }
            }
        }
    }
    if acyclic(&g) {
        Ok(())
    } else {
        Err(*owner.last().unwrap_or(&(0, 0, 0, false)))
    }
}

/// The dateline scheme's entry classes (module comment): per `(router * nodes + dst) *
/// paths + lid`, whether a run that enters its dimension at `router` on LID `lid`'s tree
/// toward `dst` takes the upper class: going +, when the run crosses the wrap link; going
/// -, when it does not (BookSim2's `dor_next_torus`, run by run).
fn dateline_entries(topo: &Topology, m: &Moves, trees: &[Vec<u8>], paths: usize) -> Vec<bool> {
    let (nodes, ports) = (topo.nodes, topo.ports);
    let mut upper = vec![false; topo.routers * nodes * paths];
    for d in 0..nodes {
        for l in 0..paths {
            let t = &trees[d * paths + l];
            for r in 0..topo.routers {
                let Some(links) = chain(topo, t, r) else { continue };
                let dir = m.hops[links[0]].0;
                if dir == NO_DIR {
                    continue;
                }
                let wraps = links.iter().take_while(|&&k| m.hops[k].0 == dir).any(|&k| m.hops[k].1);
                let plus = dir % 2 == 1;
                upper[(r * nodes + d) * paths + l] = if plus { wraps } else { !wraps };
            }
        }
    }
    let _ = ports;
    upper
}

/// The per-hop classes of the path `links` under the dateline scheme: a run keeps the
/// class it entered with (`upper`, by the router it entered at), the ejection is lower.
fn dateline_classes(
    topo: &Topology,
    m: &Moves,
    links: &[usize],
    d: usize,
    l: usize,
    paths: usize,
    upper: &[bool],
) -> Vec<usize> {
    let mut out = Vec::with_capacity(links.len());
    let mut last: Option<(u8, usize)> = None;
    for &k in links {
        let dir = m.hops[k].0;
        let class = match last {
            _ if dir == NO_DIR => 0,
            Some((ld, c)) if ld == dir => c,
            _ => upper[((k / topo.ports) * topo.nodes + d) * paths + l] as usize,
        };
        out.push(class);
        last = Some((dir, class));
    }
    out
}

/// Whether every path's hops as (link, dateline class) channels form an acyclic
/// dependency graph (Dally & Seitz), the dateline scheme's proof of deadlock freedom.
fn check_dateline(topo: &Topology, m: &Moves, trees: &[Vec<u8>], paths: usize, upper: &[bool]) -> bool {
    let mut g: Vec<Vec<usize>> = vec![Vec::new(); topo.routers * topo.ports * 2];
    for s in 0..topo.nodes {
        let rs = topo.attach[s].0.index();
        for d in (0..topo.nodes).filter(|&d| d != s) {
            for l in 0..paths {
                let Some(path) = chain(topo, &trees[d * paths + l], rs) else { return false };
                let classes = dateline_classes(topo, m, &path, d, l, paths, upper);
                for (w, c) in path.windows(2).zip(classes.windows(2)) {
                    let (a, b) = (w[0] * 2 + c[0], w[1] * 2 + c[1]);
                    if !g[a].contains(&b) {
                        g[a].push(b);
                    }
                }
            }
        }
    }
    acyclic(&g)
}

/// The escape's proof (`LidVcs::Escape`): LID 0's way from every switch — a header may
/// take the escape at any hop — as (link, class) channels, with the dateline classes a
/// header entering there takes on a torus (`m`, `upper`) or one class elsewhere, form an
/// acyclic dependency graph (Dally & Seitz).
fn check_escape(topo: &Topology, m: Option<&Moves>, trees: &[Vec<u8>], paths: usize, upper: &[bool]) -> bool {
    let classes = if m.is_some() { 2 } else { 1 };
    let mut g: Vec<Vec<usize>> = vec![Vec::new(); topo.routers * topo.ports * classes];
    for d in 0..topo.nodes {
        for r in 0..topo.routers {
            let Some(path) = chain(topo, &trees[d * paths], r) else { return false };
            let cls = match m {
                Some(m) => dateline_classes(topo, m, &path, d, 0, paths, upper),
                None => vec![0; path.len()],
            };
            for (w, c) in path.windows(2).zip(cls.windows(2)) {
                let (a, b) = (w[0] * classes + c[0], w[1] * classes + c[1]);
                if !g[a].contains(&b) {
                    g[a].push(b);
                }
            }
        }
    }
    acyclic(&g)
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
    /// The grid's deadlock-free moves (None: any move; the layers keep it safe).
    moves: Option<&'a Moves>,
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
        self.extend(from, &mut path, &mut on_path, 0).then_some(path)
    }

    /// The move onto `next` after the path so far with `wraps` crossed (`Moves::step`).
    fn step(&self, path: &[usize], next: usize, wraps: u32) -> Option<u32> {
        match self.moves {
            Some(m) => m.step(path.last().copied(), next, wraps),
            None => Some(wraps),
        }
    }

    fn extend(&mut self, r: usize, path: &mut Vec<usize>, on_path: &mut [bool], wraps: u32) -> bool {
        self.steps += 1;
        if self.steps > SEARCH_LIMIT {
            return false;
        }
        let ports = self.topo.ports;
        if self.tree[r] != NONE {
            // Switch r forwards this LID already: the rest of the way is its tree's.
            let Some(rest) = chain(self.topo, self.tree, r) else { return false };
            let hops = rest.len() - 1;
            let mut w = Some(wraps);
            let mut last = path.last().copied();
            for &l in &rest {
                w = w.and_then(|w| match self.moves {
                    Some(m) => m.step(last, l, w),
                    None => Some(w),
                });
                last = Some(l);
            }
            let fits = w.is_some()
                && path.len() + hops <= self.budget
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
            let Some(w) = self.step(path, r * ports + p, wraps) else { continue };
            path.push(r * ports + p);
            on_path[n] = true;
            if self.extend(n, path, on_path, w) {
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

/// Whether a directed graph (adjacency lists) has no cycle (Kahn's algorithm).
fn acyclic(g: &[Vec<usize>]) -> bool {
    let mut indegree = vec![0u32; g.len()];
    for outs in g {
        for &b in outs {
            indegree[b] += 1;
        }
    }
    let mut ready: Vec<usize> = (0..g.len()).filter(|&v| indegree[v] == 0).collect();
    let mut seen = 0;
    while let Some(v) = ready.pop() {
        seen += 1;
        for &b in &g[v] {
            indegree[b] -= 1;
            if indegree[b] == 0 {
                ready.push(b);
            }
        }
    }
    seen == g.len()
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
    use crate::config::{LidVcs, RoutingKind, TopologyConfig};
    use crate::ids::{NodeId, RouterId};
    use crate::topology::mesh::{minus_port, plus_port, EJECT_PORT};

    fn torus(k: u32) -> Topology {
        Topology::build(&TopologyConfig::Torus { k: Some(k), n: Some(2), dims: None }).unwrap()
    }

    fn lids(topo: &Topology, lmc: u8, slack: u32, vcs: u32) -> Result<Routing, crate::error::ConfigError> {
        Routing::build(RoutingKind::Auto, topo, vcs)?
            .with_lids(topo, lmc, slack, vcs, LidVcs::Layers)?
            .with_paths(1 << lmc)
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
        let e = dor.with_lids(&t, 1, 2, 1, LidVcs::Layers).unwrap_err().to_string();
        assert!(e.contains("routing.lmc") && e.contains("deadlock") && e.contains("wrap-around"), "{e}");
        // With 3 VCs the classes (wraps crossed) make every path set of the 2-D torus safe:
        // the document's 64-node torus with four LIDs (its alternatives' runs close the
        // per-run dateline classes' graph, so it takes the wrap classes).
        let r = lids(&torus(8), 2, 2, 3).unwrap();
        let Routing::Lids { table, .. } = &r else { panic!() };
        assert_eq!(table.layers, 3);
        assert!(table.dateline.is_empty());
        // Other shapes (fabrics, 3-D grids) put each path in a VC layer: a 3x3x3 torus's
        // rings close cycles in its one layer, and fit in three.
        let t3 = Topology::build(&TopologyConfig::Torus { k: Some(3), n: Some(3), dims: None }).unwrap();
        let dor = Routing::build(RoutingKind::Dor, &t3, 1).unwrap();
        let e = dor.with_lids(&t3, 1, 1, 1, LidVcs::Layers).unwrap_err().to_string();
        assert!(e.contains("deadlock") && e.contains("1 VC layers"), "{e}");
        let r = lids(&t3, 1, 1, 4).unwrap();
        let Routing::Lids { table, .. } = &r else { panic!() };
        assert!((2..=4).contains(&table.layers), "{}", table.layers);
        // A mesh's dimension order and its disjoint alternatives: one class.
        let mesh =
            Topology::build(&TopologyConfig::Mesh { k: None, n: None, dims: Some(vec![8, 4]) }).unwrap();
        assert!(lids(&mesh, 2, 2, 3).is_ok());
    }

    /// One LID per port on a torus: its dimension-order paths take the base routing's
    /// dateline classes run by run (a packet keeps the class it entered a dimension with;
    /// going +, upper iff its run wraps), worked here on a 4x4 torus (router x + 4y), and
    /// each class is a layer of VCs (with 3: VCs 0 and 2, and VC 1).
    #[test]
    fn a_single_lid_takes_the_dateline_classes() {
        let t = torus(4);
        let r = lids(&t, 0, 2, 3).unwrap();
        let Routing::Lids { table, .. } = &r else { panic!() };
        assert_eq!(table.layers, 2);
        assert!(!table.dateline.is_empty());
        let (px, py, my) = (plus_port(0), plus_port(1), minus_port(1));
        let from_node = |n: usize| t.attach[n].1 as usize;
        let lower = 0b101;
        let upper = 0b010;
        let route =
            |router, in_port, in_vc, dst| r.route_in_class(&t, router, in_port, in_vc, dst, 0, 3, 0b111);
        // (2,0) -> (0,0): half the ring from an even x goes +, over the wrap (2 -> 3 -> 0):
        // upper from the start, kept at (3,0) where it continues.
        assert_eq!(route(2, from_node(2), 0, 0), Route { port: px as u32, vcs: upper });
        assert_eq!(route(3, minus_port(0), 1, 0), Route { port: px as u32, vcs: upper });
        // (0,0) -> (1,0): + without a wrap: lower.
        assert_eq!(route(0, from_node(0), 0, 1), Route { port: px as u32, vcs: lower });
        // (1,0) -> (1,1): entering y going + without a wrap: lower whatever x's class was.
        assert_eq!(route(1, minus_port(0), 1, 5), Route { port: py as u32, vcs: lower });
        // (0,1) -> (0,0): going - without a wrap: upper (BookSim2's rule for -).
        assert_eq!(route(4, from_node(4), 0, 0), Route { port: my as u32, vcs: upper });
        // The same paths as the base routing, every pair.
        let base = Routing::build(RoutingKind::Auto, &t, 3).unwrap();
        for s in 0..16u32 {
            for d in (0..16u32).filter(|&d| d != s) {
                let ports = |x: &Routing| {
                    x.walk(&t, 3, NodeId(s), NodeId(d), 0).unwrap().iter().map(|h| h.1).collect::<Vec<_>>()
                };
                assert_eq!(ports(&r), ports(&base), "{s}->{d}");
            }
        }
    }

    /// The escape VC (`lid_vcs = "escape"`), worked on a 4x4 torus (router x + 4y) with 3
    /// VCs: VCs 0 and 1 are dimension order's dateline pair (the escape), VC 2 every
    /// LID's own path.
    #[test]
    fn an_escape_vc_carries_dimension_order_beside_free_paths() {
        let t = torus(4);
        let r = Routing::build(RoutingKind::Auto, &t, 3)
            .unwrap()
            .with_lids(&t, 1, 2, 3, LidVcs::Escape)
            .unwrap()
            .with_paths(2)
            .unwrap();
        assert!(r.has_other_ways());
        assert_eq!(r.vcs_per_class(), 3, "two escape VCs and one for the paths");
        let (px, py) = (plus_port(0) as u32, plus_port(1) as u32);
        let from_node = |n: usize| t.attach[n].1 as usize;
        let (lower, upper, free) = (0b001, 0b010, 0b100);
        let at = |router, in_port, in_vc, dst, lid, class| {
            (
                r.route_in_class(&t, router, in_port, in_vc, dst, lid, 3, class),
                r.ways_in_class(&t, router, in_port, in_vc, dst, lid, class).escape,
            )
        };
        // (0,0) -> (1,1) on LID 1 (+y, then +x): its own way on VC 2, and dimension
        // order's (+x, no wrap: the lower class) as the escape.
        assert_eq!(
            at(0, from_node(0), 0, 5, 1, 0b111),
            (Route { port: py, vcs: free }, Some(Route { port: px, vcs: lower }))
        );
        // LID 0 is dimension order: its escape leaves by the same port, on the dateline
        // class (the allocator takes it only where VC 2 is taken).
        assert_eq!(
            at(0, from_node(0), 0, 5, 0, 0b111),
            (Route { port: px, vcs: free }, Some(Route { port: px, vcs: lower }))
        );
        // At (0,1), arrived on VC 2 by +y: the rest of LID 1 (+x) is dimension order's too.
        assert_eq!(
            at(4, minus_port(1), 2, 5, 1, 0b111),
            (Route { port: px, vcs: free }, Some(Route { port: px, vcs: lower }))
        );
        // A header of LID 1 that took the escape to (1,0) keeps to dimension order (+y,
        // entering y: its class afresh).
        assert_eq!(at(1, minus_port(0), 0, 5, 1, 0b111), (Route { port: py, vcs: lower }, None));
        // (2,0) -> (0,0): the run wraps, so the upper class, kept at (3,0) by a header on
        // it; one of LID 0 may come back to VC 2 there (its way is dimension order's).
        assert_eq!(at(2, from_node(2), 0, 0, 0, 0b111).1, Some(Route { port: px, vcs: upper }));
        assert_eq!(
            at(3, minus_port(0), 1, 0, 0, 0b111),
            (Route { port: px, vcs: free }, Some(Route { port: px, vcs: upper }))
        );
        assert_eq!(at(3, minus_port(0), 1, 0, 1, 0b111), (Route { port: px, vcs: upper }, None));
        // ... and a header entering the escape at (3,0) from VC 2 takes the class afresh
        // (its run from there wraps too: upper).
        assert_eq!(at(3, minus_port(0), 2, 0, 0, 0b111).1, Some(Route { port: px, vcs: upper }));
        // The ejection takes every VC, escape or not.
        assert_eq!(
            at(5, minus_port(0), 0, 5, 1, 0b111),
            (Route { port: EJECT_PORT as u32, vcs: 0b111 }, None)
        );
        // Within a traffic class of VCs 3-5 the same ranks: VCs 3, 4 the escape, 5 free.
        assert_eq!(
            at(0, from_node(0), 3, 5, 1, 0b111_000),
            (Route { port: py, vcs: 0b100_000 }, Some(Route { port: px, vcs: 0b001_000 }))
        );
        assert_eq!(at(1, minus_port(0), 3, 5, 1, 0b111_000), (Route { port: py, vcs: 0b001_000 }, None));
        // A walk follows each LID's own way (the first VC of a route, VC 2 off the escape).
        assert_eq!(
            r.walk(&t, 3, NodeId(0), NodeId(5), 1).unwrap(),
            [(RouterId(0), py), (RouterId(4), px), (RouterId(5), EJECT_PORT as u32)]
        );
        // On a mesh one escape VC: 2 VCs per class are enough.
        let mesh = Topology::build(&TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None }).unwrap();
        let m =
            Routing::build(RoutingKind::Auto, &mesh, 2).unwrap().with_lids(&mesh, 2, 2, 2, LidVcs::Escape);
        assert_eq!(m.unwrap().vcs_per_class(), 2);
    }

    /// The escape's proof (`check_escape`) over LID 0's ways from every switch: dimension
    /// order on a mesh, and on a torus with the dateline classes, is acyclic; a torus's
    /// rings with one class are not (where a header may enter the escape anywhere).
    #[test]
    fn the_escape_is_checked_acyclic_from_every_switch() {
        let t = torus(4);
        let base = Routing::build(RoutingKind::Auto, &t, 3).unwrap();
        let tree = |topo: &Topology, base: &Routing| -> Vec<Vec<u8>> {
            (0..topo.nodes)
                .map(|d| {
                    let mut tr: Vec<u8> =
                        (0..topo.routers).map(|r| base.route(topo, r, 0, 0, d, 0, 3).port as u8).collect();
                    tr[topo.attach[d].0.index()] = topo.attach[d].1 as u8;
                    tr
                })
                .collect()
        };
        let trees = tree(&t, &base);
        let m = Moves::of(&t, 3).unwrap();
        let upper = dateline_entries(&t, &m, &trees, 1);
        assert!(check_escape(&t, Some(&m), &trees, 1, &upper));
        // (a 5-ring: each router's two-hop + run makes the ring's dependencies a cycle; a
        // 4-ring's ties split so that the + runs of two hops start at even x only)
        let t5 = torus(5);
        let trees5 = tree(&t5, &Routing::build(RoutingKind::Auto, &t5, 3).unwrap());
        assert!(check_escape(
            &t5,
            Some(&Moves::of(&t5, 3).unwrap()),
            &trees5,
            1,
            &dateline_entries(&t5, &Moves::of(&t5, 3).unwrap(), &trees5, 1)
        ));
        assert!(!check_escape(&t5, None, &trees5, 1, &[]), "one class on a torus's rings");
        let mesh = Topology::build(&TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None }).unwrap();
        let mbase = Routing::build(RoutingKind::Auto, &mesh, 3).unwrap();
        assert!(check_escape(&mesh, None, &tree(&mesh, &mbase), 1, &[]));
        // A 3-D grid has no escape here (its dateline moves are 2-D): refused by name.
        let t3 = Topology::build(&TopologyConfig::Torus { k: Some(3), n: Some(3), dims: None }).unwrap();
        let e = Routing::build(RoutingKind::Auto, &t3, 3)
            .unwrap()
            .with_lids(&t3, 1, 1, 3, LidVcs::Escape)
            .unwrap_err()
            .to_string();
        assert!(e.contains("routing.lid_vcs") && e.contains("2-D mesh or torus"), "{e}");
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

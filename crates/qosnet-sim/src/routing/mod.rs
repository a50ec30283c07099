//! Routing functions: for a header flit at (router, input port, input VC) going to a node,
//! the output port and the set of output VCs it may use. Computed in one place and shared
//! by the simulator (stage 2) and, through [`Routing::path`], by admission control.

mod cmesh;
mod dor;
pub mod dragonfly;
mod fat_tree;
mod flatfly;
mod fly;
mod lid_paths;
pub mod min_adapt;
mod oblivious;

pub use lid_paths::LidPaths;

use dor::{Grid, Wrap};

use crate::config::RoutingKind;
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};
use crate::topology::{Peer, Shape, Topology};

/// A set of VCs as a bit mask (at most 32 VCs per port).
pub type VcMask = u32;

#[inline]
pub fn all_vcs(vcs: u32) -> VcMask {
    if vcs >= 32 {
        u32::MAX
    } else {
        (1u32 << vcs) - 1
    }
}

/// The tie rule of a packet on dimension order with dateline classes: its drawn bits
/// (its way, `path`) or parity (`dor::Ties`).
#[inline(always)]
fn dor_ties(random: bool, path: u32) -> dor::Ties {
    if random {
        dor::Ties::Drawn(path)
    } else {
        dor::Ties::Parity
    }
}

/// A traffic class's VCs (`class_vcs`) as dateline routing's two classes: the lower half
/// of them (rounded down) and the rest. A class needs two VCs on a torus for both to be
/// non-empty (validation says so).
#[inline]
pub fn dateline_halves(class_vcs: VcMask) -> (VcMask, VcMask) {
    let mut lower = 0;
    let mut rest = class_vcs;
    for _ in 0..class_vcs.count_ones() / 2 {
        lower |= rest & rest.wrapping_neg();
        rest &= rest - 1;
    }
    (lower, rest)
}

/// How many of `mask`'s VCs lie below VC `v`.
#[inline]
fn rank(mask: VcMask, v: usize) -> u32 {
    (mask & ((1u64 << v) - 1) as u32).count_ones()
}

/// Layer `k` of `layers` within a traffic class's VCs `class_vcs`: its VCs whose rank
/// among them is k modulo `layers` (with every VC in the class: VCs k, k + layers, ...).
#[inline]
fn class_layer(class_vcs: VcMask, layers: u32, k: u32) -> VcMask {
    pick(class_vcs, |i| i % layers == k)
}

/// A layered routing's decision (`oblivious::route`, `flatfly::route_detour`: a port and
/// the layer it leaves in) as VCs of `vcs`: that layer's share of them, or every one of them
/// for the ejection (`None`: the layers separate the channels between routers only, as
/// BookSim2's Valiant and UGAL routings eject on any VC).
#[inline]
fn in_layer(port: usize, layer: Option<u32>, layers: u32, vcs: VcMask) -> Route {
    let vcs = match layer {
        Some(k) => class_layer(vcs, layers, k),
        None => vcs,
    };
    Route { port: port as u32, vcs }
}

/// O1TURN's order chosen by the first hops' queues (BookSim2's `adaptive_xy_yx_mesh` and
/// `adaptive_xyyx_flatfly`): 0 (ascending dimensions) when its first hop's queue `xy` is the
/// shorter, 1 (descending) when `yx`'s is, the `draw`'s lowest bit on a tie.
#[inline]
fn order_by_queues(xy: u32, yx: u32, draw: u64) -> u16 {
    match xy.cmp(&yx) {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => (draw & 1) as u16,
    }
}

/// The VCs of `class_vcs` whose ranks among them are set in `ranks` (bit i: the i-th).
#[inline]
fn by_rank(class_vcs: VcMask, ranks: VcMask) -> VcMask {
    pick(class_vcs, |i| ranks >> i & 1 == 1)
}

/// The VCs of `class_vcs` whose rank `i` among them `keep(i)` holds.
#[inline(always)]
fn pick(class_vcs: VcMask, keep: impl Fn(u32) -> bool) -> VcMask {
    let (mut out, mut rest, mut i) = (0, class_vcs, 0);
    while rest != 0 {
        let lowest = rest & rest.wrapping_neg();
        if keep(i) {
            out |= lowest;
        }
        rest &= rest - 1;
        i += 1;
    }
    out
}

/// Minimal, Valiant or UGAL-L: the routings that may send a packet through a random
/// intermediate (a dragonfly's group, `dragonfly.rs`; a flattened butterfly's router,
/// `flatfly.rs`), chosen at its source router (`Routing::choose_via`, `Packet::via`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Min,
    Valiant,
    Ugal,
}

/// The routing decision for one header flit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub port: u32,
    pub vcs: VcMask,
}

/// Every way a header may take at a router where the routing offers more than one
/// (`Routing::has_other_ways`: an escape VC, Duato's protocol; minimal adaptive routing), in
/// the order the VC allocator asks for them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ways {
    /// The route: minimal adaptive routing's lowest dimension still to cross, a LID's own
    /// path on the adaptive VCs (or the escape alone, for a header on it; or the ejection).
    pub first: Route,
    /// A second adaptive way: minimal adaptive routing's next dimension still to cross.
    pub second: Option<Route>,
    /// The escape: dimension order, or LID 0's way, on its escape class.
    pub escape: Option<Route>,
}

#[derive(Clone, Debug)]
pub enum Routing {
    /// Single router: output port = destination node's port.
    Direct,
    /// Destination tag on a k-ary n-fly (`fly.rs`).
    DestTag { k: u32, n: u32 },
    /// Dimension order (mesh), or minimal dimension order on a torus without dateline
    /// classes (`wrap`: deadlock-prone, for studying deadlock).
    Dor { grid: Grid, wrap: bool },
    /// Dimension order with two dateline VC classes per dimension (torus, Dally & Seitz);
    /// its ties drawn for each packet at its source (`random_ties`, `dor::Ties::Drawn`) or
    /// by parity.
    DorDateline { grid: Grid, vcs: u32, random_ties: bool },
    /// Up/down with D-mod-K up-port choice (k-ary n-tree); `paths` disjoint up paths per
    /// destination (path p turns every up-port choice p ports further, `fat_tree.rs`).
    DModK { k: u32, n: u32, paths: u32 },
    /// Nearest common ancestor on a k-ary n-tree (BookSim2's `nca`): up through ports drawn
    /// per packet at its source router (`Packet::via`, `fat_tree::choose_up`), then down;
    /// `adaptive` (BookSim2's `anca`): each up port the less loaded of two drawn, chosen at
    /// the router that takes it (`fat_tree::choose_up_adaptive`).
    Nca { k: u32, n: u32, adaptive: bool },
    /// Table lookup: `next[router * nodes + node]` (a real fabric's forwarding tables).
    Table { next: Vec<u8>, nodes: usize },
    /// 2^LMC LIDs per destination, each a forwarding table of its own built by depth-first
    /// search (`lid_paths.rs`, document 002 §4); sources use the first `paths` of them.
    Lids { paths: u32, table: Box<LidPaths> },
    /// A dragonfly's minimal, Valiant or UGAL-L routing over VC layers (`dragonfly.rs`);
    /// a packet's Valiant choice (`Packet::via`) is made at its source router
    /// (`Routing::choose_via`) and passed as the route's `path`.
    /// `detour`: Kim et al.'s random group or BookSim2's random router
    /// (`dragonfly::Detour`).
    Dragonfly { net: crate::topology::dragonfly::Dragonfly, mode: Mode, detour: dragonfly::Detour },
    /// A flattened butterfly's dimension order (one hop per differing dimension), or
    /// Valiant or UGAL-L through a random intermediate router, in dimension order to it and
    /// from it (`flatfly.rs`); `turns` (UGAL-L only): in either order, drawn per packet.
    FlatFly { net: crate::topology::flatfly::FlatFly, mode: Mode, turns: bool },
    /// O1TURN on a flattened butterfly (BookSim2's `xyyx_flatfly`; `adaptive`: its
    /// `adaptive_xyyx_flatfly`): dimensions in ascending or descending order, the order
    /// drawn (or chosen by the first hops' queues) at the source router, each on its VC
    /// layer (`flatfly::route_turns`).
    FlatFlyTurns { net: crate::topology::flatfly::FlatFly, adaptive: bool },
    /// Dimension order on a concentrated mesh, with or without its express channels
    /// (`cmesh.rs`, BookSim2's `dor` and `dor_no_express`).
    /// O1TURN on it (`turns`: x first or y first drawn per packet, each on its VC layer).
    CMesh { mesh: crate::topology::cmesh::CMesh, express: bool, turns: bool },
    /// Minimal adaptive on a mesh or torus with dimension order as the escape
    /// (`min_adapt.rs`, Duato's protocol), or as BookSim2 ships it (`opts`).
    MinAdapt { grid: Grid, torus: bool, opts: crate::config::MinAdaptConfig },
    /// Valiant or O1TURN (XY or YX) on a mesh, drawn per packet at its source router, on two
    /// VC layers (`oblivious.rs`).
    Oblivious { grid: Grid, mode: oblivious::Oblivious },
}

impl Routing {
    /// Build the routing function; the only `match` from kind to implementation.
    pub fn build(kind: RoutingKind, topo: &Topology, vcs: u32) -> Result<Routing, ConfigError> {
        let mismatch = |want: &str| {
            ConfigError::new(
                "routing.kind",
                format!(
                    "{:?} does not apply to a {} topology; use \"auto\" or {want}",
                    kind.name(),
                    topo.shape.name()
                ),
            )
        };
        // (a packet keeps a Valiant or UGAL intermediate router + 1 in 16 bits; with O1TURN
        // its order too, in the lowest bit)
        let through_a_router = matches!(
            (&topo.shape, kind),
            (Shape::Mesh { .. } | Shape::Torus { .. }, RoutingKind::Valiant)
                | (Shape::FlatFly(_), RoutingKind::Valiant | RoutingKind::Ugal | RoutingKind::UgalXyYx)
                | (Shape::Dragonfly(_), RoutingKind::UgalRouter)
        );
        let most = if kind == RoutingKind::UgalXyYx { u16::MAX / 2 } else { u16::MAX } as usize;
        if through_a_router && topo.routers >= most {
            // (a dragonfly's own UGAL keeps a group, which fits)
            let instead = if matches!(topo.shape, Shape::Dragonfly(_)) { "\"ugal\"" } else { "\"dor\"" };
            return Err(ConfigError::new(
                "routing.kind",
                format!(
                    "{:?} needs fewer than {most} routers (a packet keeps its intermediate in 16 bits), got {}; \
                     use {instead}",
                    kind.name(),
                    topo.routers
                ),
            ));
        }
        Ok(match (&topo.shape, kind) {
            (Shape::Star { .. }, RoutingKind::Auto | RoutingKind::Direct) => Routing::Direct,
            (Shape::Star { .. }, _) => return Err(mismatch("\"direct\"")),
            (Shape::Fly { k, n }, RoutingKind::Auto | RoutingKind::DestTag) => {
                Routing::DestTag { k: *k, n: *n }
            }
            (Shape::Fly { .. }, _) => return Err(mismatch("\"dest_tag\"")),
            (Shape::Mesh { dims }, RoutingKind::Auto | RoutingKind::Dor) => {
                Routing::Dor { grid: Grid::new(dims), wrap: false }
            }
            (Shape::Mesh { dims }, RoutingKind::MinAdapt) => {
                Routing::MinAdapt { grid: Grid::new(dims), torus: false, opts: Default::default() }
            }
            (Shape::Torus { dims }, RoutingKind::MinAdapt) => {
                Routing::MinAdapt { grid: Grid::new(dims), torus: true, opts: Default::default() }
            }
            (Shape::Mesh { dims }, RoutingKind::Valiant | RoutingKind::XyYx | RoutingKind::AdaptiveXyYx) => {
                let mode = match kind {
                    RoutingKind::Valiant => oblivious::Oblivious::Valiant,
                    RoutingKind::XyYx => oblivious::Oblivious::XyYx,
                    _ => oblivious::Oblivious::AdaptiveXyYx,
                };
                Routing::Oblivious { grid: Grid::new(dims), mode }
            }
            (Shape::Mesh { .. }, _) => {
                return Err(mismatch("\"dor\", \"min_adapt\", \"valiant\", \"xy_yx\" or \"adaptive_xy_yx\""))
            }
            (Shape::Torus { dims }, RoutingKind::Dor) => Routing::Dor { grid: Grid::new(dims), wrap: true },
            (Shape::Torus { dims }, RoutingKind::Auto | RoutingKind::DorDateline) => {
                if vcs < 2 {
                    return Err(ConfigError::new(
                        "router.vcs",
                        format!("torus dateline routing needs >= 2 VCs per port, got {vcs}"),
                    ));
                }
                Routing::DorDateline { grid: Grid::new(dims), vcs, random_ties: false }
            }
            (Shape::Torus { dims }, RoutingKind::Valiant) => {
                let mode = oblivious::Oblivious::ValiantTorus { random_ties: false };
                Routing::Oblivious { grid: Grid::new(dims), mode }
            }
            (Shape::Torus { .. }, _) => {
                return Err(mismatch(
                    "\"dor_dateline\", \"min_adapt\", \"valiant\" (or \"dor\", deadlock-prone)",
                ))
            }
            (Shape::FatTree { k, n }, RoutingKind::Auto | RoutingKind::DModK) => {
                Routing::DModK { k: *k, n: *n, paths: 1 }
            }
            (Shape::FatTree { k, n }, RoutingKind::Nca | RoutingKind::Anca) => {
                let words = fat_tree::up_words(*k, *n);
                if words > fat_tree::MAX_UP_WORDS {
                    return Err(ConfigError::new(
                        "routing.kind",
                        format!(
                            "\"{}\" needs k^(n-1) <= {} up-port words (a packet keeps its ports in 16 \
                             bits), got {words} for a {k}-ary {n}-tree; use \"d_mod_k\"",
                            kind.name(),
                            fat_tree::MAX_UP_WORDS
                        ),
                    ));
                }
                Routing::Nca { k: *k, n: *n, adaptive: kind == RoutingKind::Anca }
            }
            (Shape::FatTree { .. }, _) => return Err(mismatch("\"d_mod_k\", \"nca\" or \"anca\"")),
            (Shape::Fabric { routes, .. }, RoutingKind::Auto | RoutingKind::Lft) => {
                Routing::Table { next: routes.clone(), nodes: topo.nodes }
            }
            (Shape::Fabric { .. }, _) => return Err(mismatch("\"lft\"")),
            (Shape::Dragonfly(net), RoutingKind::Auto | RoutingKind::Min) => {
                Routing::Dragonfly { net: *net, mode: Mode::Min, detour: dragonfly::Detour::Group }
            }
            (Shape::Dragonfly(net), RoutingKind::Valiant) => {
                Routing::Dragonfly { net: *net, mode: Mode::Valiant, detour: dragonfly::Detour::Group }
            }
            (Shape::Dragonfly(net), RoutingKind::Ugal) => {
                Routing::Dragonfly { net: *net, mode: Mode::Ugal, detour: dragonfly::Detour::Group }
            }
            (Shape::Dragonfly(net), RoutingKind::UgalRouter) => {
                Routing::Dragonfly { net: *net, mode: Mode::Ugal, detour: dragonfly::Detour::Router }
            }
            (Shape::FlatFly(f), RoutingKind::Auto | RoutingKind::Dor) => {
                Routing::FlatFly { net: *f, mode: Mode::Min, turns: false }
            }
            (Shape::FlatFly(f), RoutingKind::Valiant | RoutingKind::Ugal | RoutingKind::UgalXyYx) => {
                let mode = if kind == RoutingKind::Valiant { Mode::Valiant } else { Mode::Ugal };
                Routing::FlatFly { net: *f, mode, turns: kind == RoutingKind::UgalXyYx }
            }
            (Shape::FlatFly(f), RoutingKind::XyYx | RoutingKind::AdaptiveXyYx) => {
                Routing::FlatFlyTurns { net: *f, adaptive: kind == RoutingKind::AdaptiveXyYx }
            }
            (Shape::FlatFly(_), _) => {
                return Err(mismatch(
                    "\"dor\", \"valiant\", \"ugal\", \"ugal_xy_yx\", \"xy_yx\" or \"adaptive_xy_yx\"",
                ))
            }
            (Shape::CMesh(m), RoutingKind::Auto | RoutingKind::Dor) => {
                Routing::CMesh { mesh: *m, express: false, turns: false }
            }
            (Shape::CMesh(m), RoutingKind::XyYx) => Routing::CMesh { mesh: *m, express: false, turns: true },
            (Shape::CMesh(m), RoutingKind::DorExpress | RoutingKind::XyYxExpress) => {
                if !m.has_express() {
                    return Err(ConfigError::new(
                        "routing.kind",
                        format!(
                            "{:?} needs express channels, which join edge routers k/2 apart: \
                             give an even topology.k, got {}",
                            kind.name(),
                            m.k
                        ),
                    ));
                }
                Routing::CMesh { mesh: *m, express: true, turns: kind == RoutingKind::XyYxExpress }
            }
            (Shape::CMesh(_), _) => {
                return Err(mismatch("\"dor\", \"dor_express\", \"xy_yx\" or \"xy_yx_express\""))
            }
            (Shape::Dragonfly(_), _) => {
                return Err(mismatch("\"min\", \"valiant\", \"ugal\" or \"ugal_router\""))
            }
        })
    }

    /// This routing on a mesh, torus or fabric with 2^`lmc` LIDs per destination
    /// (`[routing] lmc`), LID 0 its own paths and the others found by depth-first search
    /// within `slack` hops of the shortest (`lid_paths.rs`), kept deadlock free by VC
    /// classes per path or an escape VC (`lid_vcs`); refused where they could deadlock
    /// with `vcs` VCs.
    pub fn with_lids(
        self,
        topo: &Topology,
        lmc: u8,
        slack: u32,
        vcs: u32,
        lid_vcs: crate::config::LidVcs,
    ) -> Result<Routing, ConfigError> {
        if lmc > 7 {
            return Err(ConfigError::new(
                "routing.lmc",
                format!("must be a whole number in 0..=7 (each port gets 2^LMC LIDs), got {lmc}"),
            ));
        }
        if !matches!(topo.shape, Shape::Mesh { .. } | Shape::Torus { .. } | Shape::Fabric { .. }) {
            return Err(ConfigError::new(
                "routing.lmc",
                format!(
                    "DFS path sets apply to a mesh, torus or ib_fabric, not a {}; a fat tree's \
                     up/down routing has its own disjoint paths ([routing] multipath)",
                    topo.shape.name()
                ),
            ));
        }
        if slack > 64 {
            return Err(ConfigError::new(
                "routing.slack",
                format!("must be a whole number in 0..=64, got {slack}"),
            ));
        }
        let escape = lid_vcs == crate::config::LidVcs::Escape;
        let field = if escape { "routing.lid_vcs" } else { "routing.lmc" };
        let table =
            LidPaths::build(topo, &self, lmc, slack, vcs, escape).map_err(|e| ConfigError::new(field, e))?;
        Ok(Routing::Lids { paths: 1, table: Box::new(table) })
    }

    /// This routing with `[routing] min_adapt`'s options (`min_adapt.rs`), which only
    /// `min_adapt` takes.
    pub fn with_min_adapt(self, opts: Option<crate::config::MinAdaptConfig>) -> Result<Routing, ConfigError> {
        use crate::config::{EscapeRequest, MinAdaptDirections};
        let Some(opts) = opts else { return Ok(self) };
        match self {
            Routing::MinAdapt { .. }
                if opts.escape == EscapeRequest::Alongside && opts.directions == MinAdaptDirections::All =>
            {
                Err(ConfigError::new(
                    "routing.min_adapt.escape",
                    "\"alongside\" needs directions = \"first\" (the escape is asked on the adaptive \
                     way's port), got directions = \"all\"",
                ))
            }
            Routing::MinAdapt { grid, torus, .. } => Ok(Routing::MinAdapt { grid, torus, opts }),
            _ => Err(ConfigError::new(
                "routing.min_adapt",
                "applies to routing.kind = \"min_adapt\" alone; leave it out",
            )),
        }
    }

    /// This routing with its torus ties drawn for each packet (`[routing] torus_ties =
    /// "random"`, BookSim2's): dimension order with dateline classes and Valiant on a torus.
    pub fn with_torus_ties(self, ties: crate::config::TorusTies) -> Result<Routing, ConfigError> {
        use oblivious::{Oblivious, TieBits};
        if ties == crate::config::TorusTies::Parity {
            return Ok(self);
        }
        match self {
            Routing::DorDateline { grid, vcs, .. } => {
                Ok(Routing::DorDateline { grid, vcs, random_ties: true })
            }
            Routing::Oblivious { grid, mode: Oblivious::ValiantTorus { .. } } => {
                let bits = TieBits::of(&grid);
                let routers: u64 = grid.dims.iter().map(|&d| d as u64).product();
                if routers > bits.most_routers() {
                    return Err(ConfigError::new(
                        "routing.torus_ties",
                        format!(
                            "\"random\" with \"valiant\" keeps the intermediate router and {} tie bits in \
                             a packet's 16 bits: at most {} routers, got {routers}; use \"parity\"",
                            2 * bits.dims,
                            bits.most_routers()
                        ),
                    ));
                }
                Ok(Routing::Oblivious { grid, mode: Oblivious::ValiantTorus { random_ties: true } })
            }
            _ => Err(ConfigError::new(
                "routing.torus_ties",
                "\"random\" applies to a torus with routing.kind = \"dor_dateline\" (or \"auto\") or \
                 \"valiant\"; leave it out",
            )),
        }
    }

    /// This routing with `paths` paths per destination (`[routing] multipath`): the fat
    /// tree's up/down routing and the LIDs of `[routing] lmc` have several here; 1 is
    /// every routing's own.
    pub fn with_paths(self, paths: u32) -> Result<Routing, ConfigError> {
        match self {
            _ if paths == 1 => Ok(self),
            Routing::Lids { table, .. } if (1..=table.paths).contains(&paths) => {
                Ok(Routing::Lids { paths, table })
            }
            Routing::Lids { table, .. } => Err(ConfigError::new(
                "routing.multipath.paths",
                format!("must be a whole number in 1..={} (2^routing.lmc LIDs), got {paths}", table.paths),
            )),
            Routing::DModK { k, n, .. } if (1..=k).contains(&paths) => Ok(Routing::DModK { k, n, paths }),
            Routing::DModK { k, .. } => Err(ConfigError::new(
                "routing.multipath.paths",
                format!("must be a whole number in 1..={k} (the tree's arity), got {paths}"),
            )),
            _ => Err(ConfigError::new(
                "routing.multipath",
                "several paths per destination need a fat tree's up/down routing (\"d_mod_k\") \
                 or LIDs per port on a mesh, torus or fabric ([routing] lmc); other routings have one",
            )),
        }
    }

    /// The paths to each destination (a packet's `path` is below this).
    #[inline]
    pub fn paths(&self) -> u32 {
        match self {
            Routing::DModK { paths, .. } | Routing::Lids { paths, .. } => *paths,
            _ => 1,
        }
    }

    /// Route a header flit along its `path` (below `paths()`). `in_port`/`in_vc` matter
    /// only for the dateline classes.
    #[inline]
    #[allow(clippy::too_many_arguments)] // where the header is, where it goes, on which path
    pub fn route(
        &self,
        topo: &Topology,
        router: usize,
        in_port: usize,
        in_vc: usize,
        dst: usize,
        path: u32,
        vcs: u32,
    ) -> Route {
        match self {
            Routing::Direct => Route { port: dst as u32, vcs: all_vcs(vcs) },
            Routing::DestTag { k, n } => fly::route(*k, *n, router, dst, all_vcs(vcs)),
            Routing::Dor { grid, wrap } => {
                let wrap = if *wrap { Wrap::Unsafe } else { Wrap::Mesh };
                dor::route(grid, router, dst, wrap, vcs)
            }
            Routing::DorDateline { grid, random_ties, .. } => {
                let ties = dor_ties(*random_ties, path);
                dor::route(grid, router, dst, Wrap::Dateline { in_port, in_vc, ties }, vcs)
            }
            Routing::DModK { k, n, .. } => {
                fat_tree::route(*k as usize, *n, topo, router, dst, fat_tree::Up::DModK { path }, vcs)
            }
            Routing::Nca { k, n, .. } => {
                fat_tree::route(*k as usize, *n, topo, router, dst, fat_tree::Up::Drawn { word: path }, vcs)
            }
            Routing::Table { next, nodes } => {
                Route { port: next[router * nodes + dst] as u32, vcs: all_vcs(vcs) }
            }
            Routing::Lids { table, .. } => table.route(router, topo.ports, in_port, in_vc, dst, path),
            Routing::FlatFly { net, mode: Mode::Min, .. } => flatfly::route(net, router, dst, vcs),
            Routing::FlatFlyTurns { net, .. } => {
                let (port, layer) = flatfly::route_turns(net, router, dst, path);
                in_layer(port, layer, flatfly::TURN_LAYERS, all_vcs(vcs))
            }
            Routing::FlatFly { net, mode, turns } => {
                let layers = flatfly::detour_layers(*turns);
                let from = in_vc as u32 % layers;
                let (port, layer) =
                    flatfly::route_detour(net, *mode, *turns, router, in_port, from, dst, path);
                in_layer(port, layer, layers, all_vcs(vcs))
            }
            Routing::CMesh { mesh, express, turns: false } => cmesh::route(mesh, router, dst, *express, vcs),
            Routing::CMesh { mesh, express, turns: true } => {
                let (port, layer) = cmesh::route_turns(mesh, router, dst, *express, path);
                in_layer(port, layer, cmesh::LAYERS, all_vcs(vcs))
            }
            Routing::Oblivious { grid, mode } => {
                let layers = oblivious::layers(*mode);
                let (port, layer) =
                    oblivious::route(grid, *mode, router, in_port, in_vc as u32 % layers, dst, path);
                in_layer(port, layer, layers, all_vcs(vcs))
            }
            Routing::Dragonfly { net, mode, detour } => {
                let layers = dragonfly::layers(*mode);
                let (port, layer) =
                    dragonfly::route(net, *detour, router, in_port, in_vc as u32 % layers, dst, path);
                Route { port: port as u32, vcs: class_layer(all_vcs(vcs), layers, layer) }
            }
            Routing::MinAdapt { .. } => {
                self.other_ways(topo, router, in_port, in_vc, dst, path, all_vcs(vcs)).first
            }
        }
    }

    /// A dragonfly's or flattened butterfly's routing name as configured
    /// (`RoutingKind::name`); "" for others.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Routing::FlatFly { turns: true, .. } => "ugal_xy_yx",
            Routing::Dragonfly { detour: dragonfly::Detour::Router, .. } => "ugal_router",
            Routing::Dragonfly { mode, .. } | Routing::FlatFly { mode, .. } => match mode {
                Mode::Min if matches!(self, Routing::FlatFly { .. }) => "dor",
                Mode::Min => "min",
                Mode::Valiant => "valiant",
                Mode::Ugal => "ugal",
            },
            Routing::Oblivious {
                mode: oblivious::Oblivious::Valiant | oblivious::Oblivious::ValiantTorus { .. },
                ..
            } => "valiant",
            Routing::Oblivious { mode: oblivious::Oblivious::XyYx, .. } => "xy_yx",
            Routing::FlatFlyTurns { adaptive: false, .. } => "xy_yx",
            Routing::FlatFlyTurns { adaptive: true, .. } => "adaptive_xy_yx",
            Routing::Oblivious { mode: oblivious::Oblivious::AdaptiveXyYx, .. } => "adaptive_xy_yx",
            Routing::CMesh { turns: true, express: false, .. } => "xy_yx",
            Routing::CMesh { turns: true, express: true, .. } => "xy_yx_express",
            _ => "",
        }
    }

    /// Whether the routing chooses each packet's way at its source router
    /// (`choose_via`): Valiant and UGAL on a dragonfly or flattened butterfly, NCA (and
    /// adaptive NCA) on a fat tree.
    #[inline(always)]
    pub fn chooses_at_source(&self) -> bool {
        matches!(
            self,
            Routing::Dragonfly { mode: Mode::Valiant | Mode::Ugal, .. }
                | Routing::FlatFly { mode: Mode::Valiant | Mode::Ugal, .. }
                | Routing::FlatFlyTurns { .. }
                | Routing::Nca { .. }
                | Routing::Oblivious { .. }
                | Routing::CMesh { turns: true, .. }
                | Routing::DorDateline { random_ties: true, .. }
        )
    }

    /// Whether the routing also chooses at every router after the source's
    /// (`choose_via` again, with the packet's `via` so far): adaptive NCA's up ports.
    #[inline(always)]
    pub fn chooses_every_hop(&self) -> bool {
        matches!(self, Routing::Nca { adaptive: true, .. })
    }

    /// A packet's way drawn at its source router (`chooses_at_source`): its `via`, from a
    /// uniform `draw` and the router's queue toward each output port: Valiant's
    /// intermediate group + 1, or 0 for the minimal path (UGAL-L, `dragonfly::choose_via`);
    /// NCA's up ports (`fat_tree::choose_up`); at every router (`chooses_every_hop`),
    /// adaptive NCA's `via` so far with this router's up port set.
    #[inline]
    pub fn choose_via(
        &self,
        router: usize,
        dst: usize,
        draw: u64,
        queue: impl Fn(usize) -> u32,
        via: u16,
    ) -> u16 {
        match self {
            Routing::Dragonfly { net, mode, detour } => {
                dragonfly::choose_via(net, *mode, *detour, router, dst, draw, queue)
            }
            Routing::FlatFly { net, mode, turns } => {
                flatfly::choose_via(net, *mode, *turns, router, dst, draw, queue)
            }
            Routing::FlatFlyTurns { net, adaptive } => {
                flatfly::choose_turn(net, *adaptive, router, dst, draw, queue)
            }
            Routing::Nca { k, n, adaptive: false } => fat_tree::choose_up(*k, *n, draw),
            Routing::Nca { k, n, adaptive: true } => {
                fat_tree::choose_up_adaptive(*k, *n, router, draw, queue, via)
            }
            Routing::Oblivious { grid, mode } => oblivious::choose(grid, *mode, router, dst, draw, queue),
            // (O1TURN's order: 0 x first, 1 y first)
            Routing::CMesh { turns: true, .. } => (draw & 1) as u16,
            // (a tie bit a dimension, `dor::Ties::Drawn`)
            Routing::DorDateline { grid, random_ties: true, .. } => {
                dor::Ties::drawn_bits(draw, grid.dims.len() as u32) as u16
            }
            _ => 0,
        }
    }

    /// `route` for a header of a traffic class allowed the VCs `class_vcs` (the router's
    /// routing stage): the route's VCs within the class's. Dateline routing's two VC
    /// classes are the lower and upper halves of the class's own VCs (`dateline_halves`),
    /// so each traffic class has its own pair: with halves of all VCs, a class whose VCs
    /// lay in one half could not take the other, and a 3x3 torus with control, real time
    /// and best effort on 4 VCs deadlocked at load 0.05. With all VCs in the class (one
    /// class, or the preemptive router's real time and best effort) the halves are the
    /// same as `route`'s.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)] // `route`'s, and the class's VCs
    pub fn route_in_class(
        &self,
        topo: &Topology,
        router: usize,
        in_port: usize,
        in_vc: usize,
        dst: usize,
        path: u32,
        vcs: u32,
        class_vcs: VcMask,
    ) -> Route {
        match self {
            Routing::DorDateline { grid, random_ties, .. } => {
                let (lower, upper) = dateline_halves(class_vcs);
                // (the arriving VC's half of its class, as `dor::route` reads it: VC 0 or VC vcs/2)
                let in_vc = if upper >> in_vc & 1 == 1 { (vcs / 2) as usize } else { 0 };
                let ties = dor_ties(*random_ties, path);
                let route = dor::route(grid, router, dst, Wrap::Dateline { in_port, in_vc, ties }, vcs);
                // At the destination the ejection port takes every VC of the class: the pair
                // separates a ring's channels only (as BookSim2's dim_order_torus). Elsewhere
                // the route's lower half always holds VC 0, its upper half never.
                let vcs = if route.port == crate::topology::mesh::EJECT_PORT as u32 {
                    class_vcs
                } else if route.vcs & 1 == 1 {
                    lower
                } else {
                    upper
                };
                Route { port: route.port, vcs }
            }
            Routing::Lids { table, .. } if table.escape > 0 => {
                self.other_ways(topo, router, in_port, in_vc, dst, path, class_vcs).first
            }
            Routing::Lids { table, .. } => {
                // The LID paths' VC layers (`lid_paths.rs`: layer k is VCs k, k + layers, ...)
                // likewise within the class: the class's VCs taken in turn.
                let layers = table.layers;
                let in_vc = (rank(class_vcs, in_vc) % layers) as usize;
                let route = table.route(router, topo.ports, in_port, in_vc, dst, path);
                let k = route.vcs.trailing_zeros();
                Route { port: route.port, vcs: class_layer(class_vcs, layers, k) }
            }
            Routing::MinAdapt { .. } => {
                self.other_ways(topo, router, in_port, in_vc, dst, path, class_vcs).first
            }
            Routing::Dragonfly { net, mode, detour } => {
                // (the layers within the class's VCs, as the LID paths' above)
                let layers = dragonfly::layers(*mode);
                let in_layer = rank(class_vcs, in_vc) % layers;
                let (port, layer) = dragonfly::route(net, *detour, router, in_port, in_layer, dst, path);
                Route { port: port as u32, vcs: class_layer(class_vcs, layers, layer) }
            }
            Routing::Oblivious { grid, mode } => {
                let layers = oblivious::layers(*mode);
                let from = rank(class_vcs, in_vc) % layers;
                let (port, layer) = oblivious::route(grid, *mode, router, in_port, from, dst, path);
                in_layer(port, layer, layers, class_vcs)
            }
            Routing::CMesh { mesh, express, turns: true } => {
                let (port, layer) = cmesh::route_turns(mesh, router, dst, *express, path);
                in_layer(port, layer, cmesh::LAYERS, class_vcs)
            }
            Routing::FlatFlyTurns { net, .. } => {
                let (port, layer) = flatfly::route_turns(net, router, dst, path);
                in_layer(port, layer, flatfly::TURN_LAYERS, class_vcs)
            }
            Routing::FlatFly { net, mode, turns } if *mode != Mode::Min => {
                let layers = flatfly::detour_layers(*turns);
                let from = rank(class_vcs, in_vc) % layers;
                let (port, layer) =
                    flatfly::route_detour(net, *mode, *turns, router, in_port, from, dst, path);
                in_layer(port, layer, layers, class_vcs)
            }
            _ => {
                let route = self.route(topo, router, in_port, in_vc, dst, path, vcs);
                Route { port: route.port, vcs: route.vcs & class_vcs }
            }
        }
    }

    /// Whether a header may have more ways than its route (`ways_in_class`): minimal
    /// adaptive routing, and LID paths with `lid_vcs = "escape"`.
    #[inline(always)]
    pub fn has_other_ways(&self) -> bool {
        match self {
            Routing::Lids { table, .. } => table.escape > 0,
            Routing::MinAdapt { .. } => true,
            _ => false,
        }
    }

    /// Every way of a header (`has_other_ways`; `route_in_class`'s arguments) in one look,
    /// VCs within the class's: its route (`route_in_class` is its `first`), then the ways
    /// the VC allocator asks for after it. Other routings: the route alone.
    #[inline]
    #[allow(clippy::too_many_arguments)] // `route_in_class`'s
    pub fn ways_in_class(
        &self,
        topo: &Topology,
        router: usize,
        in_port: usize,
        in_vc: usize,
        dst: usize,
        path: u32,
        class_vcs: VcMask,
    ) -> Ways {
        if self.has_other_ways() {
            return self.other_ways(topo, router, in_port, in_vc, dst, path, class_vcs);
        }
        let vcs = class_vcs.count_ones();
        let route = self.route_in_class(topo, router, in_port, in_vc, dst, path, vcs, class_vcs);
        Ways { first: route, second: None, escape: None }
    }

    /// `ways_in_class` of a routing that has other ways (`has_other_ways`): a leaf, so that
    /// `route_in_class`, which takes its `first`, calls nothing that calls it back and
    /// stays inlined in the routing stage.
    #[inline]
    #[allow(clippy::too_many_arguments)] // `route_in_class`'s
    fn other_ways(
        &self,
        topo: &Topology,
        router: usize,
        in_port: usize,
        in_vc: usize,
        dst: usize,
        path: u32,
        class_vcs: VcMask,
    ) -> Ways {
        let (in_rank, size) = (rank(class_vcs, in_vc), class_vcs.count_ones());
        let w = match self {
            Routing::MinAdapt { grid, torus, opts } => {
                min_adapt::route(grid, *torus, *opts, router, in_port, in_rank, dst, size)
            }
            Routing::Lids { table, .. } => {
                table.route_escape(router, topo.ports, in_port, in_rank, dst, path, size)
            }
            _ => unreachable!("a routing without other ways (has_other_ways)"),
        };
        let in_class = |r: Route| Route { port: r.port, vcs: by_rank(class_vcs, r.vcs) };
        Ways { first: in_class(w.first), second: w.second.map(in_class), escape: w.escape.map(in_class) }
    }

    /// The fewest VCs a traffic class with traffic needs for this routing's VC classes:
    /// two on a torus (the dateline pair), one per layer with LID paths, else one.
    pub fn vcs_per_class(&self) -> u32 {
        match self {
            Routing::DorDateline { .. } => 2,
            Routing::Lids { table, .. } => table.layers,
            Routing::Dragonfly { mode, .. } => dragonfly::layers(*mode),
            Routing::FlatFly { mode, turns, .. } if *mode != Mode::Min => flatfly::detour_layers(*turns),
            Routing::FlatFlyTurns { .. } => flatfly::TURN_LAYERS,
            Routing::Oblivious { mode, .. } => oblivious::layers(*mode),
            Routing::CMesh { turns: true, .. } => cmesh::LAYERS,
            Routing::MinAdapt { torus, .. } => min_adapt::escape_vcs(*torus) + 1,
            _ => 1,
        }
    }

    /// The routers and output ports a packet from `src` to `dst` traverses, last hop being
    /// the ejection port. Deterministic routing only: the first allowed VC is followed.
    /// (Every routing the configuration builds reaches every node: see `walk`.)
    pub fn path(&self, topo: &Topology, vcs: u32, src: NodeId, dst: NodeId) -> Vec<(RouterId, u32)> {
        self.walk(topo, vcs, src, dst, 0).unwrap_or_else(|m| panic!("from node {src} to node {dst}: {m:?}"))
    }

    /// `path` along path number `path`, or where the routes go wrong: a forwarding table read from a file may lack
    /// a route, lead to another node or to an unconnected port, or loop (the fabric check
    /// walks every pair here, as admission and the simulator will).
    pub fn walk(
        &self,
        topo: &Topology,
        vcs: u32,
        src: NodeId,
        dst: NodeId,
        path: u32,
    ) -> Result<Vec<(RouterId, u32)>, Misroute> {
        let (mut router, mut in_port) = topo.attach[src.index()];
        let mut in_vc = 0usize;
        let mut hops = Vec::new();
        loop {
            let r = self.route(topo, router.index(), in_port as usize, in_vc, dst.index(), path, vcs);
            if r.port as usize >= topo.ports {
                return Err(Misroute::NoRoute { router });
            }
            hops.push((router, r.port));
            match topo.peer(router.index(), r.port as usize) {
                Peer::Router { router: next, port } => {
                    router = next;
                    in_port = port;
                    in_vc = r.vcs.trailing_zeros() as usize;
                }
                Peer::Endpoint { node } if node == dst => return Ok(hops),
                Peer::Endpoint { .. } => return Err(Misroute::OtherNode { router }),
                Peer::None => return Err(Misroute::Unconnected { router }),
            }
            // (a route that reaches its node visits each router at most once)
            if hops.len() >= topo.routers {
                return Err(Misroute::Loop);
            }
        }
    }
}

/// Where a walk along the routes from one node to another goes wrong (`Routing::walk`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misroute {
    /// Router `router` has no route to the destination.
    NoRoute { router: RouterId },
    /// Router `router` delivers to another node.
    OtherNode { router: RouterId },
    /// Router `router` sends through a port with nothing attached.
    Unconnected { router: RouterId },
    /// The route would visit more routers than the network has (one twice).
    Loop,
}

/// Every node reaches every other along the table, without loops: walked pair by pair
/// as the routing the simulator and admission use (`Routing::walk`).
pub fn check_fabric_routes(t: &Topology, shown: &str) -> Result<(), ConfigError> {
    let Shape::Fabric { routes, .. } = &t.shape else { return Ok(()) };
    let routing = Routing::Table { next: routes.clone(), nodes: t.nodes };
    for src in (0..t.nodes as u32).map(NodeId) {
        for dst in (0..t.nodes as u32).map(NodeId).filter(|&d| d != src) {
            let Err(m) = routing.walk(t, 1, src, dst, 0) else { continue };
            let at =
                |r: RouterId, why: &str| format!("{shown}: from node {src} to node {dst}, switch {r}: {why}");
            let what = match m {
                Misroute::NoRoute { router } => at(router, "no route"),
                Misroute::OtherNode { router } => at(router, "the route ends at another node"),
                Misroute::Unconnected { router } => {
                    at(router, "the route leaves through an unconnected port")
                }
                Misroute::Loop => format!("{shown}: the route from node {src} to node {dst} loops"),
            };
            return Err(ConfigError::new("topology.routes", what));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;

    fn every_path_reaches(topo: &Topology, routing: &Routing) {
        for s in 0..topo.nodes {
            for d in 0..topo.nodes {
                let path = routing.path(topo, 4, NodeId(s as u32), NodeId(d as u32));
                let (r, p) = *path.last().unwrap();
                assert_eq!(topo.peer(r.index(), p as usize), Peer::Endpoint { node: NodeId(d as u32) });
            }
        }
    }

    #[test]
    fn dateline_classes_are_halves_of_each_traffic_class() {
        assert_eq!(dateline_halves(0b1111), (0b0011, 0b1100));
        assert_eq!(dateline_halves(0b1111_0000), (0b0011_0000, 0b1100_0000));
        // an odd count: the lower half rounds down
        assert_eq!(dateline_halves(0b0111_0000), (0b0001_0000, 0b0110_0000));
        assert_eq!(dateline_halves(0b1), (0, 0b1), "one VC: no lower half (validation refuses it)");
        // A 4-ring, 6 VCs: control 0-1, real time 2-3, best effort 4-5.
        let topo = Topology::build(&TopologyConfig::Torus { k: Some(4), n: Some(1), dims: None }).unwrap();
        let ring = Routing::build(RoutingKind::Auto, &topo, 6).unwrap();
        let from_nic = topo.attach[3].1 as usize;
        let route = |router, in_port, in_vc, dst, class| {
            ring.route_in_class(&topo, router, in_port, in_vc, dst, 0, 6, class)
        };
        // x=3 to x=0 goes + over the wrap: the upper half of the class's VCs
        assert_eq!(route(3, from_nic, 0, 0, 0b11_0000).vcs, 0b10_0000);
        assert_eq!(route(3, from_nic, 0, 0, 0b00_1100).vcs, 0b00_1000);
        // x=1 to x=2: no wrap, the lower half
        assert_eq!(route(1, from_nic, 0, 2, 0b11_0000).vcs, 0b01_0000);
        // continuing in the dimension keeps the half it arrived on, within its class
        let plus_in = crate::topology::mesh::minus_port(0);
        assert_eq!(route(0, plus_in, 5, 1, 0b11_0000).vcs, 0b10_0000, "arrived on best effort's upper VC");
        assert_eq!(route(0, plus_in, 4, 1, 0b11_0000).vcs, 0b01_0000, "arrived on its lower VC");
        // at the destination, every VC of the class (a regression ejected on the lower half
        // only: from 2026-11-26 every torus run's ejection had half its VCs)
        let at_dst = topo.attach[2].0.index();
        assert_eq!(route(at_dst, plus_in, 5, 2, 0b11_0000).vcs, 0b11_0000);
        assert_eq!(route(at_dst, plus_in, 2, 2, 0b00_1100).vcs, 0b00_1100);
        // with every VC in the class, the halves are route's own
        for (r, dst) in [(3, 0), (1, 2), (0, 3), (2, 2)] {
            let all = ring.route(&topo, r, from_nic, 0, dst, 0, 6);
            assert_eq!(route(r, from_nic, 0, dst, 0b11_1111), all);
        }
    }

    #[test]
    fn lid_layers_are_taken_within_each_traffic_class() {
        // 3 layers over 9 VCs: layer k is VCs k, k + 3, k + 6; within a class of VCs 3-5
        // it is the class's k-th VC.
        assert_eq!(class_layer(0b1_1111_1111, 3, 1), 0b0_1001_0010);
        assert_eq!(class_layer(0b0_0011_1000, 3, 0), 0b0_0000_1000);
        assert_eq!(class_layer(0b0_0011_1000, 3, 2), 0b0_0010_0000);
        assert_eq!(rank(0b0_0011_1000, 5), 2);
        assert_eq!(rank(0b1, 0), 0);
    }

    /// Three traffic classes on a torus, each with its own dateline pair, run without
    /// deadlock (with halves of all the VCs, control's and best effort's packets that
    /// needed the other half waited forever); and over LID paths, each class with its own
    /// three VC layers.
    #[test]
    fn three_classes_share_a_torus() {
        let toml = "[simulation]\nwarmup = 200\nmeasure = 2000\nwatchdog = 5000\n\
                    [topology]\nkind = \"torus\"\nk = 3\nn = 2\n\
                    [router]\nvcs = 6\nvc_classes = { control = 2, real_time = 2, best_effort = 2 }\n\
                    [[traffic]]\nclass = \"real_time\"\nload = 0.1\nmessage_flits = 12\npacket_flits = 6\n\
                    [[traffic]]\nclass = \"best_effort\"\nload = 0.1\nmessage_flits = 9\npacket_flits = 9\n\
                    [[traffic]]\nclass = \"control\"\nload = 0.02\nmessage_flits = 3\npacket_flits = 3\n";
        let r = crate::Simulation::from_toml(toml, None).unwrap().run().unwrap();
        assert!(r.summary.drain_complete && !r.summary.saturated);
        assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        let lids = toml
            .replace("k = 3\nn = 2", "k = 4\nn = 2\n[routing]\nlmc = 2\nmultipath = { paths = 4 }")
            .replace("vcs = 6", "vcs = 9")
            .replace(
                "control = 2, real_time = 2, best_effort = 2",
                "control = 3, real_time = 3, best_effort = 3",
            );
        let r = crate::Simulation::from_toml(&lids, None).unwrap().run().unwrap();
        assert!(r.summary.drain_complete && !r.summary.saturated, "{lids}");
        assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        let short = lids
            .replace("vcs = 9", "vcs = 6")
            .replace("= 3, real_time = 3, best_effort = 3", "= 2, real_time = 2, best_effort = 2");
        let e = crate::Simulation::from_toml(&short, None).err().expect("refused").to_string();
        assert!(e.contains("router.vc_classes") && e.contains("VC layers need 3 per class"), "{e}");
        // "auto" gives every class the VCs its routing needs: 2 + 2 + 2 on the torus, 3 + 3 + 3
        // over three LID layers (it gave control one, refused since session 19)
        for auto in [toml.to_string(), lids] {
            let auto = auto.replace("\nvc_classes = {", "\n# {");
            let r = crate::Simulation::from_toml(&auto, None).unwrap().run().unwrap();
            assert!(r.summary.drain_complete && !r.summary.saturated, "{auto}");
            assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        }
    }

    #[test]
    fn all_pairs_delivered_on_every_topology() {
        for cfg in [
            TopologyConfig::Star { ports: 8 },
            TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None },
            TopologyConfig::Mesh { k: None, n: None, dims: Some(vec![3, 2, 2]) },
            TopologyConfig::Torus { k: Some(5), n: Some(2), dims: None },
            TopologyConfig::FatTree { k: 4, n: 3 },
            TopologyConfig::FatTree { k: 2, n: 4 },
            TopologyConfig::Cmesh { k: 3, c: None, express_latency: None },
            TopologyConfig::Cmesh { k: 4, c: Some(4), express_latency: Some(4) },
        ] {
            let topo = Topology::build(&cfg).unwrap();
            let routing = Routing::build(RoutingKind::Auto, &topo, 4).unwrap();
            every_path_reaches(&topo, &routing);
        }
    }

    #[test]
    fn hop_counts() {
        let mesh = Topology::build(&TopologyConfig::Mesh { k: Some(8), n: Some(2), dims: None }).unwrap();
        let r = Routing::build(RoutingKind::Auto, &mesh, 16).unwrap();
        // (0,0) -> (7,7): 14 links between routers, 15 routers
        assert_eq!(r.path(&mesh, 16, NodeId(0), NodeId(63)).len(), 15);
        let torus = Topology::build(&TopologyConfig::Torus { k: Some(8), n: Some(2), dims: None }).unwrap();
        let r = Routing::build(RoutingKind::Auto, &torus, 16).unwrap();
        // (0,0) -> (7,7) wraps: 1 + 1 links, 3 routers
        assert_eq!(r.path(&torus, 16, NodeId(0), NodeId(63)).len(), 3);
        let tree = Topology::build(&TopologyConfig::FatTree { k: 4, n: 3 }).unwrap();
        let r = Routing::build(RoutingKind::Auto, &tree, 16).unwrap();
        assert_eq!(r.path(&tree, 16, NodeId(0), NodeId(1)).len(), 1);
        assert_eq!(r.path(&tree, 16, NodeId(0), NodeId(4)).len(), 3);
        assert_eq!(r.path(&tree, 16, NodeId(0), NodeId(63)).len(), 5);
    }

    #[test]
    fn adaptive_nca_takes_the_less_loaded_of_two_drawn_up_ports_at_each_level() {
        // A 4-ary 3-tree: 16 routers a level (0: leaves), up ports 4..8. The draw's lowest
        // base-4 digit is the first port drawn, the next the second.
        let tree = Topology::build(&TopologyConfig::FatTree { k: 4, n: 3 }).unwrap();
        let r = Routing::build(RoutingKind::Anca, &tree, 1).unwrap();
        assert!(r.chooses_at_source() && r.chooses_every_hop());
        let busy = |port: usize| [0, 0, 0, 0, 5, 1, 3, 1][port];
        // at a leaf (level 0): ports 0 and 2 drawn (up 4: 5 in use, up 6: 3): the second;
        // the word's level-1 digit left as it was
        let draw = 2 * 4;
        assert_eq!(r.choose_via(3, 63, draw, busy, 0b11_00), 0b11_10);
        // ports 1 and 3 alike (1 each): the first drawn
        assert_eq!(r.choose_via(3, 63, 3 * 4 + 1, busy, 0), 1);
        // at level 1 (router 16 + 5) the word's digit 1; at the top (level 2) nothing
        assert_eq!(r.choose_via(21, 63, 2 * 4, busy, 0b00_01), 0b10_01);
        assert_eq!(r.choose_via(37, 63, 2 * 4, busy, 0b10_01), 0b10_01);
        // and the route reads the word as NCA's
        let path = r.walk(&tree, 1, NodeId(0), NodeId(63), 0b10_01).unwrap();
        assert_eq!((path[0].1, path[1].1), (4 + 1, 4 + 2));
    }

    #[test]
    fn nca_climbs_to_the_nearest_common_ancestor_by_the_drawn_ports() {
        // A 4-ary 3-tree: 16 words of two base-4 digits, digit l the up port at level l.
        let tree = Topology::build(&TopologyConfig::FatTree { k: 4, n: 3 }).unwrap();
        let r = Routing::build(RoutingKind::Nca, &tree, 1).unwrap();
        assert!(r.chooses_at_source());
        let d_mod_k = Routing::build(RoutingKind::DModK, &tree, 1).unwrap();
        let mut first_up = [0usize; 4];
        for word in 0..16u32 {
            for (src, dst) in [(0, 1), (0, 4), (0, 63), (17, 42)] {
                let path = r.walk(&tree, 1, NodeId(src), NodeId(dst), word).unwrap();
                // (as long as D-mod-K's: up to the nearest common ancestor and down)
                assert_eq!(path.len(), d_mod_k.path(&tree, 1, NodeId(src), NodeId(dst)).len());
                if dst >= 16 {
                    // node 0's leaf sends up port 4 + digit 0 of the word, then 4 + digit 1
                    assert_eq!(path[0].1, 4 + word % 4, "word {word}");
                    assert_eq!(path[1].1, 4 + word / 4, "word {word}");
                    first_up[word as usize % 4] += 1;
                }
            }
        }
        assert_eq!(first_up, [8; 4]);
        // A draw is spread over the words: 2^64 modulo 16 is 0, so the low digits of the
        // draw are the word.
        assert_eq!(r.choose_via(0, 63, 0x1234_5678_9abc_def3, |_| 0, 0), 3);
        // More words than 16 bits hold: refused, naming the field.
        // (the shape alone: a 10-ary 6-tree has 600,000 switches)
        let tree = Topology { shape: Shape::FatTree { k: 10, n: 6 }, ..tree };
        let e = Routing::build(RoutingKind::Nca, &tree, 1).unwrap_err();
        assert_eq!(e.path, "routing.kind");
        assert!(e.message.contains("got 100000 for a 10-ary 6-tree"), "{}", e.message);
        // Likewise Valiant's (and UGAL's) intermediate router on a mesh, torus or flatfly
        // (the shapes alone: 256 x 256 routers)
        let big = |shape| Topology { shape, routers: 65_536, ..tree.clone() };
        for (topo, kind) in [
            (big(Shape::Mesh { dims: vec![256, 256] }), RoutingKind::Valiant),
            (big(Shape::Torus { dims: vec![256, 256] }), RoutingKind::Valiant),
            (
                big(Shape::FlatFly(crate::topology::flatfly::FlatFly { k: 256, n: 2, c: 1 })),
                RoutingKind::Ugal,
            ),
        ] {
            let e = Routing::build(kind, &topo, 4).unwrap_err();
            assert_eq!(e.path, "routing.kind");
            assert!(e.message.contains("fewer than 65535 routers"), "{}", e.message);
            assert!(e.message.contains("got 65536; use \"dor\""), "{}", e.message);
        }
        // BookSim2's dragonfly UGAL through a router (a = 64, h = 32: 2049 groups of 64)
        let d = crate::topology::dragonfly::Dragonfly { a: 64, p: 1, h: 32 };
        let e = Routing::build(RoutingKind::UgalRouter, &big(Shape::Dragonfly(d)), 3).unwrap_err();
        assert!(e.message.contains("got 65536; use \"ugal\""), "{}", e.message);
    }

    /// A forwarding table (as read from a fabric's files) for `topo`, copied from its
    /// dimension-order routes.
    fn table_of(topo: &Topology) -> Vec<u8> {
        let dor = Routing::build(RoutingKind::Auto, topo, 1).unwrap();
        (0..topo.routers)
            .flat_map(|r| (0..topo.nodes).map(move |d| (r, d)))
            .map(|(r, d)| dor.route(topo, r, 0, 0, d, 0, 1).port as u8)
            .collect()
    }

    #[test]
    fn walks_name_where_a_table_goes_wrong() {
        // three routers in a line, node i on router i
        let line = Topology::build(&TopologyConfig::Mesh { k: Some(3), n: Some(1), dims: None }).unwrap();
        let good = table_of(&line);
        let walk = |next: &[u8], s, d| {
            Routing::Table { next: next.to_vec(), nodes: 3 }.walk(&line, 1, NodeId(s), NodeId(d), 0)
        };
        assert_eq!(
            walk(&good, 0, 2),
            Ok(Routing::build(RoutingKind::Auto, &line, 1).unwrap().path(&line, 1, NodeId(0), NodeId(2)))
        );
        let mut t = good.clone();
        t[3 + 2] = u8::MAX; // router 1 has no route to node 2
        assert_eq!(walk(&t, 0, 2), Err(Misroute::NoRoute { router: RouterId(1) }));
        let mut t = good.clone();
        t[3 + 2] = good[3]; // router 1 sends node 2's packets back toward node 0
        assert_eq!(walk(&t, 0, 2), Err(Misroute::Loop));
        let edge = (0..line.ports).find(|&p| line.peer(0, p) == Peer::None).unwrap();
        let mut t = good.clone();
        t[2] = edge as u8; // router 0 sends node 2's packets off the end of the line
        assert_eq!(walk(&t, 0, 2), Err(Misroute::Unconnected { router: RouterId(0) }));
        let mut t = good.clone();
        t[3 + 2] = good[3 + 1]; // router 1 delivers node 2's packets to node 1
        assert_eq!(walk(&t, 0, 2), Err(Misroute::OtherNode { router: RouterId(1) }));
    }
}

//! Network topologies: which router port connects to which router port or endpoint.
//!
//! A topology is a plain table built once: `peer[router * ports + port]`. Every router of a
//! topology has the same number of ports. Coordinates (for mesh/torus patterns and routing)
//! live in [`Shape`].

mod anynet;
pub(crate) mod cmesh;
pub(crate) mod dragonfly;
pub(crate) mod fat_tree;
pub(crate) mod flatfly;
mod fly;
pub mod ib_fabric;
pub(crate) mod mesh;
mod star;

use crate::config::TopologyConfig;
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

/// Routers have at most this many ports (a VC allocator request names its input port in 6
/// bits, and per-port masks are 64 bits wide).
pub const MAX_PORTS: usize = 64;

/// What is at the other end of a router port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    None,
    Router { router: RouterId, port: u32 },
    Endpoint { node: NodeId },
}

/// The geometric description routing and traffic patterns need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Star {
        ports: u32,
    },
    /// `dims[0]` is the fastest-varying coordinate of the router/node index.
    Mesh {
        dims: Vec<u32>,
    },
    Torus {
        dims: Vec<u32>,
    },
    FatTree {
        k: u32,
        n: u32,
    },
    /// Groups of routers joined by global channels (`dragonfly.rs`).
    Dragonfly(dragonfly::Dragonfly),
    /// A k-ary n-flat with concentration c (`flatfly.rs`).
    FlatFly(flatfly::FlatFly),
    /// A k-ary n-fly (butterfly), n stages of k^(n-1) routers: nodes inject at stage 0 and
    /// eject at stage n-1 (`fly.rs`).
    Fly {
        k: u32,
        n: u32,
    },
    /// A k x k mesh of routers with 2 x 2 nodes each and express channels on its edges, as
    /// BookSim2's `cmesh` (`cmesh.rs`).
    CMesh(cmesh::CMesh),
    /// A real fabric from its dump: `routes[router * nodes + node]` is the output port
    /// toward `node` (its forwarding tables, or minimal-hop routes).
    Fabric {
        routes: Vec<u8>,
        /// The HCA ports' LMC where the dump gives their LID ranges (`[routing] lmc`
        /// defaults to it).
        lmc: Option<u8>,
    },
}

impl Shape {
    /// The topology kind as written in configuration files.
    pub fn name(&self) -> &'static str {
        match self {
            Shape::Star { .. } => "star",
            Shape::Mesh { .. } => "mesh",
            Shape::Torus { .. } => "torus",
            Shape::FatTree { .. } => "fat_tree",
            Shape::Dragonfly(_) => "dragonfly",
            Shape::FlatFly(_) => "flatfly",
            Shape::Fly { .. } => "fly",
            Shape::CMesh(_) => "cmesh",
            Shape::Fabric { .. } => "ib_fabric",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub shape: Shape,
    pub routers: usize,
    pub ports: usize,
    pub nodes: usize,
    /// `peer[router * ports + port]`.
    pub peer: Vec<Peer>,
    /// Per node: (router, port) it injects into.
    pub attach: Vec<(RouterId, u32)>,
    /// Per node: (router, port) it ejects from: `attach` but on a fly, whose nodes inject
    /// at its first stage and eject at its last.
    pub eject: Vec<(RouterId, u32)>,
    /// Per node, its name in a fabric dump (empty for generated topologies).
    pub names: Vec<String>,
    /// Per (router * ports + port), the outgoing link's data rate in b/s when the fabric
    /// says (empty: every link runs at `[physical] link_bandwidth`). Admission control uses
    /// it; the simulator runs every link at one flit per cycle.
    pub link_bps: Vec<f64>,
    /// Per (router * ports + port), the link's latency in cycles where the topology sets
    /// one (a dragonfly's global channels), 0 where `[router] link_latency` holds; empty
    /// when it holds for every link. Its credits take as much longer.
    pub link_cycles: Vec<u32>,
}

/// Upper bound on routers, to refuse configurations that cannot fit in memory.
pub(crate) const MAX_ROUTERS: u64 = 1 << 20;

impl Topology {
    /// Build the topology (of a kind that names no file; see `build_in`).
    pub fn build(cfg: &TopologyConfig) -> Result<Topology, ConfigError> {
        Self::build_in(cfg, &crate::config::Files::local(None))
    }

    /// Build the topology; the files it names are read through `files`.
    pub fn build_in(cfg: &TopologyConfig, files: &crate::config::Files) -> Result<Topology, ConfigError> {
        match cfg {
            TopologyConfig::IbFabric { file, format, routes } => {
                let read = files.read("topology.file", file)?;
                // (the resolver's own refusal stands as it is: it quotes no file)
                let refused = std::cell::RefCell::new(None);
                let tables = routes.as_ref().map(|dir| {
                    || {
                        files.read_dir("topology.routes", dir).inspect_err(|e| {
                            refused.replace(Some(e.clone()));
                        })
                    }
                });
                let tables = tables.as_ref().map(|f| f as ib_fabric::ReadRoutes);
                ib_fabric::build(&read.text, *format, tables, &read.shown).map_err(|e| {
                    if let Some(e) = refused.take() {
                        return e;
                    }
                    // (a message about the routes directory names the directory)
                    let (shown, what) = match (&routes, e.path.as_str()) {
                        (Some(dir), "topology.routes") => (dir.shown(), "set of forwarding tables"),
                        _ => (read.shown.clone(), "fabric description"),
                    };
                    files.about_contents(e, &shown, what)
                })
            }
            TopologyConfig::Anynet { file } => {
                let read = files.read("topology.file", file)?;
                anynet::build(&read.text, &read.shown)
                    .map_err(|e| files.about_contents(e, &read.shown, "network file"))
            }
            TopologyConfig::Star { ports } => star::build(*ports),
            TopologyConfig::Mesh { k, n, dims } => mesh::build(mesh_dims(*k, *n, dims.as_deref())?, false),
            TopologyConfig::Torus { k, n, dims } => mesh::build(mesh_dims(*k, *n, dims.as_deref())?, true),
            TopologyConfig::FatTree { k, n } => fat_tree::build(*k, *n),
            TopologyConfig::Fly { k, n } => fly::build(*k, *n),
            TopologyConfig::Flatfly { k, n, c, placement } => flatfly::build(*k, *n, *c, placement.as_ref()),
            TopologyConfig::Cmesh { k, c, express_latency } => cmesh::build(*k, *c, *express_latency),
            TopologyConfig::Dragonfly { a, p, h, global_latency } => {
                dragonfly::build(*a, *p, *h, *global_latency)
            }
        }
    }

    /// The longest latency the topology sets for some of its links (`link_cycles`), 0
    /// where `[router] link_latency` holds for all (the timing wheels and the watchdog
    /// must cover it).
    pub fn longest_link(&self) -> u32 {
        self.link_cycles.iter().copied().max().unwrap_or(0)
    }

    #[inline]
    pub fn peer(&self, router: usize, port: usize) -> Peer {
        self.peer[router * self.ports + port]
    }

    /// Side lengths of a mesh/torus, the 2k x 2k node grid of a concentrated mesh (whose
    /// tornado and neighbour step its node coordinates, as BookSim2's with xr = 2), or
    /// `[nodes]` for other shapes (1-D view for patterns).
    pub fn dims(&self) -> Vec<u32> {
        match &self.shape {
            Shape::Mesh { dims } | Shape::Torus { dims } => dims.clone(),
            Shape::CMesh(m) => vec![2 * m.k; 2],
            _ => vec![self.nodes as u32],
        }
    }

    /// Build from its parts, checking that every link is symmetric. A node is at one port
    /// (`attach` and `eject` alike) or, on a fly, at two: it injects at the first in index
    /// order and ejects at the second.
    fn from_parts(shape: Shape, routers: usize, ports: usize, peer: Vec<Peer>) -> Topology {
        const UNSET: (RouterId, u32) = (RouterId(u32::MAX), u32::MAX);
        let (mut attach, mut eject) = (Vec::new(), Vec::new());
        for (i, p) in peer.iter().enumerate() {
            if let Peer::Endpoint { node } = *p {
                let node = node.index();
                if attach.len() <= node {
                    attach.resize(node + 1, UNSET);
                    eject.resize(node + 1, UNSET);
                }
                let at = (RouterId((i / ports) as u32), (i % ports) as u32);
                if attach[node] == UNSET {
                    attach[node] = at;
                } else {
                    debug_assert_eq!(attach[node], eject[node], "node {node} at three ports");
                }
                eject[node] = at;
            }
        }
        let t = Topology {
            shape,
            routers,
            ports,
            nodes: attach.len(),
            peer,
            attach,
            eject,
            names: Vec::new(),
            link_bps: Vec::new(),
            link_cycles: Vec::new(),
        };
        debug_assert!(t.is_symmetric());
        t
    }

    /// Give the links for which `long(router, port)` holds `cycles` of latency of their own
    /// (`link_cycles`: a dragonfly's global channels, a concentrated mesh's express ones),
    /// refusing a latency out of range under the key `path`.
    fn set_long_links(
        &mut self,
        path: &str,
        cycles: u32,
        long: impl Fn(usize, usize) -> bool,
    ) -> Result<(), ConfigError> {
        if !(1..=10_000).contains(&cycles) {
            return Err(ConfigError::new(
                path,
                format!("must be a whole number of cycles in 1..=10000, got {cycles}"),
            ));
        }
        let ports = self.ports;
        self.link_cycles =
            (0..self.routers * ports).map(|i| if long(i / ports, i % ports) { cycles } else { 0 }).collect();
        Ok(())
    }

    fn is_symmetric(&self) -> bool {
        (0..self.routers).all(|r| {
            (0..self.ports).all(|p| match self.peer(r, p) {
                Peer::Router { router, port } => {
                    self.peer(router.index(), port as usize)
                        == Peer::Router { router: RouterId(r as u32), port: p as u32 }
                }
                Peer::Endpoint { node } => {
                    let at = (RouterId(r as u32), p as u32);
                    self.attach[node.index()] == at || self.eject[node.index()] == at
                }
                Peer::None => true,
            })
        })
    }
}

fn mesh_dims(k: Option<u32>, n: Option<u32>, dims: Option<&[u32]>) -> Result<Vec<u32>, ConfigError> {
    let dims = match (k, n, dims) {
        (Some(k), Some(n), None) => {
            if n == 0 || n > 8 {
                return Err(ConfigError::new("topology.n", format!("must be in 1..=8, got {n}")));
            }
            vec![k; n as usize]
        }
        (None, None, Some(d)) => {
            if d.is_empty() || d.len() > 8 {
                return Err(ConfigError::new(
                    "topology.dims",
                    format!("must list 1 to 8 side lengths, got {}", d.len()),
                ));
            }
            d.to_vec()
        }
        _ => {
            return Err(ConfigError::new(
                "topology",
                "give both `k` and `n` (a k-ary n-cube) or only `dims` (side lengths per dimension)",
            ))
        }
    };
    for (i, &d) in dims.iter().enumerate() {
        if d < 2 {
            let path = if k.is_some() { "topology.k".to_string() } else { format!("topology.dims[{i}]") };
            return Err(ConfigError::new(path, format!("must be >= 2, got {d}")));
        }
    }
    let total: u64 = dims.iter().map(|&d| d as u64).product();
    if total > MAX_ROUTERS {
        return Err(ConfigError::new(
            "topology",
            format!("{total} routers is more than the supported {MAX_ROUTERS}"),
        ));
    }
    Ok(dims)
}

//! `[topology]`: the network's shape (star, mesh, torus, fat tree, butterfly, dragonfly,
//! flattened butterfly, concentrated mesh, a real InfiniBand fabric).

use super::FilePath;
use serde::{Deserialize, Serialize};

tagged_enum! {
    #[derive(Clone, Debug, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum TopologyConfig {
        /// One router with `ports` endpoint ports (document 003's 8-port router).
        Star {
            /// Endpoint ports of the router (document 003: 8).
            ports: u32,
        },
        /// k-ary n-mesh (or `dims` for unequal sides), one endpoint per router.
        Mesh {
            /// Routers per dimension.
            #[serde(default)]
            k: Option<u32>,
            /// Dimensions.
            #[serde(default)]
            n: Option<u32>,
            /// Routers in each dimension, for unequal sides (`[8, 4]`), instead of `k`, `n`.
            #[serde(default)]
            dims: Option<Vec<u32>>,
        },
        /// k-ary n-torus (or `dims`), one endpoint per router.
        Torus {
            /// Routers per dimension.
            #[serde(default)]
            k: Option<u32>,
            /// Dimensions.
            #[serde(default)]
            n: Option<u32>,
            /// Routers in each dimension, for unequal sides (`[8, 4]`), instead of `k`, `n`.
            #[serde(default)]
            dims: Option<Vec<u32>>,
        },
        /// k-ary n-tree: k^n endpoints, n levels of k^(n-1) switches with 2k ports.
        FatTree {
            /// Arity: each switch has k ports down and k up.
            k: u32,
            /// Levels of switches.
            n: u32,
        },
        /// k-ary n-fly, a butterfly (BookSim2's `fly`): k^n nodes, n stages of k^(n-1)
        /// k x k routers, channels one way from a stage to the next; node i injects at
        /// stage 0's router i div k and ejects from the last stage's router i div k.
        /// Routing `dest_tag`.
        Fly {
            /// Radix: each router has k inputs and k outputs (at most 32).
            k: u32,
            /// Stages.
            n: u32,
        },
        /// Dragonfly (Kim, Dally, Scott & Abts, ISCA 2008): `a*h + 1` groups of `a` routers,
        /// each router with `p` terminals, a local channel to every other router of its group
        /// and `h` global channels, one between every pair of groups (BookSim2's
        /// `dragonflynew` numbering and arrangement; its `k` is p = h with a = 2p).
        Dragonfly {
            /// Routers per group (a balanced dragonfly has a = 2p = 2h).
            a: u32,
            /// Terminals (endpoints) per router.
            p: u32,
            /// Global channels per router.
            h: u32,
            /// Cycles a global channel takes, its flits and its credits alike (default:
            /// `router.link_latency`, as the local channels). BookSim2's `dragonflynew`
            /// fixes 100 (its local channels 10): global channels are long cables.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            global_latency: Option<u32>,
        },
        /// Flattened butterfly (Kim, Dally & Abts, ISCA 2007): a k-ary n-flat, k^n routers
        /// with `c` terminals each, every router joined to the k - 1 others that differ
        /// from it in one coordinate, in each dimension (BookSim2's `flatfly` numbering).
        Flatfly {
            /// Routers per dimension.
            k: u32,
            /// Dimensions.
            n: u32,
            /// Terminals (endpoints) per router: the concentration.
            c: u32,
            /// The routers laid out on a chip, each channel between routers as many cycles
            /// long as its routers lie apart (BookSim2's `use_noc_latency`); its credits
            /// alike. Default: every channel `router.link_latency`.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            placement: Option<FlatflyPlacement>,
        },
        /// Concentrated mesh, as BookSim2's `cmesh`: a k x k mesh of routers, each with a
        /// 2 x 2 block of nodes on a 2k x 2k grid (node `row * 2k + col`, BookSim2's
        /// numbering), and for even k express channels joining each edge router's port off
        /// the mesh to the edge router k/2 along that edge (used by routing `dor_express`).
        Cmesh {
            /// Routers per side.
            k: u32,
            /// Nodes per router: 4, the only concentration of BookSim2's cmesh (may be left out).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            c: Option<u32>,
            /// Cycles an express channel takes, its flits and its credits alike (default:
            /// `router.link_latency`, as the mesh channels). BookSim2's `use_noc_latency`
            /// gives them k cycles, the mesh channels 2.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            express_latency: Option<u32>,
        },
        /// A real InfiniBand fabric: `file` is its `ibnetdiscover -p` ports report or an ibsim
        /// net file (`format`, inferred from the file when absent), `routes` (optional, ports
        /// reports only) a directory of its switches' `ibroute` forwarding tables.
        IbFabric {
            /// The fabric: an `ibnetdiscover -p` ports report (e.g.
            /// `data/ib-topologies/netloc-avakas/ib-subnet-*.txt`) or an ibsim net file.
            /// Link rates (width x speed) are kept for admission control; the simulator runs
            /// every link at `physical.link_bandwidth`.
            file: FilePath,
            /// How `file` is written; default: its first record decides (`Switch`/`Hca`: ibsim).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            format: Option<IbFabricFormat>,
            /// A directory of the switches' `ibroute` forwarding tables (ports reports only);
            /// without it, minimal-hop routes spread over equal ports.
            #[serde(default)]
            routes: Option<FilePath>,
        },
        /// Any network, as BookSim2's `anynet` file lists it (`network_file`): lines such as
        /// `router 0 node 0 node 1 router 1`; minimal-hop routes (`topology/anynet.rs`).
        Anynet {
            /// The network file, in BookSim2's anynet format.
            file: FilePath,
        },
    }
}

/// A flattened butterfly on a chip (BookSim2's flatfly_onchip.cpp): router r at column
/// r mod `columns` and row r div `columns`, each a tile of `tile[0]` by `tile[1]` nodes (its
/// `c` terminals), a node's pitch a cycle of wire. A channel between routers takes
/// `tile[0]` cycles per column and `tile[1]` per row between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlatflyPlacement {
    /// Routers per row of the layout (BookSim2's `x`).
    pub columns: u32,
    /// A router's tile in nodes, across and down (BookSim2's `xr`, `yr`): the product is
    /// the router's terminals, `c`.
    pub tile: [u32; 2],
}

/// How an `ib_fabric` file is written (`topology::ib_fabric` documents both).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IbFabricFormat {
    /// The ports report of `ibnetdiscover -p`.
    Ibnetdiscover,
    /// The net file of linux-rdma's ibsim (`Switch|Hca <ports> "id"` records).
    Ibsim,
}

/// By hand, for a message that lists the two formats as they are written.
impl<'de> Deserialize<'de> for IbFabricFormat {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "ibnetdiscover" => Ok(Self::Ibnetdiscover),
            "ibsim" => Ok(Self::Ibsim),
            _ => Err(serde::de::Error::custom(format!(
                "must be \"ibnetdiscover\" or \"ibsim\", got {}",
                crate::error::clip(&format!("{s:?}"))
            ))),
        }
    }
}

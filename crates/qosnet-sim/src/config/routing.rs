//! `[routing]`: the routing function, LID paths and multipath (DRB).

use crate::units::Duration;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoutingKind {
    /// The topology's natural deterministic routing.
    #[default]
    Auto,
    /// Dimension order (mesh, flattened butterfly, concentrated mesh without its express
    /// channels); on a torus, minimal dimension order without dateline
    /// classes, which can deadlock (for studying deadlock).
    Dor,
    /// Dimension order with dateline VC classes (torus).
    DorDateline,
    /// Dimension order over a concentrated mesh's express channels too (BookSim2's `dor`
    /// on a `cmesh`; `dor` there is its `dor_no_express`).
    DorExpress,
    /// Deterministic up/down, D-mod-K up-port choice (fat tree).
    DModK,
    /// Nearest common ancestor on a fat tree (BookSim2's `nca`): up through a port drawn
    /// uniformly at each level for each packet, then down the only way.
    Nca,
    /// Adaptive nearest common ancestor on a fat tree (BookSim2's `anca`): at each router
    /// on the way up, the less loaded (fewer credits in use) of two up ports drawn
    /// uniformly, then down the only way.
    Anca,
    /// The single router of a star.
    Direct,
    /// Destination-tag routing on a k-ary n-fly (BookSim2's `dest_tag`): stage s takes
    /// output digit n-1-s of the destination, written in base k.
    DestTag,
    /// A fabric's forwarding tables (minimal-hop routes without them).
    Lft,
    /// Minimal routing on a dragonfly (two VC layers: the layer rises at the global hop).
    Min,
    /// Valiant: through a random intermediate group of a dragonfly (three VC layers), or a
    /// random intermediate router of a flattened butterfly or mesh (two VC layers) or torus
    /// (four: each phase on its own dateline pair, BookSim2's `valiant_torus`).
    Valiant,
    /// UGAL-L: at the source router, minimal unless its output queue times its hops
    /// exceeds a Valiant path's by more than a bias (a dragonfly: 30 flits, three VC
    /// layers; a flattened butterfly: 2 flits, its intermediate drawn in the dimensions
    /// source and destination differ in, two VC layers; BookSim2's).
    Ugal,
    /// UGAL-L on a dragonfly as BookSim2's `ugal_dragonflynew` makes it: the detour through
    /// a random intermediate *router* (Kim et al. §4.1's is a group), taken when the
    /// minimal output's queue exceeds twice the detour's plus 30 flits, and each phase on
    /// its own VC (to the intermediate router 0, from it to the global hop 1, from there
    /// 2; three VCs). Its VC 0 leg (local, global, local in the intermediate group) can in
    /// principle close a cycle of waits between groups, which `ugal`'s layers rule out:
    /// a deadlock, if one forms, is reported by the watchdog.
    UgalRouter,
    /// UGAL-L with O1TURN on a flattened butterfly (BookSim2's `ugal_xyyx`): `ugal`'s
    /// choice with every phase in one dimension order drawn at the source, ascending or
    /// descending, and that order's first hops' queues weighed; four VC layers (each order's
    /// two phases).
    UgalXyYx,
    /// Minimal adaptive on a mesh or torus: any minimal direction on a class's adaptive
    /// VCs, dimension order on its escape VCs (the first on a mesh, the dateline pair on a
    /// torus) once taken (Duato's protocol; `routing/min_adapt.rs`). BookSim2's
    /// `min_adapt` as it ships offers the first direction alone: `min_adapt` below.
    MinAdapt,
    /// O1TURN on a mesh, concentrated mesh or flattened butterfly (BookSim2's `xy_yx`,
    /// `xy_yx_no_express`, `xyyx`): half the packets, drawn at the source, in dimension
    /// order lowest dimension first, the other half highest first, each order on its own VC
    /// layer (two).
    XyYx,
    /// O1TURN with the order chosen at the source router by its two first hops' queues
    /// (BookSim2's `adaptive_xy_yx` on a mesh, `adaptive_xyyx` on a flattened butterfly):
    /// XY where its output port has fewer flits waiting
    /// downstream than YX's, YX where more, drawn on a tie; each order on its VC layer.
    AdaptiveXyYx,
    /// O1TURN on a concentrated mesh over its express channels too (BookSim2's `xy_yx` on
    /// a `cmesh`; `xy_yx` there is its `xy_yx_no_express`).
    XyYxExpress,
}

impl RoutingKind {
    /// The spelling used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Dor => "dor",
            Self::DorDateline => "dor_dateline",
            Self::DorExpress => "dor_express",
            Self::DModK => "d_mod_k",
            Self::Nca => "nca",
            Self::Anca => "anca",
            Self::Direct => "direct",
            Self::DestTag => "dest_tag",
            Self::Lft => "lft",
            Self::Min => "min",
            Self::Valiant => "valiant",
            Self::Ugal => "ugal",
            Self::UgalRouter => "ugal_router",
            Self::UgalXyYx => "ugal_xy_yx",
            Self::MinAdapt => "min_adapt",
            Self::XyYx => "xy_yx",
            Self::AdaptiveXyYx => "adaptive_xy_yx",
            Self::XyYxExpress => "xy_yx_express",
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingConfig {
    /// The deterministic routing function (LID 0's, with `lmc`).
    pub kind: RoutingKind,
    /// Several paths per destination, chosen at the source per message (none: one path).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub multipath: Option<MultipathConfig>,
    /// The subnet manager's LID mask control (IBA, document 002 §3-4) on a mesh, torus or
    /// `ib_fabric`: each CA port gets 2^lmc LIDs (0..=7), LID 0 along `kind`'s routing and
    /// the others disjoint paths found by depth-first search (`routing/lid_paths.rs`);
    /// `multipath.paths` of them are used. None: one path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lmc: Option<u8>,
    /// With `lmc`: how many hops longer than the shortest a DFS path may be.
    pub slack: u32,
    /// With `lmc`: how the LID paths share the VCs without deadlock.
    // (skipped when default, so configurations written before it hash as they did; the
    // schema's default is then given by hand, as schemars omits it)
    #[serde(skip_serializing_if = "LidVcs::is_default")]
    #[schemars(extend("default" = "layers"))]
    pub lid_vcs: LidVcs,
    /// With `kind = "min_adapt"`: which minimal directions its adaptive VCs offer and when
    /// the escape is asked for (`routing/min_adapt.rs`). None: every minimal direction,
    /// the escape when none has a VC free (Duato's protocol).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_adapt: Option<MinAdaptConfig>,
    /// On a torus (`dor_dateline`, `valiant`): how a packet half a ring from its target
    /// (k even, distance k/2) picks its direction (`TorusTies`). Default `parity`.
    // (skipped when default, so configurations written before it hash as they did)
    #[serde(skip_serializing_if = "TorusTies::is_default")]
    pub torus_ties: TorusTies,
}

/// How dimension order on a torus breaks a tie: a packet k/2 hops from its target in a
/// dimension of even k, where both directions are minimal (`routing/dor.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TorusTies {
    /// Toward + from an even coordinate, - from an odd one: the ties of uniform traffic split
    /// evenly over the two directions, the same way every time.
    #[default]
    Parity,
    /// A draw for each packet as it turns into the dimension, as BookSim2's
    /// `dor_next_torus` (its `dim_order_torus`, `valiant_torus`) draws: drawn at the source
    /// router with the packet's way, one bit a dimension (and a phase, for Valiant). With
    /// Valiant the intermediate router and the bits share 16 bits: at most
    /// 2^(16 - 2n) - 1 routers.
    Random,
}

impl TorusTies {
    fn is_default(&self) -> bool {
        *self == TorusTies::Parity
    }
}

/// `[routing] min_adapt`: the two ways BookSim2's `min_adapt` differs from Duato's
/// minimal adaptive routing as BookSim2 ships it (commit 28f43299). Its routing function
/// adds every minimal direction to an output set, but the set (`outputset.hpp`, a
/// `std::set` ordered by priority alone) keeps one element per priority: the second
/// direction, of the first's priority, is dropped, so only the lowest dimension still to
/// cross is offered (`directions = "first"`). And its iSLIP VC allocator ignores the
/// priorities that put the escape last, asking for the escape VC as for any other: qosnet's
/// `router.vc_allocator = "islip"` does the same with any `escape`, and `escape =
/// "alongside"` approximates it with the output-port allocator. `qosnet run FILE.cfg` sets
/// `directions` and the VC allocator; results/crosscheck/FINDINGS.md has the measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MinAdaptConfig {
    pub directions: MinAdaptDirections,
    pub escape: EscapeRequest,
}

/// Which minimal directions `min_adapt`'s adaptive VCs offer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MinAdaptDirections {
    /// Every minimal direction still to cross (at most two at a hop).
    #[default]
    All,
    /// The lowest dimension still to cross alone, as BookSim2's `min_adapt` as shipped:
    /// dimension order on the adaptive VCs too, so a header chooses among VCs, not ways.
    First,
}

/// When `min_adapt`'s VC allocation asks for the escape VC, with the output-port VC
/// allocator (`router.vc_allocator`; the iSLIP one asks for every way at once, so this
/// makes no difference there).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EscapeRequest {
    /// Only when no adaptive VC is free (the routing's priorities, which BookSim2's
    /// separable allocators honour).
    #[default]
    Last,
    /// Among the adaptive VCs, as one of them, handed out by `vc_selection` whatever its
    /// priority (an approximation of BookSim2's iSLIP VC allocator, which
    /// `router.vc_allocator = "islip"` models). Needs `directions = "first"`: the escape is
    /// then on the adaptive way's port.
    Alongside,
}

impl Default for RoutingConfig {
    fn default() -> Self {
        Self {
            kind: RoutingKind::default(),
            multipath: None,
            lmc: None,
            slack: 2,
            lid_vcs: LidVcs::default(),
            min_adapt: None,
            torus_ties: TorusTies::Parity,
        }
    }
}

/// `[routing] multipath = { paths, selection }`: how many paths each destination has (as a
/// subnet manager gives each port 2^LMC addresses, document 002 §2.1) and how a source
/// spreads its messages over them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultipathConfig {
    pub paths: u32,
    #[serde(default)]
    pub selection: PathSelection,
    /// DRB's contraction timer (`selection = "drb"`): each period without a congestion
    /// notification closes the flow's last opened path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contraction_timer: Option<Duration>,
    /// How DRB spreads messages over its open paths (`selection = "drb"`).
    #[serde(default, skip_serializing_if = "DrbSplit::is_default")]
    #[schemars(extend("default" = "inverse_notifications"))]
    pub split: DrbSplit,
}

/// How the paths of several LIDs per destination avoid deadlock (`[routing] lid_vcs`,
/// `routing/lid_paths.rs`). Document 002 gives its switches three VCs per port and says no
/// more; both are ways a subnet manager or a switch could keep DFS paths deadlock free.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LidVcs {
    /// Each path keeps to VC classes whose channel dependency graph is acyclic: on a torus
    /// the dateline classes where they are proved acyclic, else one class per wrap-around
    /// link crossed (with 3 VCs, one VC per hop); on a fabric, a layer per path (as
    /// OpenSM's DFSSSP gives each path a service level).
    #[default]
    Layers,
    /// An escape VC in the style of Duato's protocol: the paths run freely on a class's VCs
    /// beyond the first (mesh, fabric) or first two (torus), which carry LID 0's own routing
    /// (dimension order, with its dateline pair on a torus) as an escape; a header may take
    /// the escape at any hop and then keeps to it. Deadlock free when LID 0's routing is
    /// (checked: its channel dependencies from every switch, acyclic).
    Escape,
}

impl LidVcs {
    fn is_default(&self) -> bool {
        *self == LidVcs::default()
    }

    /// The spelling used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Layers => "layers",
            Self::Escape => "escape",
        }
    }
}

/// How DRB spreads a flow's messages over its open paths (`[routing] multipath.split`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DrbSplit {
    /// In inverse proportion to the notifications each path received (document 002 §4:
    /// "inversamente proporcional a dicha distribución").
    #[default]
    InverseNotifications,
    /// In turn over the open paths, notifications only opening them (a variant, to tell
    /// what the split adds to the opening).
    RoundRobin,
}

impl DrbSplit {
    fn is_default(&self) -> bool {
        *self == DrbSplit::default()
    }
}

/// How a source picks the path of each message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathSelection {
    /// Each flow's messages take the paths in turn (oblivious spreading).
    #[default]
    ByMessage,
    /// Flow f always takes path f mod paths (a static assignment, as LIDs per flow).
    ByFlow,
    /// DRB (document 002 §2.1, §4): path 0 until congestion notifications (CNPs for
    /// FECN-marked packets, `[router] marking`) open the others one by one; messages spread
    /// over the open paths inversely to their notifications; each `contraction_timer`
    /// without a notification closes the last opened path.
    Drb,
}

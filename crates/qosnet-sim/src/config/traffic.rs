//! `[[traffic]]` and `[mix]`: the sources' classes, processes, patterns, node sets, Vticks and
//! reservations, and the real-time : best-effort mix in phases.

use super::{video, FilePath};
use crate::units::{Bandwidth, Duration};
use serde::{Deserialize, Serialize};

#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TrafficClass {
    Control,
    RealTime,
    #[default]
    BestEffort,
}

impl TrafficClass {
    pub const ALL: [TrafficClass; 3] = [Self::Control, Self::RealTime, Self::BestEffort];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Control => "control",
            Self::RealTime => "real_time",
            Self::BestEffort => "best_effort",
        }
    }
}

tagged_enum! {
    /// When a source creates messages (the temporal process). Registered once here; built in
    /// `build::validate` into a `traffic::ProcessSpec`.
    #[derive(Clone, Debug, PartialEq, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum Process {
        /// Exponential inter-arrival times (document 003 §4.2 best effort).
        Poisson,
        /// Each cycle a message with probability rate / message size.
        Bernoulli,
        /// One message every `period` (document 003 §4.2 control traffic: one per 33.3 ms),
        /// from a random offset within the first period. Gives the rate: no `load`/`rate`.
        Periodic {
            /// Time between messages.
            period: Duration,
        },
        /// ON/OFF stream to one destination (document 000 §5.2): messages evenly spaced during
        /// ON periods, none during OFF; `on`/`off` are mean lengths (exponential) or fixed.
        OnOff {
            /// Mean (or fixed) length of an ON period.
            on: Duration,
            /// Mean (or fixed) length of an OFF period.
            off: Duration,
            /// Exponentially distributed periods (false: fixed lengths).
            #[serde(default = "yes")]
            exponential: bool,
        },
        /// Markov-modulated Bernoulli (BookSim2's `injection_process = on_off`): each source
        /// is ON or OFF, switching once a cycle so that ON and OFF periods are geometric with
        /// means `on` and `off`; while ON, a message each cycle with the probability that
        /// gives the mean `load`, each to a destination of the pattern.
        MarkovOnOff {
            /// Mean length of an ON period (at least one cycle; BookSim2's 1/burst_beta).
            on: Duration,
            /// Mean length of an OFF period (at least one cycle; BookSim2's 1/burst_alpha).
            off: Duration,
        },
        /// VBR video (document 003 §4.2): streams to one destination each, one frame every
        /// 1/`frame_rate`, frames cut into messages. Frame sizes from `traces` (EvalVid `st_*`,
        /// LTE-Sim `.dat`, or one value per line; stream i uses trace i mod n, from a random
        /// frame), each rescaled to `mean_rate` if given (`scale`: `"each"`; `"own"` keeps
        /// each trace's own rate, `"common"` one factor for all); without traces, the
        /// `synthetic` MPEG model at `mean_rate`. Streams per node: `streams`, or the load
        /// divided by a stream's mean rate (the traces' average).
        Video {
            /// Frame-size trace files (relative to the configuration), e.g.
            /// `data/video-traces/...`.
            #[serde(default)]
            traces: Vec<FilePath>,
            /// How the traces are written.
            #[serde(default)]
            format: video::TraceFormat,
            /// Frames per second.
            #[serde(default = "default_frame_rate")]
            frame_rate: f64,
            /// Mean rate of a stream (the traces rescaled to it, as `scale` says).
            #[serde(default)]
            mean_rate: Option<Bandwidth>,
            /// How traces are rescaled to `mean_rate`.
            #[serde(default)]
            scale: video::TraceScale,
            /// The synthetic MPEG model used without traces.
            #[serde(default)]
            synthetic: video::SyntheticVbr,
            /// Streams per node (default: the load divided by a stream's mean rate).
            #[serde(default)]
            streams: Option<u32>,
            /// Where a stream's deadline chain starts (`video::FirstDeadline`).
            #[serde(default)]
            first_deadline: video::FirstDeadline,
        },
    }
}

fn yes() -> bool {
    true
}

fn default_frame_rate() -> f64 {
    30.0
}

/// The nodes a traffic source runs on: `"all"` or a list of node numbers.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum NodeSet {
    All(AllNodes),
    List(Vec<u32>),
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AllNodes {
    All,
}

impl<'de> Deserialize<'de> for NodeSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = NodeSet;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"all\" or a list of node numbers, e.g. [0, 5, 9]")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<NodeSet, E> {
                if v == "all" {
                    Ok(NodeSet::All(AllNodes::All))
                } else {
                    Err(E::custom(format!("must be \"all\" or a list of node numbers, got {v:?}")))
                }
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<NodeSet, A::Error> {
                let mut nodes = Vec::new();
                while let Some(n) = seq.next_element::<u32>()? {
                    nodes.push(n);
                }
                Ok(NodeSet::List(nodes))
            }
        }
        d.deserialize_any(V)
    }
}

impl Default for NodeSet {
    fn default() -> Self {
        NodeSet::All(AllNodes::All)
    }
}

tagged_enum! {
    #[derive(Clone, Debug, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum PatternConfig {
        /// Every other node alike (never to itself unless `self_traffic`).
        Uniform,
        /// Matrix transpose: on a square 2-D mesh or torus, (x, y) to (y, x); otherwise the
        /// node number's halves of bits swapped (a power of four nodes).
        Transpose,
        /// Every bit of the node number inverted (a power of two nodes).
        BitComplement,
        /// The node number's bits in reverse order (a power of two nodes).
        BitReversal,
        /// The node number's bits rotated left by one (a power of two nodes).
        PerfectShuffle,
        /// The node number's first and last bits swapped (a power of two nodes).
        Butterfly,
        /// Half-way round each dimension, less one (mesh/torus coordinates).
        Tornado,
        /// The next router in each dimension (mesh/torus coordinates).
        Neighbour,
        /// With probability `fraction` a message goes to one of `nodes` (uniformly), else uniform.
        HotSpot {
            /// Share of messages to the hot spot, 0..1.
            fraction: f64,
            /// The hot-spot nodes.
            nodes: Vec<u32>,
        },
        /// Every message goes to node `destination` (a source at it is silent).
        Fixed {
            /// The node every message goes to.
            destination: u32,
        },
        /// One destination per source: lines `dst` (line i is source i) or `src dst`.
        Permutation {
            /// The permutation's file (relative to the configuration).
            file: FilePath,
        },
        /// A random permutation of the nodes drawn from `seed` (BookSim2's `randperm`: the
        /// same distribution of permutations, not its permutation for a seed). A source the
        /// permutation sends to itself is silent unless `self_traffic`.
        RandomPermutation {
            /// The permutation's own seed (the same seed, the same permutation, whatever
            /// `simulation.seed`).
            seed: u64,
        },
        /// N rows of N non-negative weights: row s gives the destination distribution of s.
        Matrix {
            /// The matrix's file (relative to the configuration).
            file: FilePath,
        },
        /// BookSim2's `diagonal`: to the next node (i + 1 mod N) one message in three, else
        /// to the source itself (needs `self_traffic`).
        Diagonal,
        /// BookSim2's `asymmetric`: node i to i mod N/2 or i mod N/2 + N/2 alike, one of them
        /// itself (an even node count; needs `self_traffic`).
        Asymmetric,
        /// BookSim2's `taper64` (64 nodes): half the messages to a node within one step on
        /// the 8x8 grid of node numbers (the source itself included), half to any node
        /// (needs `self_traffic`).
        Taper64,
        /// A dragonfly's adversarial traffic (Kim et al. 2008's worst case; BookSim2's
        /// `bad_dragon`): every message to a node of the next group (i + 1 mod the groups).
        NextGroup,
        /// BookSim2's `badperm_yarc` (the YARC high-radix router's bad case, Scott et al.
        /// ISCA 2006): the N = w x w nodes as a w-by-w grid of node numbers, every source of
        /// row r to a node of column r alike (node j w + r, j drawn), so each column takes a
        /// whole row's traffic (N a square; node r w + r, on the diagonal, sends to itself:
        /// needs `self_traffic`).
        BadpermYarc,
        /// Every node but `nodes` alike (BookSim2's `background`; the source itself only
        /// with `self_traffic`).
        UniformExcept {
            /// The nodes no message goes to.
            nodes: Vec<u32>,
        },
    }
}

impl PatternConfig {
    /// Whether the pattern sends to the source itself by definition (BookSim2's
    /// `diagonal`, `asymmetric`, `taper64` and `badperm_yarc`), so that it needs
    /// `self_traffic`.
    pub fn sends_to_itself(&self) -> bool {
        matches!(
            self,
            PatternConfig::Diagonal
                | PatternConfig::Asymmetric
                | PatternConfig::Taper64
                | PatternConfig::BadpermYarc
        )
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TrafficConfig {
    /// When messages are created (the injection process).
    #[serde(default = "default_process")]
    pub process: Process,
    /// The traffic class: its VCs, its priority at the NIC, its metrics.
    #[serde(default)]
    pub class: TrafficClass,
    /// Offered load per source node as a fraction of link bandwidth (flits/node/cycle).
    #[serde(default)]
    pub load: Option<f64>,
    /// Offered load per source node as a bandwidth (alternative to `load`).
    #[serde(default)]
    pub rate: Option<Bandwidth>,
    /// Message length in flits.
    #[serde(default = "default_message_flits")]
    pub message_flits: u32,
    /// Packet length in flits; a message is cut into packets of this size (the last may be shorter).
    #[serde(default = "default_message_flits")]
    pub packet_flits: u32,
    /// Where messages go.
    #[serde(default = "default_pattern")]
    pub pattern: PatternConfig,
    /// Messages may go to their own source (through its router and back), as in BookSim2:
    /// uniform draws among all N nodes, and a permutation's fixed points send to
    /// themselves instead of staying silent. Off by default (no self traffic); for
    /// configurations matched against BookSim2 (`configs/validation/`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[schemars(extend("default" = false))]
    pub self_traffic: bool,
    /// Which nodes run this source ("all" or a list).
    #[serde(default)]
    pub sources: NodeSet,
    /// The messages' VirtualClock Vtick (document 003 §3.1: the bandwidth requirement each
    /// header carries): cycles per flit, or a rate ("4 Mb/s" -> link rate / 4 Mb/s
    /// cycles per flit). Default: control 1 (link rate), real-time its source's (a video
    /// stream: its trace's mean rate), best effort none (unreserved: served after every
    /// reserved flit, oldest first; see `sched::RateKeys`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vtick: Option<VtickConfig>,
    /// Reserve this bandwidth for each of the entry's flows (one per source node; the
    /// pattern must give each source one destination): call admission (document 004 §3.4)
    /// must admit it, and rate control dispatches it with idt = T · Bpeak / Breq.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<Bandwidth>,
    /// Alternatively the flows' inter-dispatch time directly, in multiples of T (document
    /// 004's normalised IDTs; no admission check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idt: Option<f64>,
}

/// A Vtick as cycles per flit or as the rate it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum VtickConfig {
    Cycles(f64),
    Rate(Bandwidth),
}

/// By hand: serde's untagged form would answer a bad value with "data did not match any
/// variant of untagged enum VtickConfig".
impl<'de> Deserialize<'de> for VtickConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = VtickConfig;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("cycles per flit (a number) or a rate like \"4 Mb/s\"")
            }
            fn visit_u64<E>(self, v: u64) -> Result<VtickConfig, E> {
                Ok(VtickConfig::Cycles(v as f64))
            }
            fn visit_i64<E>(self, v: i64) -> Result<VtickConfig, E> {
                Ok(VtickConfig::Cycles(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<VtickConfig, E> {
                Ok(VtickConfig::Cycles(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<VtickConfig, E> {
                Bandwidth::parse(v).map(VtickConfig::Rate).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A real-time : best-effort mix whose ratio changes over time (document 003 §4.2: the load
/// is split x:y between the two classes, in phases 20:80 -> 30:70 -> 50:50 -> 70:30 ->
/// 80:20, without reconfiguring the routers' VC split). `[[traffic]]` entries of class
/// real_time or best_effort that give no `load`/`rate` take their class's share, divided
/// evenly among the entries of the class.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixConfig {
    /// Total offered load per node, fraction of link bandwidth.
    pub load: f64,
    /// The phases, in order: each lasts its `duration` with its x:y split.
    pub phases: Vec<PhaseConfig>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseConfig {
    /// How long the phase lasts (the last one lasts to the end of the run).
    pub duration: Duration,
    /// The real-time part x of x:y.
    pub real_time: f64,
    /// The best-effort part y of x:y.
    pub best_effort: f64,
}

fn default_process() -> Process {
    Process::Poisson
}

fn default_message_flits() -> u32 {
    40
}

fn default_pattern() -> PatternConfig {
    PatternConfig::Uniform
}

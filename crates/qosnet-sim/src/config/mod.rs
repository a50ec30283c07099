//! Typed configuration (TOML or JSON), parsed with exact error paths and validated as a whole.
//!
//! Every section denies unknown keys. Physical quantities are written with units
//! (`"1.6 Gb/s"`, `"10 us"`) or as plain cycle counts, and converted in [`crate::units`].
//! Defaults follow documents 003 §4.1 and 000 §5.1: 16 VCs per port, 128-bit flits,
//! 1.6 Gb/s links, 40-flit messages, one cycle per pipeline stage.

#[macro_use]
mod tagged;
pub mod application;
mod de;
pub mod files;
pub mod memory;
pub mod schema;
pub mod value;
pub mod video;

pub use files::{FilePath, FileScope, Files};
pub use memory::{MemoryEstimate, MemoryPart};

use crate::error::{ConfigError, ConfigErrors};
use crate::units::{Bandwidth, ByteSize, Duration};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Longest run or measurement window accepted, in cycles (about 2.5 years at 80 ns).
pub const MAX_CYCLES: u64 = 1_000_000_000_000_000;

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The run: seed, warm-up, measurement window, drain, deadlock watchdog, limits.
    #[serde(default)]
    pub simulation: SimulationConfig,
    /// Flit size and link bandwidth: one cycle is one flit time on a link (80 ns by default).
    #[serde(default)]
    pub physical: PhysicalConfig,
    /// The network's shape, one endpoint (node) per router port that faces a host.
    pub topology: TopologyConfig,
    /// Every router: its kind (document 003 §3.2), VCs, buffers, pipeline, schedulers,
    /// allocator, preemption and congestion marking.
    #[serde(default)]
    pub router: RouterConfig,
    /// How packets find their way: the topology's own routing, LID paths, multipath (DRB).
    #[serde(default)]
    pub routing: RoutingConfig,
    /// The hosts' network interfaces (ideal, VIA NIC, InfiniBand HCA), their queues and
    /// schedulers, and the congestion-control and admission agents (document 000).
    #[serde(default)]
    pub endpoint: EndpointConfig,
    /// Traffic sources, one table each: process, class, load, sizes, pattern, reservation.
    #[serde(default)]
    pub traffic: Vec<TrafficConfig>,
    /// Document 003 §4.2's changing real-time : best-effort mix, in phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixConfig>,
    /// Parallel jobs run as compute and communication phases (document 001 §4.2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub application: Vec<application::ApplicationConfig>,
    /// What a run records beyond its metrics, to look inside it (all off by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceConfig>,
    /// Directory that relative file names are resolved against (`files.rs`).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
    /// Where the files the configuration names may be (confined: inside `base_dir` only).
    #[serde(skip)]
    pub file_scope: FileScope,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SimulationConfig {
    /// Master seed; every component derives its own stream from it.
    pub seed: u64,
    /// Cycles before measurement starts.
    pub warmup: Duration,
    /// Messages created in [warmup, warmup + measure) are measured.
    pub measure: Duration,
    /// After the window, run at most this long for measured messages to arrive; if they
    /// have not, the run reports saturation.
    pub drain_limit: Duration,
    /// A run with flits in flight and none moving for this long is a deadlock (an error).
    pub watchdog: Duration,
    /// Keep a record of every measured message (the `messages` table).
    pub record_messages: bool,
    /// Refuse a run whose estimated memory exceeds this (`"4 GB"`, `"unlimited"`).
    /// Default: `QOSNET_MEMORY_LIMIT` if set, else the memory the machine has available
    /// (`build::validate`'s memory estimate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<ByteSize>,
    /// Wall-clock time a run may take (`"10 min"`); past it the run stops with an error
    /// (`SimError::TimeLimit`) and its results so far are kept. None: no limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_limit: Option<Duration>,
}

impl Default for SimulationConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            warmup: Duration::Cycles(10_000),
            measure: Duration::Cycles(50_000),
            drain_limit: Duration::Cycles(100_000),
            watchdog: Duration::Cycles(20_000),
            record_messages: false,
            memory_limit: None,
            time_limit: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PhysicalConfig {
    /// Flit size in bits (document 003 §4.1: 128).
    pub flit_bits: u32,
    /// Bandwidth of every link (document 003 §4.1: 1.6 Gb/s).
    pub link_bandwidth: Bandwidth,
}

impl Default for PhysicalConfig {
    fn default() -> Self {
        Self { flit_bits: 128, link_bandwidth: Bandwidth { bits_per_second: 1.6e9 } }
    }
}

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
    }
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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Stage 1: synchronise and demultiplex into a VC buffer.
    pub sync: u32,
    /// Stage 2: routing decision (header flits only).
    pub routing: u32,
    /// Stage 3: output-VC arbitration (header flits only).
    pub vc_alloc: u32,
    /// Stage 4: crossbar traversal (scheduler at the crossbar input).
    pub crossbar: u32,
    /// Stage 5: output buffering, physical-channel multiplexing and synchronisation.
    pub output: u32,
}

impl Default for PipelineConfig {
    /// Document 003 Fig. 1: five stages, one cycle each.
    fn default() -> Self {
        Self { sync: 1, routing: 1, vc_alloc: 1, crossbar: 1, output: 1 }
    }
}

impl PipelineConfig {
    pub fn total(&self) -> u64 {
        (self.sync + self.routing + self.vc_alloc + self.crossbar + self.output) as u64
    }
}

tagged_enum! {
    /// A scheduler choosing one VC among eligible candidates (crossbar input, output
    /// multiplexer, NIC injection port). Registered once here; built in `sched::Scheduler::build`.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum SchedulerConfig {
        /// Oldest flit first (traditional router, document 003 §3).
        Fcfs,
        /// Round robin over VCs, starting after the last one served.
        RoundRobin,
        /// VirtualClock (document 003 §3.1): smallest stamp first, stamps from each message's
        /// Vtick. `counter_bits` > 0 models the document's finite counters (16 in its VHDL).
        VirtualClock {
            #[serde(default)]
            counter_bits: u32,
        },
        /// Weighted Fair Queueing with an exact GPS round number (document 003 §3.1).
        FairQueueing,
        /// Weighted round robin (document 000 §3.1): `weights[vc]` flits per round (all 1 if
        /// empty, which is round robin).
        Wrr {
            #[serde(default)]
            weights: Vec<u32>,
        },
        /// IBA two-level VL arbitration (document 000 §3.3): `[vl, weight]` entries, weights
        /// in IBA units of 64 bytes; `limit_of_high_priority` in units of 4 KiB (255 =
        /// unbounded, 0 = one flit); `management_vl` always served first (VL15 in IBA).
        VlArbitration {
            #[serde(default)]
            high: Vec<[u32; 2]>,
            #[serde(default)]
            low: Vec<[u32; 2]>,
            #[serde(default = "default_limit_of_high_priority")]
            limit_of_high_priority: u32,
            #[serde(default)]
            management_vl: Option<u32>,
        },
    }
}

fn default_limit_of_high_priority() -> u32 {
    255
}

impl SchedulerConfig {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Fcfs => "fcfs",
            Self::RoundRobin => "round_robin",
            Self::VirtualClock { .. } => "virtual_clock",
            Self::FairQueueing => "fair_queueing",
            Self::Wrr { .. } => "wrr",
            Self::VlArbitration { .. } => "vl_arbitration",
        }
    }
}

/// The router designs of document 003 §3.2.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RouterKind {
    /// VCs split among classes, FCFS scheduling (no QoS: "TR").
    #[default]
    Traditional,
    /// VCs split among classes at configuration time, rate-based scheduling ("NP").
    NonPreemptive,
    /// Any class may use any VC; a higher-priority message preempts a lower one ("P").
    Preemptive,
}

/// How many VCs each traffic class gets (traditional and non-preemptive routers; the
/// preemptive router starts from the same split). VCs are given in priority order:
/// control first (VC 0 in document 003 §4.2), then real-time, then best effort.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VcClasses {
    /// `"auto"`: one class present -> it has every VC; otherwise control gets one VC and
    /// real-time / best-effort split the rest in the ratio of the first phase (or of their
    /// loads), at least one each.
    #[default]
    Auto,
    Counts(ClassCounts),
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ClassCounts {
    pub control: u32,
    pub real_time: u32,
    pub best_effort: u32,
}

impl Serialize for VcClasses {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            VcClasses::Auto => s.serialize_str("auto"),
            VcClasses::Counts(c) => c.serialize(s),
        }
    }
}

impl schemars::JsonSchema for VcClasses {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "VcClasses".into()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "anyOf": [{ "const": "auto" }, generator.subschema_for::<ClassCounts>()],
        })
    }
}

impl<'de> Deserialize<'de> for VcClasses {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = VcClasses;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"auto\" or a table { control, real_time, best_effort } of VC counts")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<VcClasses, E> {
                if v == "auto" {
                    Ok(VcClasses::Auto)
                } else {
                    Err(E::custom(format!(
                        "must be \"auto\" or a table {{ control, real_time, best_effort }} of VC counts, got {v:?}"
                    )))
                }
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<VcClasses, A::Error> {
                ClassCounts::deserialize(serde::de::value::MapAccessDeserializer::new(map))
                    .map(VcClasses::Counts)
            }
        }
        d.deserialize_any(V)
    }
}

/// Document 003 §3.2.1: the preemptive router's extra buffer and acceleration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PreemptionConfig {
    /// Extra input buffer per VC for a preempting message, in flits (s − 1 = 2 for the
    /// documents' three priority levels).
    pub extra_buffer: u32,
    /// Flit acceleration (§3.2.2): the flits of a preempted or blocking lower-priority
    /// message get the lowest virtual clock value until its tail crosses the crossbar.
    pub acceleration: bool,
    /// Whether control's VC is control's alone (document 003 §4.2: "only one virtual
    /// channel is assigned for this kind of traffic ... we assigned VC 0 for both the
    /// models"; the default), or real time and best effort may take it too and control
    /// preempts them (§5.1's "any type of traffic can use any VC" read for control's VC too).
    pub control_vc: ControlVc,
}

impl Default for PreemptionConfig {
    fn default() -> Self {
        Self { extra_buffer: 2, acceleration: true, control_vc: ControlVc::Exclusive }
    }
}

/// `[router] virtual_clock`: how the router's VirtualClock schedulers keep their state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VirtualClockConfig {
    pub state: VirtualClockState,
}

/// What a VirtualClock *connection* is (document 003 §3.1: "auxVC and Vtick for each
/// connection ... determined when a connection is set up"), and so how long its auxVC lives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VirtualClockState {
    /// The message holding a VC: its auxVC starts afresh when its header takes the VC, so a
    /// stream's messages inherit nothing from one another. The default: document 003's
    /// router keeps auxVC in a counter per VC (§3.1's overflow rule: "auxVC_i for some VC
    /// i", 16-bit counters) and learns Vtick from each message's header (§4.2); it describes
    /// no per-stream table in the router and no connection set-up reaching it.
    #[default]
    Message,
    /// The stream the message belongs to (its flow: a video connection, §4.2's
    /// "connection" bound to its input VC): each scheduling point keeps one auxVC per
    /// stream across its messages, so a frame sent above the stream's reserved rate carries
    /// its lead in virtual time into the stream's next messages (Zhang's VirtualClock, a
    /// clock per flow). Unreserved (best-effort) messages keep none.
    Stream,
}

/// The preemptive router's control VC (`PreemptionConfig::control_vc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ControlVc {
    /// Any class may take it; control preempts a lower class holding it.
    Shared,
    /// Control's alone (the default): real time and best effort use the other VCs.
    Exclusive,
}

/// When a router's output VC (and a NIC's injection lane) is free for another packet.
///
/// Document 003 §3.2.1 (footnote 2) has a VC buffer hold "a tail flit of another message"
/// ahead of the next message's flits: its routers reallocate a VC once the tail has left,
/// as BookSim2's routers do by default (`wait_for_tail_credit = 0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcRelease {
    /// When the tail's credit comes back: the downstream buffer has drained the packet,
    /// so a VC buffer only ever holds one packet (needed by the preemptive router, whose
    /// preemption and history stack work per VC).
    TailCredit,
    /// When the tail has crossed the crossbar (a NIC: has been sent): the next packet
    /// follows it into the same downstream VC buffer.
    TailSent,
}

/// How the crossbar (stage 4) matches its inputs to its outputs each cycle
/// (`router/crossbar.rs`, `router/islip.rs`, `router/wavefront.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AllocatorKind {
    /// Each input nominates one VC (its crossbar scheduler's choice), each output grants one
    /// of the inputs that chose it; losers nominate again in the next iteration.
    SeparableInputFirst,
    /// iSLIP (McKeown, IEEE/ACM ToN 7(2), 1999): each input requests every output one of
    /// its ready VCs heads to, outputs grant and inputs accept (both round robin, or by
    /// rate key), pointers move only on first-iteration matches. BookSim2's default
    /// switch allocator (`sw_allocator = islip`, `alloc_iters = 1`).
    Islip,
    /// Wavefront (Tamir and Chi, IEEE TPDS 4(1), 1993): one pass over the request matrix's
    /// diagonals from a priority diagonal that rotates each cycle, a maximal matching.
    Wavefront,
}

/// `[router] allocator`: the crossbar allocator and its iterations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AllocatorConfig {
    pub kind: AllocatorKind,
    /// Request-grant rounds per cycle (separable and iSLIP; a wavefront pass is already
    /// maximal, so it takes none). Default 3 for the separable allocator and 1 for iSLIP
    /// (BookSim2's `alloc_iters`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        Self { kind: AllocatorKind::SeparableInputFirst, iterations: None }
    }
}

impl AllocatorConfig {
    /// The iterations in force: as configured, else by kind (a wavefront pass counts as 1).
    pub fn iterations(&self) -> u32 {
        self.iterations.unwrap_or(match self.kind {
            AllocatorKind::SeparableInputFirst => 3,
            AllocatorKind::Islip | AllocatorKind::Wavefront => 1,
        })
    }
}

/// How a free output VC is picked among the allowed ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcSelection {
    LowestFree,
    RoundRobin,
}

#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RouterConfig {
    /// Router design (document 003 §3.2): traditional, non_preemptive or preemptive.
    pub kind: RouterKind,
    /// Virtual channels per physical port (document 003: 16).
    pub vcs: u32,
    /// VCs per traffic class.
    pub vc_classes: VcClasses,
    /// Input buffer depth per VC, in flits.
    pub input_buffer: u32,
    /// Output buffer depth per VC, in flits (stage 5).
    pub output_buffer: u32,
    /// Delay of each pipeline stage, in cycles.
    pub pipeline: PipelineConfig,
    /// Wire delay of a link, in cycles.
    pub link_latency: u32,
    /// Delay of a credit from a downstream buffer back to the upstream output, in cycles.
    pub credit_latency: u32,
    /// Flits per cycle each crossbar input may send and each crossbar output may accept.
    pub speedup: u32,
    /// Scheduler at each crossbar input (stage 4). Default: FCFS for the traditional
    /// router, VirtualClock for the QoS routers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crossbar_scheduler: Option<SchedulerConfig>,
    /// Scheduler of each output multiplexer (stage 5). Default: as the crossbar's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_scheduler: Option<SchedulerConfig>,
    /// The crossbar's allocator (stage 4). Default: separable input-first, 3 iterations.
    pub allocator: AllocatorConfig,
    /// Block-level multiplexing (document 003 §5.1): schedulers switch VC only every
    /// `block_size` flits (1 = flit-level).
    pub block_size: u32,
    pub vc_selection: VcSelection,
    /// When an output VC may take the next packet (`VcRelease`). Default `tail_credit`.
    pub vc_release: VcRelease,
    /// Preemptive router only.
    pub preemption: PreemptionConfig,
    /// The router's VirtualClock schedulers (crossbar input, output multiplexer):
    /// where a connection's virtual clock lives (`VirtualClockState`).
    pub virtual_clock: VirtualClockConfig,
    /// Marking at the switch outputs (the switch side of explicit congestion notification):
    /// none by default. Marks are counted per flow (`flows.marked_packets`) and are what
    /// congestion-control agents react to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub marking: Option<MarkingConfig>,
}

tagged_enum! {
    /// How a switch output marks packets (`[router] marking`). Registered once here; checked
    /// and built in `router::Marking::build`.
    #[derive(Clone, Debug, PartialEq, Eq, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum MarkingConfig {
        /// A packet is marked when one of its flits enters an output VC buffer that then holds
        /// at least `flits` flits (a fixed buffer threshold, as InfiniBand's switch congestion
        /// threshold and document 000's buffer-occupancy detectors use).
        Threshold { flits: u32 },
        /// InfiniBand congestion control's switch side (IBA Annex A10, SwitchCongestionSetting;
        /// OpenSM's `cc_sw_cong_setting_*`): a packet is eligible for a FECN mark when it finds
        /// its output VL buffer above `threshold` (0: never mark, 1 loosest .. 15 most
        /// restrictive) and is at least `packet_size` flits long; one in every
        /// `marking_rate + 1` eligible packets per port is marked (`router/marking.rs`).
        IbaCc {
            threshold: u8,
            #[serde(default)]
            packet_size: u32,
            #[serde(default)]
            marking_rate: u16,
            /// Which input flits count toward an output port's VL (`router/marking.rs`).
            #[serde(default)]
            waiting: WaitingHeaders,
            /// Whether a port VL out of credits (a victim of congestion downstream, not its
            /// root) marks too: IBA's Victim_Mask bit for the port (`router/marking.rs`).
            #[serde(default)]
            victims: VictimMarking,
        },
    }
}

/// Whether IBA CC's switch marks at a port VL that is a victim of congestion (out of
/// credits: the buffer downstream is full) as well as at a root (`[router]
/// marking.victims`, IBA Annex A10's Victim_Mask).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VictimMarking {
    /// Every port VL above the threshold marks (the Victim_Mask bit set).
    #[default]
    Marked,
    /// Only a root marks: a port VL with credits, whose queue is its own link's contention.
    NotMarked,
}

/// What IBA CC's switch counts of a header still waiting for an output VC
/// (`[router] marking.waiting`, `router/marking.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitingHeaders {
    /// Its flits count against every VL its route allows (aggressive: one packet may
    /// count against three VLs at once).
    #[default]
    EveryVl,
    /// Only the VL an input VC holds counts (its flits count once it has won an output VC).
    HeldVl,
}

impl Default for RouterConfig {
    fn default() -> Self {
        Self {
            kind: RouterKind::Traditional,
            vcs: 16,
            vc_classes: VcClasses::Auto,
            input_buffer: 40,
            output_buffer: 40,
            pipeline: PipelineConfig::default(),
            link_latency: 1,
            credit_latency: 1,
            speedup: 1,
            crossbar_scheduler: None,
            output_scheduler: None,
            allocator: AllocatorConfig::default(),
            block_size: 1,
            vc_selection: VcSelection::LowestFree,
            vc_release: VcRelease::TailCredit,
            preemption: PreemptionConfig::default(),
            virtual_clock: VirtualClockConfig::default(),
            marking: None,
        }
    }
}

impl RouterConfig {
    /// The crossbar scheduler in force: as configured, else by router kind.
    pub fn crossbar(&self) -> SchedulerConfig {
        self.crossbar_scheduler.clone().unwrap_or(match self.kind {
            RouterKind::Traditional => SchedulerConfig::Fcfs,
            RouterKind::NonPreemptive | RouterKind::Preemptive => {
                SchedulerConfig::VirtualClock { counter_bits: 0 }
            }
        })
    }

    /// The output multiplexer's scheduler in force.
    pub fn output(&self) -> SchedulerConfig {
        self.output_scheduler.clone().unwrap_or_else(|| self.crossbar())
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoutingKind {
    /// The topology's natural deterministic routing.
    #[default]
    Auto,
    /// Dimension order (mesh); on a torus, minimal dimension order without dateline
    /// classes, which can deadlock (for studying deadlock).
    Dor,
    /// Dimension order with dateline VC classes (torus).
    DorDateline,
    /// Deterministic up/down, D-mod-K up-port choice (fat tree).
    DModK,
    /// The single router of a star.
    Direct,
    /// A fabric's forwarding tables (minimal-hop routes without them).
    Lft,
}

impl RoutingKind {
    /// The spelling used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Dor => "dor",
            Self::DorDateline => "dor_dateline",
            Self::DModK => "d_mod_k",
            Self::Direct => "direct",
            Self::Lft => "lft",
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
}

impl Default for RoutingConfig {
    fn default() -> Self {
        Self { kind: RoutingKind::default(), multipath: None, lmc: None, slack: 2 }
    }
}

/// `[trace]`: recordings for looking inside a run, as BookSim users watch packets and plot
/// link load over time. Each is off unless asked for, and costs nothing then.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TraceConfig {
    /// Link utilisation over time: the flits each link carried in every interval of this
    /// length over the measurement window (a `link_series` table).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_series: Option<Duration>,
    /// Cycles each router input VC spent stalled, by cause (a `stalls` table).
    pub stalls: bool,
    /// Flows (rows of the `flows` table) whose packets' hops are recorded (a `trace`
    /// table), up to `watch_limit` events.
    pub watch_flows: Vec<u32>,
    /// Most hop events recorded for `watch_flows`.
    pub watch_limit: u32,
}

impl Default for TraceConfig {
    fn default() -> Self {
        Self { link_series: None, stalls: false, watch_flows: Vec::new(), watch_limit: 100_000 }
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
    pub split: DrbSplit,
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

/// The endpoints: the simple ideal endpoint, or a NIC model (document 003 §3.3, document
/// 000 §3.2) with host queues, a DMA engine, a VC-aware send buffer and a receive side.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct EndpointConfig {
    /// Which endpoint: `ideal` (no host or DMA costs), `via` (VIA-style NIC: doorbells, a
    /// descriptor DMA and a data DMA per send) or `hca` (InfiniBand HCA on the system bus:
    /// QPs, one DMA per send, CQEs).
    pub model: NicModel,
    /// How the NIC picks a VC of the router's input port for each packet.
    pub vc_selection: VcSelection,
    /// The host-side send queues and how the NIC serves them: `fifo` (one doorbell queue,
    /// the traditional NIC), `per_class` (a doorbell / QP-scheduling queue per class served
    /// by priority, the QoS NIC), and for the NIC models `round_robin` (a message at a time
    /// per send queue, document 004 Fig. 4a), `interleaved` (GM's fair interleaved round
    /// robin over connections and sub-ports, a packet at a time, Fig. 4b) or `rate_control`
    /// (document 004 §3.3: reserved flows by next dispatch time, the rest interleaved),
    /// and `per_vc` (document 003 §4.2: each real-time connection bound to one VC of its
    /// class, a queue per VC; best effort and control in their class's FIFO, each message
    /// taking a free VC of its class; with a NIC model, per-class doorbells with a real-time
    /// connection's bound to its VC's buffer, §3.3.1).
    pub queues: SourceQueues,
    /// A queue head whose NIC buffer has no room is passed over for the next one
    /// (document 003 §3.3.1's head-of-line blocking avoidance; NIC models).
    pub skip_blocked: bool,
    /// Packets in injection at once, each on its own VC, multiplexed flit by flit on the
    /// link (ideal endpoint; the NIC models inject from every VC buffer with a packet).
    pub concurrent_packets: u32,
    /// Latency of the injection and ejection links, cycles. Default: the routers'
    /// `link_latency` (BookSim2 keeps its endpoint channels at 1 cycle whatever the
    /// network's channels take).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_latency: Option<u32>,
    /// Cycles a flit the injection scheduler has picked waits in the endpoint's output
    /// register before it starts on the injection link, as a router's flit does in its
    /// output stage (`router.pipeline.output`) before every other link. 0 (the default): it
    /// starts on the link in the cycle it is picked. BookSim2's nodes take one such cycle:
    /// a flit written to the injection channel in its creation cycle reaches the router two
    /// cycles later, as a router's flit leaving its output stage does over a 1-cycle channel.
    pub output_stage: u32,
    /// Scheduler multiplexing the injection link among VCs (the QoS NIC's hardware
    /// VirtualClock, the HCA's VL arbitration). Default: the router's crossbar scheduler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerConfig>,
    /// NIC send buffer: `per_vc` (split into the router's C VCs, VC-aware buffer
    /// management, document 003 §3.3.1) or `shared` (one FIFO, the traditional NIC).
    pub buffer: NicBuffer,
    /// Send buffer size in flits (split evenly among the VCs when `per_vc`). Default: room
    /// for two of the longest packets per VC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer_flits: Option<u32>,
    /// NIC to wire: `flit` (flit-level multiplexing by the hardware scheduler, no DMA cost
    /// per flit) or `message` (the scheduler picks a whole packet and a send DMA moves it,
    /// paying `message_setup` each time; document 003 §3.3.1).
    pub injection: Injection,
    /// The send DMA's set-up cost per message in message-level injection. Default: the
    /// host DMA's set-up.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_setup: Option<Duration>,
    /// The host DMA engine (one per direction).
    pub dma: DmaConfig,
    /// Rate control's dispatch period T (document 004 §3.3: at most one packet dispatch
    /// per T; IDTs are multiples of it). Default: the time a longest packet takes on the
    /// link or through the DMA engine, whichever is longer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_period: Option<Duration>,
    /// The control agent at every endpoint (admission or congestion control: it decides
    /// when a flow may start its next message). Default: none, every message starts as
    /// soon as the endpoint can send it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentConfig>,
    /// Probe-based admission control of real-time connections (document 000 §4.1).
    /// Default: none, every connection sends at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admission: Option<AdmissionConfig>,
    /// Processors of each node's host, shared by the compute phases of the application
    /// ranks on it (`[[application]]`; document 001 §4.3.1's "Dual Pentium III" nodes: 2,
    /// §4.1.1's quad SMPs: 4). k ranks computing at once on a node of p processors each
    /// progress at min(1, p / k) of full speed (`traffic::application`). Default: none, every
    /// rank has a processor of its own (jobs interfere only in the network).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub processors: Option<u32>,
}

/// Probe-based admission control (document 000 §4.1, `[endpoint.admission]`): every
/// real-time source with one destination is a connection; before it sends data its HCA
/// probes the path for the connection's bandwidth.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AdmissionConfig {
    /// The bandwidth a VBR connection solicits, between its mean (0) and its peak (1) rate:
    /// mean + factor x (peak - mean). Default 0, the mean rate (the document does not say;
    /// the mean admits the most streams, the peak gives hard guarantees). The peak of an
    /// ON/OFF source is its ON rate, of a video stream its largest frame per frame period.
    /// A `reserve` given on the traffic entry is used as it is.
    pub effective_factor: f64,
    /// The share of a link's bandwidth that may be reserved, in (0, 1].
    pub limit: f64,
    /// How long a refused connection waits before it probes again.
    pub retry_after: Duration,
    /// Probes per set-up before the connection gives up and its messages are dropped at the
    /// source (0: it never gives up).
    pub attempts: u32,
    /// Messages a connection carries before its last data packet tears it down and the
    /// next message sets up a new one (0: one connection for the whole run).
    pub connection_messages: u32,
    /// Flits of a probe, ACK, NACK or release (the document's control messages: 10).
    pub signal_flits: u32,
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        Self {
            effective_factor: 0.0,
            limit: 1.0,
            retry_after: Duration::Cycles(10_000),
            attempts: 0,
            connection_messages: 0,
            signal_flits: 10,
        }
    }
}

tagged_enum! {
    /// A control agent at the endpoints (`[endpoint] agent`). Registered once here; checked and
    /// built in `control::Agents::build`.
    #[derive(Clone, Debug, PartialEq, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum AgentConfig {
        /// At most `messages` messages per node started and not yet delivered: a fixed
        /// end-to-end injection window (the simplest window-based flow control). The source
        /// hears of a delivery at once, or `ack_delay` later (an acknowledgement on the
        /// control channel).
        Window {
            messages: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            ack_delay: Option<Duration>,
        },
        /// Credit-based congestion control (document 000 §4.2): completion-queue entries as
        /// credits. Each node's HCA buffer holds `hca_messages` (M) messages; a real-time
        /// connection j gets C_j = b_j / B x M credits, the node's best effort
        /// `best_effort` (C_b <= M - sum C_j); control traffic is not restricted. Best
        /// effort waits for a credit; real time drops the message and posts it again
        /// `retry_after` later (default 40 cycles, one 40-flit message's time on a link;
        /// the document gives no value).
        Credit {
            hca_messages: u32,
            best_effort: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            retry_after: Option<Duration>,
        },
        /// At-Least-One injection limitation (Baydal, López and Duato, IPDPS 2000; document
        /// 000 §6.1): a message enters only if every useful output channel of the source's
        /// router has a free VC, or one of them has all its VCs free.
        Alo,
        /// Self-Tuned congestion control (Thottethodi, Lebeck and Mukherjee, HPCA 2001;
        /// document 000 §6.1): sources throttle while the network's full buffers, gathered
        /// every `gather` over a side band, exceed a threshold tuned by hill climbing on
        /// throughput every `tune_every` gathers (steps `increment` up, `decrement` down,
        /// from `initial`, as fractions of the network's buffers; a throughput fall within
        /// `tolerance` of the last period's does not count). Defaults: 32 cycles, 3, 0.01,
        /// 0.04, 0.04, 0 (see control/self_tuned.rs for where they come from).
        SelfTuned {
            #[serde(default, skip_serializing_if = "Option::is_none")]
            gather: Option<Duration>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            tune_every: Option<u32>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            increment: Option<f64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            decrement: Option<f64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            initial: Option<f64>,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            tolerance: Option<f64>,
        },
        /// InfiniBand congestion control's channel-adapter side (IBA Annex A10,
        /// CACongestionSetting and CongestionControlTable; OpenSM's `cc_ca_cong_setting_*` and
        /// `cc_cct`; `control/iba_cc.rs`): a FECN-marked packet makes its destination send a
        /// CNP (a one-flit control-class packet) with BECN to the source; there the flow's CCT
        /// index rises by `ccti_increase` up to `ccti_limit` (default: the table's last
        /// entry), falls by one each `ccti_timer`, never below `ccti_min`, and the flow waits
        /// the CCT entry's delay between messages.
        IbaCc {
            #[serde(default = "one_u16")]
            ccti_increase: u16,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            ccti_limit: Option<u16>,
            #[serde(default)]
            ccti_min: u16,
            ccti_timer: Duration,
            cct: CctConfig,
        },
    }
}

fn one_u16() -> u16 {
    1
}

tagged_enum! {
    /// The congestion control table (`[endpoint] agent.cct`): injection delays by index.
    #[derive(Clone, Debug, PartialEq, Serialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    pub enum CctConfig {
        /// Generated: `entries` entries, entry i delaying i x `step` (a linear table, the
        /// usual starting point of an OpenSM `cc_cct`).
        Linear { entries: u32, step: Duration },
        /// Given entry by entry.
        Delays { delays: Vec<Duration> },
        /// Read from an OpenSM-style file: `cc_cct shift:multiplier,shift:multiplier,...`
        /// (or the bare list); entry delay = multiplier x 2^shift x `unit`.
        File { path: FilePath, unit: Duration },
    }
}

impl Default for EndpointConfig {
    fn default() -> Self {
        Self {
            model: NicModel::Ideal,
            vc_selection: VcSelection::RoundRobin,
            queues: SourceQueues::Fifo,
            skip_blocked: true,
            concurrent_packets: 1,
            link_latency: None,
            output_stage: 0,
            scheduler: None,
            buffer: NicBuffer::PerVc,
            buffer_flits: None,
            injection: Injection::Flit,
            message_setup: None,
            dma: DmaConfig::default(),
            rate_period: None,
            agent: None,
            admission: None,
            processors: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NicModel {
    #[default]
    Ideal,
    Via,
    Hca,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SourceQueues {
    #[default]
    Fifo,
    PerClass,
    RoundRobin,
    Interleaved,
    RateControl,
    PerVc,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NicBuffer {
    #[default]
    PerVc,
    Shared,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Injection {
    #[default]
    Flit,
    Message,
}

/// A host DMA engine. Defaults model the document 003 baseline NIC on a 64-bit 66 MHz PCI
/// bus (528 MB/s); the set-up cost and descriptor size are not given by the documents:
/// 0.5 us and 64 bytes (a VIA descriptor's control and one data segment) are our choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct DmaConfig {
    /// Set-up cost of each transfer.
    pub setup: Duration,
    /// Bandwidth of the host bus (64-bit 66 MHz PCI: 528 MB/s).
    pub bandwidth: Bandwidth,
    /// Size of a send descriptor (VIA's first DMA of a send).
    pub descriptor_bytes: u32,
}

impl Default for DmaConfig {
    fn default() -> Self {
        Self {
            setup: Duration::Seconds(0.5e-6),
            bandwidth: Bandwidth { bits_per_second: 528e6 * 8.0 },
            descriptor_bytes: 64,
        }
    }
}

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
        /// N rows of N non-negative weights: row s gives the destination distribution of s.
        Matrix {
            /// The matrix's file (relative to the configuration).
            file: FilePath,
        },
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

impl Config {
    /// Parse a TOML document; every error carries the dotted path of its key.
    pub fn from_toml_str(text: &str) -> Result<Config, ConfigErrors> {
        Self::from_tree(value::from_toml(text))
    }

    /// Parse a JSON document (what the Python front sends after applying overrides).
    pub fn from_json_str(text: &str) -> Result<Config, ConfigErrors> {
        Self::from_tree(value::from_json(text))
    }

    pub fn from_file(path: &Path) -> Result<Config, ConfigErrors> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new("<file>", format!("cannot read {}: {e}", path.display())))?;
        let mut cfg = Self::from_toml_str(&text)?;
        cfg.base_dir = path.parent().map(Path::to_path_buf);
        Ok(cfg)
    }

    /// The configuration in a parsed document (see `de.rs`: every error, each with its path).
    fn from_tree(tree: Result<value::Value, value::SyntaxError>) -> Result<Config, ConfigErrors> {
        let tree = tree.map_err(|(path, message)| ConfigError::new(path, message))?;
        de::from_value(&tree)
    }

    /// The configuration with every default filled in, as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).expect("a parsed configuration serialises")
    }

    /// The resolver for the files this configuration names (`files.rs`).
    pub fn files(&self) -> Files<'_> {
        Files::new(self.base_dir.as_deref(), self.file_scope)
    }
}

//! `[router]`: the router design, its VCs, buffers and pipeline, the schedulers, the crossbar
//! allocator, preemption and congestion marking.

use serde::{Deserialize, Serialize};

use crate::units::ByteSize;

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

/// Where a flit takes its downstream credit (`[router] credit_at`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreditAt {
    /// At the output multiplexer (stage 5, document 003 §3): a flit crosses into its
    /// output VC buffer while there is room, and leaves on the link only with a credit, so
    /// the output buffer adds to the downstream one.
    #[default]
    Output,
    /// At the crossbar (stage 4): a flit crosses only with a credit of its output VC, and
    /// takes it, so the output buffer holds flits with room already kept for them
    /// downstream. BookSim2's `iq` router (`src/routers/iq_router.cpp`: the switch
    /// allocator asks for a credit, its output queue is bounded only by them); with its
    /// speedups the queue then holds no more than the downstream VC buffer. Not with the
    /// preemptive router.
    Crossbar,
}

impl CreditAt {
    fn is_default(&self) -> bool {
        *self == CreditAt::Output
    }
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

/// What a crossbar input of the separable allocator chooses first (`router/crossbar.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum InputChoice {
    /// A VC: the input's crossbar scheduler picks among its ready VCs, and the VC's output
    /// is the one asked for (document 003's router: the scheduler at the crossbar input).
    #[default]
    Vc,
    /// An output: a round robin over the outputs the input's ready VCs head to, past the
    /// one it was last granted, then among that output's VCs the crossbar scheduler's
    /// choice (BookSim2's `separable_input_first`: its input arbiters rotate over outputs,
    /// one request per output, the VC by round robin from the last one that crossed).
    Output,
}

impl InputChoice {
    fn is_default(&self) -> bool {
        *self == InputChoice::Vc
    }
}

/// How stage 3 matches headers to free output VCs (`[router] vc_allocator`,
/// `router/vc_alloc.rs`, `router/vc_matching.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VcAllocatorKind {
    /// Each output port serves the headers asking for it in round robin from the one after
    /// its last grant, each taking a free VC its route allows (`vc_selection`): a port
    /// hands out as many VCs a cycle as it has free. Document 003's router.
    #[default]
    OutputPort,
    /// iSLIP over VCs, BookSim2's default VC allocator (`vc_allocator = islip`,
    /// `src/allocators/islip.cpp`): every waiting header asks for every free VC of every
    /// way its routing offers (priorities ignored); each output VC grants the first asker
    /// from its own pointer, each header accepts the first granting VC from its own;
    /// pointers move only on first-iteration accepts. Non-preemptive routers.
    Islip,
    /// Separable input-first over VCs, BookSim2's `vc_allocator = separable_input_first`
    /// (`src/allocators/separable_input_first.cpp`, round-robin arbiters), one pass: each
    /// waiting header's arbiter picks one free VC of its ways, the escape last, then the
    /// first from its pointer; each output VC's arbiter picks among the headers that chose
    /// it, the first from its pointer; a match moves both. Non-preemptive routers.
    SeparableInputFirst,
}

/// `[router] vc_allocator`: stage 3's allocator and its iterations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct VcAllocatorConfig {
    pub kind: VcAllocatorKind,
    /// iSLIP's grant-accept rounds a cycle (BookSim2's `alloc_iters`). Default 1; iSLIP only
    /// (BookSim2's separable VC allocator makes one pass whatever `alloc_iters` says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
}

impl VcAllocatorConfig {
    fn is_default(&self) -> bool {
        *self == VcAllocatorConfig::default()
    }

    /// iSLIP's rounds a cycle (1 for the others, which make one pass).
    pub fn iterations(&self) -> u32 {
        self.iterations.unwrap_or(1)
    }
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
    /// The separable allocator's input choice: a VC (document 003's) or an output first
    /// (BookSim2's `separable_input_first`; without speedups).
    // (skipped when default, so configurations written before it hash as they did)
    #[serde(skip_serializing_if = "InputChoice::is_default")]
    #[schemars(extend("default" = "vc"))]
    pub input_choice: InputChoice,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        Self { kind: AllocatorKind::SeparableInputFirst, iterations: None, input_choice: InputChoice::Vc }
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
    /// Where a flit takes its downstream credit (`CreditAt`). Default `output`.
    // (skipped when default, so configurations written before it hash as they did)
    #[serde(skip_serializing_if = "CreditAt::is_default")]
    pub credit_at: CreditAt,
    /// Delay of each pipeline stage, in cycles.
    pub pipeline: PipelineConfig,
    /// Wire delay of a link, in cycles.
    pub link_latency: u32,
    /// Delay of a credit from a downstream buffer back to the upstream output, in cycles.
    pub credit_latency: u32,
    /// Flits per cycle each crossbar input may send and each crossbar output may accept
    /// (qosnet's own speedup: any of an input's VCs, any inputs; separable allocator only).
    /// BookSim2's speedups are `input_speedup`, `output_speedup` and `internal_speedup`.
    pub speedup: u32,
    /// BookSim2's input speedup (its `iq` router, `src/routers/iq_router.cpp`, the model
    /// matched so that its configurations run here): each input port is this many crossbar
    /// inputs, VC v on input v mod `input_speedup`, each sending a flit per allocation
    /// pass. An input may so send several flits a pass, but only from VCs of different
    /// residues. With any allocator; not with `speedup` above 1 or the preemptive router.
    pub input_speedup: u32,
    /// BookSim2's output speedup (as `input_speedup`): each output port is this many
    /// crossbar outputs, input port i reaching output o through its i mod `output_speedup`
    /// one, each taking a flit per allocation pass; the output VC buffers (`output_buffer`)
    /// take them and the link still drains one flit a cycle.
    pub output_speedup: u32,
    /// BookSim2's internal speedup, whole numbers only: VC allocation and the crossbar
    /// (stages 3 and 4) run this many passes a cycle, the output stage and the links one
    /// flit a cycle. The pipeline delays stay in cycles: a stage the faster core finishes
    /// sooner is given a shorter `pipeline` delay (`qosnet convert` works BookSim2's out).
    pub internal_speedup: u32,
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
    /// How stage 3 hands out output VCs (`VcAllocatorConfig`). Default: each output port
    /// by round robin over the headers asking for it.
    // (skipped when default, so configurations written before it hash as they did)
    #[serde(skip_serializing_if = "VcAllocatorConfig::is_default")]
    pub vc_allocator: VcAllocatorConfig,
    /// Which free VC the output-port allocator gives a header (the iSLIP VC allocator's
    /// accept pointers choose their own).
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
    #[derive(Clone, Debug, PartialEq, Serialize)]
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
        /// RED-style probabilistic ECN marking (Floyd and Jacobson, 1993, on the
        /// instantaneous queue, as DCQCN's switches do: Zhu et al., SIGCOMM 2015, §3): a
        /// packet whose header finds `kmin` or less queued for its output port and VL is not
        /// marked, more than `kmin` marked with probability rising linearly to `pmax` at
        /// `kmax`, `kmax` or more always. The queue is IBA CC's port-and-VL count,
        /// headers waiting for a VC of the port included (`router/marking.rs`). The paper's 5 KB, 200 KB and 1% are for megabyte switch
        /// buffers; size `kmin` and `kmax` to the router's buffers.
        Red {
            /// At or below this queue no packet is marked.
            kmin: ByteSize,
            /// From this queue on every packet is marked.
            kmax: ByteSize,
            /// The marking probability just below `kmax`, in (0, 1].
            pmax: f64,
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
            credit_at: CreditAt::Output,
            pipeline: PipelineConfig::default(),
            link_latency: 1,
            credit_latency: 1,
            speedup: 1,
            input_speedup: 1,
            output_speedup: 1,
            internal_speedup: 1,
            crossbar_scheduler: None,
            output_scheduler: None,
            allocator: AllocatorConfig::default(),
            block_size: 1,
            vc_allocator: VcAllocatorConfig::default(),
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

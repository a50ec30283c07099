//! `[endpoint]`: the hosts' network interfaces (ideal, VIA NIC, InfiniBand HCA), their queues,
//! DMA and schedulers, and the control agents (congestion control with its CCT, admission).

use super::{FilePath, SchedulerConfig, VcSelection};
use crate::units::{Bandwidth, ByteSize, Duration};
use serde::{Deserialize, Serialize};

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
    /// A packet starts only on a VC with a credit (room in the router's input buffer), as
    /// BookSim2's source picks its injection VC (`trafficmanager.cpp`: the first VC from
    /// its round robin that is neither in use nor full); else it waits for one. Default
    /// false: any VC not in use, whose credits the packet then waits for. Ideal endpoint,
    /// non-preemptive routers, without `queues = "per_vc"`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub vc_needs_credit: bool,
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
        /// DCQCN, RoCEv2's congestion control (Zhu et al., SIGCOMM 2015; `control/dcqcn.rs`):
        /// the destination answers an ECN-marked packet with a CNP, at most one per flow
        /// every `cnp_interval`; the source cuts the flow's rate by alpha/2 on a CNP and
        /// recovers it by fast recovery (`fast_recovery` steps), additive (`rate_ai`) and
        /// hyper (`rate_hai`) increase, stepped by a timer (`rate_timer`) and a byte counter
        /// (`byte_counter`); alpha moves toward 1 by `g` on a CNP and decays every
        /// `alpha_timer` without one. Packets are paced at the flow's rate, never below
        /// `min_rate`. Defaults: the paper's (50 us, 55 us, 1/256, 55 us, 10 MB, 5,
        /// 40 Mb/s; `rate_hai` 80 Mb/s and `min_rate` 40 Mb/s are ours, see the module).
        /// The switch side is `[router] marking = { kind = "red" }`.
        Dcqcn {
            /// N: at most one CNP per flow this often (default 50 us).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            cnp_interval: Option<Duration>,
            /// K: alpha decays once per this period without a CNP (default 55 us).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            alpha_timer: Option<Duration>,
            /// alpha's gain g, in (0, 1] (default 1/256).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            g: Option<f64>,
            /// T: the rate-increase timer (default 55 us).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            rate_timer: Option<Duration>,
            /// B: a rate-increase event per this much sent (default 10 MB).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            byte_counter: Option<ByteSize>,
            /// F: increase events of fast recovery before additive increase (default 5).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            fast_recovery: Option<u32>,
            /// R_AI: the additive increase step (default 40 Mb/s).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            rate_ai: Option<Bandwidth>,
            /// R_HAI: the hyper increase step (default 80 Mb/s).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            rate_hai: Option<Bandwidth>,
            /// The lowest rate a cut leaves (default 40 Mb/s).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            min_rate: Option<Bandwidth>,
            /// Marked packets arriving within N of a flow's last CNP are answered by one CNP
            /// at the interval's end (the paper's notification point, §3.1: at most one CNP
            /// every N if any packet in it was marked; default true), or not at all (false).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            defer_cnp: Option<bool>,
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
            vc_needs_credit: false,
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

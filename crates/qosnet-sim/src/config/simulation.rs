//! `[simulation]` (the run: seed, warm-up, window, drain, watchdog, limits) and `[physical]`
//! (flit size and link bandwidth).

use crate::units::{Bandwidth, ByteSize, Duration};
use serde::{Deserialize, Serialize};

/// Longest run or measurement window accepted, in cycles (about 2.5 years at 80 ns).
pub const MAX_CYCLES: u64 = 1_000_000_000_000_000;

/// Most threads one run may use (`simulation.threads`).
pub const MAX_THREADS: u32 = 256;

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
    /// Threads one run uses: the routers are split into this many contiguous ranges, whose
    /// stages 3-5 run side by side each cycle (ARCHITECTURE.md "Threads"). The output is
    /// the same byte for byte for any count. Runs with [router] marking, admission
    /// control, [trace] stalls or watch_flows, an agent that reads the routers (ALO,
    /// Self-Tuned), or `router.vc_release = "tail_sent"` with a routing that draws a way
    /// at the source (Valiant, UGAL, xy_yx, NCA) take 1. At most the number of routers.
    pub threads: u32,
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
            threads: 1,
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

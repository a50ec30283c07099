//! `[trace]`: what a run records beyond its metrics.

use crate::units::Duration;
use serde::{Deserialize, Serialize};

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

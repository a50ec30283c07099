//! Configuration of real-time video sources (document 003 §4.2): the trace file format
//! and the synthetic MPEG model's parameters. Plain data; `traffic::video` reads the traces
//! and generates the synthetic frames.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceFormat {
    /// By extension: `.st` EvalVid, `.dat` LTE-Sim, anything else one value per line.
    #[default]
    Auto,
    Evalvid,
    LteSim,
    Plain,
}

/// How a video source's traces are brought to its `mean_rate` (document 003 §4.2: seven
/// MPEG-2 traces "with different bandwidth requirements").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceScale {
    /// Each trace rescaled on its own to `mean_rate`: every stream has the same mean rate
    /// (without `mean_rate`, the traces' own sizes).
    #[default]
    Each,
    /// Every trace at its own mean rate: its frame sizes in bytes at the configured frame
    /// rate, unscaled, so streams differ in rate as the traces do. No `mean_rate`; every
    /// trace's units must be known (EvalVid or LTE-Sim, not a plain list of values).
    Own,
    /// One factor for all traces, so that their streams average `mean_rate` while keeping
    /// the traces' rates relative to one another. Needs `mean_rate` and traces of known
    /// units.
    Common,
}

/// Where a stream's chain of deadlines starts. Document 003 §4.2 sets each frame's deadline
/// to the previous deadline + 33.3 ms (the previous frame's arrival + 33.3 ms after a miss)
/// but does not say what the first frame's is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FirstDeadline {
    /// Its creation + one period: a frame misses when it takes longer than a period.
    #[default]
    Created,
    /// Its own arrival (it cannot miss): each later frame then misses when it takes longer
    /// than the frame that set the chain, so misses follow the jitter of delivery.
    Arrival,
}

/// A synthetic MPEG VBR model (our choice, for when no trace is given): a GOP pattern of
/// I, P and B frames whose mean sizes stand in the ratio `i_to_p` : 1 : 1/`p_to_b`
/// (about 5 : 2.5 : 1 in MPEG-1/2 trace studies such as Rose's and Krunz and Tripathi's),
/// each frame's size lognormal around its type's mean with coefficient of variation
/// `cov`, scaled so the long-run rate is `mean_rate_bps` at `fps`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SyntheticVbr {
    /// The group of pictures, one letter (I, P or B) per frame.
    pub gop: String,
    /// Mean size of an I frame over a P frame's.
    pub i_to_p: f64,
    /// Mean size of a P frame over a B frame's.
    pub p_to_b: f64,
    /// Coefficient of variation of a frame's size around its type's mean.
    pub cov: f64,
}

impl Default for SyntheticVbr {
    fn default() -> Self {
        Self { gop: "IBBPBBPBBPBB".into(), i_to_p: 2.0, p_to_b: 2.5, cov: 0.25 }
    }
}

impl SyntheticVbr {
    pub fn validate(&self) -> Result<(), String> {
        if self.gop.is_empty() || !self.gop.starts_with('I') || !self.gop.chars().all(|c| "IPB".contains(c)) {
            return Err(format!("gop must be I, P and B frames starting with I, got {:?}", self.gop));
        }
        for (name, v) in [("i_to_p", self.i_to_p), ("p_to_b", self.p_to_b)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{name} must be > 0, got {v}"));
            }
        }
        if !(0.0..=5.0).contains(&self.cov) {
            return Err(format!("cov must be in 0..=5, got {}", self.cov));
        }
        Ok(())
    }
}

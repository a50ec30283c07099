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
mod endpoint;
pub mod files;
pub mod memory;
mod router;
mod routing;
pub mod schema;
mod simulation;
mod topology;
mod trace;
mod traffic;
pub mod value;
pub mod video;

pub use endpoint::{
    AdmissionConfig, AgentConfig, CctConfig, DmaConfig, EndpointConfig, Injection, NicBuffer, NicModel,
    SourceQueues,
};
pub use files::{FilePath, FileScope, Files};
pub use memory::{MemoryEstimate, MemoryPart};
pub use router::{
    AllocatorConfig, AllocatorKind, ClassCounts, ControlVc, CreditAt, InputChoice, MarkingConfig,
    PipelineConfig, PreemptionConfig, RouterConfig, RouterKind, SchedulerConfig, VcAllocatorConfig,
    VcAllocatorKind, VcClasses, VcRelease, VcSelection, VictimMarking, VirtualClockConfig, VirtualClockState,
    WaitingHeaders,
};
pub use routing::{
    DrbSplit, EscapeRequest, LidVcs, MinAdaptConfig, MinAdaptDirections, MultipathConfig, PathSelection,
    RoutingConfig, RoutingKind, TorusTies,
};
pub use simulation::{PhysicalConfig, SimulationConfig, MAX_CYCLES, MAX_THREADS};
pub use topology::{FlatflyPlacement, IbFabricFormat, TopologyConfig};
pub use trace::TraceConfig;
pub use traffic::{
    AllNodes, MixConfig, NodeSet, PatternConfig, PhaseConfig, Process, TrafficClass, TrafficConfig,
    VtickConfig,
};

use crate::error::{ConfigError, ConfigErrors};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

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

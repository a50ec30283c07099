//! # qosnet-sim
//!
//! A fast, deterministic flit-level simulator of QoS-capable wormhole interconnects: the
//! pipelined router of document 003 §3 / document 000 §3.1, endpoints, traffic and the
//! standard measurement methodology. The Python package `qosnet` drives it through thin
//! bindings; this crate has no Python in it.
//!
//! ```
//! use qosnet_sim::Simulation;
//! let toml = r#"
//!     [simulation]
//!     warmup = 1000
//!     measure = 5000
//!     [topology]
//!     kind = "mesh"
//!     k = 4
//!     n = 2
//!     [[traffic]]
//!     load = 0.1
//! "#;
//! let mut sim = Simulation::from_toml(toml, None).unwrap();
//! let result = sim.run().unwrap();
//! assert!(!result.summary.saturated);
//! assert!((result.summary.accepted_flits_per_node_cycle - 0.1).abs() < 0.02);
//! ```

pub mod admission;
pub mod build;
pub mod config;
mod control;
pub use control::{AdmissionStats, CongestionStats};
pub mod engine;
pub mod error;
pub mod flit;
pub mod ids;
pub mod metrics;
pub mod results;
pub mod ring;
pub mod routing;
pub mod sched;
pub mod seed;
pub mod topology;
pub mod traffic;
pub mod units;

pub mod endpoint;
mod invariants;
mod links;
mod net;
mod router;
mod unchecked;
mod wheel;

pub use config::Config;
pub use engine::Simulation;
pub use error::{ConfigError, ConfigErrors, SimError, VcPath};
pub use results::{RunResult, Summary};

//! The engine's integration tests, as one test binary whose modules are the former test
//! files. Each test binary links the whole engine and its dependencies (optimised, with
//! debug assertions: `[profile.test]`) and instantiates the engine's generic code for
//! itself: fifteen binaries did that fifteen times, one does it once (`.ci/run`).
//!
//! `tests/config_fuzz.rs` stays a binary of its own: its watchdog ends the process when no
//! case has started for a minute, which other modules' long tests would trip.

mod admission;
mod architecture;
mod bad_configs;
mod blocks;
mod cmesh;
mod cost_and_limits;
mod dragonfly;
mod drb;
mod engine;
mod escape_vc;
mod fat_tree;
mod file_keys;
mod flatfly;
mod fly;
mod ib_fabric;
mod iba_cc;
mod memory_estimate;
mod nic;
mod oblivious;
mod qos_router;
mod qos_topologies;
mod seams;
mod threads;

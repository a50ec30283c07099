//! The engine's integration tests, as one test binary whose modules are the former test
//! files. Each test binary links the whole engine and its dependencies, optimised and with
//! debug assertions (`[profile.test]`): thirteen binaries took most of the Rust tests'
//! build, one takes a fraction of it (`.ci/run`, README "Set up").
//!
//! `tests/config_fuzz.rs` stays a binary of its own: its watchdog ends the process when no
//! case has started for a minute, which other modules' long tests would trip.

mod admission;
mod architecture;
mod bad_configs;
mod cost_and_limits;
mod drb;
mod engine;
mod file_keys;
mod ib_fabric;
mod iba_cc;
mod memory_estimate;
mod nic;
mod qos_router;
mod seams;

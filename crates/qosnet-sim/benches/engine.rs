//! Simulation speed on the fixed configurations of `configs/bench/`: the four meshes of
//! issue 2, the 8-port QoS router at 80% load of issue 3, and both again with the QoS
//! NIC of issue 4 at every node (the `_nic` pairs: the NIC models' cost).
//!
//! Each iteration simulates a fixed number of cycles of the configuration after a warm-up
//! that brings the network to steady state; throughput is reported as simulated cycles,
//! and the delivered flits per cycle are printed once so flits/s can be derived.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use qosnet_sim::{Config, Simulation};
use std::path::PathBuf;

/// (configuration, cycles per iteration, warm-up cycles)
const CONFIGS: [(&str, u64, u64); 7] = [
    ("mesh4x4_40flit", 20_000, 2_000),
    ("mesh8x8_40flit", 5_000, 2_000),
    ("mesh8x8_1flit", 2_000, 2_000),
    ("mesh32x32_1flit", 100, 2_000),
    // every video stream has started (within one 33.3 ms frame period) after 420k cycles
    ("router8_qos_80", 50_000, 420_000),
    ("mesh8x8_40flit_nic", 5_000, 2_000),
    ("router8_qos_80_nic", 50_000, 420_000),
];

fn steady_state(name: &str, warmup: u64) -> Simulation {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/bench").join(format!("{name}.toml"));
    let mut cfg = Config::from_file(&path).expect("bench config");
    // Never stop measuring inside the benchmark.
    cfg.simulation.measure = qosnet_sim::units::Duration::Cycles(qosnet_sim::config::MAX_CYCLES);
    let mut sim = Simulation::new(cfg).expect("valid bench config");
    sim.advance(warmup).expect("warm-up");
    sim
}

fn engine(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    for (name, cycles, warmup) in CONFIGS {
        let mut sim = steady_state(name, warmup);
        let (_, e0, _) = sim.flit_counts();
        let t0 = sim.now();
        group.throughput(Throughput::Elements(cycles));
        group.bench_with_input(BenchmarkId::new("cycles", name), &cycles, |b, &n| {
            b.iter(|| sim.advance(n).expect("no deadlock"))
        });
        let (_, e1, _) = sim.flit_counts();
        println!(
            "{name}: {:.2} delivered flits per simulated cycle",
            (e1 - e0) as f64 / (sim.now() - t0) as f64
        );
    }
    group.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);

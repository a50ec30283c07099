//! Call admission's speed (issue 5): decisions on the 281-node avakas InfiniBand fabric
//! (`configs/clusters/avakas.toml`, its real routes) holding 1,000 reservations, as
//! `qosnet bench --admission` loads it: flows between random distinct nodes asking 1-10%
//! of the source's capacity. One iteration decides one flow (document 004 §3.4: source,
//! every switch port on the deterministic path, destination); criterion reports the time
//! per decision, whose inverse is decisions per second.

use criterion::{criterion_group, criterion_main, Criterion};
use qosnet_sim::admission::CallAdmission;
use qosnet_sim::Config;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::PathBuf;

const RESERVATIONS: usize = 1000;

fn random_flow(rng: &mut Xoshiro256PlusPlus, a: &CallAdmission) -> (u32, u32, f64) {
    let nodes = a.topology().nodes as u32;
    let src = rng.gen_range(0..nodes);
    let dst = (src + rng.gen_range(1..nodes)) % nodes;
    let bps = (a.node_capacity(src) * rng.gen_range(0.01..0.10)).round();
    (src, dst, bps)
}

fn loaded_avakas() -> (CallAdmission, Xoshiro256PlusPlus) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../configs/clusters/avakas.toml");
    let cfg = Config::from_file(&path).expect("avakas cluster description");
    let mut a = CallAdmission::from_config(&cfg).expect("valid cluster");
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
    let mut held = 0;
    while held < RESERVATIONS {
        let (s, d, bps) = random_flow(&mut rng, &a);
        held += usize::from(a.admit(s, d, bps).is_ok());
    }
    (a, rng)
}

fn admission(c: &mut Criterion) {
    let (mut a, mut rng) = loaded_avakas();
    let flows: Vec<_> = (0..4096).map(|_| random_flow(&mut rng, &a)).collect();
    let mut group = c.benchmark_group("admission_avakas_1000");
    let mut i = 0;
    group.bench_function("check", |b| {
        b.iter(|| {
            let (s, d, bps) = flows[i % flows.len()];
            i += 1;
            std::hint::black_box(a.check(s, d, bps).is_ok())
        })
    });
    group.bench_function("admit_release", |b| {
        b.iter(|| {
            let (s, d, bps) = flows[i % flows.len()];
            i += 1;
            if let Ok(id) = a.admit(s, d, bps) {
                a.release(id);
            }
        })
    });
    group.finish();
}

criterion_group!(benches, admission);
criterion_main!(benches);

//! Run one configuration file and print its summary and the simulation speed:
//! `cargo run --release -p qosnet-sim --example run -- configs/bench/mesh8x8_40flit.toml`

use qosnet_sim::{Config, Simulation};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run CONFIG.toml");
    let cfg = Config::from_file(path.as_ref()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let mut sim = Simulation::new(cfg).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let t = Instant::now();
    let r = sim.run().unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let secs = t.elapsed().as_secs_f64();
    println!("{}", r.summary_json());
    print!("{}", r.classes.to_csv());
    print!("{}", r.phases.to_csv());
    let s = &r.summary;
    println!(
        "{:.0} cycles/s, {:.0} delivered flits/s, {:.0} flit-hops/s ({:.2} s wall)",
        s.cycles as f64 / secs,
        s.flits_ejected as f64 / secs,
        s.flit_hops as f64 / secs,
        secs
    );
}

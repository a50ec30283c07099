//! `validate` tells what a run costs (`build/cost.rs`), and a run honours
//! `[simulation] time_limit`, its results so far kept.

use qosnet_sim::{Config, SimError, Simulation};

fn cfg(text: &str) -> Config {
    Config::from_toml_str(text).unwrap()
}

/// A star of 4 nodes: every path crosses its one router. At load 0.25 with 8-flit messages
/// each node offers 0.25 flits per cycle, 1 flit per cycle in all; 1000 + 4000 cycles of
/// warm-up and measurement carry 5000 flit-hops.
#[test]
fn the_cost_of_a_star_is_worked_by_hand() {
    let c = cfg("[simulation]\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 2000\n\
                 [topology]\nkind = \"star\"\nports = 4\n\
                 [[traffic]]\nload = 0.25\nmessage_flits = 8\npacket_flits = 8\n");
    let v = qosnet_sim::build::validate(&c).unwrap();
    let cost = qosnet_sim::build::cost::estimate(&c, &v);
    assert_eq!((cost.cycles, cost.drain_cycles), (5000, 2000));
    assert!((cost.offered_flits_per_cycle - 1.0).abs() < 1e-9, "{cost:?}");
    assert_eq!(cost.mean_hops, 1.0);
    assert!((cost.flit_hops - 5000.0).abs() < 1e-6, "{cost:?}");
    let per_hop = qosnet_sim::build::cost::NS_PER_FLIT_HOP * 1e-9;
    let per_router_cycle = qosnet_sim::build::cost::NS_PER_ROUTER_CYCLE * 1e-9;
    assert!((cost.seconds - (5000.0 * per_hop + 5000.0 * per_router_cycle)).abs() < 1e-12);
    assert!(cost.seconds_with_drain > cost.seconds);
}

/// A bigger network at the same load per node costs more: work grows with nodes and hops.
#[test]
fn cost_grows_with_the_network() {
    let mesh = |k: u32| {
        let c = cfg(&format!("[topology]\nkind = \"mesh\"\nk = {k}\nn = 2\n[[traffic]]\nload = 0.1\n"));
        let v = qosnet_sim::build::validate(&c).unwrap();
        qosnet_sim::build::cost::estimate(&c, &v)
    };
    let (small, big) = (mesh(4), mesh(8));
    // uniform traffic on a k x k mesh: 2k/3 links, k = 4: about 2.7 + the last router
    assert!(small.mean_hops > 3.0 && small.mean_hops < 4.4, "{small:?}");
    assert!(big.mean_hops > small.mean_hops * 1.6, "{big:?}");
    assert!(big.flit_hops > 4.0 * small.flit_hops);
}

#[test]
fn a_run_past_its_time_limit_stops_with_its_results_so_far() {
    let text = "[simulation]\nwarmup = 0\nmeasure = 100000000\ntime_limit = \"50 ms\"\n\
                [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n[[traffic]]\nload = 0.2\n";
    let mut sim = Simulation::new(cfg(text)).unwrap();
    let start = std::time::Instant::now();
    let Err(SimError::TimeLimit { cycle, elapsed_ms, limit_ms }) = sim.run() else {
        panic!("a 10^8-cycle run finished inside 50 ms")
    };
    assert_eq!(limit_ms, 50);
    assert!(elapsed_ms >= 50 && cycle > 0 && cycle < 100_000_000);
    assert!(start.elapsed().as_secs_f64() < 30.0);
    // the results so far are there
    let r = sim.result();
    assert!(r.summary.messages_delivered > 0, "{:?}", r.summary);
    // without a limit the same configuration is not stopped (a short run finishes)
    let short = text.replace("measure = 100000000", "measure = 2000");
    assert!(Simulation::new(cfg(&short)).unwrap().run().is_ok());
}

//! The flattened butterfly run whole: dimension-order routing keeps every invariant and
//! never deadlocks past saturation on one VC, and a packet crosses one router per
//! differing coordinate at zero load.

use qosnet_sim::Simulation;

fn run(load: f64, vcs: u32, pattern: &str) -> qosnet_sim::Summary {
    run_with("dor", 2, load, (vcs, 4), pattern)
}

/// `vcs`: the VCs and their buffers' flits.
fn run_with(routing: &str, c: u32, load: f64, vcs: (u32, u32), pattern: &str) -> qosnet_sim::Summary {
    let (vcs, buffer) = vcs;
    let toml = format!(
        "[simulation]\nseed = 5\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 4000\nwatchdog = 2000\n\
         [topology]\nkind = \"flatfly\"\nk = 4\nn = 2\nc = {c}\n[routing]\nkind = \"{routing}\"\n\
         [router]\nvcs = {vcs}\ninput_buffer = {buffer}\noutput_buffer = 1\nvc_release = \"tail_sent\"\n\
         pipeline = {{ sync = 0, routing = 1, vc_alloc = 1, crossbar = 1, output = 1 }}\n\
         link_latency = 1\ncredit_latency = 1\n[endpoint]\nlink_latency = 1\n\
         [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\npattern = {{ kind = \"{pattern}\" }}\n"
    );
    let mut s = Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.run_checking_invariants(5).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.result().summary
}

#[test]
fn dimension_order_keeps_the_invariants_past_saturation_on_one_vc() {
    // the watchdog (2000 cycles) reports a deadlock as an error; VCs are released at the
    // tail (else one 1-flit packet per credit round trip bounds bit complement near 0.07)
    for pattern in ["uniform", "bit_complement", "bit_reversal"] {
        let s = run(0.95, 1, pattern);
        assert!(s.saturated, "{pattern}: 0.95 should saturate");
        assert!(
            s.accepted_flits_per_node_cycle > 0.1,
            "{pattern}: the network moves: {}",
            s.accepted_flits_per_node_cycle
        );
    }
}

#[test]
fn zero_load_latency_counts_one_router_per_differing_coordinate() {
    // 32 nodes on a 4x4 flat, c = 2. A 1-flit packet: the injection link (1 cycle), then
    // per router 4 pipeline cycles and the link (1). Bit complement sends node 2r + j to
    // 31 - (2r + j), on router 15 - r: both coordinates differ (3 - x ≠ x for k = 4), so
    // every packet crosses 3 routers: 1 + 3 x 5 = 16 cycles plus the source's own wait
    // for the injection slot (under a cycle at this load).
    let s = run(0.01, 1, "bit_complement");
    assert!((s.latency.mean - 16.0).abs() < 1.0, "mean latency {}", s.latency.mean);
}

#[test]
fn valiant_and_ugal_spread_what_dimension_order_sends_down_one_channel() {
    // 64 nodes on a 4x4 flat, c = 4, 8 VCs of 8 flits. Bit complement sends node 4r + j to
    // 63 - (4r + j), on router 15 - r: dimension order takes all four of a router's nodes
    // down the one channel to (3 - x, y), a quarter of a channel each (0.25). Valiant
    // spreads them over every router at twice the hops; UGAL-L detours only as the
    // minimal queue grows. Both then carry a third more (0.33 and 0.32 when written).
    let (dor, valiant, ugal) = (
        run_with("dor", 4, 0.5, (8, 8), "bit_complement"),
        run_with("valiant", 4, 0.5, (8, 8), "bit_complement"),
        run_with("ugal", 4, 0.5, (8, 8), "bit_complement"),
    );
    let acc = |s: &qosnet_sim::Summary| s.accepted_flits_per_node_cycle;
    assert!(dor.saturated && (acc(&dor) - 0.25).abs() < 0.02, "dor accepted {}", acc(&dor));
    assert!(acc(&valiant) > 0.3, "valiant accepted {} (dor {})", acc(&valiant), acc(&dor));
    assert!(acc(&ugal) > 0.3, "ugal accepted {} (dor {})", acc(&ugal), acc(&dor));
    // UGAL-L with O1TURN (four layers of two VCs) spreads it as well
    let turns = run_with("ugal_xy_yx", 4, 0.5, (8, 8), "bit_complement");
    assert!(acc(&turns) > 0.3, "ugal_xy_yx accepted {} (dor {})", acc(&turns), acc(&dor));
    // On uniform traffic at a load dimension order carries, UGAL-L stays minimal and
    // Valiant pays its detour in latency.
    let (dor, valiant, ugal) = (
        run_with("dor", 4, 0.3, (8, 8), "uniform"),
        run_with("valiant", 4, 0.3, (8, 8), "uniform"),
        run_with("ugal", 4, 0.3, (8, 8), "uniform"),
    );
    assert!(!dor.saturated && !ugal.saturated && !valiant.saturated);
    assert!(
        (ugal.latency.mean - dor.latency.mean).abs() < 1.0,
        "ugal {} dor {}",
        ugal.latency.mean,
        dor.latency.mean
    );
    assert!(
        valiant.latency.mean > dor.latency.mean + 3.0,
        "valiant {} dor {}",
        valiant.latency.mean,
        dor.latency.mean
    );
}

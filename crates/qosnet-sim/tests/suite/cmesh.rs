//! The concentrated mesh (BookSim2's `cmesh`) run whole: dimension order, with and without
//! the express channels, keeps every invariant and never deadlocks past saturation on one
//! VC, and at zero load a packet takes the cycles its routers and channels add up to.

use qosnet_sim::Simulation;

/// A 4x4 cmesh (64 nodes) with BookSim2's `use_noc_latency` channels: 2 cycles between
/// routers, 4 (k) on an express channel, 1 to and from a node.
fn run(load: f64, vcs: u32, routing: &str, pattern: &str) -> qosnet_sim::Summary {
    let toml = format!(
        "[simulation]\nseed = 5\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 4000\nwatchdog = 2000\n\
         [topology]\nkind = \"cmesh\"\nk = 4\nexpress_latency = 4\n[routing]\nkind = \"{routing}\"\n\
         [router]\nvcs = {vcs}\ninput_buffer = 4\noutput_buffer = 1\nvc_release = \"tail_sent\"\n\
         pipeline = {{ sync = 0, routing = 1, vc_alloc = 1, crossbar = 1, output = 1 }}\n\
         link_latency = 2\ncredit_latency = 2\n[endpoint]\nlink_latency = 1\n\
         [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\npattern = {{ kind = \"{pattern}\" }}\n"
    );
    let mut s = Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.run_checking_invariants(5).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.result().summary
}

#[test]
fn dimension_order_keeps_the_invariants_past_saturation_on_one_vc() {
    // the watchdog (2000 cycles) reports a deadlock as an error. (Bit complement sends every
    // node across the middle: 4 channels each way for 32 nodes bound it at 0.125 flits a
    // node a cycle, and one VC of 4 flits over 2-cycle channels at a fraction of that.)
    for routing in ["dor", "dor_express"] {
        for pattern in ["uniform", "bit_complement", "transpose", "tornado"] {
            let s = run(0.95, 1, routing, pattern);
            assert!(s.saturated, "{routing} {pattern}: 0.95 should saturate");
            assert!(s.accepted_flits_per_node_cycle > 0.01, "{routing} {pattern}: the network moves: {s:?}");
        }
    }
}

#[test]
fn zero_load_latency_adds_up_routers_and_channels() {
    // Bit complement sends router (x, y)'s nodes to router (3 - x, 3 - y). A 1-flit packet
    // takes the injection channel (1), 4 pipeline cycles a router, its channels between
    // routers (2 each, 4 an express one) and the ejection channel (1).
    // - dor: |3 - 2x| + |3 - 2y| hops: a corner router's nodes 6 (1 + 7*4 + 12 + 1 = 42
    //   cycles), an edge's 4 (30), the middle four's 2 (18): 30 on average;
    // - dor_express: from a corner, express + mesh channel in x and again in y (1 + 5*4 +
    //   2*(4 + 2) + 1 = 34); along an edge, three mesh hops in the dimension it runs along
    //   (its edge is the other's), one in the other (30); the middle as before (18): 28.
    // Plus the source's own wait for the injection slot (under a cycle at this load).
    let dor = run(0.005, 1, "dor", "bit_complement").latency.mean;
    let express = run(0.005, 1, "dor_express", "bit_complement").latency.mean;
    assert!((dor - 30.0).abs() < 1.0, "dor: mean latency {dor}");
    assert!((express - 28.0).abs() < 1.0, "dor_express: mean latency {express}");
}

//! The k-ary n-fly run whole: a node injects at the first stage and ejects at the last
//! (`Topology::attach`, `Topology::eject`), destination-tag routing takes each packet
//! through one router a stage, and the network keeps every invariant past saturation, with
//! the QoS router too.

use qosnet_sim::ids::NodeId;
use qosnet_sim::Simulation;

fn fly(k: u32, n: u32, router: &str, traffic: &str) -> Simulation {
    let toml = format!(
        "[simulation]\nseed = 3\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 4000\nwatchdog = 2000\n\
         [topology]\nkind = \"fly\"\nk = {k}\nn = {n}\n[router]\n{router}\n[[traffic]]\n{traffic}\n"
    );
    Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

#[test]
fn every_path_crosses_one_router_a_stage_to_its_destination() {
    // (the path walk from the node's first-stage port ends at the destination's ejection
    // port, or it reports the node it reached instead)
    for (k, n) in [(2, 1), (2, 4), (3, 3), (4, 3)] {
        let s = fly(k, n, "vcs = 2", "load = 0.1");
        let (t, nodes) = (s.topology(), (k as usize).pow(n));
        for src in 0..nodes {
            for dst in 0..nodes {
                let path = s.routing().path(t, 2, NodeId(src as u32), NodeId(dst as u32));
                assert_eq!(path.len(), n as usize, "{k}-ary {n}-fly, {src} -> {dst}");
            }
        }
    }
}

#[test]
fn zero_load_latency_counts_n_routers() {
    // A 4-ary 3-fly, 1-flit packets: the injection link (1 cycle), then per router the
    // five pipeline stages (5) and its output link (1), the last link the ejection:
    // 1 + 3 x 6 = 19 cycles, plus under a cycle's wait for the injection slot at this load.
    let mut s = fly(4, 3, "link_latency = 1", "load = 0.01\nmessage_flits = 1\npacket_flits = 1");
    let r = s.run().unwrap();
    assert!((r.summary.latency.mean - 19.0).abs() < 1.0, "mean latency {}", r.summary.latency.mean);
}

#[test]
fn keeps_the_invariants_past_saturation_on_one_vc() {
    // One path per pair and channels from a stage to the next only: no cycle of channel
    // dependencies, so even one VC cannot deadlock (the watchdog, 2000 cycles, would say).
    // Bit complement on a 4-ary 2-fly sends the four nodes of first-stage router a all
    // through its port to second-stage router 3 - a: a quarter of a channel each at most.
    for (pattern, most) in [("uniform", 1.0), ("bit_complement", 0.25)] {
        let mut s = fly(
            4,
            2,
            "vcs = 1",
            &format!("load = 0.95\npacket_flits = 4\npattern = {{ kind = \"{pattern}\" }}"),
        );
        s.run_checking_invariants(5).unwrap_or_else(|e| panic!("{pattern}: {e}"));
        let r = s.result().summary;
        let accepted = r.accepted_flits_per_node_cycle;
        assert!(r.saturated && accepted > 0.05 && accepted <= most, "{pattern}: {accepted}");
    }
}

//! A one-threaded run visited by blocks of routers, each block's arrivals just before its
//! visits (`router/inbox.rs`, chosen for large networks): the output is the same byte for
//! byte as all arrivals then all visits, for blocks of any size, forward and in reverse,
//! and the invariants hold every cycle. Runs that would see the order (a way drawn as a
//! header arrives, `[trace]`, admission control) are not visited by blocks.

use super::threads::{case_toml, CASES};
use qosnet_sim::Simulation;

/// Every table of a run of `toml` visited by blocks of `per` routers (None: not by
/// blocks), in reverse where `reverse`; and whether it was visited by blocks.
fn outputs(toml: &str, per: Option<usize>, reverse: bool) -> (String, bool) {
    let mut sim = Simulation::from_toml(toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let by_block = sim.set_visits_by_block(per);
    sim.set_reverse_visits(reverse);
    let r = sim.run().unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let mut s = r.summary_json();
    for t in [&r.classes, &r.nodes, &r.links, r.messages.as_ref().unwrap(), &r.phases] {
        s.push_str(&t.to_csv());
    }
    (s, by_block)
}

/// The networks of the threads' test (meshes, tori, the preemptive QoS router, BookSim2's
/// speedups, dragonfly, fly, fat trees, cmesh, minimal adaptive, the NIC model) in blocks
/// of one router, of five (blocks that start and end inside the words of routers'
/// activity) and of 64: identical to the run without blocks. The five that draw a way as
/// a header arrives (Valiant, UGAL, O1TURN, NCA, drawn torus ties) are refused.
#[test]
fn blocks_of_any_size_give_the_same_bytes() {
    for case in CASES {
        let toml = case_toml(case);
        let draws = ["valiant", "ugal", "adaptive_xy_yx", "anca", "random"]
            .iter()
            .any(|k| toml.contains(&format!("\"{k}\"")));
        let (plain, _) = outputs(&toml, None, false);
        if draws {
            // (nor visited in reverse: the draws go in arrival order, which is the order
            // the routers sent in the cycle before)
            let mut sim = Simulation::from_toml(&toml, None).unwrap();
            assert!(!sim.set_visits_by_block(Some(5)), "{toml}");
            continue;
        }
        for (per, reverse) in [(1, false), (5, false), (5, true), (64, false)] {
            let (by_blocks, taken) = outputs(&toml, Some(per), reverse);
            assert!(taken && plain == by_blocks, "blocks of {per} (reverse {reverse}) differ:\n{toml}");
        }
    }
}

/// A mesh of 144 routers (three blocks of 64, the last part full) with tail-sent VC
/// release and 1-flit packets near saturation, and the preemptive QoS router on a 9x9
/// mesh: identical by blocks, and the invariants hold every cycle.
#[test]
fn a_larger_mesh_by_blocks_of_64() {
    let cases = [
        ("kind = \"mesh\"\nk = 12\nn = 2", "vcs = 4\nvc_release = \"tail_sent\"\ninput_buffer = 4", "load = 0.3\nmessage_flits = 1\npacket_flits = 1"),
        (
            "kind = \"mesh\"\nk = 9\nn = 2",
            "kind = \"preemptive\"\nvcs = 4\ninput_buffer = 8\ncrossbar_scheduler = \"virtual_clock\"\noutput_scheduler = { kind = \"virtual_clock\" }",
            "load = 0.2\nclass = \"real_time\"\nmessage_flits = 20\npacket_flits = 20\n[[traffic]]\nload = 0.1\nclass = \"best_effort\"\nmessage_flits = 40\npacket_flits = 40",
        ),
    ];
    for case in cases {
        let toml = case_toml(case);
        let (plain, _) = outputs(&toml, None, false);
        let (by_blocks, taken) = outputs(&toml, Some(64), false);
        assert!(taken && plain == by_blocks, "differ:\n{toml}");
        let mut sim = Simulation::from_toml(&toml, None).unwrap();
        assert!(sim.set_visits_by_block(Some(64)));
        sim.run_checking_invariants(1).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    }
}

/// What would see the order of arrivals against visits keeps the one order: `[trace]`'s
/// per-flit recordings.
#[test]
fn a_traced_run_is_not_visited_by_blocks() {
    let toml = format!("{}[trace]\nstalls = true\n", case_toml(CASES[0]));
    let mut sim = Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    assert!(!sim.set_visits_by_block(Some(5)));
}

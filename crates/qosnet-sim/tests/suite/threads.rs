//! Threads within one run (`simulation.threads`, `router/shards.rs`): the output is the same
//! byte for byte for 1, 2 and 3 threads, on every router kind and topology a threaded run
//! accepts, the invariants hold across the shards every cycle, and the watchdog's report of
//! a deadlock is the same.

use qosnet_sim::{SimError, Simulation};

fn sim(toml: &str) -> Simulation {
    Simulation::from_toml(toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// Every table of a run with `threads` threads, as text.
fn outputs(toml: &str, threads: u32) -> String {
    let toml = toml.replacen("[simulation]\n", &format!("[simulation]\nthreads = {threads}\n"), 1);
    let r = sim(&toml).run().unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let mut s = r.summary_json();
    for t in [&r.classes, &r.nodes, &r.links, r.messages.as_ref().unwrap(), &r.phases] {
        s.push_str(&t.to_csv());
    }
    s
}

/// Networks and routers a threaded run takes: meshes and tori with either VC release, the
/// preemptive QoS router with VirtualClock at both schedulers and three classes, BookSim2's
/// speedups (and its output queue holding credits), a dragonfly, a fly, a fat tree with its
/// deterministic routing, a concentrated mesh, minimal adaptive routing, the NIC endpoint
/// model, and the routings that draw a way where a packet enters (Valiant, UGAL with its
/// queues, adaptive O1TURN, drawn torus ties) or at every hop (adaptive NCA), whose draws
/// the shards get in one thread's order.
pub(crate) const CASES: [(&str, &str, &str); 16] = [
    ("kind = \"mesh\"\nk = 6\nn = 2", "vcs = 4\ninput_buffer = 3\noutput_buffer = 2", "load = 0.5\nmessage_flits = 9\npacket_flits = 4"),
    ("kind = \"torus\"\nk = 5\nn = 2", "vcs = 2\nvc_release = \"tail_sent\"\ninput_buffer = 4", "load = 0.6\nmessage_flits = 1\npacket_flits = 1"),
    // (BookSim2's ties, drawn with the packet's way where it enters)
    ("kind = \"torus\"\nk = 4\nn = 2\n[routing]\ntorus_ties = \"random\"", "vcs = 2", "load = 0.4\nmessage_flits = 2\npacket_flits = 2"),
    (
        "kind = \"mesh\"\nk = 5\nn = 2",
        "kind = \"preemptive\"\nvcs = 4\ninput_buffer = 8\ncrossbar_scheduler = \"virtual_clock\"\noutput_scheduler = { kind = \"virtual_clock\" }",
        "load = 0.45\nclass = \"real_time\"\nmessage_flits = 20\npacket_flits = 20\n[[traffic]]\nload = 0.3\nclass = \"best_effort\"\nmessage_flits = 40\npacket_flits = 40\n[[traffic]]\nload = 0.02\nclass = \"control\"\nmessage_flits = 2\npacket_flits = 2",
    ),
    ("kind = \"mesh\"\nk = 4\nn = 2", "vcs = 3\ninput_speedup = 2\noutput_speedup = 2\ninternal_speedup = 2\nallocator = { kind = \"islip\" }", "load = 0.8\nmessage_flits = 5\npacket_flits = 5"),
    ("kind = \"dragonfly\"\np = 2\na = 4\nh = 2", "vcs = 2\ninput_buffer = 8", "load = 0.4\nmessage_flits = 4\npacket_flits = 4"),
    // (dragonflyconfig's router: the internal speedup, its output queue holding credits)
    ("kind = \"dragonfly\"\np = 2\na = 4\nh = 2", "vcs = 2\ninput_buffer = 8\noutput_buffer = 8\ninternal_speedup = 2\ncredit_at = \"crossbar\"\nvc_release = \"tail_sent\"", "load = 0.6\nmessage_flits = 4\npacket_flits = 4"),
    ("kind = \"fly\"\nk = 4\nn = 2", "vcs = 4", "load = 0.7\nmessage_flits = 3\npacket_flits = 3"),
    ("kind = \"fat_tree\"\nk = 4\nn = 2\n[routing]\nkind = \"d_mod_k\"", "vcs = 2", "load = 0.6\nmessage_flits = 6\npacket_flits = 3"),
    ("kind = \"cmesh\"\nk = 4", "vcs = 2\nvc_release = \"tail_sent\"", "load = 0.3\nmessage_flits = 1\npacket_flits = 1"),
    ("kind = \"mesh\"\nk = 6\nn = 2\n[routing]\nkind = \"min_adapt\"", "vcs = 4\nvc_release = \"tail_sent\"", "load = 0.45\nmessage_flits = 1\npacket_flits = 1"),
    ("kind = \"mesh\"\nk = 4\nn = 2\n[endpoint]\nmodel = \"hca\"", "vcs = 4", "load = 0.5\nmessage_flits = 16\npacket_flits = 8"),
    ("kind = \"mesh\"\nk = 6\nn = 2\n[routing]\nkind = \"valiant\"", "vcs = 2", "load = 0.3\nmessage_flits = 4\npacket_flits = 4"),
    ("kind = \"dragonfly\"\np = 2\na = 4\nh = 2\n[routing]\nkind = \"ugal\"", "vcs = 3\ninput_buffer = 8", "load = 0.4\nmessage_flits = 2\npacket_flits = 2"),
    ("kind = \"mesh\"\nk = 6\nn = 2\n[routing]\nkind = \"adaptive_xy_yx\"", "vcs = 2", "load = 0.4\nmessage_flits = 1\npacket_flits = 1"),
    ("kind = \"fat_tree\"\nk = 4\nn = 3\n[routing]\nkind = \"anca\"", "vcs = 2", "load = 0.5\nmessage_flits = 3\npacket_flits = 3"),
];

pub(crate) fn case_toml((topology, router, traffic): (&str, &str, &str)) -> String {
    format!(
        "[simulation]\nwarmup = 500\nmeasure = 3000\ndrain_limit = 3000\nrecord_messages = true\n\
         [topology]\n{topology}\n[router]\n{router}\n[[traffic]]\n{traffic}\n"
    )
}

#[test]
fn one_two_and_three_threads_give_the_same_bytes() {
    for case in CASES {
        let toml = case_toml(case);
        let one = outputs(&toml, 1);
        for threads in [2, 3] {
            assert!(one == outputs(&toml, threads), "{threads} threads differ from one:\n{toml}");
        }
    }
}

#[test]
fn invariants_hold_every_cycle_across_the_shards() {
    for case in [CASES[0], CASES[3], CASES[4], CASES[5], CASES[13], CASES[15]] {
        let toml = case_toml(case).replacen("[simulation]\n", "[simulation]\nthreads = 3\n", 1);
        sim(&toml).run_checking_invariants(1).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    }
}

/// A torus without dateline classes deadlocks; the report (the occupied VCs and a cycle of
/// waits among them, which crosses the shards' boundary) is the same on three threads.
#[test]
fn a_deadlock_is_reported_the_same_across_shards() {
    let toml = "[simulation]\nwarmup = 0\nmeasure = 100000\ndrain_limit = 0\nwatchdog = 300\n\
                [topology]\nkind = \"torus\"\nk = 5\nn = 2\n[routing]\nkind = \"dor\"\n\
                [router]\nvcs = 1\ninput_buffer = 2\noutput_buffer = 2\n\
                [[traffic]]\nload = 0.9\nmessage_flits = 16\npacket_flits = 16\n";
    let report = |threads: u32| {
        let toml = toml.replacen("[simulation]\n", &format!("[simulation]\nthreads = {threads}\n"), 1);
        match sim(&toml).run() {
            Err(e @ SimError::Deadlock { .. }) => e.to_string(),
            other => panic!("no deadlock on {threads} threads: {other:?}"),
        }
    };
    let one = report(1);
    assert!(one.contains("wait-for cycle: router"), "{one}");
    assert_eq!(one, report(3));
}

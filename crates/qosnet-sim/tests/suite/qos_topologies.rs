//! Document 003's QoS router and NICs, admission control and congestion control on
//! BookSim2's topologies (issue 39: "the QoS features work on the new topologies where they
//! make sense; say where they do not"): each runs with every invariant checked, on a
//! dragonfly, a flattened butterfly, a concentrated mesh, a fly and a fat tree; what does
//! not apply is refused naming the field (docs/booksim2.md, "QoS on BookSim2's
//! topologies").

use qosnet_sim::Simulation;

const TOPOLOGIES: [(&str, &str); 5] = [
    ("dragonfly", "kind = \"dragonfly\"\na = 2\np = 2\nh = 1"),
    ("flatfly", "kind = \"flatfly\"\nk = 3\nn = 2\nc = 2"),
    ("cmesh", "kind = \"cmesh\"\nk = 2"),
    ("fly", "kind = \"fly\"\nk = 2\nn = 3"),
    ("fat_tree", "kind = \"fat_tree\"\nk = 2\nn = 3"),
];

const QOS_ROUTER: &str = "[router]\nkind = \"preemptive\"\nvcs = 8\n\
    crossbar_scheduler = \"virtual_clock\"\noutput_scheduler = \"virtual_clock\"\n";

/// Real time (one destination a source, as admission control sets up connections) beside
/// best effort, 40-flit messages.
const MIX: &str = "[[traffic]]\nclass = \"real_time\"\nload = 0.15\nmessage_flits = 40\npacket_flits = 40\n\
    pattern = { kind = \"random_permutation\", seed = 1 }\n\
    [[traffic]]\nclass = \"best_effort\"\nload = 0.2\nmessage_flits = 40\npacket_flits = 40\n";

const BEST_EFFORT: &str = "[[traffic]]\nload = 0.3\nmessage_flits = 16\npacket_flits = 8\n";

fn config(topology: &str, rest: &str) -> String {
    format!(
        "[simulation]\nwarmup = 300\nmeasure = 2000\ndrain_limit = 30000\nwatchdog = 5000\n\
         [topology]\n{topology}\n{rest}"
    )
}

#[test]
fn the_qos_features_run_on_booksim2s_topologies() {
    let features = [
        ("preemptive router, VirtualClock", format!("{QOS_ROUTER}{MIX}")),
        ("QoS VIA NIC", format!("{QOS_ROUTER}[endpoint]\nmodel = \"via\"\n{MIX}")),
        ("admission control", format!("{QOS_ROUTER}[endpoint.admission]\n{MIX}")),
        ("ALO", format!("[router]\nvcs = 4\n[endpoint]\nagent = \"alo\"\n{BEST_EFFORT}")),
        ("Self-Tuned", format!("[router]\nvcs = 4\n[endpoint]\nagent = \"self_tuned\"\n{BEST_EFFORT}")),
        (
            "credit CQ",
            format!("[router]\nvcs = 4\n[endpoint]\nagent = {{ kind = \"credit\", hca_messages = 4, best_effort = 2 }}\n{BEST_EFFORT}"),
        ),
        (
            "InfiniBand CC on HCAs",
            format!(
                "[router]\nvcs = 4\nmarking = {{ kind = \"iba_cc\", threshold = 10 }}\n[endpoint]\nmodel = \"hca\"\n\
                 agent = {{ kind = \"iba_cc\", ccti_timer = \"20 us\", cct = {{ kind = \"linear\", entries = 64, step = \"0.1 us\" }} }}\n{BEST_EFFORT}"
            ),
        ),
        (
            "DCQCN",
            format!(
                "[router]\nvcs = 4\nmarking = {{ kind = \"red\", kmin = \"200 B\", kmax = \"1 KB\", pmax = 0.2 }}\n\
                 [endpoint]\nagent = \"dcqcn\"\n{BEST_EFFORT}"
            ),
        ),
    ];
    for (name, topology) in TOPOLOGIES {
        for (feature, rest) in &features {
            let toml = config(topology, rest);
            let admission = rest.contains("admission");
            // (admission control's NACKs leave from a node port of the router that refuses:
            // a fat tree's upper levels and a fly's later stages have none)
            if admission && (name == "fat_tree" || name == "fly") {
                let e = Simulation::from_toml(&toml, None).err().expect("refused").to_string();
                assert!(e.contains("endpoint.admission") && e.contains("no node port"), "{name}: {e}");
                continue;
            }
            let mut s =
                Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{name}, {feature}: {e}"));
            s.run_checking_invariants(7).unwrap_or_else(|e| panic!("{name}, {feature}: {e}"));
            let r = s.result().summary;
            assert!(r.messages_delivered > 0, "{name}, {feature}: nothing delivered");
        }
    }
}

#[test]
fn drb_needs_several_paths_which_booksim2s_routings_give_on_a_fat_tree_alone() {
    let drb = "[routing]\nmultipath = { paths = 2, selection = \"drb\", contraction_timer = \"20 us\" }\n\
               [router]\nvcs = 4\nmarking = { kind = \"iba_cc\", threshold = 10 }\n";
    for (name, topology) in TOPOLOGIES {
        let toml = config(topology, &format!("{drb}{BEST_EFFORT}"));
        match Simulation::from_toml(&toml, None) {
            Ok(mut s) if name == "fat_tree" => s.run_checking_invariants(7).unwrap_or_else(|e| panic!("{e}")),
            Ok(_) => panic!("{name}: DRB accepted"),
            Err(e) => {
                let e = e.to_string();
                assert!(name != "fat_tree" && e.contains("routing.multipath"), "{name}: {e}");
            }
        }
    }
}

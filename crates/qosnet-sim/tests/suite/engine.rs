//! Behaviour of the engine as a whole: exact zero-load latency, throughput below and above
//! saturation, deadlock freedom and the watchdog, invariants and determinism, over the
//! shipped topologies and random configurations (proptest).

use proptest::prelude::*;
use qosnet_sim::ids::NodeId;
use qosnet_sim::metrics::Column;
use qosnet_sim::{SimError, Simulation};

fn sim(toml: &str) -> Simulation {
    Simulation::from_toml(toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

fn u64s<'a>(t: &'a qosnet_sim::metrics::Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("column {name}: {other:?}"),
    }
}

const TOPOLOGIES: [&str; 5] = [
    "kind = \"star\"\nports = 8",
    "kind = \"mesh\"\nk = 4\nn = 2",
    "kind = \"torus\"\nk = 4\nn = 2",
    "kind = \"fat_tree\"\nk = 4\nn = 2",
    "kind = \"fly\"\nk = 4\nn = 2",
];

/// Zero-load latency = endpoint output stage + endpoint link + hops × (sum of stage
/// delays) + (hops − 1) × link + endpoint link + (L − 1): the header leaves the endpoint's
/// output register, crosses `hops` routers, the links between them and the injection and
/// ejection links, the tail follows L − 1 cycles behind. (`router` may
/// end with an `[endpoint]` section.)
fn zero_load_check(topology: &str, router: &str, message: u32, packet: u32, source: u32) {
    // About one message every 2,000 cycles: rarely two in the network at once.
    let load = message as f64 / 2000.0;
    let toml = format!(
        "[simulation]\nwarmup = 0\nmeasure = 200000\nrecord_messages = true\n\
         [topology]\n{topology}\n[router]\n{router}\n\
         [[traffic]]\nload = {load}\nmessage_flits = {message}\npacket_flits = {packet}\nsources = [{source}]\n"
    );
    let mut s = sim(&toml);
    let rc = s.config().router.clone();
    let link = rc.link_latency as u64;
    let endpoint_link = s.config().endpoint.link_latency.map_or(link, u64::from);
    let output_stage = s.config().endpoint.output_stage as u64;
    let r = s.run().unwrap();
    let m = r.messages.unwrap();
    let (dst, injected, delivered, created) =
        (u64s(&m, "dst"), u64s(&m, "injected"), u64s(&m, "delivered"), u64s(&m, "created"));
    assert!(m.rows() > 20, "too few messages: {}", m.rows());
    let mut hops_seen = std::collections::BTreeSet::new();
    for i in 0..m.rows() {
        let hops = s.routing().path(s.topology(), rc.vcs, NodeId(source), NodeId(dst[i] as u32)).len() as u64;
        hops_seen.insert(hops);
        let expect = output_stage
            + 2 * endpoint_link
            + hops * rc.pipeline.total()
            + (hops - 1) * link
            + message as u64
            - 1;
        assert_eq!(
            delivered[i] - injected[i],
            expect,
            "{topology}: message {i} to {} over {hops} routers",
            dst[i]
        );
        if injected[i] == created[i] {
            assert_eq!(delivered[i] - created[i], expect);
        }
    }
    // (every path of a star crosses its one router, every path of a fly its n stages)
    let one_length = topology.contains("star") || topology.contains("fly");
    assert!(hops_seen.len() > 1 || one_length, "{topology}: one hop count only");
}

#[test]
fn zero_load_latency_is_analytic_on_every_topology() {
    for topo in TOPOLOGIES {
        zero_load_check(topo, "", 40, 40, 0);
        zero_load_check(topo, "", 40, 40, 5);
    }
}

#[test]
fn zero_load_latency_with_other_stage_delays_and_multi_packet_messages() {
    let router = "pipeline = { sync = 2, routing = 0, vc_alloc = 3, crossbar = 1, output = 2 }\n\
                  link_latency = 3\ncredit_latency = 2\ninput_buffer = 16\noutput_buffer = 4";
    for topo in TOPOLOGIES {
        zero_load_check(topo, router, 20, 20, 3);
        zero_load_check(topo, "input_buffer = 8\noutput_buffer = 8", 100, 40, 1);
        zero_load_check(topo, "", 1, 1, 2);
        // BookSim2's setting: network links of 3 cycles, endpoint links of 1
        zero_load_check(topo, "link_latency = 3\n[endpoint]\nlink_latency = 1", 20, 20, 1);
        // ... and its nodes' injection cycle (configs/validation)
        zero_load_check(topo, "[endpoint]\nlink_latency = 1\noutput_stage = 1", 1, 1, 2);
        zero_load_check(topo, "[endpoint]\noutput_stage = 3", 40, 40, 4);
    }
}

fn run_load(topology: &str, load: f64, extra: &str) -> qosnet_sim::RunResult {
    let toml = format!(
        "[simulation]\nwarmup = 5000\nmeasure = 20000\ndrain_limit = 20000\n[topology]\n{topology}\n\
         [router]\ninput_buffer = 8\noutput_buffer = 8\n{extra}\n[[traffic]]\nload = {load}\n"
    );
    sim(&toml).run().unwrap()
}

#[test]
fn below_saturation_accepted_equals_offered() {
    for (topo, load) in [
        ("kind = \"mesh\"\nk = 8\nn = 2", 0.25),
        ("kind = \"torus\"\nk = 8\nn = 2", 0.4),
        ("kind = \"fat_tree\"\nk = 4\nn = 3", 0.4),
        ("kind = \"star\"\nports = 16", 0.5),
    ] {
        let s = run_load(topo, load, "").summary;
        assert!(!s.saturated, "{topo} saturated at {load}");
        let rel = (s.accepted_flits_per_node_cycle - s.offered_flits_per_node_cycle).abs()
            / s.offered_flits_per_node_cycle;
        assert!(
            rel < 0.02,
            "{topo}: offered {} accepted {}",
            s.offered_flits_per_node_cycle,
            s.accepted_flits_per_node_cycle
        );
        assert!((s.offered_flits_per_node_cycle - load).abs() / load < 0.05);
    }
}

/// An 8x8 mesh under uniform traffic and DOR has a channel-load bound of 4/k = 0.5
/// flits/node/cycle (the bisection links carry k/4 × the injection rate). Accepted traffic
/// must saturate below that bound, and stay flat, not collapse, past saturation.
#[test]
fn mesh_saturation_below_channel_load_bound_and_no_collapse() {
    let mesh = "kind = \"mesh\"\nk = 8\nn = 2";
    let at = |load: f64| run_load(mesh, load, "").summary;
    let (s70, s100) = (at(0.7), at(1.0));
    assert!(s70.saturated && s100.saturated);
    let bound = 4.0 / 8.0;
    for s in [&s70, &s100] {
        assert!(s.accepted_flits_per_node_cycle < bound, "{}", s.accepted_flits_per_node_cycle);
        assert!(s.accepted_flits_per_node_cycle > 0.6 * bound, "{}", s.accepted_flits_per_node_cycle);
    }
    let drop = (s70.accepted_flits_per_node_cycle - s100.accepted_flits_per_node_cycle).abs();
    assert!(
        drop < 0.03,
        "accepted {} at 0.7, {} at 1.0",
        s70.accepted_flits_per_node_cycle,
        s100.accepted_flits_per_node_cycle
    );
    eprintln!(
        "8x8 mesh DOR uniform: accepted {:.3} at 0.7, {:.3} at 1.0; bound {bound}",
        s70.accepted_flits_per_node_cycle, s100.accepted_flits_per_node_cycle
    );
}

#[test]
fn no_deadlock_at_full_load_for_1e5_cycles() {
    for topo in [
        "kind = \"mesh\"\nk = 8\nn = 2",
        "kind = \"torus\"\nk = 8\nn = 2",
        "kind = \"fat_tree\"\nk = 4\nn = 3",
        // (express channels of 4 cycles: still dimension order, deadlock free, `routing/cmesh.rs`)
        "kind = \"cmesh\"\nk = 4\nexpress_latency = 4\n[routing]\nkind = \"dor_express\"",
    ] {
        for (vcs, packet) in [(2, 40), (16, 8)] {
            let toml = format!(
                "[simulation]\nwarmup = 0\nmeasure = 100000\ndrain_limit = 0\nwatchdog = 2000\n\
                 [topology]\n{topo}\n[router]\nvcs = {vcs}\ninput_buffer = 4\noutput_buffer = 2\n\
                 [[traffic]]\nload = 1.0\nmessage_flits = {packet}\npacket_flits = {packet}\n"
            );
            let mut s = sim(&toml);
            let r = s.run().unwrap_or_else(|e| panic!("{topo} vcs={vcs}: {e}"));
            assert!(r.summary.cycles >= 100_000);
            assert!(r.summary.accepted_flits_per_node_cycle > 0.1, "{topo}: {:?}", r.summary);
            s.check_invariants().unwrap();
        }
    }
}

#[test]
fn watchdog_names_the_stuck_vcs_of_a_deadlocked_ring() {
    // An 8-node ring routed minimally without dateline classes, one VC, tornado traffic
    // (3 hops, all the same way round): a cyclic channel dependency.
    let toml = "[simulation]\nwarmup = 0\nmeasure = 200000\nwatchdog = 500\n\
                [topology]\nkind = \"torus\"\nk = 8\nn = 1\n[routing]\nkind = \"dor\"\n\
                [router]\nvcs = 1\ninput_buffer = 2\noutput_buffer = 1\n\
                [[traffic]]\nload = 1.0\nmessage_flits = 16\npacket_flits = 16\npattern = { kind = \"tornado\" }\n";
    match sim(toml).run() {
        Err(e @ SimError::Deadlock { .. }) => {
            let SimError::Deadlock { stuck, idle_cycles, waits_for, .. } = &e else { unreachable!() };
            assert!(*idle_cycles > 500);
            assert!(!stuck.is_empty());
            assert!(stuck.iter().all(|s| s.router.index() < 8 && s.vc == 0), "{stuck:?}");
            assert!(e.to_string().contains(&format!("stuck: {}", stuck[0])), "{e}");
            assert!(stuck[0].to_string().starts_with("router[") && stuck[0].to_string().ends_with("].vc[0]"));
            // The wait-for cycle goes once round the ring, router by router the way the
            // tornado traffic goes, through occupied VCs.
            let routers: Vec<usize> = waits_for.iter().map(|v| v.router.index()).collect();
            assert_eq!(routers.len(), 8, "{e}");
            assert!(waits_for.iter().all(|v| stuck.contains(v)), "{e}");
            let step = (routers[1] + 8 - routers[0]) % 8;
            assert!(step == 1 || step == 7, "{e}");
            assert!((0..8).all(|i| (routers[i] + step) % 8 == routers[(i + 1) % 8]), "{e}");
            assert!(e.to_string().contains(&format!("wait-for cycle: {} -> ", waits_for[0])), "{e}");
        }
        other => panic!("expected a deadlock, got {:?}", other.map(|r| r.summary)),
    }
    // The same ring with dateline classes does not deadlock.
    let safe = toml.replace("kind = \"dor\"", "kind = \"dor_dateline\"").replace("vcs = 1", "vcs = 2");
    sim(&safe.replace("measure = 200000", "measure = 20000")).run().unwrap();
}

#[test]
fn routing_counts_as_progress_for_the_watchdog() {
    // Stages 1 and 2 take 30 cycles each and the watchdog allows 40: a lone header moves
    // at arrival, at routing and at VC allocation, never 40 cycles without progress. (The
    // route is decided on arrival; its taking effect 30 cycles later still counts.)
    let toml = "[simulation]\nwarmup = 0\nmeasure = 5000\nwatchdog = 40\n\
                [topology]\nkind = \"star\"\nports = 4\n\
                [router]\nvcs = 2\npipeline = { sync = 30, routing = 30, vc_alloc = 1, crossbar = 1, output = 1 }\n\
                [[traffic]]\nprocess = { kind = \"periodic\", period = 2000 }\nmessage_flits = 4\npacket_flits = 4\n";
    let r = sim(toml).run().expect("a slow pipeline is not a deadlock");
    assert!(r.summary.messages_delivered > 0);
}

fn outputs(toml: &str) -> String {
    let r = sim(toml).run().unwrap();
    let mut s = r.summary_json();
    for t in [&r.classes, &r.nodes, &r.links, r.messages.as_ref().unwrap()] {
        s.push_str(&t.to_csv());
    }
    s
}

#[test]
fn same_seed_same_bytes_different_seed_different_bytes() {
    let toml = "[simulation]\nseed = 11\nwarmup = 1000\nmeasure = 10000\nrecord_messages = true\n\
                [topology]\nkind = \"torus\"\nk = 4\nn = 2\n[[traffic]]\nload = 0.4\nmessage_flits = 12\npacket_flits = 5\n";
    let a = outputs(toml);
    assert_eq!(a, outputs(toml));
    assert_ne!(a, outputs(&toml.replace("seed = 11", "seed = 12")));
}

/// Inputs competing for one output share it equally: each output grants round robin over
/// the inputs asking for it, in the VC allocator and the crossbar alike.
#[test]
fn inputs_competing_for_one_output_share_it_equally() {
    for (senders, vcs, packet) in [
        (vec![1, 2], 16, 8),
        (vec![1, 2, 3], 16, 8),
        (vec![1, 2, 3], 2, 8),
        ((1..8).collect(), 16, 8),
        (vec![1, 2, 3], 4, 1),
    ] {
        let list = senders.iter().map(|n: &u32| n.to_string()).collect::<Vec<_>>().join(", ");
        let toml = format!(
            "[simulation]\nwarmup = 5000\nmeasure = 50000\ndrain_limit = 0\n[topology]\nkind = \"star\"\nports = 8\n\
             [router]\nvcs = {vcs}\n[[traffic]]\nload = 0.9\nmessage_flits = {packet}\npacket_flits = {packet}\n\
             sources = [{list}]\npattern = {{ kind = \"hot_spot\", fraction = 1.0, nodes = [0] }}\n"
        );
        let r = sim(&toml).run().unwrap();
        let Some(Column::F64(injected)) = r.nodes.column("injected_flits_per_cycle") else { panic!() };
        // Equal shares of what the output delivers (with 1-flit packets and few VCs the
        // VC turnaround, not the link, limits the total).
        let total: f64 = senders.iter().map(|&n| injected[n as usize]).sum();
        assert!(total > 0.75, "output delivers only {total:.3} flits/cycle");
        let fair = total / senders.len() as f64;
        for &n in &senders {
            let share = injected[n as usize];
            assert!(
                (share - fair).abs() < 0.02,
                "{} senders, {vcs} VCs: node {n} got {share:.3}, fair {fair:.3}: {injected:?}",
                senders.len()
            );
        }
    }
}

#[test]
fn visiting_order_does_not_change_results() {
    for topo in TOPOLOGIES {
        let toml = format!(
            "[simulation]\nwarmup = 500\nmeasure = 5000\nrecord_messages = true\n[topology]\n{topo}\n\
             [router]\nvcs = 4\ninput_buffer = 3\noutput_buffer = 2\n\
             crossbar_scheduler = {{ kind = \"round_robin\" }}\n\
             [[traffic]]\nload = 0.7\nmessage_flits = 9\npacket_flits = 4\n"
        );
        let forward = outputs(&toml);
        let mut s = sim(&toml);
        s.set_reverse_visits(true);
        let r = s.run().unwrap();
        let mut backward = r.summary_json();
        for t in [&r.classes, &r.nodes, &r.links, r.messages.as_ref().unwrap()] {
            backward.push_str(&t.to_csv());
        }
        assert_eq!(forward, backward, "{topo}");
    }
}

#[test]
fn invariants_hold_every_cycle_with_every_scheduler() {
    for (sched, release) in [("fcfs", "tail_credit"), ("round_robin", "tail_credit"), ("fcfs", "tail_sent")] {
        for topo in TOPOLOGIES {
            let toml = format!(
                "[simulation]\nwarmup = 200\nmeasure = 1500\n[topology]\n{topo}\n\
                 [router]\nvcs = 4\ninput_buffer = 3\noutput_buffer = 2\nspeedup = 2\n\
                 crossbar_scheduler = \"{sched}\"\noutput_scheduler = {{ kind = \"{sched}\" }}\n\
                 vc_release = \"{release}\"\n\
                 [[traffic]]\nload = 0.8\nmessage_flits = 9\npacket_flits = 4\n"
            );
            let mut s = sim(&toml);
            s.run_checking_invariants(1).unwrap_or_else(|e| panic!("{sched} {release} {topo}: {e}"));
        }
    }
}

/// BookSim2's speedups (`router.input_speedup`, `output_speedup`, `internal_speedup`), each
/// alone and all together, with each allocator: flits conserved and credits in bounds every
/// cycle on every topology.
#[test]
fn invariants_hold_every_cycle_with_booksim_speedups() {
    let speedups = [
        "input_speedup = 2",
        "output_speedup = 2",
        "internal_speedup = 2",
        "input_speedup = 3\noutput_speedup = 2\ninternal_speedup = 2",
    ];
    let allocators =
        ["{ iterations = 2 }", "{ kind = \"islip\", iterations = 2 }", "{ kind = \"wavefront\" }"];
    for (speedup, allocator) in
        speedups.iter().zip(allocators.iter().cycle()).chain([(&speedups[3], &allocators[1])])
    {
        for topo in TOPOLOGIES {
            let toml = format!(
                "[simulation]\nwarmup = 200\nmeasure = 1500\n[topology]\n{topo}\n\
                 [router]\nvcs = 4\ninput_buffer = 3\noutput_buffer = 4\n{speedup}\nallocator = {allocator}\n\
                 crossbar_scheduler = \"round_robin\"\n\
                 [[traffic]]\nload = 0.8\nmessage_flits = 9\npacket_flits = 4\n"
            );
            let mut s = sim(&toml);
            s.run_checking_invariants(1).unwrap_or_else(|e| panic!("{speedup} {allocator} {topo}: {e}"));
            assert!(s.result().summary.drain_complete, "{speedup} {allocator} {topo}");
        }
    }
}

fn arb_config() -> impl Strategy<Value = String> {
    let topo = prop_oneof![
        (2u32..=6).prop_map(|p| format!("kind = \"star\"\nports = {p}")),
        (2u32..=4, 1u32..=2, 0usize..6).prop_map(|(k, n, r)| format!(
            "kind = \"mesh\"\nk = {k}\nn = {n}\n[routing]\n{}",
            [
                "kind = \"dor\"",
                "kind = \"valiant\"",
                "kind = \"xy_yx\"",
                "kind = \"adaptive_xy_yx\"",
                "kind = \"min_adapt\"",
                // (BookSim2's as it ships)
                "kind = \"min_adapt\"\nmin_adapt = { directions = \"first\", escape = \"alongside\" }",
            ][r]
        )),
        // (either tie rule: by parity, or drawn per packet as BookSim2's)
        (2u32..=4, 1u32..=2, prop::bool::ANY, prop::bool::ANY).prop_map(|(k, n, valiant, drawn)| format!(
            "kind = \"torus\"\nk = {k}\nn = {n}\n[routing]\nkind = \"{}\"\ntorus_ties = \"{}\"",
            if valiant { "valiant" } else { "dor_dateline" },
            if drawn { "random" } else { "parity" }
        )),
        // (a k-ary n-fly: nodes inject at its first stage and eject at its last)
        (2u32..=3, 1u32..=3).prop_map(|(k, n)| format!("kind = \"fly\"\nk = {k}\nn = {n}")),
        (2u32..=3, 1u32..=3, 0usize..3).prop_map(|(k, n, r)| format!(
            "kind = \"fat_tree\"\nk = {k}\nn = {n}\n[routing]\nkind = \"{}\"",
            ["d_mod_k", "nca", "anca"][r]
        )),
        (1u32..=3, 1u32..=2, 1u32..=2, 0usize..4).prop_map(|(a, p, h, r)| format!(
            "kind = \"dragonfly\"\na = {a}\np = {p}\nh = {h}\n[routing]\nkind = \"{}\"",
            ["min", "valiant", "ugal", "ugal_router"][r]
        )),
        (2u32..=3, 1u32..=3, 1u32..=2, 0usize..6).prop_map(|(k, n, c, r)| format!(
            "kind = \"flatfly\"\nk = {k}\nn = {n}\nc = {c}\n[routing]\nkind = \"{}\"",
            ["dor", "valiant", "ugal", "xy_yx", "adaptive_xy_yx", "ugal_xy_yx"][r]
        )),
        // (express channels on an even side, of their own latency or the router's)
        // (O1TURN on it too: `xy_yx`, `xy_yx_express`)
        (2u32..=4, prop::bool::ANY, 0u32..=3, prop::bool::ANY).prop_map(
            |(k, express, latency, turns)| format!(
                "kind = \"cmesh\"\nk = {k}\n{}[routing]\nkind = \"{}\"",
                if latency > 0 { format!("express_latency = {latency}\n") } else { String::new() },
                match (express && k % 2 == 0, turns) {
                    (true, false) => "dor_express",
                    (false, false) => "dor",
                    (true, true) => "xy_yx_express",
                    (false, true) => "xy_yx",
                }
            )
        ),
    ];
    let router = (
        (1u32..=4, 1u32..=4, 1u32..=3),
        (0u32..=2, 0u32..=2, 0u32..=2, 1u32..=2, 0u32..=2),
        (1u32..=3, 1u32..=3, 1u32..=2),
        (0u8..3, 0u8..3, prop::bool::ANY, prop::bool::ANY, prop::bool::ANY),
        (0u32..3, 1u32..=3, prop::bool::ANY, 0u8..3),
        (1u32..=3, 1u32..=2, 1u32..=2),
    )
        .prop_map(|((vcs, ib, ob), (s1, s2, s3, s4, s5), (link, credit, speedup), (xs, os, lowest, sent, at_crossbar), (alloc, iters, output_first, vc_alloc), (s_in, s_out, internal))| {
            // (VirtualClock at one scheduler and an age at the other: the cycle with hooks,
            // `router::Variant`; unreserved traffic, so its keys are arrivals beyond every stamp)
            let sched = |s: u8| ["fcfs", "round_robin", "virtual_clock"][s as usize];
            // (the wavefront allocator orders by position, not by rate keys: refused)
            let xs = if alloc >= 2 && xs == 2 { 0 } else { xs };
            // (iSLIP and the wavefront allocator run without speedup)
            // (the separable allocator's inputs choosing an output first, BookSim2's, runs
            // without speedups)
            let plain = speedup == 1 && s_in == 1 && s_out == 1;
            let (allocator, speedup) = match alloc {
                0 if output_first && plain => {
                    (format!("{{ iterations = {iters}, input_choice = \"output\" }}"), speedup)
                }
                0 => (format!("{{ iterations = {iters} }}"), speedup),
                1 => (format!("{{ kind = \"islip\", iterations = {iters} }}"), 1),
                _ => ("{ kind = \"wavefront\" }".to_string(), 1),
            };
            // BookSim2's speedups, with any allocator, where qosnet's own is off
            let booksim = if speedup == 1 {
                format!("input_speedup = {s_in}\noutput_speedup = {s_out}\ninternal_speedup = {internal}\n")
            } else {
                String::new()
            };
            format!(
                "vcs = {vcs}\ninput_buffer = {ib}\noutput_buffer = {ob}\n\
                 pipeline = {{ sync = {s1}, routing = {s2}, vc_alloc = {s3}, crossbar = {s4}, output = {s5} }}\n\
                 link_latency = {link}\ncredit_latency = {credit}\nspeedup = {speedup}\n{booksim}\
                 crossbar_scheduler = {{ kind = \"{}\" }}\noutput_scheduler = {{ kind = \"{}\" }}\n\
                 vc_selection = \"{}\"\nvc_release = \"{}\"\ncredit_at = \"{}\"\nallocator = {allocator}{}",
                sched(xs),
                sched(os),
                if lowest { "lowest_free" } else { "round_robin" },
                if sent { "tail_sent" } else { "tail_credit" },
                if at_crossbar { "crossbar" } else { "output" },
                // (BookSim2's VC allocators, whose pointers pick the VC)
                match vc_alloc {
                    1 if lowest => format!("\nvc_allocator = {{ kind = \"islip\", iterations = {iters} }}"),
                    2 if lowest => "\nvc_allocator = { kind = \"separable_input_first\" }".to_string(),
                    _ => String::new(),
                }
            )
        });
    let traffic = (1u32..=90, 1u32..=12, 1u32..=6, 0u8..3, 0u64..1000, prop::bool::ANY).prop_map(
        |(load, msg, pkt, process, seed, with_self)| {
            (
                format!(
                    "load = {}\nmessage_flits = {msg}\npacket_flits = {pkt}\nprocess = {}\nself_traffic = {with_self}",
                    load as f64 / 100.0,
                    // (BookSim2's bursty on_off: ON 90% of the time carries any load up to 0.9)
                    ["\"bernoulli\"", "\"poisson\"", "{ kind = \"markov_on_off\", on = \"9 cycles\", off = \"1 cycles\" }"]
                        [process as usize]
                ),
                seed,
            )
        },
    );
    // (BookSim2's source: a packet starts only on a VC with a credit)
    (topo, router, traffic, prop::bool::ANY).prop_map(|(t, r, (tr, seed), credit)| {
        format!(
            "[simulation]\nseed = {seed}\nwarmup = 100\nmeasure = 400\ndrain_limit = 20000\nwatchdog = 3000\n\
             [topology]\n{t}\n[router]\n{r}\n[endpoint]\nvc_needs_credit = {credit}\n[[traffic]]\n{tr}\n"
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Over random small networks: invariants every few cycles, every measured message
    /// delivered exactly once and in order (the sink checks order and completeness), and
    /// the same seed reproduces the same result.
    #[test]
    fn random_configurations_keep_every_invariant(toml in arb_config()) {
        // Torus dateline routing needs two VCs.
        let toml = if toml.contains("torus") && toml.contains("vcs = 1\n") { toml.replace("vcs = 1\n", "vcs = 2\n") } else { toml };
        // Valiant on a torus: four (two phases of the dateline pair).
        let toml = if toml.contains("torus") && toml.contains("valiant") {
            toml.replace("vcs = 2\n", "vcs = 4\n").replace("vcs = 3\n", "vcs = 4\n")
        } else {
            toml
        };
        // Dragonfly routing needs a VC per layer: two minimal, three Valiant and UGAL; a
        // flattened butterfly's Valiant and UGAL two.
        let toml = if toml.contains("dragonfly") { toml.replace("vcs = 1\n", "vcs = 3\n").replace("vcs = 2\n", "vcs = 3\n") } else { toml };
        let detour = (toml.contains("flatfly") || toml.contains("mesh"))
            && (toml.contains("valiant") || toml.contains("ugal") || toml.contains("xy_yx") || toml.contains("min_adapt"));
        let toml = if detour { toml.replace("vcs = 1\n", "vcs = 2\n") } else { toml };
        // UGAL with O1TURN on a flattened butterfly: four (each order's two phases).
        let toml = if toml.contains("ugal_xy_yx") {
            toml.replace("vcs = 2\n", "vcs = 4\n").replace("vcs = 3\n", "vcs = 4\n")
        } else {
            toml
        };
        let mut s = Simulation::from_toml(&toml, None).map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        s.run_checking_invariants(7).map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        let r = s.result();
        if r.summary.drain_complete {
            prop_assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        } else {
            prop_assert!(r.summary.saturated && r.summary.messages_delivered < r.summary.messages_measured);
        }
        let (inj, ej, _) = s.flit_counts();
        prop_assert!(ej <= inj);
        // The same seed again gives every table the same, here visited by blocks of one
        // to five routers where the run allows it (`Simulation::set_visits_by_block`: the
        // order of arrivals against visits must not matter).
        let mut again = Simulation::from_toml(&toml, None).unwrap();
        again.set_visits_by_block(Some(1 + toml.len() % 5));
        let again = again.run().map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        prop_assert_eq!(again.summary_json(), r.summary_json());
        for (a, b) in [(&again.classes, &r.classes), (&again.nodes, &r.nodes), (&again.links, &r.links)] {
            prop_assert_eq!(a.to_csv(), b.to_csv());
        }
        // Run both ways: on two threads (`simulation.threads`, where the run takes them and
        // has two routers) every table is the same.
        let threaded = toml.replacen("[simulation]\n", "[simulation]\nthreads = 2\n", 1);
        match Simulation::from_toml(&threaded, None) {
            Ok(mut t) => {
                t.run_checking_invariants(7).map_err(|e| TestCaseError::fail(format!("{e}\n{threaded}")))?;
                let t = t.result();
                prop_assert_eq!(t.summary_json(), r.summary_json());
                for (a, b) in [(&t.classes, &r.classes), (&t.nodes, &r.nodes), (&t.links, &r.links)] {
                    prop_assert_eq!(a.to_csv(), b.to_csv());
                }
            }
            Err(e) => prop_assert!(e.to_string().contains("simulation.threads"), "{}", e),
        }
    }
}

/// Releasing an output VC once its holder's tail has crossed (`vc_release = "tail_sent"`,
/// as document 003's routers and BookSim2 do) lets the next packet follow into the
/// downstream buffer; holding it until the tail's credit returns leaves each VC idle for a
/// credit round trip per packet. With two VCs and one-flit packets that round trip, not the
/// links, bounds throughput: an 8x8 mesh saturates near 0.08 flits/node/cycle holding VCs
/// and near 0.28 releasing them (BookSim2's `iq` router: 0.296, and 0.085 with
/// `wait_for_tail_credit = 1`). Here a 4x4 mesh past saturation: the released VCs carry at
/// least twice as much, and at low load the two agree on latency within a cycle.
#[test]
fn releasing_vcs_at_the_tail_lifts_saturation_with_few_vcs_and_short_packets() {
    let run = |release: &str, load: f64| {
        let toml = format!(
            "[simulation]\nwarmup = 2000\nmeasure = 6000\ndrain_limit = 3000\n\
             [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n\
             [router]\nvcs = 2\ninput_buffer = 8\noutput_buffer = 8\nvc_release = \"{release}\"\n\
             [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\n"
        );
        sim(&toml).run().unwrap().summary
    };
    let (held, released) = (run("tail_credit", 0.6), run("tail_sent", 0.6));
    assert!(held.saturated && released.saturated);
    assert!(
        released.accepted_flits_per_node_cycle > 2.0 * held.accepted_flits_per_node_cycle,
        "tail_sent {} vs tail_credit {}",
        released.accepted_flits_per_node_cycle,
        held.accepted_flits_per_node_cycle
    );
    let (held, released) = (run("tail_credit", 0.02), run("tail_sent", 0.02));
    assert!(!held.saturated && !released.saturated);
    assert!((held.latency.mean - released.latency.mean).abs() < 1.0, "{held:?}\n{released:?}");
}

/// The crossbar allocators (`[router] allocator`) on a crossbar-bound network: one 8-port
/// router, 16 VCs, one-flit uniform packets near full load, so the matching each cycle
/// bounds throughput. One separable input-first iteration matches about 1 - (1 - 1/N)^N
/// of the outputs (0.66 for N = 8; measured 0.63); iSLIP's desynchronised pointers do
/// better in one iteration (measured 0.70); more iterations, and the wavefront's maximal
/// matching in one pass, reach 0.86-0.92. At low load all agree on latency.
#[test]
fn allocators_differ_in_matching_where_the_crossbar_is_the_bottleneck() {
    let run = |allocator: &str, load: f64| {
        let toml = format!(
            "[simulation]\nwarmup = 2000\nmeasure = 6000\ndrain_limit = 3000\n\
             [topology]\nkind = \"star\"\nports = 8\n\
             [router]\nvcs = 16\ninput_buffer = 8\noutput_buffer = 1\nallocator = {allocator}\n\
             crossbar_scheduler = {{ kind = \"round_robin\" }}\n\
             [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\n"
        );
        sim(&toml).run().unwrap().summary
    };
    let kinds = [
        "{ iterations = 1 }",
        "{ kind = \"islip\", iterations = 1 }",
        "{ iterations = 3 }",
        "{ kind = \"islip\", iterations = 3 }",
        "{ kind = \"wavefront\" }",
    ];
    let accepted: Vec<f64> = kinds.iter().map(|k| run(k, 0.98).accepted_flits_per_node_cycle).collect();
    assert!(accepted[0] < 0.68 && accepted[1] > accepted[0] + 0.03, "{accepted:?}");
    for a in &accepted[2..] {
        assert!(*a > accepted[1] + 0.1, "{accepted:?}");
    }
    let low: Vec<f64> = kinds.iter().map(|k| run(k, 0.05).latency.mean).collect();
    for l in &low {
        assert!((l - low[0]).abs() < 0.5, "{low:?}");
    }
    // BookSim2's separable input-first allocator: inputs choosing an output first, by a
    // round robin past the one each was last granted, spread their requests over the
    // outputs (as iSLIP's pointers do) where a VC chosen first asks for whichever output
    // it heads to; one iteration, the same VCs and scheduler. At 0.66 it carries what is
    // offered (16 cycles when written) where choosing a VC first saturates (0.628
    // accepted); far past, both fall to the same plateau (0.63), as BookSim2's singleconfig
    // router does (results/crosscheck/FINDINGS.md, "One-stage fly").
    let output_first = "{ iterations = 1, input_choice = \"output\" }";
    let (vc, out) = (run("{ iterations = 1 }", 0.66), run(output_first, 0.66));
    assert!(vc.saturated && !out.saturated, "at 0.66: VC first {vc:?}, output first {out:?}");
    let (vc, out) = (run("{ iterations = 1 }", 0.6).latency.mean, run(output_first, 0.6).latency.mean);
    assert!(out < vc, "mean latency at 0.6: output first {out}, VC first {vc}");
}

/// BookSim2's bursty injection (`markov_on_off`) carries the load it is given, and its
/// bursts queue where Bernoulli arrivals at the same mean do not: on the matched 4x4 mesh
/// (configs/validation/mesh4x4.toml) at 0.4 flits/node/cycle in 4-flit packets, ON 50
/// cycles and OFF 50 on average, the mean latency is over 10% higher (27.4 against 32.8
/// cycles when written; BookSim2's on_off at burst_alpha = burst_beta = 0.02: 33.0).
#[test]
fn markov_on_off_carries_its_load_in_bursts() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../configs/validation/mesh4x4.toml"
    ))
    .unwrap()
    .replace("load = 0.1\n", "load = 0.4\n")
    .replace("message_flits = 1\n", "message_flits = 4\n")
    .replace("packet_flits = 1\n", "packet_flits = 4\n");
    assert!(base.contains("process = \"bernoulli\"\n"), "the base names its process");
    let run = |process: &str| {
        let toml = base.replace("process = \"bernoulli\"\n", &format!("process = {process}\n"));
        Simulation::from_toml(&toml, None).unwrap().run().unwrap().summary
    };
    let bernoulli = run("\"bernoulli\"");
    let bursty = run("{ kind = \"markov_on_off\", on = \"50 cycles\", off = \"50 cycles\" }");
    for s in [&bernoulli, &bursty] {
        assert!(
            (s.offered_flits_per_node_cycle - 0.4).abs() < 0.008,
            "offered {}",
            s.offered_flits_per_node_cycle
        );
        assert!(s.drain_complete);
    }
    let latency = |s: &qosnet_sim::Summary| s.latency.mean;
    assert!(
        latency(&bursty) > 1.1 * latency(&bernoulli),
        "bursty {} against Bernoulli {}",
        latency(&bursty),
        latency(&bernoulli)
    );
    // a load the bursts cannot carry (0.6 flits a cycle ON half the time: 1.2 while ON) is
    // refused, naming the field
    let err = Simulation::from_toml(
        "[topology]\nkind = \"mesh\"\nk = 4\nn = 2\n[[traffic]]\nload = 0.6\nmessage_flits = 1\npacket_flits = 1\n\
         process = { kind = \"markov_on_off\", on = \"50 cycles\", off = \"50 cycles\" }\n",
        None,
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(err.contains("traffic[0].load") && err.contains("while ON"), "{err}");
}

/// `window_end_latency` (BookSim2's stability test, `qosnet crosscheck`'s rule), worked out
/// from the messages' own records: each delivered by the window's end once, at its latency;
/// each still out, at its age then, if under way (injected: a 1-flit packet whose source
/// starts it only on a VC with room goes out the cycle it starts) or the oldest not yet
/// started at its source (BookSim2 creates a source's next packet only when the one before
/// has gone); the backlog behind it not at all. With no warm-up every message alive at the
/// window's end is measured, and the drain completes, so every one is recorded. Below
/// saturation (this mesh's is about 0.08) and past it, where many are out at the window's
/// end and the sources' backlogs are tens of thousands of messages.
#[test]
fn window_end_latency_counts_what_booksim_counts_at_the_end_of_a_sample() {
    for (load, threads) in [(0.05, 1), (0.2, 1), (0.2, 2)] {
        let toml = format!(
            "[simulation]\nseed = 3\nwarmup = 0\nmeasure = 6000\ndrain_limit = 400000\n\
             record_messages = true\nthreads = {threads}\n\
             [topology]\nkind = \"mesh\"\nk = 8\nn = 2\n[router]\nvcs = 2\n\
             [endpoint]\nvc_needs_credit = true\n[[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\n"
        );
        let r = sim(&toml).run().unwrap();
        let s = &r.summary;
        assert!(s.drain_complete, "{load}");
        let m = r.messages.as_ref().unwrap();
        let (src, created) = (u64s(m, "src"), u64s(m, "created"));
        let (injected, delivered) = (u64s(m, "injected"), u64s(m, "delivered"));
        assert_eq!(created.len() as u64, s.messages_measured);
        let end = s.measure_cycles;
        let (mut sum, mut count, mut out, mut queued) = (0u64, 0u64, 0, 0);
        let mut next = std::collections::BTreeMap::new();
        for i in 0..created.len() {
            if delivered[i] < end {
                (sum, count) = (sum + delivered[i] - created[i], count + 1);
            } else if injected[i] < end {
                (sum, count, out) = (sum + end - created[i], count + 1, out + 1);
            } else {
                queued += 1;
                let oldest = next.entry(src[i]).or_insert(created[i]);
                *oldest = (*oldest).min(created[i]);
            }
        }
        for c in next.values() {
            (sum, count) = (sum + end - c, count + 1);
        }
        let expected = sum as f64 / count as f64;
        assert!(
            (s.window_end_latency - expected).abs() < 1e-9 * expected,
            "load {load}: {} against {expected} ({out} in the network, {queued} queued)",
            s.window_end_latency
        );
        if load > 0.1 {
            // (past saturation: many in the network, and a backlog behind the sources' next)
            assert!(out > 100 && queued > next.len(), "{out} {queued} {}", next.len());
        }
        assert!(s.stability_latency >= s.window_end_latency);
    }
}

/// BookSim2 repeats its stability test every 1,000 cycles while it drains the measured
/// packets: where the drain is short (below saturation) only the window's end is tested;
/// past saturation the packets still out keep ageing and the test grows past the
/// window's end's.
#[test]
fn stability_latency_is_tested_again_while_the_drain_lasts() {
    let run = |load: f64| {
        let toml = format!(
            "[simulation]\nseed = 5\nwarmup = 1000\nmeasure = 4000\ndrain_limit = 400000\n\
             [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n[router]\nvcs = 2\n\
             [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\n"
        );
        sim(&toml).run().unwrap().summary
    };
    let below = run(0.1);
    assert!(below.drain_complete && below.cycles < 5000 + 1000, "{}", below.cycles);
    assert_eq!(below.stability_latency, below.window_end_latency);
    let past = run(0.9);
    assert!(past.drain_complete && past.cycles > 5000 + 10000, "{}", past.cycles);
    assert!(
        past.stability_latency > 2.0 * past.window_end_latency,
        "{} at the window's end, {} at most",
        past.window_end_latency,
        past.stability_latency
    );
}

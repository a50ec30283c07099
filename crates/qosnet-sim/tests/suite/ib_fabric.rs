//! Real InfiniBand fabrics (`data/ib-topologies`, `data/SOURCES.md`): the avakas fat
//! tree (281 HCAs, 25 switch ASICs) and the heterogeneous plafrim fabric (125 HCAs, 9
//! switches), with their own forwarding tables, simulated and used for admission; and
//! ibsim's example net file (2 switches, 2 HCAs). Bad net files are in `bad_configs.rs`.

use qosnet_sim::admission::CallAdmission;
use qosnet_sim::ids::{NodeId, RouterId};
use qosnet_sim::topology::Peer;
use qosnet_sim::{Config, Simulation};
use std::path::PathBuf;

/// The repository's copy of a fabric dump; a missing one fails the test (a clone has it).
fn fabric(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/ib-topologies").join(name);
    assert!(dir.exists(), "{} is missing: the repository ships it (data/SOURCES.md)", dir.display());
    dir
}

fn config(dir: &std::path::Path, routes: bool, extra: &str) -> Config {
    let sub = "fe80_0000_0000_0000";
    let routes = if routes {
        format!("routes = \"{}\"\n", dir.join(format!("ibroutes-{sub}")).display())
    } else {
        String::new()
    };
    let text = format!(
        "[topology]\nkind = \"ib_fabric\"\nfile = \"{}\"\n{routes}{extra}",
        dir.join(format!("ib-subnet-{sub}.txt")).display()
    );
    Config::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

const RUN: &str = "[simulation]\nwarmup = 2000\nmeasure = 8000\n[router]\nvcs = 4\ninput_buffer = 8\n\
                   output_buffer = 8\n[[traffic]]\nload = 0.3\nmessage_flits = 8\npacket_flits = 8\n";

#[test]
fn avakas_routes_by_its_forwarding_tables_leaf_spine_leaf() {
    let dir = fabric("netloc-avakas");
    let a = CallAdmission::from_config(&config(&dir, true, "")).unwrap();
    let t = a.topology();
    assert_eq!((t.nodes, t.routers), (281, 25));
    assert!(t.names.iter().any(|n| n == "node179 HCA-1"));
    // A two-level fat tree inside one director: every route is at most leaf, spine, leaf.
    let longest = (0..t.nodes as u32)
        .flat_map(|s| (0..t.nodes as u32).filter(move |&d| d != s).map(move |d| (s, d)))
        .map(|(s, d)| a.path(s, d).len())
        .max()
        .unwrap();
    assert_eq!(longest, 3);
    // 4x QDR links carry 32 Gb/s of data; the one DDR HCA 16 Gb/s (and so does its node).
    let caps: Vec<f64> = (0..t.nodes as u32).map(|n| a.node_capacity(n)).collect();
    assert_eq!(caps.iter().filter(|&&c| c == 32e9).count(), 280);
    assert_eq!(caps.iter().filter(|&&c| c == 16e9).count(), 1);
}

#[test]
fn avakas_simulates_uniform_traffic_without_saturating() {
    let dir = fabric("netloc-avakas");
    let run = || {
        let mut s = Simulation::new(config(&dir, true, RUN)).unwrap();
        while !s.advance(500).unwrap() {
            s.check_invariants().unwrap();
        }
        s.result()
    };
    let (a, b) = (run(), run());
    assert!(!a.summary.saturated, "{:?}", a.summary);
    assert!((a.summary.accepted_flits_per_node_cycle - 0.3).abs() < 0.02);
    assert_eq!(a.summary_json(), b.summary_json(), "same seed, same results");
}

#[test]
fn minimal_routes_without_tables_spread_over_the_spines() {
    let dir = fabric("netloc-avakas");
    let mut s = Simulation::new(config(&dir, false, RUN)).unwrap();
    let r = s.run().unwrap();
    assert!(!r.summary.saturated, "minimal routes spread by destination: {:?}", r.summary);
}

#[test]
fn plafrim_every_pair_has_a_route() {
    let dir = fabric("netloc-plafrim");
    for routes in [true, false] {
        let a = CallAdmission::from_config(&config(&dir, routes, "")).unwrap();
        let t = a.topology();
        assert_eq!((t.nodes, t.routers), (125, 9));
        for s in 0..t.nodes as u32 {
            for d in (0..t.nodes as u32).filter(|&d| d != s) {
                let p = a.path(s, d);
                assert!(!p.is_empty() && p.len() <= t.routers);
            }
        }
    }
}

#[test]
fn bad_fabric_inputs_name_the_field() {
    let err = |toml: &str| Simulation::from_toml(toml, None).err().expect("must fail").to_string();
    let e = err(
        "[topology]\nkind = \"ib_fabric\"\nfile = \"/nonexistent/report.txt\"\n[[traffic]]\nload = 0.1\n",
    );
    assert!(e.contains("topology.file") && e.contains("cannot read"), "{e}");
    let dir = fabric("netloc-avakas");
    let toml = format!(
        "[topology]\nkind = \"ib_fabric\"\nfile = \"{}\"\nroutes = \"/nonexistent\"\n[[traffic]]\nload = 0.1\n",
        dir.join("ib-subnet-fe80_0000_0000_0000.txt").display()
    );
    let e = err(&toml);
    assert!(e.contains("topology.routes"), "{e}");
    let toml = toml.replace("routes = \"/nonexistent\"\n", "") + "[routing]\nkind = \"dor\"\n";
    assert!(err(&toml).contains("routing.kind"));
}

/// ibsim's `net-examples/net`: Switch1 (8 ports) has Hca1 on port 1, Hca2 on port 2, and
/// Switch2 (8 ports) on ports 3 and 4, two parallel links to Switch2's ports 3 and 4.
fn ibsim_example(extra: &str) -> Config {
    let file = fabric("ibsim-net-example.net");
    let text = format!("[topology]\nkind = \"ib_fabric\"\nfile = '{}'\n{extra}", file.display());
    Config::from_toml_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn ibsim_example_is_two_switches_with_parallel_links_and_two_hcas() {
    let cfg = ibsim_example("");
    let a = CallAdmission::from_config(&cfg).unwrap();
    let t = a.topology();
    // the headers' 8 ports; nodes in file order, named by their ids
    assert_eq!((t.routers, t.ports, t.nodes), (2, 8, 2));
    assert_eq!(t.names, vec!["Hca1".to_string(), "Hca2".to_string()]);
    assert_eq!(t.attach, vec![(RouterId(0), 0), (RouterId(0), 1)]);
    let links: Vec<(usize, usize, Peer)> = (0..t.routers)
        .flat_map(|r| (0..t.ports).map(move |p| (r, p)))
        .filter_map(|(r, p)| Some((r, p, t.peer(r, p))).filter(|l| l.2 != Peer::None))
        .collect();
    assert_eq!(
        links,
        vec![
            (0, 0, Peer::Endpoint { node: NodeId(0) }),
            (0, 1, Peer::Endpoint { node: NodeId(1) }),
            (0, 2, Peer::Router { router: RouterId(1), port: 2 }),
            (0, 3, Peer::Router { router: RouterId(1), port: 3 }),
            (1, 2, Peer::Router { router: RouterId(0), port: 2 }),
            (1, 3, Peer::Router { router: RouterId(0), port: 3 }),
        ]
    );
    // both HCAs hang off Switch1: one switch, straight out of the other HCA's port
    assert_eq!(a.path(0, 1), vec![(0, 1)]);
    assert_eq!(a.path(1, 0), vec![(0, 0)]);
    // no width given: ibsim's 4x at its SDR default, 8 Gb/s of data
    assert!((0..t.nodes as u32).all(|n| a.node_capacity(n) == 8e9));
    assert_eq!(a.port_capacity(0, 2), 8e9);
}

#[test]
fn ibsim_example_simulates_and_reserves() {
    let cfg = ibsim_example(RUN);
    let mut s = Simulation::new(cfg).unwrap();
    while !s.advance(500).unwrap() {
        s.check_invariants().unwrap();
    }
    let r = s.result().summary;
    assert!(!r.saturated && r.drain_complete, "{r:?}");
    assert!(r.flits_ejected > 0 && r.messages_delivered == r.messages_measured, "{r:?}");
    assert!((r.accepted_flits_per_node_cycle - 0.3).abs() < 0.02, "{r:?}");
    let cfg = ibsim_example("");
    let mut a = CallAdmission::from_config(&cfg).unwrap();
    let id = a.admit(0, 1, 6e9).unwrap();
    assert_eq!(a.port_reserved(0, 1), 6e9);
    assert!(a.admit(0, 1, 3e9).is_err(), "8 Gb/s links");
    assert!(a.release(id).is_some());
}

#[test]
fn ibsim_format_is_inferred_and_an_explicit_format_wins() {
    let cfg = ibsim_example("format = \"ibsim\"\n");
    assert_eq!(CallAdmission::from_config(&cfg).unwrap().topology().nodes, 2);
    let cfg = ibsim_example("format = \"ibnetdiscover\"\n");
    let Err(e) = CallAdmission::from_config(&cfg) else { panic!("read as a ports report") };
    let e = e.to_string();
    assert!(e.contains("topology.file") && e.contains("no switch-to-HCA links found"), "{e}");
    let cfg = ibsim_example("routes = \"/nonexistent\"\n");
    let Err(e) = CallAdmission::from_config(&cfg) else { panic!("routes need LIDs") };
    let e = e.to_string();
    assert!(e.contains("topology.routes") && e.contains("inferred from its first record"), "{e}");
}

#[test]
fn reservations_are_checked_at_the_simulated_rate_and_admitted_at_the_fabric_s() {
    // The simulator runs every link at `[physical] link_bandwidth` (1.6 Gb/s), so a
    // configuration's reserved flows are checked at that rate; the control plane admits
    // at the fabric's own rates (the ibsim example's 8 Gb/s).
    let flow = |rate: &str| {
        format!(
            "[endpoint]\nmodel = \"hca\"\nqueues = \"rate_control\"\n[[traffic]]\nsources = [0]\n\
             pattern = {{ kind = \"fixed\", destination = 1 }}\nload = 0.5\nmessage_flits = 64\n\
             packet_flits = 64\nreserve = \"{rate}\"\n"
        )
    };
    let cluster = ibsim_example("");
    let mut a = CallAdmission::from_config(&cluster).unwrap();
    assert!(a.admit(0, 1, 3e9).is_ok(), "8 Gb/s fabric links");
    let Err(e) = Simulation::new(ibsim_example(&flow("3 Gb/s"))) else {
        panic!("3 Gb/s reserved on 1.6 Gb/s simulated links")
    };
    assert!(e.to_string().contains("traffic[0].reserve"), "{e}");
    Simulation::new(ibsim_example(&flow("1 Gb/s"))).expect("1 Gb/s fits the simulated links");
}

//! Real InfiniBand fabrics (`shared/data/ib-topologies`, SOURCES.md §2): the avakas fat
//! tree (281 HCAs, 25 switch ASICs) and the heterogeneous plafrim fabric (125 HCAs, 9
//! switches), with their own forwarding tables, simulated and used for admission.

use qosnet_sim::admission::CallAdmission;
use qosnet_sim::{Config, Simulation};
use std::path::PathBuf;

fn fabric(name: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ib-topologies").join(name);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: {} not present", dir.display());
        None
    }
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
    let Some(dir) = fabric("netloc-avakas") else { return };
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
    let Some(dir) = fabric("netloc-avakas") else { return };
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
    let Some(dir) = fabric("netloc-avakas") else { return };
    let mut s = Simulation::new(config(&dir, false, RUN)).unwrap();
    let r = s.run().unwrap();
    assert!(!r.summary.saturated, "minimal routes spread by destination: {:?}", r.summary);
}

#[test]
fn plafrim_every_pair_has_a_route() {
    let Some(dir) = fabric("netloc-plafrim") else { return };
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
    let Some(dir) = fabric("netloc-avakas") else { return };
    let toml = format!(
        "[topology]\nkind = \"ib_fabric\"\nfile = \"{}\"\nroutes = \"/nonexistent\"\n[[traffic]]\nload = 0.1\n",
        dir.join("ib-subnet-fe80_0000_0000_0000.txt").display()
    );
    let e = err(&toml);
    assert!(e.contains("topology.routes"), "{e}");
    let toml = toml.replace("routes = \"/nonexistent\"\n", "") + "[routing]\nkind = \"dor\"\n";
    assert!(err(&toml).contains("routing.kind"));
}

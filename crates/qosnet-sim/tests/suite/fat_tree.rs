//! A fat tree's routings run whole: BookSim2's nearest-common-ancestor routing (`nca`,
//! up ports drawn per packet) against D-mod-K (up port fixed by the destination) on the
//! pattern that separates them, and at zero load, where they (and `anca`, the adaptive
//! climb) cross the same routers.

use qosnet_sim::Simulation;

/// A 4-ary 2-tree (16 nodes, 4 leaves of 4) with 1-flit packets, 4 VCs of 16 flits: the
/// links, not the VCs or credits, bound what a port carries.
fn run(routing: &str, load: f64, pattern: &str, dir: &std::path::Path) -> qosnet_sim::Summary {
    let toml = format!(
        "[simulation]\nseed = 3\nwarmup = 2000\nmeasure = 6000\ndrain_limit = 20000\nwatchdog = 3000\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nn = 2\n[routing]\nkind = \"{routing}\"\n\
         [router]\nvcs = 4\ninput_buffer = 16\noutput_buffer = 1\nvc_release = \"tail_sent\"\n\
         pipeline = {{ sync = 0, routing = 1, vc_alloc = 1, crossbar = 1, output = 1 }}\n\
         link_latency = 1\ncredit_latency = 1\n[endpoint]\nlink_latency = 1\n\
         [[traffic]]\nload = {load}\nmessage_flits = 1\npacket_flits = 1\npattern = {pattern}\n"
    );
    let mut s = Simulation::from_toml(&toml, Some(dir)).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.run_checking_invariants(5).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    s.result().summary
}

/// Node (leaf w, index j) sends to (leaf j, index w): every destination of leaf w's
/// sources has w as its lowest digit, so D-mod-K sends all three that leave the leaf up
/// the same port (k + w); NCA spreads them over the four.
fn leaf_transpose(dir: &std::path::Path) -> String {
    let lines: Vec<String> = (0..16).map(|i| format!("{}", 4 * (i % 4) + i / 4)).collect();
    std::fs::write(dir.join("leaf_transpose.txt"), lines.join("\n") + "\n").unwrap();
    "{ kind = \"permutation\", file = \"leaf_transpose.txt\" }".to_string()
}

/// A directory of this test's own (the tests of one binary run in parallel), under
/// Cargo's scratch directory for integration tests, removed when the test ends.
struct Scratch(std::path::PathBuf);

impl std::ops::Deref for Scratch {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("qosnet_fat_tree_{}_{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Scratch(dir)
}

#[test]
fn nca_spreads_what_d_mod_k_sends_up_one_link() {
    let dir = scratch("spread");
    let pattern = leaf_transpose(&dir);
    let (d_mod_k, nca) = (run("d_mod_k", 0.9, &pattern, &dir), run("nca", 0.9, &pattern, &dir));
    // The 4 nodes that are their own destination send nothing (12 x 0.9 / 16 = 0.675
    // offered). D-mod-K: the other 12 share an up link three to one, 1/3 each:
    // 12 / 3 / 16 = 0.25.
    assert!(d_mod_k.saturated);
    assert!(
        (d_mod_k.accepted_flits_per_node_cycle - 0.25).abs() < 0.01,
        "d_mod_k accepted {}",
        d_mod_k.accepted_flits_per_node_cycle
    );
    // NCA: every up and down link between the levels carries 3 x 0.9 / 4 = 0.675 on
    // average: below its capacity, so NCA takes what is offered.
    assert!(
        !nca.saturated && nca.accepted_flits_per_node_cycle > 0.64,
        "nca accepted {} (d_mod_k {})",
        nca.accepted_flits_per_node_cycle,
        d_mod_k.accepted_flits_per_node_cycle
    );
}

#[test]
fn at_zero_load_nca_anca_and_d_mod_k_cross_the_same_routers() {
    // Up to the nearest common ancestor and down, whichever up ports: 1 router for a node
    // on the same leaf, 3 for the others. Uniform with self traffic excluded: 3 of 15
    // destinations on the leaf, so 1 + 5 x (3 x 1 + 12 x 3) / 15 = 14 cycles (the
    // injection link and 4 pipeline cycles plus a link per router) and the wait for the
    // injection slot.
    let dir = scratch("zero_load");
    let uniform = "{ kind = \"uniform\" }";
    let (d_mod_k, nca) = (run("d_mod_k", 0.01, uniform, &dir), run("nca", 0.01, uniform, &dir));
    assert!((d_mod_k.latency.mean - 14.0).abs() < 0.5, "d_mod_k mean latency {}", d_mod_k.latency.mean);
    assert!((nca.latency.mean - 14.0).abs() < 0.5, "nca mean latency {}", nca.latency.mean);
    // (and the adaptive climb, `anca`: its up ports chosen hop by hop, the same routers)
    let anca = run("anca", 0.01, uniform, &dir);
    assert!((anca.latency.mean - 14.0).abs() < 0.5, "anca mean latency {}", anca.latency.mean);
}

#[test]
fn nca_is_refused_where_one_path_is_accounted() {
    let toml = "[topology]\nkind = \"fat_tree\"\nk = 4\nn = 2\n[routing]\nkind = \"nca\"\n\
                [endpoint]\nadmission = {}\n[[traffic]]\nload = 0.1\n";
    let err = Simulation::from_toml(toml, None).err().expect("refused").to_string();
    assert!(err.contains("routing.kind") && err.contains("\"nca\" does not apply"), "{err}");
}

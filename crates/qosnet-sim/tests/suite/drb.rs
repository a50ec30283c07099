//! DRB's adaptive path choice end to end (document 002 §2.1, §4): sources open alternative
//! paths when congestion notifications (CNPs for FECN-marked packets) reach them, and stay
//! on the original path without them. Where the routing offers several paths: today the fat
//! tree's disjoint up/down paths (`[routing] multipath`). The split and the contraction are
//! hand-worked in `endpoint/drb.rs`.

use qosnet_sim::metrics::Column;
use qosnet_sim::Simulation;

const DRB: &str = "multipath = { paths = 4, selection = \"drb\", contraction_timer = \"20 us\" }";
const MARK: &str = "marking = { kind = \"iba_cc\", threshold = 8 }";

/// Up links out of leaf switch 0 that carried traffic, and the run, for `sources` sending
/// to node 15 of a 4-ary 2-tree at `load` each.
fn run(sources: &str, load: f64, multipath: &str, marking: &str) -> (usize, qosnet_sim::RunResult) {
    let toml = format!(
        "[simulation]\nwarmup = 1000\nmeasure = 20000\n\
         [topology]\nkind = \"fat_tree\"\nk = 4\nn = 2\n[routing]\n{multipath}\n\
         [router]\ninput_buffer = 8\noutput_buffer = 8\n{marking}\n\
         [[traffic]]\nload = {load}\nmessage_flits = 32\npacket_flits = 32\nsources = {sources}\n\
         pattern = {{ kind = \"fixed\", destination = 15 }}\n"
    );
    let mut s = Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"));
    let r = s.run().unwrap();
    s.check_invariants().unwrap();
    let kind = match r.links.column("kind") {
        Some(Column::Str(v)) => v.clone(),
        other => panic!("{other:?}"),
    };
    let src = match r.links.column("src") {
        Some(Column::U64(v)) => v.clone(),
        other => panic!("{other:?}"),
    };
    let used = match r.links.column("utilization") {
        Some(Column::F64(u)) => {
            (0..u.len()).filter(|&i| kind[i] == "router" && src[i] == 0 && u[i] > 0.0).count()
        }
        other => panic!("{other:?}"),
    };
    (used, r)
}

fn sum(r: &qosnet_sim::RunResult, name: &str) -> u64 {
    match r.flows.column(name) {
        Some(Column::U64(v)) => v.iter().sum(),
        other => panic!("column {name}: {other:?}"),
    }
}

#[test]
fn without_notifications_drb_keeps_the_original_path() {
    let (used, r) = run("[0]", 0.3, DRB, MARK);
    assert_eq!(sum(&r, "marked_packets"), 0, "one flow below saturation: no congestion");
    assert_eq!(used, 1, "path 0 only");
    assert_eq!(sum(&r, "out_of_order"), 0);
}

#[test]
fn notifications_open_the_alternative_paths() {
    // Twelve sources into node 15 at three times its link's rate: the buffers on the way
    // to it fill, packets are marked, CNPs come back, and the sources open their other up
    // paths.
    let many = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]";
    let (used, r) = run(many, 0.25, DRB, MARK);
    assert!(sum(&r, "marked_packets") > 0);
    assert!(used > 1, "DRB spread over {used} up links");
    let (fixed, _) = run(many, 0.25, "", MARK);
    assert_eq!(fixed, 1, "without DRB leaf 0's flows share one up path");
    // The column exists wherever a flow's messages may take several paths.
    let _ = sum(&r, "out_of_order");
}

#[test]
fn drb_needs_a_timer_and_notifications() {
    let toml = |multipath: &str, marking: &str| {
        format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\nn = 2\n[routing]\n{multipath}\n[router]\n{marking}\n\
             [[traffic]]\nload = 0.1\n"
        )
    };
    let err =
        |m: &str, k: &str| Simulation::from_toml(&toml(m, k), None).err().expect("rejected").to_string();
    let e = err("multipath = { paths = 4, selection = \"drb\" }", MARK);
    assert!(e.contains("routing.multipath.contraction_timer") && e.contains("required"), "{e}");
    let e = err(DRB, "");
    assert!(e.contains("routing.multipath.selection") && e.contains("[router] marking"), "{e}");
    let e = err("multipath = { paths = 4, contraction_timer = 100 }", MARK);
    assert!(e.contains("routing.multipath.contraction_timer") && e.contains("only with"), "{e}");
}

/// DRB over the DFS paths of 2^LMC LIDs on the document's torus with 3 VCs (dateline
/// classes for every path): a hot spot opens the alternatives, nothing deadlocks, and
/// flits and credits are conserved.
#[test]
fn drb_on_a_torus_with_lids_runs_without_deadlock() {
    let toml = |multipath: &str| {
        format!(
            "[simulation]\nwarmup = 1000\nmeasure = 8000\n\
             [topology]\nkind = \"torus\"\nk = 4\nn = 2\n\
             [routing]\nlmc = 2\n{multipath}\n\
             [router]\nvcs = 3\ninput_buffer = 8\noutput_buffer = 8\nmarking = {{ kind = \"iba_cc\", threshold = 8 }}\n\
             [[traffic]]\nload = 0.5\nmessage_flits = 16\npacket_flits = 16\n\
             pattern = {{ kind = \"hot_spot\", fraction = 0.3, nodes = [5] }}\n"
        )
    };
    let mut s = Simulation::from_toml(&toml(DRB), None).unwrap();
    let r = s.run().unwrap();
    s.check_invariants().unwrap();
    assert!(sum(&r, "marked_packets") > 0, "the hot spot is marked");
    // Reordering is counted wherever a flow's messages may take several paths.
    let _ = sum(&r, "out_of_order");
    // The same LID tables with every source on LID 0 (no multipath): dimension order.
    let mut plain = Simulation::from_toml(&toml(""), None).unwrap();
    plain.run().unwrap();
    plain.check_invariants().unwrap();
}

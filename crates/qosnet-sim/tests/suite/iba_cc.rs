//! InfiniBand congestion control end to end (document 002 §3-4, IBA Annex A10): switches
//! mark FECN above their threshold, destinations answer with CNPs (real packets), sources
//! raise their CCT index on BECN and wait the table's delays. The mechanism's parts are
//! hand-worked in `router/marking.rs`, `control/cct.rs` and `control/iba_cc.rs`; here they
//! run together.

use qosnet_sim::metrics::Column;
use qosnet_sim::Simulation;

const HOT: &str = "{ kind = \"hot_spot\", fraction = 0.5, nodes = [0] }";
const MARK: &str = "marking = { kind = \"iba_cc\", threshold = 10 }";
const CA: &str = "agent = { kind = \"iba_cc\", ccti_increase = 1, ccti_timer = \"20 us\", \
                  cct = { kind = \"linear\", entries = 32, step = 20 } }";

fn toml(pattern: &str, load: f64, marking: &str, agent: &str) -> String {
    format!(
        "[simulation]\nwarmup = 2000\nmeasure = 20000\n\
         [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n\
         [router]\ninput_buffer = 8\noutput_buffer = 8\n{marking}\n\
         [endpoint]\n{agent}\n\
         [[traffic]]\nload = {load}\nmessage_flits = 32\npacket_flits = 32\npattern = {pattern}\n"
    )
}

fn run(pattern: &str, load: f64, marking: &str, agent: &str) -> qosnet_sim::RunResult {
    let t = toml(pattern, load, marking, agent);
    let mut s = Simulation::from_toml(&t, None).unwrap_or_else(|e| panic!("{e}\n{t}"));
    let r = s.run().unwrap();
    s.check_invariants().unwrap();
    r
}

fn sum(r: &qosnet_sim::RunResult, name: &str) -> u64 {
    match r.flows.column(name) {
        Some(Column::U64(v)) => v.iter().sum(),
        other => panic!("column {name}: {other:?}"),
    }
}

fn err(marking: &str, agent: &str) -> String {
    Simulation::from_toml(&toml("\"uniform\"", 0.1, marking, agent), None)
        .err()
        .expect("rejected")
        .to_string()
}

#[test]
fn a_hot_spot_is_marked_notified_and_throttled() {
    let r = run(HOT, 0.3, MARK, CA);
    let (marks, cnps, becns, throttled) = (
        sum(&r, "marked_packets"),
        sum(&r, "cnps_sent"),
        sum(&r, "becns_received"),
        sum(&r, "throttled_cycles"),
    );
    assert!(marks > 0, "a hot spot fills its buffers");
    // Every FECN-marked packet is answered (the CNPs count the whole run, the marks the window).
    assert!(cnps >= marks, "{cnps} CNPs for {marks} marks in the window");
    // Every CNP is a real packet that reaches its source (bar those still in flight at the end).
    assert!(becns <= cnps && becns * 10 >= cnps * 9, "{becns} BECNs of {cnps} CNPs");
    assert!(throttled > 0, "the sources waited their CCT delays");
    // CNPs travel as control-class packets.
    let control = r.classes.to_csv();
    assert!(control.lines().any(|l| l.starts_with("control")), "{control}");
}

#[test]
fn a_switch_threshold_of_zero_never_marks_and_sources_are_never_throttled() {
    let r = run(HOT, 0.3, "marking = { kind = \"iba_cc\", threshold = 0 }", CA);
    assert_eq!(sum(&r, "cnps_sent"), 0);
    assert_eq!(sum(&r, "becns_received"), 0);
    assert_eq!(sum(&r, "throttled_cycles"), 0);
    // Without marks the agent never delays: the run is the plain one.
    let plain = run(HOT, 0.3, "", "");
    assert_eq!(plain.summary_json(), r.summary_json());
}

#[test]
fn throttling_cuts_the_hot_spot_s_marks() {
    // The same marking, with and without the sources reacting to it: throttled sources
    // keep the hot spot's buffers below the threshold more often.
    let open = run(HOT, 0.3, MARK, "");
    let cc = run(HOT, 0.3, MARK, CA);
    let (m_open, m_cc) = (sum(&open, "marked_packets"), sum(&cc, "marked_packets"));
    assert!(m_cc < m_open, "IBA CC: {m_cc} marks, none: {m_open}");
}

#[test]
fn bad_settings_are_named() {
    let e = err("marking = { kind = \"iba_cc\", threshold = 16 }", "");
    assert!(e.contains("router.marking.threshold") && e.contains("0..=15"), "{e}");
    let e = err("", "agent = { kind = \"iba_cc\", ccti_timer = 10, cct = { kind = \"delays\", delays = [0, \"-1 us\"] } }");
    assert!(e.contains("endpoint.agent.cct.delays") && e.contains("non-negative"), "{e}");
    let e = err("", "agent = { kind = \"iba_cc\", ccti_timer = 10, ccti_limit = 4, cct = { kind = \"linear\", entries = 4, step = 1 } }");
    assert!(e.contains("endpoint.agent.ccti_limit") && e.contains("at most 3"), "{e}");
    let e = err(
        "",
        "agent = { kind = \"iba_cc\", ccti_timer = 0, cct = { kind = \"linear\", entries = 4, step = 1 } }",
    );
    assert!(e.contains("endpoint.agent.ccti_timer"), "{e}");
    let e = err("", "agent = { kind = \"iba_cc\", ccti_timer = 10, cct = { kind = \"file\", path = \"missing.conf\", unit = 1 } }");
    assert!(e.contains("endpoint.agent.cct.path") && e.contains("missing.conf"), "{e}");
}

/// IBA CC's queue per (output port, VL) is kept as flits come and go
/// (`router/marking.rs`: `PortQueues`); the invariant checks compare it with a scan of the
/// input VCs. Over random small networks, the three router kinds, both VC releases, two
/// allocators and every threshold, with the three classes of document 003's mix: the
/// invariants hold every few cycles, every measured message is delivered, and the run is
/// deterministic.
fn arb_marked() -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let topo = prop_oneof![
        Just("kind = \"star\"\nports = 4"),
        Just("kind = \"mesh\"\nk = 3\nn = 2"),
        Just("kind = \"torus\"\nk = 3\nn = 2"),
        Just("kind = \"fat_tree\"\nk = 2\nn = 2"),
    ];
    (topo, 0usize..3, 4u32..=6, any::<bool>(), any::<bool>(), 1u8..=15, 5u32..=45, 0u64..1000).prop_map(
        |(topo, kind, vcs, sent, islip, threshold, load, seed)| {
            let kind = ["traditional", "non_preemptive", "preemptive"][kind];
            // (the preemptive router's history stack needs VCs that hold one packet)
            let release = if sent && kind != "preemptive" { "tail_sent" } else { "tail_credit" };
            let allocator = if islip { "{ kind = \"islip\" }" } else { "{ iterations = 2 }" };
            let load = load as f64 / 100.0;
            // (on a torus each class needs two VCs, its dateline pair)
            let (vcs, classes) = if topo.contains("torus") {
                (6, "\nvc_classes = { control = 2, real_time = 2, best_effort = 2 }")
            } else {
                (vcs, "")
            };
            format!(
                "[simulation]\nseed = {seed}\nwarmup = 100\nmeasure = 600\ndrain_limit = 40000\nwatchdog = 5000\n\
                 [topology]\n{topo}\n\
                 [router]\nkind = \"{kind}\"\nvcs = {vcs}{classes}\ninput_buffer = 4\noutput_buffer = 3\n\
                 vc_release = \"{release}\"\nallocator = {allocator}\npreemption = {{ extra_buffer = 2 }}\n\
                 marking = {{ kind = \"iba_cc\", threshold = {threshold} }}\n\
                 [[traffic]]\nclass = \"real_time\"\nload = {load}\nmessage_flits = 12\npacket_flits = 6\nvtick = 5\n\
                 [[traffic]]\nclass = \"best_effort\"\nload = {load}\nmessage_flits = 9\npacket_flits = 9\n\
                 [[traffic]]\nclass = \"control\"\nload = 0.02\nmessage_flits = 3\npacket_flits = 3\n"
            )
        },
    )
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 40, ..Default::default() })]

    #[test]
    fn the_kept_port_queues_match_the_input_vcs(toml in arb_marked()) {
        use proptest::prelude::*;
        let mut s = Simulation::from_toml(&toml, None).map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        s.run_checking_invariants(5).map_err(|e| TestCaseError::fail(format!("{e}\n{toml}")))?;
        let r = s.result();
        if r.summary.drain_complete {
            prop_assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        }
        let again = Simulation::from_toml(&toml, None).unwrap().run().unwrap();
        prop_assert_eq!(again.summary_json(), r.summary_json());
    }
}

//! Duato's escape VC end to end: LID paths sharing the VCs through one (`[routing] lid_vcs
//! = "escape"`, `routing/lid_paths.rs`) and minimal adaptive routing over dimension order's
//! (`routing.kind = "min_adapt"`, `routing/min_adapt.rs`) run past saturation without
//! deadlock, with either VC allocator, and minimal adaptive routing spreads a permutation that dimension order
//! concentrates.

use qosnet_sim::Simulation;

const DRB: &str = "multipath = { paths = 4, selection = \"drb\", contraction_timer = \"20 us\" }";
const MARK: &str = "marking = { kind = \"iba_cc\", threshold = 8 }";

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// The escape VC (`[routing] lid_vcs = "escape"`, Duato's protocol) over random small
    /// meshes and tori, LMCs, slacks, VC counts, traffic classes and loads up to past
    /// saturation (the preemptive router refuses the escape): no deadlock (the watchdog's period is short), invariants kept,
    /// every measured message delivered once where the run drains.
    #[test]
    fn escape_vcs_keep_lid_paths_free_of_deadlock(
        torus in proptest::bool::ANY,
        k in 3u32..6,
        lmc in 1u8..3,
        slack in 0u32..4,
        extra_vcs in 0u32..3,
        classes in proptest::bool::ANY,
        drb in proptest::bool::ANY,
        min_adapt in proptest::bool::ANY,
        vc_alloc in proptest::sample::select(vec!["", "islip", "separable_input_first"]),
        load in 0.2f64..1.0,
        flits in proptest::sample::select(vec![1u32, 4, 16]),
        seed in 1u64..1000,
    ) {
        let per_class = if torus { 3 } else { 2 } + extra_vcs;
        let (vcs, vc_classes, traffic) = if classes {
            (
                2 * per_class,
                format!("vc_classes = {{ real_time = {per_class}, best_effort = {per_class} }}\n"),
                format!(
                    "[[traffic]]\nclass = \"real_time\"\nload = {}\nmessage_flits = {flits}\npacket_flits = {flits}\n\
                     [[traffic]]\nclass = \"best_effort\"\nload = {}\nmessage_flits = {flits}\npacket_flits = {flits}\n",
                    load / 2.0, load / 2.0
                ),
            )
        } else {
            (per_class, String::new(), format!("[[traffic]]\nload = {load}\nmessage_flits = {flits}\npacket_flits = {flits}\n"))
        };
        let (multipath, marking) = if drb {
            (DRB.replace("paths = 4", &format!("paths = {}", 1 << lmc)), MARK)
        } else {
            (format!("multipath = {{ paths = {}, selection = \"by_message\" }}", 1 << lmc), "")
        };
        // (or minimal adaptive routing, whose escape is dimension order)
        let (routing, marking) = if min_adapt {
            ("[routing]\nkind = \"min_adapt\"\n".to_string(), "")
        } else {
            (format!("[routing]\nlmc = {lmc}\nslack = {slack}\nlid_vcs = \"escape\"\n{multipath}\n"), marking)
        };
        // (or BookSim2's VC allocators: iSLIP asks for the escape beside the other ways)
        let vc_allocator = if vc_alloc.is_empty() {
            String::new()
        } else {
            format!("vc_allocator = {{ kind = \"{vc_alloc}\" }}\n")
        };
        let toml = format!(
            "[simulation]\nseed = {seed}\nwarmup = 300\nmeasure = 2500\nwatchdog = 3000\n\
             [topology]\nkind = \"{}\"\nk = {k}\nn = 2\n\
             {routing}\
             [router]\nvcs = {vcs}\n{vc_classes}input_buffer = 8\noutput_buffer = 8\n{vc_allocator}{marking}\n{traffic}",
            if torus { "torus" } else { "mesh" }
        );
        let mut s = Simulation::from_toml(&toml, None)
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}\n{toml}")))?;
        s.run_checking_invariants(13)
            .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e}\n{toml}")))?;
        let r = s.result();
        if r.summary.drain_complete {
            proptest::prop_assert_eq!(r.summary.messages_delivered, r.summary.messages_measured);
        } else {
            proptest::prop_assert!(r.summary.saturated, "{}", toml);
        }
    }
}

/// Accepted flits/node/cycle and whether the run saturated, for transpose traffic at
/// `load` on an 8x8 mesh routed by `kind`.
fn transpose(kind: &str, load: f64) -> (f64, bool) {
    let toml = format!(
        "[simulation]\nwarmup = 2000\nmeasure = 8000\n\
         [topology]\nkind = \"mesh\"\nk = 8\nn = 2\n\
         [routing]\nkind = \"{kind}\"\n\
         [router]\nvcs = 4\ninput_buffer = 8\noutput_buffer = 8\n\
         [[traffic]]\nload = {load}\nmessage_flits = 4\npacket_flits = 4\npattern = \"transpose\"\n"
    );
    let mut s = Simulation::from_toml(&toml, None).unwrap();
    let r = s.run().unwrap();
    s.check_invariants().unwrap();
    (r.summary.accepted_flits_per_node_cycle, r.summary.saturated)
}

/// Transpose on a mesh under dimension order sends each row's traffic down one column, and
/// saturates the links near the diagonal; minimal adaptive routing may take y first where x
/// is busy (Glass & Ni, and every study of adaptive routing since). Past dimension order's
/// saturation it accepts clearly more.
#[test]
fn minimal_adaptive_routing_spreads_a_transpose() {
    let (dor, dor_sat) = transpose("dor", 0.5);
    let (adaptive, _) = transpose("min_adapt", 0.5);
    assert!(dor_sat, "dimension order saturates at 0.5 on a transpose: {dor}");
    assert!(adaptive > dor * 1.15, "min_adapt {adaptive} against dor {dor}");
}

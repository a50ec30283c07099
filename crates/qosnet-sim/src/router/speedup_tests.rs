//! BookSim2's speedups (`Params::input_speedup`, `output_speedup`, `internal_speedup`; the
//! expanded crossbar in `crossbar.rs`, the passes in `mod.rs`), worked by hand on one
//! router: a star whose node i is on port i, messages posted by hand, its buffers read
//! cycle by cycle.

use crate::config::TrafficClass;
use crate::ids::NodeId;
use crate::Simulation;

fn star(router: &str, endpoint: &str) -> Simulation {
    let toml = format!(
        "[simulation]\nwarmup = 0\nmeasure = 2000\n[topology]\nkind = \"star\"\nports = 4\n\
         [router]\nvcs = 4\ncrossbar_scheduler = {{ kind = \"round_robin\" }}\n{router}\n\
         [endpoint]\n{endpoint}\n[[traffic]]\nload = 1e-9\n"
    );
    Simulation::from_toml(&toml, None).unwrap()
}

/// Flits in input VC `v` of the router's port `port`.
fn in_len(s: &Simulation, port: usize, v: usize) -> u32 {
    s.routers.in_vc[s.routers.p.lane_index(port, v)].buf.len()
}

/// Flits in the output VC buffers of the router's port `port` (also `output_first_tests`').
pub(super) fn out_len(s: &Simulation, port: usize) -> u32 {
    (0..s.routers.p.vcs).map(|v| s.routers.out_vc[s.routers.p.lane_index(port, v)].buf.len()).sum()
}

/// Flits through the router's crossbar so far: those in its output VC buffers and those
/// its output stage has sent (`flit_counts`' hops: a star has one router).
fn crossed(s: &Simulation) -> u64 {
    (0..s.routers.p.ports).map(|p| out_len(s, p) as u64).sum::<u64>() + s.flit_counts().2
}

/// Node 0 injects two 12-flit packets at once (`concurrent_packets = 2`), one to node 1 on
/// VC 1 and one to node 2 on VC 2 (the endpoint's round robin), their flits alternating
/// on the link. The header's VC allocation takes 4 cycles, so both VCs hold flits when the
/// second header may go: from then on, with `input_speedup = 2`, VC 1 (crossbar input 0.1)
/// and VC 2 (crossbar input 0.0) each send a flit in the same cycle, to different outputs,
/// and the backlog drains. Without the speedup the port sends a flit a cycle, as it
/// receives them, and the backlog stays until the packets end.
#[test]
fn input_speedup_sends_two_flits_from_vcs_of_different_parity_in_one_cycle() {
    for (s_in, most) in [(1, 1), (2, 2)] {
        let mut s =
            star(&format!("input_speedup = {s_in}\npipeline = {{ vc_alloc = 4 }}"), "concurrent_packets = 2");
        s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, 12, 0);
        s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, 12, 0);
        let (mut before, mut most_crossed, mut two_vcs) = (0, 0, false);
        for _ in 0..60 {
            s.step().unwrap();
            s.check_invariants().unwrap();
            let now = crossed(&s);
            most_crossed = most_crossed.max(now - before);
            before = now;
            two_vcs |= in_len(&s, 0, 1) > 0 && in_len(&s, 0, 2) > 0;
        }
        assert!(two_vcs, "VCs 1 and 2 never held flits together");
        assert_eq!(most_crossed, most, "input_speedup = {s_in}");
        assert_eq!(s.flit_counts().1, 24);
    }
}

/// Nodes 0 and 1 each send a 30-flit packet to node 3. With `internal_speedup = 2` the
/// crossbar runs twice a cycle and takes both inputs' flits into port 3's output VC
/// buffers (a VC each), two a cycle; the link still sends one a cycle, so those buffers
/// fill (beyond the one flit a cycle at most one VC could hold in one cycle) while node 3
/// receives one flit a cycle, never more. Their occupancy stays within `output_buffer`.
#[test]
fn internal_speedup_output_sends_one_flit_a_cycle_from_its_buffer() {
    let mut s = star("internal_speedup = 2\noutput_buffer = 16", "");
    s.post_message(NodeId(0), NodeId(3), TrafficClass::BestEffort, 30, 0);
    s.post_message(NodeId(1), NodeId(3), TrafficClass::BestEffort, 30, 0);
    let (mut delivered_before, mut most_queued) = (0, 0);
    for _ in 0..200 {
        s.step().unwrap();
        s.check_invariants().unwrap();
        let (_, delivered, _) = s.flit_counts();
        assert!(
            delivered - delivered_before <= 1,
            "node 3 took {} flits in a cycle",
            delivered - delivered_before
        );
        delivered_before = delivered;
        let queued = out_len(&s, 3);
        assert!(queued <= 16 * 2, "{queued} flits in two 16-flit output VC buffers");
        most_queued = most_queued.max(queued);
    }
    assert_eq!(delivered_before, 60);
    assert!(most_queued >= 3, "the output queued at most {most_queued} flits");

    // Without the speedup the crossbar moves a flit a cycle to port 3, which sends one:
    // at most a flit a VC waits there.
    let mut s = star("output_buffer = 16", "");
    s.post_message(NodeId(0), NodeId(3), TrafficClass::BestEffort, 30, 0);
    s.post_message(NodeId(1), NodeId(3), TrafficClass::BestEffort, 30, 0);
    for _ in 0..200 {
        s.step().unwrap();
        assert!(out_len(&s, 3) <= 2);
    }
}

/// With `output_speedup = 2` port 3 takes a flit from input 0 (through its crossbar
/// output 3.0) and one from input 1 (3.1) in the same pass, and sends one a cycle: its
/// output VC buffers fill. Inputs 0 and 2 share crossbar output 3.0, so port 3 takes a
/// flit a cycle from them, as without the speedup, and holds at most a flit a VC.
#[test]
fn output_speedup_takes_inputs_of_different_residues_in_one_cycle() {
    for (senders, fills) in [([0, 1], true), ([0, 2], false)] {
        let mut s = star(
            "output_speedup = 2
output_buffer = 16",
            "",
        );
        for n in senders {
            s.post_message(NodeId(n), NodeId(3), TrafficClass::BestEffort, 30, 0);
        }
        let (mut delivered_before, mut most_queued) = (0, 0);
        for _ in 0..200 {
            s.step().unwrap();
            s.check_invariants().unwrap();
            let (_, delivered, _) = s.flit_counts();
            assert!(delivered - delivered_before <= 1);
            delivered_before = delivered;
            most_queued = most_queued.max(out_len(&s, 3));
        }
        assert_eq!(delivered_before, 60);
        assert_eq!(most_queued > 2, fills, "inputs {senders:?}: at most {most_queued} flits queued");
    }
}

//! BookSim2's input arbiters (`router.allocator.input_choice = "output"`,
//! `Rounds::OutputFirst`, `Routers::output_first`) worked by hand on one router: a star
//! whose node i is on port i, messages posted by hand, each output port's crossings read
//! cycle by cycle. An input first chooses an output, from the one after the output it was
//! last granted, then a VC heading there; with `"vc"` it chooses among its VCs directly.

use super::speedup_tests::out_len;
use crate::config::TrafficClass;
use crate::ids::NodeId;
use crate::Simulation;

fn star(choice: &str, concurrent: u32) -> Simulation {
    let toml = format!(
        "[simulation]\nwarmup = 0\nmeasure = 2000\n[topology]\nkind = \"star\"\nports = 4\n\
         [router]\nvcs = 4\ncrossbar_scheduler = {{ kind = \"round_robin\" }}\n\
         allocator = {{ iterations = 1, input_choice = \"{choice}\" }}\npipeline = {{ vc_alloc = 4 }}\n\
         [endpoint]\nconcurrent_packets = {concurrent}\n[[traffic]]\nload = 1e-9\n"
    );
    Simulation::from_toml(&toml, None).unwrap()
}

/// Flits through the router's crossbar into output port `port` so far: those in its output
/// VC buffers and those its link has carried (with no warm-up every cycle is measured).
fn crossed(s: &Simulation, port: usize) -> u64 {
    out_len(s, port) as u64 + s.net.obs.metrics.router_link_flits[port]
}

/// Step `cycles` cycles and return, for each cycle in which a flit crossed, the output
/// port it crossed to (one sender here, which sends at most one flit a cycle).
fn crossings(s: &mut Simulation, cycles: usize) -> Vec<usize> {
    let mut before: Vec<u64> = (0..4).map(|p| crossed(s, p)).collect();
    let mut seq = Vec::new();
    for _ in 0..cycles {
        s.step().unwrap();
        s.check_invariants().unwrap();
        let now: Vec<u64> = (0..4).map(|p| crossed(s, p)).collect();
        let outs: Vec<usize> = (0..4).filter(|&p| now[p] > before[p]).collect();
        assert!(outs.len() <= 1 && (0..4).all(|p| now[p] - before[p] <= 1), "two flits crossed in a cycle");
        seq.extend(outs);
        before = now;
    }
    seq
}

/// Node 0 sends three 40-flit packets at once: two to node 1 (VCs 1 and 2, the endpoint's
/// round robin) and one to node 2 (VC 3), a flit of each in turn on its link. The 4-cycle
/// VC allocation lets each VC's flits queue at input 0 before its header may go, so from
/// the third header on all three VCs hold flits, and input 0 sends one a cycle.
///
/// By hand: with `"vc"` the input's round robin over VCs 1, 2, 3 gives outputs 1, 1, 2 in
/// turn, two flits to node 1 for one to node 2, as they arrive. With `"output"` the input's
/// pointer moves past the granted output each time, so while VC 3 holds a flit the outputs
/// alternate 2, 1, 2, 1. VC 3 holds two flits when its header crosses (a flit of it
/// arrives every third cycle: two during its wait), and alternating it sends three for
/// every two it receives: 12 crossings alternate, then VC 3 is empty until its next flit
/// and the outputs follow the arrivals, 1, 1, 2.
#[test]
fn the_input_arbiter_alternates_outputs_where_vc_round_robin_alternates_vcs() {
    let vc_first = [2, 1, 1].repeat(6);
    let output_first = [[2, 1].repeat(6), [1, 2, 1].repeat(2)].concat();
    for (choice, expected) in [("vc", vc_first.clone()), ("output", output_first)] {
        let mut s = star(choice, 3);
        for dst in [1, 1, 2] {
            s.post_message(NodeId(0), NodeId(dst), TrafficClass::BestEffort, 40, 0);
        }
        let seq = crossings(&mut s, 400);
        assert_eq!(seq.len(), 120, "{choice}: every flit crosses once");
        // From the third header's first crossing (output 2's first flit) on.
        let third = seq.iter().position(|&o| o == 2).unwrap();
        assert_eq!(seq[third..third + 18], expected, "{choice}: outputs crossed to, cycle by cycle");
    }
}

/// Nodes 2 and 3 each send a packet to node 1, and 20 cycles later node 0 one to node 1
/// and one to node 2 (its VCs 1 and 2): inputs 0, 2 and 3 ask for output 1, input 0 only
/// when its pointer heads there. One iteration.
///
/// By hand, once all four packets are under way (output 1's arbiter takes the first
/// requester from the input after the one it served last; input 0's pointer `p`):
///
/// | cycle | input 0 asks | output 1 grants | input 0's `p` after |
/// |---|---|---|---|
/// | 1 | 1 (p = 3: from 3, wrapping, 1 is the first it heads to) | 0 | 2 |
/// | 2 | 2 (alone there: granted) | 2 (of 2, 3) | 3 |
/// | 3 | 1 | 3 (of 0, 2, 3: after 2) | 3: it lost, so it stays |
/// | 4 | 1 again | 0 (after 3) | 2 |
///
/// and so on with period 3: input 0 crosses two cycles in three, to outputs 1 and 2 in
/// turn, and output 1 crosses every cycle. Had the pointer moved on the loss (to 2), input
/// 0 would ask for output 2 in cycle 4 and for output 1 in cycle 5, when output 1's arbiter
/// favours input 3 again: it would lose output 1 every time.
#[test]
fn a_losing_input_asks_for_the_same_output_again() {
    let mut s = star("output", 2);
    s.post_message(NodeId(2), NodeId(1), TrafficClass::BestEffort, 60, 0);
    s.post_message(NodeId(3), NodeId(1), TrafficClass::BestEffort, 60, 0);
    for _ in 0..20 {
        s.step().unwrap();
    }
    s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, 40, 0);
    s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, 40, 0);
    // (output 1 and 2 crossed to this cycle, input 0's pointer after it)
    let mut log = Vec::new();
    for _ in 0..400 {
        let (a, b) = (crossed(&s, 1), crossed(&s, 2));
        s.step().unwrap();
        s.check_invariants().unwrap();
        log.push((crossed(&s, 1) - a, crossed(&s, 2) - b, s.routers.sa.out_rr[0]));
    }
    assert_eq!(s.flit_counts().1, 60 + 60 + 40 + 40, "every flit delivered");
    // From input 0's first crossing to output 2 on, 10 cycles settle, then 24 cycles of
    // the table's period (input 0's backlog lasts: 40 flits, two thirds of a flit a cycle).
    let first = log.iter().position(|l| l.1 == 1).unwrap();
    let window = &log[first + 10..first + 34];
    let start = window.iter().position(|l| l.2 == 2 && l.1 == 0).unwrap();
    for (i, &(one, two, p)) in window[start..start + 18].iter().enumerate() {
        let (want_two, want_p) = [(0, 2), (1, 3), (0, 3)][i % 3];
        assert_eq!((one, two, p), (1, want_two, want_p), "cycle {} of the period", i + 1);
    }
}

//! Where a flit takes its downstream credit (`config::CreditAt`), worked by hand on a line
//! of three routers (a 3-ary 1-mesh, node i on router i) with one VC a port: nodes 0 and 1
//! each send a 30-flit packet to node 2. Node 1's header reaches router 1's output towards
//! router 2 first and holds its only VC; node 0's packet waits at router 1's input for it,
//! its 4-flit input buffer fills, and router 0 runs out of credits for it.

use super::speedup_tests::out_len;
use crate::config::TrafficClass;
use crate::ids::NodeId;
use crate::Simulation;

fn line(router: &str) -> Simulation {
    let toml = format!(
        "[simulation]\nwarmup = 0\nmeasure = 5000\n[topology]\nkind = \"mesh\"\nk = 3\nn = 1\n\
         [router]\nvcs = 1\ninput_buffer = 4\noutput_buffer = 16\ncredit_latency = 10\n{router}\n[[traffic]]\nload = 1e-9\n"
    );
    Simulation::from_toml(&toml, None).unwrap()
}

/// The flits router 0's output VC buffers hold (all towards router 1), cycle by cycle while
/// node 0's packet waits, and whether router 0's input VC from node 0 was ever held back
/// (`ip_blocked`) with its output VC buffer below `output_buffer`.
fn run(router: &str, node0: &[u32], node1: u32) -> (u32, bool) {
    let mut s = line(router);
    for &size in node0 {
        s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, size, 0);
    }
    s.post_message(NodeId(1), NodeId(2), TrafficClass::BestEffort, node1, 0);
    let ports = s.routers.p.ports;
    // (router 0's port from node 0)
    let local = s.routers.topo.attach[0].1 as usize;
    let (mut most, mut held_with_room) = (0, false);
    for _ in 0..3000 {
        s.step().unwrap();
        s.check_invariants().unwrap();
        let queued: u32 = (0..ports).map(|p| out_len(&s, p)).sum();
        most = most.max(queued);
        held_with_room |= s.routers.ip_blocked[local] & 1 == 1 && queued < 16;
    }
    let sent = node0.iter().sum::<u32>() + node1;
    assert_eq!(s.flit_counts().1, sent as u64, "{router}: every flit delivered");
    (most, held_with_room)
}

/// At the output (document 003's router), router 0's crossbar moves node 0's flits into
/// its 16-flit output VC buffer while there is room: it fills, beyond the 4 flits the
/// downstream buffer has credits for. At the crossbar (BookSim2's `iq` router) each flit
/// takes a credit as it crosses: the output buffer holds no more than those 4, and the
/// input VC waits for a credit with the output buffer far from full. The invariants
/// (`check_invariants`, each cycle) count the flits queued at the output as credits held.
#[test]
fn credits_taken_at_the_crossbar_bound_the_output_buffer_to_the_downstream_room() {
    let (most, held) = run("credit_at = \"output\"", &[30], 30);
    assert_eq!((most, held), (16, false), "credits taken at the output");
    let (most, held) = run("credit_at = \"crossbar\"", &[30], 30);
    assert!(most <= 4, "credits taken at the crossbar: {most} flits queued past 4 credits");
    assert!(held, "the input VC never waited for a credit");
}

/// With `vc_release = "tail_sent"` node 0's 4-flit first packet crosses router 0 whole,
/// taking all 4 credits (node 1's 200-flit packet holds router 1's way on), and its second
/// packet is given the same output VC: its header must wait for a credit too
/// (`vc_alloc.rs`), never take one there is not (the invariants would find the count
/// wrapped).
#[test]
fn a_packet_given_a_vc_without_credits_waits_for_one() {
    let (most, held) = run("credit_at = \"crossbar\"\nvc_release = \"tail_sent\"", &[4, 30], 200);
    assert!(most <= 4 && held, "{most} flits queued; held {held}");
}

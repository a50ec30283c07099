//! The NIC models (document 003 §3.3, document 000 §3.2) and NIC-based rate control
//! (document 004): hand-worked DMA timing and doorbell order, CQEs, bandwidth shares
//! against the ideal 1/idt ratio, the network-contention case of document 004 Figs. 5–6,
//! the single-flow knee at T, and invariants and determinism with NICs.

use qosnet_sim::config::TrafficClass;
use qosnet_sim::ids::NodeId;
use qosnet_sim::metrics::{Column, Table};
use qosnet_sim::{RunResult, Simulation};

fn sim(toml: &str) -> Simulation {
    Simulation::from_toml(toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

fn u64s<'a>(t: &'a Table, name: &str) -> &'a [u64] {
    match t.column(name) {
        Some(Column::U64(v)) => v,
        other => panic!("column {name}: {other:?}"),
    }
}

fn f64s<'a>(t: &'a Table, name: &str) -> &'a [f64] {
    match t.column(name) {
        Some(Column::F64(v)) => v,
        other => panic!("column {name}: {other:?}"),
    }
}

/// Bandwidth received per traffic entry (flits/cycle), in entry order.
fn by_traffic(r: &RunResult) -> Vec<f64> {
    let traffic = u64s(&r.flows, "traffic");
    let bw = f64s(&r.flows, "bandwidth_flits_per_cycle");
    let n = traffic.iter().filter(|&&t| t != u64::MAX).map(|&t| t + 1).max().unwrap_or(0) as usize;
    let mut out = vec![0.0; n];
    for (t, b) in traffic.iter().zip(bw) {
        if *t != u64::MAX {
            out[*t as usize] += b;
        }
    }
    out
}

/// Flows as `(source, destination, idt in T or "" for none)`; every flow always backlogged
/// (offered at 0.9 of the link each).
fn flows_toml(topology: &str, queues: &str, flows: &[(u32, u32, &str)]) -> String {
    flows_toml_at(topology, queues, flows, 0.9)
}

fn flows_toml_at(topology: &str, queues: &str, flows: &[(u32, u32, &str)], load: f64) -> String {
    let mut t = format!(
        "[simulation]\nwarmup = 20000\nmeasure = 100000\ndrain_limit = 0\n[topology]\n{topology}\n\
         [router]\ncrossbar_scheduler = \"round_robin\"\noutput_scheduler = \"round_robin\"\n\
         [endpoint]\nmodel = \"via\"\nqueues = \"{queues}\"\n"
    );
    for (s, d, idt) in flows {
        t += &format!(
            "[[traffic]]\nsources = [{s}]\nload = {load}\npattern = {{ kind = \"fixed\", destination = {d} }}\n{idt}\n"
        );
    }
    t
}

const STAR: &str = "kind = \"star\"\nports = 8";

/// Shares `got` against the ideal 1/idt ratio, within `tol` of each share.
fn assert_ratio(got: &[f64], idts: &[f64], tol: f64, what: &str) {
    let total: f64 = got.iter().sum();
    let ideal: f64 = idts.iter().map(|i| 1.0 / i).sum();
    for (g, i) in got.iter().zip(idts) {
        let (share, want) = (g / total, (1.0 / i) / ideal);
        assert!((share - want).abs() < tol, "{what}: shares {got:?} against 1/idt for {idts:?}");
    }
}

#[test]
fn two_and_three_flows_from_one_source_share_by_inverse_idt() {
    // Document 004 Fig. 12a and 12b: one source, different destinations.
    let r = sim(&flows_toml(STAR, "rate_control", &[(0, 1, "idt = 2"), (0, 2, "idt = 3")])).run().unwrap();
    let got = by_traffic(&r);
    assert_ratio(&got, &[2.0, 3.0], 0.01, "two flows");
    // T is a packet on the link, so the rates themselves are 1/2 and 1/3 of the link.
    assert!((got[0] - 0.5).abs() < 0.01 && (got[1] - 1.0 / 3.0).abs() < 0.01, "{got:?}");
    let r =
        sim(&flows_toml(STAR, "rate_control", &[(0, 1, "idt = 2"), (0, 2, "idt = 4"), (0, 3, "idt = 8")]))
            .run()
            .unwrap();
    assert_ratio(&by_traffic(&r), &[2.0, 4.0, 8.0], 0.01, "three flows");
}

#[test]
fn two_sources_to_one_destination_share_by_inverse_idt() {
    // Document 004 Fig. 12c: the flows contend in the network (the destination's port),
    // where round robin alone would split it evenly.
    let r = sim(&flows_toml(STAR, "rate_control", &[(0, 2, "idt = 1.5"), (1, 2, "idt = 3")])).run().unwrap();
    assert_ratio(&by_traffic(&r), &[1.5, 3.0], 0.01, "two sources");
    let r = sim(&flows_toml(STAR, "interleaved", &[(0, 2, ""), (1, 2, "")])).run().unwrap();
    assert_ratio(&by_traffic(&r), &[1.0, 1.0], 0.01, "without rate control");
}

#[test]
fn reserved_bandwidth_becomes_the_idt() {
    // idt = T · Bpeak / Breq: 400 and 200 Mb/s of a 1.6 Gb/s link are 1/4 and 1/8 of it.
    let toml = flows_toml(
        STAR,
        "rate_control",
        &[(0, 1, "reserve = \"400 Mb/s\""), (0, 2, "reserve = \"200 Mb/s\"")],
    );
    let r = sim(&toml).run().unwrap();
    let got = by_traffic(&r);
    assert!((got[0] - 0.25).abs() < 0.005 && (got[1] - 0.125).abs() < 0.005, "{got:?}");
    let idt = f64s(&r.flows, "idt_cycles");
    assert_eq!(&idt[..2], &[160.0, 320.0]);
}

/// Document 004 Figs. 5–6 on a line of four switches: B (0 -> 3) shares switch 1's east
/// port with C (1 -> 3) and switch 2's with D (2 -> 3). Round robin at each switch leaves B
/// a quarter of the link; rate control regulating C and D gives B its share.
#[test]
fn rate_control_protects_the_long_flow_in_the_network() {
    let line = "kind = \"mesh\"\nk = 4\nn = 1";
    let unregulated =
        sim(&flows_toml(line, "interleaved", &[(0, 3, ""), (1, 3, ""), (2, 3, "")])).run().unwrap();
    let got = by_traffic(&unregulated);
    assert!((got[0] - 0.25).abs() < 0.02, "B without rate control: {got:?}");
    assert!((got[2] - 0.5).abs() < 0.02, "D without rate control: {got:?}");
    // B reserves 45%, C and D 25% each: all within the shared ports.
    let toml = flows_toml(
        line,
        "rate_control",
        &[
            (0, 3, "reserve = \"720 Mb/s\""),
            (1, 3, "reserve = \"400 Mb/s\""),
            (2, 3, "reserve = \"400 Mb/s\""),
        ],
    );
    let got = by_traffic(&sim(&toml).run().unwrap());
    for (g, want) in got.iter().zip([0.45, 0.25, 0.25]) {
        assert!((g - want).abs() < 0.01, "with rate control: {got:?}");
    }
}

#[test]
fn a_single_flows_bandwidth_has_its_knee_at_t() {
    // Document 004 Fig. 11: peak bandwidth for every IDT up to T, then T / IDT of it.
    for (idt, want) in [(0.25, 1.0), (0.5, 1.0), (1.0, 1.0), (2.0, 0.5), (4.0, 0.25), (10.0, 0.1)] {
        let toml = flows_toml_at(STAR, "rate_control", &[(0, 1, &format!("idt = {idt}"))], 1.0);
        let r = sim(&toml).run().unwrap();
        let got = by_traffic(&r)[0];
        assert!((got - want).abs() < 0.02 * want, "idt {idt}: {got:.3} flits/cycle, want {want}");
    }
}

/// One 4-port router, messages posted by hand; `endpoint` is the `[endpoint]` body.
fn posted(endpoint: &str, router: &str) -> Simulation {
    sim(&format!(
        "[simulation]\nwarmup = 0\nmeasure = 5000\nrecord_messages = true\n\
         [topology]\nkind = \"star\"\nports = 4\n[router]\n{router}\n\
         [endpoint]\n{endpoint}\n[[traffic]]\nload = 1e-9\n"
    ))
}

/// Per message (in posting order, told apart by size): (created, injected, delivered).
fn timeline(mut s: Simulation) -> Vec<(u64, u64, u64, u64)> {
    while !s.advance(1).unwrap() {
        s.check_invariants().unwrap();
    }
    let m = s.result().messages.unwrap();
    let (flits, created, injected, delivered) =
        (u64s(&m, "flits"), u64s(&m, "created"), u64s(&m, "injected"), u64s(&m, "delivered"));
    let mut rows: Vec<_> =
        (0..flits.len()).map(|i| (flits[i], created[i], injected[i], delivered[i])).collect();
    rows.sort();
    rows
}

fn one_message(endpoint: &str, flits: u32) -> (u64, u64) {
    let mut s = posted(endpoint, "");
    s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, flits, 0);
    let t = timeline(s);
    let (_, created, injected, delivered) = t[0];
    (injected - created, delivered - injected)
}

#[test]
fn dma_timing_by_hand() {
    // Defaults: 80 ns cycles, 0.5 us set-up = 6 cycles, 528 MB/s = 0.379 cycles per
    // 16-byte flit; a 64-byte descriptor takes 6 + 2 = 8 cycles; a 40-flit packet's data
    // 6 + 16 = 22 cycles, its first flit is in the NIC after 6 + 1 = 7.
    let (q_ideal, n_ideal) = one_message("model = \"ideal\"", 40);
    assert_eq!(q_ideal, 0);
    // VIA: descriptor, then data; the header goes once it is in the NIC. Receive: the data
    // DMA (22) and the descriptor status write (8) after the tail arrives.
    assert_eq!(one_message("model = \"via\"", 40), (8 + 7, n_ideal + 22 + 8));
    // HCA on the system bus: one DMA each way.
    assert_eq!(one_message("model = \"hca\"", 40), (7, n_ideal + 22));
    // A slow bus (100 MB/s: 2 cycles a flit, no set-up) paces the packet onto the wire:
    // the tail leaves 2 x 39 cycles after the header instead of 39, and the receive DMA
    // takes 80 cycles. A paced tail no longer queues behind the header, so it crosses the
    // router in the body flits' time: the header's routing and VC-arbitration stages
    // (1 cycle each, document 003 Fig. 1) less than the header's 7.
    let slow = "model = \"hca\"\ndma = { setup = 0, bandwidth = \"100 MB/s\" }";
    assert_eq!(one_message(slow, 1), (2, 7 + 2));
    assert_eq!(one_message(slow, 40), (2, n_ideal + 39 + 80 - 2));
}

/// A (40 flits, best effort) is posted at t = 0 and takes the DMA until 30; B (39, best
/// effort) and C (20, control) are posted at t = 1 behind it.
fn a_then_b_and_c(endpoint: &str, router: &str) -> Vec<(u64, u64, u64, u64)> {
    let mut s = posted(endpoint, router);
    s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, 40, 0);
    s.advance(1).unwrap();
    s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, 39, 0);
    s.post_message(NodeId(0), NodeId(3), TrafficClass::Control, 20, 1);
    // rows by size: C (20), B (39), A (40); columns (flits, created, injected, delivered)
    timeline(s)
}

#[test]
fn prioritized_doorbells_serve_control_before_queued_best_effort() {
    // The QoS NIC: per-class doorbells take C next: its DMA at 30, descriptor 8, first flit
    // 7 -> 45, and the hardware VirtualClock puts its reserved flits ahead of A's (best
    // effort, unreserved). Its data is in at 38 + 6 + 8 = 52, when B's DMA starts: B's
    // header is in at 67 but waits for A, oldest of the unreserved, whose last 10 flits go
    // after C's 20 (45..64): 65..74.
    let qos = a_then_b_and_c("model = \"via\"\nqueues = \"per_class\"\nscheduler = \"virtual_clock\"", "");
    assert_eq!((qos[2].2, qos[0].2, qos[1].2), (15, 45, 75), "A, C, B with prioritized doorbells: {qos:?}");
    // The traditional NIC: one FIFO and FCFS injection. B's DMA at 30 (header in at 45,
    // after A's tail at 54: 55), its data in at 38 + 6 + 15 = 59; C's DMA at 59, header in
    // at 74, after B's tail (55 + 38 = 93): 94.
    let fifo = a_then_b_and_c("model = \"via\"\nqueues = \"fifo\"\nscheduler = \"fcfs\"", "");
    assert_eq!((fifo[2].2, fifo[1].2, fifo[0].2), (15, 55, 94), "A, B, C with one FIFO: {fifo:?}");
}

#[test]
fn a_doorbell_whose_vc_buffer_is_full_is_skipped() {
    // Two VCs: control on VC 0, best effort on VC 1, each VC buffer one packet (40 flits).
    // A fills VC 1's buffer; B waits for room (A's last flit leaves at 54); C, behind B in
    // the one FIFO doorbell queue, goes at 30 only if blocked heads are skipped.
    let router = "vcs = 2\nvc_classes = { control = 1, real_time = 0, best_effort = 1 }";
    let nic = |skip: bool| {
        format!("model = \"via\"\nqueues = \"fifo\"\nscheduler = \"virtual_clock\"\nbuffer_flits = 80\nskip_blocked = {skip}")
    };
    let skipping = a_then_b_and_c(&nic(true), router);
    assert_eq!(skipping[0].2, 45, "C skips the blocked head: {skipping:?}");
    let blocked = a_then_b_and_c(&nic(false), router);
    // B gets room when A's last flit leaves (54, room for 39 flits at 53) and C's DMA follows B's.
    assert!(blocked[0].2 > blocked[1].2 && blocked[0].2 > 80, "C waits behind B: {blocked:?}");
}

/// The QoS NIC's doorbells with per-VC queues (document 003 §3.3.1, §4.2): a real-time
/// connection's doorbells are for its own VC buffer, and the firmware passes over one whose
/// buffer is full. Sixteen real-time connections per node on the 8-port router, 0.75
/// flits/node/cycle in all, in messages of 26 packets (a video frame's): with one doorbell
/// queue per class a message's packets fill every VC buffer of the class, so the node sends
/// to one destination at a time and saturates (a head-of-line-blocked input, near 0.6);
/// with the connections' doorbells bound to their VCs it carries the load.
#[test]
fn per_vc_doorbells_lift_head_of_line_blocking() {
    let run = |queues: &str| {
        let mut toml = format!(
            "[simulation]\nwarmup = 20000\nmeasure = 100000\ndrain_limit = 100000\n\
             [topology]\nkind = \"star\"\nports = 8\n\
             [router]\nkind = \"preemptive\"\nvcs = 16\n\
             [endpoint]\nmodel = \"via\"\nqueues = \"{queues}\"\nscheduler = \"virtual_clock\"\n"
        );
        for _ in 0..16 {
            toml += "[[traffic]]\nclass = \"real_time\"\nload = 0.046875\nmessage_flits = 1040\npacket_flits = 40\nvtick = 20\n";
        }
        sim(&toml).run().unwrap().summary
    };
    let per_class = run("per_class");
    assert!(per_class.saturated && per_class.accepted_flits_per_node_cycle < 0.7, "{per_class:?}");
    let per_vc = run("per_vc");
    assert!(!per_vc.saturated && per_vc.accepted_flits_per_node_cycle > 0.72, "{per_vc:?}");
}

#[test]
fn message_level_injection_pays_a_setup_per_message_and_does_not_interleave() {
    // Two 40-flit messages from one HCA, each on its own VC buffer, the injection link
    // shared round robin. Flit level: both go at once, interleaved, so both tails leave
    // around cycle 7 + 80. Message level: one after the other, each after the send DMA's
    // set-up (6 cycles).
    let run = |injection: &str| {
        let nic = format!("model = \"hca\"\ninjection = \"{injection}\"\nscheduler = \"round_robin\"");
        let mut s = posted(&nic, "");
        s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, 40, 0);
        s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, 39, 0);
        timeline(s)
    };
    let flit = run("flit");
    let msg = run("message");
    // Message level: A's header after its data starts arriving (7) plus the set-up: the
    // set-up runs from the choice at 7, so the header goes at 13.
    assert_eq!(msg[1].2, 13, "A at message level: {msg:?}");
    // B waits for A's 40 flits (13..52) and its own set-up.
    assert_eq!(msg[0].2, 53 + 6, "B at message level: {msg:?}");
    assert!(flit[0].2 < 40, "at flit level B interleaves with A: {flit:?}");
}

#[test]
fn cqes_are_posted_for_every_message_sent_and_received() {
    let toml = "[simulation]\nwarmup = 1000\nmeasure = 20000\n[topology]\nkind = \"mesh\"\nk = 3\nn = 2\n\
                [endpoint]\nmodel = \"hca\"\nqueues = \"per_class\"\n[[traffic]]\nload = 0.3\n\
                message_flits = 100\npacket_flits = 40\n";
    let mut s = sim(toml);
    let r = s.run().unwrap();
    assert!(r.summary.drain_complete);
    let (send, recv) = (u64s(&r.nodes, "send_cqes"), u64s(&r.nodes, "recv_cqes"));
    let total_send: u64 = send.iter().sum();
    let total_recv: u64 = recv.iter().sum();
    assert!(total_send > 100);
    // Every message received was sent; messages still in flight at the end are the difference.
    assert!(
        total_recv <= total_send && total_send - total_recv < 40,
        "{total_send} sent, {total_recv} received"
    );
    assert_eq!(s.completions(4), (send[4], recv[4]));
    // Every packet was moved by a DMA: 100-flit messages are 3 packets.
    let dma: u64 = u64s(&r.nodes, "dma_packets").iter().sum();
    assert!(dma >= 3 * total_send && dma <= 3 * total_send + 3 * 9, "{dma} DMAs for {total_send} messages");
}

/// Every NIC configuration, on a 3x3 mesh at moderate load with three classes: invariants
/// every cycle, every measured message delivered, the same seed the same bytes.
#[test]
fn nic_models_keep_every_invariant_and_are_deterministic() {
    let variants = [
        "model = \"via\"\nqueues = \"fifo\"\nbuffer = \"shared\"\ninjection = \"message\"\nscheduler = \"fcfs\"",
        "model = \"via\"\nqueues = \"per_class\"\nscheduler = \"virtual_clock\"",
        "model = \"via\"\nqueues = \"per_vc\"\nscheduler = \"virtual_clock\"",
        "model = \"via\"\nqueues = \"per_vc\"\nskip_blocked = false\ninjection = \"message\"",
        "model = \"via\"\nqueues = \"per_class\"\ninjection = \"message\"\nscheduler = \"virtual_clock\"",
        "model = \"hca\"\nqueues = \"per_class\"\nscheduler = { kind = \"wrr\", weights = [4, 2, 1, 1] }",
        "model = \"via\"\nqueues = \"round_robin\"",
        "model = \"via\"\nqueues = \"interleaved\"\nbuffer = \"shared\"",
        "model = \"hca\"\nqueues = \"rate_control\"\ndma = { bandwidth = \"150 MB/s\" }",
    ];
    for kind in ["traditional", "non_preemptive", "preemptive"] {
        for v in variants {
            let toml = format!(
                "[simulation]\nseed = 5\nwarmup = 500\nmeasure = 4000\nrecord_messages = true\n\
                 [topology]\nkind = \"mesh\"\nk = 3\nn = 2\n\
                 [router]\nkind = \"{kind}\"\nvcs = 4\ncrossbar_scheduler = \"virtual_clock\"\n\
                 [endpoint]\n{v}\n\
                 [[traffic]]\nclass = \"control\"\nprocess = {{ kind = \"periodic\", period = \"20 us\" }}\nmessage_flits = 10\n\
                 [[traffic]]\nclass = \"real_time\"\nload = 0.2\nmessage_flits = 40\n\
                 [[traffic]]\nload = 0.25\nmessage_flits = 60\npacket_flits = 40\n"
            );
            let what = format!("{kind} / {v}");
            let mut s = sim(&toml);
            while !s.advance(1).unwrap_or_else(|e| panic!("{what}: {e}")) {
                s.check_invariants().unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            let r = s.result();
            assert!(r.summary.drain_complete, "{what}: {:?}", r.summary);
            assert_eq!(r.summary.messages_delivered, r.summary.messages_measured, "{what}");
            let again = sim(&toml).run().unwrap();
            assert_eq!(r.summary_json(), again.summary_json(), "{what}");
            assert_eq!(r.messages.unwrap().to_csv(), again.messages.unwrap().to_csv(), "{what}");
        }
    }
}

#[test]
fn the_hcas_vl_arbitration_shares_its_port_by_weight() {
    // Document 000 §3.2: the HCA's QPs feed VL buffers and the port's IBA VL arbitration
    // picks among them. Real time on VL 2 and best effort on VL 3, both backlogged, to
    // different destinations, so the port is the only contention.
    let run = |low: &str| {
        let mut toml = format!(
            "[simulation]\nwarmup = 20000\nmeasure = 100000\ndrain_limit = 0\n[topology]\n\
             kind = \"star\"\nports = 4\n[router]\nvcs = 4\n\
             vc_classes = {{ control = 2, real_time = 1, best_effort = 1 }}\n\
             [endpoint]\nmodel = \"hca\"\nqueues = \"per_class\"\n\
             scheduler = {{ kind = \"vl_arbitration\", low = {low} }}\n"
        );
        for (class, dst) in [("real_time", 1), ("best_effort", 2)] {
            toml += &format!(
                "[[traffic]]\nclass = \"{class}\"\nsources = [0]\nload = 0.9\n\
                 pattern = {{ kind = \"fixed\", destination = {dst} }}\n"
            );
        }
        let got = by_traffic(&sim(&toml).run().unwrap());
        assert!(got[0] + got[1] > 0.97, "the port stays busy: {got:?}");
        got[0] / (got[0] + got[1])
    };
    // Equal weights: half each.
    let even = run("[[2, 2], [3, 2]]");
    assert!((even - 0.5).abs() < 0.02, "2 : 2 gives real time {even:.3} of the port");
    // 6 : 2 units (24 : 8 flits a turn) would be 3 : 1; each VL can carry one packet at a
    // time (a wormhole VC is held until its tail's credit returns), so in the few cycles
    // between one real-time packet and the next the turn passes to best effort: a little
    // under 3 : 1.
    let weighted = run("[[2, 6], [3, 2]]");
    assert!((0.68..0.75).contains(&weighted), "6 : 2 gives real time {weighted:.3} of the port");
    // Weights of a whole packet or more: one packet per VL a turn, so even again.
    let whole = run("[[2, 30], [3, 10]]");
    assert!((whole - 0.5).abs() < 0.02, "30 : 10 gives real time {whole:.3} of the port");
}

#[test]
fn message_level_injection_lets_the_packet_being_sent_finish_before_a_preemptor() {
    // Preemptive router with one VC, message-level QoS NIC: best effort is being sent on
    // it when a control message arrives and takes its extra buffer. The packet being sent
    // finishes, then the preemptor goes, then the rest; nothing stalls.
    let router = "kind = \"preemptive\"\nvcs = 1";
    let nic =
        "model = \"hca\"\nqueues = \"per_class\"\ninjection = \"message\"\nscheduler = \"virtual_clock\"";
    let mut s = posted(nic, router);
    s.post_message(NodeId(0), NodeId(1), TrafficClass::BestEffort, 40, 0);
    s.post_message(NodeId(0), NodeId(2), TrafficClass::BestEffort, 39, 0);
    s.advance(20).unwrap();
    s.post_message(NodeId(0), NodeId(3), TrafficClass::Control, 20, 0);
    let t = timeline(s);
    // rows by size: control (20), B (39), A (40)
    assert!(t.iter().all(|r| r.3 != u64::MAX), "all delivered: {t:?}");
    assert!(t[0].2 < t[1].3, "control goes before B is done: {t:?}");
}

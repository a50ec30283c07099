//! Admission and congestion control of document 000 (§4.1, §4.2) in the simulated
//! network: probes, ACKs, NACKs and releases as real control-class packets, the
//! reservation invariant checked as the run goes, and credit-based congestion control.

use qosnet_sim::Simulation;

/// A line of four routers (a 4x1 mesh), one node each, with `traffic` and `endpoint`.
fn line(endpoint: &str, traffic: &str) -> Simulation {
    let toml = format!(
        "[simulation]\nwarmup = 1000\nmeasure = 20000\n\
         [topology]\nkind = \"mesh\"\nk = 4\nn = 1\n\
         [endpoint]\n{endpoint}\n{traffic}"
    );
    Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// A periodic real-time connection from `src` to `dst`: a 60-flit message every
/// `period` cycles (0.6 of a link at period 100).
fn connection(src: u32, dst: u32, period: u32) -> String {
    format!(
        "[[traffic]]\nclass = \"real_time\"\nprocess = {{ kind = \"periodic\", period = {period} }}\n\
         message_flits = 60\npacket_flits = 20\nsources = [{src}]\n\
         pattern = {{ kind = \"fixed\", destination = {dst} }}\n"
    )
}

/// Run `cycles` cycles, checking the reservation invariant every 50.
fn run_checked(s: &mut Simulation, cycles: u64) {
    for _ in 0..cycles / 50 {
        s.advance(50).unwrap();
        s.check_reservations().unwrap_or_else(|e| panic!("cycle {}: {e}", s.now()));
    }
}

/// The routers' output ports with a reservation: (router, port, flits per cycle).
fn reserved_ports(s: &Simulation) -> Vec<(usize, usize, f64)> {
    let t = s.topology();
    let mut v = Vec::new();
    for r in 0..t.routers {
        for p in 0..t.ports {
            let (bw, w) = s.port_reservation(r, p);
            if bw > 0.0 {
                assert_eq!(w[0] + w[1], 255, "a round of weights");
                assert!(w[0] as f64 >= bw * 255.0 - 1e-9, "real time's weight covers its share");
                v.push((r, p, bw));
            }
        }
    }
    v
}

#[test]
fn two_connections_through_one_link_the_second_is_refused_and_released() {
    // Node 0 -> 3 crosses routers 0, 1, 2, 3; node 2 -> 3 shares router 2's link east.
    // 0.6 + 0.6 > 1: one connection is admitted, the other refused at router 2 (its third
    // hop for node 0's), and its release gives back what its probe took before router 2.
    let traffic = connection(0, 3, 100) + &connection(2, 3, 100);
    let mut s = line("admission = { retry_after = 3000 }", &traffic);
    run_checked(&mut s, 20_000);
    let rt = s.admission_stats().unwrap()[1];
    assert_eq!(rt.admitted, 1, "{rt:?}");
    assert!(
        rt.refused >= 2 && rt.releases == rt.refused,
        "every refusal by a router NACKed and released: {rt:?}"
    );
    assert_eq!(rt.probes, rt.admitted + rt.refused, "{rt:?}");
    assert!(rt.mean_setup_cycles() > 0.0);
    // What stays reserved is the admitted connection's path and nothing else.
    let held = reserved_ports(&s);
    assert!(held.iter().all(|&(_, _, bw)| (bw - 0.6).abs() < 1e-9), "{held:?}");
    assert!(held.len() == 2 || held.len() == 4, "2 hops (node 2's) or 4 (node 0's): {held:?}");
}

#[test]
fn the_last_data_packet_tears_the_connection_down_and_the_next_message_probes_again() {
    let mut s = line("admission = { connection_messages = 3 }", &connection(0, 3, 200));
    run_checked(&mut s, 20_000);
    let rt = s.admission_stats().unwrap()[1];
    assert!(rt.admitted >= 10 && rt.teardowns + 1 >= rt.admitted, "{rt:?}");
    assert_eq!(rt.refused, 0, "0.3 of a link always fits: {rt:?}");
    for (_, _, bw) in reserved_ports(&s) {
        assert!((bw - 0.3).abs() < 1e-9);
    }
    // Messages were delivered: data flows between set-ups.
    let (injected, ejected, _) = s.flit_counts();
    assert!(injected > 20 * 60 && ejected > 20 * 60, "{injected} {ejected}");
}

#[test]
fn a_connection_that_gives_up_drops_its_messages_at_the_source() {
    let traffic = connection(0, 3, 100) + &connection(2, 3, 100);
    let mut s = line("admission = { retry_after = 500, attempts = 2 }", &traffic);
    run_checked(&mut s, 10_000);
    let rt = s.admission_stats().unwrap()[1];
    assert_eq!((rt.admitted, rt.gave_up), (1, 1), "{rt:?}");
    assert_eq!(rt.refused, 2);
    assert!(rt.dropped_messages > 50, "{rt:?}");
}

#[test]
fn credits_hold_best_effort_back_and_real_time_drops_and_retries() {
    let be = "[[traffic]]\nload = 0.9\nmessage_flits = 40\npacket_flits = 40\n";
    let rt = connection(0, 3, 100);
    let cfg = "agent = { kind = \"credit\", hca_messages = 4, best_effort = 1 }\nconcurrent_packets = 4";
    let mut s = line(cfg, &(rt + be));
    run_checked(&mut s, 10_000);
    let c = s.congestion_stats().unwrap();
    assert!(c.waited > 0, "{c:?}");
    // C_j = 0.6 x 4 = 2 credits for the real-time connection; it sends 3-packet messages
    // every 100 cycles at under a link: its credits run out only if the network is slow.
    assert!(c.retried <= c.dropped, "{c:?}");
    assert!(s.admission_stats().is_none());
}

#[test]
fn bad_admission_and_credit_settings_name_their_field() {
    let rt = connection(0, 3, 100);
    for (endpoint, field) in [
        ("agent = { kind = \"credit\", hca_messages = 4, best_effort = 3 }", "endpoint.agent.best_effort"),
        ("agent = { kind = \"credit\", hca_messages = 1, best_effort = 1 }", "endpoint.agent.hca_messages"),
        ("agent = { kind = \"credit\", hca_messages = 0, best_effort = 1 }", "endpoint.agent.hca_messages"),
        ("admission = { limit = 1.5 }", "endpoint.admission.limit"),
        ("admission = { effective_factor = -1 }", "endpoint.admission.effective_factor"),
        ("admission = { signal_flits = 0 }", "endpoint.admission.signal_flits"),
        (
            "model = \"hca\"\nqueues = \"round_robin\"\nadmission = { attempts = 3 }",
            "endpoint.admission.attempts",
        ),
    ] {
        let toml = format!("[topology]\nkind = \"mesh\"\nk = 4\nn = 1\n[endpoint]\n{endpoint}\n{rt}");
        let e = Simulation::from_toml(&toml, None).err().unwrap_or_else(|| panic!("accepted: {endpoint}"));
        assert!(e.to_string().contains(field), "{endpoint}: {e}");
    }
    // Probes travel on the control class: it needs a VC.
    let toml = format!(
        "[topology]\nkind = \"mesh\"\nk = 4\nn = 1\n[router]\nvcs = 4\n\
         vc_classes = {{ control = 0, real_time = 2, best_effort = 2 }}\n\
         [endpoint]\nadmission = {{}}\n{rt}[[traffic]]\nload = 0.1\n"
    );
    let e = Simulation::from_toml(&toml, None).err().unwrap();
    assert!(e.to_string().contains("router.vc_classes") && e.to_string().contains("control"), "{e}");
    // With the automatic split, admission control gives control traffic its VC.
    let toml = format!(
        "[topology]\nkind = \"mesh\"\nk = 4\nn = 1\n[router]\nvcs = 4\n\
         [endpoint]\nadmission = {{}}\n{rt}[[traffic]]\nload = 0.1\n"
    );
    Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}"));
    // A real-time source with per-message destinations is no connection.
    let toml = "[topology]\nkind = \"mesh\"\nk = 4\nn = 1\n[endpoint]\nadmission = {}\n\
                [[traffic]]\nclass = \"real_time\"\nload = 0.1\n";
    let e = Simulation::from_toml(toml, None).err().unwrap();
    assert!(e.to_string().contains("traffic[0].pattern"), "{e}");
}

/// A 4x4 mesh of best-effort traffic (document 000 Fig. 3's network) with `agent`.
fn mesh(agent: &str, load: f64) -> Simulation {
    let toml = format!(
        "[simulation]\nwarmup = 2000\nmeasure = 10000\n\
         [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n\
         [router]\nvcs = 4\n\
         [endpoint]\nconcurrent_packets = 4\n{agent}\n\
         [[traffic]]\nload = {load}\nmessage_flits = 40\npacket_flits = 40\n"
    );
    Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

#[test]
fn alo_and_self_tuned_throttle_above_saturation_and_not_at_light_load() {
    for agent in ["agent = { kind = \"alo\" }", "agent = { kind = \"self_tuned\" }"] {
        let mut light = mesh(agent, 0.05);
        light.run().unwrap();
        light.check_invariants().unwrap();
        let l = light.congestion_stats().unwrap();
        let mut heavy = mesh(agent, 0.9);
        heavy.advance(12_000).unwrap();
        heavy.check_invariants().unwrap();
        let h = heavy.congestion_stats().unwrap();
        assert!(h.throttles > 10 * l.throttles.max(1), "{agent}: light {l:?}, heavy {h:?}");
    }
}

#[test]
fn bad_self_tuned_settings_name_their_field() {
    for (agent, field) in [
        ("agent = { kind = \"self_tuned\", increment = 2 }", "endpoint.agent.increment"),
        ("agent = { kind = \"self_tuned\", tune_every = 0 }", "endpoint.agent.tune_every"),
        ("agent = { kind = \"self_tuned\", gather = 0 }", "endpoint.agent.gather"),
        ("agent = { kind = \"alo\", x = 1 }", "x"),
    ] {
        let toml = format!(
            "[topology]\nkind = \"mesh\"\nk = 4\nn = 2\n[endpoint]\n{agent}\n[[traffic]]\nload = 0.1\n"
        );
        let e = Simulation::from_toml(&toml, None).err().unwrap_or_else(|| panic!("accepted: {agent}"));
        assert!(e.to_string().contains(field), "{agent}: {e}");
    }
}

#[test]
fn admission_and_credits_work_through_the_hca_model_too() {
    let traffic = connection(0, 3, 200) + "[[traffic]]\nload = 0.3\nmessage_flits = 40\npacket_flits = 40\n";
    let endpoint = "model = \"hca\"\nqueues = \"per_class\"\nadmission = { connection_messages = 4 }\n\
                    agent = { kind = \"credit\", hca_messages = 8, best_effort = 4 }";
    let mut s = line(endpoint, &traffic);
    run_checked(&mut s, 20_000);
    s.check_invariants().unwrap();
    let rt = s.admission_stats().unwrap()[1];
    assert!(rt.admitted >= 5 && rt.teardowns + 1 >= rt.admitted && rt.refused == 0, "{rt:?}");
    let (injected, ejected, _) = s.flit_counts();
    assert!(ejected > 20 * 60 && injected >= ejected, "{injected} {ejected}");
    for n in 0..4 {
        let (send, _) = s.completions(n);
        assert!(send > 0, "node {n} completed sends");
    }
}

/// The line of `line`, 4 VCs (control VC 0 also the management VL, real time VC 1, best
/// effort VCs 2-3) arbitrated by IBA VL arbitration at the outputs and the HCAs.
fn vl_line(endpoint: &str, traffic: &str) -> Simulation {
    let arb = "{ kind = \"vl_arbitration\", low = [[1, 8], [2, 8], [3, 8]], management_vl = 0 }";
    let toml = format!(
        "[simulation]\nwarmup = 1000\nmeasure = 20000\n\
         [topology]\nkind = \"mesh\"\nk = 4\nn = 1\n\
         [router]\nvcs = 4\nvc_classes = {{ control = 1, real_time = 1, best_effort = 2 }}\n\
         output_scheduler = {arb}\n\
         [endpoint]\nscheduler = {arb}\n{endpoint}\n{traffic}"
    );
    Simulation::from_toml(&toml, None).unwrap_or_else(|e| panic!("{e}\n{toml}"))
}

/// The real-time share of a VL-arbitration table's round (VL 1 against VLs 1-3).
fn rt_share(t: &qosnet_sim::sched::SchedTables) -> f64 {
    let w = |vl: u8| t.vl.low.iter().filter(|e| e.0 == vl).map(|e| e.1 as f64).sum::<f64>();
    w(1) / (w(1) + w(2) + w(3))
}

#[test]
fn each_accept_and_release_rewrites_the_links_arbitration_and_a_release_restores_it_exactly() {
    // A connection (0.3 of a link) torn down every 3 messages and set up again, beside
    // best effort: the links on its path switch between the configured table and one
    // giving real time its share, at the routers' outputs and at node 0's HCA.
    let be = "[[traffic]]\nload = 0.3\nmessage_flits = 40\npacket_flits = 40\n";
    let mut s = vl_line("admission = { connection_messages = 3 }", &(connection(0, 3, 200) + be));
    let base = s.output_tables(0, 1).clone();
    assert!((rt_share(&base) - 1.0 / 3.0).abs() < 1e-9, "configured 1 : 1 : 1");
    let hca_base = s.injection_tables(0).clone();
    let (mut reserved_seen, mut free_seen, mut hca_changed) = (0, 0, 0);
    let t = s.topology().clone();
    for _ in 0..20_000 / 10 {
        s.advance(10).unwrap();
        for r in 0..t.routers {
            for p in 0..t.ports {
                let (bw, _) = s.port_reservation(r, p);
                let tables = s.output_tables(r, p);
                if bw == 0.0 {
                    assert_eq!(tables, &base, "router {r} port {p}: nothing reserved, configured table");
                    free_seen += 1;
                } else {
                    // 0.3 of a 255-unit round: 77 units to VL 1, 178 split over VLs 2-3.
                    assert!((rt_share(tables) - bw).abs() < 0.01, "router {r} port {p}: {bw} {tables:?}");
                    reserved_seen += 1;
                }
            }
        }
        for n in 1..4 {
            assert_eq!(s.injection_tables(n), &hca_base, "node {n} has no connection");
        }
        if s.injection_tables(0) != &hca_base {
            assert!((rt_share(s.injection_tables(0)) - 0.3).abs() < 0.01);
            hca_changed += 1;
        }
    }
    let rt = s.admission_stats().unwrap()[1];
    assert!(rt.admitted >= 10 && rt.teardowns >= 10, "{rt:?}");
    assert!(reserved_seen > 100 && free_seen > 100 && hca_changed > 10);
    s.check_reservations().unwrap();
}

#[test]
fn an_hca_queue_head_whose_connection_is_being_set_up_does_not_hold_the_class_back() {
    // Node 2's connection to node 3 (0.6) is set up first (its probe has one hop to go);
    // node 0's to node 3 (0.6) is then refused at router 2 again and again. Node 0's other
    // connection, to node 1 (0.3), shares its real-time queue: it must flow all the same.
    let traffic = connection(2, 3, 100) + &connection(0, 3, 100) + &connection(0, 1, 200);
    let endpoint = "model = \"hca\"\nqueues = \"per_class\"\nadmission = { retry_after = 3000 }";
    let mut s = line(endpoint, &traffic);
    run_checked(&mut s, 20_000);
    let rt = s.admission_stats().unwrap()[1];
    assert_eq!(rt.admitted, 2, "{rt:?}");
    assert!(rt.refused >= 5, "{rt:?}");
    // Node 1 receives node 0's messages (60 flits every 200 cycles) and one probe.
    let (_, received) = s.completions(1);
    assert!(received > 80, "node 1 received {received} messages");
}

#[test]
fn credits_are_given_to_admitted_connections_only_and_return_at_teardown() {
    // Credit-based congestion control beside admission control (document 000 §4.2 with
    // §4.1): node 0's two connections (0.6 each: C_j = 2 of M = 4) cannot both hold
    // credits, nor both be admitted on its link; they take turns, each torn down after 5
    // messages, and best effort's credits shrink from 3 to M - C_j = 2 while one is
    // admitted.
    // The credit invariants (`check_reservations`) hold throughout.
    let connections = connection(0, 3, 100) + &connection(0, 2, 100);
    let be = "[[traffic]]\nload = 0.9\nmessage_flits = 40\npacket_flits = 40\n";
    let credit = "agent = { kind = \"credit\", hca_messages = 4, best_effort = 3 }";
    let endpoint =
        format!("admission = {{ connection_messages = 5, limit = 0.8, retry_after = 1000 }}\n{credit}");
    let mut s = vl_line(&endpoint, &(connections.clone() + be));
    run_checked(&mut s, 20_000);
    let rt = s.admission_stats().unwrap()[1];
    assert!(rt.admitted >= 5 && rt.teardowns >= 5 && rt.refused > 0, "{rt:?}");
    // Best effort has two VCs, so it never reaches C_b = 3 messages posted: it waits only
    // while an admitted connection's C_j has shrunk its credits to 2.
    let c = s.congestion_stats().unwrap();
    assert!(c.waited > 0, "{c:?}");
    // Without admission both connections hold their C_j from the start: 2 + 2 + 3 > M.
    let e = Simulation::from_toml(
        &format!("[topology]\nkind = \"mesh\"\nk = 4\nn = 1\n[endpoint]\n{credit}\n{connections}"),
        None,
    )
    .err()
    .expect("sum C_i > M accepted");
    assert!(e.to_string().contains("endpoint.agent.best_effort"), "{e}");
}

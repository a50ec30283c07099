//! The agent on the loopback: messages arrive whole and in order, reservations are enforced
//! or refused at the sender and admissions at the receiver, bad frames and unadmitted flows
//! (a rogue sender's too) are refused and counted, failures surface as errors.
//! Rates here are checked only as orderings and shares with wide tolerances; speed belongs
//! to `qosnet net bench` and `qosnet reproduce seed004-real`.

use qosnet_net::{Agent, AgentConfig, Backend, NetError, PortHandle};
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

fn agent(open: bool) -> Agent {
    Agent::start(AgentConfig { open, ..AgentConfig::default() }).unwrap()
}

const WAIT: Option<Duration> = Some(Duration::from_secs(20));

/// `rx` admits `tx`'s flow from its port 0 at priority 0 (the control plane's
/// destination-side admission).
fn admit(rx: &Agent, tx: &Agent) {
    rx.admit(tx.endpoint(), 0, 0, None).unwrap();
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = std::time::Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn messages_of_every_size_arrive_whole_and_in_order() {
    let rx = agent(true);
    let tx = agent(true);
    let sizes = [0usize, 1, 4095, 4096, 4097, 3 * 4096, 100_000, 1 << 20];
    for (i, &n) in sizes.iter().enumerate() {
        let data: Vec<u8> = (0..n).map(|k| (k * 31 + i) as u8).collect();
        tx.send(rx.endpoint(), 1, data).unwrap();
    }
    for (i, &n) in sizes.iter().enumerate() {
        let m = rx.recv(WAIT).unwrap();
        assert_eq!(m.src, tx.endpoint());
        assert_eq!(m.priority, 1);
        let want: Vec<u8> = (0..n).map(|k| (k * 31 + i) as u8).collect();
        assert_eq!(m.data, want, "message {i} of {n} bytes");
    }
    let s = tx.stats();
    assert_eq!(s.flows[0].messages_sent, sizes.len() as u64);
    // All packets but a message's last are full: ceil(n / 4096), and one for an empty message.
    let packets: u64 = sizes.iter().map(|&n| n.div_ceil(4096).max(1) as u64).sum();
    assert_eq!(s.flows[0].packets_sent, packets);
}

#[test]
fn a_closed_agent_refuses_an_unreserved_flow_and_sends_a_reserved_one() {
    let rx = agent(false);
    let tx = agent(false);
    admit(&rx, &tx);
    let err = tx.send(rx.endpoint(), 0, vec![1; 10]).unwrap_err();
    assert!(matches!(err, NetError::NotAdmitted { .. }), "{err}");
    assert_eq!(tx.stats().refused_sends, 1);
    tx.reserve(rx.endpoint(), 0, 1e9, None).unwrap();
    tx.send(rx.endpoint(), 0, vec![1; 10]).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, vec![1; 10]);
    assert!(tx.release(rx.endpoint(), 0).unwrap());
    assert!(matches!(tx.send(rx.endpoint(), 0, vec![1]), Err(NetError::NotAdmitted { .. })));
}

#[test]
fn a_lease_that_runs_out_removes_the_reservation() {
    let rx = agent(false);
    let tx = agent(false);
    admit(&rx, &tx);
    tx.reserve(rx.endpoint(), 0, 1e9, Some(Duration::from_millis(50))).unwrap();
    tx.send(rx.endpoint(), 0, vec![1]).unwrap();
    let t0 = std::time::Instant::now();
    while tx.stats().expired_leases == 0 {
        assert!(t0.elapsed() < Duration::from_secs(20), "the lease never expired");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(matches!(tx.send(rx.endpoint(), 0, vec![1]), Err(NetError::NotAdmitted { .. })));
    assert_eq!(tx.stats().flows[0].reserved_bps, None);
}

#[test]
fn a_reserved_flow_is_held_to_its_rate() {
    // 64 packets at 40 Mb/s: 63 inter-dispatch times of 819.2 µs after the first, >= 51 ms.
    let rx = agent(false);
    let tx = agent(false);
    admit(&rx, &tx);
    tx.reserve(rx.endpoint(), 0, 40e6, None).unwrap();
    let t0 = std::time::Instant::now();
    tx.send(rx.endpoint(), 0, vec![0; 64 * 4096]).unwrap();
    rx.recv(WAIT).unwrap();
    assert!(t0.elapsed() >= Duration::from_micros(63 * 819), "sent faster than reserved: {:?}", t0.elapsed());
}

#[test]
fn reserved_flows_share_by_inverse_idt_when_backlogged() {
    // Flows at 20 and 40 Mb/s (IDTs 1638 and 819 µs for 4 KB), both backlogged from the
    // start. When the faster has sent its 120 packets (~98 ms), the slower has sent about
    // 60 (NDT catches up after any late wake-up, so the count is off by a packet or two,
    // not by the timer's jitter); it still has packets queued.
    let rx1 = agent(false);
    let rx2 = agent(false);
    let tx = agent(false);
    admit(&rx1, &tx);
    admit(&rx2, &tx);
    let (a, b) = (rx1.endpoint().to_string(), rx2.endpoint().to_string());
    tx.reserve(&a, 0, 20e6, None).unwrap();
    tx.reserve(&b, 0, 40e6, None).unwrap();
    // Connect both flows first, so neither starts with a head start.
    tx.send(&a, 0, vec![]).unwrap();
    tx.send(&b, 0, vec![]).unwrap();
    tx.flush(&a, 0, Duration::from_secs(20)).unwrap();
    tx.flush(&b, 0, Duration::from_secs(20)).unwrap();
    let base = tx.stats();
    let sent = |st: &qosnet_net::Stats, d: &str| st.flows.iter().find(|f| f.dst == d).unwrap().packets_sent;
    let (a0, b0) = (sent(&base, &a), sent(&base, &b));
    tx.send(&a, 0, vec![0; 100 * 4096]).unwrap();
    tx.send(&b, 0, vec![0; 120 * 4096]).unwrap();
    tx.flush(&b, 0, Duration::from_secs(20)).unwrap();
    let st = tx.stats();
    let (na, nb) = (sent(&st, &a) - a0, sent(&st, &b) - b0);
    assert_eq!(nb, 120);
    assert!((55..=66).contains(&na), "slow flow sent {na} packets while the fast one sent 120");
}

#[test]
fn malformed_frames_are_refused_and_counted_and_the_agent_goes_on() {
    // Open: every well-formed hello is welcomed, so what is refused here is the frames.
    let rx = agent(true);
    let tx = agent(true);
    let garbage: [&[u8]; 4] = [
        b"GET / HTTP/1.1\r\n\r\n",
        &[0x51, 0x4e, 2, 2, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0],
        &[0u8; 16],
        // A hello whose name is not ip:port (the source is named by its address).
        &[0x51, 0x4e, 2, 1, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, b'x', b':', b'1'],
    ];
    for g in garbage {
        let mut s = TcpStream::connect(rx.endpoint()).unwrap();
        s.write_all(g).unwrap();
        drop(s);
    }
    // A data frame longer than the packet limit, after a valid hello.
    let mut s = TcpStream::connect(rx.endpoint()).unwrap();
    let mut hello = vec![0x51, 0x4e, 2, 1, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0];
    hello.extend_from_slice(b"127.0.0.1:1");
    hello.extend_from_slice(&[0x51, 0x4e, 2, 2, 1, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0]);
    s.write_all(&hello).unwrap();
    drop(s);
    wait_until("5 refused connections", || rx.stats().malformed_frames >= 5);
    tx.send(rx.endpoint(), 0, b"still here".to_vec()).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"still here");
    let st = rx.stats();
    // The HTTP line is refused at its magic; the second frame announces a data packet before
    // any hello; the zeros have a bad magic; the hello's name is no address; the long frame
    // (2 MiB) exceeds the packet limit.
    assert_eq!(st.malformed_frames, 5, "{st:?}");
    assert!(st.last_malformed.is_some());
    assert_eq!(st.refused_flows, 0);
}

#[test]
fn a_vanished_peer_fails_its_flow_and_not_the_others() {
    let gone = agent(true);
    let stays = agent(true);
    let tx = agent(true);
    let gone_ep = gone.endpoint().to_string();
    tx.send(&gone_ep, 0, vec![0; 10]).unwrap();
    gone.recv(WAIT).unwrap();
    gone.shutdown();
    // The peer's close reaches us as a reset or EOF: sends to it fail, sooner or later.
    let t0 = std::time::Instant::now();
    let err = loop {
        match tx.send(&gone_ep, 0, vec![0; 64 << 10]) {
            Err(e) => break e,
            Ok(()) => {
                assert!(t0.elapsed() < Duration::from_secs(30), "sends to a vanished peer never failed");
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    };
    assert!(matches!(err, NetError::FlowFailed { .. }), "{err}");
    tx.send(stays.endpoint(), 0, b"ok".to_vec()).unwrap();
    assert_eq!(stays.recv(WAIT).unwrap().data, b"ok");
}

#[test]
fn the_kernel_back_end_delivers_and_accounts() {
    let rx = agent(false);
    let tx = Agent::start(AgentConfig { backend: Backend::Kernel, ..AgentConfig::default() }).unwrap();
    admit(&rx, &tx);
    assert!(matches!(tx.send(rx.endpoint(), 0, vec![1]), Err(NetError::NotAdmitted { .. })));
    tx.reserve(rx.endpoint(), 0, 80e6, None).unwrap();
    tx.send(rx.endpoint(), 0, vec![7; 50_000]).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, vec![7; 50_000]);
    assert_eq!(tx.stats().flows[0].bytes_sent, 50_000);
}

#[test]
fn bad_configuration_names_the_field() {
    let e = Agent::start(AgentConfig { packet_bytes: 0, ..AgentConfig::default() }).err().unwrap();
    assert_eq!(e.to_string(), "packet_bytes: must be in 1..=1048576, got 0");
    let e = Agent::start(AgentConfig { listen: "nowhere".into(), ..AgentConfig::default() }).err().unwrap();
    assert!(e.to_string().starts_with("listen: cannot bind"), "{e}");
    let a = agent(false);
    assert_eq!(
        a.reserve("127.0.0.1:1", 0, 0.0, None).unwrap_err().to_string(),
        "reservation rate: must be > 0 bit/s, got 0"
    );
    assert_eq!(
        "gpu".parse::<Backend>().unwrap_err().to_string(),
        "backend: must be one of agent, kernel, got \"gpu\""
    );
}

#[test]
fn agents_with_different_packet_sizes_talk() {
    let rx = Agent::start(AgentConfig { packet_bytes: 1024, open: true, ..AgentConfig::default() }).unwrap();
    let tx = Agent::start(AgentConfig { packet_bytes: 65536, open: true, ..AgentConfig::default() }).unwrap();
    tx.send(rx.endpoint(), 0, vec![5; 200_000]).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, vec![5; 200_000]);
    assert_eq!(tx.stats().flows[0].packets_sent, 4);
}

/// A peer that accepts, welcomes the flow and then reads nothing: its flow's socket fills, and the dispatcher
/// goes on with the host's other flows instead of waiting up to `peer_timeout` on it.
#[test]
fn a_peer_that_stops_reading_does_not_stall_the_other_flows() {
    let stuck = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stuck_ep = stuck.local_addr().unwrap().to_string();
    // It welcomes the flow (the receiver's answer to the hello) and then reads nothing.
    let held = std::thread::spawn(move || {
        stuck.accept().map(|(mut s, _)| {
            s.write_all(&[0x51, 0x4e, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]).unwrap();
            s
        })
    });
    let rx = agent(true);
    let tx = Agent::start(AgentConfig {
        open: true,
        send_buffer: 16 << 10,
        peer_timeout: Duration::from_secs(600),
        ..AgentConfig::default()
    })
    .unwrap();
    // Fill the stuck flow (its queue too, so this send waits: in its own thread).
    std::thread::scope(|sc| {
        sc.spawn(|| {
            for _ in 0..64 {
                if tx.send(&stuck_ep, 0, vec![0; 1 << 20]).is_err() {
                    break;
                }
            }
        });
        let t0 = std::time::Instant::now();
        while !tx.stats().flows.iter().any(|f| f.dst == stuck_ep && f.blocked) {
            assert!(t0.elapsed() < Duration::from_secs(20), "the stuck flow never blocked");
            std::thread::sleep(Duration::from_millis(5));
        }
        // The other flow's messages all arrive while the stuck one is still blocked.
        for i in 0..50u8 {
            tx.send(rx.endpoint(), 0, vec![i; 100_000]).unwrap();
        }
        for i in 0..50u8 {
            assert_eq!(rx.recv(WAIT).unwrap().data, vec![i; 100_000]);
        }
        let st = tx.stats();
        let stuck_flow = st.flows.iter().find(|f| f.dst == stuck_ep).unwrap();
        assert!(stuck_flow.blocked && stuck_flow.failed.is_none(), "{stuck_flow:?}");
        assert!(stuck_flow.stalls >= 1);
        // Shutting down ends the stuck send (and the scope's thread with it).
        tx.shutdown();
    });
    drop(held);
}

/// Document 004 §3.4 (c), the destination's side: a closed receiver takes only the flows the
/// control plane admitted there; the sender's `send` fails with the receiver's reason, the
/// refusal is counted, and admitting, revoking and a lease's end take effect.
#[test]
fn a_closed_receiver_refuses_a_flow_it_did_not_admit_and_the_sender_hears_why() {
    let rx = agent(false);
    let tx = agent(false);
    tx.reserve(rx.endpoint(), 0, 1e9, None).unwrap();
    let e = tx.send(rx.endpoint(), 0, b"x".to_vec()).unwrap_err();
    let NetError::Refused { reason, .. } = &e else { panic!("expected a refusal, got {e}") };
    assert!(
        reason.contains(&format!("flow from {} to port 0 (priority 0) is not admitted", tx.endpoint())),
        "{e}"
    );
    let st = rx.stats();
    assert_eq!((st.refused_flows, st.received.len()), (1, 0), "{st:?}");
    assert_eq!(st.last_refused.as_deref(), Some(reason.as_str()));
    // Admitted at another port or priority: still refused.
    rx.admit(tx.endpoint(), 3, 0, None).unwrap();
    rx.admit(tx.endpoint(), 0, 1, None).unwrap();
    assert!(matches!(tx.send(rx.endpoint(), 0, b"x".to_vec()), Err(NetError::Refused { .. })));
    assert_eq!(rx.stats().refused_flows, 2);
    admit(&rx, &tx);
    tx.send(rx.endpoint(), 0, b"admitted".to_vec()).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"admitted");
    assert_eq!(rx.stats().admitted.len(), 3);
    // Revoked: the flow's connection closes, and its sender's flow fails.
    assert!(rx.revoke(tx.endpoint(), 0, 0).unwrap());
    assert!(!rx.revoke(tx.endpoint(), 0, 0).unwrap());
    wait_until("the revoked flow to fail", || tx.send(rx.endpoint(), 0, vec![0; 64 << 10]).is_err());
    // An admission's lease that runs out ends it like a revocation: a new sender is refused.
    let late = agent(false);
    late.reserve(rx.endpoint(), 0, 1e9, None).unwrap();
    rx.admit(late.endpoint(), 0, 0, Some(Duration::from_millis(50))).unwrap();
    wait_until("the admission's lease to run out", || rx.stats().expired_leases >= 1);
    assert!(matches!(late.send(rx.endpoint(), 0, b"x".to_vec()), Err(NetError::Refused { .. })));
}

/// A sender that skips its agent and connects to the receiver directly, with a well-formed
/// hello: refused and counted, whatever source it claims (the source is named by the
/// connection's address), and nothing it sends is delivered.
#[test]
fn a_rogue_sender_that_skips_its_agent_is_refused_and_counted() {
    use std::io::Read;
    let rx = agent(false);
    // Another host's agent is admitted; the rogue claims to be it.
    rx.admit("10.9.9.9:7400", 0, 0, None).unwrap();
    for claimed in ["127.0.0.1:1", "10.9.9.9:7400"] {
        let mut s = TcpStream::connect(rx.endpoint()).unwrap();
        let mut frames = vec![0x51, 0x4e, 2, 1, 0, 0, 0, 0, claimed.len() as u8, 0, 0, 0, 0, 0, 0, 0];
        frames.extend_from_slice(claimed.as_bytes());
        // A data packet straight after the hello, without waiting for the answer.
        frames.extend_from_slice(&[0x51, 0x4e, 2, 2, 1, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0]);
        frames.extend_from_slice(b"rogue");
        s.write_all(&frames).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        assert_eq!(&answer[..4], &[0x51, 0x4e, 2, 4], "a refusal frame");
        let reason = String::from_utf8_lossy(&answer[16..]);
        assert!(reason.contains("from 127.0.0.1:") && reason.contains("not admitted"), "{reason}");
    }
    let st = rx.stats();
    assert_eq!((st.refused_flows, st.malformed_frames), (2, 0), "{st:?}");
    assert!(st.received.is_empty(), "{st:?}");
    assert!(matches!(rx.recv(Some(Duration::from_millis(50))), Err(NetError::Timeout)));
}

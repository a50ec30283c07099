//! The agent on the loopback: messages arrive whole and in order, reservations are enforced
//! or refused at the sender and admissions at the receiver, bad frames and unadmitted flows
//! (a rogue sender's too) are refused and counted, failures surface as errors.
//! Rates here are checked only as orderings and shares with wide tolerances; speed belongs
//! to `qosnet net bench` and `qosnet reproduce seed004-real`.

use qosnet_net::auth::{self, ClusterKey, Nonce, MAC_BYTES, NONCE_BYTES};
use qosnet_net::frame::{self, Header, Kind, FLAG_LAST, HEADER_BYTES};
use qosnet_net::{Agent, AgentConfig, Backend, NetError, PortHandle};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

mod common;

fn agent(open: bool) -> Agent {
    Agent::start(AgentConfig { open, ..AgentConfig::default() }).unwrap()
}

const WAIT: Option<Duration> = Some(Duration::from_secs(20));

/// A frame as it goes on the wire.
fn frame(kind: Kind, flags: u8, message: u32, payload: &[u8]) -> Vec<u8> {
    let mut h = [0u8; HEADER_BYTES];
    Header { kind, flags, priority: 0, length: payload.len() as u32, message }.encode(&mut h);
    [&h[..], payload].concat()
}

/// A one-packet message `data` (message id 0).
fn data(d: &[u8]) -> Vec<u8> {
    frame(Kind::Data, FLAG_LAST, 0, d)
}

/// A hello from `claimed` to port 0 with the proof `tag` for `nonce`.
fn hello(claimed: &str, nonce: &Nonce, tag: &[u8; MAC_BYTES]) -> Vec<u8> {
    frame(Kind::Hello, 0, 0, &[&nonce[..], &tag[..], claimed.as_bytes()].concat())
}

/// A hello as a process without the cluster key makes it: no proof.
fn unproven_hello(claimed: &str) -> Vec<u8> {
    hello(claimed, &[7; NONCE_BYTES], &[0; MAC_BYTES])
}

/// A raw connection to `agent` and the challenge it opens with.
fn challenged(agent: &str) -> (TcpStream, Nonce) {
    let mut s = TcpStream::connect(agent).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let f = frame::read_frame(&mut s, 1 << 16).unwrap().unwrap().unwrap();
    assert_eq!(f.header.kind, Kind::Challenge);
    (s, f.payload.try_into().expect("a 32-byte challenge"))
}

/// An agent of the test cluster (it holds the cluster key).
fn keyed(open: bool) -> Agent {
    Agent::start(AgentConfig { open, key_file: Some(common::key_file()), ..AgentConfig::default() }).unwrap()
}

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

/// The agent's lease is the control plane's time left, replaced at every call: a later,
/// shorter lease ends the reservation sooner (the agent keeps no end of its own), and a
/// later call without one holds it until released.
#[test]
fn a_new_lease_replaces_the_old_end() {
    let rx = agent(false);
    let tx = agent(false);
    admit(&rx, &tx);
    tx.reserve(rx.endpoint(), 0, 1e9, Some(Duration::from_secs(600))).unwrap();
    let t0 = std::time::Instant::now();
    tx.reserve(rx.endpoint(), 0, 1e9, Some(Duration::from_millis(50))).unwrap();
    while tx.stats().expired_leases == 0 {
        assert!(t0.elapsed() < Duration::from_secs(20), "the shorter lease never ended");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(t0.elapsed() >= Duration::from_millis(50));
    assert_eq!(tx.stats().flows[0].reserved_bps, None);
    tx.reserve(rx.endpoint(), 0, 1e9, Some(Duration::from_millis(50))).unwrap();
    tx.reserve(rx.endpoint(), 0, 1e9, None).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(tx.stats().expired_leases, 1);
    assert_eq!(tx.stats().flows[0].reserved_bps, Some(1e9));
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
    let garbage: [&[u8]; 6] = [
        b"GET / HTTP/1.1\r\n\r\n",
        &data(b"123456789"),
        &[0u8; 16],
        // A hello whose name is not ip:port (the source is named by its address).
        &unproven_hello("x:1"),
        // A hello too short for its nonce and proof.
        &frame(Kind::Hello, 0, 0, b"127.0.0.1:1"),
        // The previous version's hello.
        &[0x51, 0x4e, 2, 1, 0, 0, 0, 0, 11, 0, 0, 0, 0, 0, 0, 0],
    ];
    // A data frame longer than the packet limit, after a valid hello.
    let mut long = unproven_hello("127.0.0.1:1");
    long.extend_from_slice(&[0x51, 0x4e, 3, 2, 1, 0, 0, 0, 0, 0, 0x20, 0, 0, 0, 0, 0]);
    // Each after reading the agent's challenge, and read until the agent closes (closing
    // with its frames unread would reset the connection before it read the garbage).
    for g in garbage.into_iter().chain([&long[..]]) {
        let (mut s, _) = challenged(rx.endpoint());
        s.write_all(g).unwrap();
        let _ = s.read_to_end(&mut Vec::new());
    }
    wait_until("7 refused connections", || rx.stats().malformed_frames >= 7);
    tx.send(rx.endpoint(), 0, b"still here".to_vec()).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"still here");
    let st = rx.stats();
    // The HTTP line is refused at its magic; the second frame announces a data packet before
    // any hello; the zeros have a bad magic; the hello's name is no address; the short hello
    // has no room for its proof; the old hello has version 2; the long frame (2 MiB) exceeds
    // the packet limit.
    assert_eq!(st.malformed_frames, 7, "{st:?}");
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
    let e =
        Agent::start(AgentConfig { hello_timeout: Duration::ZERO, ..AgentConfig::default() }).err().unwrap();
    assert_eq!(e.to_string(), "hello_timeout: must be > 0 s, got 0");
    let missing = Some(std::env::temp_dir().join("qosnet-no-such-key"));
    let e = Agent::start(AgentConfig { key_file: missing, ..AgentConfig::default() }).err().unwrap();
    assert!(e.to_string().starts_with("key_file: cannot read"), "{e}");
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
    // It challenges, welcomes the flow (the receiver's answer to the hello) and then reads
    // nothing.
    let held = std::thread::spawn(move || {
        stuck.accept().map(|(mut s, _)| {
            s.write_all(&frame(Kind::Challenge, 0, 0, &[1; NONCE_BYTES])).unwrap();
            s.write_all(&frame(Kind::Welcome, 0, 0, &[])).unwrap();
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
    let rx = agent(false);
    // Another host's agent is admitted; the rogue claims to be it.
    rx.admit("10.9.9.9:7400", 0, 0, None).unwrap();
    for claimed in ["127.0.0.1:1", "10.9.9.9:7400"] {
        let (mut s, _) = challenged(rx.endpoint());
        // A data packet straight after the hello, without waiting for the answer.
        s.write_all(&[unproven_hello(claimed), data(b"rogue")].concat()).unwrap();
        let mut answer = Vec::new();
        let _ = s.read_to_end(&mut answer);
        assert_eq!(&answer[..4], &[0x51, 0x4e, 3, 4], "a refusal frame");
        let reason = String::from_utf8_lossy(&answer[16..]);
        assert!(reason.contains("from 127.0.0.1:") && reason.contains("not admitted"), "{reason}");
    }
    let st = rx.stats();
    assert_eq!((st.refused_flows, st.malformed_frames), (2, 0), "{st:?}");
    assert!(st.received.is_empty(), "{st:?}");
    assert!(matches!(rx.recv(Some(Duration::from_millis(50))), Err(NetError::Timeout)));
}

/// Peer agents prove the cluster key at every hello (`auth`): a process on an admitted host
/// that connects to a peer agent directly, without the key, is refused and counted whatever
/// it claims; with the key it is welcomed, and the welcome proves the key back; a hello
/// recorded from one connection and replayed on another (another challenge) is refused.
#[test]
fn only_holders_of_the_cluster_key_reach_a_keyed_agent() {
    // Open, so that only the key decides here (admission is the test above).
    let rx = keyed(true);
    let key = ClusterKey::from_file(&common::key_file()).unwrap();
    let refusal = |s: &mut TcpStream| {
        let f = frame::read_frame(s, 1 << 16).unwrap().unwrap().unwrap();
        assert_eq!(f.header.kind, Kind::Refuse);
        String::from_utf8(f.payload).unwrap()
    };
    // Without the key.
    let (mut s, _) = challenged(rx.endpoint());
    s.write_all(&[unproven_hello("127.0.0.1:1"), data(b"rogue")].concat()).unwrap();
    let reason = refusal(&mut s);
    assert!(reason.contains("does not prove the cluster key"), "{reason}");
    // With it.
    let (mut s, challenge) = challenged(rx.endpoint());
    let nonce = auth::nonce().unwrap();
    let proven = hello("127.0.0.1:1", &nonce, &key.hello_mac(&challenge, &nonce, 0, 0, "127.0.0.1:1"));
    s.write_all(&proven).unwrap();
    let welcome = frame::read_frame(&mut s, 1 << 16).unwrap().unwrap().unwrap();
    assert_eq!(welcome.header.kind, Kind::Welcome);
    assert!(key.check_welcome(&challenge, &nonce, &welcome.payload), "the welcome proves the key");
    s.write_all(&data(b"proven")).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"proven");
    // The same hello, replayed.
    let (mut s, _) = challenged(rx.endpoint());
    s.write_all(&[proven, data(b"replayed")].concat()).unwrap();
    assert!(refusal(&mut s).contains("does not prove the cluster key"));
    let st = rx.stats();
    assert_eq!((st.unauthenticated_hellos, st.malformed_frames), (2, 0), "{st:?}");
    assert_eq!(st.received.iter().map(|r| r.messages).sum::<u64>(), 1, "only the proven message");
    // Agents: one without the key is refused (its send hears why); one with it gets in; and
    // a keyed sender refuses a receiver that cannot prove the key back.
    let keyless = agent(true);
    let e = keyless.send(rx.endpoint(), 0, b"x".to_vec()).unwrap_err();
    assert!(matches!(&e, NetError::Refused { reason, .. } if reason.contains("cluster key")), "{e}");
    let tx = keyed(true);
    tx.send(rx.endpoint(), 0, b"agent".to_vec()).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"agent");
    let e = tx.send(keyless.endpoint(), 0, b"x".to_vec()).unwrap_err().to_string();
    assert!(e.contains("does not prove the cluster key"), "{e}");
    assert_eq!(rx.stats().unauthenticated_hellos, 3);
}

/// A peer that accepts the connection and never answers (a dead host's kernel backlog, a
/// hung agent) fails the flow's first send after `hello_timeout`, not the 10 s
/// `peer_timeout`; and while one send waits on it, the host's other flows go on.
#[test]
fn a_silent_peer_fails_the_first_send_within_the_hello_timeout_and_wedges_nothing() {
    // Never accepted, never answered: the kernel completes the connection and nothing more.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_ep = silent.local_addr().unwrap().to_string();
    let rx = agent(true);
    let quick = Agent::start(AgentConfig {
        open: true,
        hello_timeout: Duration::from_millis(300),
        ..AgentConfig::default()
    })
    .unwrap();
    let t0 = Instant::now();
    let e = quick.send(&silent_ep, 0, b"x".to_vec()).unwrap_err().to_string();
    assert!(t0.elapsed() < Duration::from_secs(5), "waited {:?}: not the hello timeout", t0.elapsed());
    assert!(e.contains("did not send its challenge within 300ms (hello_timeout)"), "{e}");
    let tx = Agent::start(AgentConfig {
        open: true,
        hello_timeout: Duration::from_secs(4),
        ..AgentConfig::default()
    })
    .unwrap();
    std::thread::scope(|sc| {
        let waiting = sc.spawn(|| tx.send(&silent_ep, 1, b"x".to_vec()));
        for i in 0..20u8 {
            tx.send(rx.endpoint(), 0, vec![i; 10_000]).unwrap();
        }
        for i in 0..20u8 {
            assert_eq!(rx.recv(WAIT).unwrap().data, vec![i; 10_000]);
        }
        assert!(!waiting.is_finished(), "the other flow went on while this send waited");
        assert!(waiting.join().unwrap().is_err());
    });
    drop(silent);
}

/// An open agent that knows its link (100 Mb/s): it dispatches no faster in all.
fn linked(open: bool) -> Agent {
    Agent::start(AgentConfig { open, link_bps: Some(100e6), ..AgentConfig::default() }).unwrap()
}

/// Packets each destination's flow has sent so far.
fn packets(tx: &Agent, dsts: &[&str]) -> Vec<u64> {
    let st = tx.stats();
    dsts.iter().map(|d| st.flows.iter().find(|f| f.dst == *d).map_or(0, |f| f.packets_sent)).collect()
}

/// Keep `dst`'s flow backlogged from a thread until `stop`.
fn backlog(tx: &Agent, dst: &str, stop: &std::sync::atomic::AtomicBool) {
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        if tx.send(dst, 0, vec![0; 64 * 1024]).is_err() {
            return;
        }
    }
}

/// Each flow's payload rate (bits/s) over `window`, all flows backlogged (the agent's own
/// account: with the agent owning the link, what it dispatches is what the link carries).
fn rates_over(tx: &Agent, dsts: &[&str], window: Duration) -> Vec<f64> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for d in dsts {
            let stop = &stop;
            sc.spawn(move || backlog(tx, d, stop));
        }
        std::thread::sleep(Duration::from_millis(200));
        let (p0, t0) = (packets(tx, dsts), Instant::now());
        std::thread::sleep(window);
        let (p1, t1) = (packets(tx, dsts), Instant::now());
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let secs = (t1 - t0).as_secs_f64();
        p0.iter().zip(&p1).map(|(a, b)| (b - a) as f64 * 4096.0 * 8.0 / secs).collect()
    })
}

/// Document 004 §3.3 with the link: a 60 Mb/s reservation beside an unreserved flow of the
/// same host keeps its rate, and the unreserved flow gets only the rest: 100 Mb/s carries
/// 93.5 Mb/s of payload in 4 KB packets, so at most 33.5. On a loaded machine the
/// dispatcher may lose link time to late wake-ups; then the reserved flow still comes
/// first (it gets 60, or everything the agent sent if that was less), never more than its
/// rate, and the two never more than the link.
#[test]
fn the_reserved_flow_keeps_its_rate_beside_an_unreserved_one() {
    let (rx1, rx2) = (agent(true), agent(true));
    let tx = linked(true);
    let (a, b) = (rx1.endpoint().to_string(), rx2.endpoint().to_string());
    tx.reserve(&a, 0, 60e6, None).unwrap();
    let r = rates_over(&tx, &[&a, &b], Duration::from_millis(1500));
    let payload = 100e6 * tx.stats().payload_fraction;
    let (res, unres) = (r[0] / 1e6, r[1] / 1e6);
    assert!(res >= 0.95 * (res + unres).min(60.0), "reserved {res:.2} Mb/s beside {unres:.2}");
    assert!(res <= 60.0 * 1.03, "reserved {res:.2} Mb/s, more than its 60");
    assert!(res + unres < payload / 1e6 * 1.02, "{:.2} Mb/s in all", res + unres);
    assert!(unres > 0.0, "the unreserved flow got nothing");
}

/// Reservations summing to 1.2x the link (80 and 40 Mb/s, IDTs 1:2): shares by 1/IDT,
/// 2:1, as the simulator's NIC gives, and no more than the link in all.
#[test]
fn over_subscribed_reservations_share_the_link_by_inverse_idt() {
    let (rx1, rx2) = (agent(true), agent(true));
    let tx = linked(false);
    for rx in [&rx1, &rx2] {
        rx.admit(tx.endpoint(), 0, 0, None).unwrap();
    }
    let (a, b) = (rx1.endpoint().to_string(), rx2.endpoint().to_string());
    tx.reserve(&a, 0, 80e6, None).unwrap();
    tx.reserve(&b, 0, 40e6, None).unwrap();
    let r = rates_over(&tx, &[&a, &b], Duration::from_millis(1500));
    let share = r[0] / (r[0] + r[1]);
    assert!((share - 2.0 / 3.0).abs() < 0.02, "share {share:.3}, expected 0.667 ({r:?})");
    let payload = 100e6 * tx.stats().payload_fraction;
    assert!(r[0] + r[1] < payload * 1.02, "{:.2} Mb/s in all", (r[0] + r[1]) / 1e6);
}

/// Cost in bytes: at 1 Mb/s a 4 KB packet's IDT is 32.8 ms, but a 4-byte message costs
/// 32 µs of it, so 50 of them go in well under one IDT instead of 1.6 s.
#[test]
fn a_small_message_on_a_reserved_flow_is_not_held_for_a_whole_idt() {
    let rx = agent(true);
    let tx = agent(false);
    tx.reserve(rx.endpoint(), 0, 1e6, None).unwrap();
    tx.send(rx.endpoint(), 0, vec![1; 4]).unwrap();
    rx.recv(WAIT).unwrap();
    let t0 = Instant::now();
    for _ in 0..50 {
        tx.send(rx.endpoint(), 0, vec![1; 4]).unwrap();
    }
    for _ in 0..50 {
        rx.recv(WAIT).unwrap();
    }
    assert!(t0.elapsed() < Duration::from_millis(400), "50 4-byte messages took {:?}", t0.elapsed());
}

/// A sender that closes while a packet is on its way (its agent shut down mid-stream) is
/// not a malformed frame at the receiver.
#[test]
fn a_sender_that_closes_is_not_counted_as_malformed() {
    let rx = agent(true);
    for _ in 0..5 {
        let tx = agent(true);
        tx.send(rx.endpoint(), 0, vec![0; 1 << 20]).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        drop(tx);
    }
    let tx = agent(true);
    tx.send(rx.endpoint(), 0, vec![0; 10]).unwrap();
    tx.flush(rx.endpoint(), 0, Duration::from_secs(20)).unwrap();
    drop(tx);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(rx.stats().malformed_frames, 0, "{:?}", rx.stats().last_malformed);
}

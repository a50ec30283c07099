//! The host daemon: applications reach the network only through it, their flows are
//! scheduled together, a client that dies or talks nonsense does not wedge it.

use qosnet_net::local::{self, Writer};
use qosnet_net::{Agent, AgentConfig, Daemon, DaemonConfig, LocalAgent, NetError, PortHandle};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod common;

const WAIT: Option<Duration> = Some(Duration::from_secs(20));

fn socket_path() -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    std::env::temp_dir().join(format!(
        "qosnet-test-{}-{}.sock",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

/// An agent of the test cluster (it holds the cluster key).
fn keyed() -> AgentConfig {
    AgentConfig { key_file: Some(common::key_file()), ..AgentConfig::default() }
}

fn daemon(open: bool) -> Daemon {
    let cfg = DaemonConfig { socket: socket_path(), ..DaemonConfig::default() };
    Daemon::start(AgentConfig { open, ..keyed() }, cfg).unwrap()
}

/// A receiver that takes every flow (these tests are about the sending host's daemon).
fn open_rx() -> Agent {
    Agent::start(AgentConfig { open: true, ..keyed() }).unwrap()
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn applications_send_and_receive_through_their_ports() {
    let d = daemon(true);
    let a = LocalAgent::connect(d.socket(), None).unwrap();
    let b = LocalAgent::connect(d.socket(), Some(9)).unwrap();
    assert_eq!(b.endpoint(), format!("{}/9", d.agent().endpoint()));
    assert_ne!(a.port(), b.port());
    for n in [0usize, 5, 4096, 300_000] {
        a.send(b.endpoint(), 2, vec![7; n]).unwrap();
        let m = b.recv(WAIT).unwrap();
        assert_eq!((m.src.as_str(), m.priority, m.data.len()), (a.endpoint(), 2, n));
    }
    assert!(matches!(b.recv(Some(Duration::from_millis(20))), Err(NetError::Timeout)));
    // A port is one application's.
    assert!(LocalAgent::connect(d.socket(), Some(9)).is_err());
    let s = a.stats().unwrap();
    assert_eq!(s.flows[0].port, a.port());
    assert_eq!(s.flows[0].messages_sent, 4);
}

#[test]
fn a_closed_daemon_refuses_flows_the_control_plane_did_not_admit() {
    let d = daemon(false);
    let rx = Agent::start(keyed()).unwrap();
    let app = LocalAgent::connect(d.socket(), Some(0)).unwrap();
    let e = app.send(rx.endpoint(), 0, b"x".to_vec()).unwrap_err();
    assert!(matches!(e, NetError::NotAdmitted { .. }), "{e}");
    // The control plane's host-level reservation names port 0 ...
    d.agent().reserve(rx.endpoint(), 0, 100e6, None).unwrap();
    // ... and the closed receiver refuses the flow until the control plane admits it there
    // too: the application hears the receiver's reason through the daemon.
    let e = app.send(rx.endpoint(), 0, b"x".to_vec()).unwrap_err();
    match &e {
        NetError::Refused { reason, .. } => assert!(reason.contains("is not admitted at"), "{e}"),
        _ => panic!("expected the receiver's refusal, got {e}"),
    }
    assert_eq!(rx.stats().refused_flows, 1);
    rx.admit(d.agent().endpoint(), 0, 0, None).unwrap();
    app.send(rx.endpoint(), 0, b"admitted".to_vec()).unwrap();
    assert_eq!(rx.recv(WAIT).unwrap().data, b"admitted");
}

/// Two applications' reserved flows (20 and 40 Mb/s) leave the host through the daemon's
/// one scheduler: while the faster sends 120 packets the slower sends about 60, as two
/// processes' flows shared document 004's NIC (Table 1's least-NDT order).
#[test]
fn two_applications_share_the_daemons_schedule_by_inverse_idt() {
    let d = daemon(false);
    let rx = open_rx();
    let slow = LocalAgent::connect(d.socket(), None).unwrap();
    let fast = LocalAgent::connect(d.socket(), None).unwrap();
    slow.reserve(rx.endpoint(), 0, 20e6, None).unwrap();
    fast.reserve(rx.endpoint(), 0, 40e6, None).unwrap();
    for app in [&slow, &fast] {
        app.send(rx.endpoint(), 0, vec![]).unwrap();
        app.flush(rx.endpoint(), 0, Duration::from_secs(20)).unwrap();
    }
    let packets =
        |port| d.agent().stats().flows.iter().find(|f| f.port == port).map(|f| f.packets_sent).unwrap();
    std::thread::scope(|sc| {
        sc.spawn(|| slow.send(rx.endpoint(), 0, vec![0; 100 * 4096]).unwrap());
        sc.spawn(|| fast.send(rx.endpoint(), 0, vec![0; 120 * 4096]).unwrap());
    });
    // Counted from when both messages are in the daemon (sends are pipelined: each reaches
    // the daemon's queue a little after its `send` returns).
    let queued = |port| d.agent().stats().flows.iter().any(|f| f.port == port && f.queued_bytes > 0);
    wait_until("both messages to be queued", || queued(slow.port()) && queued(fast.port()));
    let (s0, f0) = (packets(slow.port()), packets(fast.port()));
    fast.flush(rx.endpoint(), 0, Duration::from_secs(20)).unwrap();
    let (ns, nf) = (packets(slow.port()) - s0, packets(fast.port()) - f0);
    assert!(nf >= 90, "the fast application's message was mostly sent before both were queued ({nf})");
    let share = ns as f64 / nf as f64;
    assert!(
        (0.44..=0.56).contains(&share),
        "the slow application sent {ns} packets while the fast one sent {nf} (1:2 expected)"
    );
}

/// Pipelined sends (`local::SEND_PIPELINED`) get no reply when they succeed: after an open
/// and 100 of them, the next reply on the connection is the stats request's, and the 100
/// messages arrived in order.
#[test]
fn pipelined_sends_are_not_answered_and_arrive_in_order() {
    let d = daemon(true);
    let rx = open_rx();
    let mut s = UnixStream::connect(d.socket()).unwrap();
    let mut out = Vec::new();
    Writer::new(local::OPEN).u32(local::ANY_PORT).send(&mut out, &[]).unwrap();
    for i in 0..100u32 {
        Writer::new(local::SEND_PIPELINED).u8(1).str(rx.endpoint()).send(&mut out, &i.to_le_bytes()).unwrap();
    }
    Writer::new(local::STATS).send(&mut out, &[]).unwrap();
    s.write_all(&out).unwrap();
    let mut r = std::io::BufReader::new(s);
    assert_eq!(local::read_frame(&mut r, 1 << 20).unwrap().unwrap().0, 0, "open's reply");
    let (status, body) = local::read_frame(&mut r, 1 << 20).unwrap().unwrap();
    assert_eq!(status, 0);
    let stats: serde_json::Value = serde_json::from_slice(&body).expect("the next reply is the stats'");
    assert!(stats["flows"].is_array());
    for i in 0..100u32 {
        assert_eq!(rx.recv(WAIT).unwrap().data, i.to_le_bytes());
    }
}

/// A pipelined send's failure comes back marked `ASYNC`, naming its flow, ahead of the next
/// reply; the client reports it on that flow's next send or flush, and other flows go on.
#[test]
fn a_pipelined_sends_failure_is_reported_on_the_flows_next_call() {
    let d = daemon(false);
    let rx = open_rx();
    let app = LocalAgent::connect(d.socket(), None).unwrap();
    let other = format!("{}/3", rx.endpoint());
    app.reserve(rx.endpoint(), 0, 100e6, None).unwrap();
    app.reserve(&other, 0, 100e6, None).unwrap();
    for dst in [rx.endpoint(), other.as_str()] {
        app.send(dst, 0, b"first".to_vec()).unwrap();
    }
    // The control plane withdraws one flow's reservation: the daemon refuses its next send,
    // which the application posted without waiting.
    assert!(app.release(rx.endpoint(), 0).unwrap());
    app.send(rx.endpoint(), 0, b"late".to_vec()).unwrap();
    app.send(&other, 0, b"second".to_vec()).unwrap();
    let e = app.flush(rx.endpoint(), 0, Duration::from_secs(20)).unwrap_err();
    assert!(matches!(&e, NetError::NotAdmitted { dst, .. } if dst == rx.endpoint()), "{e}");
    app.flush(&other, 0, Duration::from_secs(20)).unwrap();
    // Reported once; the flow's next send waits for the daemon's verdict again.
    let e = app.send(rx.endpoint(), 0, b"again".to_vec()).unwrap_err();
    assert!(matches!(e, NetError::NotAdmitted { .. }), "{e}");
    assert_eq!(d.agent().stats().refused_sends, 2);
}

#[test]
fn a_client_that_dies_mid_request_does_not_wedge_the_daemon() {
    let d = daemon(true);
    let rx = open_rx();
    // A client opens a port, starts a 1 MB send and dies after half of it.
    let mut raw = UnixStream::connect(d.socket()).unwrap();
    Writer::new(local::OPEN).u32(local::ANY_PORT).send(&mut raw, &[]).unwrap();
    let (status, _) = local::read_frame(&mut raw, 1 << 20).unwrap().unwrap();
    assert_eq!(status, 0);
    let mut half = Writer::new(local::SEND).u8(0).str(rx.endpoint()).0;
    let len = (half.len() - 4 + (1 << 20)) as u32;
    half[0..4].copy_from_slice(&len.to_le_bytes());
    half.extend_from_slice(&vec![1; 1 << 19]);
    raw.write_all(&half).unwrap();
    drop(raw);
    // A client with a slow reserved flow and a long queue dies too.
    let queued = LocalAgent::connect(d.socket(), None).unwrap();
    queued.reserve(rx.endpoint(), 0, 1e6, None).unwrap();
    queued.send(rx.endpoint(), 0, vec![2; 1 << 20]).unwrap();
    let gone = queued.port();
    drop(queued);
    wait_until("the dead clients' ports to close", || {
        !d.stats().ports.contains(&gone) && d.stats().clients == 0
    });
    let flow = d.agent().stats().flows.into_iter().find(|f| f.port == gone).unwrap();
    assert_eq!(flow.queued_bytes, 0, "a dead client's queue is dropped");
    let app = LocalAgent::connect(d.socket(), None).unwrap();
    app.send(rx.endpoint(), 0, b"still here".to_vec()).unwrap();
    let m = rx.recv(WAIT).unwrap();
    assert_eq!(m.data, b"still here");
}

#[test]
fn malformed_local_requests_are_refused_counted_and_bounded() {
    let d = daemon(true);
    let exchange = |bytes: &[u8]| {
        let mut s = UnixStream::connect(d.socket()).unwrap();
        s.write_all(bytes).unwrap();
        let mut out = Vec::new();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let _ = s.read_to_end(&mut out);
        out
    };
    // A 4 GB request is refused at its length, before anything is allocated for it.
    let reply = exchange(&[0xff, 0xff, 0xff, 0xff, local::SEND]);
    assert_eq!(reply[4], local::E_MALFORMED);
    assert!(String::from_utf8_lossy(&reply[5..]).starts_with("request length: must be in 1..="));
    // Sending before opening a port, and an unknown op: refused, the connection closed.
    let mut send_first = Vec::new();
    Writer::new(local::SEND).u8(0).str("127.0.0.1:1").send(&mut send_first, b"x").unwrap();
    assert_eq!(exchange(&send_first)[4], local::E_MALFORMED);
    let mut unknown = Vec::new();
    Writer::new(local::OPEN).u32(local::ANY_PORT).send(&mut unknown, &[]).unwrap();
    Writer::new(77).send(&mut unknown, &[]).unwrap();
    Writer::new(local::RECV).u8(1).send(&mut unknown, &[]).unwrap();
    let mut s = UnixStream::connect(d.socket()).unwrap();
    s.write_all(&unknown).unwrap();
    let mut r = std::io::BufReader::new(s);
    assert_eq!(local::read_frame(&mut r, 1 << 20).unwrap().unwrap().0, 0);
    let (kind, msg) = local::read_frame(&mut r, 1 << 20).unwrap().unwrap();
    assert_eq!(
        (kind, String::from_utf8_lossy(&msg).as_ref()),
        (local::E_MALFORMED, "op: must be one of 1..=9, got 77")
    );
    // A body of the wrong length for its op: refused, and the connection goes on.
    assert_eq!(local::read_frame(&mut r, 1 << 20).unwrap().unwrap().0, local::E_MALFORMED);
    drop(r);
    wait_until("the refusals to be counted", || d.stats().malformed_requests >= 4);
    let app = LocalAgent::connect(d.socket(), None).unwrap();
    app.send(app.endpoint(), 0, b"fine".to_vec()).unwrap();
    assert_eq!(app.recv(WAIT).unwrap().data, b"fine");
}

#[test]
fn the_client_limit_refuses_connections_past_it() {
    let cfg = DaemonConfig { socket: socket_path(), max_clients_per_uid: 2, ..DaemonConfig::default() };
    let d = Daemon::start(keyed(), cfg).unwrap();
    // One application holds two connections (requests and receives): a second application
    // is refused at its first.
    let _a = LocalAgent::connect(d.socket(), None).unwrap();
    let e = LocalAgent::connect(d.socket(), None).err().unwrap();
    assert!(e.to_string().contains("too many clients"), "{e}");
    assert!(d.stats().refused_clients >= 1);
}

#[test]
fn a_live_socket_is_not_taken_over_and_bad_settings_name_the_field() {
    let d = daemon(false);
    let again = DaemonConfig { socket: d.socket().to_path_buf(), ..DaemonConfig::default() };
    let e = Daemon::start(keyed(), again).err().unwrap();
    assert!(e.to_string().contains("in use by a running daemon"), "{e}");
    let bad = DaemonConfig { socket: socket_path(), max_clients: 0, ..DaemonConfig::default() };
    assert_eq!(Daemon::start(keyed(), bad).err().unwrap().to_string(), "max_clients: must be >= 1, got 0");
}

/// A closed daemon without the cluster key would take any process's connection from an
/// admitted host: it refuses to start, naming the setting; an open one needs none.
#[test]
fn a_closed_daemon_needs_the_cluster_key() {
    let cfg = DaemonConfig { socket: socket_path(), ..DaemonConfig::default() };
    let e = Daemon::start(AgentConfig::default(), cfg.clone()).err().unwrap().to_string();
    assert!(e.starts_with("key_file: a closed daemon needs the cluster key file"), "{e}");
    assert!(!cfg.socket.exists(), "no socket file is left behind");
    Daemon::start(AgentConfig { open: true, ..AgentConfig::default() }, cfg).unwrap();
}

#[test]
fn a_file_that_is_not_a_socket_is_never_replaced() {
    let path = socket_path();
    std::fs::write(&path, b"precious").unwrap();
    let cfg = DaemonConfig { socket: path.clone(), ..DaemonConfig::default() };
    let e = Daemon::start(keyed(), cfg).err().unwrap();
    assert!(e.to_string().ends_with("exists and is not a socket"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    std::fs::remove_file(path).unwrap();
}

#[test]
fn closing_a_client_ends_a_receive_blocked_in_another_thread() {
    let d = daemon(true);
    let app = LocalAgent::connect(d.socket(), None).unwrap();
    std::thread::scope(|sc| {
        let r = sc.spawn(|| app.recv(None));
        std::thread::sleep(Duration::from_millis(50));
        app.close();
        assert!(r.join().unwrap().is_err());
    });
}

/// One application, one handle, two flows at 20 and 60 Mb/s sent from two threads: the
/// slow flow's queue fills (4 MiB) and its sends wait, but only on its own connection, so
/// the fast flow keeps its rate and the two share 1:3 by their reservations.
#[test]
fn a_full_flow_does_not_hold_up_another_flow_of_the_same_application() {
    let d = daemon(false);
    let (rx1, rx2) = (open_rx(), open_rx());
    let app = LocalAgent::connect(d.socket(), None).unwrap();
    let (slow, fast) = (rx1.endpoint().to_string(), rx2.endpoint().to_string());
    app.reserve(&slow, 0, 20e6, None).unwrap();
    app.reserve(&fast, 0, 60e6, None).unwrap();
    let sent = |dst: &str| d.agent().stats().flows.iter().find(|f| f.dst == dst).map_or(0, |f| f.bytes_sent);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for dst in [&slow, &fast] {
            let (app, stop) = (&app, &stop);
            sc.spawn(move || {
                // Until stopped, or the handle is closed under a waiting send.
                while !stop.load(Ordering::Relaxed) && app.send(dst, 0, vec![0; 64 * 1024]).is_ok() {}
            });
        }
        // Past the slow flow's queue filling (4 MiB at 20 Mb/s would take 1.7 s to send,
        // but the application fills it in milliseconds).
        wait_until("the slow flow's queue to fill", || {
            d.agent().stats().flows.iter().any(|f| f.dst == slow && f.queued_bytes >= 3 << 20)
        });
        let (s0, f0, t0) = (sent(&slow), sent(&fast), Instant::now());
        std::thread::sleep(Duration::from_millis(1500));
        let (s1, f1, secs) = (sent(&slow), sent(&fast), t0.elapsed().as_secs_f64());
        stop.store(true, Ordering::Relaxed);
        app.close();
        let (rs, rf) = ((s1 - s0) as f64 * 8.0 / secs, (f1 - f0) as f64 * 8.0 / secs);
        let share = rs / (rs + rf);
        assert!((share - 0.25).abs() < 0.02, "shares {share:.3} : {:.3}, expected 0.25 : 0.75", 1.0 - share);
        assert!(rf > 0.95 * 60e6, "the fast flow got {:.1} Mb/s of its 60", rf / 1e6);
    });
}

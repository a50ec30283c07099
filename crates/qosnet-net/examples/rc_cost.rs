//! The cost of rate control per message, in a form the machine's load does not decide:
//! run under `valgrind --tool=callgrind` it counts the instructions both agents of a fixed
//! ping-pong or stream execute, with the flow reserved (document 004 §3.3's IDT/NDT path on
//! every packet) or unreserved (the same agents, open); natively it reports the process's
//! CPU time (`getrusage`), which waiting does not inflate.
//!
//! `cargo run --release -p qosnet-net --example rc_cost -- MODE TEST SIZE COUNT`
//! - MODE: `rc` (reserved above the loopback's capacity, 100 Gb/s, so every packet takes
//!   the rate-control path and none is held back) or `none` (unreserved, open agents);
//! - TEST: `pingpong` (COUNT round trips of SIZE bytes, the far agent echoing), `stream`
//!   (COUNT messages of SIZE bytes to a counting sink), or `scheduler`: the dispatch
//!   discipline alone (`Dispatch`, no sockets, no threads), COUNT messages of SIZE bytes cut
//!   into 4 KB packets, so that its instructions per message are exact;
//! - prints one JSON line: wall and CPU seconds, CPU microseconds per message.
//!
//! Instructions per message: the difference between two COUNTs' totals divided by the
//! difference of the COUNTs (start-up and shut-down cancel); `rc_cost.sh` next to this
//! file runs the matrix.

use qosnet_net::{Agent, AgentConfig, PortHandle};
use std::time::{Duration, Instant};

/// "Above the path's capacity" on the loopback (as `qosnet net bench`).
const PEAK_BPS: f64 = 100e9;

fn cpu_seconds() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage fills a valid local struct.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: rc_cost rc|none pingpong|stream|scheduler SIZE COUNT";
    let [mode, test, size, count] = &args[..] else { panic!("{usage}") };
    let reserved = match mode.as_str() {
        "rc" => true,
        "none" => false,
        _ => panic!("MODE: must be rc or none, got {mode:?}"),
    };
    let pingpong = match test.as_str() {
        "pingpong" => true,
        "stream" | "scheduler" => false,
        _ => panic!("TEST: must be pingpong, stream or scheduler, got {test:?}"),
    };
    let size: usize = size.parse().expect("SIZE: a byte count");
    let count: u64 = count.parse().expect("COUNT: a message count");
    if test == "scheduler" {
        scheduler(reserved, size, count);
        return;
    }
    let rx =
        Agent::start(AgentConfig { open: true, echo: pingpong, deliver: pingpong, ..AgentConfig::default() })
            .unwrap();
    let tx = Agent::start(AgentConfig { open: true, ..AgentConfig::default() }).unwrap();
    if reserved {
        tx.reserve(rx.endpoint(), 0, PEAK_BPS, None).unwrap();
        if pingpong {
            rx.reserve_from(0, tx.endpoint(), 0, PEAK_BPS, None).unwrap();
        }
    }
    let wait = Some(Duration::from_secs(60));
    // Connect both ways before counting.
    tx.send(rx.endpoint(), 0, vec![0; size]).unwrap();
    if pingpong {
        tx.recv(wait).unwrap();
    }
    let received = |a: &Agent| a.stats().received.iter().map(|r| r.messages).sum::<u64>();
    let (c0, t0) = (cpu_seconds(), Instant::now());
    for _ in 0..count {
        tx.send(rx.endpoint(), 0, vec![0; size]).unwrap();
        if pingpong {
            tx.recv(wait).unwrap();
        }
    }
    if !pingpong {
        tx.flush(rx.endpoint(), 0, Duration::from_secs(60)).unwrap();
        while received(&rx) < count + 1 {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let (cpu, wall) = (cpu_seconds() - c0, t0.elapsed().as_secs_f64());
    println!(
        "{{\"mode\": \"{mode}\", \"test\": \"{test}\", \"size\": {size}, \"count\": {count}, \
         \"wall_s\": {wall:.6}, \"cpu_s\": {cpu:.6}, \"cpu_us_per_message\": {:.3}}}",
        cpu * 1e6 / count as f64
    );
}

/// The agent's dispatch decisions alone, as the dispatcher makes them for one flow: a
/// message becomes sendable, then pick and dispatch each of its packets.
fn scheduler(reserved: bool, size: usize, count: u64) {
    use qosnet_net::dispatch::Dispatch;
    let packets = size.div_ceil(4096).max(1);
    let idt = qosnet_rate::idt_ticks(4096.0 * 8.0, PEAK_BPS, 1e9);
    let mut d = Dispatch::default();
    let rc = reserved.then(|| d.reserve(0, idt));
    let mut now: u64 = 0;
    let mut sent = 0u64;
    for _ in 0..count {
        d.became_sendable(0, rc, now);
        for k in 0..packets {
            // Each packet takes longer than its IDT on the wire (the loopback is slower than
            // the reservation): the reserved flow is always due, as in the measured runs.
            now += 2 * idt;
            let pick = std::hint::black_box(d.pick(now)).expect("the flow is due");
            let bytes = (size - k * 4096).min(4096) as u64;
            d.dispatched(pick, k + 1 < packets, bytes, 4096);
            sent += 1;
        }
    }
    println!("{{\"mode\": \"{}\", \"test\": \"scheduler\", \"size\": {size}, \"count\": {count}, \"packets\": {sent}}}",
             if reserved { "rc" } else { "none" });
}

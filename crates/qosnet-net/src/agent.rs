//! The per-host rate-control agent: the role of document 004's NIC firmware (§3.2: trusted,
//! every send of the host goes through it).
//!
//! Threads, not an async runtime: a host has a handful of flows, and the algorithm wants one
//! sequential dispatcher that decides every packet (the MCP's SDMA/SEND state machines,
//! §4.1) and blocks when the network does not take more (that blocking *is* the document's
//! "at most once every T"). Plain blocking sockets keep that decision exact and cheap; a
//! reader thread per incoming connection reassembles messages; a timer is the dispatcher's
//! condition-variable timeout. No dependency beyond std and libc.
//!
//! - `agent` back end: one dispatcher thread writes every packet of every flow, in the order
//!   `Dispatch` gives (least NDT among the due reserved flows, else the unregulated ring).
//! - `kernel` back end: one writer thread per flow writes as fast as the socket takes, and the
//!   socket's `SO_MAX_PACING_RATE` is the reservation (see `pacing`).
//!
//! A flow is (source endpoint, destination endpoint, priority) (§4.2); the source endpoint is
//! this agent's, so a flow is keyed here by destination and priority, and carried on its own
//! TCP connection (in order per flow, like GM). A flow may send only when it is reserved
//! (`reserve`, from the control plane), unless the agent is configured `open`, when
//! unreserved flows are unregulated best effort.

use crate::dispatch::{Dispatch, Pick};
use crate::frame::{self, FrameError, Header, Kind, Reassembly, FLAG_LAST, HEADER_BYTES, MAX_PACKET_BYTES};
use crate::pacing;
use qosnet_rate::{idt_ticks, Ticks};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How a host enforces its reservations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// Document 004's algorithm in this process (portable, exact).
    Agent,
    /// Linux's socket pacing (`SO_MAX_PACING_RATE`, with the fq qdisc).
    Kernel,
}

impl std::str::FromStr for Backend {
    type Err = NetError;
    fn from_str(s: &str) -> Result<Backend, NetError> {
        match s {
            "agent" => Ok(Backend::Agent),
            "kernel" => Ok(Backend::Kernel),
            _ => Err(NetError::Config(format!("backend: must be one of agent, kernel, got {s:?}"))),
        }
    }
}

/// An agent's configuration (physical units: bytes, bits per second, seconds).
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// Address to listen on (host:port; port 0 picks one).
    pub listen: String,
    pub backend: Backend,
    /// Packet size: all packets of a message but its last are this long (004 §5.2: 4 KB).
    pub packet_bytes: u32,
    /// Unreserved flows may send (unregulated); otherwise they are refused.
    pub open: bool,
    /// Longest message a peer may send us.
    pub max_message_bytes: u64,
    /// Bytes queued per flow before `send` waits.
    pub queue_bytes: u64,
    /// A peer that takes no data for this long fails its flow (a vanished peer must not
    /// wedge the other flows for longer).
    pub peer_timeout: Duration,
    /// Send every message received back to its sender (ping-pong's far end).
    pub echo: bool,
    /// Keep received messages for `recv`; otherwise count and drop them (a sink).
    pub deliver: bool,
    /// Socket send buffer of each flow (bytes; 0 leaves the kernel's autotuning).
    pub send_buffer: u32,
}

impl Default for AgentConfig {
    fn default() -> AgentConfig {
        AgentConfig {
            listen: "127.0.0.1:0".into(),
            backend: Backend::Agent,
            packet_bytes: 4096,
            open: false,
            max_message_bytes: 1 << 30,
            queue_bytes: 4 << 20,
            peer_timeout: Duration::from_secs(10),
            echo: false,
            deliver: true,
            send_buffer: 0,
        }
    }
}

impl AgentConfig {
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |m: String| Err(NetError::Config(m));
        if self.packet_bytes == 0 || self.packet_bytes > MAX_PACKET_BYTES {
            return bad(format!(
                "packet_bytes: must be in 1..={MAX_PACKET_BYTES}, got {}",
                self.packet_bytes
            ));
        }
        if self.queue_bytes < self.packet_bytes as u64 {
            return bad(format!(
                "queue_bytes: must be >= packet_bytes ({}), got {}",
                self.packet_bytes, self.queue_bytes
            ));
        }
        if self.max_message_bytes == 0 {
            return bad("max_message_bytes: must be >= 1, got 0".into());
        }
        if self.peer_timeout.is_zero() {
            return bad("peer_timeout: must be > 0 s, got 0".into());
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("{0}")]
    Config(String),
    #[error(
        "flow to {dst} (priority {priority}) is not admitted: no reservation, and the agent is not open"
    )]
    NotAdmitted { dst: String, priority: u8 },
    #[error("flow to {dst} (priority {priority}) failed: {reason}")]
    FlowFailed { dst: String, priority: u8, reason: String },
    #[error("cannot reach {dst}: {source}")]
    Connect { dst: String, source: io::Error },
    #[error("reservation rate: must be > 0 bit/s, got {0}")]
    Rate(f64),
    #[error("the agent has shut down")]
    Shutdown,
    #[error("timed out")]
    Timeout,
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A message received whole.
#[derive(Debug)]
pub struct Message {
    /// The sender's endpoint (its agent's address).
    pub src: String,
    pub priority: u8,
    pub data: Vec<u8>,
}

/// What one outgoing flow has done.
#[derive(Clone, Debug)]
pub struct FlowStats {
    pub dst: String,
    pub priority: u8,
    /// Reserved rate (bits/s), if reserved.
    pub reserved_bps: Option<f64>,
    /// The reservation's inter-dispatch time, ns (the agent back end's IDT).
    pub idt_ns: Option<u64>,
    pub bytes_sent: u64,
    pub packets_sent: u64,
    pub messages_sent: u64,
    pub queued_bytes: u64,
    pub failed: Option<String>,
}

/// What arrived from one (source, priority).
#[derive(Clone, Debug)]
pub struct ReceivedStats {
    pub src: String,
    pub priority: u8,
    pub bytes: u64,
    pub messages: u64,
}

#[derive(Clone, Debug)]
pub struct Stats {
    pub endpoint: String,
    pub flows: Vec<FlowStats>,
    pub received: Vec<ReceivedStats>,
    /// Frames refused from peers (each closes its connection).
    pub malformed_frames: u64,
    /// The last refusal's reason.
    pub last_malformed: Option<String>,
    /// Sends refused because their flow was not admitted.
    pub refused_sends: u64,
    /// Reservations removed by their lease's expiry.
    pub expired_leases: u64,
}

struct OutMessage {
    data: Vec<u8>,
    offset: usize,
    id: u32,
}

struct Reservation {
    bits_per_second: f64,
    idt: Ticks,
    /// Rate-control index in `Dispatch` (agent back end).
    rc: Option<u32>,
    expires: Option<Instant>,
}

struct Flow {
    dst: String,
    priority: u8,
    sock: Option<Arc<TcpStream>>,
    queue: VecDeque<OutMessage>,
    queued_bytes: u64,
    next_message: u32,
    reservation: Option<Reservation>,
    failed: Option<String>,
    bytes_sent: u64,
    packets_sent: u64,
    messages_sent: u64,
    /// Kernel back end: the flow's writer thread is running.
    writer: bool,
}

#[derive(Default)]
struct State {
    flows: Vec<Flow>,
    index: HashMap<(String, u8), u32>,
    dispatch: Dispatch,
    inbox: VecDeque<Message>,
    received: HashMap<(String, u8), (u64, u64)>,
    peers: Vec<Arc<TcpStream>>,
    shutdown: bool,
    refused_sends: u64,
    expired_leases: u64,
    last_malformed: Option<String>,
}

struct Shared {
    cfg: AgentConfig,
    endpoint: String,
    start: Instant,
    state: Mutex<State>,
    /// The dispatcher (and kernel writers) have work.
    work: Condvar,
    /// A flow's queue shrank, or a message arrived.
    progress: Condvar,
    malformed: AtomicU64,
    stopping: AtomicBool,
    /// Kernel back end: the flows' writer threads.
    writers: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    fn now(&self) -> Ticks {
        self.start.elapsed().as_nanos() as Ticks
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking thread must not take the agent down with a poisoned lock.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A running agent. Dropping it shuts it down.
pub struct Agent {
    shared: Arc<Shared>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

impl Agent {
    pub fn start(cfg: AgentConfig) -> Result<Agent, NetError> {
        cfg.validate()?;
        let listener = TcpListener::bind(&cfg.listen)
            .map_err(|e| NetError::Config(format!("listen: cannot bind {:?}: {e}", cfg.listen)))?;
        let endpoint = listener.local_addr()?.to_string();
        let shared = Arc::new(Shared {
            cfg,
            endpoint,
            start: Instant::now(),
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            progress: Condvar::new(),
            malformed: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            writers: Mutex::new(Vec::new()),
        });
        let mut threads = Vec::new();
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("qosnet-accept".into())
                .spawn(move || accept_loop(s, listener))?,
        );
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new().name("qosnet-dispatch".into()).spawn(move || dispatch_loop(s))?,
        );
        Ok(Agent { shared, threads: Mutex::new(threads) })
    }

    /// This agent's endpoint name (the address peers reach it at).
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    pub fn config(&self) -> &AgentConfig {
        &self.shared.cfg
    }

    /// Install (or change) the reservation of flow (this endpoint, `dst`, `priority`):
    /// `bits_per_second` becomes the IDT of one packet (004 §3.4: idt = T · Bpeak / Breq);
    /// with a `lease` the reservation is removed when it runs out unless renewed.
    pub fn reserve(
        &self,
        dst: &str,
        priority: u8,
        bits_per_second: f64,
        lease: Option<Duration>,
    ) -> Result<(), NetError> {
        if !(bits_per_second.is_finite() && bits_per_second > 0.0) {
            return Err(NetError::Rate(bits_per_second));
        }
        let idt = idt_ticks(self.shared.cfg.packet_bytes as u64, bits_per_second, 1e9);
        let expires = lease.map(|l| Instant::now() + l);
        let mut st = self.shared.lock();
        let slot = flow_slot(&mut st, dst, priority);
        let now = self.shared.now();
        let st = &mut *st;
        let flow = &mut st.flows[slot as usize];
        match (&mut flow.reservation, self.shared.cfg.backend) {
            (Some(r), Backend::Agent) if r.rc.is_some() => {
                st.dispatch.set_idt(r.rc.unwrap(), idt);
                r.bits_per_second = bits_per_second;
                r.idt = idt;
                r.expires = expires;
            }
            (_, Backend::Agent) => {
                let rc = st.dispatch.reserve(slot, idt);
                if !flow.queue.is_empty() {
                    // It was queued unregulated: it moves to rate control.
                    st.dispatch.unqueue(slot);
                    st.dispatch.became_sendable(slot, Some(rc), now);
                }
                flow.reservation = Some(Reservation { bits_per_second, idt, rc: Some(rc), expires });
            }
            (_, Backend::Kernel) => {
                flow.reservation = Some(Reservation { bits_per_second, idt, rc: None, expires });
                if let Some(sock) = &flow.sock {
                    pacing::set_max_pacing_rate(sock, (bits_per_second / 8.0).round() as u64)?;
                }
            }
        }
        self.shared.work.notify_all();
        Ok(())
    }

    /// Remove flow (`dst`, `priority`)'s reservation; true if it had one. Its queued messages
    /// go on unregulated if the agent is open, else they are dropped and the flow refused.
    pub fn release(&self, dst: &str, priority: u8) -> bool {
        let mut st = self.shared.lock();
        let Some(&slot) = st.index.get(&(dst.to_string(), priority)) else { return false };
        let had = remove_reservation(&self.shared, &mut st, slot);
        self.shared.work.notify_all();
        self.shared.progress.notify_all();
        had
    }

    /// Queue a message on flow (`dst`, `priority`); waits while the flow has `queue_bytes`
    /// queued. Errors if the flow is not admitted or has failed.
    pub fn send(&self, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
        send(&self.shared, dst, priority, data)
    }

    /// Wait until flow (`dst`, `priority`) has handed all its queued bytes to the network.
    pub fn flush(&self, dst: &str, priority: u8, timeout: Duration) -> Result<(), NetError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        let Some(&slot) = st.index.get(&(dst.to_string(), priority)) else { return Ok(()) };
        loop {
            let flow = &st.flows[slot as usize];
            if let Some(reason) = &flow.failed {
                return Err(NetError::FlowFailed { dst: dst.into(), priority, reason: reason.clone() });
            }
            if flow.queue.is_empty() {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(NetError::Timeout);
            }
            st = self.shared.progress.wait_timeout(st, left).unwrap_or_else(|p| p.into_inner()).0;
        }
    }

    /// The next message received whole, waiting up to `timeout` (None: wait forever).
    pub fn recv(&self, timeout: Option<Duration>) -> Result<Message, NetError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.shared.lock();
        loop {
            if let Some(m) = st.inbox.pop_front() {
                return Ok(m);
            }
            if st.shutdown {
                return Err(NetError::Shutdown);
            }
            st = match deadline {
                None => self.shared.progress.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(NetError::Timeout);
                    }
                    self.shared.progress.wait_timeout(st, left).unwrap_or_else(|p| p.into_inner()).0
                }
            };
        }
    }

    pub fn stats(&self) -> Stats {
        let st = self.shared.lock();
        let mut received: Vec<ReceivedStats> = st
            .received
            .iter()
            .map(|((src, priority), &(bytes, messages))| ReceivedStats {
                src: src.clone(),
                priority: *priority,
                bytes,
                messages,
            })
            .collect();
        received.sort_by(|a, b| (&a.src, a.priority).cmp(&(&b.src, b.priority)));
        Stats {
            endpoint: self.shared.endpoint.clone(),
            flows: st
                .flows
                .iter()
                .map(|f| FlowStats {
                    dst: f.dst.clone(),
                    priority: f.priority,
                    reserved_bps: f.reservation.as_ref().map(|r| r.bits_per_second),
                    idt_ns: f.reservation.as_ref().map(|r| r.idt),
                    bytes_sent: f.bytes_sent,
                    packets_sent: f.packets_sent,
                    messages_sent: f.messages_sent,
                    queued_bytes: f.queued_bytes,
                    failed: f.failed.clone(),
                })
                .collect(),
            received,
            malformed_frames: self.shared.malformed.load(Ordering::Relaxed),
            last_malformed: st.last_malformed.clone(),
            refused_sends: st.refused_sends,
            expired_leases: st.expired_leases,
        }
    }

    /// Stop every thread and close every connection.
    pub fn shutdown(&self) {
        if self.shared.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let mut st = self.shared.lock();
            st.shutdown = true;
            for f in &st.flows {
                if let Some(s) = &f.sock {
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
            for p in &st.peers {
                let _ = p.shutdown(Shutdown::Both);
            }
        }
        self.shared.work.notify_all();
        self.shared.progress.notify_all();
        // Wake the acceptor.
        let _ = TcpStream::connect_timeout(&self.wake_addr(), Duration::from_millis(200));
        let threads: Vec<_> = self.threads.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        for h in threads {
            let _ = h.join();
        }
        let writers: Vec<_> =
            self.shared.writers.lock().unwrap_or_else(|p| p.into_inner()).drain(..).collect();
        for h in writers {
            let _ = h.join();
        }
    }

    fn wake_addr(&self) -> SocketAddr {
        let mut a: SocketAddr = self.shared.endpoint.parse().expect("the bound address parses");
        if a.ip().is_unspecified() {
            a.set_ip(if a.is_ipv4() { [127, 0, 0, 1].into() } else { std::net::Ipv6Addr::LOCALHOST.into() });
        }
        a
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn flow_slot(st: &mut State, dst: &str, priority: u8) -> u32 {
    if let Some(&s) = st.index.get(&(dst.to_string(), priority)) {
        return s;
    }
    st.flows.push(Flow {
        dst: dst.into(),
        priority,
        sock: None,
        queue: VecDeque::new(),
        queued_bytes: 0,
        next_message: 0,
        reservation: None,
        failed: None,
        bytes_sent: 0,
        packets_sent: 0,
        messages_sent: 0,
        writer: false,
    });
    let s = (st.flows.len() - 1) as u32;
    st.index.insert((dst.to_string(), priority), s);
    s
}

fn connect(shared: &Shared, dst: &str, priority: u8) -> Result<TcpStream, NetError> {
    let err = |source: io::Error| NetError::Connect { dst: dst.into(), source };
    let addr = dst
        .to_socket_addrs()
        .map_err(err)?
        .next()
        .ok_or_else(|| err(io::Error::new(io::ErrorKind::NotFound, "no address")))?;
    let sock = TcpStream::connect_timeout(&addr, shared.cfg.peer_timeout).map_err(err)?;
    sock.set_nodelay(true).map_err(err)?;
    sock.set_write_timeout(Some(shared.cfg.peer_timeout)).map_err(err)?;
    if shared.cfg.send_buffer > 0 {
        pacing::set_send_buffer(&sock, shared.cfg.send_buffer).map_err(err)?;
    }
    let name = shared.endpoint.as_bytes();
    let mut hello = [0u8; HEADER_BYTES];
    Header { kind: Kind::Hello, flags: 0, priority, length: name.len() as u32, message: 0 }
        .encode(&mut hello);
    (&sock).write_all(&hello).and_then(|_| (&sock).write_all(name)).map_err(err)?;
    Ok(sock)
}

/// Queue a message on flow (`dst`, `priority`); waits while the flow has `queue_bytes`
/// queued. Errors if the flow is not admitted or has failed.
fn send(shared: &Arc<Shared>, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
    let mut st = shared.lock();
    let slot = flow_slot(&mut st, dst, priority);
    loop {
        if st.shutdown {
            return Err(NetError::Shutdown);
        }
        let open = shared.cfg.open;
        let flow = &st.flows[slot as usize];
        if let Some(reason) = &flow.failed {
            return Err(NetError::FlowFailed { dst: dst.into(), priority, reason: reason.clone() });
        }
        if flow.reservation.is_none() && !open {
            st.refused_sends += 1;
            return Err(NetError::NotAdmitted { dst: dst.into(), priority });
        }
        if flow.queued_bytes < shared.cfg.queue_bytes {
            break;
        }
        st = shared.progress.wait(st).unwrap_or_else(|p| p.into_inner());
    }
    if st.flows[slot as usize].sock.is_none() {
        // Connect outside the lock: a slow peer must not hold up the other flows.
        drop(st);
        let sock = connect(shared, dst, priority)?;
        st = shared.lock();
        let flow = &mut st.flows[slot as usize];
        if flow.sock.is_none() {
            if let Some(r) = flow.reservation.as_ref().filter(|_| shared.cfg.backend == Backend::Kernel) {
                pacing::set_max_pacing_rate(&sock, (r.bits_per_second / 8.0).round() as u64)?;
            }
            flow.sock = Some(Arc::new(sock));
        }
    }
    let now = shared.now();
    let st = &mut *st;
    let flow = &mut st.flows[slot as usize];
    let id = flow.next_message;
    flow.next_message = flow.next_message.wrapping_add(1);
    flow.queued_bytes += data.len() as u64;
    flow.queue.push_back(OutMessage { data, offset: 0, id });
    if flow.queue.len() == 1 {
        match shared.cfg.backend {
            Backend::Agent => {
                let rc = flow.reservation.as_ref().and_then(|r| r.rc);
                st.dispatch.became_sendable(slot, rc, now);
            }
            Backend::Kernel if !flow.writer => {
                flow.writer = true;
                let s = Arc::clone(shared);
                let h = std::thread::Builder::new()
                    .name("qosnet-writer".into())
                    .spawn(move || writer_loop(s, slot))?;
                shared.writers.lock().unwrap_or_else(|p| p.into_inner()).push(h);
            }
            Backend::Kernel => {}
        }
    }
    shared.work.notify_all();
    Ok(())
}

fn remove_reservation(shared: &Shared, st: &mut State, slot: u32) -> bool {
    let now = shared.now();
    let flow = &mut st.flows[slot as usize];
    let Some(r) = flow.reservation.take() else { return false };
    if shared.cfg.backend == Backend::Kernel {
        if let Some(sock) = &flow.sock {
            let _ = pacing::set_max_pacing_rate(sock, pacing::UNLIMITED);
        }
    }
    // Its rate-control entry, if queued, is now stale and is dropped by the dispatcher.
    if !flow.queue.is_empty() {
        if shared.cfg.open {
            if r.rc.is_some() {
                st.dispatch.became_sendable(slot, None, now);
            }
        } else {
            flow.queue.clear();
            flow.queued_bytes = 0;
        }
    }
    true
}

/// Take the next packet of `flow` into `buf` (header and payload); true if the flow has more.
fn take_packet(flow: &mut Flow, packet_bytes: usize, buf: &mut Vec<u8>) -> bool {
    let m = flow.queue.front_mut().expect("a picked flow has a message");
    let len = (m.data.len() - m.offset).min(packet_bytes);
    let last = m.offset + len == m.data.len();
    let mut h = [0u8; HEADER_BYTES];
    Header {
        kind: Kind::Data,
        flags: if last { FLAG_LAST } else { 0 },
        priority: flow.priority,
        length: len as u32,
        message: m.id,
    }
    .encode(&mut h);
    buf.clear();
    buf.extend_from_slice(&h);
    buf.extend_from_slice(&m.data[m.offset..m.offset + len]);
    m.offset += len;
    flow.bytes_sent += len as u64;
    flow.packets_sent += 1;
    flow.queued_bytes -= len as u64;
    if last {
        flow.queue.pop_front();
        flow.messages_sent += 1;
    }
    !flow.queue.is_empty()
}

fn fail_flow(st: &mut State, slot: u32, reason: String) {
    let flow = &mut st.flows[slot as usize];
    if flow.failed.is_none() {
        flow.failed = Some(reason);
    }
    flow.queue.clear();
    flow.queued_bytes = 0;
    if let Some(s) = &flow.sock {
        let _ = s.shutdown(Shutdown::Both);
    }
}

/// Remove reservations whose lease ran out.
fn expire_leases(shared: &Shared, st: &mut State) -> Option<Instant> {
    let now = Instant::now();
    let mut next: Option<Instant> = None;
    for slot in 0..st.flows.len() {
        if let Some(e) = st.flows[slot].reservation.as_ref().and_then(|r| r.expires) {
            if e <= now {
                remove_reservation(shared, st, slot as u32);
                st.expired_leases += 1;
                shared.progress.notify_all();
            } else {
                next = Some(next.map_or(e, |n| n.min(e)));
            }
        }
    }
    next
}

/// Waits shorter than this are spun rather than slept (ns).
const SPIN_NS: Ticks = 50_000;

/// The agent back end's dispatcher: every packet of the host, in `Dispatch`'s order.
fn dispatch_loop(shared: Arc<Shared>) {
    let packet = shared.cfg.packet_bytes as usize;
    let mut buf = Vec::with_capacity(HEADER_BYTES + packet);
    let mut st = shared.lock();
    loop {
        if st.shutdown {
            return;
        }
        let next_lease = expire_leases(&shared, &mut st);
        let now = shared.now();
        let Some(pick) = st.dispatch.pick(now) else {
            // Sleep until the least NDT, a lease's end, or new work. A wait shorter than the
            // kernel's timer slack (~50 µs) is spun instead: a sleep would overshoot it, and
            // although NDT catches up afterwards (the long-run rate holds), the message in
            // flight would be late by the overshoot.
            let mut wait = Duration::from_millis(100);
            if let Some(ndt) = st.dispatch.next_due() {
                let left = ndt.saturating_sub(now);
                if left < SPIN_NS {
                    drop(st);
                    while shared.now() < ndt {
                        std::hint::spin_loop();
                    }
                    st = shared.lock();
                    continue;
                }
                wait = wait.min(Duration::from_nanos(left));
            }
            if let Some(l) = next_lease {
                wait = wait.min(l.saturating_duration_since(Instant::now()));
            }
            st = shared.work.wait_timeout(st, wait).unwrap_or_else(|p| p.into_inner()).0;
            continue;
        };
        let slot = pick.slot();
        let st_ref = &mut *st;
        let flow = &mut st_ref.flows[slot as usize];
        let current = match pick {
            Pick::Reserved { rc, .. } => flow.reservation.as_ref().and_then(|r| r.rc) == Some(rc),
            Pick::Unregulated { .. } => flow.reservation.is_none(),
        };
        if !current || flow.queue.is_empty() {
            // A stale entry (reservation removed or replaced, flow failed): drop it.
            st_ref.dispatch.dispatched(pick, false);
            continue;
        }
        let more = take_packet(flow, packet, &mut buf);
        st_ref.dispatch.dispatched(pick, more);
        let sock = flow.sock.clone().expect("a flow with messages is connected");
        drop(st);
        shared.progress.notify_all();
        let res = (&*sock).write_all(&buf);
        st = shared.lock();
        if let Err(e) = res {
            fail_flow(&mut st, slot, format!("send: {e}"));
            shared.progress.notify_all();
        }
    }
}

/// The kernel back end's writer for one flow: as fast as the (paced) socket takes.
fn writer_loop(shared: Arc<Shared>, slot: u32) {
    let packet = shared.cfg.packet_bytes as usize;
    let mut buf = Vec::with_capacity(HEADER_BYTES + packet);
    let mut st = shared.lock();
    loop {
        if st.shutdown {
            return;
        }
        let flow = &mut st.flows[slot as usize];
        if flow.failed.is_some() {
            flow.writer = false;
            return;
        }
        if flow.queue.is_empty() || (flow.reservation.is_none() && !shared.cfg.open) {
            st =
                shared.work.wait_timeout(st, Duration::from_millis(100)).unwrap_or_else(|p| p.into_inner()).0;
            continue;
        }
        take_packet(flow, packet, &mut buf);
        let sock = flow.sock.clone().expect("a flow with messages is connected");
        drop(st);
        shared.progress.notify_all();
        let res = (&*sock).write_all(&buf);
        st = shared.lock();
        if let Err(e) = res {
            fail_flow(&mut st, slot, format!("send: {e}"));
            shared.progress.notify_all();
        }
    }
}

fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
    for conn in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(sock) = conn else { continue };
        let sock = Arc::new(sock);
        {
            let mut st = shared.lock();
            if st.shutdown {
                return;
            }
            st.peers.push(sock.clone());
        }
        let s = shared.clone();
        // Readers end with their connection (closed by the peer, refused, or at shutdown).
        let _ = std::thread::Builder::new().name("qosnet-reader".into()).spawn(move || {
            if let Err(reason) = read_loop(&s, &sock) {
                s.malformed.fetch_add(1, Ordering::Relaxed);
                s.lock().last_malformed = Some(reason.to_string());
            }
            let _ = sock.shutdown(Shutdown::Both);
            let mut st = s.lock();
            st.peers.retain(|p| !Arc::ptr_eq(p, &sock));
        });
    }
}

/// Read one connection: a hello, then data frames reassembled into messages. A refused frame
/// ends the connection with its reason; I/O errors and a clean close end it quietly.
fn read_loop(shared: &Arc<Shared>, sock: &TcpStream) -> Result<(), FrameError> {
    let cfg = &shared.cfg;
    let mut r = io::BufReader::with_capacity(256 << 10, sock);
    let mut peer: Option<(String, u8)> = None;
    let mut reasm = Reassembly::new(cfg.max_message_bytes);
    // Any packet up to the protocol's limit (a peer may use another packet size).
    let max_payload = MAX_PACKET_BYTES;
    loop {
        let frame = match frame::read_frame(&mut r, max_payload) {
            Ok(None) | Err(_) => return Ok(()),
            Ok(Some(f)) => f?,
        };
        match frame.header.kind {
            Kind::Hello => {
                if peer.is_some() {
                    return Err(FrameError::SecondHello);
                }
                let name = String::from_utf8(frame.payload).map_err(|_| FrameError::HelloName)?;
                peer = Some((name, frame.header.priority));
            }
            Kind::Data => {
                let Some((src, priority)) = &peer else { return Err(FrameError::DataBeforeHello) };
                if let Some(msg) = reasm.push(&frame.header, &frame.payload)? {
                    deliver(shared, src, *priority, msg);
                }
            }
        }
    }
}

fn deliver(shared: &Arc<Shared>, src: &str, priority: u8, data: Vec<u8>) {
    let len = data.len() as u64;
    {
        let mut st = shared.lock();
        let e = st.received.entry((src.to_string(), priority)).or_insert((0, 0));
        e.0 += len;
        e.1 += 1;
        if shared.cfg.deliver && !shared.cfg.echo {
            st.inbox.push_back(Message { src: src.to_string(), priority, data });
            shared.progress.notify_all();
            return;
        }
    }
    if shared.cfg.echo {
        // The far end of a ping-pong: the reply goes through this agent like any send.
        let _ = send(shared, src, priority, data);
    }
}

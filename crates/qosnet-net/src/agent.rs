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
//!   It never waits on a socket: a packet the socket does not take whole is finished by the
//!   drain thread, which polls the full sockets, while the flow sits out of the discipline;
//!   so a peer that stops reading stalls its own flows only, not the host's others.
//! - `kernel` back end: one writer thread per flow writes as fast as the socket takes, and the
//!   socket's `SO_MAX_PACING_RATE` is the reservation (see `pacing`).
//!
//! A flow is (source endpoint, destination endpoint, priority) (§4.2); endpoints are ports
//! of agents (`endpoint`), so a flow is keyed here by (local port, destination, priority),
//! and carried on its own TCP connection (in order per flow, like GM). A flow may send only
//! when it is reserved (`reserve`, from the control plane), unless the agent is configured
//! `open`, when unreserved flows are unregulated best effort. Port 0 is the agent's own
//! (library mode); a daemon (`daemon`) opens a port per local application.
//!
//! Admission holds at both ends (004 §3.4: the source, the switch ports and the
//! destination): a closed agent also takes an incoming flow only if the control plane
//! admitted it here (`admit`: its source endpoint, destination port and priority). The
//! receiver answers each connection's hello with `Welcome` or `Refuse` (with the reason)
//! and counts the refusals (`refused_flows`); the sender waits for that answer before its
//! first packet, so a refused flow's `send` fails with the receiver's reason. A sender that
//! skips its agent and connects directly is refused the same way. The source is named by
//! the connection's own address, not by what its hello claims.

use crate::auth::{self, ClusterKey, Nonce, MAC_BYTES, NONCE_BYTES};
use crate::dispatch::{Dispatch, Pick};
use crate::endpoint::{self, Port};
use crate::frame::{self, FrameError, Header, Kind, Reassembly, FLAG_LAST, HEADER_BYTES, MAX_PACKET_BYTES};
use crate::link::{LinkClock, WireModel};
use crate::pacing;
use qosnet_rate::{idt_ticks, Ticks};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
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
    /// Connecting to a peer and its answer to the hello must take no longer than this (a
    /// dead or silent peer fails the flow's first send after it); an incoming connection
    /// must say its hello within it too.
    pub hello_timeout: Duration,
    /// The cluster key's file (`auth`): peers prove it at every hello. A daemon that is not
    /// open needs it.
    pub key_file: Option<std::path::PathBuf>,
    /// Send every message received back to its sender (ping-pong's far end).
    pub echo: bool,
    /// Keep received messages for `recv`; otherwise count and drop them (a sink).
    pub deliver: bool,
    /// Socket send buffer of each flow (bytes; 0 leaves the kernel's autotuning).
    pub send_buffer: u32,
    /// Bytes of received messages a port holds for its reader; past it, the connections
    /// delivering to that port wait (TCP's flow control pushes back on their senders).
    pub inbox_bytes: u64,
    /// The host's link rate, bits/s (`link`): the agent dispatches no faster in all, so
    /// that reserved flows get their IDTs and unreserved ones only what is left (004 §3.3).
    /// None: the link is not known, and nothing holds the unreserved flows back but the
    /// kernel (the agent then shares the host's link only among its reserved flows).
    pub link_bps: Option<f64>,
    /// How a frame's bytes become bytes on the link (`link::WireModel`).
    pub wire: WireModel,
    /// The DSCP reserved flows' packets carry (and `SO_PRIORITY` 6), so that switch ports
    /// (and the host's own qdisc) can serve them first; None leaves every flow unmarked.
    pub dscp: Option<u8>,
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
            hello_timeout: DEFAULT_HELLO_TIMEOUT,
            key_file: None,
            echo: false,
            deliver: true,
            send_buffer: 0,
            inbox_bytes: 64 << 20,
            link_bps: None,
            wire: WireModel::default(),
            dscp: Some(DSCP_EF),
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
        if self.inbox_bytes == 0 {
            return bad("inbox_bytes: must be >= 1, got 0".into());
        }
        if self.peer_timeout.is_zero() {
            return bad("peer_timeout: must be > 0 s, got 0".into());
        }
        if self.hello_timeout.is_zero() {
            return bad("hello_timeout: must be > 0 s, got 0".into());
        }
        if let Some(r) = self.link_bps.filter(|r| !(r.is_finite() && *r > 0.0)) {
            return bad(format!("link_bps: must be > 0 bit/s, got {r}"));
        }
        if !(576..=65_535).contains(&self.wire.mtu) {
            return bad(format!("mtu: must be in 576..=65535 bytes, got {}", self.wire.mtu));
        }
        if let Some(d) = self.dscp.filter(|d| *d > 63) {
            return bad(format!("dscp: must be in 0..=63, got {d}"));
        }
        Ok(())
    }
}

/// Full packets a dispatcher that woke late may send back to back to catch up with the
/// link's clock (`link::LinkClock`), or `LINK_BURST_SECONDS` of the link if that is more:
/// on a loaded 2-core machine wake-ups come milliseconds late; a burst of 2 packets left
/// 20-25% of a 100 Mb/s link unused, 4 still 3-5% under a load of 8 when reservations
/// filled the link. 8 packets (35 KB, 2.8 ms at 100 Mb/s) is about a switch port's burst
/// (the test cluster's token buckets hold 32 KB; the rest waits in their 10 ms queue).
pub const LINK_BURST_PACKETS: u64 = 8;

/// The least catch-up in time (on fast links 8 packets are microseconds).
pub const LINK_BURST_SECONDS: f64 = 0.002;

/// Full packets the agent keeps queued ahead of the link (a NIC's transmit ring): the link
/// goes on with them while a late dispatcher wakes, where with none it would sit idle and
/// reservations summing to the whole link would lose that time for good. Two packets
/// (8.8 KB) delay a reserved packet behind unreserved ones by at most two packet times.
pub const LINK_AHEAD_PACKETS: u64 = 2;

/// Expedited Forwarding (RFC 3246): the code point switches commonly queue strictly first.
pub const DSCP_EF: u8 = 46;

/// A live agent answers a hello in well under a millisecond, a loaded host within tens; a
/// dead or silent peer holds a flow's first send no longer than this.
pub const DEFAULT_HELLO_TIMEOUT: Duration = Duration::from_secs(2);

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
    #[error("flow to {dst} (priority {priority}) was refused by the receiver: {reason}")]
    Refused { dst: String, priority: u8, reason: String },
    #[error("cannot reach {dst}: {source}")]
    Connect { dst: String, source: io::Error },
    #[error("reservation rate: must be > 0 bit/s, got {0}")]
    Rate(f64),
    #[error("the agent has shut down")]
    Shutdown,
    #[error("timed out")]
    Timeout,
    #[error("port {0} is in use")]
    PortInUse(Port),
    #[error("port {0} is not open")]
    PortClosed(Port),
    /// An error the host's daemon reported (its message), for a client of the daemon.
    #[error("{0}")]
    Daemon(String),
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// A message received whole.
#[derive(Debug)]
pub struct Message {
    /// The sender's endpoint (its agent's address, and `/N` for a port N other than 0).
    pub src: String,
    pub priority: u8,
    pub data: Vec<u8>,
}

/// What one outgoing flow has done.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct FlowStats {
    /// The local port the flow is sent from.
    pub port: Port,
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
    /// Times the flow's socket was full and the dispatcher went on without it.
    pub stalls: u64,
    /// Its socket is full now (the drain thread is finishing a packet).
    pub blocked: bool,
    pub failed: Option<String>,
}

/// What arrived from one (source, priority).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ReceivedStats {
    pub src: String,
    pub priority: u8,
    pub bytes: u64,
    pub messages: u64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
    /// Reservations and admissions removed by their lease's expiry.
    pub expired_leases: u64,
    /// Messages that arrived for a port nobody had open (dropped).
    pub undeliverable: u64,
    /// Incoming flows refused at their hello (not admitted here, the agent closed).
    pub refused_flows: u64,
    /// The last refusal's reason.
    pub last_refused: Option<String>,
    /// The incoming flows admitted here (closed agents take only these).
    pub admitted: Vec<AdmittedStats>,
    /// Hellos refused because they did not prove the cluster key (a process that is not an
    /// agent, a replayed hello, another cluster's agent).
    #[serde(default)]
    pub unauthenticated_hellos: u64,
    /// The host's link rate the agent schedules (bits/s), if it knows it.
    #[serde(default)]
    pub link_bps: Option<f64>,
    /// The most of the link reservations can be given as payload (`link::WireModel`).
    #[serde(default)]
    pub payload_fraction: f64,
    /// Sum of the reservations (bits/s of payload).
    #[serde(default)]
    pub reserved_bps: f64,
}

/// An incoming flow the control plane admitted at this agent.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct AdmittedStats {
    /// The source endpoint (its agent's address, resolved, and `/N` for a port N other than 0).
    pub src: String,
    /// The local port it is destined to.
    pub port: Port,
    pub priority: u8,
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

/// The rest of a packet its socket did not take (the socket was full).
struct Blocked {
    rest: Vec<u8>,
    since: Instant,
}

struct Flow {
    port: Port,
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
    /// Agent back end: the socket was full; the drain thread finishes this packet, and
    /// until then the flow is out of the dispatch discipline.
    blocked: Option<Blocked>,
    stalls: u64,
    /// Kernel back end: the flow's writer thread is running.
    writer: bool,
}

/// Messages received for one local port, waiting for its reader.
#[derive(Default)]
struct Inbox {
    messages: VecDeque<Message>,
    bytes: u64,
}

type FlowKey = (Port, String, u8);

/// An incoming flow: (source endpoint, local destination port, priority).
type Incoming = (String, Port, u8);

/// A connection from a peer, and the incoming flow it carries once its hello is accepted.
struct PeerConn {
    sock: Arc<TcpStream>,
    flow: Option<Incoming>,
}

#[derive(Default)]
struct State {
    flows: Vec<Flow>,
    index: HashMap<FlowKey, u32>,
    dispatch: Dispatch,
    /// The open local ports and what arrived for each.
    ports: HashMap<Port, Inbox>,
    received: HashMap<(String, u8), (u64, u64)>,
    peers: Vec<PeerConn>,
    /// Incoming flows admitted here, each with its lease's end (None: no lease).
    admitted: HashMap<Incoming, Option<Instant>>,
    shutdown: bool,
    refused_sends: u64,
    expired_leases: u64,
    undeliverable: u64,
    refused_flows: u64,
    last_refused: Option<String>,
    last_malformed: Option<String>,
    unauthenticated_hellos: u64,
    /// The host's link (agent back end), if its rate is known.
    link: Option<LinkClock>,
}

struct Shared {
    cfg: AgentConfig,
    /// The cluster key, if configured (`auth`).
    key: Option<ClusterKey>,
    endpoint: String,
    start: Instant,
    state: Mutex<State>,
    /// The dispatcher (and kernel writers) have work.
    work: Condvar,
    /// A flow's queue shrank or failed, or an inbox made room: what senders, flushes and
    /// deliveries wait for. Notified per packet, so receivers do not wait on it.
    progress: Condvar,
    /// A message arrived at an inbox, a port closed, or shutdown: what a receive waits for
    /// (apart from `progress`, so that a thread blocked in `recv` is not woken by every
    /// packet the dispatcher sends: a daemon's clients each have one).
    arrivals: Condvar,
    malformed: AtomicU64,
    stopping: AtomicBool,
    /// Wakes the drain thread's poll (an eventfd): a flow blocked, or shutdown.
    drain_wake: OwnedFd,
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

    fn wake_drain(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid local to the eventfd this struct owns.
        unsafe { libc::write(self.drain_wake.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }

    fn wait<'a>(
        &self,
        cv: &Condvar,
        st: MutexGuard<'a, State>,
        left: Option<Duration>,
    ) -> MutexGuard<'a, State> {
        match left {
            None => cv.wait(st).unwrap_or_else(|p| p.into_inner()),
            Some(d) => cv.wait_timeout(st, d).unwrap_or_else(|p| p.into_inner()).0,
        }
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
        let key = cfg.key_file.as_deref().map(ClusterKey::from_file).transpose()?;
        let listener = TcpListener::bind(&cfg.listen)
            .map_err(|e| NetError::Config(format!("listen: cannot bind {:?}: {e}", cfg.listen)))?;
        let endpoint = listener.local_addr()?.to_string();
        // SAFETY: eventfd returns a new descriptor (owned below) or -1.
        let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if efd < 0 {
            return Err(io::Error::last_os_error().into());
        }
        // SAFETY: `efd` is a fresh descriptor nothing else owns.
        let drain_wake = unsafe { OwnedFd::from_raw_fd(efd) };
        let mut state = State::default();
        state.ports.insert(0, Inbox::default());
        // What a late wake-up may make up (`LINK_BURST_PACKETS`).
        let packet_wire = cfg.wire.wire_bytes(cfg.packet_bytes as u64 + HEADER_BYTES as u64);
        state.link = cfg.link_bps.map(|r| {
            let burst = (LINK_BURST_PACKETS * packet_wire).max((r / 8.0 * LINK_BURST_SECONDS) as u64);
            LinkClock::new(r, LINK_AHEAD_PACKETS * packet_wire, burst)
        });
        let shared = Arc::new(Shared {
            cfg,
            key,
            endpoint,
            start: Instant::now(),
            state: Mutex::new(state),
            work: Condvar::new(),
            progress: Condvar::new(),
            arrivals: Condvar::new(),
            malformed: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            drain_wake,
            writers: Mutex::new(Vec::new()),
        });
        let mut threads = Vec::new();
        let spawn = |name: &str, f: fn(Arc<Shared>), s: Arc<Shared>| {
            std::thread::Builder::new().name(name.into()).spawn(move || f(s))
        };
        let s = shared.clone();
        threads.push(
            std::thread::Builder::new()
                .name("qosnet-accept".into())
                .spawn(move || accept_loop(s, listener))?,
        );
        threads.push(spawn("qosnet-dispatch", dispatch_loop, shared.clone())?);
        threads.push(spawn("qosnet-drain", drain_loop, shared.clone())?);
        Ok(Agent { shared, threads: Mutex::new(threads) })
    }

    /// This agent's endpoint name (the address peers reach it at; its port 0).
    pub fn endpoint(&self) -> &str {
        &self.shared.endpoint
    }

    pub fn config(&self) -> &AgentConfig {
        &self.shared.cfg
    }

    /// Open local port `port` (None: the lowest free port from 1) for an application; its
    /// messages are kept for `recv_at` until it is closed. Port 0 is open from the start.
    pub fn open_port(&self, port: Option<Port>) -> Result<Port, NetError> {
        let mut st = self.shared.lock();
        let p = match port {
            Some(p) if st.ports.contains_key(&p) => return Err(NetError::PortInUse(p)),
            Some(p) => p,
            None => (1..=Port::MAX).find(|p| !st.ports.contains_key(p)).ok_or(NetError::PortInUse(0))?,
        };
        st.ports.insert(p, Inbox::default());
        // Flows a previous holder of the port left behind start afresh (reservations stay:
        // they belong to the control plane, not to the application).
        for f in st.flows.iter_mut().filter(|f| f.port == p) {
            f.failed = None;
        }
        Ok(p)
    }

    /// Close local port `port` (its application went away): its undelivered messages are
    /// dropped, its flows' queued messages too, and their connections closed.
    pub fn close_port(&self, port: Port) {
        let mut st = self.shared.lock();
        st.ports.remove(&port);
        let slots: Vec<u32> =
            (0..st.flows.len() as u32).filter(|&s| st.flows[s as usize].port == port).collect();
        for slot in slots {
            fail_flow(&mut st, slot, format!("port {port} closed"));
            st.flows[slot as usize].sock = None;
        }
        self.shared.progress.notify_all();
        self.shared.arrivals.notify_all();
        self.shared.work.notify_all();
    }

    /// Install (or change) the reservation of flow (local port `port`, `dst`, `priority`):
    /// `bits_per_second` becomes the IDT of one packet (004 §3.4: idt = T · Bpeak / Breq);
    /// with a `lease` the reservation is removed when it runs out unless renewed.
    pub fn reserve_from(
        &self,
        port: Port,
        dst: &str,
        priority: u8,
        bits_per_second: f64,
        lease: Option<Duration>,
    ) -> Result<(), NetError> {
        if !(bits_per_second.is_finite() && bits_per_second > 0.0) {
            return Err(NetError::Rate(bits_per_second));
        }
        endpoint::split(dst)?;
        let idt = idt_ticks(self.shared.cfg.packet_bytes as f64 * 8.0, bits_per_second, 1e9);
        let expires = lease.map(|l| Instant::now() + l);
        let mut st = self.shared.lock();
        let slot = flow_slot(&mut st, port, dst, priority);
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
                if !flow.queue.is_empty() && flow.blocked.is_none() {
                    // It was queued unregulated: it moves to rate control.
                    st.dispatch.unqueue(slot);
                    st.dispatch.became_sendable(slot, Some(rc), now);
                }
                flow.reservation = Some(Reservation { bits_per_second, idt, rc: Some(rc), expires });
            }
            (_, Backend::Kernel) => {
                flow.reservation = Some(Reservation { bits_per_second, idt, rc: None, expires });
            }
        }
        if let Some(sock) = &st.flows[slot as usize].sock {
            pacing::set_marking(sock, self.shared.cfg.dscp)?;
        }
        if self.shared.cfg.backend == Backend::Kernel {
            kernel_pacing(&self.shared, st);
        }
        self.shared.work.notify_all();
        Ok(())
    }

    /// Remove flow (`port`, `dst`, `priority`)'s reservation; true if it had one. Its queued
    /// messages go on unregulated if the agent is open, else they are dropped and the flow
    /// refused.
    pub fn release_from(&self, port: Port, dst: &str, priority: u8) -> bool {
        let mut st = self.shared.lock();
        let Some(&slot) = st.index.get(&(port, dst.to_string(), priority)) else { return false };
        let had = remove_reservation(&self.shared, &mut st, slot);
        self.shared.work.notify_all();
        self.shared.progress.notify_all();
        had
    }

    /// Admit the incoming flow from `src` (an endpoint; its host is resolved) to local port
    /// `port` at `priority` (004 §3.4 (c): the destination's side of admission, from the
    /// control plane); with a `lease` the admission ends when it runs out unless renewed.
    /// A closed agent refuses every other incoming flow.
    pub fn admit(
        &self,
        src: &str,
        port: Port,
        priority: u8,
        lease: Option<Duration>,
    ) -> Result<(), NetError> {
        let src = endpoint::resolve(src)?;
        let expires = lease.map(|l| Instant::now() + l);
        self.shared.lock().admitted.insert((src, port, priority), expires);
        self.shared.work.notify_all();
        Ok(())
    }

    /// Withdraw an incoming flow's admission; true if it had one. On a closed agent the
    /// flow's connection is closed (its sender's flow fails; a new one is refused).
    pub fn revoke(&self, src: &str, port: Port, priority: u8) -> Result<bool, NetError> {
        let key = (endpoint::resolve(src)?, port, priority);
        let mut st = self.shared.lock();
        let had = st.admitted.remove(&key).is_some();
        if had && !self.shared.cfg.open {
            close_incoming(&st, &key);
        }
        Ok(had)
    }

    /// Queue a message on flow (`port`, `dst`, `priority`); waits while the flow has
    /// `queue_bytes` queued. Errors if the flow is not admitted or has failed.
    pub fn send_from(&self, port: Port, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
        send(&self.shared, port, dst, priority, data)
    }

    /// Wait until flow (`port`, `dst`, `priority`) has handed all its queued bytes to the
    /// network.
    pub fn flush_from(&self, port: Port, dst: &str, priority: u8, timeout: Duration) -> Result<(), NetError> {
        let deadline = Instant::now() + timeout;
        let mut st = self.shared.lock();
        let Some(&slot) = st.index.get(&(port, dst.to_string(), priority)) else { return Ok(()) };
        loop {
            let flow = &st.flows[slot as usize];
            if let Some(reason) = &flow.failed {
                return Err(NetError::FlowFailed { dst: dst.into(), priority, reason: reason.clone() });
            }
            if flow.queue.is_empty() && flow.blocked.is_none() {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(NetError::Timeout);
            }
            st = self.shared.wait(&self.shared.progress, st, Some(left));
        }
    }

    /// The next message received whole at local port `port`, waiting up to `timeout`
    /// (None: wait forever). (Port 0's shapes, `send`, `recv`, ..., are `PortHandle`'s.)
    pub fn recv_at(&self, port: Port, timeout: Option<Duration>) -> Result<Message, NetError> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.shared.lock();
        loop {
            if st.shutdown {
                return Err(NetError::Shutdown);
            }
            let Some(inbox) = st.ports.get_mut(&port) else { return Err(NetError::PortClosed(port)) };
            if let Some(m) = inbox.messages.pop_front() {
                inbox.bytes -= m.data.len() as u64;
                // A reader waiting for room in this inbox may go on.
                self.shared.progress.notify_all();
                return Ok(m);
            }
            let left = match deadline {
                None => None,
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(NetError::Timeout);
                    }
                    Some(left)
                }
            };
            st = self.shared.wait(&self.shared.arrivals, st, left);
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
        let mut admitted: Vec<AdmittedStats> = st
            .admitted
            .keys()
            .map(|(src, port, priority)| AdmittedStats { src: src.clone(), port: *port, priority: *priority })
            .collect();
        admitted.sort_by(|a, b| (&a.src, a.port, a.priority).cmp(&(&b.src, b.port, b.priority)));
        Stats {
            endpoint: self.shared.endpoint.clone(),
            flows: st
                .flows
                .iter()
                .map(|f| FlowStats {
                    port: f.port,
                    dst: f.dst.clone(),
                    priority: f.priority,
                    reserved_bps: f.reservation.as_ref().map(|r| r.bits_per_second),
                    idt_ns: f.reservation.as_ref().map(|r| r.idt),
                    bytes_sent: f.bytes_sent,
                    packets_sent: f.packets_sent,
                    messages_sent: f.messages_sent,
                    queued_bytes: f.queued_bytes,
                    stalls: f.stalls,
                    blocked: f.blocked.is_some(),
                    failed: f.failed.clone(),
                })
                .collect(),
            received,
            malformed_frames: self.shared.malformed.load(Ordering::Relaxed),
            last_malformed: st.last_malformed.clone(),
            refused_sends: st.refused_sends,
            expired_leases: st.expired_leases,
            undeliverable: st.undeliverable,
            refused_flows: st.refused_flows,
            last_refused: st.last_refused.clone(),
            admitted,
            unauthenticated_hellos: st.unauthenticated_hellos,
            link_bps: self.shared.cfg.link_bps,
            payload_fraction: self.shared.cfg.wire.payload_fraction(self.shared.cfg.packet_bytes),
            reserved_bps: reserved_sum(&st),
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
                let _ = p.sock.shutdown(Shutdown::Both);
            }
        }
        self.shared.work.notify_all();
        self.shared.progress.notify_all();
        self.shared.arrivals.notify_all();
        self.shared.wake_drain();
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

fn flow_slot(st: &mut State, port: Port, dst: &str, priority: u8) -> u32 {
    let key = (port, dst.to_string(), priority);
    if let Some(&s) = st.index.get(&key) {
        return s;
    }
    st.flows.push(Flow {
        port,
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
        blocked: None,
        stalls: 0,
        writer: false,
    });
    let s = (st.flows.len() - 1) as u32;
    st.index.insert(key, s);
    s
}

fn connect(shared: &Shared, port: Port, dst: &str, priority: u8) -> Result<TcpStream, NetError> {
    let err = |source: io::Error| NetError::Connect { dst: dst.into(), source };
    let (agent, dst_port) = endpoint::split(dst)?;
    let addr = agent
        .to_socket_addrs()
        .map_err(err)?
        .next()
        .ok_or_else(|| err(io::Error::new(io::ErrorKind::NotFound, "no address")))?;
    // The whole exchange, connection to verdict, within `hello_timeout`: a dead or silent
    // peer fails this flow's first send then, and only this flow's (the lock is not held).
    let limit = shared.cfg.hello_timeout;
    let deadline = Instant::now() + limit;
    let silent = |what: &str| {
        err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the receiver did not {what} within {limit:?} (hello_timeout)"),
        ))
    };
    let sock = TcpStream::connect_timeout(&addr, limit).map_err(|e| match e.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => silent("accept the connection"),
        _ => err(e),
    })?;
    sock.set_nodelay(true).map_err(err)?;
    sock.set_write_timeout(Some(shared.cfg.peer_timeout)).map_err(err)?;
    if shared.cfg.send_buffer > 0 {
        pacing::set_send_buffer(&sock, shared.cfg.send_buffer).map_err(err)?;
    }
    let bad = |what: String| err(io::Error::new(io::ErrorKind::InvalidData, what));
    // Read the next frame from the receiver before the deadline.
    let answer = |what: &str| -> Result<frame::Frame, NetError> {
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        sock.set_read_timeout(Some(left)).map_err(err)?;
        match frame::read_frame(&mut &sock, MAX_REFUSAL_BYTES) {
            Ok(Some(Ok(f))) => Ok(f),
            Ok(Some(Err(e))) => Err(bad(format!("the receiver's {what}: {e}"))),
            Ok(None) => Err(bad(format!("the receiver closed the connection before its {what}"))),
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                Err(silent(&format!("send its {what}")))
            }
            Err(e) => Err(err(e)),
        }
    };
    // The receiver's challenge, then our hello proving the cluster key against it (`auth`).
    let challenge = answer("challenge")?;
    let challenge: Nonce = match (challenge.header.kind, challenge.payload.try_into()) {
        (Kind::Challenge, Ok(c)) => c,
        (kind, _) => return Err(bad(format!("the receiver opened with a {kind:?} frame, not a challenge"))),
    };
    let name = endpoint::join(&shared.endpoint, port);
    let nonce = auth::nonce().map_err(err)?;
    let tag = shared
        .key
        .as_ref()
        .map_or([0; MAC_BYTES], |k| k.hello_mac(&challenge, &nonce, priority, dst_port, &name));
    let mut hello = Vec::with_capacity(HEADER_BYTES + NONCE_BYTES + MAC_BYTES + name.len());
    hello.resize(HEADER_BYTES, 0);
    let length = (NONCE_BYTES + MAC_BYTES + name.len()) as u32;
    Header { kind: Kind::Hello, flags: 0, priority, length, message: dst_port }
        .encode((&mut hello[..HEADER_BYTES]).try_into().expect("a header's bytes"));
    hello.extend_from_slice(&nonce);
    hello.extend_from_slice(&tag);
    hello.extend_from_slice(name.as_bytes());
    (&sock).write_all(&hello).map_err(err)?;
    // The receiver's verdict comes before any data (its admission, 004 §3.4 (c)).
    let verdict = answer("answer to the hello")?;
    match verdict.header.kind {
        Kind::Welcome => {
            if let Some(k) = &shared.key {
                if !k.check_welcome(&challenge, &nonce, &verdict.payload) {
                    return Err(bad(
                        "the receiver's welcome does not prove the cluster key (key_file)".into()
                    ));
                }
            }
            sock.set_read_timeout(None).map_err(err)?;
            Ok(sock)
        }
        Kind::Refuse => Err(NetError::Refused {
            dst: dst.into(),
            priority,
            reason: String::from_utf8_lossy(&verdict.payload).into_owned(),
        }),
        kind => Err(bad(format!("the receiver answered the hello with a {kind:?} frame"))),
    }
}

/// The longest refusal reason a sender reads.
const MAX_REFUSAL_BYTES: u32 = 64 << 10;

/// Queue a message on flow (`port`, `dst`, `priority`); waits while the flow has
/// `queue_bytes` queued. Errors if the flow is not admitted or has failed.
fn send(shared: &Arc<Shared>, port: Port, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
    let mut st = shared.lock();
    if !st.ports.contains_key(&port) {
        return Err(NetError::PortClosed(port));
    }
    let slot = flow_slot(&mut st, port, dst, priority);
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
        st = shared.wait(&shared.progress, st, None);
    }
    if st.flows[slot as usize].sock.is_none() {
        // Connect outside the lock: a slow peer must not hold up the other flows.
        drop(st);
        let sock = connect(shared, port, dst, priority)?;
        st = shared.lock();
        let flow = &mut st.flows[slot as usize];
        if flow.sock.is_none() {
            if flow.reservation.is_some() {
                pacing::set_marking(&sock, shared.cfg.dscp)?;
            }
            flow.sock = Some(Arc::new(sock));
            if shared.cfg.backend == Backend::Kernel {
                kernel_pacing(shared, &st);
            }
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
            // A blocked flow rejoins the discipline when the drain thread unblocks it.
            Backend::Agent if flow.blocked.is_none() => {
                let rc = flow.reservation.as_ref().and_then(|r| r.rc);
                st.dispatch.became_sendable(slot, rc, now);
            }
            Backend::Agent => {}
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
    if let Some(sock) = &flow.sock {
        let _ = pacing::set_marking(sock, None);
        if shared.cfg.backend == Backend::Kernel {
            let _ = pacing::set_max_pacing_rate(sock, pacing::UNLIMITED);
        }
    }
    // Its rate-control entry, if queued, is now stale and is dropped by the dispatcher.
    if !flow.queue.is_empty() {
        if shared.cfg.open {
            if r.rc.is_some() && flow.blocked.is_none() {
                st.dispatch.became_sendable(slot, None, now);
            }
        } else {
            flow.queue.clear();
            flow.queued_bytes = 0;
        }
    }
    if shared.cfg.backend == Backend::Kernel {
        kernel_pacing(shared, st);
    }
    true
}

/// Sum of the host's reservations, bits/s of payload.
fn reserved_sum(st: &State) -> f64 {
    st.flows.iter().filter_map(|f| f.reservation.as_ref()).map(|r| r.bits_per_second).sum()
}

/// The kernel back end's rates: each reserved flow's socket paced at its reservation,
/// scaled down in proportion when the reservations sum to more than the link carries as
/// payload (an open agent, a test: admission keeps a closed one within it), so that the
/// flows still share by 1/IDT, as the agent back end's least-NDT order and the simulator's
/// NIC give (004 §3.3). Unreserved flows stay unpaced: holding them to what the reserved
/// leave is the host qdisc's part (the reserved flows' packets are marked, `pacing`).
fn kernel_pacing(shared: &Shared, st: &State) {
    let sum = reserved_sum(st);
    let cap = shared.cfg.link_bps.map(|l| l * shared.cfg.wire.payload_fraction(shared.cfg.packet_bytes));
    let scale = cap.filter(|&c| sum > c).map_or(1.0, |c| c / sum);
    for f in &st.flows {
        if let (Some(r), Some(sock)) = (&f.reservation, &f.sock) {
            let _ = pacing::set_max_pacing_rate(sock, (r.bits_per_second * scale / 8.0).round() as u64);
        }
    }
}

/// Whether a flow's queue going from `before` to `after` bytes may let a waiter go on: a
/// sender waiting for room (it fell below `limit`) or a flush (it emptied). Only then are
/// they woken: woken at every packet, a full flow's senders cost a wake-up (and the lock)
/// per packet for nothing, CPU the dispatcher needs on a loaded host.
fn frees_waiters(before: u64, after: u64, limit: u64) -> bool {
    after == 0 || (before >= limit && after < limit)
}

/// Take the next packet of `flow` into `buf` (header and payload); whether the flow has
/// more, and the packet's payload bytes.
fn take_packet(flow: &mut Flow, packet_bytes: usize, buf: &mut Vec<u8>) -> (bool, usize) {
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
    (!flow.queue.is_empty(), len)
}

fn fail_flow(st: &mut State, slot: u32, reason: String) {
    let flow = &mut st.flows[slot as usize];
    if flow.failed.is_none() {
        flow.failed = Some(reason);
    }
    flow.queue.clear();
    flow.queued_bytes = 0;
    flow.blocked = None;
    if let Some(s) = &flow.sock {
        let _ = s.shutdown(Shutdown::Both);
    }
}

/// Remove reservations and admissions whose lease ran out; the next lease's end.
fn expire_leases(shared: &Shared, st: &mut State) -> Option<Instant> {
    let now = Instant::now();
    let ended: Vec<Incoming> =
        st.admitted.iter().filter(|(_, e)| e.is_some_and(|e| e <= now)).map(|(k, _)| k.clone()).collect();
    for key in ended {
        st.admitted.remove(&key);
        st.expired_leases += 1;
        if !shared.cfg.open {
            close_incoming(st, &key);
        }
    }
    let mut next: Option<Instant> = st.admitted.values().flatten().copied().min();
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

/// Write as much of `buf` as `sock` takes without waiting; the count written.
fn write_now(sock: &TcpStream, buf: &[u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        // SAFETY: sends from a valid slice on a descriptor `sock` owns; MSG_DONTWAIT makes
        // this one call non-blocking (the socket stays blocking for the kernel writers).
        let rc = unsafe {
            libc::send(
                sock.as_raw_fd(),
                buf[n..].as_ptr() as *const libc::c_void,
                buf.len() - n,
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if rc >= 0 {
            n += rc as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock => break,
            io::ErrorKind::Interrupted => {}
            _ => return Err(e),
        }
    }
    Ok(n)
}

/// Waits shorter than this are spun rather than slept (ns).
const SPIN_NS: Ticks = 50_000;

/// Sleep until `wake` (a reserved flow's NDT, the link free again), a lease's end, or new
/// work. A wait shorter than the kernel's timer slack (~50 µs) is spun instead: a sleep
/// would overshoot it, and although NDT and the link's clock catch up afterwards (the
/// long-run rates hold), the packet in flight would be late by the overshoot.
fn wait_until<'a>(
    shared: &'a Shared,
    st: MutexGuard<'a, State>,
    now: Ticks,
    wake: Option<Ticks>,
    next_lease: Option<Instant>,
) -> MutexGuard<'a, State> {
    let mut wait = Duration::from_millis(100);
    if let Some(at) = wake {
        let left = at.saturating_sub(now);
        if left < SPIN_NS {
            drop(st);
            while shared.now() < at {
                std::hint::spin_loop();
            }
            return shared.lock();
        }
        wait = wait.min(Duration::from_nanos(left));
    }
    if let Some(l) = next_lease {
        wait = wait.min(l.saturating_duration_since(Instant::now()));
    }
    shared.wait(&shared.work, st, Some(wait))
}

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
        // The link is still carrying what was dispatched (004 §3.3: at most one packet per
        // T): nothing goes before it is ready (free but for `LINK_AHEAD_PACKETS` queued
        // ahead of it), whichever flow is due.
        let link_ready = st.link.as_ref().map_or(0, LinkClock::ready_at);
        if link_ready > now {
            let wake = st.dispatch.next_ready(now).map(|t| t.max(link_ready));
            st = wait_until(&shared, st, now, wake, next_lease);
            continue;
        }
        let Some(pick) = st.dispatch.pick(now) else {
            let wake = st.dispatch.next_due();
            st = wait_until(&shared, st, now, wake, next_lease);
            continue;
        };
        let slot = pick.slot();
        let st_ref = &mut *st;
        let flow = &mut st_ref.flows[slot as usize];
        let current = match pick {
            Pick::Reserved { rc, .. } => flow.reservation.as_ref().and_then(|r| r.rc) == Some(rc),
            Pick::Unregulated { .. } => flow.reservation.is_none(),
        };
        // An unregulated flow whose socket is full keeps its turn in the ring for up to
        // `RING_WAIT`: a congested socket takes the rest of its packet as its peer reads,
        // and waiting for it keeps the ring's interleaving (004 §3.3: unregulated flows
        // share what is left, interleaved) where skipping it would let TCP decide the
        // shares. A flow blocked longer (a peer that stopped reading) sits out, and the
        // others go on.
        let unregulated = matches!(pick, Pick::Unregulated { .. }) && !flow.queue.is_empty();
        let blocked_for = flow.blocked.as_ref().map(|b| b.since.elapsed());
        if let Some(waited) = blocked_for.filter(|w| current && unregulated && *w < RING_WAIT) {
            let mut wait = RING_WAIT - waited;
            if let Some(ndt) = st_ref.dispatch.next_due() {
                wait = wait.min(Duration::from_nanos(ndt.saturating_sub(now)));
            }
            st = shared.wait(&shared.work, st, Some(wait));
            continue;
        }
        let flow = &mut st_ref.flows[slot as usize];
        if !current || flow.queue.is_empty() || flow.blocked.is_some() {
            // A stale entry (reservation removed or replaced, flow failed), or a flow whose
            // socket is full (it rejoins when the drain thread has emptied it): drop it.
            st_ref.dispatch.dispatched(pick, false, 0, packet as u64);
            continue;
        }
        let before = flow.queued_bytes;
        let (more, bytes) = take_packet(flow, packet, &mut buf);
        let wake = frees_waiters(before, flow.queued_bytes, shared.cfg.queue_bytes);
        // A short packet costs its own bytes at the flow's rate, a full one exactly its IDT
        // (`qosnet_rate::RateControl::dispatched_bytes`).
        st_ref.dispatch.dispatched(pick, more, bytes as u64, packet as u64);
        if let Some(link) = &mut st_ref.link {
            link.sent(now, shared.cfg.wire.wire_bytes(buf.len() as u64));
        }
        let sock = flow.sock.clone().expect("a flow with messages is connected");
        drop(st);
        if wake {
            shared.progress.notify_all();
        }
        let res = write_now(&sock, &buf);
        st = shared.lock();
        match res {
            Err(e) => {
                fail_flow(&mut st, slot, format!("send: {e}"));
                shared.progress.notify_all();
            }
            Ok(n) if n < buf.len() => {
                // The socket is full (its peer reads slowly, or not at all): the flow sits
                // out, the others go on; the drain thread finishes the packet.
                let flow = &mut st.flows[slot as usize];
                if flow.failed.is_none() {
                    flow.blocked = Some(Blocked { rest: buf[n..].to_vec(), since: Instant::now() });
                    flow.stalls += 1;
                    shared.wake_drain();
                }
            }
            Ok(_) => {}
        }
    }
}

/// How long an unregulated flow whose socket is full keeps its turn in the ring: long
/// enough for a congested socket to take the rest of a packet as TCP's window reopens,
/// short enough that a peer that stopped reading delays the host's other flows by at
/// most this (they waited up to `peer_timeout`, 10 s, when writes blocked) before its
/// flow sits out.
const RING_WAIT: Duration = Duration::from_millis(500);

/// Finishes the packets of flows whose sockets were full, waiting for each socket to take
/// more (poll), then returns the flow to the dispatch discipline. A flow blocked longer than
/// `peer_timeout` fails (its peer is gone or stuck).
fn drain_loop(shared: Arc<Shared>) {
    let wake = shared.drain_wake.as_raw_fd();
    let mut fds: Vec<libc::pollfd> = Vec::new();
    let mut slots: Vec<u32> = Vec::new();
    loop {
        fds.clear();
        slots.clear();
        fds.push(libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 });
        {
            let mut st = shared.lock();
            if st.shutdown {
                return;
            }
            let timeout = shared.cfg.peer_timeout;
            for slot in 0..st.flows.len() as u32 {
                let f = &st.flows[slot as usize];
                let (Some(b), Some(sock)) = (&f.blocked, &f.sock) else { continue };
                if b.since.elapsed() > timeout {
                    let reason = format!("send: the peer took nothing for {timeout:?}");
                    fail_flow(&mut st, slot, reason);
                    shared.progress.notify_all();
                    continue;
                }
                fds.push(libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLOUT, revents: 0 });
                slots.push(slot);
            }
        }
        // With no flow blocked, sleep until woken; else re-check timeouts every 100 ms.
        let ms = if slots.is_empty() { -1 } else { 100 };
        // SAFETY: `fds` is a valid array of `fds.len()` pollfds.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
        if rc < 0 {
            continue;
        }
        if fds[0].revents != 0 {
            let mut v = 0u64;
            // SAFETY: reads 8 bytes into a valid local from the eventfd.
            unsafe { libc::read(wake, &mut v as *mut u64 as *mut libc::c_void, 8) };
        }
        for (i, &slot) in slots.iter().enumerate() {
            if fds[i + 1].revents == 0 {
                continue;
            }
            let mut st = shared.lock();
            let now = shared.now();
            let st = &mut *st;
            let flow = &mut st.flows[slot as usize];
            let (Some(b), Some(sock)) = (&mut flow.blocked, &flow.sock) else { continue };
            match write_now(sock, &b.rest) {
                Err(e) => {
                    fail_flow(st, slot, format!("send: {e}"));
                    shared.progress.notify_all();
                }
                Ok(n) if n < b.rest.len() => {
                    b.rest.drain(..n);
                }
                Ok(_) => {
                    flow.blocked = None;
                    if !flow.queue.is_empty() {
                        let rc = flow.reservation.as_ref().and_then(|r| r.rc);
                        st.dispatch.became_sendable(slot, rc, now);
                        shared.work.notify_all();
                    }
                    shared.progress.notify_all();
                }
            }
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
            st = shared.wait(&shared.work, st, Some(Duration::from_millis(100)));
            continue;
        }
        let before = flow.queued_bytes;
        take_packet(flow, packet, &mut buf);
        let wake = frees_waiters(before, flow.queued_bytes, shared.cfg.queue_bytes);
        let sock = flow.sock.clone().expect("a flow with messages is connected");
        drop(st);
        if wake {
            shared.progress.notify_all();
        }
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
            st.peers.push(PeerConn { sock: sock.clone(), flow: None });
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
            st.peers.retain(|p| !Arc::ptr_eq(&p.sock, &sock));
        });
    }
}

/// The flow a connection carries, from its hello.
struct Peer {
    src: String,
    priority: u8,
    port: Port,
}

/// Read one connection: a hello (answered with the admission's verdict), then data frames
/// reassembled into messages. A refused frame ends the connection with its reason; I/O
/// errors, a clean close and a refused flow end it quietly (the refusal counted apart).
fn read_loop(shared: &Arc<Shared>, sock: &Arc<TcpStream>) -> Result<(), FrameError> {
    let cfg = &shared.cfg;
    let mut r = io::BufReader::with_capacity(256 << 10, &**sock);
    let mut peer: Option<Peer> = None;
    let mut reasm = Reassembly::new(cfg.max_message_bytes);
    // Any packet up to the protocol's limit (a peer may use another packet size).
    let max_payload = MAX_PACKET_BYTES;
    // The challenge the hello must prove the cluster key against (`auth`), and the hello
    // within `hello_timeout` (a connection that says nothing does not hold a reader).
    let Ok(challenge) = auth::nonce() else { return Ok(()) };
    let mut c = [0u8; HEADER_BYTES];
    Header { kind: Kind::Challenge, flags: 0, priority: 0, length: NONCE_BYTES as u32, message: 0 }
        .encode(&mut c);
    if (&**sock).write_all(&c).and_then(|_| (&**sock).write_all(&challenge)).is_err()
        || sock.set_read_timeout(Some(cfg.hello_timeout)).is_err()
    {
        return Ok(());
    }
    loop {
        let frame = match frame::read_frame(&mut r, max_payload) {
            // A connection that ends mid-frame is a sender that closed (or died) while a
            // packet was on its way, not a malformed frame.
            Ok(None) | Err(_) | Ok(Some(Err(FrameError::Truncated))) => return Ok(()),
            Ok(Some(f)) => f?,
        };
        match frame.header.kind {
            Kind::Hello => {
                if peer.is_some() {
                    return Err(FrameError::SecondHello);
                }
                let n = frame.payload.len();
                if n < NONCE_BYTES + MAC_BYTES {
                    return Err(FrameError::HelloShort(n));
                }
                let (nonce, rest) = frame.payload.split_at(NONCE_BYTES);
                let (tag, name) = rest.split_at(MAC_BYTES);
                let nonce: Nonce = nonce.try_into().expect("a nonce's bytes");
                let claimed = std::str::from_utf8(name).map_err(|_| FrameError::HelloName)?;
                let from = sock.peer_addr().map_err(|_| FrameError::Truncated)?;
                let src = endpoint::source(claimed, from).ok_or(FrameError::HelloName)?;
                let p = Peer { src, priority: frame.header.priority, port: frame.header.message };
                let proven = shared
                    .key
                    .as_ref()
                    .is_none_or(|k| k.check_hello(&challenge, &nonce, p.priority, p.port, claimed, tag));
                let proof = shared.key.as_ref().map_or([0; MAC_BYTES], |k| k.welcome_mac(&challenge, &nonce));
                if !welcome(shared, sock, &p, proven, &proof) {
                    return Ok(());
                }
                let _ = sock.set_read_timeout(None);
                peer = Some(p);
            }
            kind @ (Kind::Welcome | Kind::Refuse | Kind::Challenge) => {
                return Err(FrameError::Direction(kind))
            }
            Kind::Data => {
                let Some(p) = &peer else { return Err(FrameError::DataBeforeHello) };
                if let Some(msg) = reasm.push(&frame.header, &frame.payload)? {
                    if !deliver(shared, p, msg) {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// Answer a hello: `Welcome` (with this agent's `proof` of the cluster key) if the hello
/// proved the key and the flow may come in (the agent is open, or the control plane
/// admitted it here), else `Refuse` with the reason, counted; false if refused.
fn welcome(shared: &Shared, sock: &Arc<TcpStream>, p: &Peer, proven: bool, proof: &[u8]) -> bool {
    let key = (p.src.clone(), p.port, p.priority);
    let refusal = {
        let mut st = shared.lock();
        if !proven {
            // Not an agent of this cluster (or a replay): refused whatever the admission.
            let reason = format!(
                "the hello from {} does not prove the cluster key: only the cluster's agents may \
                 connect to {} (key_file)",
                p.src, shared.endpoint
            );
            st.unauthenticated_hellos += 1;
            st.last_refused = Some(reason.clone());
            Some(reason)
        } else if shared.cfg.open || st.admitted.contains_key(&key) {
            if let Some(c) = st.peers.iter_mut().find(|c| Arc::ptr_eq(&c.sock, sock)) {
                c.flow = Some(key);
            }
            None
        } else {
            let reason = format!(
                "the flow from {} to port {} (priority {}) is not admitted at {}: the control plane \
                 did not admit it, and the agent is not open",
                p.src, p.port, p.priority, shared.endpoint
            );
            st.refused_flows += 1;
            st.last_refused = Some(reason.clone());
            Some(reason)
        }
    };
    let (kind, payload) = match &refusal {
        None => (Kind::Welcome, proof),
        Some(r) => (Kind::Refuse, r.as_bytes()),
    };
    let mut h = [0u8; HEADER_BYTES];
    Header { kind, flags: 0, priority: p.priority, length: payload.len() as u32, message: 0 }.encode(&mut h);
    let sent = (&**sock).write_all(&h).and_then(|_| (&**sock).write_all(payload));
    if refusal.is_some() {
        // Let the sender read why before the connection goes (closing with its unread data
        // in our buffer would reset it and lose the reason).
        let _ = sock.shutdown(Shutdown::Write);
        let _ = sock.set_read_timeout(Some(Duration::from_millis(200)));
        let _ = io::Read::read(&mut &**sock, &mut [0u8; 4096]);
    }
    sent.is_ok() && refusal.is_none()
}

/// Close the connections carrying incoming flow `key` (its admission ended).
fn close_incoming(st: &State, key: &Incoming) {
    for c in st.peers.iter().filter(|c| c.flow.as_ref() == Some(key)) {
        let _ = c.sock.shutdown(Shutdown::Both);
    }
}

/// Hand a message to its port's inbox (waiting while the inbox is full); false when the
/// agent is shutting down.
fn deliver(shared: &Arc<Shared>, p: &Peer, data: Vec<u8>) -> bool {
    let len = data.len() as u64;
    {
        let mut st = shared.lock();
        let e = st.received.entry((p.src.clone(), p.priority)).or_insert((0, 0));
        e.0 += len;
        e.1 += 1;
        if shared.cfg.deliver && !shared.cfg.echo {
            loop {
                if st.shutdown {
                    return false;
                }
                let Some(inbox) = st.ports.get_mut(&p.port) else {
                    st.undeliverable += 1;
                    return true;
                };
                // Room for it, or an empty inbox (a message longer than the bound still goes).
                if inbox.bytes + len <= shared.cfg.inbox_bytes || inbox.messages.is_empty() {
                    inbox.bytes += len;
                    inbox.messages.push_back(Message { src: p.src.clone(), priority: p.priority, data });
                    shared.arrivals.notify_all();
                    return true;
                }
                st = shared.wait(&shared.progress, st, Some(Duration::from_millis(100)));
            }
        }
    }
    if shared.cfg.echo {
        // The far end of a ping-pong: the reply goes through this agent like any send.
        let _ = send(shared, p.port, &p.src, p.priority, data);
    }
    true
}

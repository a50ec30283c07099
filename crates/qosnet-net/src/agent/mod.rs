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

mod config;
mod dispatch_loop;
mod drain_loop;
mod receive;
mod send;
mod state;
mod stats;
mod writer_loop;

pub use self::config::*;
use self::dispatch_loop::dispatch_loop;
use self::drain_loop::drain_loop;
use self::receive::accept_loop;
use self::send::send;
use self::state::*;
pub use self::stats::{AdmittedStats, FlowStats, Message, ReceivedStats, Stats};
pub use crate::error::NetError;

use crate::auth::ClusterKey;
use crate::endpoint::{self, Port};
use crate::frame::HEADER_BYTES;
use crate::link::LinkClock;
use crate::pacing;
use qosnet_rate::idt_ticks;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

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
    ///
    /// The lease is the control plane's, not the agent's: the time its lease of the job or
    /// flow has left, by the service's clock, which the agent counts from now on its
    /// monotonic clock (`expire_leases`). A call replaces the end, never extends it, so the
    /// agent holds a reservation exactly as long as it was last told. A duration rather
    /// than an end, because an end would be read against this host's wall clock, and its
    /// skew from the service's would become time held too long or dropped too early
    /// (`python/qosnet/dataplane/control.py`, "One lease clock", gives the failure cases).
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
    /// control plane); with a `lease` the admission ends when it runs out unless renewed
    /// (the control plane's time left, replacing the admission's end: as `reserve_from`).
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

//! The agent's state, shared by its threads under one lock (`Shared`): flows with their
//! queues and reservations, the local ports and their inboxes, the peers; and the state
//! transitions every thread uses (a flow's slot, its reservation's removal, a failure,
//! lease expiry).

use super::config::*;
use super::stats::*;
use crate::auth::ClusterKey;
use crate::dispatch::Dispatch;
use crate::endpoint::Port;
use crate::frame::{Header, Kind, FLAG_LAST, HEADER_BYTES};
use crate::link::LinkClock;
use crate::pacing;
use qosnet_rate::Ticks;
use std::collections::{HashMap, VecDeque};
use std::net::{Shutdown, TcpStream};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub(super) struct OutMessage {
    pub(super) data: Vec<u8>,
    pub(super) offset: usize,
    pub(super) id: u32,
}

pub(super) struct Reservation {
    pub(super) bits_per_second: f64,
    pub(super) idt: Ticks,
    /// Rate-control index in `Dispatch` (agent back end).
    pub(super) rc: Option<u32>,
    pub(super) expires: Option<Instant>,
}

/// The rest of a packet its socket did not take (the socket was full).
pub(super) struct Blocked {
    pub(super) rest: Vec<u8>,
    pub(super) since: Instant,
}

pub(super) struct Flow {
    pub(super) port: Port,
    pub(super) dst: String,
    pub(super) priority: u8,
    pub(super) sock: Option<Arc<TcpStream>>,
    pub(super) queue: VecDeque<OutMessage>,
    pub(super) queued_bytes: u64,
    pub(super) next_message: u32,
    pub(super) reservation: Option<Reservation>,
    pub(super) failed: Option<String>,
    pub(super) bytes_sent: u64,
    pub(super) packets_sent: u64,
    pub(super) messages_sent: u64,
    /// Agent back end: the socket was full; the drain thread finishes this packet, and
    /// until then the flow is out of the dispatch discipline.
    pub(super) blocked: Option<Blocked>,
    pub(super) stalls: u64,
    /// Kernel back end: the flow's writer thread is running.
    pub(super) writer: bool,
}

/// Messages received for one local port, waiting for its reader.
#[derive(Default)]
pub(super) struct Inbox {
    pub(super) messages: VecDeque<Message>,
    pub(super) bytes: u64,
}

pub(super) type FlowKey = (Port, String, u8);

/// An incoming flow: (source endpoint, local destination port, priority).
pub(super) type Incoming = (String, Port, u8);

/// A connection from a peer, and the incoming flow it carries once its hello is accepted.
pub(super) struct PeerConn {
    pub(super) sock: Arc<TcpStream>,
    pub(super) flow: Option<Incoming>,
}

#[derive(Default)]
pub(super) struct State {
    pub(super) flows: Vec<Flow>,
    pub(super) index: HashMap<FlowKey, u32>,
    pub(super) dispatch: Dispatch,
    /// The open local ports and what arrived for each.
    pub(super) ports: HashMap<Port, Inbox>,
    pub(super) received: HashMap<(String, u8), (u64, u64)>,
    pub(super) peers: Vec<PeerConn>,
    /// Incoming flows admitted here, each with its lease's end (None: no lease).
    pub(super) admitted: HashMap<Incoming, Option<Instant>>,
    pub(super) shutdown: bool,
    pub(super) refused_sends: u64,
    pub(super) expired_leases: u64,
    pub(super) undeliverable: u64,
    pub(super) refused_flows: u64,
    pub(super) last_refused: Option<String>,
    pub(super) last_malformed: Option<String>,
    pub(super) unauthenticated_hellos: u64,
    /// The host's link (agent back end), if its rate is known.
    pub(super) link: Option<LinkClock>,
}

pub(super) struct Shared {
    pub(super) cfg: AgentConfig,
    /// The cluster key, if configured (`auth`).
    pub(super) key: Option<ClusterKey>,
    pub(super) endpoint: String,
    pub(super) start: Instant,
    pub(super) state: Mutex<State>,
    /// The dispatcher (and kernel writers) have work.
    pub(super) work: Condvar,
    /// A flow's queue shrank or failed, or an inbox made room: what senders, flushes and
    /// deliveries wait for. Notified per packet, so receivers do not wait on it.
    pub(super) progress: Condvar,
    /// A message arrived at an inbox, a port closed, or shutdown: what a receive waits for
    /// (apart from `progress`, so that a thread blocked in `recv` is not woken by every
    /// packet the dispatcher sends: a daemon's clients each have one).
    pub(super) arrivals: Condvar,
    pub(super) malformed: AtomicU64,
    pub(super) stopping: AtomicBool,
    /// Wakes the drain thread's poll (an eventfd): a flow blocked, or shutdown.
    pub(super) drain_wake: OwnedFd,
    /// Kernel back end: the flows' writer threads.
    pub(super) writers: Mutex<Vec<JoinHandle<()>>>,
}

impl Shared {
    pub(super) fn now(&self) -> Ticks {
        self.start.elapsed().as_nanos() as Ticks
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking thread must not take the agent down with a poisoned lock.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn wake_drain(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a valid local to the eventfd this struct owns.
        unsafe { libc::write(self.drain_wake.as_raw_fd(), &one as *const u64 as *const libc::c_void, 8) };
    }

    pub(super) fn wait<'a>(
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

pub(super) fn flow_slot(st: &mut State, port: Port, dst: &str, priority: u8) -> u32 {
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

pub(super) fn remove_reservation(shared: &Shared, st: &mut State, slot: u32) -> bool {
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
pub(super) fn reserved_sum(st: &State) -> f64 {
    st.flows.iter().filter_map(|f| f.reservation.as_ref()).map(|r| r.bits_per_second).sum()
}

/// The kernel back end's rates: each reserved flow's socket paced at its reservation,
/// scaled down in proportion when the reservations sum to more than the link carries as
/// payload (an open agent, a test: admission keeps a closed one within it), so that the
/// flows still share by 1/IDT, as the agent back end's least-NDT order and the simulator's
/// NIC give (004 §3.3). Unreserved flows stay unpaced: holding them to what the reserved
/// leave is the host qdisc's part (the reserved flows' packets are marked, `pacing`).
pub(super) fn kernel_pacing(shared: &Shared, st: &State) {
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
pub(super) fn frees_waiters(before: u64, after: u64, limit: u64) -> bool {
    after == 0 || (before >= limit && after < limit)
}

/// Take the next packet of `flow` into `buf` (header and payload); whether the flow has
/// more, and the packet's payload bytes.
pub(super) fn take_packet(flow: &mut Flow, packet_bytes: usize, buf: &mut Vec<u8>) -> (bool, usize) {
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

pub(super) fn fail_flow(st: &mut State, slot: u32, reason: String) {
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

/// Remove reservations and admissions whose lease ran out; the next lease's end. The ends
/// are the control plane's leases counted on this host's monotonic clock (`Instant`: a
/// wall clock stepped by NTP moves none of them); the agent never renews one itself, so
/// at an end nothing is asked: it stops pacing for a job or flow the service no longer
/// holds (`Agent::reserve_from`).
pub(super) fn expire_leases(shared: &Shared, st: &mut State) -> Option<Instant> {
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

/// Close the connections carrying incoming flow `key` (its admission ended).
pub(super) fn close_incoming(st: &State, key: &Incoming) {
    for c in st.peers.iter().filter(|c| c.flow.as_ref() == Some(key)) {
        let _ = c.sock.shutdown(Shutdown::Both);
    }
}

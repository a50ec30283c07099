//! The agent back end's dispatcher thread: every packet of every flow, in the order
//! `Dispatch` gives (document 004 §3.3), written without ever waiting on a socket.

use super::state::*;
use crate::dispatch::Pick;
use crate::frame::HEADER_BYTES;
use crate::link::LinkClock;
use qosnet_rate::Ticks;
use std::io::{self};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::sync::{Arc, MutexGuard};
use std::time::{Duration, Instant};

/// How long an unregulated flow whose socket is full keeps its turn in the ring: long
/// enough for a congested socket to take the rest of a packet as TCP's window reopens,
/// short enough that a peer that stopped reading delays the host's other flows by at
/// most this (they waited up to `peer_timeout`, 10 s, when writes blocked) before its
/// flow sits out.
const RING_WAIT: Duration = Duration::from_millis(500);

/// Write as much of `buf` as `sock` takes without waiting; the count written.
pub(super) fn write_now(sock: &TcpStream, buf: &[u8]) -> io::Result<usize> {
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
pub(super) const SPIN_NS: Ticks = 50_000;

/// Sleep until `wake` (a reserved flow's NDT, the link free again), a lease's end, or new
/// work. A wait shorter than the kernel's timer slack (~50 µs) is spun instead: a sleep
/// would overshoot it, and although NDT and the link's clock catch up afterwards (the
/// long-run rates hold), the packet in flight would be late by the overshoot.
pub(super) fn wait_until<'a>(
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
pub(super) fn dispatch_loop(shared: Arc<Shared>) {
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

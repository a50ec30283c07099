//! The drain thread (agent back end): finishes the packets a full socket did not take,
//! while their flows sit out of the dispatch discipline.

use super::dispatch_loop::write_now;
use super::state::*;
use std::os::fd::AsRawFd;
use std::sync::Arc;

/// Finishes the packets of flows whose sockets were full, waiting for each socket to take
/// more (poll), then returns the flow to the dispatch discipline. A flow blocked longer than
/// `peer_timeout` fails (its peer is gone or stuck).
pub(super) fn drain_loop(shared: Arc<Shared>) {
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

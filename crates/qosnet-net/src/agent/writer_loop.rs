//! The kernel back end's writer thread, one per flow: writes as fast as the socket takes;
//! the socket's `SO_MAX_PACING_RATE` is the reservation (`pacing`).

use super::state::*;
use crate::frame::HEADER_BYTES;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// The kernel back end's writer for one flow: as fast as the (paced) socket takes.
pub(super) fn writer_loop(shared: Arc<Shared>, slot: u32) {
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

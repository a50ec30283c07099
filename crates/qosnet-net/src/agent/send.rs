//! The sending side of a flow: its connection to the peer agent (hello, the cluster key's
//! proof, the receiver's answer) and queueing a message on it.

use super::config::*;
use super::state::*;
use super::writer_loop::writer_loop;
use crate::auth::{self, Nonce, MAC_BYTES, NONCE_BYTES};
use crate::endpoint::{self, Port};
use crate::error::NetError;
use crate::frame::{self, Header, Kind, HEADER_BYTES};
use crate::pacing;
use std::io::{self, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(super) fn connect(shared: &Shared, port: Port, dst: &str, priority: u8) -> Result<TcpStream, NetError> {
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
pub(super) const MAX_REFUSAL_BYTES: u32 = 64 << 10;

/// Queue a message on flow (`port`, `dst`, `priority`); waits while the flow has
/// `queue_bytes` queued. Errors if the flow is not admitted or has failed.
pub(super) fn send(
    shared: &Arc<Shared>,
    port: Port,
    dst: &str,
    priority: u8,
    data: Vec<u8>,
) -> Result<(), NetError> {
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

//! The receiving side: accepting peers' connections, answering their hellos (admission
//! at the destination, document 004 §3.4), reading their packets and delivering whole
//! messages to the local ports' inboxes.

use super::send::send;
use super::state::*;
use super::stats::*;
use crate::auth::{self, Nonce, MAC_BYTES, NONCE_BYTES};
use crate::endpoint::{self, Port};
use crate::frame::{self, FrameError, Header, Kind, Reassembly, HEADER_BYTES, MAX_PACKET_BYTES};
use std::io::{self, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

pub(super) fn accept_loop(shared: Arc<Shared>, listener: TcpListener) {
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
pub(super) struct Peer {
    pub(super) src: String,
    pub(super) priority: u8,
    pub(super) port: Port,
}

/// Read one connection: a hello (answered with the admission's verdict), then data frames
/// reassembled into messages. A refused frame ends the connection with its reason; I/O
/// errors, a clean close and a refused flow end it quietly (the refusal counted apart).
pub(super) fn read_loop(shared: &Arc<Shared>, sock: &Arc<TcpStream>) -> Result<(), FrameError> {
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
pub(super) fn welcome(shared: &Shared, sock: &Arc<TcpStream>, p: &Peer, proven: bool, proof: &[u8]) -> bool {
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

/// Hand a message to its port's inbox (waiting while the inbox is full); false when the
/// agent is shutting down.
pub(super) fn deliver(shared: &Arc<Shared>, p: &Peer, data: Vec<u8>) -> bool {
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

//! The host's agent as a daemon: the trusted rate controller every send of the host goes
//! through (document 004 §3.2, the NIC firmware's role). It owns the host's agent (its
//! sockets to peers and its one scheduler) and serves local applications over a Unix domain
//! socket (`local`); an application has no socket to a peer of its own, so it cannot pass
//! the pacing by. Each application opens a local port (004 §4.2's GM port); its flows are
//! scheduled with every other application's by the same dispatcher, so two applications'
//! reserved flows share the host's link by 1/IDT exactly as two processes' flows shared a
//! NIC.
//!
//! Trust and bounds:
//! - who may connect is the socket file's permission (`mode`, set at bind); who connected is
//!   the kernel's word (`SO_PEERCRED`): only a trusted uid (root, the daemon's own, or
//!   `trusted_uids`) may install or remove reservations, which otherwise come from the
//!   control plane, or read every application's flows; an application only sends,
//!   receives and reads its own flows' counters;
//! - memory a client can make the daemon hold is bounded: at most `max_clients`
//!   connections (`max_clients_per_uid` per user), a request is refused above
//!   `max_request_bytes` before anything is allocated and read only as its bytes arrive,
//!   a flow's queue is bounded by the agent's `queue_bytes` (a send waits), a port's inbox
//!   by `inbox_bytes`; a connection must open or attach a port within `open_timeout`;
//! - a client that dies (crash, kill) closes its connection: its port is closed, its queued
//!   messages dropped and its flows' connections shut; the daemon and the other clients go
//!   on. A blocking receive notices its client's hang-up within `POLL_SLICE`.

use crate::agent::{Agent, AgentConfig};
use crate::endpoint::{self, Port};
use crate::error::NetError;
use crate::local::{self, Reader, Writer};
use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often a blocking receive checks that its client is still there.
const POLL_SLICE: Duration = Duration::from_millis(200);

/// The daemon's local side (the agent's own is `AgentConfig`).
#[derive(Clone, Debug)]
pub struct DaemonConfig {
    /// The Unix socket applications connect to.
    pub socket: PathBuf,
    /// The socket file's permission bits (who may connect), e.g. 0o660.
    pub mode: u32,
    pub max_clients: usize,
    pub max_clients_per_uid: usize,
    /// The longest request (a message to send, with its header), bytes.
    pub max_request_bytes: u64,
    /// Users besides root and the daemon's own that may reserve and release.
    pub trusted_uids: Vec<u32>,
    /// A new connection must open or attach a port within this time.
    pub open_timeout: Duration,
}

impl Default for DaemonConfig {
    fn default() -> DaemonConfig {
        DaemonConfig {
            socket: PathBuf::from("/run/qosnet/agent.sock"),
            mode: 0o660,
            max_clients: 256,
            max_clients_per_uid: 64,
            max_request_bytes: 64 << 20,
            trusted_uids: Vec::new(),
            open_timeout: Duration::from_secs(5),
        }
    }
}

impl DaemonConfig {
    pub fn validate(&self) -> Result<(), NetError> {
        let bad = |m: String| Err(NetError::Config(m));
        if self.mode > 0o777 {
            return bad(format!("mode: must be permission bits 0..=0o777, got {:#o}", self.mode));
        }
        if self.max_clients == 0 {
            return bad("max_clients: must be >= 1, got 0".into());
        }
        if self.max_clients_per_uid == 0 {
            return bad("max_clients_per_uid: must be >= 1, got 0".into());
        }
        if self.max_request_bytes < 1024 {
            return bad(format!("max_request_bytes: must be >= 1024, got {}", self.max_request_bytes));
        }
        if self.open_timeout.is_zero() {
            return bad("open_timeout: must be > 0 s, got 0".into());
        }
        Ok(())
    }
}

/// Who is on the other end of a local connection (the kernel's `SO_PEERCRED`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub pid: i32,
    pub uid: u32,
    pub gid: u32,
}

pub fn peer_credentials(sock: &UnixStream) -> io::Result<Credentials> {
    let mut c = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: getsockopt writes at most `len` bytes into a valid local ucred.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            &mut c as *mut libc::ucred as *mut libc::c_void,
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Credentials { pid: c.pid, uid: c.uid, gid: c.gid })
}

/// The daemon's counters of its local side.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct DaemonStats {
    pub clients: usize,
    pub ports: Vec<Port>,
    /// Connections refused (too many, or over a user's limit).
    pub refused_clients: u64,
    /// Requests refused as malformed (one that breaks the framing ends its connection).
    pub malformed_requests: u64,
    /// Reserve/release requests from untrusted users.
    pub denied_requests: u64,
}

#[derive(Default)]
struct Clients {
    per_uid: HashMap<u32, usize>,
    total: usize,
    /// Open ports and their owner's pid.
    owners: HashMap<Port, i32>,
}

struct Inner {
    cfg: DaemonConfig,
    agent: Agent,
    clients: Mutex<Clients>,
    refused: AtomicU64,
    malformed: AtomicU64,
    denied: AtomicU64,
    stopping: AtomicBool,
    own_uid: u32,
}

/// A running daemon. Dropping it shuts it down and removes its socket file.
pub struct Daemon {
    inner: Arc<Inner>,
    accept: Mutex<Option<JoinHandle<()>>>,
}

impl Daemon {
    pub fn start(agent: AgentConfig, cfg: DaemonConfig) -> Result<Daemon, NetError> {
        cfg.validate()?;
        if !agent.open && agent.key_file.is_none() {
            // Without the key any process of an admitted host could connect to this agent
            // directly and send past its own host's pacing (`auth`).
            return Err(NetError::Config(
                "key_file: a closed daemon needs the cluster key file (peer agents prove it at \
                 every hello, so only agents reach agents); give key_file, or run the daemon open"
                    .into(),
            ));
        }
        // The agent first: a bad agent setting must not leave a socket file behind.
        let agent = Agent::start(agent)?;
        let listener = bind(&cfg.socket, cfg.mode)?;
        // Port 0 (the service's host-level reservations name it) is an application's to open.
        agent.close_port(0);
        // SAFETY: geteuid has no preconditions.
        let own_uid = unsafe { libc::geteuid() };
        let inner = Arc::new(Inner {
            cfg,
            agent,
            clients: Mutex::new(Clients::default()),
            refused: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
            denied: AtomicU64::new(0),
            stopping: AtomicBool::new(false),
            own_uid,
        });
        let i = inner.clone();
        let accept = std::thread::Builder::new()
            .name("qosnet-local".into())
            .spawn(move || accept_loop(i, listener))?;
        Ok(Daemon { inner, accept: Mutex::new(Some(accept)) })
    }

    /// The agent (its endpoint, reservations, counters: the control plane's side).
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    pub fn socket(&self) -> &Path {
        &self.inner.cfg.socket
    }

    pub fn stats(&self) -> DaemonStats {
        let c = self.inner.clients.lock().unwrap_or_else(|p| p.into_inner());
        let mut ports: Vec<Port> = c.owners.keys().copied().collect();
        ports.sort_unstable();
        DaemonStats {
            clients: c.total,
            ports,
            refused_clients: self.inner.refused.load(Ordering::Relaxed),
            malformed_requests: self.inner.malformed.load(Ordering::Relaxed),
            denied_requests: self.inner.denied.load(Ordering::Relaxed),
        }
    }

    pub fn shutdown(&self) {
        if self.inner.stopping.swap(true, Ordering::SeqCst) {
            return;
        }
        self.inner.agent.shutdown();
        let _ = UnixStream::connect(&self.inner.cfg.socket);
        if let Some(h) = self.accept.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_file(&self.inner.cfg.socket);
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Bind the socket file: a stale one (nobody listening) is replaced, a live one refused.
fn bind(path: &Path, mode: u32) -> Result<UnixListener, NetError> {
    let cfg = |m: String| NetError::Config(format!("socket: {m}"));
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        // Only a socket nobody listens on is ours to replace: never some other file.
        if !meta.file_type().is_socket() {
            return Err(cfg(format!("{} exists and is not a socket", path.display())));
        }
        if UnixStream::connect(path).is_ok() {
            return Err(cfg(format!("{} is in use by a running daemon", path.display())));
        }
        std::fs::remove_file(path)
            .map_err(|e| cfg(format!("cannot remove stale {}: {e}", path.display())))?;
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| cfg(format!("cannot create {}: {e}", dir.display())))?;
    }
    let l = UnixListener::bind(path).map_err(|e| cfg(format!("cannot bind {}: {e}", path.display())))?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| cfg(format!("cannot set the mode of {}: {e}", path.display())))?;
    Ok(l)
}

fn accept_loop(inner: Arc<Inner>, listener: UnixListener) {
    for conn in listener.incoming() {
        if inner.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(sock) = conn else { continue };
        let Ok(cred) = peer_credentials(&sock) else { continue };
        {
            let mut c = inner.clients.lock().unwrap_or_else(|p| p.into_inner());
            let mine = c.per_uid.get(&cred.uid).copied().unwrap_or(0);
            if c.total >= inner.cfg.max_clients || mine >= inner.cfg.max_clients_per_uid {
                drop(c);
                inner.refused.fetch_add(1, Ordering::Relaxed);
                let msg = format!(
                    "too many clients (max_clients {}, max_clients_per_uid {})",
                    inner.cfg.max_clients, inner.cfg.max_clients_per_uid
                );
                let _ = reply_err(&mut &sock, local::E_DENIED, &msg);
                // Read what it sent first (briefly), so that closing does not reset the
                // connection before the client reads why.
                let _ = sock.shutdown(std::net::Shutdown::Write);
                let _ = sock.set_read_timeout(Some(Duration::from_millis(20)));
                let _ = io::Read::read(&mut &sock, &mut [0u8; 1024]);
                continue;
            }
            c.total += 1;
            *c.per_uid.entry(cred.uid).or_insert(0) += 1;
        }
        let i = inner.clone();
        let spawned = std::thread::Builder::new().name("qosnet-client".into()).spawn(move || {
            serve_client(&i, sock, cred);
            let mut c = i.clients.lock().unwrap_or_else(|p| p.into_inner());
            c.total -= 1;
            if let Some(n) = c.per_uid.get_mut(&cred.uid) {
                *n -= 1;
            }
        });
        if spawned.is_err() {
            let mut c = inner.clients.lock().unwrap_or_else(|p| p.into_inner());
            c.total -= 1;
            if let Some(n) = c.per_uid.get_mut(&cred.uid) {
                *n -= 1;
            }
        }
    }
}

fn reply_err(out: &mut impl Write, kind: u8, msg: &str) -> io::Result<()> {
    let mut w = Writer::new(kind);
    w.0.extend_from_slice(msg.as_bytes());
    w.send(out, &[])?;
    out.flush()
}

/// A request's outcome: a reply body, or an error kind and message.
type Outcome = Result<Writer, (u8, String)>;

fn net(e: NetError) -> (u8, String) {
    (local::error_kind(&e), e.to_string())
}

fn bad(e: io::Error) -> (u8, String) {
    (local::E_MALFORMED, e.to_string())
}

/// Serve one connection until it closes or sends something malformed.
fn serve_client(inner: &Inner, sock: UnixStream, cred: Credentials) {
    let max = inner.cfg.max_request_bytes + 1024;
    let _ = sock.set_read_timeout(Some(inner.cfg.open_timeout));
    let mut r = BufReader::with_capacity(64 << 10, &sock);
    let mut w = BufWriter::with_capacity(64 << 10, &sock);
    // The port this connection acts for, and whether it owns it (closes it at the end).
    let mut port: Option<(Port, bool)> = None;
    loop {
        let (op, body) = match local::read_frame(&mut r, max) {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                // Over-long: the stream is out of step, so it ends here (a truncated one, or
                // a silent one past `open_timeout`, just ends: its client went away).
                if e.kind() == io::ErrorKind::InvalidData {
                    inner.malformed.fetch_add(1, Ordering::Relaxed);
                    let _ = reply_err(&mut w, local::E_MALFORMED, &e.to_string());
                }
                break;
            }
        };
        let mut b = Reader::new(&body);
        let outcome: Outcome = match (op, port) {
            (local::OPEN, None) => open(inner, &mut b, cred).map(|(p, out)| {
                port = Some((p, true));
                let _ = sock.set_read_timeout(None);
                out
            }),
            (local::ATTACH, None) => attach(inner, &mut b, cred).map(|p| {
                port = Some((p, false));
                let _ = sock.set_read_timeout(None);
                Writer::new(0)
            }),
            (local::OPEN | local::ATTACH, Some(_)) => {
                Err((local::E_MALFORMED, "the connection already has a port".into()))
            }
            (_, None) => Err((
                local::E_MALFORMED,
                format!("the first request must open or attach a port, got op {op}"),
            )),
            (local::SEND_PIPELINED, Some((p, _))) => {
                // Answered only when it fails (`local`: the client does not wait for it).
                let Err(failure) = send(inner, body, p) else { continue };
                if failure.0 == local::E_MALFORMED {
                    inner.malformed.fetch_add(1, Ordering::Relaxed);
                }
                if reply_async(&mut w, failure).is_err() {
                    break;
                }
                continue;
            }
            (local::SEND, Some((p, _))) => {
                send(inner, body, p).map(|()| Writer::new(0)).map_err(|(kind, msg, _)| (kind, msg))
            }
            (_, Some((p, _))) => request(inner, &sock, op, &mut b, p, cred),
        };
        let malformed = matches!(&outcome, Err((local::E_MALFORMED, _)));
        let sent = match outcome {
            Ok(out) => out.send(&mut w, &[]).and_then(|_| w.flush()),
            Err((kind, msg)) => reply_err(&mut w, kind, &msg),
        };
        if malformed {
            inner.malformed.fetch_add(1, Ordering::Relaxed);
        }
        // A connection without a port has not said who it is for: one wrong step ends it.
        if sent.is_err() || (port.is_none() && malformed) {
            break;
        }
    }
    if let Some((p, true)) = port {
        inner.clients.lock().unwrap_or_else(|e| e.into_inner()).owners.remove(&p);
        inner.agent.close_port(p);
    }
}

fn open(inner: &Inner, b: &mut Reader, cred: Credentials) -> Result<(Port, Writer), (u8, String)> {
    let want = b.u32().map_err(bad)?;
    b.end().map_err(bad)?;
    let p = inner.agent.open_port((want != local::ANY_PORT).then_some(want)).map_err(net)?;
    inner.clients.lock().unwrap_or_else(|e| e.into_inner()).owners.insert(p, cred.pid);
    let ep = endpoint::join(inner.agent.endpoint(), p);
    Ok((p, Writer::new(0).u32(p).str(&ep)))
}

fn attach(inner: &Inner, b: &mut Reader, cred: Credentials) -> Result<Port, (u8, String)> {
    let p = b.u32().map_err(bad)?;
    b.end().map_err(bad)?;
    let owner = inner.clients.lock().unwrap_or_else(|e| e.into_inner()).owners.get(&p).copied();
    match owner {
        Some(pid) if pid == cred.pid => Ok(p),
        Some(_) => Err((local::E_DENIED, format!("port {p} belongs to another process"))),
        None => Err((local::E_PORT, format!("port {p} is not open"))),
    }
}

/// A failed send: the error kind and message, and its flow (priority, dst) when the
/// request named one.
type SendFailure = (u8, String, Option<(u8, String)>);

/// A send (`SEND` or `SEND_PIPELINED`; body: priority u8, dst, data): the request's own
/// buffer becomes the message (its header moved off the front, no second allocation).
fn send(inner: &Inner, mut body: Vec<u8>, port: Port) -> Result<(), SendFailure> {
    let mut b = Reader::new(&body);
    let malformed = |e: io::Error| (local::E_MALFORMED, e.to_string(), None);
    let priority = b.u8().map_err(malformed)?;
    let dst = b.str().map_err(malformed)?.to_string();
    let head = body.len() - b.rest().len();
    body.drain(..head);
    inner.agent.send_from(port, &dst, priority, body).map_err(|e| {
        let (kind, msg) = net(e);
        (kind, msg, Some((priority, dst)))
    })
}

/// The failure of a pipelined send (`local`'s `ASYNC` reply): priority u8, dst, message.
fn reply_async(out: &mut impl Write, (kind, msg, flow): SendFailure) -> io::Result<()> {
    let (priority, dst) = flow.unwrap_or_default();
    let mut w = Writer::new(kind | local::ASYNC).u8(priority).str(&dst);
    w.0.extend_from_slice(msg.as_bytes());
    w.send(out, &[])?;
    out.flush()
}

fn trusted(inner: &Inner, uid: u32) -> bool {
    uid == 0 || uid == inner.own_uid || inner.cfg.trusted_uids.contains(&uid)
}

/// Every request of a connection with a port but sends (`SEND`, `SEND_PIPELINED`: `send`).
fn request(
    inner: &Inner,
    sock: &UnixStream,
    op: u8,
    b: &mut Reader,
    port: Port,
    cred: Credentials,
) -> Outcome {
    let a = &inner.agent;
    match op {
        local::FLUSH => {
            let priority = b.u8().map_err(bad)?;
            let timeout = local::millis(b.u64().map_err(bad)?).unwrap_or(Duration::MAX);
            let dst = b.str().map_err(bad)?;
            b.end().map_err(bad)?;
            a.flush_from(port, dst, priority, timeout).map_err(net)?;
            Ok(Writer::new(0))
        }
        local::RECV => {
            let timeout = local::millis(b.u64().map_err(bad)?);
            b.end().map_err(bad)?;
            let m = recv_watching(a, sock, port, timeout).map_err(net)?;
            let mut w = Writer::new(0).u8(m.priority).str(&m.src);
            w.0.extend_from_slice(&m.data);
            Ok(w)
        }
        local::STATS => {
            b.end().map_err(bad)?;
            let mut stats = a.stats();
            // An application sees its own flows; the operator's users see the host's.
            if !trusted(inner, cred.uid) {
                stats.flows.retain(|f| f.port == port);
            }
            let json = serde_json::to_vec(&stats).map_err(|e| (local::E_OTHER, e.to_string()))?;
            let mut w = Writer::new(0);
            w.0.extend_from_slice(&json);
            Ok(w)
        }
        local::RESERVE | local::RELEASE => {
            if !trusted(inner, cred.uid) {
                inner.denied.fetch_add(1, Ordering::Relaxed);
                return Err((
                    local::E_DENIED,
                    format!(
                        "uid {} may not reserve or release: reservations come from the control plane",
                        cred.uid
                    ),
                ));
            }
            let priority = b.u8().map_err(bad)?;
            if op == local::RESERVE {
                let bps = b.f64().map_err(bad)?;
                let lease = local::millis(b.u64().map_err(bad)?);
                let p = b.u32().map_err(bad)?;
                let dst = b.str().map_err(bad)?;
                b.end().map_err(bad)?;
                let p = if p == local::ANY_PORT { port } else { p };
                a.reserve_from(p, dst, priority, bps, lease).map_err(net)?;
                Ok(Writer::new(0))
            } else {
                let p = b.u32().map_err(bad)?;
                let dst = b.str().map_err(bad)?;
                b.end().map_err(bad)?;
                let p = if p == local::ANY_PORT { port } else { p };
                Ok(Writer::new(0).u8(a.release_from(p, dst, priority) as u8))
            }
        }
        _ => Err((local::E_MALFORMED, format!("op: must be one of 1..=9, got {op}"))),
    }
}

/// `recv_at` in slices, giving up when the client hangs up (a receive must not outlive its
/// application).
fn recv_watching(
    a: &Agent,
    sock: &UnixStream,
    port: Port,
    timeout: Option<Duration>,
) -> Result<crate::Message, NetError> {
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    loop {
        let slice = match deadline {
            None => POLL_SLICE,
            Some(d) => d.saturating_duration_since(std::time::Instant::now()).min(POLL_SLICE),
        };
        match a.recv_at(port, Some(slice)) {
            Err(NetError::Timeout) => {
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return Err(NetError::Timeout);
                }
                if hung_up(sock) {
                    return Err(NetError::Shutdown);
                }
            }
            other => return other,
        }
    }
}

fn hung_up(sock: &UnixStream) -> bool {
    let mut p = libc::pollfd { fd: sock.as_raw_fd(), events: libc::POLLRDHUP, revents: 0 };
    // SAFETY: polls one valid pollfd without waiting.
    let rc = unsafe { libc::poll(&mut p, 1, 0) };
    rc > 0 && p.revents & (libc::POLLRDHUP | libc::POLLHUP | libc::POLLERR) != 0
}

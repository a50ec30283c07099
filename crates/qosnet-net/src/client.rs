//! An application's handle on its host's daemon (`daemon`), over the local protocol
//! (`local`): the same operations (`PortHandle`) as a library-mode `Agent`, on the
//! application's own port.
//!
//! Sends are pipelined after a flow's first (`local`): a client streams without a Unix-socket
//! round trip per message, and learns of a failure on the flow's next send or flush.
//!
//! Connections, all the port's: requests (stats, reserve, release) on one, receives on
//! another, so a thread blocked in `recv` does not hold up a thread sending, and **one per
//! flow for its sends and flushes**: a flow whose queue in the daemon is full holds up its
//! own connection (the daemon's thread for it waits, and the socket pushes back), never
//! another flow of the same application (document 004 §4.2: GM's send queues are per
//! sub-port, and a sendable token of one never waits behind another's). The extra
//! connections are attached to the port, which the daemon allows only to the same process.

use crate::agent::{Message, Stats};
use crate::endpoint::Port;
use crate::error::NetError;
use crate::handle::PortHandle;
use crate::local::{self, Reader, Writer};
use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// Replies are at most a message and its header.
const MAX_REPLY: u64 = (1 << 30) + 1024;

/// A flow of this port: (destination, priority).
type FlowKey = (String, u8);

struct Conn {
    r: BufReader<UnixStream>,
    w: UnixStream,
    /// Flows whose first send the daemon accepted: their later sends are pipelined.
    pipelined: HashSet<FlowKey>,
    /// Failures of pipelined sends not yet reported, per flow (reported on its next send or
    /// flush); a failure naming no flow (a malformed request) is reported on the next call.
    failed: HashMap<FlowKey, NetError>,
    broken: Option<NetError>,
}

impl Conn {
    fn new(path: &Path) -> Result<Conn, NetError> {
        let s = UnixStream::connect(path).map_err(|e| {
            NetError::Config(format!("socket: cannot reach the agent daemon at {}: {e}", path.display()))
        })?;
        Ok(Conn {
            r: BufReader::with_capacity(64 << 10, s.try_clone()?),
            w: s,
            pipelined: HashSet::new(),
            failed: HashMap::new(),
            broken: None,
        })
    }

    /// Send a request (`tail` after its body) and read the reply body (earlier pipelined
    /// sends' failures ahead of it are kept for their flows).
    fn call(&mut self, req: Writer, tail: &[u8], what: &Req) -> Result<Vec<u8>, NetError> {
        req.send(&mut self.w, tail)?;
        self.w.flush()?;
        loop {
            let (status, body) = local::read_frame(&mut self.r, MAX_REPLY)?.ok_or(NetError::Shutdown)?;
            if status & local::ASYNC != 0 {
                self.record(status & !local::ASYNC, &body);
                continue;
            }
            if status == 0 {
                return Ok(body);
            }
            return Err(error(status, &String::from_utf8_lossy(&body), what));
        }
    }

    /// Send a request that has no reply on success (a pipelined send).
    fn post(&mut self, req: Writer, tail: &[u8]) -> Result<(), NetError> {
        req.send(&mut self.w, tail)?;
        Ok(())
    }

    /// Read the failures of pipelined sends that have arrived, without waiting.
    fn poll_failures(&mut self) -> Result<(), NetError> {
        while !self.r.buffer().is_empty() || readable(&self.w) {
            let (status, body) = local::read_frame(&mut self.r, MAX_REPLY)?.ok_or(NetError::Shutdown)?;
            if status & local::ASYNC == 0 {
                return Err(NetError::Daemon(format!("the daemon sent an unasked reply (status {status})")));
            }
            self.record(status & !local::ASYNC, &body);
        }
        Ok(())
    }

    /// Keep a pipelined send's failure (body: priority u8, dst, message) for its flow; the
    /// flow's next send is a plain one again.
    fn record(&mut self, kind: u8, body: &[u8]) {
        let mut b = Reader::new(body);
        let (Ok(priority), Ok(dst)) = (b.u8(), b.str()) else {
            self.broken = Some(NetError::Daemon("the daemon's report of a failed send is malformed".into()));
            return;
        };
        let msg = String::from_utf8_lossy(b.rest()).into_owned();
        let e = error(kind, &msg, &Req { dst, priority });
        if dst.is_empty() {
            self.broken = Some(e);
            return;
        }
        let key = (dst.to_string(), priority);
        self.pipelined.remove(&key);
        self.failed.entry(key).or_insert(e);
    }

    /// The unreported failure of flow (`dst`, `priority`), or of the connection.
    fn take_failure(&mut self, dst: &str, priority: u8) -> Result<(), NetError> {
        if let Some(e) = self.broken.take() {
            return Err(e);
        }
        if self.failed.is_empty() {
            return Ok(());
        }
        match self.failed.remove(&(dst.to_string(), priority)) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// The socket has something to read now (a reply, or the daemon closed it).
fn readable(s: &UnixStream) -> bool {
    let mut p = libc::pollfd { fd: s.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: polls one valid pollfd without waiting.
    let rc = unsafe { libc::poll(&mut p, 1, 0) };
    rc > 0 && p.revents != 0
}

/// The error a reply's status and message stand for.
fn error(status: u8, msg: &str, what: &Req) -> NetError {
    match status {
        local::E_NOT_ADMITTED => NetError::NotAdmitted { dst: what.dst.into(), priority: what.priority },
        local::E_FLOW_FAILED => NetError::FlowFailed {
            dst: what.dst.into(),
            priority: what.priority,
            reason: msg.rsplit_once("failed: ").map_or(msg.to_string(), |(_, r)| r.to_string()),
        },
        local::E_REFUSED => NetError::Refused {
            dst: what.dst.into(),
            priority: what.priority,
            reason: msg.split_once("receiver: ").map_or(msg.to_string(), |(_, r)| r.to_string()),
        },
        local::E_TIMEOUT => NetError::Timeout,
        local::E_SHUTDOWN => NetError::Shutdown,
        local::E_INVALID | local::E_MALFORMED => NetError::Config(msg.to_string()),
        _ => NetError::Daemon(msg.to_string()),
    }
}

/// What a request was about (to rebuild the error).
#[derive(Default)]
struct Req<'a> {
    dst: &'a str,
    priority: u8,
}

/// A local application's connection to its host's daemon.
pub struct LocalAgent {
    socket: std::path::PathBuf,
    requests: Mutex<Conn>,
    receives: Mutex<Conn>,
    /// Each flow's own connection for its sends and flushes, attached on its first send.
    flows: Mutex<HashMap<FlowKey, Arc<Mutex<Conn>>>>,
    /// Every socket again, to shut them without their locks (a thread may be blocked in
    /// `recv`, or in a full flow's send, holding one).
    shut: Mutex<Vec<UnixStream>>,
    port: Port,
    endpoint: String,
}

fn lock(m: &Mutex<Conn>) -> MutexGuard<'_, Conn> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LocalAgent {
    /// Connect to the daemon at `socket` and open `port` (None: any free port).
    pub fn connect(socket: &Path, port: Option<Port>) -> Result<LocalAgent, NetError> {
        let mut requests = Conn::new(socket)?;
        let body = requests.call(
            Writer::new(local::OPEN).u32(port.unwrap_or(local::ANY_PORT)),
            &[],
            &Req::default(),
        )?;
        let mut b = Reader::new(&body);
        let bad = |_| NetError::Daemon("the daemon's reply to open is malformed".into());
        let port = b.u32().map_err(bad)?;
        let endpoint = b.str().map_err(bad)?.to_string();
        let mut receives = Conn::new(socket)?;
        receives.call(Writer::new(local::ATTACH).u32(port), &[], &Req::default())?;
        let shut = vec![requests.w.try_clone()?, receives.w.try_clone()?];
        Ok(LocalAgent {
            socket: socket.to_path_buf(),
            requests: Mutex::new(requests),
            receives: Mutex::new(receives),
            flows: Mutex::new(HashMap::new()),
            shut: Mutex::new(shut),
            port,
            endpoint,
        })
    }

    /// Flow (`dst`, `priority`)'s own connection, attached to this port on first use.
    fn flow(&self, dst: &str, priority: u8) -> Result<Arc<Mutex<Conn>>, NetError> {
        let key = (dst.to_string(), priority);
        let mut flows = self.flows.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = flows.get(&key) {
            return Ok(c.clone());
        }
        let mut c = Conn::new(&self.socket)?;
        c.call(Writer::new(local::ATTACH).u32(self.port), &[], &Req::default())?;
        self.shut.lock().unwrap_or_else(|p| p.into_inner()).push(c.w.try_clone()?);
        let c = Arc::new(Mutex::new(c));
        flows.insert(key, c.clone());
        Ok(c)
    }

    pub fn port(&self) -> Port {
        self.port
    }
}

impl PortHandle for LocalAgent {
    /// This application's endpoint (its daemon's address and port).
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// A flow's first send waits for the daemon's verdict (admission, the receiver's answer
    /// to the hello); later ones are pipelined (`local`): their failures are reported on the
    /// flow's next send or flush.
    fn send(&self, dst: &str, priority: u8, data: Vec<u8>) -> Result<(), NetError> {
        let flow = self.flow(dst, priority)?;
        let mut c = lock(&flow);
        c.poll_failures()?;
        c.take_failure(dst, priority)?;
        let key = (dst.to_string(), priority);
        if c.pipelined.contains(&key) {
            return c.post(Writer::new(local::SEND_PIPELINED).u8(priority).str(dst), &data);
        }
        let req = Writer::new(local::SEND).u8(priority).str(dst);
        c.call(req, &data, &Req { dst, priority })?;
        c.pipelined.insert(key);
        Ok(())
    }

    fn flush(&self, dst: &str, priority: u8, timeout: Duration) -> Result<(), NetError> {
        let req = Writer::new(local::FLUSH).u8(priority).u64(local::to_millis(Some(timeout))).str(dst);
        // On the flow's own connection, behind its pipelined sends.
        let flow = self.flow(dst, priority)?;
        let mut c = lock(&flow);
        let flushed = c.call(req, &[], &Req { dst, priority }).map(drop);
        c.take_failure(dst, priority)?;
        flushed
    }

    fn recv(&self, timeout: Option<Duration>) -> Result<Message, NetError> {
        let req = Writer::new(local::RECV).u64(local::to_millis(timeout));
        let body = lock(&self.receives).call(req, &[], &Req::default())?;
        let mut b = Reader::new(&body);
        let bad = |_| NetError::Daemon("the daemon's reply to recv is malformed".into());
        let priority = b.u8().map_err(bad)?;
        let src = b.str().map_err(bad)?.to_string();
        Ok(Message { src, priority, data: b.rest().to_vec() })
    }

    fn stats(&self) -> Result<Stats, NetError> {
        let body = lock(&self.requests).call(Writer::new(local::STATS), &[], &Req::default())?;
        serde_json::from_slice(&body)
            .map_err(|e| NetError::Daemon(format!("the daemon's stats are malformed: {e}")))
    }

    /// Reserve the flow from this port (a trusted user only: the daemon refuses others).
    fn reserve(
        &self,
        dst: &str,
        priority: u8,
        bits_per_second: f64,
        lease: Option<Duration>,
    ) -> Result<(), NetError> {
        let req = Writer::new(local::RESERVE)
            .u8(priority)
            .f64(bits_per_second)
            .u64(local::to_millis(lease))
            .u32(local::ANY_PORT)
            .str(dst);
        lock(&self.requests).call(req, &[], &Req { dst, priority }).map(drop)
    }

    fn release(&self, dst: &str, priority: u8) -> Result<bool, NetError> {
        let req = Writer::new(local::RELEASE).u8(priority).u32(local::ANY_PORT).str(dst);
        let body = lock(&self.requests).call(req, &[], &Req { dst, priority })?;
        Ok(body.first() == Some(&1))
    }

    /// Close every connection (the daemon closes the port; a `recv` blocked in another
    /// thread returns an error).
    fn close(&self) {
        for s in self.shut.lock().unwrap_or_else(|p| p.into_inner()).iter() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }
}

impl Drop for LocalAgent {
    fn drop(&mut self) {
        PortHandle::close(self);
    }
}

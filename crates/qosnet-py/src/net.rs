//! Bindings of the data plane (`qosnet-net`): an `Agent` handle that is either a
//! library-mode agent in this process or an application's connection to its host's daemon
//! (one Python API for both), and the `Daemon` itself; convert, release the GIL, map errors.

use crate::error::QosnetError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use pyo3::PyClassInitializer;
use qosnet_net::agent::DSCP_EF;
use qosnet_net::link::WireModel;
use qosnet_net::{
    Agent as Lib, AgentConfig, Backend, Daemon as DaemonInner, DaemonConfig, LocalAgent, NetError as Error,
    PortHandle, Stats,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pyo3::create_exception!(
    _core,
    NetError,
    QosnetError,
    "A data-plane error: a failed flow or peer, an unreachable endpoint, a socket error."
);
pyo3::create_exception!(
    _core,
    FlowNotAdmitted,
    NetError,
    "A flow not admitted: a send with no reservation on an agent that is not open, or a flow \
     its receiver refused (not admitted there)."
);

fn net_error(e: Error) -> PyErr {
    match e {
        Error::Config(m) => pyo3::exceptions::PyValueError::new_err(m),
        Error::PortInUse(_) => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        Error::Rate(_) => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        Error::NotAdmitted { .. } | Error::Refused { .. } => FlowNotAdmitted::new_err(e.to_string()),
        Error::Timeout => pyo3::exceptions::PyTimeoutError::new_err(e.to_string()),
        other => NetError::new_err(other.to_string()),
    }
}

fn seconds(name: &str, s: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(s).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "{name}: must be a finite number of seconds >= 0, got {s}"
        ))
    })
}

/// A handle that is closed by `close()` or by leaving its `with` block (and on garbage
/// collection): the base of `Agent` and `Daemon`, so that closing is written once.
#[pyclass(module = "qosnet._core", name = "_Closing", subclass, frozen)]
pub struct Closing {
    shut: Box<dyn Fn() + Send + Sync>,
}

#[pymethods]
impl Closing {
    /// Stop the agent's threads and close its connections (a daemon's clients' too, and
    /// its socket file is removed); also on garbage collection.
    fn close(&self, py: Python<'_>) {
        let shut = &self.shut;
        py.allow_threads(shut);
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, py: Python<'_>, _t: PyObject, _v: PyObject, _tb: PyObject) {
        self.close(py);
    }
}

/// `value` as a subclass of `Closing` whose `close` runs `shut`.
fn closing<T: pyo3::PyClass<BaseType = Closing>>(
    shut: impl Fn() + Send + Sync + 'static,
    value: T,
) -> PyClassInitializer<T> {
    PyClassInitializer::from(Closing { shut: Box::new(shut) }).add_subclass(value)
}

/// A host's rate-control agent (document 004's NIC firmware, in user space or through the
/// kernel's socket pacing): reserved flows paced by IDT/NDT, others refused unless `open`.
/// `Agent(...)` runs one in this process (library mode); `Agent.connect(socket)` is an
/// application's handle on its host's daemon (`Daemon`, `qosnet agent`), with the same
/// methods.
#[pyclass(module = "qosnet._core", frozen, extends = Closing)]
pub struct Agent {
    /// Library mode's agent or the daemon's client: one port's operations either way.
    inner: Arc<dyn PortHandle>,
    /// The agent itself in library mode (admitting incoming flows is its owner's).
    lib: Option<Arc<Lib>>,
    endpoint: String,
}

impl Agent {
    /// Run `f` on the agent with the GIL released (calls from several Python threads run
    /// at once: a `recv` does not hold up a `send`).
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&dyn PortHandle) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        let inner = &*self.inner;
        py.allow_threads(|| f(inner)).map_err(net_error)
    }

    fn new_handle(inner: Arc<dyn PortHandle>, lib: Option<Arc<Lib>>) -> PyClassInitializer<Agent> {
        let endpoint = inner.endpoint().to_string();
        let shut = inner.clone();
        closing(move || shut.close(), Agent { inner, lib, endpoint })
    }

    /// The library-mode agent, for what only its owner does (admit incoming flows).
    fn lib(&self) -> Result<&Lib, Error> {
        self.lib.as_deref().ok_or_else(|| {
            Error::Config(
                "admit: incoming flows are admitted by the daemon (its control-plane link), not \
                 through an application's handle"
                    .into(),
            )
        })
    }
}

/// The host's link: its rate (bits/s), MTU and the DSCP of reserved flows.
type LinkArgs = (Option<f64>, u32, Option<u8>);

/// The agent settings `Agent` and `Daemon` both take from Python, checked (the back end
/// by name, the timeouts in seconds); the rest as `AgentConfig::default()`.
#[allow(clippy::too_many_arguments)] // the keywords of both constructors
fn agent_config(
    listen: &str,
    backend: &str,
    packet_bytes: u32,
    open: bool,
    max_message_bytes: u64,
    queue_bytes: u64,
    peer_timeout: f64,
    hello_timeout: f64,
    key_file: Option<PathBuf>,
    send_buffer: u32,
    link: LinkArgs,
) -> PyResult<AgentConfig> {
    Ok(AgentConfig {
        link_bps: link.0,
        wire: WireModel { mtu: link.1, ..WireModel::default() },
        dscp: link.2,
        listen: listen.to_string(),
        backend: backend.parse::<Backend>().map_err(net_error)?,
        packet_bytes,
        open,
        max_message_bytes,
        queue_bytes,
        peer_timeout: seconds("peer_timeout", peer_timeout)?,
        hello_timeout: seconds("hello_timeout", hello_timeout)?,
        key_file,
        send_buffer,
        ..AgentConfig::default()
    })
}

#[pymethods]
impl Agent {
    #[new]
    #[pyo3(signature = (
        listen = "127.0.0.1:0", backend = "agent", packet_bytes = 4096, open = false,
        max_message_bytes = 1 << 30, queue_bytes = 4 << 20, peer_timeout = 10.0,
        echo = false, deliver = true, send_buffer = 0, hello_timeout = 2.0, key_file = None,
        link_bps = None, mtu = 1500, dscp = Some(DSCP_EF)
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        listen: &str,
        backend: &str,
        packet_bytes: u32,
        open: bool,
        max_message_bytes: u64,
        queue_bytes: u64,
        peer_timeout: f64,
        echo: bool,
        deliver: bool,
        send_buffer: u32,
        hello_timeout: f64,
        key_file: Option<PathBuf>,
        link_bps: Option<f64>,
        mtu: u32,
        dscp: Option<u8>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let cfg = AgentConfig {
            echo,
            deliver,
            ..agent_config(
                listen,
                backend,
                packet_bytes,
                open,
                max_message_bytes,
                queue_bytes,
                peer_timeout,
                hello_timeout,
                key_file,
                send_buffer,
                (link_bps, mtu, dscp),
            )?
        };
        let lib = Arc::new(py.allow_threads(|| Lib::start(cfg)).map_err(net_error)?);
        Ok(Agent::new_handle(lib.clone(), Some(lib)))
    }

    /// An application's handle on its host's daemon at `socket` (a Unix socket path), on
    /// local port `port` (None: any free one). Every send goes through the daemon.
    #[staticmethod]
    #[pyo3(signature = (socket, port = None))]
    fn connect(py: Python<'_>, socket: PathBuf, port: Option<u32>) -> PyResult<Py<Agent>> {
        let c = py.allow_threads(|| LocalAgent::connect(&socket, port)).map_err(net_error)?;
        Py::new(py, Agent::new_handle(Arc::new(c), None))
    }

    /// This agent's endpoint (host:port), the name peers send to.
    #[getter]
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Install or change the reservation of the flow to `dst` at `priority`: `bits_per_second`
    /// becomes its IDT; with `lease` (seconds) it is removed when the lease runs out.
    #[pyo3(signature = (dst, bits_per_second, priority = 0, lease = None))]
    fn reserve(
        &self,
        py: Python<'_>,
        dst: &str,
        bits_per_second: f64,
        priority: u8,
        lease: Option<f64>,
    ) -> PyResult<()> {
        let lease = lease.map(|l| seconds("lease", l)).transpose()?;
        self.with(py, |a| a.reserve(dst, priority, bits_per_second, lease))
    }

    /// Remove the flow's reservation; True if it had one.
    #[pyo3(signature = (dst, priority = 0))]
    fn release(&self, py: Python<'_>, dst: &str, priority: u8) -> PyResult<bool> {
        self.with(py, |a| a.release(dst, priority))
    }

    /// Admit the incoming flow from endpoint `src` (host:port or host:port/N) to this
    /// agent's port `port` at `priority` (004 §3.4 (c), the destination's side): a closed
    /// agent refuses every incoming flow not admitted. With `lease` (seconds) the admission
    /// ends when it runs out.
    #[pyo3(signature = (src, port = 0, priority = 0, lease = None))]
    fn admit(&self, py: Python<'_>, src: &str, port: u32, priority: u8, lease: Option<f64>) -> PyResult<()> {
        let lease = lease.map(|l| seconds("lease", l)).transpose()?;
        let lib = self.lib().map_err(net_error)?;
        py.allow_threads(|| lib.admit(src, port, priority, lease)).map_err(net_error)
    }

    /// Withdraw an incoming flow's admission (its connection closes); True if it had one.
    #[pyo3(signature = (src, port = 0, priority = 0))]
    fn revoke(&self, py: Python<'_>, src: &str, port: u32, priority: u8) -> PyResult<bool> {
        let lib = self.lib().map_err(net_error)?;
        py.allow_threads(|| lib.revoke(src, port, priority)).map_err(net_error)
    }

    /// Queue a message; waits while the flow's queue is full.
    #[pyo3(signature = (dst, data, priority = 0))]
    fn send(&self, py: Python<'_>, dst: &str, data: Vec<u8>, priority: u8) -> PyResult<()> {
        self.with(py, |a| a.send(dst, priority, data))
    }

    /// Send `count` messages of `size` bytes (a benchmark's source: no Python per message).
    #[pyo3(signature = (dst, size, count, priority = 0))]
    fn send_many(&self, py: Python<'_>, dst: &str, size: usize, count: u64, priority: u8) -> PyResult<()> {
        self.with(py, |a| {
            for _ in 0..count {
                a.send(dst, priority, vec![0u8; size])?;
            }
            Ok(())
        })
    }

    /// Wait until the flow has handed everything queued to the network.
    #[pyo3(signature = (dst, priority = 0, timeout = 60.0))]
    fn flush(&self, py: Python<'_>, dst: &str, priority: u8, timeout: f64) -> PyResult<()> {
        let t = seconds("timeout", timeout)?;
        self.with(py, |a| a.flush(dst, priority, t))
    }

    /// The next message received whole: (source endpoint, priority, data). `timeout` None
    /// waits forever; TimeoutError when it runs out.
    #[pyo3(signature = (timeout = None))]
    fn recv<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<(String, u8, Bound<'py, PyBytes>)> {
        let t = timeout.map(|t| seconds("timeout", t)).transpose()?;
        let m = self.with(py, |a| a.recv(t))?;
        Ok((m.src, m.priority, PyBytes::new(py, &m.data)))
    }

    /// Ping-pong with an echoing peer: `count` round trips of `size` bytes, each round trip's
    /// seconds (the timing is in Rust, so it measures the data plane, not Python).
    #[pyo3(signature = (dst, size, count, priority = 0, timeout = 30.0))]
    fn ping_pong(
        &self,
        py: Python<'_>,
        dst: &str,
        size: usize,
        count: u32,
        priority: u8,
        timeout: f64,
    ) -> PyResult<Vec<f64>> {
        let t = seconds("timeout", timeout)?;
        self.with(py, |a| {
            let mut out = Vec::with_capacity(count as usize);
            for _ in 0..count {
                let t0 = std::time::Instant::now();
                a.send(dst, priority, vec![0u8; size])?;
                let m = a.recv(Some(t))?;
                debug_assert_eq!(m.data.len(), size);
                out.push(t0.elapsed().as_secs_f64());
            }
            Ok(out)
        })
    }

    /// Counters: flows sent (with reservations), bytes received per source, refusals.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.with(py, |a| a.stats())?;
        stats_dict(py, s)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Agent>()?;
    m.add_class::<Daemon>()?;
    m.add_function(wrap_pyfunction!(parse_bandwidth, m)?)?;
    m.add("NetError", py.get_type::<NetError>())?;
    m.add("FlowNotAdmitted", py.get_type::<FlowNotAdmitted>())?;
    Ok(())
}

/// Bits per second of a bandwidth written in physical units ("100 Mb/s", "1.6 Gb/s",
/// "150 MB/s"): the engine's one parser (`units.rs`), so the data plane reads rates the same way.
#[pyfunction]
pub fn parse_bandwidth(text: &str) -> PyResult<f64> {
    qosnet_sim::units::Bandwidth::parse(text)
        .map(|b| b.bits_per_second)
        .map_err(pyo3::exceptions::PyValueError::new_err)
}

fn stats_dict(py: Python<'_>, s: Stats) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("endpoint", s.endpoint)?;
    let flows = PyList::empty(py);
    for f in s.flows {
        let fd = PyDict::new(py);
        fd.set_item("port", f.port)?;
        fd.set_item("dst", f.dst)?;
        fd.set_item("priority", f.priority)?;
        fd.set_item("reserved_bps", f.reserved_bps)?;
        fd.set_item("idt_ns", f.idt_ns)?;
        fd.set_item("bytes_sent", f.bytes_sent)?;
        fd.set_item("packets_sent", f.packets_sent)?;
        fd.set_item("messages_sent", f.messages_sent)?;
        fd.set_item("queued_bytes", f.queued_bytes)?;
        fd.set_item("stalls", f.stalls)?;
        fd.set_item("blocked", f.blocked)?;
        fd.set_item("failed", f.failed)?;
        flows.append(fd)?;
    }
    d.set_item("flows", flows)?;
    let rec = PyList::empty(py);
    for r in s.received {
        let rd = PyDict::new(py);
        rd.set_item("src", r.src)?;
        rd.set_item("priority", r.priority)?;
        rd.set_item("bytes", r.bytes)?;
        rd.set_item("messages", r.messages)?;
        rec.append(rd)?;
    }
    d.set_item("received", rec)?;
    d.set_item("malformed_frames", s.malformed_frames)?;
    d.set_item("last_malformed", s.last_malformed)?;
    d.set_item("refused_sends", s.refused_sends)?;
    d.set_item("expired_leases", s.expired_leases)?;
    d.set_item("undeliverable", s.undeliverable)?;
    d.set_item("refused_flows", s.refused_flows)?;
    d.set_item("last_refused", s.last_refused)?;
    d.set_item("unauthenticated_hellos", s.unauthenticated_hellos)?;
    d.set_item("link_bps", s.link_bps)?;
    d.set_item("payload_fraction", s.payload_fraction)?;
    d.set_item("reserved_bps", s.reserved_bps)?;
    let admitted = PyList::empty(py);
    for a in s.admitted {
        admitted.append((a.src, a.port, a.priority))?;
    }
    d.set_item("admitted", admitted)?;
    Ok(d)
}

/// A host's agent as a daemon (document 004's trusted NIC firmware): it owns the host's
/// sockets to peers and its one scheduler, and local applications reach it through the Unix
/// socket `socket` (`Agent.connect`). Who may connect is the socket file's `mode`; only root,
/// the daemon's user and `trusted_uids` may reserve or release through it (the control
/// plane's reservations are installed with `reserve` here).
#[pyclass(module = "qosnet._core", frozen, extends = Closing)]
pub struct Daemon {
    inner: Arc<DaemonInner>,
    endpoint: String,
}

#[pymethods]
impl Daemon {
    #[new]
    #[pyo3(signature = (
        socket, listen = "0.0.0.0:7400", backend = "agent", packet_bytes = 4096, open = false,
        max_message_bytes = 1 << 30, queue_bytes = 4 << 20, peer_timeout = 10.0, send_buffer = 0,
        inbox_bytes = 64 << 20, mode = 0o660, max_clients = 256, max_clients_per_uid = 64,
        max_request_bytes = 64 << 20, trusted_uids = Vec::new(), hello_timeout = 2.0,
        key_file = None, link_bps = None, mtu = 1500, dscp = Some(DSCP_EF)
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        socket: PathBuf,
        listen: &str,
        backend: &str,
        packet_bytes: u32,
        open: bool,
        max_message_bytes: u64,
        queue_bytes: u64,
        peer_timeout: f64,
        send_buffer: u32,
        inbox_bytes: u64,
        mode: u32,
        max_clients: usize,
        max_clients_per_uid: usize,
        max_request_bytes: u64,
        trusted_uids: Vec<u32>,
        hello_timeout: f64,
        key_file: Option<PathBuf>,
        link_bps: Option<f64>,
        mtu: u32,
        dscp: Option<u8>,
    ) -> PyResult<PyClassInitializer<Self>> {
        let agent = AgentConfig {
            echo: false,
            deliver: true,
            inbox_bytes,
            ..agent_config(
                listen,
                backend,
                packet_bytes,
                open,
                max_message_bytes,
                queue_bytes,
                peer_timeout,
                hello_timeout,
                key_file,
                send_buffer,
                (link_bps, mtu, dscp),
            )?
        };
        let cfg = DaemonConfig {
            socket,
            mode,
            max_clients,
            max_clients_per_uid,
            max_request_bytes,
            trusted_uids,
            ..DaemonConfig::default()
        };
        let inner = Arc::new(py.allow_threads(|| DaemonInner::start(agent, cfg)).map_err(net_error)?);
        let endpoint = inner.agent().endpoint().to_string();
        let shut = inner.clone();
        Ok(closing(move || shut.shutdown(), Daemon { inner, endpoint }))
    }

    /// The agent's endpoint (host:port) peers reach it at.
    #[getter]
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The Unix socket local applications connect to.
    #[getter]
    fn socket(&self) -> String {
        self.inner.socket().display().to_string()
    }

    /// Install or change the reservation of the flow from local port `port` to `dst`
    /// (the control plane's side; port 0 is the host-level flow the service admits).
    #[pyo3(signature = (dst, bits_per_second, priority = 0, lease = None, port = 0))]
    fn reserve(
        &self,
        py: Python<'_>,
        dst: &str,
        bits_per_second: f64,
        priority: u8,
        lease: Option<f64>,
        port: u32,
    ) -> PyResult<()> {
        let lease = lease.map(|l| seconds("lease", l)).transpose()?;
        let a = self.inner.agent();
        py.allow_threads(|| a.reserve_from(port, dst, priority, bits_per_second, lease)).map_err(net_error)
    }

    /// Remove a reservation; True if there was one.
    #[pyo3(signature = (dst, priority = 0, port = 0))]
    fn release(&self, py: Python<'_>, dst: &str, priority: u8, port: u32) -> bool {
        let a = self.inner.agent();
        py.allow_threads(|| a.release_from(port, dst, priority))
    }

    /// Admit the incoming flow from `src` to local port `port` (as `Agent.admit`).
    #[pyo3(signature = (src, port = 0, priority = 0, lease = None))]
    fn admit(&self, py: Python<'_>, src: &str, port: u32, priority: u8, lease: Option<f64>) -> PyResult<()> {
        let lease = lease.map(|l| seconds("lease", l)).transpose()?;
        let a = self.inner.agent();
        py.allow_threads(|| a.admit(src, port, priority, lease)).map_err(net_error)
    }

    /// Withdraw an incoming flow's admission; True if it had one.
    #[pyo3(signature = (src, port = 0, priority = 0))]
    fn revoke(&self, py: Python<'_>, src: &str, port: u32, priority: u8) -> PyResult<bool> {
        let a = self.inner.agent();
        py.allow_threads(|| a.revoke(src, port, priority)).map_err(net_error)
    }

    /// The agent's counters (as `Agent.stats`) and the local side's under "daemon":
    /// clients, open ports, refused clients, malformed and denied requests.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (s, ds) = py.allow_threads(|| (self.inner.agent().stats(), self.inner.stats()));
        let d = stats_dict(py, s)?;
        let dd = PyDict::new(py);
        dd.set_item("clients", ds.clients)?;
        dd.set_item("ports", ds.ports)?;
        dd.set_item("refused_clients", ds.refused_clients)?;
        dd.set_item("malformed_requests", ds.malformed_requests)?;
        dd.set_item("denied_requests", ds.denied_requests)?;
        d.set_item("daemon", dd)?;
        Ok(d)
    }
}

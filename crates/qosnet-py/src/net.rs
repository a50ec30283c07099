//! Bindings of the data plane's agent (`qosnet-net`): convert, release the GIL, map errors.

use crate::error::QosnetError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use qosnet_net::{Agent as Inner, AgentConfig, Backend, NetError as Error};
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
    "A send on a flow with no reservation, on an agent that is not open."
);

fn net_error(e: Error) -> PyErr {
    match e {
        Error::Config(m) => pyo3::exceptions::PyValueError::new_err(m),
        Error::Rate(_) => pyo3::exceptions::PyValueError::new_err(e.to_string()),
        Error::NotAdmitted { .. } => FlowNotAdmitted::new_err(e.to_string()),
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

/// A host's rate-control agent (document 004's NIC firmware, in user space or through the
/// kernel's socket pacing): reserved flows paced by IDT/NDT, others refused unless `open`.
#[pyclass(module = "qosnet._core", frozen)]
pub struct Agent {
    inner: Inner,
    endpoint: String,
}

impl Agent {
    /// Run `f` on the agent with the GIL released (calls from several Python threads run
    /// at once: a `recv` does not hold up a `send`).
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&Inner) -> Result<T, Error> + Send,
    ) -> PyResult<T> {
        let inner = &self.inner;
        py.allow_threads(|| f(inner)).map_err(net_error)
    }
}

#[pymethods]
impl Agent {
    #[new]
    #[pyo3(signature = (
        listen = "127.0.0.1:0", backend = "agent", packet_bytes = 4096, open = false,
        max_message_bytes = 1 << 30, queue_bytes = 4 << 20, peer_timeout = 10.0,
        echo = false, deliver = true, send_buffer = 0
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
    ) -> PyResult<Self> {
        let cfg = AgentConfig {
            listen: listen.to_string(),
            backend: backend.parse::<Backend>().map_err(net_error)?,
            packet_bytes,
            open,
            max_message_bytes,
            queue_bytes,
            peer_timeout: seconds("peer_timeout", peer_timeout)?,
            echo,
            deliver,
            send_buffer,
        };
        let inner = py.allow_threads(|| Inner::start(cfg)).map_err(net_error)?;
        let endpoint = inner.endpoint().to_string();
        Ok(Agent { inner, endpoint })
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
        self.with(py, |a| Ok(a.release(dst, priority)))
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
        let s = self.with(py, |a| Ok(a.stats()))?;
        let d = PyDict::new(py);
        d.set_item("endpoint", s.endpoint)?;
        let flows = PyList::empty(py);
        for f in s.flows {
            let fd = PyDict::new(py);
            fd.set_item("dst", f.dst)?;
            fd.set_item("priority", f.priority)?;
            fd.set_item("reserved_bps", f.reserved_bps)?;
            fd.set_item("idt_ns", f.idt_ns)?;
            fd.set_item("bytes_sent", f.bytes_sent)?;
            fd.set_item("packets_sent", f.packets_sent)?;
            fd.set_item("messages_sent", f.messages_sent)?;
            fd.set_item("queued_bytes", f.queued_bytes)?;
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
        Ok(d)
    }

    /// Stop the agent's threads and close its connections (also on garbage collection).
    fn close(&self, py: Python<'_>) {
        let inner = &self.inner;
        py.allow_threads(|| inner.shutdown());
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, py: Python<'_>, _t: PyObject, _v: PyObject, _tb: PyObject) {
        self.close(py);
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<Agent>()?;
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

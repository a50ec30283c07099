//! Call admission (document 004 §3.4) for the control plane: the engine's accounting of
//! reserved bandwidth per source node, switch output port and destination over the
//! simulator's own topology and deterministic routes. No admission logic here.

use crate::error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qosnet_sim::admission::{CallAdmission as Engine, Rejection};
use qosnet_sim::topology::Peer;
use std::path::PathBuf;
use std::sync::OnceLock;

/// Reserved bandwidth over a cluster described by configuration text (`[physical]`,
/// `[topology]`, `[routing]`, `[router]`, `[endpoint]`; `[[traffic]]` is not needed).
/// Bandwidths are in bits per second.
#[pyclass(module = "qosnet._core")]
pub struct CallAdmission {
    inner: Engine,
    /// Set when a call panicked: the accounting may be half updated, so it is not used again.
    broken: OnceLock<String>,
}

#[pymethods]
impl CallAdmission {
    /// `confined`: the files the text names must lie inside `base_dir` (an upload to the
    /// service; `config/files.rs`).
    #[new]
    #[pyo3(signature = (text, fmt = "toml", base_dir = None, confined = false))]
    fn new(text: &str, fmt: &str, base_dir: Option<PathBuf>, confined: bool) -> PyResult<Self> {
        error::guard(|| {
            let mut cfg = crate::parse(text, fmt)?.map_err(error::config_error)?;
            cfg.base_dir = base_dir;
            cfg.file_scope = crate::scope(confined);
            let inner = Engine::from_config(&cfg).map_err(error::config_error)?;
            Ok(Self { inner, broken: OnceLock::new() })
        })
    }

    /// Endpoint nodes.
    #[getter]
    fn nodes(&self) -> PyResult<usize> {
        self.read(|s| Ok(s.inner.topology().nodes))
    }

    /// Switches.
    #[getter]
    fn routers(&self) -> PyResult<usize> {
        self.read(|s| Ok(s.inner.topology().routers))
    }

    /// Node names from a fabric dump (HCA descriptions), else "node N".
    #[getter]
    fn node_names(&self) -> PyResult<Vec<String>> {
        self.read(|s| {
            let t = s.inner.topology();
            Ok((0..t.nodes).map(|n| t.names.get(n).cloned().unwrap_or_else(|| format!("node {n}"))).collect())
        })
    }

    /// The deterministic path from `src` to `dst`: (switch, output port) hops, the last one
    /// the port to `dst`.
    fn path(&self, src: u32, dst: u32) -> PyResult<Vec<(u32, u32)>> {
        self.read(|s| {
            s.nodes_in_range(src, dst)?;
            Ok(s.inner.path(src, dst))
        })
    }

    /// Path lengths (switch hops) between every pair of nodes, row `src`, column `dst`; 0
    /// on the diagonal. One call instead of nodes² `path` calls (the allocator's distances).
    fn hop_counts(&self, py: Python<'_>) -> PyResult<Vec<Vec<u32>>> {
        self.read(|s| {
            Ok(py.allow_threads(|| {
                let n = s.inner.topology().nodes as u32;
                (0..n)
                    .map(|a| {
                        (0..n).map(|b| if a == b { 0 } else { s.inner.path(a, b).len() as u32 }).collect()
                    })
                    .collect()
            }))
        })
    }

    /// Why the flow would be refused now (a dict: `criterion`, `message` and the numbers),
    /// or None if it would be admitted. Changes nothing.
    fn check<'py>(
        &self,
        py: Python<'py>,
        src: u32,
        dst: u32,
        bps: f64,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.read(|s| match s.inner.check(src, dst, bps) {
            Ok(_) => Ok(None),
            Err(why) => refusal(py, &why, None).map(Some),
        })
    }

    /// Admit the flow and return its reservation id; raises `AdmissionRefused` (with the
    /// refusal's fields as attributes) and reserves nothing if it does not fit.
    fn admit(&mut self, py: Python<'_>, src: u32, dst: u32, bps: f64) -> PyResult<u32> {
        self.write(|s| s.inner.admit(src, dst, bps).map_err(|why| refused(py, &why, None)))
    }

    /// Admit every flow `(src, dst, bps)` of a job or none: ids in order, or
    /// `AdmissionRefused` whose `flow` is the index of the first flow that did not fit.
    fn admit_all(&mut self, py: Python<'_>, flows: Vec<(u32, u32, f64)>) -> PyResult<Vec<u32>> {
        self.write(|s| s.inner.admit_all(&flows).map_err(|(i, why)| refused(py, &why, Some(i))))
    }

    /// Release a reservation; False if `id` is not an admitted flow.
    fn release(&mut self, id: u32) -> PyResult<bool> {
        self.write(|s| Ok(s.inner.release(id).is_some()))
    }

    /// Set one switch output port's link capacity (heterogeneous fabrics).
    fn set_port_capacity(&mut self, router: u32, port: u32, bps: f64) -> PyResult<()> {
        self.write(|s| {
            s.port_in_range(router, port)?;
            positive("bps", bps)?;
            s.inner.set_port_capacity(router, port, bps);
            Ok(())
        })
    }

    /// Set one node's peak capacity (as a source and as a destination).
    fn set_node_capacity(&mut self, node: u32, bps: f64) -> PyResult<()> {
        self.write(|s| {
            s.nodes_in_range(node, node)?;
            positive("bps", bps)?;
            s.inner.set_node_capacity(node, bps);
            Ok(())
        })
    }

    /// Reserved bandwidth sourced and sunk at `node`, and its capacity.
    fn node(&self, node: u32) -> PyResult<(f64, f64, f64)> {
        self.read(|s| {
            s.nodes_in_range(node, node)?;
            let (sourced, sunk) = s.inner.node_reserved(node);
            Ok((sourced, sunk, s.inner.node_capacity(node)))
        })
    }

    /// The largest bandwidth, b/s, that every flow `(src, dst)` could be given at once, each
    /// the same: the least room per flow over every source, switch port and destination
    /// they use (0 when one is full, inf for no flows). Changes nothing.
    fn grantable(&self, flows: Vec<(u32, u32)>) -> PyResult<f64> {
        self.read(|s| s.inner.grantable(&flows).map_err(|why| PyValueError::new_err(why.to_string())))
    }

    /// The inter-dispatch time of a flow from `src` reserving `bps`, in rate-control periods
    /// T: idt = T x Bpeak / Breq (document 004 §3.4), Bpeak the source's capacity.
    fn idt(&self, src: u32, bps: f64) -> PyResult<f64> {
        self.read(|s| s.inner.idt_periods(src, bps).map_err(|why| PyValueError::new_err(why.to_string())))
    }

    /// Every connected switch output port as columns: router, port, `to` ("router" or
    /// "node"), `to_id`, capacity_bps, reserved_bps.
    fn ports<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.read(|s| s.port_table(py))
    }
}

impl CallAdmission {
    /// Run `f`, a panic becoming `InternalError` and retiring the accounting (see `broken`).
    fn read<T>(&self, f: impl FnOnce(&Self) -> PyResult<T>) -> PyResult<T> {
        self.usable()?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self)))
            .unwrap_or_else(|p| Err(self.retire(&*p)))
    }

    /// `read` for a call that changes the accounting.
    fn write<T>(&mut self, f: impl FnOnce(&mut Self) -> PyResult<T>) -> PyResult<T> {
        self.usable()?;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(self))) {
            Ok(r) => r,
            Err(p) => Err(self.retire(&*p)),
        }
    }

    fn usable(&self) -> PyResult<()> {
        match self.broken.get() {
            Some(why) => Err(error::InternalError::new_err(format!(
                "this call admission stopped at an internal error and cannot go on: {why}"
            ))),
            None => Ok(()),
        }
    }

    fn retire(&self, payload: &(dyn std::any::Any + Send)) -> PyErr {
        let err = error::internal_error(payload);
        let _ = self.broken.set(Python::with_gil(|py| err.value(py).to_string()));
        err
    }

    fn port_table<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let topo = self.inner.topology();
        let (mut router, mut port, mut to, mut to_id, mut cap, mut res) =
            (vec![], vec![], vec![], vec![], vec![], vec![]);
        for r in 0..topo.routers {
            for p in 0..topo.ports {
                let (kind, id) = match topo.peer(r, p) {
                    Peer::None => continue,
                    Peer::Router { router, .. } => ("router", router.0),
                    Peer::Endpoint { node } => ("node", node.0),
                };
                let (r32, p32) = (r as u32, p as u32);
                router.push(r32);
                port.push(p32);
                to.push(kind);
                to_id.push(id);
                cap.push(self.inner.port_capacity(r32, p32));
                res.push(self.inner.port_reserved(r32, p32));
            }
        }
        let d = PyDict::new(py);
        d.set_item("router", PyList::new(py, router)?)?;
        d.set_item("port", PyList::new(py, port)?)?;
        d.set_item("to", PyList::new(py, to)?)?;
        d.set_item("to_id", PyList::new(py, to_id)?)?;
        d.set_item("capacity_bps", PyList::new(py, cap)?)?;
        d.set_item("reserved_bps", PyList::new(py, res)?)?;
        Ok(d)
    }
}

impl CallAdmission {
    fn nodes_in_range(&self, a: u32, b: u32) -> PyResult<()> {
        let n = self.inner.topology().nodes as u32;
        for (what, v) in [("src", a), ("dst", b)] {
            if v >= n {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "{what}: must be a node in 0..{n}, got {v}"
                )));
            }
        }
        Ok(())
    }

    fn port_in_range(&self, router: u32, port: u32) -> PyResult<()> {
        let t = self.inner.topology();
        if router as usize >= t.routers || port as usize >= t.ports {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "(router, port): must be in 0..{} x 0..{}, got ({router}, {port})",
                t.routers, t.ports
            )));
        }
        Ok(())
    }
}

fn positive(what: &str, v: f64) -> PyResult<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(pyo3::exceptions::PyValueError::new_err(format!("{what}: must be a positive number, got {v}")))
    }
}

/// A refusal as a dict: `criterion` ("source", "switch_port", "destination", "invalid"),
/// `message`, and where it applies `node` or `router`/`port`, `reserved`, `requested`,
/// `capacity` (b/s), and `flow` (the index in a job).
fn refusal<'py>(py: Python<'py>, why: &Rejection, flow: Option<usize>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("message", why.to_string())?;
    d.set_item("flow", flow)?;
    let numbers = match *why {
        Rejection::Source { node, reserved, requested, capacity } => {
            d.set_item("criterion", "source")?;
            d.set_item("node", node)?;
            Some((reserved, requested, capacity))
        }
        Rejection::SwitchPort { router, port, reserved, requested, capacity } => {
            d.set_item("criterion", "switch_port")?;
            d.set_item("router", router)?;
            d.set_item("port", port)?;
            Some((reserved, requested, capacity))
        }
        Rejection::Destination { node, reserved, requested, capacity } => {
            d.set_item("criterion", "destination")?;
            d.set_item("node", node)?;
            Some((reserved, requested, capacity))
        }
        Rejection::Invalid(_) => {
            d.set_item("criterion", "invalid")?;
            None
        }
    };
    if let Some((reserved, requested, capacity)) = numbers {
        d.set_item("reserved", reserved)?;
        d.set_item("requested", requested)?;
        d.set_item("capacity", capacity)?;
    }
    Ok(d)
}

fn refused(py: Python<'_>, why: &Rejection, flow: Option<usize>) -> PyErr {
    let err = error::AdmissionRefused::new_err(why.to_string());
    if let Ok(d) = refusal(py, why, flow) {
        let _ = err.value(py).setattr("refusal", d);
    }
    err
}

//! Thin PyO3 bindings: convert, release the GIL, map errors. No simulation logic here.

mod admission;
mod error;
mod net;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qosnet_sim::metrics::{Column, Table};
use qosnet_sim::{Config, ConfigErrors, Simulation as Engine};
use std::path::PathBuf;

/// A simulation built from a configuration (TOML or JSON text).
#[pyclass(module = "qosnet._core")]
struct Simulation {
    inner: Engine,
    /// Set when a call panicked: the engine's state is then unknown, so it is not used again.
    broken: Option<String>,
}

impl Simulation {
    /// Run `f` on the engine, a panic becoming `InternalError` and retiring the simulation.
    fn with<T>(&mut self, f: impl FnOnce(&mut Engine) -> PyResult<T>) -> PyResult<T> {
        if let Some(why) = &self.broken {
            return Err(error::InternalError::new_err(format!(
                "this simulation stopped at an internal error and cannot go on: {why}"
            )));
        }
        let inner = &mut self.inner;
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(inner))) {
            Ok(r) => r,
            Err(payload) => {
                let err = error::internal_error(&*payload);
                self.broken = Some(Python::with_gil(|py| err.value(py).to_string()));
                Err(err)
            }
        }
    }
}

#[pymethods]
impl Simulation {
    /// Build from configuration text; `fmt` is "toml" or "json"; relative file paths in the
    /// configuration resolve against `base_dir`. Raises ConfigError listing every problem.
    #[new]
    #[pyo3(signature = (text, fmt = "toml", base_dir = None))]
    fn new(text: &str, fmt: &str, base_dir: Option<PathBuf>) -> PyResult<Self> {
        error::guard(|| {
            let mut cfg = parse(text, fmt)?.map_err(error::config_error)?;
            cfg.base_dir = base_dir;
            let inner = Engine::new(cfg).map_err(error::config_error)?;
            Ok(Self { inner, broken: None })
        })
    }

    /// Current cycle.
    #[getter]
    fn now(&mut self) -> PyResult<u64> {
        self.with(|s| Ok(s.now()))
    }

    /// `[simulation] time_limit` in seconds of wall-clock time (None: no limit); `qosnet.run`
    /// stops a run past it (`TimeLimitError`, the results so far kept).
    #[getter]
    fn time_limit(&mut self) -> PyResult<Option<f64>> {
        self.with(|s| Ok(s.time_limit()))
    }

    /// End of the measurement window, in cycles.
    #[getter]
    fn window_end(&mut self) -> PyResult<u64> {
        self.with(|s| Ok(s.window_end()))
    }

    #[getter]
    fn finished(&mut self) -> PyResult<bool> {
        self.with(|s| Ok(s.is_finished()))
    }

    /// (flits injected, flits ejected, flit hops) so far.
    #[getter]
    fn flit_counts(&mut self) -> PyResult<(u64, u64, u64)> {
        self.with(|s| Ok(s.flit_counts()))
    }

    /// Simulate at most `max_cycles` cycles (GIL released). Returns True when finished.
    fn advance(&mut self, py: Python<'_>, max_cycles: u64) -> PyResult<bool> {
        self.with(|s| py.allow_threads(|| s.advance(max_cycles)).map_err(error::sim_error))
    }

    /// Run to the end (GIL released).
    fn run(&mut self, py: Python<'_>) -> PyResult<()> {
        self.with(|s| py.allow_threads(|| s.run().map(|_| ())).map_err(error::sim_error))
    }

    /// Check every engine invariant now; raises SimulationError on a violation.
    fn check_invariants(&mut self) -> PyResult<()> {
        self.with(|s| s.check_invariants().map_err(error::sim_error))
    }

    /// The configuration with all defaults filled in, as TOML.
    fn resolved_config(&mut self) -> PyResult<String> {
        self.with(|s| Ok(s.config().to_toml()))
    }

    /// Results: {"summary": json str, "classes": {col: list}, "nodes": ..., "links": ...,
    /// "flows": ..., "messages": ... or None, "types": {table: {col: "u64" | "f64" | "str"}}} — the types
    /// let an empty table keep its schema.
    fn result<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.with(|s| {
            let r = py.allow_threads(|| s.result());
            let d = PyDict::new(py);
            let types = PyDict::new(py);
            d.set_item("messages", py.None())?;
            for (name, t) in r.tables() {
                let cols = PyDict::new(py);
                for (col, c) in &t.columns {
                    cols.set_item(
                        col,
                        match c {
                            Column::U64(_) => "u64",
                            Column::F64(_) => "f64",
                            Column::Str(_) => "str",
                        },
                    )?;
                }
                types.set_item(name, cols)?;
                d.set_item(name, table(py, t)?)?;
            }
            d.set_item("types", types)?;
            d.set_item("summary", r.summary_json())?;
            Ok(d)
        })
    }
}

/// Parse configuration text: a bad `fmt` is the caller's error (ValueError); a bad
/// configuration is returned for the caller to raise or list.
fn parse(text: &str, fmt: &str) -> PyResult<Result<Config, ConfigErrors>> {
    match fmt {
        "toml" => Ok(Config::from_toml_str(text)),
        "json" => Ok(Config::from_json_str(text)),
        other => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "fmt: must be \"toml\" or \"json\", got {other:?}"
        ))),
    }
}

/// The scope the files a configuration names are read in (`config/files.rs`).
fn scope(confined: bool) -> qosnet_sim::config::FileScope {
    if confined {
        qosnet_sim::config::FileScope::Confined
    } else {
        qosnet_sim::config::FileScope::Local
    }
}

/// The files configuration text names, checked against the scope as the engine will read
/// them, but not read: [(key, name, is a directory, bytes)]. Raises ConfigError listing
/// every file that may not or cannot be read.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None, confined = false))]
fn named_files(
    text: &str,
    fmt: &str,
    base_dir: Option<PathBuf>,
    confined: bool,
) -> PyResult<Vec<(String, String, bool, u64)>> {
    error::guard(|| {
        let mut cfg = parse(text, fmt)?.map_err(error::config_error)?;
        cfg.base_dir = base_dir;
        cfg.file_scope = scope(confined);
        let files = cfg.files();
        let (mut out, mut errs) = (Vec::new(), Vec::new());
        for named in cfg.named_files() {
            match files.size(&named) {
                Ok(bytes) => out.push((named.field, named.file.shown(), named.directory, bytes)),
                Err(e) => errs.push(e),
            }
        }
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(error::config_error(ConfigErrors(errs)))
        }
    })
}

/// The configuration's JSON Schema (draft 2020-12), as JSON text: generated from the
/// configuration types (`qosnet_sim::config::schema`).
#[pyfunction]
fn config_schema() -> String {
    serde_json::to_string_pretty(&qosnet_sim::config::schema::schema()).expect("a schema serialises")
}

/// Validate configuration text; returns a list of (path, message), empty when valid.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None))]
fn validate(text: &str, fmt: &str, base_dir: Option<PathBuf>) -> PyResult<Vec<(String, String)>> {
    error::guard(|| {
        let cfg = parse(text, fmt)?;
        let errors = match cfg {
            Err(e) => e.0,
            Ok(mut c) => {
                c.base_dir = base_dir;
                match qosnet_sim::build::validate(&c) {
                    Ok(_) => Vec::new(),
                    Err(e) => e.0,
                }
            }
        };
        Ok(errors.into_iter().map(|e| (e.path, e.message)).collect())
    })
}

/// Validate configuration text once and tell what a run of it costs:
/// {"errors": [(path, message)], "memory": as `estimate_memory` (None when invalid),
/// "cost": {"cycles", "drain_cycles", "offered_flits_per_cycle", "mean_hops", "flit_hops",
/// "seconds", "seconds_with_drain"} (None when invalid)}.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None))]
fn check<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    error::guard(|| {
        let d = PyDict::new(py);
        let (errors, memory, cost) = match parse(text, fmt)? {
            Err(e) => (e.0, None, None),
            Ok(mut c) => {
                c.base_dir = base_dir;
                match qosnet_sim::build::validate(&c) {
                    Ok(v) => {
                        let cost = qosnet_sim::build::cost::estimate(&c, &v);
                        (Vec::new(), Some(v.memory), Some(cost))
                    }
                    Err(e) => (e.0, None, None),
                }
            }
        };
        let pairs: Vec<(String, String)> = errors.into_iter().map(|e| (e.path, e.message)).collect();
        d.set_item("errors", pairs)?;
        match memory {
            Some(e) => d.set_item("memory", memory_dict(py, e)?)?,
            None => d.set_item("memory", py.None())?,
        }
        match cost {
            Some(c) => {
                let cd = PyDict::new(py);
                cd.set_item("cycles", c.cycles)?;
                cd.set_item("drain_cycles", c.drain_cycles)?;
                cd.set_item("offered_flits_per_cycle", c.offered_flits_per_cycle)?;
                cd.set_item("mean_hops", c.mean_hops)?;
                cd.set_item("flit_hops", c.flit_hops)?;
                cd.set_item("seconds", c.seconds)?;
                cd.set_item("seconds_with_drain", c.seconds_with_drain)?;
                d.set_item("cost", cd)?;
            }
            None => d.set_item("cost", py.None())?,
        }
        Ok(d)
    })
}

fn memory_dict(py: Python<'_>, e: qosnet_sim::config::MemoryEstimate) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("total", e.total)?;
    d.set_item("limit", (e.limit != u64::MAX).then_some(e.limit))?;
    d.set_item("limit_source", e.limit_source)?;
    let parts: Vec<(&str, u64, String)> = e.parts.into_iter().map(|p| (p.name, p.bytes, p.drivers)).collect();
    d.set_item("parts", parts)?;
    Ok(d)
}

/// The memory a run of the configuration needs when built, and the limit `validate` holds
/// it to: {"total": bytes, "limit": bytes or None (unlimited), "limit_source": str,
/// "parts": [(name, bytes, what it grows with), ...]}. Raises ConfigError when the
/// configuration does not parse.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", base_dir = None))]
fn estimate_memory<'py>(
    py: Python<'py>,
    text: &str,
    fmt: &str,
    base_dir: Option<PathBuf>,
) -> PyResult<Bound<'py, PyDict>> {
    error::guard(|| {
        let mut cfg = parse(text, fmt)?.map_err(error::config_error)?;
        cfg.base_dir = base_dir;
        let e = cfg.estimate_memory().map_err(error::config_error)?;
        memory_dict(py, e)
    })
}

/// Panics with `message`: for the tests of the panic guard only (hidden, not public API).
#[doc(hidden)]
#[pyfunction]
fn _panic_for_tests(message: &str) -> PyResult<()> {
    error::guard(|| panic!("{message}"))
}

fn table<'py>(py: Python<'py>, t: &Table) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (name, col) in &t.columns {
        let list = match col {
            Column::U64(v) => PyList::new(py, v)?,
            Column::F64(v) => PyList::new(py, v)?,
            Column::Str(v) => PyList::new(py, v)?,
        };
        d.set_item(name, list)?;
    }
    Ok(d)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Simulation>()?;
    m.add_class::<admission::CallAdmission>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(named_files, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(estimate_memory, m)?)?;
    m.add_function(wrap_pyfunction!(config_schema, m)?)?;
    // (set, not added: not in `__all__`, not public API)
    m.setattr("_panic_for_tests", wrap_pyfunction!(_panic_for_tests, m)?)?;
    error::register(m)?;
    net::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

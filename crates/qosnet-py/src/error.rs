//! Each engine error maps to its own Python exception (ARCHITECTURE.md "Errors", after
//! pydantic-core).

use pyo3::create_exception;
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};
use qosnet_sim::{ConfigErrors, SimError};

create_exception!(_core, QosnetError, pyo3::exceptions::PyException, "Base of every qosnet engine error.");

/// `ConfigError(QosnetError, ValueError)`: catchable as either. PyO3's `create_exception!`
/// takes one base, so the class is made once with Python's `type()`.
static CONFIG_ERROR: GILOnceCell<Py<PyType>> = GILOnceCell::new();

fn config_error_type(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    CONFIG_ERROR
        .get_or_try_init(py, || {
            let bases = PyTuple::new(
                py,
                [
                    py.get_type::<QosnetError>().into_any(),
                    py.get_type::<pyo3::exceptions::PyValueError>().into_any(),
                ],
            )?;
            let ns = PyDict::new(py);
            ns.set_item("__doc__", "A configuration is invalid; `.errors` lists (path, message) pairs.")?;
            ns.set_item("__module__", "qosnet._core")?;
            let ty = py.get_type::<PyType>().call1(("ConfigError", bases, ns))?;
            Ok::<_, PyErr>(ty.downcast_into::<PyType>()?.unbind())
        })
        .map(|t| t.bind(py))
}
create_exception!(_core, SimulationError, QosnetError, "A valid configuration failed while running.");
create_exception!(
    _core,
    DeadlockError,
    SimulationError,
    "No flit moved for the watchdog period; `.stuck` names the occupied VCs."
);

create_exception!(
    _core,
    InternalError,
    QosnetError,
    "A bug in qosnet: the engine panicked. The message says where; please report it."
);

create_exception!(
    _core,
    AdmissionRefused,
    QosnetError,
    "Call admission refused a flow; `.refusal` is a dict with `criterion`, `message` and the numbers."
);

pub fn config_error(e: ConfigErrors) -> PyErr {
    Python::with_gil(|py| {
        let ty = match config_error_type(py) {
            Ok(t) => t,
            Err(err) => return err,
        };
        let err = PyErr::from_type(ty.clone(), e.to_string());
        let pairs: Vec<(String, String)> = e.0.into_iter().map(|e| (e.path, e.message)).collect();
        let _ = err.value(py).setattr("errors", pairs);
        err
    })
}

pub fn sim_error(e: SimError) -> PyErr {
    Python::with_gil(|py| match &e {
        SimError::Deadlock { stuck, waits_for, .. } => {
            let err = DeadlockError::new_err(e.to_string());
            // As the report names them (`router[3].in[2].vc[1]`), and as (router, port, vc).
            let names = |v: &[qosnet_sim::VcPath]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
            let tuples =
                |v: &[qosnet_sim::VcPath]| v.iter().map(|p| (p.router.0, p.port, p.vc)).collect::<Vec<_>>();
            let _ = err.value(py).setattr("stuck", names(stuck));
            let _ = err.value(py).setattr("waits_for", names(waits_for));
            let _ = err.value(py).setattr("stuck_vcs", tuples(stuck));
            let _ = err.value(py).setattr("waits_for_vcs", tuples(waits_for));
            err
        }
        _ => SimulationError::new_err(e.to_string()),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("QosnetError", py.get_type::<QosnetError>())?;
    m.add("ConfigError", config_error_type(py)?)?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("AdmissionRefused", py.get_type::<AdmissionRefused>())?;
    m.add("InternalError", py.get_type::<InternalError>())?;
    Ok(())
}

/// Run `f`, turning a panic into `InternalError`. Every entry point of the bindings goes
/// through here: PyO3 would raise its `PanicException`, which derives from `BaseException`,
/// so `except Exception` (a caller's, the service's) would not catch it and the process
/// would die of a bug in the engine.
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|p| Err(internal_error(&*p)))
}

/// `InternalError` for a panic's payload.
pub fn internal_error(payload: &(dyn std::any::Any + Send)) -> PyErr {
    let what = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into());
    InternalError::new_err(format!("internal error (a bug in qosnet, please report it): {what}"))
}

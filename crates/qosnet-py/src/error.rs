//! Each engine error maps to its own Python exception (STYLE.md, after pydantic-core).

use pyo3::create_exception;
use pyo3::prelude::*;
use qosnet_sim::{ConfigErrors, SimError};

create_exception!(_core, QosnetError, pyo3::exceptions::PyException, "Base of every qosnet engine error.");
create_exception!(
    _core,
    ConfigError,
    pyo3::exceptions::PyValueError,
    "A configuration is invalid; `.errors` lists (path, message) pairs."
);
create_exception!(_core, SimulationError, QosnetError, "A valid configuration failed while running.");
create_exception!(
    _core,
    DeadlockError,
    SimulationError,
    "No flit moved for the watchdog period; `.stuck` names the occupied VCs."
);

pub fn config_error(e: ConfigErrors) -> PyErr {
    Python::with_gil(|py| {
        let err = ConfigError::new_err(e.to_string());
        let pairs: Vec<(String, String)> = e.0.into_iter().map(|e| (e.path, e.message)).collect();
        let _ = err.value(py).setattr("errors", pairs);
        err
    })
}

pub fn sim_error(e: SimError) -> PyErr {
    Python::with_gil(|py| match &e {
        SimError::Deadlock { stuck, .. } => {
            let err = DeadlockError::new_err(e.to_string());
            let _ = err.value(py).setattr("stuck", stuck.clone());
            err
        }
        _ => SimulationError::new_err(e.to_string()),
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("QosnetError", py.get_type::<QosnetError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("SimulationError", py.get_type::<SimulationError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    Ok(())
}

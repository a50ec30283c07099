//! Admission control: the path and link-capacity accounting shared by the simulator (flows
//! with reservations are admitted before a run) and the control plane (the middleware's
//! resource allocator, through the bindings).

pub mod call_admission;

pub use call_admission::{CallAdmission, Rejection, Reservation};

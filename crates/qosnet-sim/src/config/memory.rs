//! What a run's memory estimate says (plain data; computed in `build::validate`).

/// The memory a run allocates when it is built, by part, and the limit it is held to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryEstimate {
    pub parts: Vec<MemoryPart>,
    /// Sum of the parts, bytes.
    pub total: u64,
    /// The limit in force, bytes (`u64::MAX`: unlimited), and where it comes from.
    pub limit: u64,
    pub limit_source: String,
}

/// One part of an estimate: what it is, its size and the configuration fields it grows with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryPart {
    pub name: &'static str,
    pub bytes: u64,
    /// e.g. "routers x ports x router.vcs x router.input_buffer".
    pub drivers: String,
}

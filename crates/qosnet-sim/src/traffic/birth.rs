//! What a due source creates now: a message, or a video frame cut into messages. The
//! driver's temporal sources and the application models (`application.rs`) both give
//! births; the engine turns each into messages at its source.

use crate::config::TrafficClass;
use crate::ids::NodeId;

/// What a due source creates now: `messages()` messages of `message_flits` flits (the
/// last one the rest of `total`), from `node` to `dst`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Birth {
    pub node: NodeId,
    pub dst: NodeId,
    pub class: TrafficClass,
    pub vtick: u32,
    /// The source (its row of the per-flow table).
    pub flow: u32,
    /// The video frame, or `u32::MAX`.
    pub frame: u32,
    pub total: u32,
    pub message_flits: u32,
    pub packet_flits: u32,
    /// The mix phase in force.
    pub phase: usize,
}

impl Birth {
    pub fn messages(&self) -> u32 {
        self.total.div_ceil(self.message_flits)
    }

    /// The size of message `k`, flits.
    pub fn size(&self, k: u32) -> u32 {
        self.message_flits.min(self.total - k * self.message_flits)
    }
}

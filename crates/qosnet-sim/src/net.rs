//! What the components of a simulation share, and all they share: the links they talk
//! through, the packets and messages in the network (one slab each, ARCHITECTURE.md "Units of
//! data"), the run's progress counters and the observers. Routers, endpoints and traffic
//! own their state; each stage is a function of its component's state and this.

use crate::control::{Reservations, Signal};
use crate::flit::{Message, Packet, Slab};
use crate::ids::{MessageId, PacketId};
use crate::links::Links;
use crate::metrics::Observers;
use crate::units::Cycle;

/// The shared part of a simulation (see the module comment).
pub(crate) struct Net {
    pub links: Links,
    pub packets: Slab<Packet, PacketId>,
    pub messages: Slab<Message, MessageId>,
    pub progress: Progress,
    /// Admission control's link reservations (document 000 §4.1; empty when off).
    pub reservations: Reservations,
    pub obs: Observers,
    /// Whole messages of application flows delivered (document 001 §4.2).
    pub app_deliveries: AppDeliveries,
}

/// What application models (`traffic::application`) wait for: the whole messages of their
/// flows delivered, as (flow, created, done). The endpoints push only messages of flows in
/// `first..end`; without applications the range is empty and nothing is ever pushed.
#[derive(Clone, Debug, Default)]
pub(crate) struct AppDeliveries {
    pub first: u32,
    pub count: u32,
    pub list: Vec<(u32, Cycle, Cycle)>,
}

impl AppDeliveries {
    /// Whether `flow` is an application's.
    #[inline(always)]
    pub fn watches(&self, flow: u32) -> bool {
        flow.wrapping_sub(self.first) < self.count
    }

    /// Message `msg` of an application flow was delivered whole (out of line: the
    /// endpoints' ejection stays as it was without applications).
    #[cold]
    #[inline(never)]
    pub fn record(&mut self, msg: &Message) {
        self.list.push((msg.flow, msg.created, msg.done));
    }
}

impl Net {
    /// Cut the next packet of message `m`: (packet, flits, whether it is the message's last).
    #[inline(always)]
    pub fn cut_packet(&mut self, m: MessageId) -> (PacketId, u32, bool) {
        let msg = self.messages.get_mut(m);
        let size = msg.packet_flits.min(msg.size - msg.packetized);
        msg.packetized += size;
        let last = msg.packetized == msg.size;
        let (src, dst, class, vtick, flow, path) =
            (msg.src, msg.dst, msg.class, msg.vtick, msg.flow, msg.path);
        // A message's signal (probe, teardown, ...) rides on its last packet.
        let signal = if last { msg.signal } else { Signal::Data };
        let packet = self.packets.insert(Packet {
            message: m,
            src,
            dst,
            size: size as u16,
            received: 0,
            class,
            vtick,
            flow,
            marked: false,
            path,
            via: 0,
            signal,
        });
        (packet, size, last)
    }
}

/// What has moved: the watchdog's and flit conservation's counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct Progress {
    /// Flits in router buffers and on links.
    pub in_flight: u64,
    /// The last cycle in which a flit moved.
    pub last_progress: Cycle,
    /// The latest cycle a header was routed at (its ready time, which may lie ahead): stage
    /// 2 is decided early (`route_header`) but counts as progress when it takes place, as
    /// it would as a per-cycle stage of its own, so the watchdog sees the same progress.
    pub routed_at: Cycle,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    /// Router-to-anything link traversals.
    pub flit_hops: u64,
    /// Dummy tails and headers made by preemption (flit conservation counts them).
    pub dummy_flits: u64,
    /// Measured messages not yet delivered.
    pub measured_outstanding: u64,
    /// The first broken invariant seen in the cycle loop (reported when the step ends).
    pub violation: Option<String>,
}

impl Progress {
    /// The last cycle up to `now` in which anything moved.
    #[inline]
    pub fn last(&self, now: Cycle) -> Cycle {
        self.last_progress.max(self.routed_at.min(now))
    }

    /// Record the first broken invariant (later ones follow from it).
    pub fn violated(&mut self, what: impl FnOnce() -> String) {
        if self.violation.is_none() {
            self.violation = Some(what());
        }
    }
}

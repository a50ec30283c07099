//! What the components of a simulation share, and all they share: the links they talk
//! through, the packets and messages in the network (one slab each, ARCHITECTURE.md "Units of
//! data"), the run's progress counters and the observers. Routers, endpoints and traffic
//! own their state; each stage is a function of its component's state and this.

use crate::control::{Reservations, Signal};
use crate::flit::{Flit, Message, Packet, Slab};
use crate::ids::{LinkEnd, MessageId, PacketId};
use crate::links::Links;
use crate::metrics::trace::Hop;
use crate::metrics::Observers;
use crate::sched::SchedTables;
use crate::unchecked::At;
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
    /// The draws of routings that choose a packet's way at its source router (Valiant's
    /// intermediate group), one generator for all the routers (ARCHITECTURE.md
    /// "Randomness"), drawn as headers arrive (stage 2), in arrival order: here, not in a
    /// router shard, so a threaded run draws the same sequence.
    pub via_rng: rand_xoshiro::Xoshiro256PlusPlus,
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
    /// The routers' generator of way draws (`via_rng`) for a run of `seed`.
    pub fn via_rng(seed: u64) -> rand_xoshiro::Xoshiro256PlusPlus {
        use rand::SeedableRng;
        // (a stream no source or flow numbers: the ASCII of "ROUTERS")
        rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(crate::seed::mix_seed(seed, 0x0052_4f55_5445_5253))
    }

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

    /// Take in what a router shard counted in a parallel phase (`router::shards`), leaving
    /// it zero for the next.
    pub fn absorb(&mut self, shard: &mut Progress) {
        let s = std::mem::take(shard);
        self.in_flight += s.in_flight;
        self.flit_hops += s.flit_hops;
        self.dummy_flits += s.dummy_flits;
        self.last_progress = self.last_progress.max(s.last_progress);
        self.routed_at = self.routed_at.max(s.routed_at);
        if self.violation.is_none() {
            self.violation = s.violation;
        }
        debug_assert!(s.flits_injected == 0 && s.flits_ejected == 0 && s.measured_outstanding == 0);
    }

    /// Record the first broken invariant (later ones follow from it).
    pub fn violated(&mut self, what: impl FnOnce() -> String) {
        if self.violation.is_none() {
            self.violation = Some(what());
        }
    }
}

/// What a router's stages reach of the shared state (`Net`), as a trait so that the same
/// stage code runs on the whole `Net` (one thread) or on a shard's own part of it
/// (`router::shards::ShardNet`, `simulation.threads`): the links it sends on, the packets
/// it reads, the progress counters and its output links' flit counts. Statically
/// dispatched: each stage is compiled for `Net` and for `ShardNet`.
pub(crate) trait RouterNet {
    /// Put `flit` on the link to `to`, arriving at `at` (`Links::send_flit`).
    fn send_flit(&mut self, at: Cycle, to: LinkEnd, flit: Flit);
    /// Return a credit for lane `vc` to `to`, arriving at `at` (`Links::send_credit`).
    fn send_credit(&mut self, at: Cycle, to: LinkEnd, vc: u8, tail: bool);
    /// Packet `id` (read only: the routers' stages 3-5 change no packet but in the paths
    /// that `whole` serves).
    fn packet(&self, id: PacketId) -> &Packet;
    fn progress(&mut self) -> &mut Progress;
    /// Router output port `op` sent a flit (`Observers::router_flit_sent`).
    fn router_flit_sent(&mut self, op: usize);
    /// A header's hop, for `[trace] watch_flows` (`Observers::hop`; `HOOK` runs only).
    #[allow(clippy::too_many_arguments)] // the event's fields
    fn hop(&mut self, now: Cycle, flow: u32, packet: PacketId, kind: Hop, r: usize, port: usize, v: usize);
    /// A flit left input VC record `ivc` (`[trace] stalls`; `HOOK` runs only).
    fn moved(&mut self, ivc: usize, now: Cycle);
    /// Output port `op`'s arbitration tables where admission control rewrites them
    /// (`Reservations::out_tables`; `HOOK` runs only), else None.
    fn out_tables(&self, op: usize) -> Option<&SchedTables>;
    /// The routers' next draw for a header's way (`via_rng`, in arrival order; a shard's
    /// were drawn for it in that order before the phase, `Threads::sort_arrivals`).
    fn via_draw(&mut self) -> u64;
    /// Packet `packet` takes way `via` (`Packet::via`; a shard's is written after the
    /// phase: the routers after this one read it in a later cycle).
    fn set_via(&mut self, packet: PacketId, via: u16);
    /// The whole `Net`, for what only a one-threaded run does in the routers: marking a
    /// packet, admission control's hops, and the draws for a header that waits behind a
    /// tail (`VcRelease::TailSent`), drawn as that tail leaves. A threaded run is refused
    /// with any of them (`build::validate::simulation`), so a shard is never asked.
    fn whole(&mut self) -> &mut Net;
}

impl RouterNet for Net {
    #[inline(always)]
    fn send_flit(&mut self, at: Cycle, to: LinkEnd, flit: Flit) {
        self.links.send_flit(at, to, flit);
    }
    #[inline(always)]
    fn send_credit(&mut self, at: Cycle, to: LinkEnd, vc: u8, tail: bool) {
        self.links.send_credit(at, to, vc, tail);
    }
    #[inline(always)]
    fn packet(&self, id: PacketId) -> &Packet {
        self.packets.get(id)
    }
    #[inline(always)]
    fn progress(&mut self) -> &mut Progress {
        &mut self.progress
    }
    #[inline(always)]
    fn router_flit_sent(&mut self, op: usize) {
        self.obs.router_flit_sent(op);
    }
    #[inline(always)]
    fn hop(&mut self, now: Cycle, flow: u32, packet: PacketId, kind: Hop, r: usize, port: usize, v: usize) {
        self.obs.hop(now, flow, packet, kind, r, port, v);
    }
    #[inline(always)]
    fn moved(&mut self, ivc: usize, now: Cycle) {
        if let Some(st) = &mut self.obs.trace.stalls {
            *st.moved_at.at_mut(ivc) = now;
        }
    }
    #[inline(always)]
    fn out_tables(&self, op: usize) -> Option<&SchedTables> {
        self.reservations.out_tables.as_ref().map(|t| t.get(op))
    }
    #[inline(always)]
    fn via_draw(&mut self) -> u64 {
        use rand::RngCore;
        self.via_rng.next_u64()
    }
    #[inline(always)]
    fn set_via(&mut self, packet: PacketId, via: u16) {
        self.packets.get_mut(packet).via = via;
    }
    #[inline(always)]
    fn whole(&mut self) -> &mut Net {
        self
    }
}

//! A run's routers partitioned over threads (`simulation.threads`, issue 41).
//!
//! Routers meet only through links with a delay of at least one cycle (ARCHITECTURE.md
//! "Two-phase update"), so within a cycle the stages 3-5 of different routers read and
//! write nothing in common but the links, the progress counters and the output links'
//! flit counts. A threaded run splits the routers into contiguous ranges, one a shard,
//! each shard a `Routers` of its own (shard 0 is `Simulation::routers`), and runs the
//! routers' visits of a cycle as one parallel phase: each shard sends into its own
//! `Outbox` and counts into its own progress and its own slice of the link counts, reading
//! the packets it holds from the shared slab, which nothing writes during the phase. After
//! the phase the outboxes go onto the links in shard order. Shards are ranges of router
//! indices and a one-threaded run visits routers in index order, so every wheel list gets
//! the same items in the same order as one thread would give it: the output is the same
//! byte for byte, whatever the thread count (a test runs 1, 2 and 3).
//!
//! Everything else stays on one thread: traffic, the endpoints, and the sorting of the
//! arrivals at the routers (a header's way may be drawn as it arrives, from the one
//! generator in `Net`), each handed to the shard that owns its router (`inbox.rs`), which
//! takes them (stages 1-2) in the phase. On a large network a shard is whole blocks of
//! routers and takes a block's arrivals just before the block's visits (`inbox::BLOCK`).
//!
//! Why whole `Routers` a shard, indexed by the network's own router numbers: the stages
//! keep their indexing as it is, with no offset on any access. A shard's arrays span the
//! network but it touches only its own routers' entries; the buffers, by far the largest
//! part, are allocated zeroed (`ring::Rings`), so their untouched pages cost nothing, and
//! what a shard does touch of the per-VC records stays its own (`config::memory` counts a
//! shard's records).

use super::inbox::{Inbox, Inboxes};
use super::Routers;
use crate::flit::{Flit, Packet, Slab};
use crate::ids::{LinkEnd, PacketId};
use crate::metrics::trace::Hop;
use crate::net::{Net, Progress, RouterNet};
use crate::sched::SchedTables;
use crate::unchecked::At;
use crate::units::Cycle;
use rayon::prelude::*;

/// The shards beyond the first, and what a parallel phase needs.
pub(crate) struct Threads {
    /// Routers a shard: shard i owns routers `i * per .. (i + 1) * per`.
    pub per: usize,
    /// Shards 1, 2, ... (shard 0 is `Simulation::routers`).
    pub rest: Vec<Routers>,
    /// Per shard, what its routers sent and counted in the current phase.
    outboxes: Vec<Outbox>,
    /// Per block of a shard's routers (the shard, or `inbox::BLOCK` routers on a large
    /// network), what arrives at them this cycle (`sort_arrivals`).
    inboxes: Inboxes,
    pub pool: std::sync::Arc<rayon::ThreadPool>,
}

/// What a shard's routers sent in a phase, in sending order, and their progress. Aligned
/// to its own cache lines (two: adjacent lines are fetched in pairs): every flit a shard
/// sends writes a length and a counter here, and shards writing one line from two cores
/// would pass it between them at each write.
#[derive(Default)]
#[repr(align(128))]
struct Outbox {
    flits: Vec<(Cycle, LinkEnd, Flit)>,
    credits: Vec<(Cycle, LinkEnd, u8, bool)>,
    /// Ways its routers drew for packets (`RouterNet::set_via`).
    vias: Vec<(PacketId, u16)>,
    progress: Progress,
}

/// A shard's view of `Net` during a parallel phase (`RouterNet`).
pub(crate) struct ShardNet<'a> {
    out: &'a mut Outbox,
    /// Its inbox's way draws, and how many were taken.
    draws: &'a [u64],
    drawn: usize,
    packets: &'a Slab<Packet, PacketId>,
    /// The shard's part of `Metrics::router_link_flits`, from output port `first_port`.
    link_flits: &'a mut [u64],
    first_port: usize,
    measuring: bool,
}

impl RouterNet for ShardNet<'_> {
    #[inline(always)]
    fn send_flit(&mut self, at: Cycle, to: LinkEnd, flit: Flit) {
        self.out.flits.push((at, to, flit));
    }
    #[inline(always)]
    fn send_credit(&mut self, at: Cycle, to: LinkEnd, vc: u8, tail: bool) {
        self.out.credits.push((at, to, vc, tail));
    }
    #[inline(always)]
    fn packet(&self, id: PacketId) -> &Packet {
        self.packets.get(id)
    }
    #[inline(always)]
    fn progress(&mut self) -> &mut Progress {
        &mut self.out.progress
    }
    #[inline(always)]
    fn router_flit_sent(&mut self, op: usize) {
        if self.measuring {
            *self.link_flits.at_mut(op - self.first_port) += 1;
        }
    }
    // ([trace] and admission control take one thread: nothing to record, no tables)
    #[inline(always)]
    fn hop(&mut self, _: Cycle, _: u32, _: PacketId, _: Hop, _: usize, _: usize, _: usize) {}
    #[inline(always)]
    fn moved(&mut self, _: usize, _: Cycle) {}
    #[inline(always)]
    fn out_tables(&self, _: usize) -> Option<&SchedTables> {
        None
    }
    #[inline(always)]
    fn via_draw(&mut self) -> u64 {
        self.drawn += 1;
        *self.draws.at(self.drawn - 1)
    }
    #[inline(always)]
    fn set_via(&mut self, packet: PacketId, via: u16) {
        self.out.vias.push((packet, via));
    }
    fn whole(&mut self) -> &mut Net {
        unreachable!("a threaded run has no marking, admission control or draws behind a tail")
    }
}

impl Threads {
    /// `threads` shards of `per` routers each, each visited by blocks of `block` routers
    /// (`inbox.rs`; `per` a multiple of it); `build(i)` makes shard i (i >= 1).
    pub(crate) fn new(
        threads: usize,
        (per, block): (usize, usize),
        (routers, ports): (usize, usize),
        build: impl Fn(usize) -> Routers,
    ) -> Result<Threads, rayon::ThreadPoolBuildError> {
        assert!(per % block == 0);
        let inboxes = Inboxes::new(routers, block, ports);
        Ok(Threads {
            per,
            rest: (1..threads).map(build).collect(),
            outboxes: (0..threads).map(|_| Outbox::default()).collect(),
            inboxes,
            pool: std::sync::Arc::new(rayon::ThreadPoolBuilder::new().num_threads(threads).build()?),
        })
    }

    /// Hand this cycle's flits and credits for routers on `net`'s links to the shards'
    /// blocks owning them, with the way draws of their headers from `Net::via_rng`, in
    /// arrival order, as one thread draws them (`Inboxes::fill`).
    pub fn sort_arrivals(&mut self, net: &mut Net, now: Cycle, routers: &Routers) {
        self.inboxes.fill(&mut net.links, now, routers, Some(&mut net.via_rng));
    }

    /// `work(routers, net, inbox, routers)` for every block of every shard, a shard's
    /// blocks in order, each shard on its own thread, then what they sent onto the links
    /// in shard order and their progress into `net`'s.
    pub fn phase(
        &mut self,
        first: &mut Routers,
        net: &mut Net,
        work: impl Fn(&mut Routers, &mut ShardNet, &Inbox, std::ops::Range<usize>) + Sync,
    ) {
        let (ports, all) = (first.p.ports, first.topo.routers);
        let (per, block) = (self.per, self.inboxes.per);
        let (packets, measuring) = (&net.packets, net.obs.measuring);
        let link_flits = &mut net.obs.metrics.router_link_flits;
        let (rest, outboxes, inboxes) = (&mut self.rest, &mut self.outboxes, &self.inboxes);
        self.pool.install(|| {
            rayon::iter::once(first)
                .chain(rest.par_iter_mut())
                .zip(outboxes.par_iter_mut())
                .zip(link_flits.par_chunks_mut(per * ports))
                .enumerate()
                .for_each(|(i, ((routers, out), link_flits))| {
                    let mut side = ShardNet {
                        out,
                        draws: &[],
                        drawn: 0,
                        packets,
                        link_flits,
                        first_port: i * per * ports,
                        measuring,
                    };
                    for lo in (i * per..((i + 1) * per).min(all)).step_by(block) {
                        let inbox = inboxes.get(lo / block);
                        (side.draws, side.drawn) = (&inbox.draws, 0);
                        work(routers, &mut side, inbox, lo..(lo + block).min(all));
                    }
                });
        });
        for out in &mut self.outboxes {
            for (at, to, flit) in out.flits.drain(..) {
                net.links.send_flit(at, to, flit);
            }
            for (at, to, vc, tail) in out.credits.drain(..) {
                net.links.send_credit(at, to, vc, tail);
            }
            for (packet, via) in out.vias.drain(..) {
                net.packets.get_mut(packet).via = via;
            }
            net.progress.absorb(&mut out.progress);
        }
    }
}

/// Every router, over the shards, for reading (the watchdog's report, the invariant
/// checks): router r's state is its shard's.
pub(crate) struct AllRouters<'a> {
    /// Shard 0 (all routers in a one-threaded run); its parameters are every shard's.
    pub first: &'a Routers,
    pub rest: &'a [Routers],
    pub per: usize,
}

impl<'a> AllRouters<'a> {
    /// Router `r`'s shard.
    pub fn of(&self, r: usize) -> &'a Routers {
        match r / self.per {
            0 => self.first,
            i => &self.rest[i - 1],
        }
    }

    /// The shard of lane record `q` (`Params::lane_index`).
    pub fn of_lane(&self, q: usize) -> &'a Routers {
        self.of(q / (self.first.p.ports * self.first.p.lane_stride))
    }

    /// The per-lane records of all routers.
    pub fn lane_records(&self) -> usize {
        self.first.lane_records()
    }
}

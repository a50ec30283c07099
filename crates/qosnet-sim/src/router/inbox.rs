//! A cycle's arrivals at the routers handed out by group of routers (`Inboxes`): to the
//! shards of a threaded run (`shards.rs`), and to the blocks a large network's routers are
//! visited in on one thread (`BLOCK`, `Simulation::visit_routers`).
//!
//! Why blocks on one thread (issue 41, the memory layout for large networks): a router's
//! arrivals (stage 1) write its input VCs' records and buffers, and the credits arriving at
//! it its output VCs' records, which its own visit (stages 3-5) reads next. Taking every
//! router's arrivals first and visiting them after puts a whole network's arrivals between
//! the two, megabytes on a 64x64 mesh. Block by block, a block's arrivals and visits follow
//! each other: the 64x64 mesh then takes 0.78x the time (configs/bench/README.md; which
//! level of the caches pays is not traced: cachegrind's model of a 2 MiB L2 counts more
//! misses, not fewer, and 8% fewer L1 misses). Routers meet only through links with a
//! delay of at least a cycle (ARCHITECTURE.md "Two-phase update"), so the order changes
//! nothing but where the data is, as for the shards; what would see the order (the way
//! draws, `[trace]`'s records, admission control's hops) keeps the one order
//! (`Simulation::set_visits_by_block`).

use super::Routers;
use crate::ids::TO_ROUTER;
use crate::links::{Arrival, CreditMsg, Links};
use crate::net::RouterNet;
use crate::unchecked::At;
use crate::units::Cycle;

/// Routers a block: one word of `Routers::active` (a 64x64 mesh's row of routers).
pub(crate) const BLOCK: usize = 64;

/// A one-threaded run is visited by blocks from this many routers on. Measured (40-flit
/// uniform traffic at half the bisection bound, configs/bench/README.md): a 64x64 mesh
/// takes 0.78x the time by blocks, a 32x32 one about the same, a 16x16 one 1.05-1.10x
/// (sorting the arrivals costs a few instructions each, and its state fits the caches
/// either way).
pub(crate) const BLOCKS_FROM: usize = 2048;

/// The flits and credits arriving at a group of routers in a cycle, in arrival order. Why
/// a copy for a shard: the links' lists are written on the thread that runs the endpoints
/// and merges the outboxes; each shard reading the whole of them from another core costs a
/// cache line passed between the cores per few arrivals, its own part only half of that on
/// two. Aligned to its own cache lines (two: adjacent lines are fetched in pairs).
#[derive(Default)]
#[repr(align(128))]
pub(crate) struct Inbox {
    pub flits: Vec<Arrival>,
    pub credits: Vec<CreditMsg>,
    /// The way draws of its headers that draw one (`Routing::chooses_at_source`), in
    /// arrival order: drawn from `Net::via_rng` as one thread draws them.
    pub draws: Vec<u64>,
}

/// A cycle's arrivals at the routers, one `Inbox` per group of `per` consecutive routers.
pub(crate) struct Inboxes {
    /// Routers a group.
    pub per: usize,
    /// A port's group is `port * reciprocal >> 40`, `per` routers' ports a group: exact
    /// for every port (checked as they are made), a multiplication rather than a division
    /// per arrival.
    reciprocal: u64,
    list: Vec<Inbox>,
}

impl Inboxes {
    /// Inboxes for `routers` routers of `ports` ports each, in groups of `per`.
    pub fn new(routers: usize, per: usize, ports: usize) -> Inboxes {
        let per_ports = (per * ports) as u64;
        let reciprocal = (1u64 << 40).div_ceil(per_ports);
        // (port p's group is p / per_ports exactly while p * (reciprocal * per_ports - 2^40)
        // < 2^40: a hundred million ports and more)
        assert!((routers * ports) as u64 * (reciprocal * per_ports - (1 << 40)) < 1 << 40);
        Inboxes { per, reciprocal, list: (0..routers.div_ceil(per)).map(|_| Inbox::default()).collect() }
    }

    /// Input or output port `port`'s group.
    #[inline(always)]
    fn group(&self, port: u32) -> usize {
        ((port as u64 * self.reciprocal) >> 40) as usize
    }

    /// Group `i`'s arrivals.
    #[inline(always)]
    pub fn get(&self, i: usize) -> &Inbox {
        self.list.at(i)
    }

    /// Take this cycle's flits and credits for routers off `links` and hand them to the
    /// groups owning them, keeping their order, with (where `rng` is given) the way draws
    /// of the headers that will draw one as they are routed (`Routers::valiant_choice`: a
    /// header, not a preempted packet's dummy, entering the network or routed by a routing
    /// that chooses at every hop), drawn from `rng` in arrival order, as one thread draws
    /// them. The links' lists go back emptied, keeping their capacity.
    pub fn fill(
        &mut self,
        links: &mut Links,
        now: Cycle,
        routers: &Routers,
        rng: Option<&mut rand_xoshiro::Xoshiro256PlusPlus>,
    ) {
        use rand::RngCore;
        for inbox in &mut self.list {
            inbox.flits.clear();
            inbox.credits.clear();
            inbox.draws.clear();
        }
        let (mut flits, mut credits) = (links.flits.take(now, TO_ROUTER), links.credits.take(now, TO_ROUTER));
        let mut rng = rng.filter(|_| routers.routing.chooses_at_source());
        for a in &flits {
            let g = self.group(a.to);
            let inbox = self.list.at_mut(g);
            inbox.flits.push(*a);
            if let Some(rng) = rng.as_deref_mut() {
                // (a dummy header resumes a preempted packet, which keeps its way)
                if a.flit.is_head() && !a.flit.is_dummy() && routers.draws_way_at(a.to as usize) {
                    inbox.draws.push(rng.next_u64());
                }
            }
        }
        for c in &credits {
            let g = self.group(c.to);
            self.list.at_mut(g).credits.push(*c);
        }
        flits.clear();
        credits.clear();
        links.flits.restore(now, TO_ROUTER, flits);
        links.credits.restore(now, TO_ROUTER, credits);
    }
}

impl Routers {
    /// Stages 1-2 for what arrives at a group of routers (`inbox`): the credits, then the
    /// flits, each in arrival order, as `Simulation::deliver_credits` and `deliver_flits`
    /// take the whole network's.
    #[inline(always)]
    pub(crate) fn take_inbox<N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut N,
        inbox: &Inbox,
        now: Cycle,
    ) {
        for c in &inbox.credits {
            self.credit_arrived::<HOOK>(c.to as usize, c.vc, c.tail);
        }
        for a in &inbox.flits {
            self.receive::<PRE, AGE, HOOK>(net, a.to as usize, a.flit, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port's group by multiplication is its group by division, for every port, over
    /// group sizes and port counts of the networks built (up to a 128x128 mesh's routers
    /// in one group, and radix-64 routers).
    #[test]
    fn a_ports_group_is_the_division() {
        for (routers, per, ports) in
            [(16, 16, 5), (4096, 64, 5), (4096, 2048, 5), (1000, 7, 3), (16384, 64, 64), (9, 1, 9)]
        {
            let b = Inboxes::new(routers, per, ports);
            assert_eq!(b.list.len(), routers.div_ceil(per));
            for p in 0..(routers * ports) as u32 {
                assert_eq!(b.group(p), p as usize / (per * ports), "{routers} {per} {ports}: port {p}");
            }
        }
    }
}

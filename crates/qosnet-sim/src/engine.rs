//! The cycle loop.
//!
//! A simulation is its components — routers, endpoints, traffic — each owning its state,
//! and what they share (`Net`: the links, the packets and messages, the progress counters,
//! the observers). Components talk only through the links, each with a delay of at least
//! one cycle, so nothing a component does in cycle t is visible to another before t + 1
//! and the result does not depend on the order components are visited (ARCHITECTURE.md
//! "Two-phase update"). A cycle reads as the pipeline: traffic is born, links deliver
//! credits and flits, the active routers run their stages, the endpoints inject. Only active routers
//! and endpoints are visited; when nothing is in flight the loop jumps to the next source
//! event. ARCHITECTURE.md draws the cycle and where each seam is.

use crate::config::{Config, TrafficClass};
use crate::endpoint::{EndpointModel, Endpoints, NewMessage};
use crate::error::SimError;
use crate::ids::{MessageId, NodeId, TO_ENDPOINT, TO_ROUTER};
use crate::net::Net;
use crate::router::inbox::Inboxes;
use crate::router::shards::{AllRouters, Threads};
use crate::router::Routers;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::driver::Traffic;
use crate::units::{Clock, Cycle};

/// Cycles between BookSim2's stability tests while it drains its measured packets
/// (`trafficmanager.cpp`: every 1,000 cycles; `Simulation::latency_so_far`).
const STABILITY_EVERY: Cycle = 1000;

/// When a run measures and ends, in cycles.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RunParams {
    /// End of the measurement window (it starts at the metrics' warm-up).
    pub window_end: Cycle,
    /// The run stops here even with measured messages undelivered (saturation).
    pub drain_end: Cycle,
    /// Cycles with flits in flight and none moving before a deadlock is reported.
    pub watchdog: Cycle,
}

/// A whole simulated network and its run state.
pub struct Simulation {
    pub(crate) config: Config,
    pub(crate) clock: Clock,
    pub(crate) run: RunParams,
    /// The routers: all of them, or in a threaded run shard 0's (`router::shards`).
    pub(crate) routers: Routers,
    /// A threaded run's other shards and its thread pool (`simulation.threads` > 1).
    pub(crate) threads: Option<Box<Threads>>,
    /// A one-threaded run's arrivals by block of routers, where its routers are visited
    /// block by block (`router::inbox`, `set_visits_by_block`).
    pub(crate) blocks: Option<Box<Inboxes>>,
    pub(crate) endpoints: Endpoints,
    pub(crate) traffic: Traffic,
    pub(crate) net: Net,
    pub(crate) now: Cycle,
    pub(crate) finished: bool,
    /// The drain limit passed with measured messages still undelivered.
    pub(crate) drain_incomplete: bool,
    /// BookSim2's stability test (`latency_so_far`): its value at the window's end (None
    /// before), the largest it took there and every `STABILITY_EVERY` cycles of the drain,
    /// and the cycle of the next test.
    pub(crate) window_end_latency: Option<f64>,
    pub(crate) stability_latency: f64,
    pub(crate) next_stability_test: Cycle,
    /// Visit routers in reverse order (a test hook: results must not change).
    pub(crate) reverse_visits: bool,
}

/// Message `k` of what a source created.
#[inline(always)]
fn new_message(b: &crate::traffic::birth::Birth, k: u32) -> NewMessage {
    NewMessage {
        src: b.node,
        dst: b.dst,
        class: b.class,
        size: b.size(k),
        packet_flits: b.packet_flits,
        vtick: b.vtick,
        flow: b.flow,
        frame: b.frame,
        phase: b.phase,
    }
}

impl Simulation {
    pub fn now(&self) -> Cycle {
        self.now
    }

    /// End of the measurement window (for progress reporting).
    pub fn window_end(&self) -> Cycle {
        self.run.window_end
    }

    /// Visit active routers in reverse order each cycle. Components only talk through
    /// delayed link and credit channels, so this must not change any result; tests use it
    /// to check that claim.
    #[doc(hidden)]
    pub fn set_reverse_visits(&mut self, on: bool) {
        self.reverse_visits = on;
    }

    /// Visit the routers by blocks of `per`, each block's arrivals just before its visits
    /// (`router::inbox`; chosen with `inbox::BLOCK` for networks of `BLOCKS_FROM` routers
    /// and more as the run is built; tests choose it, with any size, for any network, as
    /// the results must not change), where the run allows it: one thread, no way drawn as
    /// a header arrives (the one generator's draws go in arrival order), no `[trace]`
    /// recordings and no admission control's hops, which would see the order. None: all
    /// arrivals, then all visits. Returns whether it visits by blocks.
    #[doc(hidden)]
    pub fn set_visits_by_block(&mut self, per: Option<usize>) -> bool {
        let r = &self.routers;
        let allowed = self.threads.is_none()
            && !r.routing.chooses_at_source()
            && !self.net.obs.trace.per_flit()
            && !self.net.reservations.is_on();
        self.blocks = per
            .filter(|&per| allowed && per > 0)
            .map(|per| Box::new(Inboxes::new(r.topo.routers, per, r.p.ports)));
        self.blocks.is_some()
    }

    /// Every router, over a threaded run's shards (`router::shards`), for reading.
    pub(crate) fn all_routers(&self) -> AllRouters<'_> {
        match &self.threads {
            None => AllRouters { first: &self.routers, rest: &[], per: usize::MAX },
            Some(t) => AllRouters { first: &self.routers, rest: &t.rest, per: t.per },
        }
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn topology(&self) -> &Topology {
        &self.routers.topo
    }

    pub fn routing(&self) -> &Routing {
        &self.routers.routing
    }

    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// Flits injected / ejected / router-to-anything link traversals so far.
    pub fn flit_counts(&self) -> (u64, u64, u64) {
        let p = &self.net.progress;
        (p.flits_injected, p.flits_ejected, p.flit_hops)
    }

    /// Dummy flits preemption has made so far.
    pub fn dummy_flits(&self) -> u64 {
        self.net.progress.dummy_flits
    }

    /// What probe-based admission control did, per traffic class (`TrafficClass::index`):
    /// `None` when it is off (document 000 §4.1).
    pub fn admission_stats(&self) -> Option<[crate::control::AdmissionStats; 3]> {
        self.endpoints.agents.admission.as_ref().map(|a| a.stats)
    }

    /// What the congestion-control agent (credit-based, ALO, Self-Tuned; document 000
    /// §4.2, §6.1) did: `None` when none runs.
    pub fn congestion_stats(&self) -> Option<crate::control::CongestionStats> {
        self.endpoints.agents.congestion_stats()
    }

    /// Admission control's reservation invariant: every link's reserved bandwidth is the
    /// sum over the connections holding it, never over its limit (`Ok` when it is off).
    pub fn check_reservations(&self) -> Result<(), String> {
        self.net.reservations.check()?;
        self.endpoints.agents.check_credits()
    }

    /// Bandwidth reserved on router `r`'s output port `p` (flits per cycle), and the link's
    /// (real-time, best-effort) VL-arbitration weights, recomputed from the reservations.
    pub fn port_reservation(&self, r: usize, p: usize) -> (f64, [u32; 2]) {
        let res = &self.net.reservations;
        if !res.is_on() {
            return (0.0, [0, crate::control::ROUND]);
        }
        let l = res.output_link(r, p);
        (res.reserved(l) as f64 / crate::control::LINK as f64, res.weights(l))
    }

    /// The arbitration tables router `r`'s output port `p` serves its link by now: the
    /// configured ones, or those admission control rewrote from the link's reservations
    /// (document 000 §4.1).
    pub fn output_tables(&self, r: usize, p: usize) -> &crate::sched::SchedTables {
        let op = r * self.topology().ports + p;
        self.net.reservations.out_tables.as_ref().map_or(&self.routers.out.tables, |t| t.get(op))
    }

    /// The arbitration tables node `n`'s HCA serves its injection link by now (as
    /// `output_tables`).
    pub fn injection_tables(&self, n: usize) -> &crate::sched::SchedTables {
        self.net.reservations.hca_tables.as_ref().map_or(&self.endpoints.nic_tables, |t| t.get(n))
    }

    /// Send and receive CQEs posted so far at `node` (the HCA's completion queue; the
    /// credit-based congestion control counts them).
    pub fn completions(&self, node: usize) -> (u64, u64) {
        self.endpoints.completions(node)
    }

    /// Simulate at most `max_cycles` more cycles. Returns whether the run has finished:
    /// every measured message delivered after the window, or the drain limit reached
    /// (saturation).
    pub fn advance(&mut self, max_cycles: u64) -> Result<bool, SimError> {
        match &self.threads {
            Some(t) => {
                let pool = t.pool.clone();
                pool.install(|| self.advance_here(max_cycles))
            }
            None => self.advance_here(max_cycles),
        }
    }

    fn advance_here(&mut self, max_cycles: u64) -> Result<bool, SimError> {
        let stop = self.now.saturating_add(max_cycles);
        while !self.finished && self.now < stop {
            if self.now >= self.next_stability_test {
                // (as BookSim2: at the end of the measured samples, whatever is out, then
                // while measured messages are)
                let at_end = self.window_end_latency.is_none();
                if at_end || self.net.progress.measured_outstanding > 0 {
                    let latency = self.latency_so_far();
                    if at_end {
                        self.window_end_latency = Some(latency);
                    }
                    self.stability_latency = self.stability_latency.max(latency);
                }
                self.next_stability_test = self.now + STABILITY_EVERY;
            }
            // (a run with application models ends when its last job completes: `generate`)
            if self.now >= self.run.window_end
                && self.net.progress.measured_outstanding == 0
                && self.traffic.apps.is_none()
            {
                self.finished = true;
                break;
            }
            if self.now >= self.run.drain_end {
                self.finished = true;
                self.drain_incomplete = true;
                break;
            }
            if self.is_idle() {
                // Nothing in flight: jump to the next message creation (or the end).
                let target = self.traffic.next_event().min(self.run.drain_end).min(stop);
                let target =
                    if self.now < self.run.window_end { target.min(self.run.window_end) } else { target };
                if target > self.now {
                    self.now = target;
                    self.net.progress.last_progress = self.now;
                    continue;
                }
            }
            self.step()?;
        }
        if let Some(v) = self.net.progress.violation.take() {
            return Err(SimError::Invariant { cycle: self.now, what: v });
        }
        Ok(self.finished)
    }

    /// The mean latency BookSim2 tests against its `latency_thres` at the end of each sample
    /// and every 1,000 cycles of its drain, to call a run unstable (`trafficmanager.cpp`),
    /// taken now: the measured messages delivered so far, each once at its latency, and each
    /// flit not yet delivered, at its message's age, of the messages under way (cut into
    /// packets: in the network or being sent) and of the next message of each source queue
    /// with nothing of its class being sent (of any class, for a single FIFO). That last is
    /// BookSim2's source, which creates a source's next packet only when the one before has
    /// been sent (with its creation time as drawn), so a backlog behind it does not count.
    /// (Per-VC source queues, `vc_queues.rs`, are not looked at: BookSim2 has none.)
    fn latency_so_far(&self) -> f64 {
        let nodes = &self.net.obs.metrics.nodes;
        let mut sum: u64 = nodes.iter().map(|n| n.latency_sum).sum();
        let mut count: u64 = nodes.iter().map(|n| n.messages_delivered).sum();
        let now = self.now;
        let mut waiting = |m: &crate::flit::Message| {
            let flits = (m.size - m.delivered) as u64;
            sum += flits * now.saturating_sub(m.created);
            count += flits;
        };
        for m in self.net.messages.live_items().filter(|m| m.packetized > 0 && m.delivered < m.size) {
            waiting(m);
        }
        let e = &self.endpoints;
        for (q, queue) in e.nic_queue.iter().enumerate() {
            let (n, c) = (q / 3, q % 3);
            let idle =
                if e.p.per_class_queues { e.nic_sending_class[n][c] == 0 } else { e.nic_sending[n] == 0 };
            match queue.front().map(|&m| self.net.messages.get(m)) {
                Some(m) if idle && m.packetized == 0 => waiting(m),
                _ => {}
            }
        }
        if count == 0 {
            0.0
        } else {
            sum as f64 / count as f64
        }
    }

    fn is_idle(&self) -> bool {
        // (credits and control messages in flight are looked for last: no count of them is
        // kept)
        self.net.progress.in_flight == 0
            && self.endpoints.is_idle()
            && self.routers.is_idle()
            && self.threads.as_ref().is_none_or(|t| t.rest.iter().all(Routers::is_idle))
            && self.net.links.credits.is_empty()
            && self.net.links.control.is_empty()
            && self.net.app_deliveries.list.is_empty()
    }

    /// One cycle.
    pub fn step(&mut self) -> Result<(), SimError> {
        let v = self.routers.variant();
        // Application models (document 001 §4.2) ride with the hooks: a run without them
        // compiles their per-cycle step and per-message delivery check out.
        let hooks = v.marking
            || v.release_on_send
            || v.credit_at_crossbar
            || v.reweighted
            || v.mixed_keys
            || self.net.obs.trace.per_flit()
            || self.traffic.apps.is_some();
        match (v.preemptive, v.age, hooks) {
            (false, true, false) => self.cycle::<false, true, false>(),
            (false, false, false) => self.cycle::<false, false, false>(),
            (true, true, false) => self.cycle::<true, true, false>(),
            (true, false, false) => self.cycle::<true, false, false>(),
            (false, true, true) => self.cycle::<false, true, true>(),
            (false, false, true) => self.cycle::<false, false, true>(),
            (true, true, true) => self.cycle::<true, true, true>(),
            (true, false, true) => self.cycle::<true, false, true>(),
        }
    }

    /// One cycle of a run of router variant `PRE`, `AGE` (`router::Variant`), with the
    /// per-flit hooks compiled in or not (`HOOK`). (Not
    /// inlined: each variant is then one function with its stages inlined.)
    #[inline(never)]
    fn cycle<const PRE: bool, const AGE: bool, const HOOK: bool>(&mut self) -> Result<(), SimError> {
        let now = self.now;
        self.net.obs.begin_cycle(now);
        self.generate::<HOOK>(now);
        self.deliver_credits::<HOOK>(now);
        self.deliver_control(now);
        self.deliver_flits::<PRE, AGE, HOOK>(now);
        self.visit_routers::<PRE, AGE, HOOK>(now);
        if HOOK {
            if let Some(stalls) = &mut self.net.obs.trace.stalls {
                self.routers.count_stalls(now, stalls);
            }
        }
        match self.endpoints.model() {
            EndpointModel::Ideal => self.endpoints.inject::<false, HOOK>(&mut self.net, now),
            EndpointModel::Nic => self.endpoints.inject::<true, HOOK>(&mut self.net, now),
        }
        let sideband = self.endpoints.agents.sideband;
        if sideband != 0 && now % sideband == 0 {
            self.endpoints.read_sideband(&self.routers, self.net.progress.flits_ejected);
        }
        if self.net.progress.in_flight > 0 && now - self.net.progress.last(now) > self.run.watchdog {
            return Err(self.all_routers().deadlock(now, now - self.net.progress.last(now)));
        }
        self.now += 1;
        Ok(())
    }

    /// The traffic born now, queued at its sources; with `HOOK`, what application models
    /// send now.
    #[inline(always)]
    fn generate<const HOOK: bool>(&mut self, now: Cycle) {
        let (endpoints, net) = (&mut self.endpoints, &mut self.net);
        let nic = endpoints.model() == EndpointModel::Nic;
        self.traffic.generate(now, self.clock.flit_bits, |b| {
            let messages = b.messages();
            if b.frame != u32::MAX {
                net.obs.frame_expected(b.flow as usize, b.frame as u64, now, messages, b.phase);
            }
            for k in 0..messages {
                if nic {
                    endpoints.create_message::<true>(net, new_message(&b, k), now);
                } else {
                    endpoints.create_message::<false>(net, new_message(&b, k), now);
                }
            }
        });
        if HOOK && self.traffic.apps.is_some() {
            self.applications(now);
        }
    }

    /// Application models (document 001 §4.2): the messages delivered to them, then what
    /// their ranks send now. Only in the `HOOK` variant of the cycle (`step`), out of line:
    /// a run without them has none of it compiled in.
    #[inline(never)]
    fn applications(&mut self, now: Cycle) {
        let Some(apps) = &mut self.traffic.apps else { return };
        apps.delivered(&mut self.net.app_deliveries.list);
        let (endpoints, net) = (&mut self.endpoints, &mut self.net);
        let nic = endpoints.model() == EndpointModel::Nic;
        apps.due(now, self.traffic.phase, |b| {
            for k in 0..b.messages() {
                if nic {
                    endpoints.create_message::<true>(net, new_message(&b, k), now);
                } else {
                    endpoints.create_message::<false>(net, new_message(&b, k), now);
                }
            }
        });
        // A run with application models ends when its last job completes (document 001
        // §4.2 measures each job's completion time).
        if apps.all_done() {
            self.finished = true;
        }
    }

    /// The credits arriving now: at routers' output ports, then at endpoints. (Each list
    /// is out of its wheel while it is handed on, and goes back with its capacity: nothing
    /// is allocated per cycle. Nothing is sent into the slot being delivered: every delay
    /// is at least one cycle.)
    #[inline(always)]
    fn deliver_credits<const HOOK: bool>(&mut self, now: Cycle) {
        // (a threaded run's shards take theirs in the parallel phase, `visit_shards`; a
        // run by blocks, each block before its visits, `visit_routers`)
        if self.threads.is_none() && self.blocks.is_none() {
            let mut batch = self.net.links.credits.take(now, TO_ROUTER);
            for c in &batch {
                self.routers.credit_arrived::<HOOK>(c.to as usize, c.vc, c.tail);
            }
            batch.clear();
            self.net.links.credits.restore(now, TO_ROUTER, batch);
        }
        let mut batch = self.net.links.credits.take(now, TO_ENDPOINT);
        for c in &batch {
            self.endpoints.credit_arrived(c.to as usize, c.vc, c.tail);
        }
        batch.clear();
        self.net.links.credits.restore(now, TO_ENDPOINT, batch);
    }

    /// The control messages arriving now at endpoints (`links::Control`).
    #[inline(always)]
    fn deliver_control(&mut self, now: Cycle) {
        let mut batch = self.net.links.control.take(now, TO_ENDPOINT);
        for c in &batch {
            self.endpoints.control_arrived(&mut self.net, c.to.index(), c.msg, now);
        }
        batch.clear();
        self.net.links.control.restore(now, TO_ENDPOINT, batch);
    }

    /// The flits arriving now: into routers' input ports (stage 1), then into the sinks.
    /// (Neither reads what the other changes, so the order between them does not matter.)
    #[inline(always)]
    fn deliver_flits<const PRE: bool, const AGE: bool, const HOOK: bool>(&mut self, now: Cycle) {
        if self.threads.is_none() && self.blocks.is_none() {
            let mut batch = self.net.links.flits.take(now, TO_ROUTER);
            for a in &batch {
                self.routers.receive::<PRE, AGE, HOOK>(&mut self.net, a.to as usize, a.flit, now);
            }
            batch.clear();
            self.net.links.flits.restore(now, TO_ROUTER, batch);
        }
        let mut batch = self.net.links.flits.take(now, TO_ENDPOINT);
        match self.endpoints.model() {
            EndpointModel::Ideal => {
                for a in &batch {
                    self.endpoints.eject::<false, HOOK>(&mut self.net, a.to as usize, a.flit, now);
                }
            }
            EndpointModel::Nic => {
                for a in &batch {
                    self.endpoints.eject::<true, HOOK>(&mut self.net, a.to as usize, a.flit, now);
                }
            }
        }
        batch.clear();
        self.net.links.flits.restore(now, TO_ENDPOINT, batch);
    }

    /// Stages 3-5 of every router with work, in index order (so neighbouring routers'
    /// per-port state shares cache lines). A router activates only itself while it runs:
    /// arrivals came first. A run by blocks (`router::inbox`) takes a block's arrivals
    /// (stages 1-2) just before its visits, so that what they bring into the cache is
    /// there for the visits: the order `visit_shards` gives each shard, with blocks for
    /// shards. (One call of the stages for both: each call site is a copy of them.)
    #[inline(always)]
    fn visit_routers<const PRE: bool, const AGE: bool, const HOOK: bool>(&mut self, now: Cycle) {
        if self.threads.is_some() {
            return self.visit_shards::<PRE, AGE, HOOK>(now);
        }
        let (routers, net, reverse) = (&mut self.routers, &mut self.net, self.reverse_visits);
        let all = routers.topo.routers;
        // (without blocks: one group, the whole network, whose arrivals came before)
        let per = match &mut self.blocks {
            Some(blocks) => {
                blocks.fill(&mut net.links, now, routers, None);
                blocks.per
            }
            None => all,
        };
        let groups = all.div_ceil(per);
        for i in 0..groups {
            let g = if reverse { groups - 1 - i } else { i };
            if let Some(blocks) = &self.blocks {
                routers.take_inbox::<_, PRE, AGE, HOOK>(net, blocks.get(g), now);
            }
            routers.visit_range(net, g * per..((g + 1) * per).min(all), reverse, |routers, net, r| {
                routers.router_cycle::<PRE, AGE, HOOK>(net, r, now)
            });
        }
        if self.routers.p.internal_speedup > 1 {
            self.internal_passes::<PRE, AGE, HOOK>(now);
        }
    }

    /// The routers' part of a threaded run's cycle (`router::shards`), as one parallel
    /// phase over the shards: the credits and flits arriving at each shard's routers
    /// (stage 1-2), then its routers' visits; then each internal pass as another phase, in
    /// the order one thread runs them. (The endpoints took their arrivals before: neither
    /// reads what the other changes, as in `deliver_flits`.) Out of line: a one-threaded
    /// run tests for it once a cycle.
    #[inline(never)]
    fn visit_shards<const PRE: bool, const AGE: bool, const HOOK: bool>(&mut self, now: Cycle) {
        let Some(threads) = &mut self.threads else { return };
        let (routers, net, reverse) = (&mut self.routers, &mut self.net, self.reverse_visits);
        threads.sort_arrivals(net, now, routers);
        threads.phase(routers, net, |routers, net, inbox, range| {
            routers.take_inbox::<_, PRE, AGE, HOOK>(net, inbox, now);
            routers.visit_range(net, range, reverse, |routers, net, r| {
                routers.router_cycle::<PRE, AGE, HOOK>(net, r, now)
            });
        });
        for _ in 1..routers.p.internal_speedup {
            threads.phase(routers, net, |routers, net, _, range| {
                routers.visit_range(net, range, reverse, |routers, net, r| {
                    routers.internal_pass::<PRE, AGE, HOOK>(net, r, now)
                })
            });
        }
    }

    /// BookSim2's internal speedup: stages 3 and 4 of every router with work, again, in
    /// the same order (`Routers::internal_pass`). Out of line: a run without it carries one
    /// test a cycle.
    #[inline(never)]
    fn internal_passes<const PRE: bool, const AGE: bool, const HOOK: bool>(&mut self, now: Cycle) {
        for _ in 1..self.routers.p.internal_speedup {
            self.routers.visit_active(&mut self.net, self.reverse_visits, |routers, net, r| {
                routers.internal_pass::<PRE, AGE, HOOK>(net, r, now)
            });
        }
    }

    /// Queue a message at node `src` now, outside any traffic source (tests and hand-worked
    /// scenarios). It belongs to the flow after the sources' (the last row of `flows`) and is
    /// measured if created inside the window.
    #[doc(hidden)]
    pub fn post_message(
        &mut self,
        src: NodeId,
        dst: NodeId,
        class: TrafficClass,
        size: u32,
        vtick: u32,
    ) -> MessageId {
        self.net.obs.begin_cycle(self.now);
        let m = NewMessage {
            src,
            dst,
            class,
            size,
            packet_flits: size,
            vtick,
            flow: self.traffic.sources.len() as u32,
            frame: u32::MAX,
            phase: self.traffic.phase,
        };
        match self.endpoints.model() {
            EndpointModel::Ideal => self.endpoints.create_message::<false>(&mut self.net, m, self.now),
            EndpointModel::Nic => self.endpoints.create_message::<true>(&mut self.net, m, self.now),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (port, lane) has its own record, `lane_place` inverts `lane_index`, and a
    /// port's block is an odd number of records (padding only where the lanes are even).
    #[test]
    fn lane_index_is_one_to_one_with_odd_port_blocks() {
        for (vcs, kind, stride) in [(16, "traditional", 17), (3, "traditional", 3), (4, "preemptive", 9)] {
            let toml = format!(
                "[topology]\nkind = \"mesh\"\nk = 2\nn = 2\n[router]\nvcs = {vcs}\nkind = \"{kind}\"\n\
                 [[traffic]]\nprocess = \"bernoulli\"\nload = 0.1\npattern = {{ kind = \"uniform\" }}\n"
            );
            let sim = Simulation::from_toml(&toml, None).unwrap();
            let p = &sim.routers.p;
            assert_eq!(p.lane_stride, stride);
            let mut seen = vec![false; sim.routers.lane_records()];
            for port in 0..sim.routers.topo.routers * p.ports {
                for lane in 0..p.lanes {
                    let i = p.lane_index(port, lane);
                    assert!(!std::mem::replace(&mut seen[i], true), "{port}.{lane} shares record {i}");
                    assert_eq!(p.lane_place(i), (port, lane));
                }
            }
            assert_eq!(sim.routers.in_vc.len(), sim.routers.lane_records());
            assert_eq!(sim.routers.out_vc.len(), sim.routers.lane_records());
        }
    }
}

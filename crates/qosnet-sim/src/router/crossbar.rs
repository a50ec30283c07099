//! Stage 4: the crossbar. The scheduler at each crossbar input chooses one of that port's
//! VCs whose front flit is ready and whose output VC buffer has room (document 003 §3,
//! Fig. 1); each crossbar output then grants the inputs that chose it in round-robin order
//! from the input after the one it served last (a separable input-first allocator, the
//! default, `config::AllocatorKind`). An input whose choice lost keeps its scheduler state
//! and tries again, for another output, in the next iteration. With speedup S an input
//! may send, and an output accept, S flits per cycle. The other allocators match inputs to
//! outputs first and let the input's scheduler choose among its VCs to the output it was
//! matched with (`islip.rs`, `wavefront.rs`). The matching without speedup is written over
//! a request matrix and pointers alone (`matching.rs`, tested by hand there); this file
//! gives it the router's state (`Live`). Moving a flit out of the input buffer returns a
//! credit upstream.

use super::matching::{self, Crossbar, XbarScratch};
use super::params::Rounds;
use super::Routers;
use super::MAX_PORTS;
use crate::config::AllocatorKind;
use crate::flit::{DUMMY, HEAD, LOCAL, TAIL};
use crate::metrics::trace::Hop;
use crate::net::RouterNet;
use crate::sched::{bits, bits64, low_bits, rotated, SchedTables, Scheduler};
use crate::unchecked::At;
use crate::units::Cycle;

/// Stage 4's own state (`Routers::sa`): the crossbar inputs' schedulers, the allocators'
/// pointers, and its scratch.
#[derive(Clone, Debug)]
pub(crate) struct SwitchAllocation {
    /// Per input port: the crossbar input's scheduler over its VCs.
    pub sched: Vec<Scheduler>,
    /// The input schedulers' weight and arbitration tables (`SchedTables`).
    pub tables: SchedTables,
    /// Per output port: the input port after the one the crossbar output served last.
    pub rr: Vec<u8>,
    /// Per input port: iSLIP's accept pointer, the output after the one it accepted last
    /// in a first iteration (`islip.rs`).
    pub accept: Vec<u8>,
    /// Per router: the wavefront allocator's priority diagonal this cycle (`wavefront.rs`).
    pub wave_priority: Vec<u8>,
    /// Stage 4's saved input-scheduler states of a router's visit (reused: nothing is
    /// allocated per cycle).
    pub saved: Vec<Scheduler>,
    /// Per input port, with `Rounds::OutputFirst`: the output after the one it was last
    /// granted (BookSim2's input arbiter); empty otherwise.
    pub out_rr: Vec<u8>,
    /// Their saved values, as `saved`'s.
    pub saved_out: Vec<u8>,
    /// The per-router-visit scratch (`XbarScratch`).
    pub scratch: XbarScratch,
    /// Per router, a bit per input port that may have flits to send (set eagerly,
    /// cleared lazily when the stage finds the port idle).
    pub r_ports: Vec<u64>,
}

impl Routers {
    #[inline(always)]
    pub(crate) fn crossbar_stage<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        // Inputs that may have a flit to send.
        let inputs = *self.sa.r_ports.at(r);
        if inputs == 0 {
            return;
        }
        // (without `HOOK` a run not by age is by rate keys on both sides: `Variant`)
        let by_key = self.in_keys.rated_in::<AGE>(!HOOK);
        // Without speedup (the documents' routers) an output that granted, or an input that
        // sent, is done for the cycle: the rounds keep no counts, so they are kept apart from
        // the speedup rounds and each output's grant is a bit scan (a twentieth fewer
        // instructions a cycle, measured: configs/bench/README.md).
        match self.p.rounds {
            Rounds::Separable if inputs & (inputs - 1) == 0 => {
                // One input may send: its choice has no rival, so it is granted at once
                // (the rounds would come to the same after one nomination and one grant).
                let port = inputs.trailing_zeros() as usize;
                if let Some((v, out)) = self.nominate::<PRE, false>(r, port, 0, 0, port, now) {
                    self.traverse::<PRE, AGE, HOOK>(net, r, port, v, now);
                    self.served(r * self.p.ports + out, port);
                }
            }
            Rounds::Separable => {
                let iterations = self.p.iterations;
                let mut x = Live::<_, PRE, AGE, HOOK> { routers: self, net, r, now };
                matching::separable(&mut x, inputs, iterations, by_key)
            }
            Rounds::OutputFirst => self.rounds_output_first::<PRE, AGE, HOOK>(net, r, inputs, by_key, now),
            Rounds::Islip => self.rounds_islip::<PRE, AGE, HOOK>(net, r, inputs, by_key, now),
            Rounds::Wavefront => self.rounds_wavefront::<PRE, AGE, HOOK>(net, r, inputs, now),
            Rounds::Speedup(s) => self.rounds_speedup::<PRE, AGE, HOOK>(net, r, inputs, s, by_key, now),
            Rounds::Expanded => self.rounds_expanded::<PRE, AGE, HOOK>(net, r, inputs, by_key, now),
        }
    }

    /// The separable allocator's rounds with BookSim2's input arbiters, each input choosing
    /// an output first (`Rounds::OutputFirst`, `Routers::output_first`).
    #[inline(never)]
    fn rounds_output_first<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        inputs: u64,
        by_key: bool,
        now: Cycle,
    ) {
        let iterations = self.p.iterations;
        let mut x = Live::<_, PRE, AGE, HOOK, true> { routers: self, net, r, now };
        matching::separable(&mut x, inputs, iterations, by_key)
    }

    /// iSLIP's rounds at router `r` (`islip.rs`).
    #[inline(never)]
    fn rounds_islip<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        inputs: u64,
        by_key: bool,
        now: Cycle,
    ) {
        let iterations = self.p.iterations;
        super::islip::islip(
            &mut Live::<_, PRE, AGE, HOOK> { routers: self, net, r, now },
            inputs,
            iterations,
            by_key,
        );
    }

    /// The wavefront allocator's pass at router `r` (`wavefront.rs`).
    #[inline(never)]
    fn rounds_wavefront<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        inputs: u64,
        now: Cycle,
    ) {
        let mut priority = *self.sa.wave_priority.at(r);
        super::wavefront::wavefront(
            &mut Live::<_, PRE, AGE, HOOK> { routers: self, net, r, now },
            inputs,
            &mut priority,
        );
        *self.sa.wave_priority.at_mut(r) = priority;
    }

    /// Stage 4 on BookSim2's expanded crossbar (`Rounds::Expanded`): the configured
    /// allocator matches crossbar inputs to crossbar outputs (`Expanded`).
    #[inline(never)]
    fn rounds_expanded<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        inputs: u64,
        by_key: bool,
        now: Cycle,
    ) {
        let (s_in, iterations) = (self.p.input_speedup, self.p.iterations);
        // Every crossbar input of a port that may send (a port's are consecutive).
        let lanes_of_port = low_bits(s_in);
        let crossbar_inputs = bits64(inputs).fold(0u64, |m, p| m | lanes_of_port << (p * s_in));
        let allocator = self.p.allocator;
        let mut x = Expanded { live: Live::<_, PRE, AGE, HOOK> { routers: self, net, r, now } };
        match allocator {
            AllocatorKind::SeparableInputFirst => {
                matching::separable(&mut x, crossbar_inputs, iterations, by_key)
            }
            AllocatorKind::Islip => super::islip::islip(&mut x, crossbar_inputs, iterations, by_key),
            AllocatorKind::Wavefront => {
                let mut priority = *x.live.routers.sa.wave_priority.at(r);
                super::wavefront::wavefront(&mut x, crossbar_inputs, &mut priority);
                *x.live.routers.sa.wave_priority.at_mut(r) = priority;
            }
        }
    }

    /// Inputs whose nomination lost keep their scheduler's state (`nominate` saved it),
    /// and (`OUT`: BookSim2's input arbiters, `Rounds::OutputFirst`) their output pointer.
    #[inline(always)]
    fn restore_losers<const OUT: bool>(&mut self, r: usize, losers: u64) {
        if !self.sa.tables.stateless {
            for port in bits64(losers) {
                *self.sa.sched.at_mut(r * self.p.ports + port) = *self.sa.saved.at(port);
            }
        }
        if OUT {
            for port in bits64(losers) {
                *self.sa.out_rr.at_mut(r * self.p.ports + port) = *self.sa.saved_out.at(port);
            }
        }
    }

    /// One round's nominations: each input in `pending` nominates a VC (`nominate`), noted
    /// in the scratch (`nominee`, `requests`, with rate-based keys `keys`). Returns the
    /// outputs asked for and the inputs that nominated.
    #[inline(always)]
    fn nominations<const PRE: bool>(
        &mut self,
        r: usize,
        pending: u64,
        saturated: u64,
        by_key: bool,
        now: Cycle,
    ) -> (u64, u64) {
        let ports = self.p.ports;
        let single = self.p.speedup == 1;
        let (mut asked, mut nominated) = (0u64, 0u64);
        for port in bits64(pending) {
            // (an input at its speedup limit is no longer pending)
            let used = if single { 0 } else { *self.sa.scratch.used.at(port) };
            let Some((v, out)) = self.nominate::<PRE, false>(r, port, saturated, used, port, now) else {
                continue;
            };
            if by_key {
                *self.sa.scratch.keys.at_mut(port) =
                    self.in_vc.at(self.p.lane_index(r * ports + port, v)).front.key;
            }
            *self.sa.scratch.nominee.at_mut(port) = v as u8;
            nominated |= 1 << port;
            *self.sa.scratch.requests.at_mut(out) |= 1 << port;
            asked |= 1 << out;
        }
        (asked, nominated)
    }

    /// Stage 4's rounds with speedup S > 1: an output grants up to S inputs, an input sends
    /// up to S flits (from different VCs) per cycle.
    #[inline(never)]
    fn rounds_speedup<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        inputs: u64,
        speedup: u8,
        by_key: bool,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        // Output ports that have taken all the flits they can this cycle.
        let mut saturated = 0u64;
        let mut pending = inputs;
        // Inputs that sent (their counts to clear) and that have sent all the flits they
        // can this cycle; outputs granted (their counts to clear).
        let mut senders = 0u64;
        let mut full = 0u64;
        let mut granted = 0u64;
        for _ in 0..self.p.iterations {
            let (asked, nominated) = self.nominations::<PRE>(r, pending, saturated, by_key, now);
            if asked == 0 {
                break;
            }
            // Outputs grant in round-robin order over the requesting inputs; with a
            // rate-based scheduler, in the order of the nominated flits' keys (a reserved
            // connection's VirtualClock stamps or finish tags stay near real time, so they
            // compare across inputs).
            for out in bits64(asked) {
                let op = r * ports + out;
                let requests = std::mem::take(self.sa.scratch.requests.at_mut(out));
                // In key order, round robin among equal keys: a stable insertion sort of
                // the rotation (a handful of inputs, on the stack).
                let mut order = [0u8; MAX_PORTS];
                let mut n = 0;
                for p in rotated(requests, *self.sa.rr.at(op) as u32, ports) {
                    let k = if by_key { *self.sa.scratch.keys.at(p) } else { 0 };
                    let mut i = n;
                    while i > 0 && by_key && *self.sa.scratch.keys.at(*order.at(i - 1) as usize) > k {
                        *order.at_mut(i) = *order.at(i - 1);
                        i -= 1;
                    }
                    *order.at_mut(i) = p as u8;
                    n += 1;
                }
                let mut losers = requests;
                for &p in &order[..n] {
                    if saturated >> out & 1 != 0 {
                        break;
                    }
                    let port = p as usize;
                    losers &= !(1 << port);
                    let v = *self.sa.scratch.nominee.at(port) as usize;
                    self.traverse::<PRE, AGE, HOOK>(net, r, port, v, now);
                    self.served(op, port);
                    granted |= 1 << out;
                    let g = self.sa.scratch.grants.at_mut(out);
                    *g += 1;
                    if *g >= speedup {
                        saturated |= 1 << out;
                    }
                    senders |= 1 << port;
                    let sent = self.sa.scratch.sent.at_mut(port);
                    *sent += 1;
                    if *sent >= speedup {
                        full |= 1 << port;
                    } else {
                        *self.sa.scratch.used.at_mut(port) |= 1 << v;
                    }
                }
                self.restore_losers::<false>(r, losers);
            }
            pending = nominated & !full;
        }
        for port in bits64(senders) {
            *self.sa.scratch.sent.at_mut(port) = 0;
            *self.sa.scratch.used.at_mut(port) = 0;
        }
        for out in bits64(granted) {
            *self.sa.scratch.grants.at_mut(out) = 0;
        }
    }

    /// The VCs of input `port` of router `r` that may send now: holding a flit that is
    /// ready, an output VC with room (a full one is in `ip_blocked`: `traverse`) and, in
    /// the preemptive router, not waiting on a preemption. A port with no such VC at all
    /// leaves the crossbar's work (as `nominate` does).
    #[inline]
    fn ready_vcs<const PRE: bool>(&mut self, r: usize, port: usize, now: Cycle) -> u32 {
        let ip = r * self.p.ports + port;
        let mut live = *self.ip_active.at(ip) & *self.ip_nonempty.at(ip) & !*self.ip_blocked.at(ip);
        if PRE {
            live &= !self.preemption_blocked(r, port, ip);
        }
        if live == 0 {
            *self.sa.r_ports.at_mut(r) &= !(1 << port);
            return 0;
        }
        let front = self.in_vc.span(self.p.lane_index(ip, 0), self.p.lanes);
        bits(live).filter(|&v| front.at(v).front.ready <= now).fold(0, |m, v| m | 1 << v)
    }

    /// The outputs that VCs `vcs` of input `port` of router `r` head to.
    #[inline]
    fn outputs_of(&self, r: usize, port: usize, vcs: u32) -> u64 {
        let front = self.in_vc.span(self.p.lane_index(r * self.p.ports + port, 0), self.p.lanes);
        bits(vcs).fold(0, |m, v| m | 1 << front.at(v).out_port)
    }

    /// Input `port`'s VCs among `vcs` that head to output `out`.
    #[inline]
    fn toward(&self, r: usize, port: usize, out: usize, vcs: u32) -> u32 {
        let ports = self.p.ports;
        vcs & *self.ip_to_out.at((r * ports + port) * ports + out)
    }

    /// The smallest rate key among VCs `vcs` (non-empty) of input `port`: what the input
    /// offers an output under a rate-based scheduler.
    #[inline]
    fn best_key(&self, r: usize, port: usize, vcs: u32) -> u64 {
        let front = self.in_vc.span(self.p.lane_index(r * self.p.ports + port, 0), self.p.lanes);
        bits(vcs).map(|v| front.at(v).front.key).min().unwrap_or(u64::MAX)
    }

    /// The input scheduler's choice among `vcs` (ready VCs of input `port`), its state
    /// advanced: the matching allocators ask once the input has its output.
    #[inline]
    fn choose_vc(&mut self, r: usize, port: usize, vcs: u32, now: Cycle) -> Option<usize> {
        let ip = r * self.p.ports + port;
        let front = self.in_vc.span(self.p.lane_index(ip, 0), self.p.lanes);
        let key = |v: usize| front.at(v).front.key;
        let ready = |v: usize| front.at(v).front.ready <= now;
        self.sa.tables.select(self.sa.sched.at_mut(ip), vcs, key, ready)
    }

    /// Output port `op` granted input `port`: its round robin starts after it next time.
    #[inline(always)]
    fn served(&mut self, op: usize, port: usize) {
        *self.sa.rr.at_mut(op) = if port + 1 >= self.p.ports { 0 } else { port as u8 + 1 };
    }

    /// The VC input `port` of router `r` nominates this round, and the output port it heads
    /// to: its scheduler's choice among the VCs that hold a flit, have an output VC with
    /// room, and head to no output in `saturated`, leaving out `used` (VCs that already sent
    /// this cycle). The input's scheduler state is saved first, in `saved[slot]`: it
    /// advances only if the choice is granted.
    #[inline(always)]
    fn nominate<const PRE: bool, const OUT: bool>(
        &mut self,
        r: usize,
        port: usize,
        saturated: u64,
        used: u32,
        slot: usize,
        now: Cycle,
    ) -> Option<(usize, usize)> {
        let (ports, vcs) = (self.p.ports, self.p.lanes);
        let ip = r * ports + port;
        let mut live = *self.ip_active.at(ip) & *self.ip_nonempty.at(ip) & !*self.ip_blocked.at(ip);
        if PRE {
            live &= !self.preemption_blocked(r, port, ip);
        }
        if live == 0 {
            *self.sa.r_ports.at_mut(r) &= !(1 << port);
            return None;
        }
        // VCs heading to a saturated output are not even looked at.
        let mut excluded = used;
        for out in bits64(saturated) {
            excluded |= *self.ip_to_out.at(ip * ports + out);
        }
        let waiting = live & !excluded;
        if waiting == 0 {
            return None;
        }
        // (BookSim2's input arbiter first, out of line: the documents' routers never take it)
        let offered = if OUT { self.output_first(ip, waiting, slot, now)? } else { waiting };
        // (a VC whose output VC buffer is full is in `ip_blocked`: `traverse`)
        let base = self.p.lane_index(ip, 0);
        let front = self.in_vc.span(base, vcs);
        debug_assert!(bits(waiting).all(|v| {
            let s = self.in_vc.at(base + v);
            let op = r * ports + s.out_port as usize;
            self.out_vc.at(self.p.lane_index(op, s.out_vc as usize)).buf.len() < self.p.output_depth
        }));
        // (accelerated flits, document 003 §3.2.2, have key 0: `Front`)
        let key = |v: usize| front.at(v).front.key;
        let ready = |v: usize| front.at(v).front.ready <= now;
        if !self.sa.tables.stateless {
            *self.sa.saved.at_mut(slot) = *self.sa.sched.at(ip);
        }
        let Some(v) = self.sa.tables.select(self.sa.sched.at_mut(ip), offered, key, ready) else {
            if OUT {
                // (no nomination: the output pointer stays where it was)
                *self.sa.out_rr.at_mut(ip) = *self.sa.saved_out.at(slot);
            }
            return None;
        };
        Some((v, front.at(v).out_port as usize))
    }

    /// BookSim2's input arbiter (`config::InputChoice::Output`): the VCs of `waiting` at
    /// input port `ip` heading to the first output a ready one heads to, from the output
    /// after the one last granted; the pointer moves past it now, saved in `saved_out[slot]`
    /// for `restore_losers` to put back if the nomination loses.
    #[cold]
    #[inline(never)]
    fn output_first(&mut self, ip: usize, waiting: u32, slot: usize, now: Cycle) -> Option<u32> {
        let ports = self.p.ports;
        let base = self.p.lane_index(ip, 0);
        let mut outs = 0u64;
        for v in bits(waiting) {
            let vc = self.in_vc.at(base + v);
            if vc.front.ready <= now {
                outs |= 1 << vc.out_port;
            }
        }
        if outs == 0 {
            return None;
        }
        let from = *self.sa.out_rr.at(ip);
        let out = matching::first_request(outs, from as u32, ports, None);
        *self.sa.saved_out.at_mut(slot) = from;
        *self.sa.out_rr.at_mut(ip) = matching::next(out, ports) as u8;
        Some(waiting & *self.ip_to_out.at(ip * ports + out))
    }

    /// Move the front flit of input VC `v` of `port` through the crossbar into its output
    /// VC buffer, returning a credit upstream.
    #[inline(always)]
    pub(super) fn traverse<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        port: usize,
        v: usize,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        let ip = r * ports + port;
        let ivc = self.p.lane_index(ip, v);
        // (one borrow of each VC record: an index through `self` reloads the vector)
        let in_vc = self.in_vc.at_mut(ivc);
        let mut flit = self.inbuf.pop(&mut in_vc.buf, ivc);
        if HOOK && self.port_queues.on {
            self.port_queues.flit_out(&self.p, ivc);
        }
        // (`VcRelease::TailSent`: the next packet's header may wait behind this tail)
        let next_packet = HOOK && !PRE && flit.is_tail() && !in_vc.buf.is_empty();
        if in_vc.buf.is_empty() {
            *self.ip_nonempty.at_mut(ip) &= !(1 << v);
        } else {
            let ready = in_vc.buf.front().ready;
            if next_packet && self.in_keys.rated_in::<AGE>(!HOOK) {
                let pkt = net.packet(in_vc.buf.front().packet());
                self.in_keys.set_vtick(ip, v, pkt.vtick, pkt.flow);
            }
            let key = self.in_keys.key_in::<AGE>(!HOOK, ip, v, ready - self.p.d_sync, ready);
            // (a tail ends the lane's acceleration: `after_traverse`)
            let accelerated = PRE && *self.pre.ip_accel.at(ip) >> v & 1 == 1 && !flit.is_tail();
            in_vc.set_front(ready, key, accelerated);
        }
        let state = *in_vc;
        let (out, ov) = (state.out_port as usize, state.out_vc as usize);
        let op = r * ports + out;
        // (dummy and buffer-local flits are made by preemption alone)
        let special = PRE && flit.kind() & (DUMMY | LOCAL) != 0;
        let local = PRE && flit.kind() & LOCAL != 0;
        if local {
            flit.set_kind(flit.kind() & !LOCAL);
        }
        flit.ready = now + self.p.d_crossbar;
        flit.set_vc(ov as u8);
        let ovc = self.p.lane_index(op, ov);
        let out_vc = self.out_vc.at_mut(ovc);
        if special && flit.is_tail() {
            out_vc.guard = flit.packet();
        }
        if out_vc.buf.is_empty() {
            if flit.is_head() && self.out.keys.rated_in::<AGE>(!HOOK) {
                let pkt = net.packet(flit.packet());
                self.out.keys.set_vtick(op, ov, pkt.vtick, pkt.flow);
            }
            out_vc.key = self.out.keys.key_in::<AGE>(!HOOK, op, ov, now, flit.ready);
        }
        self.outbuf.push(&mut out_vc.buf, ovc, flit);
        let occupancy = out_vc.buf.len();
        let mut full = occupancy >= self.p.output_depth;
        // (`CreditAt::Crossbar`, BookSim2's iq router: the flit takes its downstream credit
        // here, and its VC waits for the next one as for room)
        if HOOK && self.p.credit_at_crossbar {
            out_vc.credits -= 1;
            if out_vc.credits == 0 {
                *self.op_credited.at_mut(op) &= !(1 << ov);
                full = true;
            }
        }
        // The switch output hook (`marking.rs`) and the recordings (`[trace]`), compiled out
        // of runs without them. A dummy flit carries no packet.
        if HOOK && !(PRE && flit.is_dummy()) {
            let size = || net.packet(flit.packet()).size as u32;
            let tail = flit.is_tail();
            // (IBA CC and RED count all that queues for the port: `marking::PortQueues`)
            let queued = || occupancy + self.port_queues.queued(ovc);
            // (a port VL out of credits is a victim of congestion downstream)
            let credited = out_vc.credits > 0;
            if self.marking.mark(
                &mut self.mark_state,
                op,
                ovc,
                flit.packet(),
                (flit.is_head(), tail),
                size,
                occupancy,
                queued,
                credited,
            ) {
                net.whole().packets.get_mut(flit.packet()).marked = true;
            }
            if flit.is_head() {
                let flow = net.packet(flit.packet()).flow;
                net.hop(now, flow, flit.packet(), Hop::Crossed, r, out, ov);
            }
        }
        if HOOK {
            net.moved(ivc, now);
        }
        *self.op_nonempty.at_mut(op) |= 1 << ov;
        *self.out.r_ports.at_mut(r) |= 1 << out;
        let tail = flit.is_tail();
        // The output VC buffer is fed by this input VC alone: once full, the VC waits until
        // it sends (the output stage unblocks it), or out of credits taken here, until one
        // comes back (`credit_arrived`). After a tail the VC serves another packet.
        if !tail && full {
            *self.ip_blocked.at_mut(ip) |= 1 << v;
        }
        if tail {
            *self.ip_active.at_mut(ip) &= !(1 << v);
            *self.ip_to_out.at_mut(ip * ports + out) &= !(1 << v);
            *self.op_open.at_mut(op) &= !(1 << ov);
            if HOOK {
                self.requeue(ip, v);
            }
            if PRE {
                // a header waiting to preempt this VC's holder may take it now
                self.wake_vc_alloc(op);
            } else if HOOK && self.p.release_on_send {
                self.free_output_vc(op, ov);
            }
        }
        if !local {
            let up = *self.credit_return.at(ip);
            net.send_credit(now + *self.credit_delay.at(ip), up, v as u8, tail);
        }
        if next_packet {
            self.next_packet(net, ip, v, now);
        }
        // Preemption's bookkeeping concerns a packet's ends alone (`after_traverse`): a
        // body flit, 38 of a 40-flit packet's flits, skips the out-of-line call (4.5% of
        // the 32x32 QoS mesh's instructions: configs/bench/README.md).
        if PRE && flit.kind() & (HEAD | TAIL) != 0 {
            self.after_traverse(net, ip, v, &flit, local, now);
        }
        net.progress().last_progress = now;
    }
}

/// Router `r`'s crossbar in cycle `now` as the allocators see it (`matching::Crossbar`):
/// the request matrix from its input VCs' ready flits and routes, the pointers from its
/// round-robin state, a match sent through `traverse`.
struct Live<'a, N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool, const OUT: bool = false> {
    routers: &'a mut Routers,
    net: &'a mut N,
    r: usize,
    now: Cycle,
}

impl<N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool, const OUT: bool> Crossbar
    for Live<'_, N, PRE, AGE, HOOK, OUT>
{
    #[inline(always)]
    fn ports(&self) -> usize {
        self.routers.p.ports
    }

    #[inline(always)]
    fn scratch(&mut self) -> &mut XbarScratch {
        &mut self.routers.sa.scratch
    }

    #[inline(always)]
    fn scratch_ref(&self) -> &XbarScratch {
        &self.routers.sa.scratch
    }

    #[inline(always)]
    fn grant_pointer(&self, o: usize) -> u32 {
        *self.routers.sa.rr.at(self.r * self.routers.p.ports + o) as u32
    }

    #[inline(always)]
    fn set_grant_pointer(&mut self, o: usize, input: u32) {
        let op = self.r * self.routers.p.ports + o;
        *self.routers.sa.rr.at_mut(op) = input as u8;
    }

    #[inline(always)]
    fn accept_pointer(&self, i: usize) -> u32 {
        *self.routers.sa.accept.at(self.r * self.routers.p.ports + i) as u32
    }

    #[inline(always)]
    fn set_accept_pointer(&mut self, i: usize, output: u32) {
        let ip = self.r * self.routers.p.ports + i;
        *self.routers.sa.accept.at_mut(ip) = output as u8;
    }

    #[inline(always)]
    fn requests(&mut self, i: usize) -> u64 {
        let ready = self.routers.ready_vcs::<PRE>(self.r, i, self.now);
        if ready == 0 {
            return 0;
        }
        *self.routers.sa.scratch.ready.at_mut(i) = ready;
        self.routers.outputs_of(self.r, i, ready)
    }

    #[inline(always)]
    fn key(&self, i: usize, o: usize) -> u64 {
        let vcs = self.routers.toward(self.r, i, o, *self.routers.sa.scratch.ready.at(i));
        self.routers.best_key(self.r, i, vcs)
    }

    #[inline(always)]
    fn send(&mut self, i: usize, o: usize) -> bool {
        let (r, now) = (self.r, self.now);
        let vcs = self.routers.toward(r, i, o, *self.routers.sa.scratch.ready.at(i));
        let Some(v) = self.routers.choose_vc(r, i, vcs, now) else { return false };
        self.routers.traverse::<PRE, AGE, HOOK>(self.net, r, i, v, now);
        true
    }

    #[inline(always)]
    fn nominate(&mut self, i: usize, saturated: u64) -> Option<usize> {
        let (v, out) = self.routers.nominate::<PRE, OUT>(self.r, i, saturated, 0, i, self.now)?;
        *self.routers.sa.scratch.nominee.at_mut(i) = v as u8;
        Some(out)
    }

    #[inline(always)]
    fn nominee_key(&self, i: usize) -> u64 {
        let v = *self.routers.sa.scratch.nominee.at(i) as usize;
        let ip = self.r * self.routers.p.ports + i;
        self.routers.in_vc.at(self.routers.p.lane_index(ip, v)).front.key
    }

    #[inline(always)]
    fn send_nominee(&mut self, i: usize) {
        let v = *self.routers.sa.scratch.nominee.at(i) as usize;
        self.routers.traverse::<PRE, AGE, HOOK>(self.net, self.r, i, v, self.now);
    }

    #[inline(always)]
    fn restore(&mut self, losers: u64) {
        self.routers.restore_losers::<OUT>(self.r, losers);
    }
}

/// BookSim2's expanded crossbar (its `iq` router, `src/routers/iq_router.cpp`: the model
/// matched, so that BookSim2's configurations with `input_speedup` and `output_speedup`
/// run here) over router `r`'s crossbar (`Live`), as the allocators see it: input port p is
/// crossbar inputs p * s_in + k, k = 0..s_in, input k taking the port's VCs v with
/// v mod s_in = k; output port o is crossbar outputs o * s_out + j, input port p reaching
/// it through j = p mod s_out alone. Each crossbar input sends, and each crossbar output
/// takes, one flit a pass, so an input port sends up to s_in flits a pass (from VCs of
/// different residues) and an output port takes up to s_out (from inputs of different
/// residues). Both counts are `ports() = ports * max(s_in, s_out)` to the allocators (one
/// number is their round robins' modulus; the positions past a side's own never ask and
/// are never asked). What BookSim2 keeps per crossbar input, its arbiters' pointers, is kept
/// so here (`SwitchAllocation::rr`, `accept`, `saved`, sized by `Params::expansion`); the
/// VC scheduler stays one per port, shared by its crossbar inputs (each choosing among its
/// own VCs).
struct Expanded<'a, N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool> {
    live: Live<'a, N, PRE, AGE, HOOK>,
}

impl<N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool> Expanded<'_, N, PRE, AGE, HOOK> {
    /// Crossbar input `i`'s port, and the port's VCs it serves.
    #[inline(always)]
    fn input(&self, i: usize) -> (usize, u32) {
        let p = &self.live.routers.p;
        (i / p.input_speedup, p.input_lanes[i % p.input_speedup])
    }

    /// The crossbar output by which input port `port` reaches output port `out`.
    #[inline(always)]
    fn output_for(&self, port: usize, out: usize) -> usize {
        let s_out = self.live.routers.p.output_speedup;
        out * s_out + port % s_out
    }

    /// The output ports whose crossbar output for input port `port` is in `outputs`.
    #[inline(always)]
    fn ports_among(&self, port: usize, outputs: u64) -> u64 {
        let s_out = self.live.routers.p.output_speedup;
        let j = port % s_out;
        bits64(outputs).filter(|x| x % s_out == j).fold(0, |m, x| m | 1 << (x / s_out))
    }

    /// The allocators' per-output (or per-input) record `x` of this router.
    #[inline(always)]
    fn record(&self, x: usize) -> usize {
        let p = &self.live.routers.p;
        self.live.r * p.ports * p.expansion() + x
    }
}

impl<N: RouterNet, const PRE: bool, const AGE: bool, const HOOK: bool> Crossbar
    for Expanded<'_, N, PRE, AGE, HOOK>
{
    #[inline(always)]
    fn ports(&self) -> usize {
        self.live.routers.p.ports * self.live.routers.p.expansion()
    }

    #[inline(always)]
    fn scratch(&mut self) -> &mut XbarScratch {
        &mut self.live.routers.sa.scratch
    }

    #[inline(always)]
    fn scratch_ref(&self) -> &XbarScratch {
        &self.live.routers.sa.scratch
    }

    #[inline(always)]
    fn grant_pointer(&self, o: usize) -> u32 {
        *self.live.routers.sa.rr.at(self.record(o)) as u32
    }

    #[inline(always)]
    fn set_grant_pointer(&mut self, o: usize, input: u32) {
        let x = self.record(o);
        *self.live.routers.sa.rr.at_mut(x) = input as u8;
    }

    #[inline(always)]
    fn accept_pointer(&self, i: usize) -> u32 {
        *self.live.routers.sa.accept.at(self.record(i)) as u32
    }

    #[inline(always)]
    fn set_accept_pointer(&mut self, i: usize, output: u32) {
        let x = self.record(i);
        *self.live.routers.sa.accept.at_mut(x) = output as u8;
    }

    #[inline(always)]
    fn requests(&mut self, i: usize) -> u64 {
        let (port, own) = self.input(i);
        let (r, now) = (self.live.r, self.live.now);
        let ready = self.live.routers.ready_vcs::<PRE>(r, port, now) & own;
        if ready == 0 {
            return 0;
        }
        *self.live.routers.sa.scratch.ready.at_mut(i) = ready;
        let outs = self.live.routers.outputs_of(r, port, ready);
        bits64(outs).fold(0, |m, o| m | 1 << self.output_for(port, o))
    }

    #[inline(always)]
    fn key(&self, i: usize, o: usize) -> u64 {
        let (port, _) = self.input(i);
        let out = o / self.live.routers.p.output_speedup;
        let routers = &self.live.routers;
        let vcs = routers.toward(self.live.r, port, out, *routers.sa.scratch.ready.at(i));
        routers.best_key(self.live.r, port, vcs)
    }

    #[inline(always)]
    fn send(&mut self, i: usize, o: usize) -> bool {
        let (port, _) = self.input(i);
        let out = o / self.live.routers.p.output_speedup;
        let (r, now) = (self.live.r, self.live.now);
        let routers = &mut *self.live.routers;
        let vcs = routers.toward(r, port, out, *routers.sa.scratch.ready.at(i));
        let Some(v) = routers.choose_vc(r, port, vcs, now) else { return false };
        routers.traverse::<PRE, AGE, HOOK>(self.live.net, r, port, v, now);
        true
    }

    #[inline(always)]
    fn nominate(&mut self, i: usize, saturated: u64) -> Option<usize> {
        let (port, own) = self.input(i);
        let full = self.ports_among(port, saturated);
        let (r, now) = (self.live.r, self.live.now);
        let (v, out) = self.live.routers.nominate::<PRE, false>(r, port, full, !own, i, now)?;
        *self.live.routers.sa.scratch.nominee.at_mut(i) = v as u8;
        Some(self.output_for(port, out))
    }

    #[inline(always)]
    fn nominee_key(&self, i: usize) -> u64 {
        let (port, _) = self.input(i);
        let v = *self.live.routers.sa.scratch.nominee.at(i) as usize;
        let routers = &self.live.routers;
        let ip = self.live.r * routers.p.ports + port;
        routers.in_vc.at(routers.p.lane_index(ip, v)).front.key
    }

    #[inline(always)]
    fn send_nominee(&mut self, i: usize) {
        let (port, _) = self.input(i);
        let v = *self.live.routers.sa.scratch.nominee.at(i) as usize;
        let (r, now) = (self.live.r, self.live.now);
        self.live.routers.traverse::<PRE, AGE, HOOK>(self.live.net, r, port, v, now);
    }

    #[inline(always)]
    fn restore(&mut self, losers: u64) {
        let routers = &mut *self.live.routers;
        if routers.sa.tables.stateless {
            return;
        }
        let (s_in, ports) = (routers.p.input_speedup, routers.p.ports);
        for i in bits64(losers) {
            *routers.sa.sched.at_mut(self.live.r * ports + i / s_in) = *routers.sa.saved.at(i);
        }
    }
}

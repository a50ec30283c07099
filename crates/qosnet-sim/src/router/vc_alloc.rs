//! Stage 3: output-VC arbitration for header flits. Each output port serves the headers
//! asking for one of its VCs in round-robin order over (input port, VC), starting after
//! the last one it granted, so no input is favoured or starved; the header takes a free
//! VC among those its route allows (lowest free, or round robin per output port).

use super::vc_matching::VcMatching;
use super::{OtherWays, Routers, Way};
use crate::config::VcAllocatorKind;
use crate::ids::InputLane;
use crate::net::RouterNet;
use crate::sched::vc_choice::select_vc;
use crate::sched::RoundRobin;
use crate::sched::{bits, bits64};
use crate::unchecked::At;
use crate::units::Cycle;

/// A header asking for an output VC: the router's input port (0..ports) and its lane,
/// numbered `port << 5 | lane` (at most 64 ports of 32 lanes) because that number is the
/// round robin's order: requests are sorted and rotated by it.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
#[repr(transparent)]
pub(crate) struct Requester(u32);

impl Requester {
    /// How many numbers there are (the rotation's modulus).
    const COUNT: u32 = 64 << 5;

    #[inline(always)]
    pub(super) fn new(port: usize, lane: usize) -> Requester {
        Requester((port << 5 | lane) as u32)
    }
    #[inline(always)]
    pub(super) fn port(self) -> usize {
        (self.0 >> 5) as usize
    }
    #[inline(always)]
    pub(super) fn lane(self) -> usize {
        (self.0 & 31) as usize
    }
    /// Its place in the round robin that starts after `last` (`VcAllocation::rr`).
    #[inline(always)]
    pub(super) fn turn(self, last: u16) -> u32 {
        (self.0 + Self::COUNT - last as u32) % Self::COUNT
    }
    /// The round robin's pointer once it has served this one.
    #[inline(always)]
    pub(super) fn next(self) -> u16 {
        ((self.0 + 1) % Self::COUNT) as u16
    }
}

/// Stage 3's own state (`Routers::va`): the headers waiting for an output VC and those
/// parked, their other ways, and the round robins over requesters and over VCs.
#[derive(Clone, Debug)]
pub(crate) struct VcAllocation {
    /// Per input port: its headers asking for an output VC (a bit per VC).
    pub ip_vc_alloc: Vec<u32>,
    /// Headers that found no output VC to win (none free, none preemptable): parked out
    /// of `ip_vc_alloc` until their output port's VCs change (`wake_vc_alloc`), so blocked
    /// headers cost nothing per cycle.
    pub ip_parked: Vec<u32>,
    /// Per output port: the input ports (bits) with headers parked on it.
    pub op_parked: Vec<u64>,
    /// Per input VC record, its header's other ways (empty where the routing has none).
    pub other_ways: Vec<OtherWays>,
    /// Per output port: the round robin's pointer after the header granted a VC last
    /// (`Requester`).
    pub rr: Vec<u16>,
    /// Scratch for the requests of a router's visit (output port, turn, requester),
    /// reused: nothing is allocated per cycle.
    pub requests: Vec<(u32, u32, Requester)>,
    /// Per output port: the round robin over its VCs (`router.vc_selection =
    /// "round_robin"`).
    pub vc_rr: Vec<RoundRobin>,
    /// Per router, a bit per input port that may have headers to allocate (set eagerly,
    /// cleared lazily when the stage finds the port idle).
    pub r_alloc_ports: Vec<u64>,
    /// The VC allocators over input and output VCs: their pointers and scratch
    /// (`vc_matching.rs`; empty with the output-port allocator).
    pub matching: VcMatching,
}

impl VcAllocation {
    /// For `routers` routers of `ports` ports and `lanes` lanes a port; `other_ways`: the
    /// routing offers headers other ways (a record per input VC).
    /// `matching`: stage 3 runs an allocator over input and output VCs (`vc_matching.rs`).
    pub(crate) fn new(
        routers: usize,
        ports: usize,
        lanes: usize,
        n_vcs: usize,
        other_ways: bool,
        matching: bool,
    ) -> Self {
        let n_ports = routers * ports;
        VcAllocation {
            ip_vc_alloc: vec![0; n_ports],
            ip_parked: vec![0; n_ports],
            op_parked: vec![0; n_ports],
            other_ways: if other_ways { vec![OtherWays::default(); n_vcs] } else { Vec::new() },
            rr: vec![0; n_ports],
            requests: Vec::with_capacity(ports * lanes),
            vc_rr: vec![RoundRobin::default(); n_ports],
            r_alloc_ports: vec![0; routers],
            matching: if matching { VcMatching::new(n_vcs, ports * lanes) } else { VcMatching::default() },
        }
    }
}

impl Routers {
    #[inline(always)]
    pub(crate) fn vc_alloc_stage<const PRE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        now: Cycle,
    ) {
        if *self.va.r_alloc_ports.at(r) == 0 {
            return;
        }
        if !PRE && self.p.vc_allocator != VcAllocatorKind::OutputPort {
            return self.vc_matching_stage::<HOOK>(net, r, now);
        }
        let ports = self.p.ports;
        let mut requests = std::mem::take(&mut self.va.requests);
        requests.clear();
        for port in bits64(*self.va.r_alloc_ports.at(r)) {
            let ip = r * ports + port;
            let waiting = *self.va.ip_vc_alloc.at(ip);
            if waiting == 0 {
                *self.va.r_alloc_ports.at_mut(r) &= !(1 << port);
                continue;
            }
            for v in bits(waiting) {
                let ivc = self.p.lane_index(ip, v);
                let state = self.in_vc.at(ivc);
                if state.gate <= now {
                    let (route_vcs, class) = (state.route_vcs, state.class);
                    let mut op = (r * ports + state.out_port as usize) as u32;
                    let free = route_vcs & !*self.op_allocated.at(op as usize);
                    // Another way where the routing offers one and the route has no VC free
                    // (or the second adaptive way more), Duato's protocol: `other_way`.
                    let other =
                        if self.va.other_ways.is_empty() { None } else { self.other_way(r, ivc, free) };
                    if let Some((way_op, i)) = other {
                        op = way_op as u32;
                        self.va.other_ways.at_mut(ivc).asked = i as u8 + 1;
                    } else if free == 0 && !(PRE && self.may_preempt(op as usize, route_vcs, class)) {
                        // A header with no VC to win this cycle (none free, none
                        // preemptable; grants only take VCs) is not a request: blocked
                        // headers cost nothing.
                        self.park(ip, v, op as usize);
                        if let Some(&w) = self.va.other_ways.get(ivc) {
                            for way in w.ways.iter().filter(|w| w.vcs != 0) {
                                self.park(ip, v, r * ports + way.port as usize);
                            }
                        }
                        continue;
                    }
                    let who = Requester::new(port, v);
                    // Order: by output port, then round robin from the port's pointer.
                    requests.push((op, who.turn(*self.va.rr.at(op as usize)), who));
                }
            }
        }
        if requests.len() > 1 {
            requests.sort_unstable();
        }
        for &(op, _, who) in &requests {
            let (op, port, v) = (op as usize, who.port(), who.lane());
            let ip = r * ports + port;
            let ivc = self.p.lane_index(ip, v);
            let s = self.in_vc.at(ivc);
            let (mut route_vcs, class, resumed, packet) = (s.route_vcs, s.class, s.resumed, s.packet);
            let asked = self.va.other_ways.get(ivc).map_or(0, |w| w.asked) as usize;
            if asked > 0 {
                route_vcs = self.va.other_ways.at(ivc).ways[asked - 1].vcs;
                self.va.other_ways.at_mut(ivc).asked = 0;
            }
            if PRE && resumed && self.resumption_waits(op, packet) {
                // (until the guarding dummy tail's credit returns: that wakes `op`)
                self.park(ip, v, op);
                continue;
            }
            let free = route_vcs & !*self.op_allocated.at(op);
            let ov = if free != 0 {
                // The preemptive router lets any class take any VC, its own split first.
                let home = free & *self.p.home_vcs.at(class as usize);
                let free = if home != 0 { home } else { free };
                select_vc(self.p.vc_selection, free, self.va.vc_rr.at_mut(op))
            } else if PRE {
                match self.preempt_output(op, route_vcs, class) {
                    Some(lane) => lane,
                    None => {
                        // Nothing to preempt until `op`'s VCs change or the holder's tail
                        // crosses (`traverse` wakes `op` then).
                        self.park(ip, v, op);
                        continue;
                    }
                }
            } else {
                continue;
            };
            *self.va.rr.at_mut(op) = who.next();
            self.take_vc::<PRE, HOOK>(net, (r, port, v), (op, ov), (asked > 0).then_some(route_vcs), now);
        }
        self.va.requests = requests;
    }

    /// Header VC `v` of router `r`'s input port `port` takes VC `ov` of output port `op`
    /// (`router * ports + port`); `other`: the VCs of the other way it takes, if not its
    /// route's (the escape: it keeps to it from here, its next routers seeing it arrive on
    /// an escape VC).
    #[inline(always)]
    pub(super) fn take_vc<const PRE: bool, const HOOK: bool>(
        &mut self,
        net: &mut impl RouterNet,
        (r, port, v): (usize, usize, usize),
        (op, ov): (usize, usize),
        other: Option<u32>,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        let ip = r * ports + port;
        let ivc = self.p.lane_index(ip, v);
        let class = self.in_vc.at(ivc).class;
        *self.op_allocated.at_mut(op) |= 1 << ov;
        let state = self.in_vc.at_mut(ivc);
        if let Some(route_vcs) = other {
            state.out_port = (op - r * ports) as u16;
            state.route_vcs = route_vcs;
            *self.va.other_ways.at_mut(ivc) = OtherWays::default();
        }
        state.out_vc = ov as u8;
        state.gate = now + self.p.d_vc_alloc;
        state.front.ready = state.front.ready.max(state.gate);
        let out_vc = self.out_vc.at_mut(self.p.lane_index(op, ov));
        out_vc.owner = InputLane::new(ip, v);
        let no_credit = self.p.credit_at_crossbar && out_vc.credits == 0;
        if HOOK && !PRE && (out_vc.buf.len() >= self.p.output_depth || no_credit) {
            // (`VcRelease::TailSent`: the previous holder's flits may still fill it, or
            // with `CreditAt::Crossbar` hold all its credits)
            *self.ip_blocked.at_mut(ip) |= 1 << v;
        }
        if ov < self.p.vcs {
            self.op_held.at_mut(op)[class as usize] |= 1 << ov;
            if PRE {
                // a higher class parked here may now preempt this VC
                self.wake_vc_alloc(op);
            }
        }
        *self.op_open.at_mut(op) |= 1 << ov;
        *self.sa.r_ports.at_mut(r) |= 1 << port;
        *self.va.ip_vc_alloc.at_mut(ip) &= !(1 << v);
        *self.ip_active.at_mut(ip) |= 1 << v;
        *self.ip_to_out.at_mut(ip * ports + (op - r * ports)) |= 1 << v;
        if HOOK {
            self.requeue(ip, v);
        }
        net.progress().last_progress = now;
    }

    /// Which of input VC record `ivc`'s other ways to ask for (its output port, as
    /// `router * ports + port`, and its index), given the route's free VCs `free`: the
    /// second adaptive way where it has more VCs free than the route (the selection
    /// function: the less loaded minimal direction), else, where the route has none free,
    /// the first way with one (the escape last). None: the route.
    #[inline]
    fn other_way(&self, r: usize, ivc: usize, free: u32) -> Option<(usize, usize)> {
        let ways = &self.va.other_ways.at(ivc).ways;
        let free_at = |w: &Way| {
            let op = r * self.p.ports + w.port as usize;
            (op, (w.vcs & !*self.op_allocated.at(op)).count_ones())
        };
        let route_free = free.count_ones();
        ways.iter().enumerate().filter(|(_, w)| w.vcs != 0).find_map(|(i, w)| {
            let (op, n) = free_at(w);
            let take = if i == 0 { n > route_free } else { route_free == 0 && n > 0 };
            take.then_some((op, i))
        })
    }

    /// Header VC `v` of input port `ip` can win no VC of output port `op` until its VCs
    /// change: it leaves the requests until `wake_vc_alloc(op)`.
    #[inline]
    pub(super) fn park(&mut self, ip: usize, v: usize, op: usize) {
        let port = self.ip_place.at(ip).1;
        *self.va.ip_vc_alloc.at_mut(ip) &= !(1 << v);
        *self.va.ip_parked.at_mut(ip) |= 1 << v;
        *self.va.op_parked.at_mut(op) |= 1 << port;
    }

    /// The VCs of output port `op` changed (one freed, or taken by a class a parked header
    /// may preempt): its parked headers ask again from the next VC allocation on. Every
    /// parked header of those input ports wakes (those parked on another output park
    /// again at their next look: waking too many is harmless, too few would stall).
    #[inline]
    pub(crate) fn wake_vc_alloc(&mut self, op: usize) {
        let parked = std::mem::take(self.va.op_parked.at_mut(op));
        if parked == 0 {
            return;
        }
        let ports = self.p.ports;
        let r = op / ports;
        for port in bits64(parked) {
            let ip = r * ports + port;
            *self.va.ip_vc_alloc.at_mut(ip) |= std::mem::take(self.va.ip_parked.at_mut(ip));
        }
        *self.va.r_alloc_ports.at_mut(r) |= parked;
    }
}

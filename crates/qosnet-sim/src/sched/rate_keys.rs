//! The per-VC state behind the rate-based schedulers' keys, for one kind of scheduling
//! point (all crossbar inputs, all output multiplexers, or all NIC injection ports).
//!
//! A scheduling point (port) has C VCs; each VC holds one message at a time, whose Vtick
//! its header carried (document 003 §3.1): the message is the VirtualClock *connection*,
//! set up when its header takes the VC. When a flit reaches the front of its VC the owner
//! asks for its key: the arrival cycle for FCFS, the VirtualClock stamp, or the Fair
//! Queueing finish tag. One implementation serves the router's input and output side and
//! the NIC, so the three cannot drift apart.
//!
//! **Per-stream state** (`[router] virtual_clock.state = "stream"`, [`RateKeys::keep_streams`]):
//! the connection is the message's stream instead (its flow, §4.2's video "connection"):
//! each port keeps an auxVC per stream, and a VC holding one of its messages stamps that
//! stream's clock. A stream's messages then carry its virtual time from one to the next,
//! as in Zhang's VirtualClock (one clock per flow), even when two of them are at the port
//! on different VCs at once. The VC's own clock then reads `vtick = 0, aux = 1 + stream`:
//! the per-flit path tests `vtick == 0` as before and only the unreserved branch looks
//! further, so message-state runs execute what they did before.
//!
//! Best-effort messages reserve nothing (their Vtick is 0, [`UNRESERVED`]): VirtualClock
//! with an infinite Vtick. Their keys lie beyond every reserved stamp and order them by
//! arrival, so they use what the reserved connections leave, oldest first, across ports as
//! well. (Our reading; the documents do not say how best effort is stamped. A finite large
//! Vtick per message would make a long message that used idle bandwidth owe virtual time
//! and be passed by every newer one — VirtualClock's "punishment" — so that old messages
//! stall while holding their VCs and best-effort throughput collapses.)

use super::fair_queueing::{key as fq_key, FqFlow, FqPort};
use super::virtual_clock::{stamp, VcClock};
use super::KeyMode;
use crate::unchecked::At;
use crate::units::Cycle;

/// Keys of unreserved flits start here: beyond any reserved stamp (2^62 cycles is about
/// 11,700 years at 80 ns), ordered by arrival among themselves.
pub const UNRESERVED: u64 = 1 << 62;

#[derive(Clone, Debug)]
pub struct RateKeys {
    pub mode: KeyMode,
    vcs: usize,
    clock: Vec<VcClock>,
    /// Per port, a bit per VC: the VC's key needs its clock (a reserved or stream
    /// connection, or no connection set up yet). A clear bit means the clock reads
    /// `vtick = 0, aux = 0` — a best-effort message — whose key is `UNRESERVED + arrival`
    /// without a look at the clock: the clocks of a large network's ports do not stay in
    /// cache, and this mask does (a 32x32 mesh's clocks are 2.6 MB a side, its masks 40
    /// KB), so a best-effort flit's key costs no cache miss (configs/bench/README.md).
    clocked: Vec<u64>,
    base: Vec<u64>,
    fq: Vec<FqFlow>,
    fq_port: Vec<FqPort>,
    /// Streams per port with a clock of their own (0: message state, nothing allocated).
    streams: usize,
    /// `ports x streams` clocks (per-stream state only); the port's `base` is theirs.
    stream_clock: Vec<VcClock>,
}

impl RateKeys {
    /// State for `ports` scheduling points of `vcs` VCs each (nothing is allocated for FCFS).
    pub fn new(mode: KeyMode, ports: usize, vcs: usize) -> Self {
        let rated = !mode.is_age();
        let clocks = if rated { ports * vcs } else { 0 };
        assert!(vcs <= 64, "a scheduling point has at most 64 VCs (one bit each in `clocked`)");
        Self {
            mode,
            vcs,
            clock: vec![VcClock { vtick: 1, aux: 0 }; clocks],
            // (every clock starts with a Vtick: every key needs its clock)
            clocked: vec![u64::MAX; if rated { ports } else { 0 }],
            base: vec![0; if rated { ports } else { 0 }],
            fq: vec![FqFlow::default(); if mode == KeyMode::FairQueueing { clocks } else { 0 }],
            fq_port: vec![FqPort::default(); if mode == KeyMode::FairQueueing { ports } else { 0 }],
            streams: 0,
            stream_clock: Vec::new(),
        }
    }

    /// Keep VirtualClock state per stream (flows `0..flows`) rather than per message
    /// (module comment). Only VirtualClock keys have it; FCFS and Fair Queueing are left as
    /// they are.
    pub fn keep_streams(&mut self, flows: usize) {
        if !matches!(self.mode, KeyMode::VirtualClock(_)) {
            return;
        }
        let ports = self.base.len();
        self.streams = flows;
        self.stream_clock = vec![VcClock { vtick: 1, aux: 0 }; ports * flows];
    }

    /// A new message of stream `flow` took VC `vc` of `port`, its header carrying `vtick`
    /// (0: an unreserved, best-effort message). With message state a new connection is set
    /// up on the VC with a fresh virtual clock (document 003 §3.1: both are set at
    /// connection set-up), so it inherits nothing from the VC's previous message; with
    /// stream state the VC stamps the stream's clock, which goes on from where the stream's
    /// last flit at this port left it.
    #[inline]
    pub fn set_vtick(&mut self, port: usize, vc: usize, vtick: u32, flow: u32) {
        if self.mode.is_age() {
            return;
        }
        let i = port * self.vcs + vc;
        if self.streams != 0 && vtick != 0 && (flow as usize) < self.streams {
            self.stream_clock.at_mut(port * self.streams + flow as usize).vtick = vtick;
            *self.clock.at_mut(i) = VcClock { vtick: 0, aux: 1 + flow as u64 };
            *self.clocked.at_mut(port) |= 1 << vc;
            return;
        }
        *self.clock.at_mut(i) = VcClock { vtick, aux: 0 };
        let clocked = self.clocked.at_mut(port);
        *clocked = if vtick == 0 { *clocked & !(1 << vc) } else { *clocked | 1 << vc };
        if self.mode == KeyMode::FairQueueing {
            let f = self.fq.at_mut(i);
            if f.active {
                // The old connection leaves the fluid system with its share.
                self.fq_port.at_mut(port).rate_sum = (self.fq_port.at(port).rate_sum - f.rate).max(0.0);
            }
            *f = FqFlow::default();
        }
    }

    /// The key of the flit now at the front of VC `vc` of `port`, which arrived in the VC's
    /// queue at `arrival` and may move from `ready` on. Call once per flit, in queue order.
    ///
    /// (Every flit asks at every scheduling point: VirtualClock's stamp is inline here,
    /// Fair Queueing's floating-point tag out of line.)
    #[inline(always)]
    pub fn key(&mut self, port: usize, vc: usize, arrival: Cycle, ready: Cycle) -> u64 {
        if self.mode.is_age() {
            return ready;
        }
        self.rate_key(port, vc, arrival)
    }

    /// `key` of a VirtualClock or Fair Queueing port (not an age).
    #[inline(always)]
    fn rate_key(&mut self, port: usize, vc: usize, arrival: Cycle) -> u64 {
        debug_assert!(!self.mode.is_age());
        // A best-effort connection (its clock `vtick = 0, aux = 0`, below) without a look
        // at its clock: nothing else writes a zero clock (a finite counter's overflow
        // leaves 0 at 0), so a clear bit stands for it.
        if *self.clocked.at(port) >> vc & 1 == 0 {
            debug_assert_eq!(*self.clock.at(port * self.vcs + vc), VcClock { vtick: 0, aux: 0 });
            return UNRESERVED + arrival;
        }
        let vtick = self.clock.at(port * self.vcs + vc).vtick;
        if vtick == 0 {
            let stream = self.clock.at(port * self.vcs + vc).aux;
            if stream != 0 {
                return self.stream_key(port, stream as usize - 1, arrival);
            }
            return UNRESERVED + arrival;
        }
        let range = port * self.vcs..(port + 1) * self.vcs;
        match self.mode {
            KeyMode::VirtualClock(mode) => {
                stamp(&mut self.clock[range], self.base.at_mut(port), vc, arrival, mode)
            }
            _ => self.fq_key(port, vc, vtick, arrival),
        }
    }

    /// `key`, answered at compile time where the caller knows what the keys are (the
    /// engine's static dispatch, `router::Variant`): ages (`AGE`), or rate keys (`rated`,
    /// a constant at the call: a run whose schedulers are neither all by age nor all by
    /// rate keys takes the `HOOK` cycle).
    #[inline(always)]
    pub fn key_in<const AGE: bool>(
        &mut self,
        rated: bool,
        port: usize,
        vc: usize,
        arrival: Cycle,
        ready: Cycle,
    ) -> u64 {
        if AGE {
            debug_assert!(self.mode.is_age());
            ready
        } else if rated {
            self.rate_key(port, vc, arrival)
        } else {
            self.key(port, vc, arrival, ready)
        }
    }

    /// Whether keys are rate keys, answered at compile time as `key_in` is.
    #[inline(always)]
    pub fn rated_in<const AGE: bool>(&self, rated: bool) -> bool {
        debug_assert!(!rated || AGE || !self.mode.is_age());
        !AGE && (rated || !self.mode.is_age())
    }

    /// The stamp of a flit of stream `stream` (per-stream state): the stream's clock at
    /// this port advances; a finite counter's overflow rebases the port's streams.
    #[inline(never)]
    fn stream_key(&mut self, port: usize, stream: usize, arrival: Cycle) -> u64 {
        let KeyMode::VirtualClock(mode) = self.mode else { unreachable!("stream state is VirtualClock's") };
        let range = port * self.streams..(port + 1) * self.streams;
        stamp(&mut self.stream_clock[range], self.base.at_mut(port), stream, arrival, mode)
    }

    #[inline(never)]
    fn fq_key(&mut self, port: usize, vc: usize, vtick: u32, arrival: Cycle) -> u64 {
        let range = port * self.vcs..(port + 1) * self.vcs;
        fq_key(self.fq_port.at_mut(port).tag(&mut self.fq[range], vc, vtick, arrival as f64))
    }

    /// Whether a key is an unreserved (best-effort) flit's.
    #[inline]
    pub fn unreserved(key: u64) -> bool {
        key >= UNRESERVED
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::CounterMode;

    fn vc_keys() -> RateKeys {
        RateKeys::new(KeyMode::VirtualClock(CounterMode::default()), 1, 2)
    }

    /// Hand-worked, 4-bit counters (max 15), one port of three VCs: VC0 reserved (Vtick 6),
    /// VC1 best effort, VC2 with no connection set up (its initial Vtick of 1). The
    /// best-effort VC's keys come from the `clocked` mask alone, also across VC0's
    /// overflow (which rebases the port's clocks), and once VC1 holds a reserved message
    /// it stamps from its clock again.
    #[test]
    fn a_best_effort_vc_is_keyed_by_arrival_without_its_clock() {
        let mut k = RateKeys::new(KeyMode::VirtualClock(CounterMode::bits(4)), 1, 3);
        k.set_vtick(0, 0, 6, 0);
        k.set_vtick(0, 1, 0, 0);
        assert_eq!(k.clocked[0] & 0b111, 0b101);
        assert_eq!(k.key(0, 1, 3, 3), UNRESERVED + 3);
        assert_eq!(k.key(0, 2, 3, 3), 4); // max(3, 0) + 1
        assert_eq!([k.key(0, 0, 0, 0), k.key(0, 0, 0, 0)], [6, 12]);
        // 12 + 6 = 18 > 15: VC0 restarts at 0, VC2 4 - 12 -> 0, base 12; VC1's clock stays 0
        assert_eq!(k.key(0, 0, 4, 4), 0);
        assert_eq!(k.clock[1], VcClock { vtick: 0, aux: 0 });
        assert_eq!(k.key(0, 1, 20, 20), UNRESERVED + 20);
        k.set_vtick(0, 1, 5, 0);
        assert_eq!(k.clocked[0] & 0b111, 0b111);
        assert_eq!(k.key(0, 1, 14, 14), 7); // real time 14 - 12 = 2, max(2, 0) + 5
        k.set_vtick(0, 1, 0, 0);
        assert_eq!(k.key(0, 1, 15, 15), UNRESERVED + 15);
    }

    /// Hand-worked: stream 1 (Vtick 10) sends a burst of three flits at cycle 0 in one
    /// message, then its next message's first flit arrives at cycle 5, when stream 2
    /// (Vtick 10, within its rate) also starts a message on the other VC.
    #[test]
    fn a_stream_carries_its_virtual_clock_into_its_next_message() {
        let mut k = vc_keys();
        k.keep_streams(3);
        k.set_vtick(0, 0, 10, 1);
        // auxVC = max(now, auxVC) + Vtick: 0 + 10, then backlogged +10 each
        assert_eq!([k.key(0, 0, 0, 0), k.key(0, 0, 0, 0), k.key(0, 0, 0, 0)], [10, 20, 30]);
        // the next message of stream 1 on the same VC: max(5, 30) + 10, not max(5, 0) + 10
        k.set_vtick(0, 0, 10, 1);
        assert_eq!(k.key(0, 0, 5, 5), 40);
        // stream 2 has sent nothing: max(5, 0) + 10; it is served before stream 1's 40
        k.set_vtick(0, 1, 10, 2);
        assert_eq!(k.key(0, 1, 5, 5), 15);
        // stream 1 on two VCs at once stamps one clock: 40 + 10 on VC 1, then 50 + 10 on VC 0
        k.set_vtick(0, 1, 10, 1);
        assert_eq!(k.key(0, 1, 6, 6), 50);
        assert_eq!(k.key(0, 0, 6, 6), 60);
        // after an idle spell the clock catches up with real time: max(100, 60) + 10
        assert_eq!(k.key(0, 0, 100, 100), 110);
        // best effort keeps no clock: beyond every reserved stamp, by arrival
        k.set_vtick(0, 1, 0, 2);
        assert_eq!(k.key(0, 1, 7, 7), UNRESERVED + 7);
        // stream 2's clock was left at 15 by its one flit: max(20, 15) + 10
        k.set_vtick(0, 1, 10, 2);
        assert_eq!(k.key(0, 1, 20, 20), 30);
    }

    /// The same sequence with message state: each message starts a fresh clock.
    #[test]
    fn with_message_state_each_message_starts_afresh() {
        let mut k = vc_keys();
        k.set_vtick(0, 0, 10, 1);
        assert_eq!([k.key(0, 0, 0, 0), k.key(0, 0, 0, 0), k.key(0, 0, 0, 0)], [10, 20, 30]);
        k.set_vtick(0, 0, 10, 1);
        assert_eq!(k.key(0, 0, 5, 5), 15);
        k.set_vtick(0, 1, 10, 2);
        assert_eq!(k.key(0, 1, 5, 5), 15);
    }

    /// Per-stream clocks exist only for VirtualClock, and only when asked for.
    #[test]
    fn stream_state_is_virtual_clocks_alone() {
        let mut fcfs = RateKeys::new(KeyMode::Age, 1, 2);
        fcfs.keep_streams(3);
        fcfs.set_vtick(0, 0, 10, 1);
        assert_eq!(fcfs.key(0, 0, 4, 9), 9);
        let mut fq = RateKeys::new(KeyMode::FairQueueing, 1, 2);
        fq.keep_streams(3);
        assert!(fq.stream_clock.is_empty());
        assert!(vc_keys().stream_clock.is_empty());
    }
}

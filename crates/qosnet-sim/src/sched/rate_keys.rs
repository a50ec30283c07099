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
    base: Vec<u64>,
    fq: Vec<FqFlow>,
    fq_port: Vec<FqPort>,
}

impl RateKeys {
    /// State for `ports` scheduling points of `vcs` VCs each (nothing is allocated for FCFS).
    pub fn new(mode: KeyMode, ports: usize, vcs: usize) -> Self {
        let rated = !mode.is_age();
        let clocks = if rated { ports * vcs } else { 0 };
        Self {
            mode,
            vcs,
            clock: vec![VcClock { vtick: 1, aux: 0 }; clocks],
            base: vec![0; if rated { ports } else { 0 }],
            fq: vec![FqFlow::default(); if mode == KeyMode::FairQueueing { clocks } else { 0 }],
            fq_port: vec![FqPort::default(); if mode == KeyMode::FairQueueing { ports } else { 0 }],
        }
    }

    /// A new message took VC `vc` of `port`: a new connection is set up on the VC, with
    /// the Vtick its header carries and a fresh virtual clock (document 003 §3.1: both are
    /// set at connection set-up), so it inherits nothing from the VC's previous message.
    /// Vtick 0: an unreserved (best-effort) message.
    #[inline]
    pub fn set_vtick(&mut self, port: usize, vc: usize, vtick: u32) {
        if self.mode.is_age() {
            return;
        }
        let i = port * self.vcs + vc;
        *self.clock.at_mut(i) = VcClock { vtick, aux: 0 };
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
        let vtick = self.clock.at(port * self.vcs + vc).vtick;
        if vtick == 0 {
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

    /// `key`, answered at compile time when the caller knows the keys are ages (`AGE`,
    /// the engine's static dispatch: `router::Variant`).
    #[inline(always)]
    pub fn key_in<const AGE: bool>(&mut self, port: usize, vc: usize, arrival: Cycle, ready: Cycle) -> u64 {
        if AGE {
            debug_assert!(self.mode.is_age());
            ready
        } else {
            self.key(port, vc, arrival, ready)
        }
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

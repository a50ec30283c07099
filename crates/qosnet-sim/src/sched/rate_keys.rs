//! The per-VC state behind the rate-based schedulers' keys, for one kind of scheduling
//! point (all crossbar inputs, all output multiplexers, or all NIC injection ports).
//!
//! A scheduling point (port) has C VCs; each VC holds one message at a time, whose Vtick
//! its header carried (document 003 §3.1). When a flit reaches the front of its VC the
//! owner asks for its key: the arrival cycle for FCFS, the VirtualClock stamp, or the Fair
//! Queueing finish tag. One implementation serves the router's input and output side and
//! the NIC, so the three cannot drift apart.

use super::fair_queueing::{key as fq_key, FqFlow, FqPort};
use super::virtual_clock::{stamp, VcClock};
use super::KeyMode;
use crate::units::Cycle;

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
        let (n_clock, n_fq) = match mode {
            KeyMode::Age => (0, 0),
            KeyMode::VirtualClock(_) => (ports * vcs, 0),
            KeyMode::FairQueueing => (ports * vcs, ports),
        };
        Self {
            mode,
            vcs,
            clock: vec![VcClock { vtick: 1, aux: 0 }; n_clock],
            base: vec![0; if n_clock > 0 { ports } else { 0 }],
            fq: vec![FqFlow::default(); if n_fq > 0 { ports * vcs } else { 0 }],
            fq_port: vec![FqPort::default(); n_fq],
        }
    }

    /// A new message took VC `vc` of `port`: a new connection is set up on the VC, with
    /// the Vtick its header carries and a fresh virtual clock (document 003 §3.1: both are
    /// set at connection set-up), so it inherits nothing from the VC's previous message.
    #[inline]
    pub fn set_vtick(&mut self, port: usize, vc: usize, vtick: u32) {
        if self.mode == KeyMode::Age {
            return;
        }
        let i = port * self.vcs + vc;
        self.clock[i] = VcClock { vtick: vtick.max(1), aux: 0 };
        if self.mode == KeyMode::FairQueueing {
            let f = &mut self.fq[i];
            if f.active {
                // The old connection leaves the fluid system with its share.
                self.fq_port[port].rate_sum = (self.fq_port[port].rate_sum - f.rate).max(0.0);
            }
            *f = FqFlow::default();
        }
    }

    /// The key of the flit now at the front of VC `vc` of `port`, which arrived in the VC's
    /// queue at `arrival` and may move from `ready` on. Call once per flit, in queue order.
    #[inline(always)]
    pub fn key(&mut self, port: usize, vc: usize, arrival: Cycle, ready: Cycle) -> u64 {
        if self.mode == KeyMode::Age {
            return ready;
        }
        self.rate_key(port, vc, arrival, ready)
    }

    #[inline(never)]
    fn rate_key(&mut self, port: usize, vc: usize, arrival: Cycle, ready: Cycle) -> u64 {
        match self.mode {
            KeyMode::Age => ready,
            KeyMode::VirtualClock(mode) => {
                let range = port * self.vcs..(port + 1) * self.vcs;
                stamp(&mut self.clock[range], &mut self.base[port], vc, arrival, mode)
            }
            KeyMode::FairQueueing => {
                let vtick = self.clock[port * self.vcs + vc].vtick;
                let flows = &mut self.fq[port * self.vcs..(port + 1) * self.vcs];
                fq_key(self.fq_port[port].tag(flows, vc, vtick, arrival as f64))
            }
        }
    }
}

//! Schedulers: choose one VC among eligible candidates (document 003 §3, 000 §3.1).
//!
//! One interface serves the crossbar input (stage 4), the output multiplexer (stage 5)
//! and the NIC injection port. A scheduler sees only the candidate set, a per-candidate
//! stamp (the FCFS age now; the VirtualClock value in the QoS router) and its own state.
//! Static dispatch: an enum, matched once per decision. Rate-based schedulers
//! (VirtualClock, Fair Queueing) are "smallest key first" over keys the VC's owner stamps
//! ([`RateKeys`]); WRR and IBA VL arbitration read weight tables ([`SchedTables`]).

mod fair_queueing;
mod fcfs;
mod rate_keys;
mod reweight;
mod round_robin;
pub(crate) mod vc_choice;
mod virtual_clock;
mod vl_arbitration;
mod wrr;

use crate::config::SchedulerConfig;
use crate::routing::VcMask;
pub use fair_queueing::{FqFlow, FqPort};
pub use fcfs::Fcfs;
pub use rate_keys::{RateKeys, UNRESERVED};
pub use reweight::PortTables;
pub use round_robin::RoundRobin;
pub use virtual_clock::{CounterMode, VcClock};
pub use vl_arbitration::{VlArb, VlArbTable};
pub use wrr::Wrr;

/// What a scheduler's candidates are ordered by: the key `key(vc)` returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyMode {
    /// The front flit's ready cycle (FCFS age); round robin, WRR and VL arbitration ignore it.
    Age,
    /// The VirtualClock stamp of the front flit (document 003 §3.1).
    VirtualClock(CounterMode),
    /// The weighted-fair-queueing finish tag of the front flit.
    FairQueueing,
}

/// The choosing policy; small and `Copy` (the crossbar saves a scheduler's state before it
/// nominates and puts it back when the nomination loses).
#[derive(Clone, Copy, Debug)]
pub enum Policy {
    /// Smallest key first (FCFS, VirtualClock, Fair Queueing), ties to the lowest VC.
    Fcfs(Fcfs),
    RoundRobin(RoundRobin),
    Wrr(Wrr),
    VlArb(VlArb),
}

impl KeyMode {
    /// Whether keys are plain ages (a `matches!`: the derived `==` would also compare the
    /// VirtualClock variant's data).
    #[inline(always)]
    pub fn is_age(self) -> bool {
        matches!(self, KeyMode::Age)
    }

    /// The keys a scheduler configuration orders by.
    pub fn of(cfg: &SchedulerConfig) -> KeyMode {
        match cfg {
            SchedulerConfig::VirtualClock { counter_bits } => {
                KeyMode::VirtualClock(CounterMode::bits(*counter_bits))
            }
            SchedulerConfig::FairQueueing => KeyMode::FairQueueing,
            _ => KeyMode::Age,
        }
    }
}

/// Configuration a policy reads but never changes, shared by all ports of one scheduling
/// point (crossbar inputs, output multiplexers, NIC injection).
#[derive(Clone, Debug, PartialEq)]
pub struct SchedTables {
    /// WRR weights, flits per round per VC.
    pub wrr: [u16; 32],
    pub vl: VlArbTable,
    /// The schedulers keep no state between choices (smallest key first, flit by flit):
    /// `select` then never reads a port's `Scheduler`, one cache line less per visit on a
    /// large network.
    pub stateless: bool,
}

impl SchedTables {
    /// The tables of a scheduler configuration, IBA units converted to flits (document 000
    /// §3.3: weights in 64-byte units, the high-priority limit in 4 KiB units, 255 = none).
    ///
    /// `extra_lanes`: the preemptive router's extra buffers (lane C + v of VC v) share their
    /// VC's weight and table entries.
    pub fn build(
        cfg: &SchedulerConfig,
        clock: &crate::units::Clock,
        vcs: usize,
        extra_lanes: bool,
        block: u32,
    ) -> SchedTables {
        let mut t =
            SchedTables { stateless: Scheduler::build(cfg, block).is_stateless(), ..SchedTables::default() };
        match cfg {
            SchedulerConfig::Wrr { weights } => {
                for (v, &w) in weights.iter().enumerate().take(32) {
                    t.wrr[v] = w.min(u16::MAX as u32) as u16;
                    if extra_lanes && vcs + v < 32 {
                        t.wrr[vcs + v] = t.wrr[v];
                    }
                }
            }
            SchedulerConfig::VlArbitration { high, low, limit_of_high_priority, management_vl } => {
                // (a table weight fits the arbiter's 16-bit counter whatever the flit size)
                let unit = |bytes: f64, n: u32| {
                    ((clock.bytes_to_flits(bytes) * n as f64).ceil() as u32).min(u16::MAX as u32)
                };
                let entries = |e: &[[u32; 2]]| {
                    let mut out = Vec::new();
                    for &[vl, w] in e {
                        out.push((vl as u8, unit(64.0, w)));
                        if extra_lanes {
                            out.push(((vcs as u32 + vl) as u8, unit(64.0, w)));
                        }
                    }
                    out
                };
                t.vl = VlArbTable {
                    high: entries(high),
                    low: entries(low),
                    limit: (*limit_of_high_priority < 255)
                        .then(|| unit(4096.0, *limit_of_high_priority).max(1)),
                    management: management_vl.map(|m| m as u8),
                };
            }
            _ => {}
        }
        t
    }

    /// `state.select(...)`, without reading `state` when the schedulers keep none.
    #[inline(always)]
    pub fn select(
        &self,
        state: &mut Scheduler,
        offered: VcMask,
        key: impl Fn(usize) -> u64,
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if self.stateless {
            debug_assert!(state.is_stateless());
            return Fcfs.select(offered, key, ready);
        }
        state.select(offered, self, key, ready)
    }
}

impl Default for SchedTables {
    fn default() -> Self {
        Self { wrr: [1; 32], vl: VlArbTable::default(), stateless: false }
    }
}

/// A scheduler: a policy plus block-level multiplexing (document 003 §5.1, Fig. 6): once
/// a VC is chosen it keeps the channel for `block` flits while it can send, so the choice
/// is made only every `block` flits (1 = flit-level multiplexing).
#[derive(Clone, Copy, Debug)]
pub struct Scheduler {
    pub policy: Policy,
    block: u16,
    block_vc: u8,
    block_left: u16,
}

impl Scheduler {
    /// Whether the scheduler keeps no state between choices.
    fn is_stateless(&self) -> bool {
        self.block == 1 && matches!(self.policy, Policy::Fcfs(_))
    }

    /// The only `match` from configuration to policy.
    pub fn build(cfg: &SchedulerConfig, block: u32) -> Scheduler {
        let policy = match cfg {
            SchedulerConfig::Fcfs | SchedulerConfig::VirtualClock { .. } | SchedulerConfig::FairQueueing => {
                Policy::Fcfs(Fcfs)
            }
            SchedulerConfig::RoundRobin => Policy::RoundRobin(RoundRobin::default()),
            SchedulerConfig::Wrr { .. } => Policy::Wrr(Wrr::default()),
            SchedulerConfig::VlArbitration { .. } => Policy::VlArb(VlArb::default()),
        };
        Scheduler { policy, block: block.clamp(1, u16::MAX as u32) as u16, block_vc: 0, block_left: 0 }
    }

    /// Pick one VC among `offered`: `key(vc)` orders them (see [`KeyMode`]; round robin,
    /// WRR and VL arbitration ignore it), `ready(vc)` says whether the VC may be served
    /// now. Asking per VC lets a policy stop early (round robin) and ask only what it needs
    /// (FCFS asks its winner alone whether it is ready).
    #[inline(always)]
    pub fn select(
        &mut self,
        offered: VcMask,
        tables: &SchedTables,
        key: impl Fn(usize) -> u64,
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if self.block_left > 0 {
            let v = self.block_vc as usize;
            if offered >> v & 1 == 1 && ready(v) {
                self.block_left -= 1;
                return Some(v);
            }
            // The block's VC cannot send: the next choice starts a new block.
            self.block_left = 0;
        }
        let v = match &mut self.policy {
            Policy::Fcfs(s) => s.select(offered, key, ready),
            Policy::RoundRobin(s) => s.select(offered, ready),
            Policy::Wrr(s) => s.select(offered, &tables.wrr, ready),
            Policy::VlArb(s) => s.select(offered, &tables.vl, ready),
        }?;
        // (block - 1 flits remain in the block; 0 with flit-level multiplexing)
        self.block_vc = v as u8;
        self.block_left = self.block - 1;
        Some(v)
    }
}

/// The set bits of a mask, lowest first (a plain struct iterator: it compiles to a
/// `tzcnt` loop, which matters in the per-cycle stages).
#[derive(Clone, Copy)]
pub struct Bits(u64);

impl Iterator for Bits {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        if self.0 == 0 {
            return None;
        }
        let b = self.0.trailing_zeros() as usize;
        self.0 &= self.0 - 1;
        Some(b)
    }
}

/// Iterate the set bits of a VC mask, lowest first.
#[inline]
pub fn bits(m: u32) -> Bits {
    Bits(m as u64)
}

/// Iterate the set bits of a 64-bit mask, lowest first.
#[inline]
pub fn bits64(m: u64) -> Bits {
    Bits(m)
}

/// The mask of bits `0..n` (n <= 64): all of a router's `n` ports.
#[inline]
pub fn low_bits(n: usize) -> u64 {
    debug_assert!(n <= 64);
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

/// The set bits of `m` (bits `0..n`) in the order `start, start+1, ..., n-1, 0, ..., start-1`:
/// arbitration among ports with a rotating first place.
#[inline]
pub fn rotated(m: u64, start: u32, n: usize) -> impl Iterator<Item = usize> {
    debug_assert!(n <= 64 && (start as usize) < n.max(1));
    let s = start as usize;
    let rot = if s == 0 { m } else { ((m >> s) | (m << (n - s))) & low_bits(n) };
    Bits(rot).map(move |b| if b + s >= n { b + s - n } else { b + s })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotated_order() {
        let v: Vec<usize> = rotated(0b10110, 2, 5).collect();
        assert_eq!(v, vec![2, 4, 1]);
        let v: Vec<usize> = rotated(0b10110, 0, 5).collect();
        assert_eq!(v, vec![1, 2, 4]);
        let v: Vec<usize> = rotated(u64::MAX, 63, 64).take(3).collect();
        assert_eq!(v, vec![63, 0, 1]);
    }
}

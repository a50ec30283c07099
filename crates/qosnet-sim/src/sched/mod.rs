//! Schedulers: choose one VC among eligible candidates (document 003 §3, 000 §3.1).
//!
//! One interface serves the crossbar input (stage 4), the output multiplexer (stage 5)
//! and the NIC injection port. A scheduler sees only the candidate set, a per-candidate
//! stamp (the FCFS age now; the VirtualClock value in the QoS router) and its own state.
//! Static dispatch: an enum, matched once per decision.

mod fcfs;
mod round_robin;

use crate::config::SchedulerConfig;
use crate::routing::VcMask;
pub use fcfs::Fcfs;
pub use round_robin::RoundRobin;

#[derive(Clone, Debug)]
pub enum Scheduler {
    Fcfs(Fcfs),
    RoundRobin(RoundRobin),
}

impl Scheduler {
    /// The only `match` from configuration to scheduler.
    pub fn build(cfg: SchedulerConfig) -> Scheduler {
        match cfg {
            SchedulerConfig::Fcfs => Scheduler::Fcfs(Fcfs),
            SchedulerConfig::RoundRobin => Scheduler::RoundRobin(RoundRobin::default()),
        }
    }

    /// Pick one VC from `candidates` (non-empty). `stamp(vc)` gives the candidate's key.
    #[inline]
    pub fn select(&mut self, candidates: VcMask, stamp: impl Fn(usize) -> u64) -> usize {
        debug_assert!(candidates != 0);
        if candidates.is_power_of_two() {
            // One candidate: every policy picks it; round robin still records the turn.
            let vc = candidates.trailing_zeros() as usize;
            if let Scheduler::RoundRobin(s) = self {
                s.served(vc);
            }
            return vc;
        }
        match self {
            Scheduler::Fcfs(s) => s.select(candidates, stamp),
            Scheduler::RoundRobin(s) => s.select(candidates),
        }
    }
}

/// Iterate the set bits of a mask, lowest first.
#[inline]
pub fn bits(mut m: u32) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(b)
        }
    })
}

/// Iterate the set bits of a 64-bit mask, lowest first.
#[inline]
pub fn bits64(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if m == 0 {
            None
        } else {
            let b = m.trailing_zeros() as usize;
            m &= m - 1;
            Some(b)
        }
    })
}

/// The set bits of `m` (bits `0..n`) in the order `start, start+1, ..., n-1, 0, ..., start-1`:
/// arbitration among ports with a rotating first place.
#[inline]
pub fn rotated(m: u64, start: u32, n: usize) -> impl Iterator<Item = usize> {
    let high = if start >= 64 { 0 } else { m & (u64::MAX << start) };
    let low = m & !high;
    debug_assert!(n <= 64);
    bits64(high).chain(bits64(low))
}

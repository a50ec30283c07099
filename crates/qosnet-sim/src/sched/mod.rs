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

/// Small and `Copy`: the crossbar saves a scheduler's state before it nominates and puts it
/// back when the nomination loses.
#[derive(Clone, Copy, Debug)]
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

    /// Pick one VC among `offered`. `eligible(vc)` says whether the VC may be served now
    /// and with which stamp (its key: FCFS age now, virtual clock later); `None` if not.
    /// Asking per VC lets a scheduler stop early (round robin) and test eligibility and
    /// order in one pass (FCFS).
    #[inline]
    pub fn select(&mut self, offered: VcMask, eligible: impl FnMut(usize) -> Option<u64>) -> Option<usize> {
        match self {
            Scheduler::Fcfs(s) => s.select(offered, eligible),
            Scheduler::RoundRobin(s) => s.select(offered, eligible),
        }
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

/// The set bits of `m` (bits `0..n`) in the order `start, start+1, ..., n-1, 0, ..., start-1`:
/// arbitration among ports with a rotating first place.
#[inline]
pub fn rotated(m: u64, start: u32, n: usize) -> impl Iterator<Item = usize> {
    debug_assert!(n <= 64 && (start as usize) < n.max(1));
    let s = start as usize;
    let rot = if s == 0 {
        m
    } else {
        let keep = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
        ((m >> s) | (m << (n - s))) & keep
    };
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

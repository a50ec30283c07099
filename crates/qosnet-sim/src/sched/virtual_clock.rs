//! VirtualClock (Zhang 1991; document 003 §3.1): per connection an `auxVC` and a `Vtick`,
//! set when the connection is set up (here: carried by the message's header flit). For each
//! flit, `auxVC = max(now, auxVC) + Vtick` and the flit is stamped with the new value; the
//! scheduler serves the smallest stamp. A connection asking for rate r flits/cycle has
//! Vtick = 1/r cycles per flit, so bandwidth is shared in the ratio of the rates and a
//! connection that sent less than its rate is caught up with real time, not rewarded.
//!
//! In a wormhole router a connection is the message holding a VC, so the state lives per
//! VC (input VC at the crossbar, output VC at the link multiplexer, NIC VC at injection).
//! A flit is stamped when it reaches the front of its VC queue, with its arrival time:
//! queues are FIFO, so this gives exactly the stamps of stamping on arrival.
//!
//! **Finite counters** (document 003 §3.1, a 16-bit VHDL implementation): when the auxVC of
//! VC i overflows, auxVC_i is set to 0 and every other auxVC_j becomes auxVC_j − auxVC_i,
//! negatives clamped to 0. We read "auxVC_i" in the subtraction as the value the counter
//! held before the overflowing update (its last representable value; a reading of the
//! document's rule), and keep real time in the same rebased frame (`base`): the counters
//! hold `stamp − base`. Vticks are whole cycles in this mode and must fit the counter.

/// The per-VC part: the connection's Vtick and its auxiliary virtual clock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VcClock {
    /// Cycles per flit (1 / requested rate), at least 1.
    pub vtick: u32,
    /// Last stamp given (relative to the port's `base` in finite-counter mode).
    pub aux: u64,
}

/// Counter width: `None` = unbounded (64-bit), `Some(bits)` = the document's finite counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CounterMode {
    pub max: Option<u64>,
}

impl CounterMode {
    pub fn bits(bits: u32) -> Self {
        if bits == 0 || bits >= 64 {
            Self { max: None }
        } else {
            Self { max: Some((1u64 << bits) - 1) }
        }
    }
}

/// Stamp the flit arriving at `arrival` on VC `vc` of one scheduling point whose VCs' clocks
/// are `clocks` (the port's C VCs) and whose rebase offset is `base`. Returns the stamp (in
/// absolute cycles for the unbounded mode, in counter units for the finite mode; either way
/// smaller is served first and all VCs of the port are in the same frame).
///
/// (Called for every flit at every scheduling point: the common case is inline, the
/// overflow out of line.)
#[inline(always)]
pub fn stamp(clocks: &mut [VcClock], base: &mut u64, vc: usize, arrival: u64, mode: CounterMode) -> u64 {
    let Some(max) = mode.max else {
        let c = &mut clocks[vc];
        c.aux = c.aux.max(arrival) + c.vtick as u64;
        return c.aux;
    };
    let now = arrival.saturating_sub(*base);
    let reference = clocks[vc].aux.max(now);
    let next = reference + clocks[vc].vtick as u64;
    if next <= max {
        clocks[vc].aux = next;
        return next;
    }
    overflow(clocks, base, vc, reference)
}

/// The finite counter of VC `vc` overflowed from `reference`: it restarts at 0, the others
/// move down by its value, clamped at 0 (document 003 §3.1).
#[cold]
#[inline(never)]
fn overflow(clocks: &mut [VcClock], base: &mut u64, vc: usize, reference: u64) -> u64 {
    for (j, c) in clocks.iter_mut().enumerate() {
        c.aux = if j == vc { 0 } else { c.aux.saturating_sub(reference) };
    }
    *base += reference;
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serve one flit per cycle from three always-backlogged VCs by smallest stamp; count.
    fn share(vticks: &[u32], cycles: u64) -> Vec<u64> {
        let mut clocks: Vec<VcClock> = vticks.iter().map(|&v| VcClock { vtick: v, aux: 0 }).collect();
        let mut base = 0;
        let mode = CounterMode::default();
        // front stamps: every VC has a flit that arrived at 0
        let mut front: Vec<u64> =
            (0..clocks.len()).map(|v| stamp(&mut clocks, &mut base, v, 0, mode)).collect();
        let mut served = vec![0u64; clocks.len()];
        for now in 0..cycles {
            let v = (0..front.len()).min_by_key(|&v| (front[v], v)).unwrap();
            served[v] += 1;
            front[v] = stamp(&mut clocks, &mut base, v, now, mode);
        }
        served
    }

    #[test]
    fn bandwidth_in_the_ratio_of_the_rates() {
        // rates 1/2 : 1/4 : 1/4 of the link
        let s = share(&[2, 4, 4], 40_000);
        assert!((s[0] as f64 / 40_000.0 - 0.5).abs() < 0.001, "{s:?}");
        assert!((s[1] as f64 / 40_000.0 - 0.25).abs() < 0.001, "{s:?}");
        // 1 : 3 ratio
        let s = share(&[3, 9], 40_000);
        assert!((s[0] as f64 / s[1] as f64 - 3.0).abs() < 0.01, "{s:?}");
    }

    #[test]
    fn an_idle_connection_catches_up_with_real_time() {
        let mut clocks = [VcClock { vtick: 10, aux: 0 }];
        let mut base = 0;
        let m = CounterMode::default();
        assert_eq!(stamp(&mut clocks, &mut base, 0, 0, m), 10);
        assert_eq!(stamp(&mut clocks, &mut base, 0, 1, m), 20); // backlogged: +Vtick
        assert_eq!(stamp(&mut clocks, &mut base, 0, 500, m), 510); // idle: max(now, auxVC)
    }

    #[test]
    fn finite_counter_overflow_rule_worked_example() {
        // 4-bit counters (max 15). VC0 Vtick 6, VC1 Vtick 4, VC2 Vtick 5.
        let mode = CounterMode::bits(4);
        let mut c =
            [VcClock { vtick: 6, aux: 0 }, VcClock { vtick: 4, aux: 0 }, VcClock { vtick: 5, aux: 0 }];
        let mut base = 0;
        assert_eq!(stamp(&mut c, &mut base, 0, 0, mode), 6);
        assert_eq!(stamp(&mut c, &mut base, 0, 0, mode), 12);
        assert_eq!(stamp(&mut c, &mut base, 1, 2, mode), 6); // max(2, 0) + 4
        assert_eq!(stamp(&mut c, &mut base, 2, 3, mode), 8); // max(3, 0) + 5
        assert_eq!(stamp(&mut c, &mut base, 1, 3, mode), 10);
        // VC0: 12 + 6 = 18 > 15 overflows: VC0 -> 0, VC1 10 - 12 -> 0 (clamped), VC2 8 - 12 -> 0
        assert_eq!(stamp(&mut c, &mut base, 0, 4, mode), 0);
        assert_eq!((c[0].aux, c[1].aux, c[2].aux, base), (0, 0, 0, 12));
        // real time is in the rebased frame: cycle 14 is 2 now
        assert_eq!(stamp(&mut c, &mut base, 2, 14, mode), 7); // max(2, 0) + 5
        assert_eq!(stamp(&mut c, &mut base, 1, 14, mode), 6);
        // a second overflow subtracts only the overflowing VC's value
        c[2].aux = 13;
        assert_eq!(stamp(&mut c, &mut base, 2, 14, mode), 0); // 13 + 5 = 18 > 15
        assert_eq!((c[0].aux, c[1].aux, c[2].aux, base), (0, 0, 0, 25));
        c[1].aux = 9;
        c[0].aux = 14;
        assert_eq!(stamp(&mut c, &mut base, 0, 25, mode), 0); // 14 + 6 > 15
        assert_eq!((c[1].aux, c[2].aux, base), (0, 0, 39)); // 9 - 14 clamps to 0
        let mut c = [VcClock { vtick: 6, aux: 14 }, VcClock { vtick: 4, aux: 15 }];
        let mut base = 0;
        assert_eq!(stamp(&mut c, &mut base, 0, 0, mode), 0);
        assert_eq!(c[1].aux, 1); // 15 - 14: relative order kept
    }
}

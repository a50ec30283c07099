//! Per-link arbitration tables rewritten from admission control's reservations (document
//! 000 §4.1: each accept and each release at a hop "recomputes the weights for WRR" of the
//! link). A link with nothing reserved uses the configured table; a link with
//! reservations gives real time its reserved share of an arbitration round and best effort
//! the rest (`control/reservations.rs` computes the two shares, in a round of `ROUND`
//! units); control's VL and the table's other settings stay as configured.
//!
//! How a share becomes table entries: it is split evenly over the class's entries (the
//! lanes only that class may use; a lane shared by real time and best effort keeps its
//! configured weight). For IBA VL arbitration a unit is one IBA weight unit (64 bytes,
//! converted to flits as the configured table's are), so a round of 255 units is one
//! table entry's full 8-bit range; for WRR a unit is one flit of a VC's turn.

use super::SchedTables;

/// The output ports' (or injection links') tables of one scheduling point when admission
/// control rewrites them: one per port, each the configured table until its link holds a
/// reservation.
#[derive(Clone, Debug)]
pub struct PortTables {
    base: SchedTables,
    /// The lanes only real time (`[0]`) and only best effort (`[1]`) may use.
    lanes: [u32; 2],
    /// Flits per IBA weight unit (VL arbitration).
    vl_unit: f64,
    vcs: usize,
    tables: Vec<SchedTables>,
}

impl PortTables {
    /// `ports` ports starting from the configured `base`; `lanes`: the (real-time,
    /// best-effort) lanes among the `vcs` regular VCs. `None` when the scheduler has no
    /// weights (FCFS, round robin, VirtualClock, Fair Queueing: nothing to rewrite).
    pub fn new(
        base: &SchedTables,
        weighted: bool,
        lanes: [u32; 2],
        vl_unit: f64,
        vcs: usize,
        ports: usize,
    ) -> Option<Self> {
        weighted.then(|| PortTables {
            base: base.clone(),
            lanes,
            vl_unit,
            vcs,
            tables: vec![base.clone(); ports],
        })
    }

    /// Port `port`'s tables now.
    #[inline(always)]
    pub fn get(&self, port: usize) -> &SchedTables {
        &self.tables[port]
    }

    /// Port `port`'s link changed its reservations: `shares` (real time, best effort) of a
    /// round, or `None` for nothing reserved (the configured table again, exactly).
    pub fn apply(&mut self, port: usize, shares: Option<[u32; 2]>) {
        self.tables[port] = match shares {
            None => self.base.clone(),
            Some(s) => self.base.with_shares(self.lanes, s, self.vl_unit, self.vcs),
        };
    }
}

impl SchedTables {
    /// These tables with real time's and best effort's entries given `shares` of a round
    /// (see the module comment). `lanes` are masks over the `vcs` regular VCs; the
    /// preemptive router's extra lane `vcs + v` follows VC `v` and is not counted apart.
    pub fn with_shares(&self, lanes: [u32; 2], shares: [u32; 2], vl_unit: f64, vcs: usize) -> SchedTables {
        let vcs = vcs.clamp(1, 32);
        let class = |lane: usize| {
            let v = if lane >= vcs { lane - vcs } else { lane };
            (0..2).find(|&c| v < vcs && lanes[c] >> v & 1 == 1)
        };
        let per = |c: usize, n: [u32; 2]| if n[c] == 0 { 0 } else { shares[c].div_ceil(n[c]) };
        let mut t = self.clone();
        // WRR: a share over the class's regular lanes with a weight.
        let mut n = [0u32; 2];
        for v in 0..vcs {
            if let (Some(c), true) = (class(v), self.wrr[v] > 0) {
                n[c] += 1;
            }
        }
        for v in 0..32 {
            if let (Some(c), true) = (class(v), self.wrr[v] > 0) {
                t.wrr[v] = per(c, n).clamp(1, u16::MAX as u32) as u16;
            }
        }
        // VL arbitration: a share over the class's entries (of regular VLs) with a weight.
        let mut n = [0u32; 2];
        for &(vl, w) in self.vl.high.iter().chain(&self.vl.low) {
            if let (Some(c), true) = (class(vl as usize), w > 0 && (vl as usize) < vcs) {
                n[c] += 1;
            }
        }
        let flits = |u: u32| ((vl_unit * u as f64).ceil() as u32).clamp(1, u16::MAX as u32);
        for e in t.vl.high.iter_mut().chain(t.vl.low.iter_mut()) {
            if let (Some(c), true) = (class(e.0 as usize), e.1 > 0) {
                e.1 = flits(per(c, n));
            }
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::{Scheduler, VlArbTable};

    /// Flits served per lane in `n` choices with every lane in `offered` always ready.
    fn served(t: &SchedTables, s: &mut Scheduler, offered: u32, n: usize) -> [usize; 32] {
        let mut c = [0; 32];
        for _ in 0..n {
            c[t.select(s, offered, |_| 0, |_| true).unwrap()] += 1;
        }
        c
    }

    fn vl_table() -> SchedTables {
        // VL 0 real time, VL 1 best effort, equal weights; VL 15 management.
        let vl = VlArbTable { high: vec![], low: vec![(0, 4), (1, 4)], limit: None, management: Some(15) };
        SchedTables { vl, ..SchedTables::default() }
    }

    #[test]
    fn vl_arbitration_serves_in_the_reserved_proportion_and_returns_exactly_to_its_table() {
        let base = vl_table();
        let cfg = crate::config::SchedulerConfig::VlArbitration {
            high: vec![],
            low: vec![],
            limit_of_high_priority: 255,
            management_vl: Some(15),
        };
        let mut p = PortTables::new(&base, true, [1 << 0, 1 << 1], 4.0, 16, 2).unwrap();
        let mut s = Scheduler::build(&cfg, 1);
        // Configured: 1 : 1.
        let c = served(p.get(1), &mut s, 0b11, 800);
        assert_eq!((c[0], c[1]), (400, 400));
        // 0.6 of the link reserved: [153, 102] of a 255 round, 4 flits a unit.
        p.apply(1, Some([153, 102]));
        assert_eq!(p.get(1).vl.low, vec![(0, 612), (1, 408)]);
        assert_eq!(p.get(0), &base, "only the changed port");
        let c = served(p.get(1), &mut s, 0b11, 1020 * 10);
        assert_eq!((c[0], c[1]), (6120, 4080), "3 : 2");
        // Management still first.
        assert_eq!(p.get(1).select(&mut s, 1 << 15 | 0b11, |_| 0, |_| true), Some(15));
        // Released: exactly the prior table.
        p.apply(1, None);
        assert_eq!(p.get(1), &base);
    }

    #[test]
    fn wrr_splits_a_class_share_over_its_own_lanes_and_keeps_shared_and_control_lanes() {
        // Lanes 0-1 real time, 2-3 best effort, 4 control, 5 shared (in neither mask).
        let mut base = SchedTables::default();
        base.wrr[4] = 7;
        let cfg = crate::config::SchedulerConfig::Wrr { weights: vec![] };
        let mut p = PortTables::new(&base, true, [0b11, 0b1100], 1.0, 6, 1).unwrap();
        p.apply(0, Some([51, 204]));
        let w = &p.get(0).wrr;
        assert_eq!(&w[..6], &[26, 26, 102, 102, 7, 1]);
        let mut s = Scheduler::build(&cfg, 1);
        // Lanes 0-3 busy: a round is 26 + 26 + 102 + 102 = 256 flits.
        let c = served(p.get(0), &mut s, 0b1111, 256 * 4);
        assert_eq!(c[0] + c[1], 4 * 52, "0.2 of a round to real time");
        assert_eq!(c[2] + c[3], 4 * 204);
        p.apply(0, None);
        assert_eq!(p.get(0), &base);
        assert!(PortTables::new(&base, false, [1, 2], 1.0, 6, 1).is_none(), "nothing to rewrite");
    }
}

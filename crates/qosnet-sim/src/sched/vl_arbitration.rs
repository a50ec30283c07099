//! InfiniBand two-level VL arbitration (document 000 §3.3; IBA spec vol. 1 §7.6.9): a
//! high-priority and a low-priority table of (VL, weight) entries, each served as weighted
//! round robin (an entry's VL may send up to its weight, then the next entry takes over;
//! an entry whose VL has nothing to send is skipped); high priority goes first, but after
//! `limit` flits of high priority the arbiter must let one low-priority flit through when
//! one is waiting (the forward-progress guarantee); the management VL (VL15) is never
//! table-driven and always goes first.
//!
//! Units: weights and the limit are converted from IBA's units (64-byte weight units,
//! 4 KiB limit units, 255 = unbounded) to flits once, in configuration validation. A VL
//! may stand in several entries (that is how IBA gives one VL more than one share).

use super::bits;
use crate::routing::VcMask;

/// The arbitration tables of one port (configuration, shared by the ports that use it).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VlArbTable {
    /// (VL, weight in flits) entries of the high-priority table.
    pub high: Vec<(u8, u32)>,
    pub low: Vec<(u8, u32)>,
    /// High-priority flits that may go while a low-priority one waits; `None` = unbounded.
    pub limit: Option<u32>,
    /// The management VL, served before any table (VL15 in IBA).
    pub management: Option<u8>,
}

/// Arbiter state: where each table stands and how much high priority has gone.
#[derive(Clone, Copy, Debug, Default)]
pub struct VlArb {
    high_entry: u8,
    low_entry: u8,
    high_used: u16,
    low_used: u16,
    // At most 254 x 4 KiB of flits (the limit's largest bounded value) before it resets.
    high_sent: u32,
}

/// Walk one table from its current entry: serve the first entry whose VL can send and has
/// weight left, moving on (and refilling) past exhausted or idle entries. Returns the VL.
#[inline]
fn walk(table: &[(u8, u32)], entry: &mut u8, used: &mut u16, can_send: VcMask) -> Option<usize> {
    let n = table.len();
    if n == 0 {
        return None;
    }
    if *entry as usize >= n {
        (*entry, *used) = (0, 0);
    }
    for _ in 0..=n {
        let (vl, weight) = table[*entry as usize];
        if (*used as u32) < weight && can_send >> vl & 1 == 1 {
            *used += 1;
            return Some(vl as usize);
        }
        *entry = ((*entry as usize + 1) % n) as u8;
        *used = 0;
    }
    None
}

impl VlArb {
    #[inline]
    pub fn select(
        &mut self,
        offered: VcMask,
        table: &VlArbTable,
        ready: impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut can = 0u32;
        for v in bits(offered) {
            if ready(v) {
                can |= 1 << v;
            }
        }
        if can == 0 {
            return None;
        }
        if let Some(m) = table.management {
            if can >> m & 1 == 1 {
                return Some(m as usize);
            }
        }
        let in_table = |t: &[(u8, u32)]| t.iter().filter(|e| e.1 > 0).fold(0u32, |m, e| m | 1 << e.0);
        let high_can = can & in_table(&table.high);
        let low_can = can & in_table(&table.low);
        let high_turn = high_can != 0 && (low_can == 0 || table.limit.is_none_or(|l| self.high_sent < l));
        if high_turn {
            let v = walk(&table.high, &mut self.high_entry, &mut self.high_used, high_can)?;
            self.high_sent += 1;
            return Some(v);
        }
        let v = walk(&table.low, &mut self.low_entry, &mut self.low_used, low_can)?;
        self.high_sent = 0;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(arb: &mut VlArb, t: &VlArbTable, offered: u32, n: usize) -> Vec<usize> {
        (0..n).map(|_| arb.select(offered, t, |_| true).unwrap()).collect()
    }

    #[test]
    fn high_table_is_weighted_round_robin() {
        let t = VlArbTable { high: vec![(0, 2), (1, 1)], low: vec![], limit: None, management: None };
        let mut a = VlArb::default();
        assert_eq!(run(&mut a, &t, 0b11, 6), vec![0, 0, 1, 0, 0, 1]);
        // an entry whose VL has nothing is skipped
        assert_eq!(run(&mut a, &t, 0b10, 2), vec![1, 1]);
    }

    #[test]
    fn limit_of_high_priority_lets_low_through() {
        let t =
            VlArbTable { high: vec![(0, 8)], low: vec![(1, 1), (2, 1)], limit: Some(3), management: None };
        let mut a = VlArb::default();
        // 3 high, then one low, then 3 high, then the next low entry
        assert_eq!(run(&mut a, &t, 0b111, 8), vec![0, 0, 0, 1, 0, 0, 0, 2]);
        // unbounded limit: low only when high has nothing
        let t = VlArbTable { limit: None, ..t };
        let mut a = VlArb::default();
        assert_eq!(run(&mut a, &t, 0b111, 4), vec![0, 0, 0, 0]);
        assert_eq!(run(&mut a, &t, 0b110, 2), vec![1, 2]);
    }

    #[test]
    fn management_vl_always_first_and_tables_share_by_weight() {
        let t = VlArbTable { high: vec![], low: vec![(0, 3), (1, 1)], limit: Some(0), management: Some(15) };
        let mut a = VlArb::default();
        assert_eq!(a.select(1 << 15 | 0b11, &t, |_| true), Some(15));
        let seq = run(&mut a, &t, 0b11, 400);
        let zeros = seq.iter().filter(|&&v| v == 0).count();
        assert_eq!(zeros, 300); // 3 : 1
        assert_eq!(a.select(0, &t, |_| true), None);
    }
}

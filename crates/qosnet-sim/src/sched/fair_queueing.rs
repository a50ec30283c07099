//! Weighted Fair Queueing (Demers, Keshav, Shenker 1990; document 003 §3.1): the packet
//! system serves flits in the order they would finish in the fluid GPS system. Each flit
//! gets a finish tag `F = max(V(a), F_prev) + 1/r` where `r` is its connection's rate
//! (so 1/r = Vtick cycles per flit, as for VirtualClock) and `V` is the system's virtual
//! time, the *round number*: it grows at `dV/dt = 1 / Σ r_i` over the connections that are
//! backlogged in the fluid system, which a connection leaves when `V` passes its last
//! finish tag. Keeping that round number is the cost document 003 cites for choosing
//! VirtualClock; here it is tracked exactly, leaving events processed in order.
//!
//! One `FqPort` per scheduling point, one `FqFlow` per VC. Flits are tagged when they reach
//! the front of their VC queue, with `V` at `max(arrival, last update)`: the engine's
//! lazy stamping; for a connection backlogged in the fluid system this is the same tag.

/// Per-VC (connection) state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FqFlow {
    /// Finish tag of the connection's last flit.
    pub finish: f64,
    /// Whether the connection is backlogged in the fluid system (counted in `rate_sum`).
    pub active: bool,
    /// Rate while active, flits/cycle (1 / Vtick).
    pub rate: f64,
}

/// Per-scheduling-point virtual time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FqPort {
    /// Round number V.
    pub v: f64,
    /// Real time V was last brought up to.
    pub last: f64,
    /// Σ rates of the fluid-backlogged connections.
    pub rate_sum: f64,
}

impl FqPort {
    /// Advance V to real time `t`, retiring connections whose last finish tag V passes.
    pub fn advance(&mut self, flows: &mut [FqFlow], t: f64) {
        while self.last < t {
            if self.rate_sum <= 0.0 {
                // Idle fluid system: V stands still.
                self.last = t;
                break;
            }
            let exit = flows.iter().filter(|f| f.active).map(|f| f.finish).fold(f64::INFINITY, f64::min);
            let dt = (exit - self.v) * self.rate_sum;
            if self.last + dt <= t {
                self.v = exit;
                self.last += dt.max(0.0);
                for f in flows.iter_mut().filter(|f| f.active && f.finish <= exit) {
                    f.active = false;
                    self.rate_sum -= f.rate;
                }
                if flows.iter().all(|f| !f.active) {
                    self.rate_sum = 0.0; // no rounding residue
                }
            } else {
                self.v += (t - self.last) / self.rate_sum;
                self.last = t;
            }
        }
    }

    /// Tag a flit of VC `vc` (Vtick `vtick` cycles/flit) arriving at `arrival`; returns its
    /// finish tag.
    pub fn tag(&mut self, flows: &mut [FqFlow], vc: usize, vtick: u32, arrival: f64) -> f64 {
        self.advance(flows, arrival);
        let f = &mut flows[vc];
        let start = self.v.max(f.finish);
        f.finish = start + vtick as f64;
        let rate = 1.0 / vtick as f64;
        if !f.active {
            f.active = true;
            f.rate = rate;
            self.rate_sum += rate;
        } else if f.rate != rate {
            self.rate_sum += rate - f.rate;
            f.rate = rate;
        }
        f.finish
    }
}

/// A finish tag as an integer key (1/256 cycle), for the schedulers' min-key selection.
#[inline]
pub fn key(tag: f64) -> u64 {
    (tag * 256.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_number_worked_example() {
        // Two connections, rates 1/2 and 1/2 (Vtick 2): V advances at 1/(1/2 + 1/2) = 1.
        let mut p = FqPort::default();
        let mut f = [FqFlow::default(); 2];
        assert_eq!(p.tag(&mut f, 0, 2, 0.0), 2.0);
        assert_eq!(p.tag(&mut f, 0, 2, 0.0), 4.0); // backlogged: F_prev + 2
                                                   // alone, V runs at 1 / (1/2) = 2 per cycle
        p.advance(&mut f, 1.0);
        assert_eq!(p.v, 2.0);
        assert_eq!(p.tag(&mut f, 1, 2, 1.0), 4.0); // max(V=2, 0) + 2
                                                   // both active: V runs at 1 per cycle; at t=2, V=3
        p.advance(&mut f, 2.0);
        assert_eq!(p.v, 3.0);
        // at V=4 both leave the fluid system (t=3); V then stands still
        p.advance(&mut f, 10.0);
        assert_eq!(p.v, 4.0);
        assert_eq!(p.rate_sum, 0.0);
        assert!(!f[0].active && !f[1].active);
        assert_eq!(p.tag(&mut f, 1, 2, 10.0), 6.0);
    }

    #[test]
    fn backlogged_connections_share_in_the_ratio_of_rates() {
        // Serve one flit per cycle by smallest tag from always-backlogged VCs.
        let vticks = [2u32, 4, 4];
        let mut p = FqPort::default();
        let mut f = [FqFlow::default(); 3];
        let mut front: Vec<f64> = (0..3).map(|v| p.tag(&mut f, v, vticks[v], 0.0)).collect();
        let mut served = [0u32; 3];
        for now in 0..40_000 {
            let v = (0..3).min_by(|&a, &b| front[a].total_cmp(&front[b]).then(a.cmp(&b))).unwrap();
            served[v] += 1;
            front[v] = p.tag(&mut f, v, vticks[v], now as f64);
        }
        assert!((served[0] as f64 / 40_000.0 - 0.5).abs() < 0.001, "{served:?}");
        assert!((served[1] as f64 - served[2] as f64).abs() <= 2.0, "{served:?}");
    }
}

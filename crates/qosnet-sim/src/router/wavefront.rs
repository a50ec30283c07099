//! Stage 4's wavefront allocator (Tamir and Chi, "Symmetric crossbar arbiters for VLSI
//! communication switches", IEEE TPDS 4(1), 1993; Dally and Towles, "Principles and
//! Practices of Interconnection Networks", §19.4), chosen by `[router] allocator`.
//!
//! The request matrix has a cell (input i, output o) when one of input i's ready VCs heads
//! to o. Cells on one diagonal, o = i + d (mod P), share no row or column, so the allocator
//! sweeps the diagonals from a priority diagonal that rotates every cycle and grants each
//! cell whose row and column are still free: one pass gives a maximal matching, with no
//! iterations. The matched input's crossbar scheduler picks which of its VCs toward the
//! output sends. Cells are ordered by position alone, so validation refuses a rate-based
//! crossbar scheduler with it (an output could not serve the smallest key that asked).

use super::Routers;
use crate::net::Net;
use crate::sched::{bits64, low_bits};
use crate::unchecked::At;
use crate::units::Cycle;

impl Routers {
    /// One wavefront pass at router `r` over the crossbar inputs `inputs` (no speedup).
    #[inline(never)]
    pub(super) fn rounds_wavefront<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut Net,
        r: usize,
        inputs: u64,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        let mut rows = 0u64;
        for port in bits64(inputs) {
            let ready = self.ready_vcs::<PRE>(r, port, now);
            if ready != 0 {
                *self.xbar.ready.at_mut(port) = ready;
                *self.xbar.wants.at_mut(port) = self.outputs_of(r, port, ready);
                rows |= 1 << port;
            }
        }
        if rows == 0 {
            return;
        }
        let start = *self.wave_priority.at(r) as usize;
        *self.wave_priority.at_mut(r) = if start + 1 >= ports { 0 } else { start as u8 + 1 };
        let mut columns = low_bits(ports);
        for d in 0..ports {
            let diagonal = (start + d) % ports;
            for port in bits64(rows) {
                let out = (port + diagonal) % ports;
                if columns >> out & 1 == 0 || *self.xbar.wants.at(port) >> out & 1 == 0 {
                    continue;
                }
                let vcs = self.toward(r, port, out, *self.xbar.ready.at(port));
                let Some(v) = self.choose_vc(r, port, vcs, now) else { continue };
                self.traverse::<PRE, AGE, HOOK>(net, r, port, v, now);
                rows &= !(1 << port);
                columns &= !(1 << out);
            }
            if rows == 0 {
                break;
            }
        }
    }
}

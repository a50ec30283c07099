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

use super::matching::{next, Crossbar};
use crate::sched::{bits64, low_bits};
use crate::unchecked::At;

/// One wavefront pass over the crossbar inputs `inputs` (no speedup), from the priority
/// diagonal `priority`, which moves on by one when anything asked.
#[inline(always)]
pub(super) fn wavefront<X: Crossbar>(x: &mut X, inputs: u64, priority: &mut u8) {
    let ports = x.ports();
    let mut rows = 0u64;
    for i in bits64(inputs) {
        let wants = x.requests(i);
        if wants != 0 {
            *x.scratch().wants.at_mut(i) = wants;
            rows |= 1 << i;
        }
    }
    if rows == 0 {
        return;
    }
    let start = *priority as usize;
    *priority = next(start, ports) as u8;
    let mut columns = low_bits(ports);
    for d in 0..ports {
        let diagonal = (start + d) % ports;
        for i in bits64(rows) {
            let o = (i + diagonal) % ports;
            if columns >> o & 1 == 0 || *x.scratch_ref().wants.at(i) >> o & 1 == 0 {
                continue;
            }
            if !x.send(i, o) {
                continue;
            }
            rows &= !(1 << i);
            columns &= !(1 << o);
        }
        if rows == 0 {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::matching::tests::Matrix;
    use super::*;

    /// 3x3, every input asks every output. Diagonal d holds the cells o = i + d (mod 3).
    /// Cycle 1, priority 0: diagonal 0 = (0,0), (1,1), (2,2), all free: the identity.
    /// Cycle 2, priority 1: diagonal 1 = (0,1), (1,2), (2,0).
    /// Cycle 3, priority 2: diagonal 2 = (0,2), (1,0), (2,1). Cycle 4: back to diagonal 0.
    #[test]
    fn wavefront_priority_diagonal_rotates_each_cycle() {
        let mut x = Matrix::new(&[0b111, 0b111, 0b111]);
        let mut priority = 0u8;
        let expected = [
            vec![(0, 0), (1, 1), (2, 2)],
            vec![(0, 1), (1, 2), (2, 0)],
            vec![(0, 2), (1, 0), (2, 1)],
            vec![(0, 0), (1, 1), (2, 2)],
        ];
        for (cycle, want) in expected.iter().enumerate() {
            wavefront(&mut x, 0b111, &mut priority);
            assert_eq!(&x.take_matches(), want, "cycle {}", cycle + 1);
            assert_eq!(priority as usize, (cycle + 1) % 3);
        }
    }

    /// 4x4 with holes, priority diagonal 1 (o = i + 1 mod 4):
    ///   in0: o1 o2    in1: o0    in2: o3    in3: o0 o3
    /// Diagonal 1: (0,1) requested: match; (1,2) no; (2,3) requested: match; (3,0)
    ///   requested: match. Diagonal 2: (1,3)? in1 does not ask o3. Diagonal 3: (1,0)? o0
    ///   taken by in3. Diagonal 0: (1,1) no. in1 stays unmatched: the matching is maximal
    ///   (in1's only request, o0, is taken), not maximum.
    /// When no input asks, the priority stays where it was.
    #[test]
    fn wavefront_sweeps_from_the_priority_diagonal() {
        let mut x = Matrix::new(&[0b0110, 0b0001, 0b1000, 0b1001]);
        let mut priority = 1u8;
        wavefront(&mut x, 0b1111, &mut priority);
        assert_eq!(x.take_matches(), vec![(0, 1), (2, 3), (3, 0)]);
        assert_eq!(priority, 2);
        let mut idle = Matrix::new(&[0, 0]);
        wavefront(&mut idle, 0b11, &mut priority);
        assert!(idle.take_matches().is_empty());
        assert_eq!(priority, 2);
    }
}

//! Dimension-order routing for meshes and tori; dateline VC classes for tori.
//!
//! A torus ring needs two VC classes to be deadlock free (Dally & Seitz): a packet uses the
//! lower half of the VCs in a dimension until it crosses that dimension's wrap-around link
//! (the dateline), and the upper half from then on; entering a new dimension starts again
//! in the lower half. Minimal direction; a tie (k even, distance k/2) goes +.

use super::{all_vcs, Route};
use crate::topology::mesh::{coord, minus_port, plus_port, EJECT_PORT};

/// How the wrap-around links of a torus are treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrap {
    /// A mesh: no wrap-around links.
    Mesh,
    /// A torus with minimal routing but no dateline classes: deadlock-prone, offered so
    /// that deadlock itself can be studied (the watchdog reports it).
    Unsafe,
    /// A torus with the two dateline VC classes; the input (port, VC) tells the class.
    Dateline { in_port: usize, in_vc: usize },
}

pub(super) fn route(dims: &[u32], router: usize, dst: usize, wrap: Wrap, vcs: u32) -> Route {
    for (dim, &k) in dims.iter().enumerate() {
        let (c, t) = (coord(dims, router, dim), coord(dims, dst, dim));
        if c == t {
            continue;
        }
        let forward = (t + k - c) % k;
        let plus = match wrap {
            Wrap::Mesh => t > c,
            _ => forward <= k - forward,
        };
        let port = if plus { plus_port(dim) } else { minus_port(dim) } as u32;
        let Wrap::Dateline { in_port, in_vc } = wrap else {
            return Route { port, vcs: all_vcs(vcs) };
        };
        let half = vcs / 2;
        let same_dim = in_port == plus_port(dim) || in_port == minus_port(dim);
        let crossed_before = same_dim && in_vc as u32 >= half;
        let crosses_now = if plus { c == k - 1 } else { c == 0 };
        let lower = all_vcs(half);
        let vcs = if crossed_before || crosses_now { all_vcs(vcs) & !lower } else { lower };
        return Route { port, vcs };
    }
    Route { port: EJECT_PORT as u32, vcs: all_vcs(vcs) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dateline_switches_class_on_wrap() {
        let dims = [4u32];
        let from_nic = Wrap::Dateline { in_port: EJECT_PORT, in_vc: 0 };
        // at x=3 going to x=0 (+ direction, distance 1): crosses the wrap link -> upper half
        assert_eq!(route(&dims, 3, 0, from_nic, 4), Route { port: plus_port(0) as u32, vcs: 0b1100 });
        // at x=1 from the endpoint going to x=2: lower half
        assert_eq!(route(&dims, 1, 2, from_nic, 4), Route { port: plus_port(0) as u32, vcs: 0b0011 });
        // arrived over the wrap link on an upper VC: stays upper in this dimension
        let r = route(&dims, 0, 1, Wrap::Dateline { in_port: minus_port(0), in_vc: 2 }, 4);
        assert_eq!(r.vcs, 0b1100);
        // a mesh never wraps: x=3 to x=0 goes -
        assert_eq!(route(&dims, 3, 0, Wrap::Mesh, 4).port, minus_port(0) as u32);
    }
}

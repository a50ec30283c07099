//! Dimension-order routing for meshes and tori; dateline VC classes for tori.
//!
//! A torus ring needs two VC classes to be deadlock free (Dally & Seitz): a packet uses the
//! lower half of the VCs in a dimension until it crosses that dimension's wrap-around link
//! (the dateline), and the upper half from then on; entering a new dimension starts again
//! in the lower half. Minimal direction; a tie (k even, distance k/2) goes +.

use super::{all_vcs, Route};
use crate::topology::mesh::{coord, minus_port, plus_port, EJECT_PORT};

pub(super) fn route(
    dims: &[u32],
    router: usize,
    dst: usize,
    dateline: Option<(usize, usize)>,
    vcs: u32,
) -> Route {
    for (dim, &k) in dims.iter().enumerate() {
        let (c, t) = (coord(dims, router, dim), coord(dims, dst, dim));
        if c == t {
            continue;
        }
        let Some((in_port, in_vc)) = dateline else {
            let port = if t > c {
                plus_port(dim)
            } else {
                minus_port(dim)
            };
            return Route {
                port: port as u32,
                vcs: all_vcs(vcs),
            };
        };
        let forward = (t + k - c) % k;
        let plus = forward <= k - forward;
        let port = if plus {
            plus_port(dim)
        } else {
            minus_port(dim)
        };
        let half = vcs / 2;
        let same_dim = in_port == plus_port(dim) || in_port == minus_port(dim);
        let crossed_before = same_dim && in_vc as u32 >= half;
        let crosses_now = if plus { c == k - 1 } else { c == 0 };
        let upper = crossed_before || crosses_now;
        let lower_mask = all_vcs(half);
        let mask = if upper {
            all_vcs(vcs) & !lower_mask
        } else {
            lower_mask
        };
        return Route {
            port: port as u32,
            vcs: mask,
        };
    }
    Route {
        port: EJECT_PORT as u32,
        vcs: all_vcs(vcs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dateline_switches_class_on_wrap() {
        let dims = [4u32];
        // at x=3 going to x=0 (+ direction, distance 1): crosses the wrap link -> upper half
        let r = route(&dims, 3, 0, Some((EJECT_PORT, 0)), 4);
        assert_eq!(
            r,
            Route {
                port: plus_port(0) as u32,
                vcs: 0b1100
            }
        );
        // at x=1 from the endpoint going to x=2: lower half
        let r = route(&dims, 1, 2, Some((EJECT_PORT, 0)), 4);
        assert_eq!(
            r,
            Route {
                port: plus_port(0) as u32,
                vcs: 0b0011
            }
        );
        // arrived over the wrap link on an upper VC: stays upper in this dimension
        let r = route(&dims, 0, 1, Some((minus_port(0), 2)), 4);
        assert_eq!(r.vcs, 0b1100);
    }
}

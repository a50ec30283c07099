//! Dimension-order routing for meshes and tori; dateline VC classes for tori.
//!
//! A torus ring needs two VC classes to be deadlock free (Dally & Seitz): a packet uses the
//! lower half of the VCs in a dimension until it crosses that dimension's wrap-around link
//! (the dateline), and the upper half from then on; entering a new dimension starts again
//! in the lower half. Minimal direction; a tie (k even, distance k/2) goes +.

use super::{all_vcs, Route};
use crate::topology::mesh::{coord, minus_port, plus_port, EJECT_PORT};

/// The side lengths of a mesh/torus and every router's coordinates, precomputed so routing
/// a header needs no division.
#[derive(Clone, Debug)]
pub struct Grid {
    pub dims: Vec<u32>,
    /// `coords[router * dims.len() + dim]`.
    coords: Vec<u16>,
}

impl Grid {
    pub fn new(dims: &[u32]) -> Grid {
        let routers: usize = dims.iter().map(|&d| d as usize).product();
        let coords =
            (0..routers).flat_map(|r| (0..dims.len()).map(move |d| coord(dims, r, d) as u16)).collect();
        Grid { dims: dims.to_vec(), coords }
    }

    #[inline]
    fn at(&self, router: usize) -> &[u16] {
        let n = self.dims.len();
        &self.coords[router * n..router * n + n]
    }
}

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

pub(super) fn route(grid: &Grid, router: usize, dst: usize, wrap: Wrap, vcs: u32) -> Route {
    let (here, there) = (grid.at(router), grid.at(dst));
    for (dim, &k) in grid.dims.iter().enumerate() {
        let (c, t) = (here[dim] as u32, there[dim] as u32);
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
        let dims = Grid::new(&[4u32]);
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

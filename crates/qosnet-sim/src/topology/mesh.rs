//! k-ary n-mesh and k-ary n-torus with one endpoint per router.
//!
//! Router index = mixed-radix number of its coordinates, `dims[0]` fastest. Port 0 is the
//! endpoint; port `1 + 2d` leads to the neighbour at coordinate −1 in dimension d, port
//! `2 + 2d` to the neighbour at +1 (wrapping around in a torus).

use super::{Peer, Shape, Topology};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

pub const EJECT_PORT: usize = 0;

#[inline]
pub fn minus_port(dim: usize) -> usize {
    1 + 2 * dim
}

#[inline]
pub fn plus_port(dim: usize) -> usize {
    2 + 2 * dim
}

/// Coordinate of `index` in dimension `dim`.
#[inline]
pub fn coord(dims: &[u32], mut index: usize, dim: usize) -> u32 {
    for &d in &dims[..dim] {
        index /= d as usize;
    }
    (index % dims[dim] as usize) as u32
}

/// Stride of dimension `dim` in the router index.
#[inline]
pub fn stride(dims: &[u32], dim: usize) -> usize {
    dims[..dim].iter().map(|&d| d as usize).product()
}

pub(super) fn build(dims: Vec<u32>, wrap: bool) -> Result<Topology, ConfigError> {
    let routers: usize = dims.iter().map(|&d| d as usize).product();
    let ports = 1 + 2 * dims.len();
    let mut peer = vec![Peer::None; routers * ports];
    for r in 0..routers {
        peer[r * ports + EJECT_PORT] = Peer::Endpoint { node: NodeId(r as u32) };
        for (dim, &k) in dims.iter().enumerate() {
            let c = coord(&dims, r, dim);
            let s = stride(&dims, dim);
            if c + 1 < k || wrap {
                let next = if c + 1 < k { r + s } else { r - s * (k as usize - 1) };
                peer[r * ports + plus_port(dim)] =
                    Peer::Router { router: RouterId(next as u32), port: minus_port(dim) as u32 };
            }
            if c > 0 || wrap {
                let prev = if c > 0 { r - s } else { r + s * (k as usize - 1) };
                peer[r * ports + minus_port(dim)] =
                    Peer::Router { router: RouterId(prev as u32), port: plus_port(dim) as u32 };
            }
        }
    }
    let shape = if wrap { Shape::Torus { dims } } else { Shape::Mesh { dims } };
    Ok(Topology::from_parts(shape, routers, ports, peer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mesh_4x4_links() {
        let t = build(vec![4, 4], false).unwrap();
        assert_eq!((t.routers, t.ports, t.nodes), (16, 5, 16));
        // router 5 = (1,1): +x is router 6, -y is router 1
        assert_eq!(t.peer(5, plus_port(0)), Peer::Router { router: RouterId(6), port: minus_port(0) as u32 });
        assert_eq!(t.peer(5, minus_port(1)), Peer::Router { router: RouterId(1), port: plus_port(1) as u32 });
        assert_eq!(t.peer(3, plus_port(0)), Peer::None);
        assert!(t.is_symmetric());
    }

    #[test]
    fn torus_wraps() {
        let t = build(vec![4, 4], true).unwrap();
        assert_eq!(t.peer(3, plus_port(0)), Peer::Router { router: RouterId(0), port: minus_port(0) as u32 });
        assert_eq!(
            t.peer(0, minus_port(1)),
            Peer::Router { router: RouterId(12), port: plus_port(1) as u32 }
        );
        assert!(t.is_symmetric());
    }
}

//! k-ary n-fly (a butterfly; Dally & Towles, "Principles and Practices of Interconnection
//! Networks", ch. 4; BookSim2's `fly`): k^n nodes and n stages of k^(n-1) k x k routers,
//! every channel one way, from a stage to the next.
//!
//! Router (stage s, address a), a an (n-1)-digit base-k number, has index
//! `s * k^(n-1) + a`, as BookSim2 numbers them. Qosnet's links carry flits both ways, so a
//! fly router has 2k ports: ports `0..k` face the stage before (the nodes, at stage 0) and
//! ports `k..2k` the stage after (the nodes, at the last stage); flits enter on the first
//! and leave on the second, and the channels the other way stay unused. Node i injects at
//! port i mod k of stage 0's router i div k and ejects from port k + i mod k of the last
//! stage's router i div k (`Topology::attach`, `Topology::eject`). Port `k + q` of (s, a)
//! reaches (s + 1, a with digit n-s-2 set to q), arriving on its port `digit_{n-s-2}(a)`:
//! BookSim2's wiring (fly.cpp's `_InChannel`, which swaps that digit with the port).

use super::fat_tree::{digit, with_digit};
use super::{Peer, Shape, Topology, MAX_PORTS};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

pub(super) fn build(k: u32, n: u32) -> Result<Topology, ConfigError> {
    let max_k = MAX_PORTS as u32 / 2;
    if !(2..=max_k).contains(&k) {
        return Err(ConfigError::new(
            "topology.k",
            format!("must be in 2..={max_k} (a fly router has 2k ports, at most {MAX_PORTS}), got {k}"),
        ));
    }
    if !(1..=8).contains(&n) {
        return Err(ConfigError::new("topology.n", format!("must be in 1..=8, got {n}")));
    }
    if (k as u64).pow(n) > 1 << 20 {
        return Err(ConfigError::new(
            "topology",
            format!("a {k}-ary {n}-fly has {} nodes, more than the supported {}", (k as u64).pow(n), 1 << 20),
        ));
    }
    let (ku, per_stage) = (k as usize, (k as usize).pow(n - 1));
    let routers = per_stage * n as usize;
    let ports = 2 * ku;
    let mut peer = vec![Peer::None; routers * ports];
    for s in 0..n as usize {
        for a in 0..per_stage {
            let r = s * per_stage + a;
            for j in 0..ku {
                let node = Peer::Endpoint { node: NodeId((a * ku + j) as u32) };
                if s == 0 {
                    peer[r * ports + j] = node;
                }
                if s + 1 == n as usize {
                    peer[r * ports + ku + j] = node;
                } else {
                    let pos = n - s as u32 - 2;
                    let next = (s + 1) * per_stage + with_digit(a, ku, pos, j);
                    peer[r * ports + ku + j] =
                        Peer::Router { router: RouterId(next as u32), port: digit(a, ku, pos) as u32 };
                    peer[next * ports + digit(a, ku, pos)] =
                        Peer::Router { router: RouterId(r as u32), port: (ku + j) as u32 };
                }
            }
        }
    }
    Ok(Topology::from_parts(Shape::Fly { k, n }, routers, ports, peer))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BookSim2's channel from stage s-1 into (stage s, address, port): the address with
    /// digit n-s-1 replaced by the port, leaving by the port that digit held.
    fn booksim_in_channel(k: usize, n: u32, stage: u32, addr: usize, port: usize) -> (usize, usize) {
        let pos = n - stage - 1;
        (with_digit(addr, k, pos, port), digit(addr, k, pos))
    }

    #[test]
    fn wired_as_booksim2() {
        for (k, n) in [(2, 1), (2, 3), (4, 2), (3, 3), (4, 3)] {
            let t = build(k, n).unwrap();
            let (ku, per_stage) = (k as usize, (k as usize).pow(n - 1));
            assert_eq!((t.nodes, t.routers, t.ports), (ku.pow(n), per_stage * n as usize, 2 * ku));
            assert!(t.is_symmetric());
            for s in 1..n {
                for a in 0..per_stage {
                    for p in 0..ku {
                        let (from, out) = booksim_in_channel(ku, n, s, a, p);
                        let from = (s as usize - 1) * per_stage + from;
                        assert_eq!(
                            t.peer(s as usize * per_stage + a, p),
                            Peer::Router { router: RouterId(from as u32), port: (ku + out) as u32 },
                            "k {k} n {n} stage {s} router {a} port {p}"
                        );
                    }
                }
            }
            for i in 0..t.nodes {
                assert_eq!(t.attach[i], (RouterId((i / ku) as u32), (i % ku) as u32));
                let last = (n as usize - 1) * per_stage + i / ku;
                assert_eq!(t.eject[i], (RouterId(last as u32), (ku + i % ku) as u32));
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_build() {
        assert_eq!(build(33, 2).unwrap_err().path, "topology.k");
        assert_eq!(build(1, 2).unwrap_err().path, "topology.k");
        assert_eq!(build(4, 0).unwrap_err().path, "topology.n");
        assert_eq!(build(32, 5).unwrap_err().path, "topology");
    }
}

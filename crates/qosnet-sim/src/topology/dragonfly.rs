//! Dragonfly (Kim, Dally, Scott & Abts, "Technology-Driven, Highly-Scalable Dragonfly
//! Topology", ISCA 2008): groups of `a` routers, each router with `p` terminals, `a - 1`
//! local channels (the group fully connected) and `h` global channels, and `g = a*h + 1`
//! groups so that every pair of groups shares exactly one global channel (§3.1, the
//! largest balanced dragonfly for given a and h).
//!
//! Numbering (as BookSim2's `dragonflynew`, so a `.cfg` user's router and port numbers
//! mean the same here): router `G*a + i` is router i of group G; node `r*p + j` is
//! terminal j of router r, on port j; ports `p .. p + a - 1` are local, port `p + j'`
//! leading to router j of the group (j' = j below i, j - 1 above it); ports
//! `p + a - 1 .. p + a - 1 + h` are global. Group G's global channels are numbered
//! `t = i*h + c` (router i, global port c) and channel t leads to group t when t < G,
//! else t + 1: the consecutive ("absolute") arrangement, every group skipping itself.

use super::{Peer, Shape, Topology, MAX_PORTS};
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};

/// A dragonfly's sizes and the arithmetic of its numbering, shared by the topology and
/// its routing (`routing/dragonfly.rs`) so the two cannot disagree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    /// Routers per group.
    pub a: u32,
    /// Terminals per router.
    pub p: u32,
    /// Global channels per router.
    pub h: u32,
}

impl Dragonfly {
    /// Groups: a*h + 1, one global channel between every pair.
    #[inline]
    pub fn groups(&self) -> usize {
        (self.a * self.h + 1) as usize
    }

    #[inline]
    pub fn routers(&self) -> usize {
        self.groups() * self.a as usize
    }

    #[inline]
    pub fn ports(&self) -> usize {
        (self.p + self.a - 1 + self.h) as usize
    }

    #[inline]
    pub fn group_of(&self, router: usize) -> usize {
        router / self.a as usize
    }

    /// The router a node is attached to.
    #[inline]
    pub fn router_of_node(&self, node: usize) -> usize {
        node / self.p as usize
    }

    /// Whether `port` is a global channel.
    #[inline]
    pub fn is_global(&self, port: usize) -> bool {
        port >= (self.p + self.a - 1) as usize
    }

    /// Whether `port` is a terminal (injection / ejection) port.
    #[inline]
    pub fn is_terminal(&self, port: usize) -> bool {
        port < self.p as usize
    }

    /// The number, within group `from`, of its global channel to group `to` (≠ `from`).
    #[inline]
    pub fn channel_to(&self, from: usize, to: usize) -> usize {
        if to < from {
            to
        } else {
            to - 1
        }
    }

    /// The router (index in the network) holding group `group`'s global channel `t`, and
    /// that channel's port.
    #[inline]
    pub fn channel_end(&self, group: usize, t: usize) -> (usize, usize) {
        let (a, h) = (self.a as usize, self.h as usize);
        (group * a + t / h, (self.p + self.a - 1) as usize + t % h)
    }

    /// The local port of router `router` leading to router `to` of the same group.
    #[inline]
    pub fn local_port(&self, router: usize, to: usize) -> usize {
        let (i, j) = (router % self.a as usize, to % self.a as usize);
        self.p as usize + if j < i { j } else { j - 1 }
    }
}

pub(super) fn build(a: u32, p: u32, h: u32, global_latency: Option<u32>) -> Result<Topology, ConfigError> {
    for (name, v) in [("a", a), ("p", p), ("h", h)] {
        if v == 0 {
            return Err(ConfigError::new(format!("topology.{name}"), "must be >= 1, got 0"));
        }
    }
    let d = Dragonfly { a, p, h };
    if d.ports() > MAX_PORTS {
        return Err(ConfigError::new(
            "topology",
            format!("routers would have p + a - 1 + h = {} ports; at most {MAX_PORTS}", d.ports()),
        ));
    }
    let routers = (a as u64) * (a as u64 * h as u64 + 1);
    if routers > super::MAX_ROUTERS {
        return Err(ConfigError::new(
            "topology",
            format!("{routers} routers (a * (a*h + 1)) is more than the supported {}", super::MAX_ROUTERS),
        ));
    }
    let (routers, ports) = (d.routers(), d.ports());
    let (pu, au) = (p as usize, a as usize);
    let mut peer = vec![Peer::None; routers * ports];
    for r in 0..routers {
        let group = d.group_of(r);
        for j in 0..pu {
            peer[r * ports + j] = Peer::Endpoint { node: NodeId((r * pu + j) as u32) };
        }
        for other in group * au..(group + 1) * au {
            if other != r {
                peer[r * ports + d.local_port(r, other)] =
                    Peer::Router { router: RouterId(other as u32), port: d.local_port(other, r) as u32 };
            }
        }
        for c in 0..h as usize {
            let t = (r % au) * h as usize + c;
            let to = if t < group { t } else { t + 1 };
            let (there, port) = d.channel_end(to, d.channel_to(to, group));
            peer[r * ports + pu + au - 1 + c] =
                Peer::Router { router: RouterId(there as u32), port: port as u32 };
        }
    }
    let mut t = Topology::from_parts(Shape::Dragonfly(d), routers, ports, peer);
    if let Some(cycles) = global_latency {
        t.set_long_links("topology.global_latency", cycles, |_, port| d.is_global(port))?;
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booksim_k4_is_33_groups_of_8_routers() {
        // BookSim2's dragonflynew with k = 4: p = h = 4, a = 2p = 8 (its dragonflyconfig).
        let t = build(8, 4, 4, None).unwrap();
        assert_eq!((t.routers, t.ports, t.nodes), (264, 15, 1056));
        assert!(t.is_symmetric());
        // every port connected
        assert!(t.peer.iter().all(|p| *p != Peer::None));
    }

    #[test]
    fn every_pair_of_groups_shares_one_global_channel() {
        for (a, p, h) in [(2, 1, 1), (4, 2, 2), (3, 1, 2), (8, 4, 4)] {
            let t = build(a, p, h, None).unwrap();
            let d = Dragonfly { a, p, h };
            let g = d.groups();
            let mut count = vec![0u32; g * g];
            for r in 0..t.routers {
                for port in (0..t.ports).filter(|&q| d.is_global(q)) {
                    let Peer::Router { router, port: back } = t.peer(r, port) else { panic!() };
                    assert!(d.is_global(back as usize), "a global channel lands on a global port");
                    count[d.group_of(r) * g + d.group_of(router.index())] += 1;
                }
            }
            for x in 0..g {
                for y in 0..g {
                    assert_eq!(count[x * g + y], u32::from(x != y), "groups {x} -> {y} in a={a} h={h}");
                }
            }
        }
    }

    #[test]
    fn hand_worked_links_of_the_smallest_dragonfly() {
        // a = 2, p = 1, h = 1: 3 groups of 2 routers; ports: 0 terminal, 1 local, 2 global.
        let t = build(2, 1, 1, None).unwrap();
        assert_eq!((t.routers, t.ports, t.nodes), (6, 3, 6));
        let at = |r: u32, port: u32| Peer::Router { router: RouterId(r), port };
        // group 0: channel 0 (router 0) -> group 1, channel 1 (router 1) -> group 2
        assert_eq!(t.peer(0, 2), at(2, 2), "group 1's channel 0 (router 2) leads back to group 0");
        assert_eq!(t.peer(1, 2), at(4, 2), "group 2's channel 0 (router 4) leads to group 0");
        // group 1: channel 1 (router 3) -> group 2, arriving on group 2's channel 1 (router 5)
        assert_eq!(t.peer(3, 2), at(5, 2));
        assert_eq!(t.peer(0, 1), at(1, 1), "the two routers of a group, on their local ports");
        assert_eq!(t.peer(5, 0), Peer::Endpoint { node: NodeId(5) });
    }
}

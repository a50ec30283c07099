//! What queues for each (output port, VL) of a router, as IBA CC's and RED's marking count
//! it (`marking.rs`, module comment): an input lane's flits move between the counters of
//! `PortQueues` as its state changes (`requeue`), and the scan the invariant checks hold
//! those counters to (`port_queue`). Kept apart from `marking.rs` (the marking's types and
//! decisions), which then needs only the routers' shape, not their state.

use super::params::Params;
use super::state::InVc;
use super::Routers;
use crate::sched::bits;
use crate::unchecked::At;

impl Routers {
    /// Lane `v` of input port `ip` changed state (routed, won an output VC, its tail
    /// crossed): its flits count toward what it queues for now (`PortQueues`). Call after
    /// every change of its active, waiting (VC allocation or parked), route or output VC.
    #[inline]
    pub(crate) fn requeue(&mut self, ip: usize, v: usize) {
        if !self.port_queues.on {
            return;
        }
        let ivc = self.p.lane_index(ip, v);
        let s = self.in_vc.at(ivc);
        let (r, bit) = (self.ip_place.at(ip).0 as usize, 1u32 << v);
        let op = (r * self.p.ports + s.out_port as usize) as u32;
        let target = if *self.ip_active.at(ip) & bit != 0 {
            (op, 1 << s.out_vc)
        } else if self.port_queues.count_waiting
            && (*self.va.ip_vc_alloc.at(ip) | *self.va.ip_parked.at(ip)) & bit != 0
        {
            (op, s.route_vcs)
        } else {
            (0, 0)
        };
        let len = s.buf.len();
        self.port_queues.retarget(&self.p, ivc, len, target);
    }
}

/// The flits queued at one router for VL `ov` of its output port `out`, beside the
/// `occupancy` flits of that VL's output buffer (module comment): those of the input VCs
/// (`in_vc`, laid out by `p`) of the router's ports `ips` whose packet is routed to `out`
/// and holds `ov` (`active`: the lanes holding an output VC) or waits for one of `out`'s
/// VCs among which its route allows `ov` (`waiting`: lanes in VC allocation or parked).
/// `PortQueues` keeps this sum as flits come and go; the invariant checks scan for it.
#[inline(never)]
pub(crate) fn port_queue(
    p: &Params,
    in_vc: &[InVc],
    ips: std::ops::Range<usize>,
    active: &[u32],
    waiting: impl Fn(usize) -> u32,
    (out, ov): (usize, usize),
    occupancy: u32,
) -> u32 {
    let mut queued = occupancy;
    for ip in ips {
        let (act, wait) = (*active.at(ip), waiting(ip));
        for v in bits(act | wait) {
            let s = in_vc.at(p.lane_index(ip, v));
            if s.out_port as usize != out {
                continue;
            }
            let holds = act >> v & 1 == 1 && s.out_vc as usize == ov;
            let may = wait >> v & 1 == 1 && s.route_vcs >> ov & 1 == 1;
            if holds || may {
                queued += s.buf.len();
            }
        }
    }
    queued
}

//! Stage 2: the routing decision for header flits (document 003 §3).
//!
//! The route depends on the header alone (its destination and class) and the header is
//! routed in the cycle it becomes ready, so it is computed when the header enters its VC
//! buffer (stage 1, or a dummy header made by preemption) and takes effect after the
//! stage's delay: output-VC arbitration (stage 3) may start at `ready + routing delay`,
//! exactly when it would if stage 2 ran as a separate visit, and the routing counts as
//! progress for the watchdog at `ready`, as it did then (`Simulation::routed_at`). One look
//! at the VC instead of two: on a large network the second look was a cache miss per header.

use super::{OtherWays, Routers, Way};
use crate::control::HopAction;
use crate::flit::Signal;
use crate::ids::{NodeId, PacketId};
use crate::links::Control;
use crate::net::{Net, RouterNet};
use crate::unchecked::At;
use crate::units::Cycle;

impl Routers {
    /// Route the header just put at the front of lane `v` of input port `ip`, which may
    /// act from `ready` (its `InVc::front` is already written). Callers then `requeue` the
    /// lane (IBA CC's queues; left to them so runs without the hook skip it at compile time).
    #[inline(always)]
    pub(crate) fn route_header(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, ready: Cycle) {
        let vcs = self.p.vcs;
        let ivc = self.p.lane_index(ip, v);
        let (r, port) = *self.ip_place.at(ip);
        let (r, port) = (r as usize, port as usize);
        let packet = self.in_vc.at(ivc).packet;
        let pkt = net.packet(packet);
        let (dst, class, mut path, signal) =
            (pkt.dst.index(), pkt.class.index(), pkt.path as u32, pkt.signal);
        // (a packet resuming after preemption keeps the way its first part took)
        if self.routing.chooses_at_source() {
            path = if self.in_vc.at(ivc).resumed {
                net.packet(packet).via as u32
            } else {
                self.valiant_choice(net, r, port, packet) as u32
            };
        }
        // An extra (preemption) lane routes as its VC.
        let vc = if v >= vcs { v - vcs } else { v };
        let class_vcs = *self.p.class_vcs.at(class);
        let route = if self.routing.has_other_ways() {
            self.route_with_other_ways(ivc, (r, port, vc), dst, path, class_vcs)
        } else {
            self.routing.route_in_class(&self.topo, r, port, vc, dst, path, vcs as u32, class_vcs)
        };
        if signal != Signal::Data {
            reservation_hop(net.whole(), r, route.port as usize, packet, ready);
        }
        let gate = ready + self.p.d_routing;
        let state = self.in_vc.at_mut(ivc);
        state.out_port = route.port as u16;
        // (the route's VCs that the message's class may use: document 003 §3.2)
        state.route_vcs = route.vcs;
        state.class = class as u8;
        state.gate = gate;
        state.front.ready = state.front.ready.max(gate);
        net.progress().routed_at = net.progress().routed_at.max(ready);
        *self.va.ip_vc_alloc.at_mut(ip) |= 1 << v;
        *self.va.r_alloc_ports.at_mut(r) |= 1 << port;
    }

    /// The route of the header in input VC record `ivc` (at `(router, port, vc)`) where the
    /// routing offers other ways (`Routing::has_other_ways`): the route and its other ways
    /// in one look, the others kept for the VC allocator. Out of line: the routings without
    /// them keep the routing stage as it was (its inlined code grew 2% of a mesh run's
    /// instructions with this in it).
    #[inline(never)]
    fn route_with_other_ways(
        &mut self,
        ivc: usize,
        (r, port, vc): (usize, usize, usize),
        dst: usize,
        path: u32,
        class_vcs: u32,
    ) -> crate::routing::Route {
        let w = self.routing.ways_in_class(&self.topo, r, port, vc, dst, path, class_vcs);
        let way = |w: Option<crate::routing::Route>| {
            w.map_or(Way::default(), |w| Way { port: w.port as u16, vcs: w.vcs })
        };
        *self.va.other_ways.at_mut(ivc) = OtherWays { ways: [way(w.second), way(w.escape)], asked: 0 };
        w.first
    }

    /// Whether a header arriving at input port `ip` (`router * ports + port`) draws its
    /// way there (`valiant_choice`, for a routing that `chooses_at_source`): where it
    /// enters the network, or at every router for one that `chooses_every_hop`. A
    /// threaded run's main thread asks it to draw each shard's headers' ways in arrival
    /// order (`Threads::sort_arrivals`).
    #[inline]
    pub(crate) fn draws_way_at(&self, ip: usize) -> bool {
        let (r, port) = *self.ip_place.at(ip);
        self.routing.chooses_every_hop()
            || matches!(self.topo.peer(r as usize, port as usize), crate::topology::Peer::Endpoint { .. })
    }

    /// The packet's drawn way (`Packet::via`: Valiant's and UGAL's intermediate group, NCA's
    /// up ports): made where it enters the network, from the routers' draw and, for UGAL-L,
    /// this router's queues toward each output (the flits its credits say the next buffers
    /// hold, as BookSim2's `GetUsedCredit`); kept by the packet for the routers after, or
    /// (`chooses_every_hop`: adaptive NCA) chosen again at each of them.
    #[cold]
    #[inline(never)]
    fn valiant_choice(
        &mut self,
        net: &mut impl RouterNet,
        r: usize,
        port: usize,
        packet: crate::ids::PacketId,
    ) -> u16 {
        if !self.draws_way_at(r * self.p.ports + port) {
            return net.packet(packet).via;
        }
        let draw = net.via_draw();
        let (p, depth) = (&self.p, self.p.input_depth);
        let out_vc = &self.out_vc;
        let queue = |out: usize| {
            let op = r * p.ports + out;
            (0..p.vcs).map(|v| depth.saturating_sub(out_vc.at(p.lane_index(op, v)).credits)).sum()
        };
        let pkt = net.packet(packet);
        let via = self.routing.choose_via(r, pkt.dst.index(), draw, queue, pkt.via);
        net.set_via(packet, via);
        via
    }

    /// The tail of the packet lane `v` of input port `ip` held has crossed at `now` and the
    /// next packet's header is at the front of its buffer (`VcRelease::TailSent`, document
    /// 003 §3.2.1's footnote 2: a VC buffer may hold the tail of one message and the header
    /// of the next): the lane takes it up and routes it from the next cycle.
    #[inline(never)]
    pub(crate) fn next_packet(&mut self, net: &mut impl RouterNet, ip: usize, v: usize, now: Cycle) {
        let ivc = self.p.lane_index(ip, v);
        let front = *self.in_vc.at(ivc).buf.front();
        debug_assert!(front.is_head() && self.p.release_on_send);
        self.in_vc.at_mut(ivc).packet = front.packet();
        self.route_header(net, ip, v, front.ready.max(now + 1));
        self.requeue(ip, v);
    }
}

/// Admission control at a router (document 000 §4.1): as a probe, release or last data
/// packet is routed, the router checks or gives back the output link toward the
/// destination. A refused probe travels on spent while the router's NACK, naming it, leaves
/// from its own node port; a release stops at the refuser.
#[cold]
#[inline(never)]
fn reservation_hop(net: &mut Net, r: usize, out_port: usize, packet: PacketId, ready: Cycle) {
    let pkt = net.packet(packet);
    let (flow, signal) = (pkt.flow, pkt.signal);
    match net.reservations.at_router(r, out_port, flow, signal) {
        HopAction::Refused => {
            net.whole().packets.get_mut(packet).signal = Signal::Spent;
            let node = net.reservations.router_node[r];
            net.links.send_control(ready + 1, NodeId::new(node), Control::Nack { flow });
        }
        HopAction::Stop => net.whole().packets.get_mut(packet).signal = Signal::Spent,
        HopAction::Pass | HopAction::Reserved | HopAction::Released => {}
    }
}

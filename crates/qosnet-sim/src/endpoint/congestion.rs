//! The endpoints' side of InfiniBand congestion control (document 002 §3-4, IBA Annex
//! A10; DRB's notifications, document 002 §4): a destination answers each FECN-marked packet with a CNP — a real one-flit packet
//! of the control class, carrying BECN for the marked packet's flow back to its source
//! (document 002, Fig. 6) — and a source whose agent held a flow back sets itself a
//! retry timer for when the injection delay (or a pacing agent's next send) runs out
//! (`control/interface.rs`: `held_back`).

use super::Endpoints;
use crate::config::TrafficClass;
use crate::flit::{Message, Signal};
use crate::ids::NodeId;
use crate::links::Control;
use crate::net::Net;
use crate::units::Cycle;

/// A message that is no CNP (`Message::becn`).
pub(crate) const NO_BECN: u32 = u32::MAX;

impl Endpoints {
    /// Destination `n` received a FECN-marked packet of `flow` from `src` (that took `path`)
    /// at `now`: it queues a CNP to `src`. CNPs are not measured as messages (their flits count as the
    /// control class's accepted traffic: they use the network) and belong to the flow of
    /// traffic outside the sources (`flows`' last row).
    pub(crate) fn send_cnp<const NIC: bool>(
        &mut self,
        net: &mut Net,
        n: usize,
        src: NodeId,
        flow: u32,
        path: u8,
        now: Cycle,
    ) {
        let m = net.messages.insert(Message {
            src: NodeId::new(n as u32),
            dst: src,
            class: TrafficClass::Control,
            size: 1,
            packet_flits: 1,
            packetized: 0,
            delivered: 0,
            created: now,
            injected: Cycle::MAX,
            measured: false,
            vtick: 1,
            flow: self.cnp_flow,
            frame: u32::MAX,
            phase: 0,
            sent: 0,
            done: 0,
            path: 0,
            signal: Signal::Data,
            becn: flow,
            becn_path: path,
        });
        if NIC {
            self.nic_post(net, n, m, now);
            return;
        }
        // A CNP does not wait behind data messages its node's agent may be holding back:
        // with one FIFO it goes ahead of every message not yet started (with a queue per
        // class it is in the control queue, served first).
        let q = self.source_queue(n, TrafficClass::Control);
        let queue = &mut self.nic_queue[q];
        let at = queue.iter().position(|&q| net.messages.get(q).packetized == 0).unwrap_or(queue.len());
        queue.insert(at, m);
        self.wake(n);
    }

    /// Destination `n` left a marked packet of `flow` (from `src`, over `path`) unanswered
    /// at `now`: its own timer for the CNP the agent answers it with later, if it does
    /// (DCQCN's, at the end of its interval: `CongestionControl::defer_notification`).
    #[cold]
    pub(crate) fn defer_cnp(
        &mut self,
        net: &mut Net,
        n: usize,
        src: NodeId,
        flow: u32,
        path: u8,
        now: Cycle,
    ) {
        if let Some(at) = self.agents.defer_notification(flow, now) {
            let msg = Control::DeferredCnp { flow, src: src.0, path };
            net.links.send_control(at.max(now + 1), NodeId::new(n as u32), msg);
        }
    }

    /// The timer of `defer_cnp` fired: the CNP goes now if the agent still answers.
    #[cold]
    pub(crate) fn deferred_cnp(
        &mut self,
        net: &mut Net,
        n: usize,
        flow: u32,
        src: NodeId,
        path: u8,
        now: Cycle,
    ) {
        if self.agents.on_mark(flow, now) {
            match self.model() {
                super::EndpointModel::Ideal => self.send_cnp::<false>(net, n, src, flow, path, now),
                super::EndpointModel::Nic => self.send_cnp::<true>(net, n, src, flow, path, now),
            }
        }
    }

    /// The agent held back `flow` at node `n` at `now`: set the node's retry timer if the
    /// agent asks for one.
    #[inline]
    pub(crate) fn held_back(&mut self, net: &mut Net, n: usize, flow: u32, now: Cycle) {
        if let Some(at) = self.agents.held_back(n, flow, now) {
            net.links.send_control(at.max(now + 1), NodeId::new(n as u32), Control::CcRetry);
        }
    }
}

//! Per-VC source queues (`[endpoint] queues = "per_vc"`), as document 003 §4.2 feeds its
//! routers: "once the input VC for a connection is determined, the destination processor is
//! picked randomly", and a best-effort message's input VC is assigned "using a uniform
//! distribution of the available VCs for this traffic class". So each real-time connection
//! (a video stream) is bound to one VC of its class for the whole run and each VC sends its
//! streams' messages in order, while best effort and control wait in their class's FIFO
//! and take one of the class's VCs that is free (available) when they start.
//!
//! Why it matters: with one queue per class, a video frame's ~26 packets to one destination
//! fill every lane of the class one after another, so a node sends to one destination at a
//! time — a FIFO input-queued switch, whose head-of-line blocking caps the 8-port router
//! near 0.6 flits/node/cycle however many VCs it has (results/seed003/FINDINGS.md). With a
//! queue per VC, a node has as many streams in progress as its class has VCs.
//!
//! Why best effort is not bound too: a best-effort message given its VC when it is made
//! and queued on it waits as long as a stream bound to that VC keeps it busy — in the
//! preemptive router a lower class cannot take a VC a higher class holds, and a stream's
//! next packet takes its VC back the moment it frees — although other VCs are idle (a
//! 3-node property test did not drain in 40k cycles at 0.35 flits/cycle). "Available"
//! VCs are the free ones.
//!
//! The classes a VC may carry are the router's (`class_vcs`: the non-preemptive and
//! traditional routers' split, any VC in the preemptive router); in the preemptive router a
//! stream whose VC is held by a lower class preempts it through the VC's extra lane
//! (§3.2.1). The ideal endpoint (`start_per_vc`) and the QoS NIC's doorbells
//! (`nic::doorbell_pick`) use the same binding.

use super::Endpoints;
use crate::config::TrafficClass;
use crate::ids::MessageId;
use crate::net::Net;
use crate::sched::bits;
use crate::seed::mix_seed;
use crate::unchecked::At;
use crate::units::Cycle;

/// The `k mod popcount`-th VC of the non-empty mask `vcs` (a uniform draw given a uniform
/// `k`).
#[inline]
pub(crate) fn nth_vc(vcs: u32, k: u64) -> usize {
    debug_assert!(vcs != 0);
    let i = (k % vcs.count_ones() as u64) as usize;
    bits(vcs).nth(i).unwrap_or(0)
}

const RT: usize = TrafficClass::RealTime as usize;

impl Endpoints {
    /// The VC real-time connection `flow` is bound to: drawn once, uniformly among the VCs
    /// the router lets real time use, from the flow number.
    #[inline]
    pub(crate) fn stream_vc(&self, flow: u32) -> usize {
        let seed = self.p.seed ^ 0x5643_5155_4555_4553; // "VCQUEUES": apart from the sources' streams
        let vcs = *self.p.class_vcs.at(RT) & crate::routing::all_vcs(self.p.vcs as u32);
        nth_vc(vcs, mix_seed(seed, flow as u64))
    }

    /// Queue real-time message `m` of connection `flow` at node `n` on its VC.
    pub(crate) fn queue_on_vc(&mut self, n: usize, flow: u32, m: MessageId) {
        let vc = self.stream_vc(flow);
        self.vc_queue.at_mut(n * self.p.vcs + vc).push_back(m);
        *self.vc_queued.at_mut(n) |= 1 << vc;
    }

    /// The ideal endpoint with per-VC queues: control from its FIFO first, then every
    /// stream VC's front packet, then best effort from its FIFO on the VCs left free.
    pub(crate) fn start_per_vc(&mut self, net: &mut Net, n: usize, now: Cycle) {
        *self.nic_start_blocked.at_mut(n) = true;
        let q = n * 3;
        if self.start_from_queue(net, n, q + TrafficClass::Control as usize, now)
            && self.start_vc_packets(net, n, now)
        {
            self.start_from_queue(net, n, q + TrafficClass::BestEffort as usize, now);
        }
    }

    /// Start the front packet of every stream VC queue of node `n` whose VC is free, while
    /// the node may inject more packets at once; in the preemptive router a queue whose VC
    /// a lower class holds takes the VC's extra lane. Returns false at the limit.
    fn start_vc_packets(&mut self, net: &mut Net, n: usize, now: Cycle) -> bool {
        let vcs = self.p.vcs;
        for vc in bits(*self.vc_queued.at(n)) {
            if self.nic_sending.at(n).count_ones() >= self.p.concurrent_packets {
                return false;
            }
            let busy = *self.nic_busy.at(n);
            let lane = if busy >> vc & 1 == 0 {
                vc
            } else if self.p.preemptive
                && busy >> (vcs + vc) & 1 == 0
                && self.nic_held.at(n)[RT + 1..].iter().any(|&h| h >> vc & 1 == 1)
            {
                vcs + vc
            } else {
                continue;
            };
            let q = n * vcs + vc;
            let Some(&m) = self.vc_queue.at(q).front() else { continue };
            let (packet, size, last) = net.cut_packet(m);
            if last {
                self.vc_queue.at_mut(q).pop_front();
                if self.vc_queue.at(q).is_empty() {
                    *self.vc_queued.at_mut(n) &= !(1 << vc);
                }
            }
            self.start_packet(net, n, lane, RT as u8, packet, size, now);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::nth_vc;
    use proptest::prelude::*;

    #[test]
    fn nth_vc_counts_the_set_bits() {
        // VCs 1, 4 and 9
        let m = 0b10_0001_0010;
        assert_eq!((0..6).map(|k| nth_vc(m, k)).collect::<Vec<_>>(), vec![1, 4, 9, 1, 4, 9]);
    }

    proptest! {
        /// The VC drawn is always one of the mask's.
        #[test]
        fn nth_vc_is_in_the_mask(m in 1u32.., k in any::<u64>()) {
            prop_assert!(m >> nth_vc(m, k) & 1 == 1);
        }
    }
}

//! The ideal endpoint's per-VC source queues (`[endpoint] queues = "per_vc"`), as document
//! 003 §4.2 feeds its routers: "once the input VC for a connection is determined, the
//! destination processor is picked randomly", and a best-effort message's input VC is drawn
//! "using a uniform distribution of the available VCs for this traffic class". So each
//! real-time connection (a video stream) is bound to one VC of its class for the whole run,
//! every other message is given one at random, and each VC sends its own queue's messages
//! in order. The VCs' front packets are in injection at once, multiplexed flit by flit on
//! the link by the injection scheduler.
//!
//! Why it matters: with one queue per class, a video frame's ~26 packets to one destination
//! fill every lane of the class one after another, so a node sends to one destination at a
//! time — a FIFO input-queued switch, whose head-of-line blocking caps the 8-port router
//! near 0.6 flits/node/cycle however many VCs it has (results/seed003/FINDINGS.md). With a
//! queue per VC, a node has as many destinations in progress as its class has VCs.
//!
//! The classes a VC may carry are the router's (`class_vcs`: the non-preemptive and
//! traditional routers' split, any VC in the preemptive router, control on its own VC 0,
//! §4.2); in the preemptive router a VC's queue is kept per class, and a message whose VC is
//! held by a lower class preempts it through the VC's extra lane (§3.2.1).

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

impl Endpoints {
    /// The VCs a message of `class` may be queued on: control's own VC(s) (VC 0), any VC
    /// the router lets the class use otherwise.
    #[inline]
    fn queue_vcs(&self, class: TrafficClass) -> u32 {
        let vcs = crate::routing::all_vcs(self.p.vcs as u32);
        let m = match class {
            TrafficClass::Control => *self.p.home_vcs.at(class.index()),
            _ => *self.p.class_vcs.at(class.index()),
        } & vcs;
        if m != 0 {
            m
        } else {
            *self.p.class_vcs.at(class.index()) & vcs
        }
    }

    /// Queue message `m` (of `flow`, `class`) at node `n` on its VC: a real-time flow's own,
    /// drawn once from the flow number; a message's own draw otherwise.
    pub(crate) fn queue_on_vc(&mut self, n: usize, class: TrafficClass, flow: u32, m: MessageId, now: Cycle) {
        let seed = self.p.seed ^ 0x5643_5155_4555_4553; // "VCQUEUES": apart from the sources' streams
        let draw = match class {
            TrafficClass::RealTime => mix_seed(seed, flow as u64),
            _ => mix_seed(seed, (now << 24) ^ ((flow as u64) << 1) ^ ((m.index() as u64) << 40)),
        };
        let vc = nth_vc(self.queue_vcs(class), draw);
        let c = class.index();
        self.vc_queue.at_mut((n * self.p.vcs + vc) * 3 + c).push_back(m);
        self.vc_queued.at_mut(n)[c] |= 1 << vc;
    }

    /// Start the front packet of every VC queue of node `n` whose VC is free (classes in
    /// priority order), while the node may inject more packets at once; in the preemptive
    /// router a queue whose VC a lower class holds takes the VC's extra lane.
    pub(crate) fn start_vc_packets(&mut self, net: &mut Net, n: usize, now: Cycle) {
        let vcs = self.p.vcs;
        *self.nic_start_blocked.at_mut(n) = true;
        for c in 0..3 {
            for vc in bits(self.vc_queued.at(n)[c]) {
                if self.nic_sending.at(n).count_ones() >= self.p.concurrent_packets {
                    return;
                }
                let busy = *self.nic_busy.at(n);
                let lane = if busy >> vc & 1 == 0 {
                    vc
                } else if self.p.preemptive
                    && busy >> (vcs + vc) & 1 == 0
                    && self.nic_held.at(n)[c + 1..].iter().any(|&h| h >> vc & 1 == 1)
                {
                    vcs + vc
                } else {
                    continue;
                };
                let q = (n * vcs + vc) * 3 + c;
                let Some(&m) = self.vc_queue.at(q).front() else { continue };
                let (packet, size, last) = net.cut_packet(m);
                if last {
                    self.vc_queue.at_mut(q).pop_front();
                    if self.vc_queue.at(q).is_empty() {
                        self.vc_queued.at_mut(n)[c] &= !(1 << vc);
                    }
                }
                self.start_packet(net, n, lane, c as u8, packet, size, now);
            }
        }
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

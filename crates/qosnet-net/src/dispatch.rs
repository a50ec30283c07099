//! The host's dispatch discipline (document 004 §3.3, §4.2; the simulator's `RateControl`
//! send queues): reserved flows by least next dispatch time, through the one shared
//! scheduler (`qosnet_rate::RateControl`, in nanosecond ticks); unregulated flows share what
//! is left, interleaved a packet at a time (GM's fair interleaving, §2.2 Fig. 4b), served only
//! when no reserved flow is due.
//!
//! Flows are the agent's flow slots (`u32`). A reservation may be removed or replaced while
//! its flow is queued in the scheduler: the old entry is then stale and is dropped when it
//! comes to the top (the caller sees `Pick::stale`), so removal never searches the heap.

use qosnet_rate::{RateControl, Ticks};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Rate-control flow `rc` of flow slot `slot` is due.
    Reserved { rc: u32, slot: u32 },
    /// The head of the unregulated ring.
    Unregulated { slot: u32 },
}

impl Pick {
    pub fn slot(&self) -> u32 {
        match *self {
            Pick::Reserved { slot, .. } | Pick::Unregulated { slot } => slot,
        }
    }
}

#[derive(Debug, Default)]
pub struct Dispatch {
    rate: RateControl,
    /// Rate-control flow -> flow slot.
    slots: Vec<u32>,
    /// Unregulated flows with packets, head first.
    ring: VecDeque<u32>,
}

impl Dispatch {
    /// A new reservation for `slot` with inter-dispatch time `idt` ns; its rate-control index.
    pub fn reserve(&mut self, slot: u32, idt: Ticks) -> u32 {
        self.slots.push(slot);
        self.rate.add_flow(idt)
    }

    /// Change a live reservation's IDT (document 001 §2.2.2: changeable while running).
    pub fn set_idt(&mut self, rc: u32, idt: Ticks) {
        self.rate.set_idt(rc, idt);
    }

    /// Flow `slot` got its first packet at `now`; `rc` if it is reserved.
    pub fn became_sendable(&mut self, slot: u32, rc: Option<u32>, now: Ticks) {
        match rc {
            Some(rc) if !self.rate.is_valid(rc) => self.rate.became_valid(rc, now),
            Some(_) => {}
            // Once in the ring (a flow that blocked and came back may still be there; the
            // ring is a host's handful of flows, so the check is short).
            None if self.ring.contains(&slot) => {}
            None => self.ring.push_back(slot),
        }
    }

    /// Take an unregulated flow out of the ring (it became reserved while queued).
    pub fn unqueue(&mut self, slot: u32) {
        self.ring.retain(|&s| s != slot);
    }

    /// The packet to dispatch at `now`: a due reserved flow first, then the ring's head.
    pub fn pick(&self, now: Ticks) -> Option<Pick> {
        if let Some(rc) = self.rate.due(now) {
            return Some(Pick::Reserved { rc, slot: self.slots[rc as usize] });
        }
        self.ring.front().map(|&slot| Pick::Unregulated { slot })
    }

    /// The picked flow sent a packet of `bytes` (a full one has `nominal`; 0 if it was stale
    /// and sent nothing); it stays in the discipline while `still_sendable`. A reserved
    /// flow's NDT advances by the packet's own time at its rate (byte cost: exactly IDT for
    /// a full packet).
    pub fn dispatched(&mut self, pick: Pick, still_sendable: bool, bytes: u64, nominal: u64) {
        match pick {
            Pick::Reserved { rc, .. } => self.rate.dispatched_bytes(rc, still_sendable, bytes, nominal),
            Pick::Unregulated { slot } => {
                let head = self.ring.pop_front();
                debug_assert_eq!(head, Some(slot));
                if still_sendable {
                    self.ring.push_back(slot);
                }
            }
        }
    }

    /// When the next reserved flow is due, if one is waiting.
    pub fn next_due(&self) -> Option<Ticks> {
        self.rate.least().map(|(_, ndt)| ndt)
    }

    /// When the next packet could go, were the link free: now if an unregulated flow waits,
    /// else the least NDT.
    pub fn next_ready(&self, now: Ticks) -> Option<Ticks> {
        if self.ring.is_empty() {
            self.next_due()
        } else {
            Some(now)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reserved flows A (IDT 2) and B (IDT 3) as in document 004 Table 1, and an unregulated
    /// flow C that gets the slots in which no reserved flow is due.
    #[test]
    fn reserved_flows_follow_table_1_and_the_ring_fills_the_gaps() {
        let mut d = Dispatch::default();
        let a = d.reserve(10, 2);
        let b = d.reserve(11, 3);
        d.became_sendable(10, Some(a), 0);
        d.became_sendable(11, Some(b), 0);
        d.became_sendable(12, None, 0);
        let mut sent = vec![];
        for now in 0..6 {
            let p = d.pick(now).unwrap();
            sent.push(p.slot());
            d.dispatched(p, true, 1, 1);
        }
        assert_eq!(sent, [10, 11, 10, 11, 10, 12]);
    }

    #[test]
    fn unregulated_flows_interleave_a_packet_at_a_time() {
        let mut d = Dispatch::default();
        d.became_sendable(1, None, 0);
        d.became_sendable(2, None, 0);
        let mut sent = vec![];
        for i in 0..5 {
            let p = d.pick(0).unwrap();
            sent.push(p.slot());
            d.dispatched(p, !(p.slot() == 2 && i >= 3), 1, 1);
        }
        assert_eq!(sent, [1, 2, 1, 2, 1]);
        d.unqueue(1);
        assert_eq!(d.pick(0), None);
    }

    #[test]
    fn nothing_reserved_is_sent_before_its_ndt() {
        let mut d = Dispatch::default();
        let a = d.reserve(0, 100);
        d.became_sendable(0, Some(a), 50);
        let p = d.pick(50).unwrap();
        d.dispatched(p, true, 1, 1);
        assert_eq!(d.pick(149), None);
        assert_eq!(d.next_due(), Some(150));
        assert_eq!(d.pick(150), Some(Pick::Reserved { rc: a, slot: 0 }));
    }

    /// One link slot every T (a full packet's time on the link), as 004 §3.3's sender:
    /// the packets each flow slot sends in `slots` slots, all flows always backlogged.
    fn on_the_link(d: &mut Dispatch, slots: u64, t: Ticks) -> std::collections::BTreeMap<u32, u64> {
        let mut sent = std::collections::BTreeMap::new();
        for k in 0..slots {
            if let Some(p) = d.pick(k * t) {
                *sent.entry(p.slot()).or_insert(0) += 1;
                d.dispatched(p, true, 4096, 4096);
            }
        }
        sent
    }

    /// Reservations summing to 1.2x the link (IDTs 1.25T and 2.5T): every slot has a due
    /// flow, and the least NDT shares the link 2:1, by 1/IDT, as the simulator's NIC does.
    #[test]
    fn over_subscribed_reservations_share_by_1_over_idt() {
        let t = 1000;
        let mut d = Dispatch::default();
        let a = d.reserve(0, 1250);
        let b = d.reserve(1, 2500);
        d.became_sendable(0, Some(a), 0);
        d.became_sendable(1, Some(b), 0);
        d.became_sendable(2, None, 0);
        let sent = on_the_link(&mut d, 3000, t);
        assert_eq!(sent[&0], 2000);
        assert_eq!(sent[&1], 1000);
        assert_eq!(sent.get(&2), None, "nothing is left for the unreserved flow");
    }

    /// A 60% reservation beside two unreserved flows: the reserved flow gets its 60% of the
    /// slots, the unreserved ones the rest, 20% each, interleaved.
    #[test]
    fn unreserved_flows_get_what_the_reserved_leave() {
        let t = 3000;
        let mut d = Dispatch::default();
        let a = d.reserve(0, 5000); // 60% of the link: IDT = T / 0.6
        d.became_sendable(0, Some(a), 0);
        d.became_sendable(1, None, 0);
        d.became_sendable(2, None, 0);
        let sent = on_the_link(&mut d, 3000, t);
        assert_eq!(sent[&0], 1800);
        assert_eq!((sent[&1], sent[&2]), (600, 600));
    }
}

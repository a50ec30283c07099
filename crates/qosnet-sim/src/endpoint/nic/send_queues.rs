//! The send queues of a GM-style NIC and the disciplines that pick the next packet to
//! dispatch from them (document 004 §2.2, §4.1–4.2).
//!
//! A send queue holds the send tokens (messages) of one flow: (source, destination); in GM
//! terms the source is a sub-port (port and priority) and the destination a connection.
//! - `RoundRobin` (Fig. 4a): send descriptors served round robin a whole message at a
//!   time, which favours flows with long messages.
//! - `Interleaved` (Fig. 4b, GM's queue organisation of §4.1 / Fig. 8): a circular queue of
//!   connections, each with a circular queue of sub-ports; after each packet from the head
//!   sub-port of the head connection, both rotate. NIC use is then even whatever the
//!   message sizes.
//! - `RateControl` (§3.3, §4.2): reserved flows by least next dispatch time (see
//!   `rate_control`); unreserved flows are best effort, served interleaved only when no
//!   reserved flow is due.

use super::rate_control::RateControl;
use crate::config::SourceQueues;
use crate::units::Cycle;
use std::collections::{HashMap, VecDeque};

/// No rate-control flow (an unreserved queue).
const UNRESERVED: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct SendQueue {
    messages: VecDeque<u32>,
    connection: u32,
    rc_flow: u32,
    /// In the round-robin ring or its connection's sub-port ring.
    queued: bool,
}

#[derive(Clone, Debug, Default)]
struct Connection {
    subports: VecDeque<u32>,
    queued: bool,
}

/// One NIC's send queues.
#[derive(Clone, Debug)]
pub struct SendQueues {
    policy: SourceQueues,
    index: HashMap<(u32, u32), u32>,
    queues: Vec<SendQueue>,
    /// Round robin: the queues with messages, head first.
    ring: VecDeque<u32>,
    connection_index: HashMap<u32, u32>,
    connections: Vec<Connection>,
    /// Interleaved: the connections with sendable tokens, head first.
    connection_ring: VecDeque<u32>,
    pub rate: RateControl,
    /// Messages queued.
    pending: u32,
}

/// What the discipline picked: the queue and the message whose next packet goes now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pick {
    pub queue: u32,
    pub message: u32,
}

impl SendQueues {
    pub fn new(policy: SourceQueues) -> SendQueues {
        SendQueues {
            policy,
            index: HashMap::new(),
            queues: Vec::new(),
            ring: VecDeque::new(),
            connection_index: HashMap::new(),
            connections: Vec::new(),
            connection_ring: VecDeque::new(),
            rate: RateControl::default(),
            pending: 0,
        }
    }

    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// Queue `message` on flow (`source`, `dst`) at `now`. `idt_ticks` is the flow's
    /// inter-dispatch time if it is reserved (rate control), fixed when the flow is first seen.
    pub fn post(&mut self, source: u32, dst: u32, idt_ticks: Option<u64>, message: u32, now: Cycle) {
        let q = match self.index.get(&(source, dst)) {
            Some(&q) => q,
            None => {
                let rc_flow = match (self.policy, idt_ticks) {
                    (SourceQueues::RateControl, Some(idt)) => self.rate.add_flow(idt),
                    _ => UNRESERVED,
                };
                let connection = match self.connection_index.get(&dst) {
                    Some(&c) => c,
                    None => {
                        self.connections.push(Connection::default());
                        let c = (self.connections.len() - 1) as u32;
                        self.connection_index.insert(dst, c);
                        c
                    }
                };
                self.queues.push(SendQueue { messages: VecDeque::new(), connection, rc_flow, queued: false });
                let q = (self.queues.len() - 1) as u32;
                self.index.insert((source, dst), q);
                q
            }
        };
        self.pending += 1;
        let sq = &mut self.queues[q as usize];
        sq.messages.push_back(message);
        if sq.messages.len() > 1 {
            return;
        }
        // The flow's first sendable token.
        if sq.rc_flow != UNRESERVED {
            self.rate.became_valid(sq.rc_flow, now);
        } else {
            self.enqueue(q);
        }
    }

    /// Put queue `q` (now non-empty) at the tail of the ring its discipline serves.
    fn enqueue(&mut self, q: u32) {
        let sq = &mut self.queues[q as usize];
        if sq.queued {
            return;
        }
        sq.queued = true;
        match self.policy {
            SourceQueues::RoundRobin => self.ring.push_back(q),
            _ => {
                let c = sq.connection;
                let conn = &mut self.connections[c as usize];
                conn.subports.push_back(q);
                if !conn.queued {
                    conn.queued = true;
                    self.connection_ring.push_back(c);
                }
            }
        }
    }

    /// The packet to dispatch at `now`, if any: a due reserved flow first, then the
    /// discipline's head queue.
    pub fn pick(&self, now: Cycle) -> Option<Pick> {
        let q = if let Some(f) = self.rate.due(now) {
            self.rc_queue(f)
        } else {
            match self.policy {
                SourceQueues::RoundRobin => *self.ring.front()?,
                _ => {
                    let c = *self.connection_ring.front()?;
                    *self.connections[c as usize].subports.front()?
                }
            }
        };
        let message = *self.queues[q as usize].messages.front()?;
        Some(Pick { queue: q, message })
    }

    fn rc_queue(&self, f: u32) -> u32 {
        // Reserved flows are few per NIC; a scan keeps the map out of the queue records.
        self.queues.iter().position(|q| q.rc_flow == f).expect("a reserved flow without a queue") as u32
    }

    /// The packet `pick` returned was dispatched; `message_done` if it was its message's
    /// last. Rotates the rings as the discipline says.
    pub fn dispatched(&mut self, pick: Pick, message_done: bool) {
        let q = pick.queue as usize;
        if message_done {
            let m = self.queues[q].messages.pop_front();
            debug_assert_eq!(m, Some(pick.message));
            self.pending -= 1;
        }
        let non_empty = !self.queues[q].messages.is_empty();
        let rc_flow = self.queues[q].rc_flow;
        if rc_flow != UNRESERVED {
            self.rate.dispatched(rc_flow, non_empty);
            return;
        }
        match self.policy {
            SourceQueues::RoundRobin => {
                // A whole message per turn: rotate only when it is done.
                if message_done {
                    let head = self.ring.pop_front();
                    debug_assert_eq!(head, Some(pick.queue));
                    self.queues[q].queued = false;
                    if non_empty {
                        self.enqueue(pick.queue);
                    }
                }
            }
            _ => {
                // One packet per turn: rotate the connection's sub-ports, then the connections.
                let c = self.connection_ring.pop_front().expect("a dispatch without a connection");
                let conn = &mut self.connections[c as usize];
                let head = conn.subports.pop_front();
                debug_assert_eq!(head, Some(pick.queue));
                if non_empty {
                    conn.subports.push_back(pick.queue);
                } else {
                    self.queues[q].queued = false;
                }
                if self.connections[c as usize].subports.is_empty() {
                    self.connections[c as usize].queued = false;
                } else {
                    self.connection_ring.push_back(c);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dispatch `n` packets; messages are `sizes[m]` packets long. Returns the messages'
    /// sources in dispatch order (message ids encode source * 100 + k).
    fn run(sq: &mut SendQueues, sizes: &HashMap<u32, u32>, n: usize) -> Vec<u32> {
        let mut left: HashMap<u32, u32> = sizes.clone();
        let mut order = Vec::new();
        for now in 0..n as u64 {
            let Some(p) = sq.pick(now) else { break };
            order.push(p.message / 100);
            let l = left.get_mut(&p.message).unwrap();
            *l -= 1;
            sq.dispatched(p, *l == 0);
        }
        order
    }

    /// Figure 4: flow A's messages are 3 packets, B's 1 packet.
    fn fig4(policy: SourceQueues) -> Vec<u32> {
        let mut sq = SendQueues::new(policy);
        let mut sizes = HashMap::new();
        for k in 0..4 {
            sq.post(0, 5, None, k, 0); // A = source 0 -> node 5
            sizes.insert(k, 3);
            sq.post(1, 6, None, 100 + k, 0); // B = source 1 -> node 6
            sizes.insert(100 + k, 1);
        }
        run(&mut sq, &sizes, 8)
    }

    #[test]
    fn round_robin_serves_whole_messages_fig_4a() {
        assert_eq!(fig4(SourceQueues::RoundRobin), vec![0, 0, 0, 1, 0, 0, 0, 1]);
    }

    #[test]
    fn interleaved_serves_a_packet_per_turn_fig_4b() {
        assert_eq!(fig4(SourceQueues::Interleaved), vec![0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn interleaved_rotates_connections_then_subports() {
        // Sources 0 and 1 to connection 9, source 2 to connection 8: connections alternate,
        // and within connection 9 its two sub-ports alternate.
        let mut sq = SendQueues::new(SourceQueues::Interleaved);
        let mut sizes = HashMap::new();
        for k in 0..4 {
            for s in 0..3u32 {
                let m = s * 100 + k;
                sq.post(s, if s == 2 { 8 } else { 9 }, None, m, 0);
                sizes.insert(m, 1);
            }
        }
        assert_eq!(run(&mut sq, &sizes, 8), vec![0, 2, 1, 2, 0, 2, 1, 2]);
    }

    #[test]
    fn rate_control_serves_reserved_flows_by_ndt_and_best_effort_between() {
        use super::super::rate_control::TICKS_PER_CYCLE as T;
        let mut sq = SendQueues::new(SourceQueues::RateControl);
        let mut sizes = HashMap::new();
        for k in 0..10 {
            sq.post(0, 1, Some(2 * T), k, 0); // A, idt 2
            sq.post(1, 2, Some(3 * T), 100 + k, 0); // B, idt 3
            sq.post(2, 3, None, 200 + k, 0); // best effort
            for m in [k, 100 + k, 200 + k] {
                sizes.insert(m, 1);
            }
        }
        // Table 1's schedule, with the best-effort flow taking the slot at t = 5.
        assert_eq!(run(&mut sq, &sizes, 6), vec![0, 1, 0, 1, 0, 2]);
        assert_eq!(sq.pending(), 30 - 6);
    }
}

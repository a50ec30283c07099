//! Probe-based admission control at the HCAs (document 000 §4.1): before a real-time
//! connection sends data its HCA sends a probe carrying the route and the solicited
//! bandwidth; the source starts on the ACK. A router that refuses sends a NACK naming
//! itself; the source then sends a release that gives back what the probe reserved, up to
//! the hop before the refuser, and tries again after a back-off, or gives up after a number
//! of attempts. The connection's last data packet releases its reservation hop by hop.
//!
//! This file is the endpoints' side: per connection its state, and the signalling packets
//! it asks the endpoints to send (`outbox`). The per-link bookkeeping of the HCAs and
//! routers is `reservations.rs`. Probes, ACKs, NACKs and releases are real control-class
//! packets (VL15 in the document): they queue, compete and take the network's time.

use super::reservations::Signal;
use crate::config::TrafficClass;
use crate::links::Control;
use crate::units::Cycle;

/// A signalling packet to send: from node `from` to node `to`, for connection `flow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Outgoing {
    pub from: u32,
    pub to: u32,
    pub flow: u32,
    pub signal: Signal,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// No reservation: the next message sends a probe first.
    Closed,
    /// A probe is out; waiting for its ACK or NACK.
    Probing,
    /// Refused; a retry is timed.
    Backoff,
    /// Admitted, with this many messages left (`u32::MAX`: the whole run).
    Open(u32),
    /// Refused `attempts` times: its messages are dropped at the source.
    GaveUp,
}

/// One admission-controlled connection's source side.
#[derive(Clone, Copy, Debug)]
struct Conn {
    src: u32,
    dst: u32,
    class: TrafficClass,
    state: State,
    /// When its current set-up began (its first probe), and probes sent for it.
    since: Cycle,
    tries: u32,
}

/// Per traffic class: what admission control did (results' `admission`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdmissionStats {
    /// Connections set up (ACKed) and set-ups refused at least once.
    pub admitted: u64,
    pub probes: u64,
    /// Probes refused (by a router's NACK or the source HCA's own link).
    pub refused: u64,
    pub releases: u64,
    pub teardowns: u64,
    /// Connections that gave up, and their messages dropped at the source.
    pub gave_up: u64,
    pub dropped_messages: u64,
    /// Sum of set-up latencies (first probe to ACK, retries included), cycles.
    pub setup_cycles: u64,
}

impl AdmissionStats {
    /// Refused probes per probe sent.
    pub fn refusal_rate(&self) -> f64 {
        if self.probes == 0 {
            0.0
        } else {
            self.refused as f64 / self.probes as f64
        }
    }

    /// Mean set-up latency of admitted connections, cycles.
    pub fn mean_setup_cycles(&self) -> f64 {
        if self.admitted == 0 {
            0.0
        } else {
            self.setup_cycles as f64 / self.admitted as f64
        }
    }
}

/// The admission agent's parameters, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AdmissionParams {
    /// Back-off before a refused connection probes again, cycles.
    pub retry_after: Cycle,
    /// Probes per set-up before it gives up (0: it never does).
    pub attempts: u32,
    /// Messages per connection before its last data packet tears it down (0: the whole run).
    pub connection_messages: u32,
    /// Flits of a signalling packet.
    pub signal_flits: u32,
}

/// The source side of every connection, and the signalling packets waiting to go out.
#[derive(Clone, Debug)]
pub(crate) struct ProbeAdmission {
    pub p: AdmissionParams,
    /// Per flow: its connection (`None`: not admission controlled).
    conns: Vec<Option<Conn>>,
    pub outbox: Vec<Outgoing>,
    pub stats: [AdmissionStats; 3],
}

impl ProbeAdmission {
    /// `flows[f]`: (source, destination, class) of flow f if it is a connection.
    pub fn new(p: AdmissionParams, flows: &[Option<(u32, u32, TrafficClass)>]) -> Self {
        let conns = flows
            .iter()
            .map(|f| {
                f.map(|(src, dst, class)| Conn { src, dst, class, state: State::Closed, since: 0, tries: 0 })
            })
            .collect();
        ProbeAdmission { p, conns, outbox: Vec::new(), stats: Default::default() }
    }

    fn conn(&mut self, flow: u32) -> Option<&mut Conn> {
        self.conns.get_mut(flow as usize).and_then(|c| c.as_mut())
    }

    /// May `flow` start a message at `now`? A closed connection sends its probe first.
    pub fn may_start(&mut self, flow: u32, now: Cycle) -> bool {
        let Some(c) = self.conns.get_mut(flow as usize).and_then(|c| c.as_mut()) else { return true };
        match c.state {
            State::Open(_) => true,
            State::Closed => {
                self.probe(flow, now);
                false
            }
            State::Probing | State::Backoff | State::GaveUp => false,
        }
    }

    /// A message of `flow` was posted at `now`: a closed connection sends its probe at once,
    /// not when the message reaches the head of its queue (the HCA sets up every new
    /// connection in parallel; a queue head waiting for its ACK holds its class's queue).
    pub fn posted(&mut self, flow: u32, now: Cycle) {
        if self.conns.get(flow as usize).and_then(|c| c.as_ref()).is_some_and(|c| c.state == State::Closed) {
            self.probe(flow, now);
        }
    }

    fn probe(&mut self, flow: u32, now: Cycle) {
        let Some(c) = self.conns.get_mut(flow as usize).and_then(|c| c.as_mut()) else { return };
        if c.tries == 0 {
            c.since = now;
        }
        c.tries += 1;
        c.state = State::Probing;
        self.stats[c.class.index()].probes += 1;
        let (from, to) = (c.src, c.dst);
        self.outbox.push(Outgoing { from, to, flow, signal: Signal::Probe });
    }

    /// Whether `flow` is a connection waiting for its set-up (probing or backing off).
    pub fn awaits(&self, flow: u32) -> bool {
        self.conns
            .get(flow as usize)
            .and_then(|c| c.as_ref())
            .is_some_and(|c| matches!(c.state, State::Probing | State::Backoff))
    }

    /// Whether `flow`'s held-back messages are to be dropped (it gave up).
    pub fn drops(&mut self, flow: u32) -> bool {
        let Some(c) = self.conn(flow) else { return false };
        if c.state != State::GaveUp {
            return false;
        }
        let class = c.class.index();
        self.stats[class].dropped_messages += 1;
        true
    }

    /// `flow` started a message. Returns whether it is the connection's last (its last
    /// packet tears the reservation down).
    pub fn started(&mut self, flow: u32) -> bool {
        let Some(c) = self.conn(flow) else { return false };
        let State::Open(left) = c.state else { return false };
        if left == u32::MAX {
            return false;
        }
        if left > 1 {
            c.state = State::Open(left - 1);
            return false;
        }
        c.state = State::Closed;
        let class = c.class.index();
        self.stats[class].teardowns += 1;
        true
    }

    /// The source HCA refused the probe on its own link (no packet left the node): back off.
    /// Returns the retry to time.
    pub fn refused_at_source(&mut self, flow: u32, now: Cycle) -> Option<(Cycle, u32, Control)> {
        self.refused(flow, now)
    }

    fn refused(&mut self, flow: u32, now: Cycle) -> Option<(Cycle, u32, Control)> {
        let retry = self.p.retry_after;
        let c = self.conn(flow)?;
        c.state = State::Backoff;
        let (src, class) = (c.src, c.class.index());
        self.stats[class].refused += 1;
        Some((now + retry, src, Control::Retry { flow }))
    }

    /// A signalling packet of `flow` carrying `signal` reached node `node` at `now`.
    /// Returns a control message to time (a retry), and whether `node` may now start a
    /// message it holds back.
    pub fn arrived(
        &mut self,
        node: u32,
        flow: u32,
        signal: Signal,
        now: Cycle,
    ) -> (Option<(Cycle, u32, Control)>, bool) {
        let n = self.p.connection_messages;
        let Some(c) = self.conn(flow) else { return (None, false) };
        let (src, dst, class) = (c.src, c.dst, c.class.index());
        match signal {
            // The destination accepts: its ejection link was the last hop reserved.
            Signal::Probe if node == dst => {
                self.outbox.push(Outgoing { from: dst, to: src, flow, signal: Signal::Ack });
                (None, false)
            }
            Signal::Ack if node == src && c.state == State::Probing => {
                c.state = State::Open(if n == 0 { u32::MAX } else { n });
                c.tries = 0;
                let setup = now - c.since;
                let s = &mut self.stats[class];
                s.admitted += 1;
                s.setup_cycles += setup;
                (None, true)
            }
            Signal::Nack if node == src && c.state == State::Probing => {
                // Give back what the probe reserved, up to the refuser, then back off.
                self.outbox.push(Outgoing { from: src, to: dst, flow, signal: Signal::Release });
                self.stats[class].releases += 1;
                (self.refused(flow, now), false)
            }
            _ => (None, false),
        }
    }

    /// A NACK is due from the router at node `node` (the refuser's own port) for `flow`.
    pub fn nack_from(&mut self, node: u32, flow: u32) {
        if let Some(c) = self.conn(flow) {
            let src = c.src;
            self.outbox.push(Outgoing { from: node, to: src, flow, signal: Signal::Nack });
        }
    }

    /// `flow`'s back-off ended: probe again, or give up. Returns whether its source may try
    /// to start (so it is woken).
    pub fn retry(&mut self, flow: u32) -> bool {
        let attempts = self.p.attempts;
        let Some(c) = self.conn(flow) else { return false };
        if c.state != State::Backoff {
            return false;
        }
        if attempts > 0 && c.tries >= attempts {
            c.state = State::GaveUp;
            let class = c.class.index();
            self.stats[class].gave_up += 1;
        } else {
            c.state = State::Closed;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(attempts: u32, messages: u32) -> ProbeAdmission {
        let p =
            AdmissionParams { retry_after: 100, attempts, connection_messages: messages, signal_flits: 10 };
        ProbeAdmission::new(p, &[Some((0, 3, TrafficClass::RealTime)), None])
    }

    #[test]
    fn a_connection_probes_starts_on_the_ack_and_tears_down_after_its_messages() {
        let mut a = agent(0, 2);
        assert!(a.may_start(1, 0), "flow 1 is not a connection");
        a.posted(1, 0);
        assert!(a.outbox.is_empty());
        assert!(!a.may_start(0, 10));
        assert_eq!(a.outbox, [Outgoing { from: 0, to: 3, flow: 0, signal: Signal::Probe }]);
        assert!(!a.may_start(0, 11), "one probe at a time");
        a.posted(0, 12);
        assert_eq!(a.outbox.len(), 1);
        a.outbox.clear();
        assert_eq!(a.arrived(3, 0, Signal::Probe, 40), (None, false));
        assert_eq!(a.outbox, [Outgoing { from: 3, to: 0, flow: 0, signal: Signal::Ack }]);
        assert_eq!(a.arrived(0, 0, Signal::Ack, 70), (None, true));
        assert!(a.may_start(0, 70));
        assert!(!a.started(0));
        assert!(a.started(0), "the second message is the last: it tears down");
        let s = a.stats[TrafficClass::RealTime.index()];
        assert_eq!((s.admitted, s.probes, s.teardowns, s.setup_cycles), (1, 1, 1, 60));
        a.outbox.clear();
        a.posted(0, 80);
        assert_eq!(a.outbox.len(), 1, "closed again: a message posted probes at once");
        assert!(!a.may_start(0, 81), "and waits for the ACK");
        assert_eq!(a.outbox.len(), 1);
    }

    #[test]
    fn a_nack_sends_a_release_backs_off_and_gives_up_after_its_attempts() {
        let mut a = agent(2, 0);
        assert!(!a.may_start(0, 0));
        a.nack_from(2, 0);
        a.outbox.clear();
        let (retry, wake) = a.arrived(0, 0, Signal::Nack, 50);
        assert_eq!(retry, Some((150, 0, Control::Retry { flow: 0 })));
        assert!(!wake);
        assert_eq!(a.outbox, [Outgoing { from: 0, to: 3, flow: 0, signal: Signal::Release }]);
        assert!(!a.may_start(0, 60), "backing off");
        assert!(a.retry(0));
        assert!(!a.may_start(0, 150), "second probe");
        assert_eq!(a.refused_at_source(0, 150), Some((250, 0, Control::Retry { flow: 0 })));
        assert!(a.retry(0));
        assert!(!a.may_start(0, 250) && a.drops(0), "gave up after 2 attempts: dropped");
        let s = a.stats[TrafficClass::RealTime.index()];
        assert_eq!((s.probes, s.refused, s.releases, s.gave_up, s.dropped_messages), (2, 2, 1, 1, 1));
        assert!((s.refusal_rate() - 1.0).abs() < 1e-12);
    }
}

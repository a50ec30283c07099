//! Credit-Based Congestion Control (document 000 §4.2): the completion queue's entries are
//! credits. Consumer i may have at most C_i messages posted to the HCA and not completed
//! (a send CQE returns the credit when the HCA has injected the message whole). A
//! real-time connection j gets C_j = b_j / B · M (M: the HCA buffer in messages, B: the
//! link bandwidth), the node's best-effort consumer C_b <= M − Σ C_j. Without a credit,
//! best effort waits for one; real time drops the message and posts it again later (it
//! stays in host memory; the drop and the retry are counted); control traffic is never
//! restricted.

use crate::links::Control;
use crate::units::Cycle;

/// Who a flow's messages count against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Consumer {
    /// Control traffic: never restricted.
    Free,
    /// A real-time connection: its own credits (index into `credits`).
    RealTime(u32),
    /// Best effort at a node: the node's best-effort credits (index into `credits`).
    BestEffort(u32),
}

/// Counts of what the credits did (`CongestionStats`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CreditStats {
    /// Real-time messages dropped for want of a credit, and posted again.
    pub dropped: u64,
    pub retried: u64,
    /// Best-effort starts that found no credit and waited.
    pub waited: u64,
}

/// Every consumer's credits.
#[derive(Clone, Debug)]
pub(crate) struct CreditCc {
    /// Per flow: its consumer.
    consumer: Vec<Consumer>,
    /// Per consumer: credits left, and its initial credits.
    credits: Vec<u32>,
    initial: Vec<u32>,
    /// Per real-time consumer: a retry is timed (its message was dropped).
    retrying: Vec<bool>,
    retry_after: Cycle,
    pub stats: CreditStats,
}

impl CreditCc {
    /// `consumer[f]`: flow f's consumer; `initial[c]`: consumer c's initial credits (checked
    /// by the build: each >= 1, Σ per node <= M).
    pub fn new(consumer: Vec<Consumer>, initial: Vec<u32>, retry_after: Cycle) -> Self {
        CreditCc {
            consumer,
            retrying: vec![false; initial.len()],
            credits: initial.clone(),
            initial,
            retry_after,
            stats: CreditStats::default(),
        }
    }

    pub fn retry_after(&self) -> Cycle {
        self.retry_after
    }

    fn of(&self, flow: u32) -> Consumer {
        self.consumer.get(flow as usize).copied().unwrap_or(Consumer::Free)
    }

    /// May `flow` post a message at `now`? Returns the answer and, for a real-time drop,
    /// the retry to time (`Control::CreditRetry` to `node`).
    pub fn may_start(&mut self, node: usize, flow: u32, now: Cycle) -> (bool, Option<(Cycle, u32, Control)>) {
        match self.of(flow) {
            Consumer::Free => (true, None),
            Consumer::BestEffort(c) => {
                let ok = self.credits[c as usize] > 0;
                if !ok {
                    self.stats.waited += 1;
                }
                (ok, None)
            }
            Consumer::RealTime(c) => {
                let c = c as usize;
                if self.retrying[c] {
                    return (false, None);
                }
                if self.credits[c] > 0 {
                    return (true, None);
                }
                self.retrying[c] = true;
                self.stats.dropped += 1;
                (false, Some((now + self.retry_after, node as u32, Control::CreditRetry { flow })))
            }
        }
    }

    /// `flow` posted a message: it spends a credit.
    pub fn started(&mut self, flow: u32) {
        if let Consumer::RealTime(c) | Consumer::BestEffort(c) = self.of(flow) {
            self.credits[c as usize] -= 1;
        }
    }

    /// The HCA injected a message of `flow` whole: its CQE returns the credit. Returns
    /// whether this woke a waiting consumer (best effort: the credit it waited for).
    pub fn completed(&mut self, flow: u32) -> bool {
        match self.of(flow) {
            Consumer::Free => false,
            Consumer::RealTime(c) => {
                self.credits[c as usize] += 1;
                false
            }
            Consumer::BestEffort(c) => {
                let c = c as usize;
                self.credits[c] += 1;
                debug_assert!(self.credits[c] <= self.initial[c]);
                self.credits[c] == 1
            }
        }
    }

    /// A dropped real-time message's retry is due: it is posted again (wake its source).
    pub fn retry(&mut self, flow: u32) -> bool {
        let Consumer::RealTime(c) = self.of(flow) else { return false };
        let was = std::mem::replace(&mut self.retrying[c as usize], false);
        if was {
            self.stats.retried += 1;
        }
        was
    }

    /// Messages consumer `c` has posted and not completed (at most its initial credits).
    #[cfg(test)]
    pub fn outstanding(&self, c: usize) -> u32 {
        self.initial[c] - self.credits[c]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node 0: flow 0 control, flow 1 real time (2 credits), flow 2 best effort (1 credit).
    fn cc() -> CreditCc {
        let consumer = vec![Consumer::Free, Consumer::RealTime(0), Consumer::BestEffort(1)];
        CreditCc::new(consumer, vec![2, 1], 50)
    }

    #[test]
    fn best_effort_waits_for_its_credit_and_is_woken_by_the_cqe() {
        let mut c = cc();
        assert_eq!(c.may_start(0, 2, 0), (true, None));
        c.started(2);
        assert_eq!(c.outstanding(1), 1);
        assert_eq!(c.may_start(0, 2, 1), (false, None), "waits, no retry timed");
        assert_eq!(c.stats.waited, 1);
        assert!(c.completed(2), "the credit wakes it");
        assert_eq!(c.may_start(0, 2, 2), (true, None));
    }

    #[test]
    fn real_time_drops_and_retries_and_control_is_never_restricted() {
        let mut c = cc();
        for _ in 0..2 {
            assert_eq!(c.may_start(0, 1, 0), (true, None));
            c.started(1);
        }
        assert_eq!(c.outstanding(0), 2, "never more than C_j outstanding");
        assert_eq!(c.may_start(0, 1, 10), (false, Some((60, 0, Control::CreditRetry { flow: 1 }))));
        assert_eq!(c.may_start(0, 1, 11), (false, None), "one retry timed at a time");
        assert!(!c.completed(1), "a real-time credit does not wake: the retry does");
        assert!(c.retry(1));
        assert_eq!(c.may_start(0, 1, 60), (true, None));
        assert_eq!((c.stats.dropped, c.stats.retried), (1, 1));
        for _ in 0..1000 {
            assert_eq!(c.may_start(0, 0, 0), (true, None));
            c.started(0);
        }
    }
}

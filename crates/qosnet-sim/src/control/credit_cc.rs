//! Credit-Based Congestion Control (document 000 §4.2): the completion queue's entries are
//! credits. Consumer i may have at most C_i messages posted to the HCA and not completed
//! (a send CQE returns the credit when the HCA has injected the message whole). A
//! real-time connection j gets C_j = b_j / B · M (M: the HCA buffer in messages, B: the
//! link bandwidth), the node's best-effort consumer C_b <= M − Σ C_j. Without a credit,
//! best effort waits for one; real time drops the message and posts it again later (it
//! stays in host memory; the drop and the retry are counted); control traffic is never
//! restricted.

use super::interface::{CongestionControl, Timer};
use super::{CongestionStats, FlowFacts};
use crate::config::{AgentConfig, TrafficClass};
use crate::error::ConfigError;
use crate::links::Control;
use crate::units::Cycle;

/// `[endpoint] agent = { kind = "credit", ... }`'s parameters on their own (`Agents::check_params`).
pub(crate) fn check_params(cfg: &AgentConfig, admission: bool, errs: &mut Vec<ConfigError>) {
    let AgentConfig::Credit { hca_messages, best_effort, .. } = cfg else { return };
    if *hca_messages == 0 {
        errs.push(ConfigError::new(
            "endpoint.agent.hca_messages",
            "must be a whole number >= 1 (M, the HCA buffer in messages), got 0",
        ));
    }
    if *best_effort == 0 {
        errs.push(ConfigError::new(
            "endpoint.agent.best_effort",
            "must be a whole number >= 1 (C_b, best effort's initial credits per node), got 0",
        ));
    } else if admission && best_effort > hca_messages {
        // (without admission, C_b plus every connection's C_j must fit: `for_flows`)
        errs.push(ConfigError::new(
            "endpoint.agent.best_effort",
            format!("C_b = {best_effort} exceeds M = {hca_messages} (endpoint.agent.hca_messages): C_b <= M - sum C_j"),
        ));
    }
}

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
///
/// With admission control (§4.1 beside §4.2) a real-time connection holds credits only
/// while admitted: C_j is granted when its ACK arrives and withdrawn when its last message
/// is posted (the messages still in the HCA return their CQEs as usual); best effort's
/// credits are C_b capped by what the admitted connections leave of M, so Σ C_i ≤ M holds
/// as connections come and go. Without admission every configured connection holds its
/// C_j from the start (the build checks Σ C_i ≤ M then).
#[derive(Clone, Debug)]
pub(crate) struct CreditCc {
    /// Per flow: its consumer.
    consumer: Vec<Consumer>,
    /// Per consumer: its credits as configured (C_j = b_j / B · M; best effort's C_b).
    initial: Vec<u32>,
    /// Per real-time consumer: its credits now (0 while not admitted); per best-effort
    /// consumer: unused (`best_effort_limit`).
    limit: Vec<u32>,
    /// Per consumer: messages posted to the HCA and not completed.
    outstanding: Vec<u32>,
    /// Per consumer: its node (a best-effort consumer's index is its node).
    node: Vec<u32>,
    /// M, the HCA buffer in messages; per node: Σ C_j of its admitted connections, and
    /// the messages of all its consumers posted and not completed.
    m: u32,
    rt_sum: Vec<u32>,
    posted: Vec<u32>,
    /// Per real-time consumer: a retry is timed (its message was dropped).
    retrying: Vec<bool>,
    retry_after: Cycle,
    pub stats: CreditStats,
}

impl CreditCc {
    /// The agent for the flows `f` (`Agents::for_flows`): a consumer per real-time
    /// connection with C_j = b_j / B · M credits (B one flit a cycle), one per node for best
    /// effort with C_b; control free. Errors name their fields; None when any.
    pub fn for_flows(cfg: &AgentConfig, f: &FlowFacts, errs: &mut Vec<ConfigError>) -> Option<CreditCc> {
        let AgentConfig::Credit { hca_messages, best_effort, retry_after } = cfg else { return None };
        let before = errs.len();
        let m = *hca_messages;
        let retry = super::control_delay(
            "endpoint.agent.retry_after",
            Some(retry_after.unwrap_or(crate::units::Duration::Cycles(40))),
            f.clock,
        )
        .unwrap_or_else(|e| {
            errs.push(e);
            1
        })
        .max(1);
        let nodes = f.topo.nodes;
        let mut consumer = vec![Consumer::Free; f.flows()];
        let mut initial: Vec<u32> = vec![*best_effort; nodes];
        let mut node_of: Vec<u32> = (0..nodes as u32).collect();
        let mut per_node: Vec<u64> = vec![*best_effort as u64; nodes];
        for (s, slot) in consumer.iter_mut().enumerate().take(f.node.len()) {
            let node = f.node[s] as usize;
            *slot = match f.class[s] {
                TrafficClass::Control => Consumer::Free,
                TrafficClass::BestEffort => Consumer::BestEffort(node as u32),
                TrafficClass::RealTime => {
                    let spec = f.spec[s];
                    if f.dst[s].is_none() {
                        errs.push(ConfigError::new(
                            format!("traffic[{spec}].pattern"),
                            "credit-based congestion control gives credits per real-time connection: use one destination per source (kind = \"fixed\", a permutation or a bit pattern)",
                        ));
                        continue;
                    }
                    // C_j = b_j / B · M, B one flit per cycle.
                    let exact = f.bandwidth[s] * m as f64;
                    let c = exact.floor() as u64;
                    if c == 0 && m > 0 {
                        errs.push(ConfigError::new(
                            "endpoint.agent.hca_messages",
                            format!("C_j = b_j / B x M = {exact:.3} rounds to 0 credits for traffic[{spec}]'s connections: raise M"),
                        ));
                        continue;
                    }
                    per_node[node] += c;
                    initial.push(c.min(u32::MAX as u64) as u32);
                    node_of.push(node as u32);
                    Consumer::RealTime(initial.len() as u32 - 1)
                }
            };
        }
        // With admission control a connection holds its C_j only while admitted, and best
        // effort's credits shrink to what the admitted ones leave of M: only C_b itself
        // must fit (`check_params`). Without it every configured connection holds its C_j.
        if let Some((node, &sum)) = per_node.iter().enumerate().find(|(_, &c)| c > m as u64 && !f.admission) {
            errs.push(ConfigError::new(
                "endpoint.agent.best_effort",
                format!("C_b + sum of C_j = {sum} at node {node} exceeds M = {m} (endpoint.agent.hca_messages): sum C_i <= M (with endpoint.admission, only the admitted connections count)"),
            ));
        }
        (errs.len() == before).then(|| CreditCc::new(consumer, initial, node_of, m, !f.admission, retry))
    }

    /// `consumer[f]`: flow f's consumer; consumers `0..nodes` are the nodes' best effort,
    /// the rest real-time connections; `initial[c]`: consumer c's credits, `node[c]` its
    /// node; `m`: M. `admitted`: whether connections hold their credits from the start (no
    /// admission control) or only once admitted. (The build checks each initial >= 1 and,
    /// without admission, Σ per node <= M.)
    pub fn new(
        consumer: Vec<Consumer>,
        initial: Vec<u32>,
        node: Vec<u32>,
        m: u32,
        admitted: bool,
        retry_after: Cycle,
    ) -> Self {
        let nodes = node.iter().map(|&n| n as usize + 1).max().unwrap_or(0);
        let mut c = CreditCc {
            consumer,
            limit: vec![0; initial.len()],
            outstanding: vec![0; initial.len()],
            retrying: vec![false; initial.len()],
            node,
            m,
            rt_sum: vec![0; nodes],
            posted: vec![0; nodes],
            initial,
            retry_after,
            stats: CreditStats::default(),
        };
        if admitted {
            for i in 0..c.initial.len() {
                if c.is_real_time(i) {
                    c.grant(i);
                }
            }
        }
        c
    }

    fn of(&self, flow: u32) -> Consumer {
        self.consumer.get(flow as usize).copied().unwrap_or(Consumer::Free)
    }

    fn is_real_time(&self, c: usize) -> bool {
        c >= self.rt_sum.len()
    }

    /// Best effort's credits at `node` now: C_b <= M - Σ C_j.
    fn best_effort_limit(&self, node: usize) -> u32 {
        self.initial[node].min(self.m.saturating_sub(self.rt_sum[node]))
    }

    /// Whether consumer `c` may post a message: below its credits, and the HCA's M not all
    /// taken (it can be, for a moment, when admitting a connection shrank best effort's
    /// credits below what best effort had posted).
    fn has_credit(&self, c: usize) -> bool {
        let n = self.node[c] as usize;
        let limit = if self.is_real_time(c) { self.limit[c] } else { self.best_effort_limit(n) };
        self.outstanding[c] < limit && self.posted[n] < self.m
    }

    /// Real-time consumer `c` gets its C_j (at most what is left of M).
    fn grant(&mut self, c: usize) {
        let n = self.node[c] as usize;
        let g = self.initial[c].min(self.m.saturating_sub(self.rt_sum[n] - self.limit[c]));
        self.rt_sum[n] = self.rt_sum[n] - self.limit[c] + g;
        self.limit[c] = g;
    }

    /// `flow`'s connection was admitted (its ACK arrived): it gets its C_j.
    pub fn admitted(&mut self, flow: u32) {
        if let Consumer::RealTime(c) = self.of(flow) {
            self.grant(c as usize);
        }
    }

    /// `flow`'s connection posted its last message (teardown): its credits go back to M.
    pub fn closed(&mut self, flow: u32) {
        if let Consumer::RealTime(c) = self.of(flow) {
            let (c, n) = (c as usize, self.node[c as usize] as usize);
            self.rt_sum[n] -= self.limit[c];
            self.limit[c] = 0;
        }
    }

    /// May `flow` post a message at `now`? Returns the answer and, for a real-time drop,
    /// the retry to time (`Control::CreditRetry` to `node`).
    pub fn may_start(&mut self, node: usize, flow: u32, now: Cycle) -> (bool, Option<(Cycle, u32, Control)>) {
        match self.of(flow) {
            Consumer::Free => (true, None),
            Consumer::BestEffort(c) => {
                let ok = self.has_credit(c as usize);
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
                if self.has_credit(c) {
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
            let c = c as usize;
            self.outstanding[c] += 1;
            self.posted[self.node[c] as usize] += 1;
            debug_assert!(self.posted[self.node[c] as usize] <= self.m);
        }
    }

    /// The HCA injected a message of `flow` whole: its CQE returns the credit. Returns
    /// whether this woke its node's waiting best effort (the credit, or the room in M, it
    /// waited for).
    pub fn completed(&mut self, flow: u32) -> bool {
        let c = match self.of(flow) {
            Consumer::Free => return false,
            Consumer::RealTime(c) | Consumer::BestEffort(c) => c as usize,
        };
        let n = self.node[c] as usize;
        let be_before = self.has_credit(n);
        self.outstanding[c] -= 1;
        self.posted[n] -= 1;
        !be_before && self.has_credit(n)
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

    /// Messages consumer `c` has posted and not completed.
    #[cfg(test)]
    pub fn outstanding(&self, c: usize) -> u32 {
        self.outstanding[c]
    }

    /// The credit invariants (document 000 §4.2): per node Σ C_i <= M (the admitted
    /// connections' C_j plus best effort's credits), the messages posted and not completed
    /// at most M, an admitted connection's count at most its C_j and best effort's at most
    /// its configured C_b.
    pub fn check(&self) -> Result<(), String> {
        let mut rt = vec![0u32; self.rt_sum.len()];
        let mut posted = vec![0u32; self.rt_sum.len()];
        for c in 0..self.initial.len() {
            let n = self.node[c] as usize;
            posted[n] += self.outstanding[c];
            if self.is_real_time(c) {
                rt[n] += self.limit[c];
                if self.limit[c] > 0 && self.outstanding[c] > self.limit[c] {
                    return Err(format!(
                        "consumer {c}: {} posted over its C_j = {}",
                        self.outstanding[c], self.limit[c]
                    ));
                }
            } else if self.outstanding[c] > self.initial[c] {
                return Err(format!(
                    "node {n}: best effort {} posted over C_b = {}",
                    self.outstanding[c], self.initial[c]
                ));
            }
        }
        for n in 0..rt.len() {
            if rt[n] != self.rt_sum[n] || posted[n] != self.posted[n] {
                return Err(format!("node {n}: sums out of step"));
            }
            let total = rt[n] + self.best_effort_limit(n);
            if total > self.m || posted[n] > self.m {
                return Err(format!(
                    "node {n}: sum C_i = {total}, posted {}, over M = {}",
                    posted[n], self.m
                ));
            }
        }
        Ok(())
    }
}

impl CongestionControl for CreditCc {
    fn control_delay(&self) -> Cycle {
        self.retry_after
    }
    #[inline]
    fn may_start(&mut self, node: usize, flow: u32, _: u32, now: Cycle, timers: &mut Vec<Timer>) -> bool {
        let (ok, retry) = CreditCc::may_start(self, node, flow, now);
        timers.extend(retry);
        ok
    }
    #[inline]
    fn started(&mut self, _: usize, flow: u32, _: Cycle, last: bool) {
        CreditCc::started(self, flow);
        if last {
            // The connection's last message: its credits go back (§4.2 with §4.1).
            self.closed(flow);
        }
    }
    fn counts_sends(&self) -> bool {
        true
    }
    fn sent(&mut self, flow: u32) -> bool {
        self.completed(flow)
    }
    fn on_control(&mut self, _: usize, msg: Control, _: Cycle) -> bool {
        match msg {
            Control::CreditRetry { flow } => self.retry(flow),
            _ => false,
        }
    }
    fn admitted(&mut self, flow: u32) {
        CreditCc::admitted(self, flow)
    }
    fn stats(&self) -> Option<CongestionStats> {
        let s = self.stats;
        Some(CongestionStats {
            dropped: s.dropped,
            retried: s.retried,
            waited: s.waited,
            ..Default::default()
        })
    }
    fn check(&self) -> Result<(), String> {
        CreditCc::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Node 0: flow 0 control, flow 1 real time (2 credits), flow 2 best effort (1 credit).
    fn cc() -> CreditCc {
        let consumer = vec![Consumer::Free, Consumer::RealTime(1), Consumer::BestEffort(0)];
        CreditCc::new(consumer, vec![1, 2], vec![0, 0], 3, true, 50)
    }

    #[test]
    fn best_effort_waits_for_its_credit_and_is_woken_by_the_cqe() {
        let mut c = cc();
        assert_eq!(c.may_start(0, 2, 0), (true, None));
        c.started(2);
        assert_eq!(c.outstanding(0), 1);
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
        assert_eq!(c.outstanding(1), 2, "never more than C_j outstanding");
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

    #[test]
    fn with_admission_credits_follow_the_admitted_connections_and_sum_c_i_stays_within_m() {
        // Node 0, M = 4: best effort C_b = 3 (flow 1), one connection C_j = 2 (flow 0).
        let consumer = vec![Consumer::RealTime(1), Consumer::BestEffort(0)];
        let mut c = CreditCc::new(consumer, vec![3, 2], vec![0, 0], 4, false, 50);
        for _ in 0..3 {
            assert!(c.may_start(0, 1, 0).0);
            c.started(1);
        }
        assert!(!c.may_start(0, 1, 0).0, "C_b = 3 reached");
        c.check().unwrap();
        // Admitted: C_j = 2 leaves best effort 4 - 2 = 2 credits, under its 3 posted.
        c.admitted(0);
        c.check().unwrap();
        assert!(c.may_start(0, 0, 1).0, "M has one slot left");
        c.started(0);
        assert!(!c.may_start(0, 0, 2).0, "M taken: the connection drops and retries");
        c.check().unwrap();
        assert!(!c.completed(1), "best effort 2 posted of its 2");
        assert!(!c.may_start(0, 1, 3).0);
        // Teardown: its C_j goes back; best effort has 3 again.
        c.closed(0);
        c.check().unwrap();
        assert!(c.may_start(0, 1, 4).0);
        c.started(1);
        assert!(!c.completed(0), "a closed connection's CQE still comes back");
        c.check().unwrap();
        assert_eq!((c.outstanding(0), c.outstanding(1)), (3, 0), "best effort 3, the connection none");
    }
}

//! Measurement, the standard way: warm up, then a window; messages created inside the
//! window are measured and the run drains until they are all delivered (or reports
//! saturation). Latency = queueing (creation → header enters the network) + network
//! (header injected → tail ejected), in cycles (ARCHITECTURE.md "Traffic and metrics").

pub mod deadline;
mod observer;
mod table;
pub(crate) mod trace;

pub(crate) use observer::Observers;

pub use table::{Column, Table};

use crate::config::TrafficClass;
use crate::ids::NodeId;
use crate::units::Cycle;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct ClassStats {
    pub messages_measured: u64,
    pub messages_delivered: u64,
    pub flits_offered: u64,
    pub flits_accepted: u64,
    /// Latencies of the delivered measured messages, in cycles.
    pub latency: LatencyHistogram,
    pub queueing_sum: u64,
    pub network_sum: u64,
    pub queueing_max: u64,
    pub network_max: u64,
}

#[derive(Clone, Debug, Default)]
pub struct NodeStats {
    pub flits_offered: u64,
    pub flits_injected: u64,
    pub flits_accepted: u64,
    pub messages_delivered: u64,
    pub latency_sum: u64,
}

/// One row per measured, delivered message (opt-in: `simulation.record_messages`).
#[derive(Clone, Debug, Default)]
pub struct MessageRecords {
    pub src: Vec<u64>,
    pub dst: Vec<u64>,
    pub class: Vec<String>,
    pub flits: Vec<u64>,
    pub created: Vec<u64>,
    pub injected: Vec<u64>,
    pub delivered: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct Metrics {
    pub warmup: Cycle,
    pub window_end: Cycle,
    pub classes: [ClassStats; 3],
    pub nodes: Vec<NodeStats>,
    /// Flits sent in the window on each router output port (router * ports + port).
    pub router_link_flits: Vec<u64>,
    /// Flits sent in the window on each NIC injection link.
    pub nic_link_flits: Vec<u64>,
    pub records: Option<MessageRecords>,
    /// Per flow (traffic source or stream): flits ejected in the window (bandwidth received),
    /// messages completed in the window and their latency.
    pub flows: Vec<FlowStats>,
    /// Per phase of the mix and class: measured messages by the phase they were created in.
    pub phases: Vec<[PhaseStats; 3]>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct PhaseStats {
    pub flits_offered: u64,
    pub messages: u64,
    pub flits: u64,
    pub queueing_sum: u64,
    pub network_sum: u64,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct FlowStats {
    pub messages: u64,
    pub flits: u64,
    pub latency_sum: u64,
    /// Send CQEs posted (NIC models): messages whose last flit left the NIC.
    pub send_cqes: u64,
    /// Packets a switch output marked (`[router] marking`).
    pub marked_packets: u64,
    /// Messages delivered after a later-created message of the flow (multipath: messages
    /// of one flow on different paths overtake each other).
    pub out_of_order: u64,
    /// The creation cycle of the flow's newest message delivered so far.
    pub newest_created: Cycle,
}

impl Metrics {
    /// The measurement window's length, in cycles: what every rate in the results is over.
    pub fn measure_cycles(&self) -> Cycle {
        self.window_end - self.warmup
    }

    pub fn new(warmup: Cycle, window_end: Cycle, nodes: usize, router_ports: usize, record: bool) -> Self {
        Self {
            warmup,
            window_end,
            classes: Default::default(),
            nodes: vec![NodeStats::default(); nodes],
            router_link_flits: vec![0; router_ports],
            nic_link_flits: vec![0; nodes],
            records: record.then(MessageRecords::default),
            flows: Vec::new(),
            phases: vec![Default::default()],
        }
    }

    #[inline]
    pub fn in_window(&self, t: Cycle) -> bool {
        t >= self.warmup && t < self.window_end
    }

    /// A measured message is complete.
    #[allow(clippy::too_many_arguments)] // one field per column of the message record
    pub fn delivered(
        &mut self,
        class: TrafficClass,
        src: NodeId,
        dst: NodeId,
        flits: u32,
        created: Cycle,
        injected: Cycle,
        done: Cycle,
    ) {
        let c = &mut self.classes[class.index()];
        let (q, n) = (injected - created, done - injected);
        c.messages_delivered += 1;
        c.latency.record(done - created);
        c.queueing_sum += q;
        c.network_sum += n;
        c.queueing_max = c.queueing_max.max(q);
        c.network_max = c.network_max.max(n);
        let node = &mut self.nodes[src.index()];
        node.messages_delivered += 1;
        node.latency_sum += done - created;
        if let Some(r) = &mut self.records {
            r.src.push(src.0 as u64);
            r.dst.push(dst.0 as u64);
            r.class.push(class.name().to_string());
            r.flits.push(flits as u64);
            r.created.push(created);
            r.injected.push(injected);
            r.delivered.push(done);
        }
    }
}

/// Latency distribution summary (cycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct LatencySummary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl LatencySummary {
    /// Nearest-rank percentiles over `samples` (sorted in place).
    pub fn of(samples: &mut [u64]) -> Self {
        if samples.is_empty() {
            return Self {
                count: 0,
                mean: f64::NAN,
                p50: f64::NAN,
                p95: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        samples.sort_unstable();
        let n = samples.len();
        let rank = |p: f64| samples[((p * n as f64).ceil() as usize).clamp(1, n) - 1] as f64;
        Self {
            count: n as u64,
            mean: samples.iter().sum::<u64>() as f64 / n as f64,
            p50: rank(0.50),
            p95: rank(0.95),
            p99: rank(0.99),
            max: samples[n - 1] as f64,
        }
    }
}

/// An exact distribution of latencies in cycles: a count per value, dense below
/// `DENSE` cycles and in a sorted map above. Its memory follows the range of latencies,
/// not the number of messages (a long window measures millions: keeping each latency, as
/// this once did, took 42 MB on a 60k-cycle window of the 8x8 mesh with 1-flit packets),
/// and its percentiles are the nearest-rank ones of the samples themselves.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    /// Counts of latencies 0..dense.len() (grown on demand, up to `DENSE`).
    dense: Vec<u64>,
    /// Counts of latencies >= `DENSE`.
    sparse: BTreeMap<u64, u64>,
    count: u64,
    sum: u64,
}

impl LatencyHistogram {
    /// Latencies below this many cycles are counted in an array (512 KiB at most).
    const DENSE: u64 = 1 << 16;

    pub fn record(&mut self, latency: u64) {
        if latency < Self::DENSE {
            let i = latency as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, 0);
            }
            self.dense[i] += 1;
        } else {
            *self.sparse.entry(latency).or_insert(0) += 1;
        }
        self.count += 1;
        self.sum += latency;
    }

    /// Add `other`'s latencies to these.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if self.dense.len() < other.dense.len() {
            self.dense.resize(other.dense.len(), 0);
        }
        for (a, b) in self.dense.iter_mut().zip(&other.dense) {
            *a += b;
        }
        for (&v, &n) in &other.sparse {
            *self.sparse.entry(v).or_insert(0) += n;
        }
        self.count += other.count;
        self.sum += other.sum;
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// (latency, count) in increasing latency, values that occurred only.
    fn values(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let dense = self.dense.iter().enumerate().filter(|(_, &n)| n > 0).map(|(v, &n)| (v as u64, n));
        dense.chain(self.sparse.iter().map(|(&v, &n)| (v, n)))
    }

    /// Mean, nearest-rank percentiles and maximum: `LatencySummary::of` the same samples.
    pub fn summary(&self) -> LatencySummary {
        let n = self.count;
        if n == 0 {
            return LatencySummary::of(&mut []);
        }
        // ranks (1-based) of p50, p95, p99 and the maximum, in increasing order
        let rank = |p: f64| ((p * n as f64).ceil() as u64).clamp(1, n);
        let ranks = [rank(0.50), rank(0.95), rank(0.99), n];
        let mut found = [0u64; 4];
        let (mut below, mut next) = (0u64, 0usize);
        for (v, c) in self.values() {
            below += c;
            while next < ranks.len() && ranks[next] <= below {
                found[next] = v;
                next += 1;
            }
            if next == ranks.len() {
                break;
            }
        }
        LatencySummary {
            count: n,
            mean: self.sum as f64 / n as f64,
            p50: found[0] as f64,
            p95: found[1] as f64,
            p99: found[2] as f64,
            max: found[3] as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The histogram's summary is the samples' own, across the dense and sparse ranges
        /// and merged from parts.
        #[test]
        fn histogram_summary_is_the_samples_summary(
            mut samples in prop::collection::vec(prop_oneof![0u64..300, 65_530u64..65_545, 0u64..10_000_000], 1..400),
            split in 0usize..400,
        ) {
            let split = split.min(samples.len());
            let (mut a, mut b) = (LatencyHistogram::default(), LatencyHistogram::default());
            samples[..split].iter().for_each(|&v| a.record(v));
            samples[split..].iter().for_each(|&v| b.record(v));
            a.merge(&b);
            prop_assert_eq!(a.summary(), LatencySummary::of(&mut samples));
        }
    }

    #[test]
    fn an_empty_histogram_has_no_latencies() {
        let s = LatencyHistogram::default().summary();
        assert_eq!(s.count, 0);
        assert!(s.mean.is_nan() && s.p99.is_nan());
    }

    #[test]
    fn nearest_rank_percentiles() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        let s = LatencySummary::of(&mut v);
        assert_eq!((s.p50, s.p95, s.p99, s.max, s.mean), (50.0, 95.0, 99.0, 100.0, 50.5));
        assert!(LatencySummary::of(&mut []).mean.is_nan());
    }
}

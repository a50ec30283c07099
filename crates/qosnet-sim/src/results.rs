//! What a run produces: a summary (→ `summary.json`) and tables (→ Parquet/CSV):
//! per class, per node, per link and, on request, per message.

use crate::config::TrafficClass;
use crate::engine::Simulation;
use crate::error::SimError;
use crate::ids::RouterId;
use crate::metrics::deadline::DeadlineStats;
use crate::metrics::trace::LinkRow;
use crate::metrics::{Column, LatencySummary, Table};
use crate::topology::Peer;
use serde::Serialize;

/// Relative shortfall of accepted against offered throughput above which a run counts as
/// saturated even though its measured messages drained: below saturation the two agree to
/// within sampling noise (about 1% over a 20,000-cycle window); past it source queues grow
/// without bound while the drain still finishes, because sources queue behind the measured
/// messages.
pub const SATURATION_DEFICIT: f64 = 0.05;

#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    pub cycles: u64,
    pub warmup_cycles: u64,
    pub measure_cycles: u64,
    pub cycle_time_ns: f64,
    pub nodes: u64,
    pub routers: u64,
    /// Every measured message was delivered before the drain limit.
    pub drain_complete: bool,
    /// The network did not keep up with the offered load: the drain did not complete, or
    /// accepted throughput fell more than [`SATURATION_DEFICIT`] short of offered.
    pub saturated: bool,
    pub messages_measured: u64,
    pub messages_delivered: u64,
    /// At the window's end, the mean latency (cycles) BookSim2 tests against its
    /// `latency_thres` to call a run unstable: the measured messages delivered, and each
    /// flit still out, at its message's age, of the messages under way and of each source
    /// queue's next.
    pub window_end_latency: f64,
    /// The largest of that test, at the window's end and every 1,000 cycles of the drain
    /// while measured messages are out, as BookSim2 repeats it (`qosnet crosscheck` judges
    /// both simulators by it).
    pub stability_latency: f64,
    /// Flits created in the window per node per cycle.
    pub offered_flits_per_node_cycle: f64,
    /// Flits ejected in the window per node per cycle.
    pub accepted_flits_per_node_cycle: f64,
    pub offered_gbps_per_node: f64,
    pub accepted_gbps_per_node: f64,
    /// Message latency over all classes, cycles (creation → tail ejected).
    pub latency: LatencySummary,
    pub queueing_mean: f64,
    pub network_mean: f64,
    pub latency_mean_ns: f64,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    pub flit_hops: u64,
    /// Video frames measured and delivered (document 003 §4.2), missed deadlines, DMP,
    /// DMT and the inter-frame delivery time (ms); NaN (null) without video.
    pub frames: u64,
    pub frames_missed: u64,
    pub dmp: f64,
    pub dmt_ms: f64,
    pub inter_frame_mean_ms: f64,
    pub inter_frame_sd_ms: f64,
}

#[derive(Clone, Debug)]
pub struct RunResult {
    pub summary: Summary,
    pub classes: Table,
    pub nodes: Table,
    pub links: Table,
    /// Per flow: bandwidth received (document 003 §4.2).
    pub flows: Table,
    /// Per phase of the mix and class: load, latency and (real time) deadlines.
    pub phases: Table,
    /// Per video stream: frames, DMP, DMT, inter-frame time (document 003 §4.2).
    pub streams: Table,
    pub messages: Option<Table>,
    /// `[trace]`: link utilisation per interval, stall cycles per router VC by cause, and
    /// the hops of watched flows' packets (each only when asked for).
    pub link_series: Option<Table>,
    pub stalls: Option<Table>,
    pub trace: Option<Table>,
    /// Admission control per class (document 000 §4.1): probes, refusals, set-up latency.
    pub admission: Option<Table>,
    /// The congestion-control agent's counts (§4.2, §6.1), one row.
    pub congestion: Option<Table>,
    /// Per application job (document 001 §4.2): when it started and completed.
    pub jobs: Option<Table>,
}

impl RunResult {
    /// Every table by name, in the order they are written (`messages` only when recorded).
    pub fn tables(&self) -> Vec<(&'static str, &Table)> {
        let mut t = vec![
            ("classes", &self.classes),
            ("nodes", &self.nodes),
            ("links", &self.links),
            ("flows", &self.flows),
            ("phases", &self.phases),
            ("streams", &self.streams),
        ];
        for (name, table) in [
            ("messages", &self.messages),
            ("link_series", &self.link_series),
            ("stalls", &self.stalls),
            ("trace", &self.trace),
            ("admission", &self.admission),
            ("congestion", &self.congestion),
            ("jobs", &self.jobs),
        ] {
            if let Some(table) = table {
                t.push((name, table));
            }
        }
        t
    }

    pub fn summary_json(&self) -> String {
        serde_json::to_string_pretty(&self.summary).expect("summary serialises")
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        f64::NAN
    } else {
        a as f64 / b as f64
    }
}

/// Totals over the traffic classes, for the summary.
#[derive(Default)]
struct Totals {
    measured: u64,
    delivered: u64,
    offered: u64,
    accepted: u64,
    queueing_sum: u64,
    network_sum: u64,
    latency: crate::metrics::LatencyHistogram,
}

impl Simulation {
    /// Run until finished; then the results. With `[simulation] time_limit`, a run that
    /// takes longer stops with `SimError::TimeLimit` (checked every 64k cycles), its results
    /// so far still readable with `result`.
    pub fn run(&mut self) -> Result<RunResult, SimError> {
        let Some(limit) = self.time_limit() else {
            while !self.advance(u64::MAX)? {}
            return Ok(self.result());
        };
        let start = std::time::Instant::now();
        while !self.advance(1 << 16)? {
            let seconds = start.elapsed().as_secs_f64();
            if seconds > limit {
                let ms = |s: f64| (s * 1e3).round() as u64;
                return Err(SimError::TimeLimit {
                    cycle: self.now,
                    elapsed_ms: ms(seconds),
                    limit_ms: ms(limit),
                });
            }
        }
        Ok(self.result())
    }

    /// `[simulation] time_limit`, seconds of wall-clock time.
    pub fn time_limit(&self) -> Option<f64> {
        match self.config.simulation.time_limit {
            Some(crate::units::Duration::Seconds(s)) => Some(s),
            _ => None,
        }
    }

    /// The results so far (complete once `advance` reported the run finished): each table
    /// built by its own function below.
    pub fn result(&self) -> RunResult {
        let (classes, totals) = self.classes_table();
        let (link_rows, counters) = self.link_rows();
        let trace = &self.net.obs.trace;
        let link_series = trace.series.as_ref().map(|s| s.table(&link_rows, &counters));
        let stalls = trace.stalls.as_ref().map(|st| {
            let (p, ports) = (&self.routers.p, self.routers.p.ports);
            st.table(|i| {
                let (port, lane) = p.lane_place(i);
                ((port / ports) as u64, (port % ports) as u64, lane as u64)
            })
        });
        let trace = trace.watch.as_ref().map(|w| w.table());
        let (overall, by_phase) = self.deadline_stats();
        RunResult {
            summary: self.summary(&totals, overall),
            classes,
            nodes: self.nodes_table(),
            links: self.links_table(&link_rows, &counters),
            flows: self.flows_table(),
            phases: self.phases_table(&by_phase),
            streams: self.streams_table(),
            messages: self.messages_table(),
            link_series,
            stalls,
            trace,
            admission: self.admission_table(),
            congestion: self.congestion_table(),
            jobs: self.jobs_table(),
        }
    }

    /// Per class: offered and accepted load, latency percentiles, queueing and network
    /// time; and the totals over the classes (the summary's).
    fn classes_table(&self) -> (Table, Totals) {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let nodes = self.routers.topo.nodes as f64;
        let per_node_cycle = |flits: u64| flits as f64 / nodes / window;
        let mut classes = Table::default();
        let (mut names, mut cols): (Vec<String>, Vec<Vec<f64>>) = (Vec::new(), vec![Vec::new(); 11]);
        let mut counts: [Vec<u64>; 2] = Default::default();
        let mut t = Totals::default();
        for class in TrafficClass::ALL {
            let c = &m.classes[class.index()];
            t.measured += c.messages_measured;
            t.delivered += c.messages_delivered;
            t.offered += c.flits_offered;
            t.accepted += c.flits_accepted;
            t.queueing_sum += c.queueing_sum;
            t.network_sum += c.network_sum;
            t.latency.merge(&c.latency);
            if c.messages_measured == 0 && c.flits_accepted == 0 {
                continue;
            }
            let l = c.latency.summary();
            names.push(class.name().to_string());
            counts[0].push(c.messages_measured);
            counts[1].push(c.messages_delivered);
            let row = [
                per_node_cycle(c.flits_offered),
                per_node_cycle(c.flits_accepted),
                l.mean,
                l.p50,
                l.p95,
                l.p99,
                l.max,
                ratio(c.queueing_sum, c.messages_delivered),
                ratio(c.network_sum, c.messages_delivered),
                c.queueing_max as f64,
                c.network_max as f64,
            ];
            for (col, v) in cols.iter_mut().zip(row) {
                col.push(v);
            }
        }
        classes
            .push("class", Column::Str(names))
            .push("messages_measured", Column::U64(counts[0].clone()))
            .push("messages_delivered", Column::U64(counts[1].clone()));
        for (name, col) in [
            "offered_flits_per_node_cycle",
            "accepted_flits_per_node_cycle",
            "latency_mean",
            "latency_p50",
            "latency_p95",
            "latency_p99",
            "latency_max",
            "queueing_mean",
            "network_mean",
            "queueing_max",
            "network_max",
        ]
        .iter()
        .zip(cols)
        {
            classes.push(name, Column::F64(col));
        }
        (classes, t)
    }

    /// Per node: offered, injected and accepted load, latency, and the NIC models'
    /// completion queues and host DMA (zero for the ideal endpoint).
    fn nodes_table(&self) -> Table {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let mut node_t = Table::default();
        let n = &m.nodes;
        node_t
            .push("node", Column::U64((0..n.len() as u64).collect()))
            .push(
                "offered_flits_per_cycle",
                Column::F64(n.iter().map(|s| s.flits_offered as f64 / window).collect()),
            )
            .push(
                "injected_flits_per_cycle",
                Column::F64(n.iter().map(|s| s.flits_injected as f64 / window).collect()),
            )
            .push(
                "accepted_flits_per_cycle",
                Column::F64(n.iter().map(|s| s.flits_accepted as f64 / window).collect()),
            )
            .push("messages_delivered", Column::U64(n.iter().map(|s| s.messages_delivered).collect()))
            .push(
                "latency_mean",
                Column::F64(n.iter().map(|s| ratio(s.latency_sum, s.messages_delivered)).collect()),
            );
        // The NIC models' completion queues and host DMA (zero for the ideal endpoint).
        let nic = |f: &dyn Fn(&crate::endpoint::nic::Nic) -> u64| -> Vec<u64> {
            (0..n.len()).map(|i| self.endpoints.nics.get(i).map_or(0, f)).collect()
        };
        let now = self.now.max(1) as f64;
        node_t
            .push("send_cqes", Column::U64(nic(&|x| x.send_cqes)))
            .push("recv_cqes", Column::U64(nic(&|x| x.recv_cqes)))
            .push("dma_packets", Column::U64(nic(&|x| x.dma_packets)))
            .push(
                "dma_busy_fraction",
                Column::F64(nic(&|x| x.dma_busy).iter().map(|&b| b as f64 / now).collect()),
            );
        node_t
    }

    /// Every link, as (kind, src, src_port, dst, dst_port, its counter), and the counters.
    fn link_rows(&self) -> (Vec<LinkRow>, Vec<u64>) {
        let m = &self.net.obs.metrics;
        // The injection
        // links' counters first, then every router port's (`nic_link_flits`, then
        // `router_link_flits`; the link series' snapshots are laid out the same way).
        let nodes_n = self.routers.topo.nodes;
        let mut link_rows: Vec<LinkRow> = Vec::new();
        for node in 0..nodes_n {
            let (r, p) = self.routers.topo.attach[node];
            link_rows.push(LinkRow {
                kind: "injection",
                src: node as u64,
                src_port: 0,
                dst: r.0 as u64,
                dst_port: p as u64,
                counter: node,
            });
        }
        for (i, peer) in self.routers.topo.peer.iter().enumerate() {
            let (r, p) = ((i / self.routers.topo.ports) as u64, (i % self.routers.topo.ports) as u64);
            let (kind, dst, dst_port) = match *peer {
                Peer::Router { router, port } => ("router", router.0 as u64, port as u64),
                // (a fly's first stage faces its nodes too, but only to take their flits)
                Peer::Endpoint { node }
                    if self.routers.topo.eject[node.index()] == (RouterId(r as u32), p as u32) =>
                {
                    ("ejection", node.0 as u64, 0)
                }
                Peer::Endpoint { .. } | Peer::None => continue,
            };
            link_rows.push(LinkRow { kind, src: r, src_port: p, dst, dst_port, counter: nodes_n + i });
        }
        let counters: Vec<u64> = m.nic_link_flits.iter().chain(&m.router_link_flits).copied().collect();
        (link_rows, counters)
    }

    /// Per link: its ends and its utilisation over the measurement window.
    fn links_table(&self, link_rows: &[LinkRow], counters: &[u64]) -> Table {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let mut links = Table::default();
        links
            .push("kind", Column::Str(link_rows.iter().map(|l| l.kind.to_string()).collect()))
            .push("src", Column::U64(link_rows.iter().map(|l| l.src).collect()))
            .push("src_port", Column::U64(link_rows.iter().map(|l| l.src_port).collect()))
            .push("dst", Column::U64(link_rows.iter().map(|l| l.dst).collect()))
            .push("dst_port", Column::U64(link_rows.iter().map(|l| l.dst_port).collect()))
            .push(
                "utilization",
                Column::F64(link_rows.iter().map(|l| counters[l.counter] as f64 / window).collect()),
            );
        links
    }

    /// Every measured message (`simulation.record_messages`), in a stable order.
    fn messages_table(&self) -> Option<Table> {
        let m = &self.net.obs.metrics;
        m.records.as_ref().map(|r| {
            // Messages finishing in the same cycle are recorded in the order their tails
            // happened to be delivered; sort so the table does not depend on it.
            let mut order: Vec<usize> = (0..r.src.len()).collect();
            order
                .sort_unstable_by_key(|&i| (r.delivered[i], r.src[i], r.created[i], r.dst[i], r.injected[i]));
            let pick = |v: &[u64]| order.iter().map(|&i| v[i]).collect::<Vec<u64>>();
            let (src, dst, created, injected, delivered) =
                (pick(&r.src), pick(&r.dst), pick(&r.created), pick(&r.injected), pick(&r.delivered));
            let diff = |a: &[u64], b: &[u64]| a.iter().zip(b).map(|(a, b)| a - b).collect::<Vec<u64>>();
            let (latency, queueing, network) =
                (diff(&delivered, &created), diff(&injected, &created), diff(&delivered, &injected));
            let mut t = Table::default();
            t.push("src", Column::U64(src))
                .push("dst", Column::U64(dst))
                .push("created", Column::U64(created))
                .push("injected", Column::U64(injected))
                .push("delivered", Column::U64(delivered))
                .push("class", Column::Str(order.iter().map(|&i| r.class[i].clone()).collect()))
                .push("flits", Column::U64(pick(&r.flits)))
                .push("latency", Column::U64(latency))
                .push("queueing", Column::U64(queueing))
                .push("network", Column::U64(network));
            t
        })
    }

    /// Per flow (a source's row, or an application's): its ends, class, Vtick, IDT,
    /// what it delivered, and the congestion counters where they are configured.
    fn flows_table(&self) -> Table {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let mut flows = Table::default();
        let fs = &m.flows;
        let src_of = |i: usize| self.traffic.sources.get(i).map_or(u64::MAX, |s| s.node as u64);
        let spec_of = |i: usize| self.traffic.sources.get(i).map_or(u64::MAX, |s| s.spec as u64);
        flows
            .push("flow", Column::U64((0..fs.len() as u64).collect()))
            .push("traffic", Column::U64((0..fs.len()).map(spec_of).collect()))
            .push("src", Column::U64((0..fs.len()).map(src_of).collect()))
            .push(
                "class",
                Column::Str(
                    (0..fs.len())
                        .map(|i| {
                            self.traffic
                                .sources
                                .get(i)
                                .map_or("posted", |s| self.traffic.specs[s.spec as usize].class.name())
                        })
                        .map(str::to_string)
                        .collect(),
                ),
            )
            .push(
                "vtick",
                Column::U64(
                    (0..fs.len())
                        .map(|i| {
                            self.traffic
                                .sources
                                .get(i)
                                .map_or(0, |s| self.traffic.specs[s.spec as usize].vtick as u64)
                        })
                        .collect(),
                ),
            )
            .push(
                "dst",
                Column::U64(
                    (0..fs.len())
                        .map(|i| {
                            self.traffic.sources.get(i).map_or(u64::MAX, |s| {
                                if s.dst != u32::MAX {
                                    return s.dst as u64;
                                }
                                let p = &self.traffic.specs[s.spec as usize].pattern;
                                p.fixed_destination(s.node as usize).map_or(u64::MAX, u64::from)
                            })
                        })
                        .collect(),
                ),
            )
            .push(
                "idt_cycles",
                Column::F64(
                    (0..fs.len())
                        .map(|i| match self.endpoints.nic_idt.get(i) {
                            Some(&t) if t > 0 => {
                                t as f64 / crate::endpoint::nic::rate_control::TICKS_PER_CYCLE as f64
                            }
                            _ => f64::NAN,
                        })
                        .collect(),
                ),
            )
            .push("send_cqes", Column::U64(fs.iter().map(|f| f.send_cqes).collect()))
            .push("messages_delivered", Column::U64(fs.iter().map(|f| f.messages).collect()))
            .push("flits_delivered", Column::U64(fs.iter().map(|f| f.flits).collect()))
            .push(
                "bandwidth_flits_per_cycle",
                Column::F64(fs.iter().map(|f| f.flits as f64 / window).collect()),
            )
            .push(
                "bandwidth_gbps",
                Column::F64(
                    fs.iter().map(|f| self.clock.bits_per_second(f.flits as f64 / window) / 1e9).collect(),
                ),
            )
            .push("latency_mean", Column::F64(fs.iter().map(|f| ratio(f.latency_sum, f.messages)).collect()));
        // (only where marking is configured: other runs' tables stay as they were)
        if self.config.router.marking.is_some() {
            flows.push("marked_packets", Column::U64(fs.iter().map(|f| f.marked_packets).collect()));
        }
        // Reordering where a flow's messages may take several paths.
        if self.config.routing.multipath.is_some() {
            flows.push("out_of_order", Column::U64(fs.iter().map(|f| f.out_of_order).collect()));
        }
        // IBA CC's per-flow counters (`control/iba_cc.rs`), over the whole run: CNPs the
        // destination sent for the flow's FECN-marked packets, BECNs its source received,
        // cycles a ready message of the flow waited for its injection delay.
        if let Some(cc) = self.endpoints.agents.cc_counters() {
            flows
                .push("cnps_sent", Column::U64(cc.iter().map(|c| c.cnps_sent).collect()))
                .push("becns_received", Column::U64(cc.iter().map(|c| c.becns).collect()))
                .push("throttled_cycles", Column::U64(cc.iter().map(|c| c.throttled_cycles).collect()));
        }
        flows
    }

    /// Deadlines over every video stream: overall and per phase of the mix.
    fn deadline_stats(&self) -> (DeadlineStats, Vec<DeadlineStats>) {
        let m = &self.net.obs.metrics;
        let mut overall = DeadlineStats::default();
        let mut by_phase = vec![DeadlineStats::default(); m.phases.len()];
        for d in &self.net.obs.deadlines {
            overall.merge(d.overall());
            for (p, b) in by_phase.iter_mut().enumerate() {
                b.merge(d.phase(p.min(d.phases() - 1)));
            }
        }
        (overall, by_phase)
    }

    /// Per video stream: its frames, deadline misses (DMP, DMT), inter-frame times.
    fn streams_table(&self) -> Table {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let ms = self.clock.cycle_seconds() * 1e3;
        let mut streams = Table::default();
        let video: Vec<usize> =
            (0..self.traffic.sources.len()).filter(|&i| self.net.obs.deadline_of[i] != u32::MAX).collect();
        let st = |i: usize| self.net.obs.deadlines[self.net.obs.deadline_of[i] as usize].overall();
        let src = |i: usize| &self.traffic.sources[i];
        streams
            .push("flow", Column::U64(video.iter().map(|&i| i as u64).collect()))
            .push("src", Column::U64(video.iter().map(|&i| src(i).node as u64).collect()))
            .push("dst", Column::U64(video.iter().map(|&i| src(i).dst as u64).collect()))
            .push("trace", Column::U64(video.iter().map(|&i| src(i).trace as u64).collect()))
            .push("vtick", Column::U64(video.iter().map(|&i| src(i).vtick as u64).collect()))
            .push("frames", Column::U64(video.iter().map(|&i| st(i).frames).collect()))
            .push("frames_missed", Column::U64(video.iter().map(|&i| st(i).missed).collect()))
            .push("dmp", Column::F64(video.iter().map(|&i| st(i).dmp()).collect()))
            .push("dmt_ms", Column::F64(video.iter().map(|&i| st(i).dmt() * ms).collect()))
            .push(
                "inter_frame_mean_ms",
                Column::F64(video.iter().map(|&i| st(i).inter_frame_mean() * ms).collect()),
            )
            .push(
                "inter_frame_sd_ms",
                Column::F64(video.iter().map(|&i| st(i).inter_frame_sd() * ms).collect()),
            )
            .push(
                "bandwidth_gbps",
                Column::F64(
                    video
                        .iter()
                        .map(|&i| self.clock.bits_per_second(m.flows[i].flits as f64 / window) / 1e9)
                        .collect(),
                ),
            );
        streams
    }

    /// Per phase of the mix (one phase without a mix) and class: load, latency and,
    /// for real time, deadlines.
    fn phases_table(&self, by_phase: &[DeadlineStats]) -> Table {
        let m = &self.net.obs.metrics;
        let nodes = self.routers.topo.nodes as f64;
        let ms = self.clock.cycle_seconds() * 1e3;
        let mut phases = Table::default();
        let (mut ph, mut cl, mut start, mut end) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); 5];
        let mut delivered_col = Vec::new();
        let (mut frames_col, mut missed_col) = (Vec::new(), Vec::new());
        let mut dl_cols: Vec<Vec<f64>> = vec![Vec::new(); 4];
        for (p, stats) in m.phases.iter().enumerate() {
            let from = if p == 0 { 0 } else { self.traffic.phase_starts[p - 1] };
            let to = self.traffic.phase_starts.get(p).copied().unwrap_or(m.window_end);
            // The part of the phase inside the measurement window.
            let span = to.min(m.window_end).saturating_sub(from.max(m.warmup)) as f64;
            for class in TrafficClass::ALL {
                let s = &stats[class.index()];
                if s.flits_offered == 0 && s.messages == 0 {
                    continue;
                }
                ph.push(p as u64);
                cl.push(class.name().to_string());
                let d = if class == TrafficClass::RealTime { by_phase[p] } else { DeadlineStats::default() };
                frames_col.push(d.frames);
                missed_col.push(d.missed);
                let rt = class == TrafficClass::RealTime && d.frames > 0;
                for (c, v) in dl_cols.iter_mut().zip([
                    d.dmp(),
                    d.dmt() * ms,
                    d.inter_frame_mean() * ms,
                    d.inter_frame_sd() * ms,
                ]) {
                    c.push(if rt { v } else { f64::NAN });
                }
                start.push(from);
                end.push(to);
                delivered_col.push(s.messages);
                let row = [
                    if span > 0.0 { s.flits_offered as f64 / nodes / span } else { f64::NAN },
                    if span > 0.0 { s.flits as f64 / nodes / span } else { f64::NAN },
                    ratio(s.queueing_sum + s.network_sum, s.messages),
                    ratio(s.queueing_sum, s.messages),
                    ratio(s.network_sum, s.messages),
                ];
                for (c, v) in cols.iter_mut().zip(row) {
                    c.push(v);
                }
            }
        }
        phases
            .push("phase", Column::U64(ph))
            .push("class", Column::Str(cl))
            .push("start_cycle", Column::U64(start))
            .push("end_cycle", Column::U64(end))
            .push("messages_delivered", Column::U64(delivered_col));
        for (name, c) in [
            "offered_flits_per_node_cycle",
            "delivered_flits_per_node_cycle",
            "latency_mean",
            "queueing_mean",
            "network_mean",
        ]
        .iter()
        .zip(cols)
        {
            phases.push(name, Column::F64(c));
        }
        phases.push("frames", Column::U64(frames_col)).push("frames_missed", Column::U64(missed_col));
        for (name, c) in ["dmp", "dmt_ms", "inter_frame_mean_ms", "inter_frame_sd_ms"].iter().zip(dl_cols) {
            phases.push(name, Column::F64(c));
        }
        phases
    }

    /// The run's summary: its length, load, latency and deadlines overall.
    fn summary(&self, t: &Totals, overall: DeadlineStats) -> Summary {
        let m = &self.net.obs.metrics;
        let window = m.measure_cycles() as f64;
        let nodes = self.routers.topo.nodes as f64;
        let ns = self.clock.cycle_seconds() * 1e9;
        let ms = self.clock.cycle_seconds() * 1e3;
        let per_node_cycle = |flits: u64| flits as f64 / nodes / window;
        let latency = t.latency.summary();
        Summary {
            cycles: self.now,
            warmup_cycles: m.warmup,
            measure_cycles: m.measure_cycles(),
            cycle_time_ns: ns,
            nodes: self.routers.topo.nodes as u64,
            routers: self.routers.topo.routers as u64,
            drain_complete: !self.drain_incomplete,
            saturated: self.drain_incomplete
                || per_node_cycle(t.accepted) < (1.0 - SATURATION_DEFICIT) * per_node_cycle(t.offered),
            messages_measured: t.measured,
            window_end_latency: self.window_end_latency.unwrap_or(0.0),
            stability_latency: self.stability_latency,
            messages_delivered: t.delivered,
            offered_flits_per_node_cycle: per_node_cycle(t.offered),
            accepted_flits_per_node_cycle: per_node_cycle(t.accepted),
            offered_gbps_per_node: self.clock.bits_per_second(per_node_cycle(t.offered)) / 1e9,
            accepted_gbps_per_node: self.clock.bits_per_second(per_node_cycle(t.accepted)) / 1e9,
            latency,
            queueing_mean: ratio(t.queueing_sum, t.delivered),
            network_mean: ratio(t.network_sum, t.delivered),
            latency_mean_ns: latency.mean * ns,
            flits_injected: self.net.progress.flits_injected,
            flits_ejected: self.net.progress.flits_ejected,
            flit_hops: self.net.progress.flit_hops,
            frames: overall.frames,
            frames_missed: overall.missed,
            dmp: overall.dmp(),
            dmt_ms: overall.dmt() * ms,
            inter_frame_mean_ms: overall.inter_frame_mean() * ms,
            inter_frame_sd_ms: overall.inter_frame_sd() * ms,
        }
    }

    /// How each application job ran (`None` without `[[application]]`).
    pub fn job_results(&self) -> Option<Vec<crate::traffic::application::JobResult>> {
        self.traffic.apps.as_ref().map(|a| a.results())
    }

    /// Per job: its name, ranks, start and completion (cycles and seconds; NaN / MAX if it
    /// did not complete), what it sent, and the compute time its ranks lost to sharing their
    /// nodes' processors (`endpoint.processors`).
    fn jobs_table(&self) -> Option<Table> {
        let jobs = self.job_results()?;
        let s = |c: u64| self.clock.cycles_to_seconds(c as f64);
        let mut t = Table::default();
        t.push("job", Column::U64((0..jobs.len() as u64).collect()))
            .push("name", Column::Str(jobs.iter().map(|j| j.name.clone()).collect()))
            .push("ranks", Column::U64(jobs.iter().map(|j| j.ranks as u64).collect()))
            .push("start_cycle", Column::U64(jobs.iter().map(|j| j.start).collect()))
            .push("finish_cycle", Column::U64(jobs.iter().map(|j| j.finished.unwrap_or(u64::MAX)).collect()))
            .push(
                "time_s",
                Column::F64(jobs.iter().map(|j| j.finished.map_or(f64::NAN, |f| s(f - j.start))).collect()),
            )
            .push("messages", Column::U64(jobs.iter().map(|j| j.messages).collect()))
            .push("flits", Column::U64(jobs.iter().map(|j| j.flits).collect()))
            .push("compute_stretch_s", Column::F64(jobs.iter().map(|j| s(j.compute_stretch)).collect()));
        Some(t)
    }

    /// Admission control's counts per class (`None` when it is off).
    fn admission_table(&self) -> Option<Table> {
        let stats = self.admission_stats()?;
        let us = self.clock.cycles_to_seconds(1.0) * 1e6;
        let u = |f: fn(&crate::control::AdmissionStats) -> u64| Column::U64(stats.iter().map(f).collect());
        let mut t = Table::default();
        t.push("class", Column::Str(TrafficClass::ALL.iter().map(|c| c.name().to_string()).collect()))
            .push("probes", u(|s| s.probes))
            .push("admitted", u(|s| s.admitted))
            .push("refused", u(|s| s.refused))
            .push("refusal_rate", Column::F64(stats.iter().map(|s| s.refusal_rate()).collect()))
            .push("releases", u(|s| s.releases))
            .push("teardowns", u(|s| s.teardowns))
            .push("gave_up", u(|s| s.gave_up))
            .push("dropped_messages", u(|s| s.dropped_messages))
            .push("setup_us", Column::F64(stats.iter().map(|s| s.mean_setup_cycles() * us).collect()));
        Some(t)
    }

    /// The congestion-control agent's counts, one row (`None` when none runs).
    fn congestion_table(&self) -> Option<Table> {
        let c = self.congestion_stats()?;
        let mut t = Table::default();
        t.push("dropped", Column::U64(vec![c.dropped]))
            .push("retried", Column::U64(vec![c.retried]))
            .push("waited", Column::U64(vec![c.waited]))
            .push("throttles", Column::U64(vec![c.throttles]))
            .push("threshold", Column::F64(vec![c.threshold]))
            .push("raised", Column::U64(vec![c.raised]))
            .push("lowered", Column::U64(vec![c.lowered]));
        Some(t)
    }
}

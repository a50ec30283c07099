//! Recordings for looking inside a run (`[trace]`): link utilisation over time, stall
//! cycles per router VC by cause, and the hops of watched flows' packets. Each is off
//! unless configured. The link series is sampled from the link counters at interval
//! boundaries (nothing per flit); stalls and watched hops are recorded only in runs
//! compiled with the per-flit hooks (`HOOK`, `engine.rs`), so runs without them pay nothing.

use super::{Column, Table};
use crate::config::TraceConfig;
use crate::error::ConfigError;
use crate::ids::PacketId;
use crate::units::{Clock, Cycle};

/// Most rows a link series may have (intervals × links; about 100 bytes each in its table):
/// beyond, ask for longer intervals.
pub(crate) const MAX_SERIES_ROWS: u64 = 2_000_000;

/// Flits per link per interval, from cumulative counter snapshots.
#[derive(Clone, Debug)]
pub(crate) struct LinkSeries {
    pub interval: Cycle,
    /// The boundaries sampled so far, and the next one due.
    pub times: Vec<Cycle>,
    pub next: Cycle,
    pub end: Cycle,
    /// Per sample: the injection links' counts, then every router port's.
    pub snapshots: Vec<Vec<u64>>,
}

impl LinkSeries {
    /// Samples every `interval` cycles from `start` to `end` (the measurement window).
    pub fn new(interval: Cycle, start: Cycle, end: Cycle) -> LinkSeries {
        LinkSeries { interval, times: vec![start], next: start, end, snapshots: Vec::new() }
    }

    /// Record the boundaries up to `now` with the counters as they are (flits sent before
    /// `now`; none are sent while the loop jumps over idle cycles, so a late sample is
    /// exact).
    pub fn sample(&mut self, now: Cycle, nic: &[u64], router: &[u64]) {
        while self.next <= now && self.snapshots.len() < self.times.len() {
            self.snapshots.push(nic.iter().chain(router).copied().collect());
            if self.next < self.end {
                self.next = (self.next + self.interval).min(self.end);
                self.times.push(self.next);
            }
        }
    }
}

/// A link of the `links` table and where its flit counter is (the injection links' counters,
/// then every router port's, as the series' snapshots are laid out).
pub(crate) struct LinkRow {
    pub kind: &'static str,
    pub src: u64,
    pub src_port: u64,
    pub dst: u64,
    pub dst_port: u64,
    pub counter: usize,
}

impl LinkSeries {
    /// The `link_series` table: a row per interval and link (`links`), the counters being
    /// `now` at boundaries not sampled (the run ended without a cycle at them: no flit is
    /// counted after the window, so the counters as they are serve).
    pub fn table(&self, links: &[LinkRow], now: &[u64]) -> Table {
        let snap = |k: usize| self.snapshots.get(k).map_or(now, Vec::as_slice);
        let intervals = self.times.len().saturating_sub(1);
        let rows = || (0..intervals).flat_map(|k| links.iter().map(move |l| (k, l)));
        let flits: Vec<u64> = rows().map(|(k, l)| snap(k + 1)[l.counter] - snap(k)[l.counter]).collect();
        let span = |k: usize| (self.times[k + 1] - self.times[k]) as f64;
        let utilization = rows().zip(&flits).map(|((k, _), &f)| f as f64 / span(k)).collect();
        let mut t = Table::default();
        t.push("start", Column::U64(rows().map(|(k, _)| self.times[k]).collect()))
            .push("end", Column::U64(rows().map(|(k, _)| self.times[k + 1]).collect()))
            .push("kind", Column::Str(rows().map(|(_, l)| l.kind.to_string()).collect()))
            .push("src", Column::U64(rows().map(|(_, l)| l.src).collect()))
            .push("src_port", Column::U64(rows().map(|(_, l)| l.src_port).collect()))
            .push("dst", Column::U64(rows().map(|(_, l)| l.dst).collect()))
            .push("dst_port", Column::U64(rows().map(|(_, l)| l.dst_port).collect()))
            .push("flits", Column::U64(flits))
            .push("utilization", Column::F64(utilization));
        t
    }
}

/// What a watched packet did (`HopEvent::kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hop {
    /// Its header left the source endpoint (`at`: node).
    Injected,
    /// Its header entered a router's input VC (`at`: router, `port`: input port).
    Arrived,
    /// Its header crossed the crossbar into an output VC (`port`: output port, `vc`).
    Crossed,
    /// Its header left the router on the output link.
    Departed,
    /// Its tail reached the destination endpoint (`at`: node).
    Ejected,
}

impl Hop {
    pub fn name(self) -> &'static str {
        match self {
            Hop::Injected => "injected",
            Hop::Arrived => "arrived",
            Hop::Crossed => "crossed",
            Hop::Departed => "departed",
            Hop::Ejected => "ejected",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct HopEvent {
    pub cycle: Cycle,
    pub flow: u32,
    pub packet: PacketId,
    pub kind: Hop,
    pub at: u32,
    pub port: u32,
    pub vc: u32,
}

/// The watched flows and their packets' hops.
#[derive(Clone, Debug)]
pub(crate) struct Watch {
    flows: Vec<bool>,
    limit: usize,
    /// The first `limit` events (later ones are not recorded).
    pub events: Vec<HopEvent>,
}

impl Watch {
    pub fn new(flows: &[u32], n_flows: usize, limit: u32) -> Watch {
        let mut watched = vec![false; n_flows];
        for &f in flows {
            watched[f as usize] = true;
        }
        Watch { flows: watched, limit: limit as usize, events: Vec::new() }
    }

    #[inline]
    pub fn record(&mut self, e: HopEvent) {
        if !self.flows.get(e.flow as usize).copied().unwrap_or(false) {
            return;
        }
        if self.events.len() < self.limit {
            self.events.push(e);
        }
    }

    /// The `trace` table: a row per recorded hop, in the order they happened.
    pub fn table(&self) -> Table {
        let e = &self.events;
        let mut t = Table::default();
        t.push("cycle", Column::U64(e.iter().map(|e| e.cycle).collect()))
            .push("flow", Column::U64(e.iter().map(|e| e.flow as u64).collect()))
            .push("packet", Column::U64(e.iter().map(|e| e.packet.0 as u64).collect()))
            .push("event", Column::Str(e.iter().map(|e| e.kind.name().to_string()).collect()))
            .push("at", Column::U64(e.iter().map(|e| e.at as u64).collect()))
            .push("port", Column::U64(e.iter().map(|e| e.port as u64).collect()))
            .push("vc", Column::U64(e.iter().map(|e| e.vc as u64).collect()));
        t
    }
}

/// Why an occupied router VC's front flit did not move in a cycle.
pub(crate) const STALL_CAUSES: [&str; 4] = ["vc_alloc", "switch", "output_full", "no_credit"];

/// Stall cycles per router VC record (`Params::lane_index`) and cause.
#[derive(Clone, Debug)]
pub(crate) struct Stalls {
    /// Per input VC record: the last cycle a flit left it through the crossbar.
    pub moved_at: Vec<Cycle>,
    /// Per VC record and cause (`STALL_CAUSES`): cycles.
    pub cycles: Vec<[u64; 4]>,
}

impl Stalls {
    pub fn new(records: usize) -> Stalls {
        Stalls { moved_at: vec![Cycle::MAX; records], cycles: vec![[0; 4]; records] }
    }

    /// The `stalls` table: a row per VC record that stalled (`place`: its router, port and
    /// VC), a column per cause.
    pub fn table(&self, place: impl Fn(usize) -> (u64, u64, u64)) -> Table {
        let rows: Vec<usize> =
            (0..self.cycles.len()).filter(|&i| self.cycles[i].iter().any(|&c| c > 0)).collect();
        let mut t = Table::default();
        t.push("router", Column::U64(rows.iter().map(|&i| place(i).0).collect()))
            .push("port", Column::U64(rows.iter().map(|&i| place(i).1).collect()))
            .push("vc", Column::U64(rows.iter().map(|&i| place(i).2).collect()));
        for (c, name) in STALL_CAUSES.iter().enumerate() {
            t.push(name, Column::U64(rows.iter().map(|&i| self.cycles[i][c]).collect()));
        }
        t
    }
}

/// Everything `[trace]` asked for.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tracing {
    pub series: Option<LinkSeries>,
    pub watch: Option<Watch>,
    pub stalls: Option<Stalls>,
}

impl Tracing {
    /// Check `cfg` (`[trace]`) and set up its recordings for a window `[start, end)`,
    /// `links` links, `flows` flows and `vc_records` router VC records.
    pub fn build(
        cfg: Option<&TraceConfig>,
        clock: &Clock,
        (start, end): (Cycle, Cycle),
        links: usize,
        flows: usize,
        vc_records: usize,
    ) -> Result<Tracing, Vec<ConfigError>> {
        let Some(cfg) = cfg else { return Ok(Tracing::default()) };
        let mut errs = Vec::new();
        let series = match cfg.link_series {
            None => None,
            Some(d) => {
                let interval = clock.duration_cycles(d);
                let rows = (end - start).div_ceil(interval.max(1)).saturating_mul(links as u64);
                if interval == 0 {
                    errs.push(ConfigError::new(
                        "trace.link_series",
                        format!("must be at least one cycle, got {d}"),
                    ));
                } else if rows > MAX_SERIES_ROWS {
                    errs.push(ConfigError::new(
                        "trace.link_series",
                        format!(
                            "{d} over the measurement window gives {rows} rows ({links} links); at most \
                             {MAX_SERIES_ROWS}: choose a longer interval"
                        ),
                    ));
                }
                Some(interval)
            }
        };
        if cfg.watch_limit == 0 {
            errs.push(ConfigError::new(
                "trace.watch_limit",
                "must be >= 1 (events recorded for the watched flows), got 0",
            ));
        }
        if let Some(&f) = cfg.watch_flows.iter().find(|&&f| f as usize >= flows) {
            errs.push(ConfigError::new(
                "trace.watch_flows",
                format!("flows are numbered 0..{} (rows of the flows table), got {f}", flows - 1),
            ));
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let series = series.map(|interval| LinkSeries::new(interval, start, end));
        let watch =
            (!cfg.watch_flows.is_empty()).then(|| Watch::new(&cfg.watch_flows, flows, cfg.watch_limit));
        let stalls = cfg.stalls.then(|| Stalls::new(vc_records));
        Ok(Tracing { series, watch, stalls })
    }

    /// Whether the per-flit hooks must be compiled into the run.
    pub fn per_flit(&self) -> bool {
        self.watch.is_some() || self.stalls.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_series_samples_each_boundary_once_even_after_a_jump() {
        let mut s = LinkSeries::new(10, 100, 125);
        s.sample(100, &[0], &[0, 0]);
        s.sample(107, &[3], &[1, 0]);
        // (the loop jumped from 107 to 131: nothing moved meanwhile)
        s.sample(131, &[5], &[2, 9]);
        assert_eq!(s.times, [100, 110, 120, 125]);
        assert_eq!(s.snapshots, [vec![0, 0, 0], vec![5, 2, 9], vec![5, 2, 9], vec![5, 2, 9]]);
        s.sample(200, &[6], &[2, 9]);
        assert_eq!(s.snapshots.len(), 4, "nothing after the window's end");
    }

    #[test]
    fn only_watched_flows_are_recorded_up_to_the_limit() {
        let mut w = Watch::new(&[1], 3, 2);
        let e = |flow| HopEvent {
            cycle: 0,
            flow,
            packet: PacketId(0),
            kind: Hop::Arrived,
            at: 0,
            port: 0,
            vc: 0,
        };
        for f in [0, 1, 2, 1, 1] {
            w.record(e(f));
        }
        assert_eq!(w.events.len(), 2);
    }
}

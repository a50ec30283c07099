//! The memory a run needs, estimated from its configuration before anything big is built,
//! and the limit it is held to (issue 21: a 1000x1000 mesh validated, then asked for 12 GB).
//!
//! The estimate adds up what `build/mod.rs` and the components' constructors allocate
//! (`Routers::new`, `Endpoints::new`, `Traffic::new`, `Metrics::new`), with the same
//! shapes computed here from the same inputs and each record's size taken from its type
//! (`size_of`), so a record that grows grows the estimate. With R routers of P ports, N
//! nodes, C = `router.vcs`, L lanes per port (C; 2C in the preemptive router, the extra
//! buffers) and S = L | 1 records per port (the cache-set padding of `Params::lane_index`):
//!
//! - router input buffers: R·P·S · (max(input_buffer, extra_buffer) + 2 if preemptive − 1)
//!   flits of 16 bytes (`Rings`: the front flit lives in the VC record);
//! - router output buffers: R·P·S · (output_buffer − 1) flits;
//! - VC records: R·P·S · (`InVc` + `OutVc`, 64 bytes each, + the resume slot);
//! - router ports: R·P · (masks, schedulers, round-robin pointers, the P-wide
//!   `ip_to_out` row, rate-key state per lane for VirtualClock / Fair Queueing);
//! - topology and routing: the port table, and for a fabric its R·N forwarding table
//!   (twice: the topology's and the routing's copy);
//! - endpoints: per node its queues, L injection records and credits, its scheduler and
//!   rate keys, and the NIC model's state;
//! - traffic and measurement: per source (one per node and stream) its record, calendar
//!   entry and flow statistics; per node and port the counters; fixed-destination tables
//!   (N per pattern) and traffic matrices (N² weights);
//! - links and packets in flight: the timing wheels (a flit and a credit per port and node
//!   for each cycle of link delay), a packet record per node's lane and per 16 VCs, and a
//!   message per packet and node;
//! - headroom: 5% of the above and 32 MB, for what grows without a bound the estimate
//!   could give: messages queued at a saturated source, the latency histograms, the
//!   allocator's own.
//!
//! Not counted: the process itself (its binary, the Python interpreter), messages queued
//! at sources past the headroom (a run that loaded for that long is stopped by its drain
//! limit) and the recorded messages (`record_messages`: ~64 bytes per measured message).
//! Measured against the growth of peak resident memory in `tests/suite/memory_estimate.rs`
//! (README "Memory"): within 1.1x of it on large networks, above it everywhere.

use crate::config::{
    Config, MemoryEstimate, MemoryPart, NicBuffer, NicModel, NodeSet, Process, RouterKind, SchedulerConfig,
    TopologyConfig,
};
use crate::error::ConfigError;
use crate::units::ByteSize;
use std::mem::size_of;

/// The network's shape, counted in `u128` so that any configured size can be estimated.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    pub routers: u128,
    pub ports: u128,
    pub nodes: u128,
    /// A fabric's forwarding table (R·N bytes, held twice).
    pub table: bool,
    /// The longest latency the topology sets for some links (`Topology::longest_link`):
    /// a dragonfly's global channels before building; every link's once built.
    pub longest_link: u32,
}

impl Shape {
    /// From the configuration alone (`None`: a fabric, whose file says, or no valid shape).
    pub fn of_config(t: &TopologyConfig) -> Option<Shape> {
        let grid = |k: Option<u32>, n: Option<u32>, dims: &Option<Vec<u32>>| -> Option<Shape> {
            let dims: Vec<u128> = match (k, n, dims) {
                (Some(k), Some(n), None) if (1..=8).contains(&n) => vec![k as u128; n as usize],
                (None, None, Some(d)) if (1..=8).contains(&d.len()) => d.iter().map(|&x| x as u128).collect(),
                _ => return None,
            };
            let routers = dims.iter().try_fold(1u128, |a, &d| a.checked_mul(d))?;
            // (past the topology's own limit it is refused before anything is allocated)
            if routers > 1 << 20 {
                return None;
            }
            Some(Shape {
                routers,
                ports: 1 + 2 * dims.len() as u128,
                nodes: routers,
                table: false,
                longest_link: 0,
            })
        };
        match t {
            TopologyConfig::Star { ports } => Some(Shape {
                routers: 1,
                ports: *ports as u128,
                nodes: *ports as u128,
                table: false,
                longest_link: 0,
            }),
            TopologyConfig::Mesh { k, n, dims } | TopologyConfig::Torus { k, n, dims } => grid(*k, *n, dims),
            // (a fly has a fat tree's counts: n stages of k^(n-1) routers with 2k ports)
            TopologyConfig::FatTree { k, n } | TopologyConfig::Fly { k, n } => {
                let (k, n) = (*k as u128, *n);
                if n == 0 || n > 8 {
                    return None;
                }
                let per_level = k.checked_pow(n - 1)?;
                if per_level * k > 1 << 20 {
                    return None;
                }
                Some(Shape {
                    routers: per_level * n as u128,
                    ports: 2 * k,
                    nodes: per_level * k,
                    table: false,
                    longest_link: 0,
                })
            }
            TopologyConfig::Dragonfly { a, p, h, global_latency } => {
                let (a, p, h) = (*a as u128, *p as u128, *h as u128);
                let routers = a * (a * h + 1);
                if routers > 1 << 20 {
                    return None;
                }
                Some(Shape {
                    routers,
                    ports: (p + a + h).saturating_sub(1),
                    nodes: routers * p,
                    table: false,
                    longest_link: global_latency.unwrap_or(0),
                })
            }
            TopologyConfig::Flatfly { k, n, c, .. } => {
                let (k, c) = (*k as u128, *c as u128);
                let routers = k.checked_pow(*n)?;
                if routers > 1 << 20 {
                    return None;
                }
                Some(Shape {
                    routers,
                    ports: c + *n as u128 * k.saturating_sub(1),
                    nodes: routers * c,
                    table: false,
                    // (a placement's channel lengths: counted once built)
                    longest_link: 0,
                })
            }
            TopologyConfig::Cmesh { k, express_latency, .. } => {
                let routers = (*k as u128).pow(2);
                if routers > 1 << 20 {
                    return None;
                }
                use crate::topology::cmesh::{CONCENTRATION, PORTS};
                Some(Shape {
                    routers,
                    ports: PORTS as u128,
                    nodes: routers * CONCENTRATION as u128,
                    table: false,
                    longest_link: express_latency.unwrap_or(0),
                })
            }
            TopologyConfig::IbFabric { .. } | TopologyConfig::Anynet { .. } => None,
        }
    }

    /// Of a built topology.
    pub fn of_topology(t: &crate::topology::Topology) -> Shape {
        Shape {
            routers: t.routers as u128,
            ports: t.ports as u128,
            nodes: t.nodes as u128,
            table: matches!(t.shape, crate::topology::Shape::Fabric { .. }),
            longest_link: t.longest_link(),
        }
    }
}

/// The traffic's part of the shape: sources (one per node and stream) and the pattern
/// tables the specs hold.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TrafficShape {
    pub sources: u128,
    /// Patterns with a destination per node (`Pattern::Fixed`).
    pub fixed: u128,
    /// Traffic matrices (N² weights each).
    pub matrices: u128,
    /// Frames of synthetic video traces generated (ten minutes at the frame rate).
    pub video_frames: u128,
    /// Messages created per cycle over the network in the busiest phase (known once the
    /// sources are built; 0 before): what `record_messages` keeps a row of.
    pub messages_per_cycle: f64,
}

impl TrafficShape {
    /// From the configuration alone, before the specs are built: a video source's streams
    /// per node are taken as `streams`, or 1 when the load decides them.
    pub fn of_config(cfg: &Config, nodes: u128) -> TrafficShape {
        let mut t = TrafficShape::default();
        for e in &cfg.traffic {
            let at = match &e.sources {
                NodeSet::All(_) => nodes,
                NodeSet::List(l) => (l.len() as u128).min(nodes),
            };
            let streams = match &e.process {
                Process::Video { streams, traces, frame_rate, .. } => {
                    if traces.is_empty() && frame_rate.is_finite() && *frame_rate > 0.0 {
                        t.video_frames += (frame_rate.min(10_000.0) * 600.0).ceil() as u128;
                    }
                    streams.unwrap_or(1).max(1) as u128
                }
                _ => 1,
            };
            t.sources = t.sources.saturating_add(at.saturating_mul(streams));
            t.add_pattern(&e.pattern);
        }
        t
    }

    pub fn add_pattern(&mut self, p: &crate::config::PatternConfig) {
        use crate::config::PatternConfig as P;
        match p {
            P::Uniform | P::HotSpot { .. } => {}
            P::Matrix { .. } => self.matrices += 1,
            _ => self.fixed += 1,
        }
    }
}

/// Bytes of `n` records of `T`.
fn of<T>(n: u128) -> u128 {
    n.saturating_mul(size_of::<T>() as u128)
}

/// The fixed part of the headroom: what grows without a bound the estimate could give
/// (messages queued at a saturated source, the latency histograms, the allocator's own),
/// measured at up to 13 MB in `tests/suite/memory_estimate.rs` (an 8x8 mesh at load 0.9).
const HEADROOM: u128 = 32 << 20;

/// The estimate for `cfg` on `shape` with `traffic` (see the module comment).
pub(crate) fn estimate(cfg: &Config, shape: Shape, traffic: TrafficShape) -> Vec<MemoryPart> {
    use crate::endpoint::Injecting;
    use crate::flit::{Flit, Message, Packet};
    use crate::router::{InVc, OutVc};
    use crate::sched::{FqFlow, FqPort, RoundRobin, Scheduler, VcClock};

    let rc = &cfg.router;
    let (r, p, n) = (shape.routers, shape.ports, shape.nodes);
    let vcs = rc.vcs.clamp(1, 32) as u128;
    let preemptive = rc.kind == RouterKind::Preemptive;
    let lanes = if preemptive { 2 * vcs } else { vcs };
    let stride = lanes | 1;
    let n_ports = r.saturating_mul(p);
    let n_vcs = n_ports.saturating_mul(stride);
    let in_cap = rc.input_buffer.max(rc.preemption.extra_buffer) as u128 + if preemptive { 2 } else { 0 };
    let slots = |cap: u128| cap.saturating_sub(1).max(1);
    let size = "routers x ports";
    let vc_size = format!("{size} x router.vcs{}", if preemptive { " x 2 (extra buffers)" } else { "" });
    let mut parts = Vec::new();
    let mut part = |name: &'static str, bytes: u128, drivers: String| {
        parts.push(MemoryPart { name, bytes: bytes.min(u64::MAX as u128) as u64, drivers });
    };

    let in_driver = if preemptive && rc.preemption.extra_buffer > rc.input_buffer {
        "router.preemption.extra_buffer"
    } else {
        "router.input_buffer"
    };
    part(
        "router input buffers",
        of::<Flit>(n_vcs.saturating_mul(slots(in_cap))),
        format!("{vc_size} x {in_driver}"),
    );
    part(
        "router output buffers",
        of::<Flit>(n_vcs.saturating_mul(slots(rc.output_buffer as u128))),
        format!("{vc_size} x router.output_buffer"),
    );
    // (IBA CC's and RED's marking keeps a queue per output VC and a target per input VC:
    // `marking.rs`)
    use crate::config::MarkingConfig;
    let queues =
        matches!(rc.marking, Some(MarkingConfig::IbaCc { threshold: 1.., .. } | MarkingConfig::Red { .. }));
    let port_queues = if queues { 4 + 8 } else { 0 };
    let vc_records = n_vcs.saturating_mul((size_of::<InVc>() + size_of::<OutVc>() + 4 + port_queues) as u128);
    part("VC records", vc_records, vc_size.clone());

    // Per router port: 16 u32 masks and addresses, a u64 mask, the (router, port) pair, the
    // per-class masks, the round-robin pointers, two schedulers and the ip_to_out row.
    let per_port =
        16 * 4 + 8 + 8 + 12 + size_of::<RoundRobin>() as u128 + 3 + 2 * size_of::<Scheduler>() as u128;
    // (per port: the VCs' clocks, the rebase offset and the mask of clocked VCs)
    let rate_keys = |cfg: &SchedulerConfig| -> u128 {
        match cfg {
            SchedulerConfig::VirtualClock { .. } => of::<VcClock>(lanes) + 16,
            SchedulerConfig::FairQueueing => {
                of::<VcClock>(lanes) + 16 + of::<FqFlow>(lanes) + of::<FqPort>(1)
            }
            _ => 0,
        }
    };
    let keys = rate_keys(&rc.crossbar()) + rate_keys(&rc.output());
    // (per router: its work count, four per-port bit masks and its activity bit)
    let per_router = 4 + 4 * 8 + 1;
    let port_records = n_ports.saturating_mul(per_port + 4 * p + keys).saturating_add(r * per_router);
    part("router ports", port_records, format!("{size} x (ports + router.vcs with a rate scheduler)"));

    let mut stream_clocks = 0;
    // (`[router] virtual_clock.state = "stream"`: a clock per port and flow, for each
    // VirtualClock scheduling point: `sched::RateKeys::keep_streams`)
    if rc.virtual_clock.state == crate::config::VirtualClockState::Stream {
        let points = [rc.crossbar(), rc.output()]
            .iter()
            .filter(|c| matches!(c, SchedulerConfig::VirtualClock { .. }))
            .count() as u128;
        let clocks =
            of::<VcClock>(n_ports.saturating_mul(traffic.sources.saturating_add(1)).saturating_mul(points));
        stream_clocks = clocks;
        part(
            "VirtualClock stream clocks",
            clocks,
            format!("{size} x sources (router.virtual_clock.state = \"stream\")"),
        );
    }
    // `simulation.threads`: each further shard holds the records above for the whole
    // network (`router/shards.rs`), initialised; its buffers are mapped as flits reach them,
    // only at its own routers, so the buffers are counted once.
    let shards = (cfg.simulation.threads.max(1) as u128).min(r.max(1));
    if shards > 1 {
        part(
            "router shards (threads)",
            (shards - 1)
                .saturating_mul(vc_records.saturating_add(port_records).saturating_add(stream_clocks)),
            "(simulation.threads - 1) x (VC records + router ports + stream clocks)".to_string(),
        );
    }

    // `[routing] lmc`: LID path tables (`routing/lid_paths.rs`): a next hop per switch,
    // destination and LID, held twice while built; on other than a 2-D grid, a VC layer
    // per (source, destination, LID); the channel dependency graphs, a list per link and
    // VC class.
    if let Some(lmc) = cfg.routing.lmc {
        let lids = 1u128 << lmc.min(7);
        let grid = matches!(
            &cfg.topology,
            TopologyConfig::Mesh { n: Some(2), .. } | TopologyConfig::Torus { n: Some(2), .. }
        ) || matches!(&cfg.topology, TopologyConfig::Mesh { dims: Some(d), .. } | TopologyConfig::Torus { dims: Some(d), .. } if d.len() == 2);
        let layers = if grid { 0 } else { n.saturating_mul(n).saturating_mul(lids) };
        let graphs = n_ports.saturating_mul(vcs).saturating_mul(24 + 8 * p);
        part(
            "LID path tables",
            r.saturating_mul(n)
                .saturating_mul(lids)
                .saturating_mul(2)
                .saturating_add(layers)
                .saturating_add(graphs),
            "switches x nodes x 2^routing.lmc".into(),
        );
    }
    let table = if shape.table { 2 * r.saturating_mul(n) + 8 * n_ports } else { 0 };
    part(
        "topology and routing",
        of::<crate::topology::Peer>(n_ports).saturating_add(8 * n).saturating_add(table),
        if shape.table { "switches x nodes (the fabric's forwarding table)".into() } else { size.into() },
    );

    let nic_sched = cfg.endpoint.scheduler.clone().unwrap_or_else(|| rc.crossbar());
    let per_node = 3 * size_of::<std::collections::VecDeque<u32>>() as u128
        + lanes * (size_of::<Injecting>() as u128 + 4 + 1)
        + 4 * 6
        + 2 * 12
        + 2
        + size_of::<RoundRobin>() as u128
        + size_of::<Scheduler>() as u128
        + rate_keys(&nic_sched);
    let nic = if cfg.endpoint.model == NicModel::Ideal {
        0
    } else {
        let buffers = if cfg.endpoint.buffer == NicBuffer::Shared { 1 } else { vcs };
        size_of::<crate::endpoint::nic::Nic>() as u128
            + buffers * (4 + size_of::<std::collections::VecDeque<u32>>() as u128)
    };
    part("endpoints", n.saturating_mul(per_node + nic), "nodes x router.vcs (and the NIC model)".into());

    let per_source = size_of::<crate::traffic::Source>() as u128
        + 24 // its calendar entry
        + size_of::<crate::metrics::FlowStats>() as u128;
    part(
        "traffic and measurement",
        traffic
            .sources
            .saturating_mul(per_source)
            .saturating_add(n.saturating_mul(size_of::<crate::metrics::NodeStats>() as u128 + 8))
            .saturating_add(8 * n_ports)
            .saturating_add(traffic.fixed.saturating_mul(8 * n))
            .saturating_add(traffic.matrices.saturating_mul(8 * n.saturating_mul(n)))
            .saturating_add(traffic.video_frames * 16),
        "sources (nodes x streams), nodes x ports, pattern tables".into(),
    );

    // `[trace]`: the link series is capped in rows (`trace::MAX_SERIES_ROWS`, a u64 per link
    // per interval, a list per interval), watched hops at `watch_limit` events, stall
    // counters a record per VC.
    if let Some(t) = &cfg.trace {
        use crate::metrics::trace::{HopEvent, MAX_SERIES_ROWS};
        let cap = MAX_SERIES_ROWS as u128;
        let links = n_ports.saturating_add(n).max(1);
        let series = if t.link_series.is_some() { cap * 8 + (cap / links + 1) * 32 } else { 0 };
        let watch = if t.watch_flows.is_empty() { 0 } else { of::<HopEvent>(t.watch_limit as u128) };
        let stalls = if t.stalls { n_vcs.saturating_mul(8 + 32) } else { 0 };
        part(
            "trace",
            series.saturating_add(watch).saturating_add(stalls),
            "trace.link_series (rows capped), trace.watch_limit, routers x ports x router.vcs".into(),
        );
    }

    // `simulation.record_messages`: a row per measured message (`metrics::MessageRecords`:
    // six u64 columns and the class's name, about 96 bytes, the columns grown by doubling).
    if cfg.simulation.record_messages {
        let clock = crate::units::Clock {
            flit_bits: cfg.physical.flit_bits.max(1),
            link_bits_per_second: cfg.physical.link_bandwidth.bits_per_second,
        };
        let measured = traffic.messages_per_cycle * clock.duration_cycles(cfg.simulation.measure) as f64;
        part(
            "recorded messages",
            (RECORD_BYTES * measured).min(u64::MAX as f64) as u128,
            "messages per cycle x simulation.measure (simulation.record_messages)".into(),
        );
    }

    // What a run adds as it goes, bounded: the links' timing wheels (a flit and a credit per
    // port and node per cycle of delay), a packet per node's lane and per VC holding one
    // (the worm spans many; one in 16 is plenty at any load a run completes at), a message
    // per packet and per node.
    let pl = &rc.pipeline;
    let link = rc.link_latency.max(cfg.endpoint.link_latency.unwrap_or(0)).max(shape.longest_link);
    let out = pl.output.max(cfg.endpoint.output_stage);
    let credit = rc.credit_latency.saturating_add(shape.longest_link);
    let delay = ((out.saturating_add(link)).max(credit) as u128 + 1).next_power_of_two();
    let links = delay
        .saturating_mul(n_ports.saturating_add(n))
        .saturating_mul((size_of::<crate::links::Arrival>() + size_of::<crate::links::CreditMsg>()) as u128);
    let packets = n.saturating_mul(lanes).saturating_add(n_vcs / 16);
    part(
        "links and packets in flight",
        links.saturating_add(of::<Packet>(packets)).saturating_add(of::<Message>(packets.saturating_add(n))),
        "ports and nodes x link delays; nodes x router.vcs".into(),
    );
    let so_far = parts.iter().fold(0u128, |a, p| a.saturating_add(p.bytes as u128));
    parts.push(MemoryPart {
        name: "headroom",
        bytes: (HEADROOM + so_far / 20).min(u64::MAX as u128) as u64,
        drivers: "5% of the rest, and a fixed part".into(),
    });
    parts
}

/// Bytes per recorded message, growth included (see `estimate`).
const RECORD_BYTES: f64 = 144.0;

/// The memory limit in force: `[simulation] memory_limit`, else `QOSNET_MEMORY_LIMIT`, else
/// what the machine has available (the least of /proc/meminfo's MemAvailable and the
/// cgroup's room); unlimited when none says.
pub(crate) fn limit(cfg: &Config) -> Result<(u64, String), ConfigError> {
    if let Some(l) = cfg.simulation.memory_limit {
        return Ok((l.0, "simulation.memory_limit".into()));
    }
    if let Ok(v) = std::env::var("QOSNET_MEMORY_LIMIT") {
        return ByteSize::parse(&v)
            .map(|l| (l.0, "QOSNET_MEMORY_LIMIT".into()))
            .map_err(|e| ConfigError::new("simulation.memory_limit", format!("QOSNET_MEMORY_LIMIT: {e}")));
    }
    Ok(machine_available().unwrap_or((u64::MAX, "unknown: no limit".into())))
}

/// The memory this process may still take: MemAvailable (else MemTotal) from
/// /proc/meminfo, or less if its cgroup (v2) allows less.
fn machine_available() -> Option<(u64, String)> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.lines().find(|l| l.starts_with(name))?;
        line.split_whitespace().nth(1)?.parse::<u64>().ok().map(|kb| kb * 1024)
    };
    let (mut bytes, mut source) = match field("MemAvailable:") {
        Some(b) => (b, "the machine's available memory (MemAvailable)".to_string()),
        None => (field("MemTotal:")?, "the machine's memory (MemTotal)".to_string()),
    };
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|s| s.trim().parse::<u64>().ok());
    if let (Some(max), Some(current)) =
        (read("/sys/fs/cgroup/memory.max"), read("/sys/fs/cgroup/memory.current"))
    {
        let room = max.saturating_sub(current);
        if room < bytes {
            (bytes, source) = (room, "the cgroup's memory.max less its memory.current".into());
        }
    }
    Some((bytes, source))
}

/// The parts, their total and the limit.
pub(crate) fn assemble(parts: Vec<MemoryPart>, (limit, limit_source): (u64, String)) -> MemoryEstimate {
    let total = parts.iter().fold(0u64, |a, p| a.saturating_add(p.bytes));
    MemoryEstimate { parts, total, limit, limit_source }
}

/// The estimate with its limit; an error naming what drives it when over.
pub(crate) fn check(cfg: &Config, parts: Vec<MemoryPart>) -> Result<MemoryEstimate, ConfigError> {
    let estimate = assemble(parts, limit(cfg)?);
    if estimate.total <= estimate.limit {
        return Ok(estimate);
    }
    Err(over_limit(cfg, &estimate))
}

impl Config {
    /// The memory a run of this configuration needs when it is built, and the limit it
    /// would be held to, without validating the rest (a fabric's file is read for its
    /// size; a video source whose load decides its streams counts one per node).
    /// `validate` refuses a configuration whose estimate is over the limit.
    pub fn estimate_memory(&self) -> Result<MemoryEstimate, crate::error::ConfigErrors> {
        let shape = match Shape::of_config(&self.topology) {
            Some(s) => s,
            None => {
                let t = crate::topology::Topology::build_in(&self.topology, &self.files())?;
                Shape::of_topology(&t)
            }
        };
        let traffic = TrafficShape::of_config(self, shape.nodes);
        Ok(assemble(estimate(self, shape, traffic), limit(self)?))
    }
}

/// "needs about 12.1 GB, more than the limit ...; it grows with ...", at the field to change.
fn over_limit(cfg: &Config, e: &MemoryEstimate) -> ConfigError {
    let mut big: Vec<&MemoryPart> = e.parts.iter().filter(|p| p.bytes > e.total / 20).collect();
    big.sort_by_key(|p| std::cmp::Reverse(p.bytes));
    let listed: Vec<String> =
        big.iter().map(|p| format!("{} {} ({})", p.name, ByteSize(p.bytes), p.drivers)).collect();
    let rc = &cfg.router;
    let shape = Shape::of_config(&cfg.topology);
    let size = shape.map_or(String::new(), |s| {
        format!(" on {} routers of {} ports and {} nodes", s.routers, s.ports, s.nodes)
    });
    let culprit = culprit(cfg, e);
    let advice = match culprit.as_str() {
        "topology" => "Make the network smaller".to_string(),
        "traffic" => "Give fewer sources, or fewer video streams per node".to_string(),
        field => format!("Lower {field}"),
    };
    let message = format!(
        "the run needs about {} of memory{size} (router.vcs = {}, router.input_buffer = {}, \
         router.output_buffer = {} flits per VC), more than the limit of {} ({}): {}. \
         {advice}, or raise simulation.memory_limit (or QOSNET_MEMORY_LIMIT)",
        ByteSize(e.total),
        rc.vcs,
        rc.input_buffer,
        rc.output_buffer,
        ByteSize(e.limit),
        e.limit_source,
        listed.join(", ")
    );
    ConfigError::new(culprit, message)
}

/// The field most to blame: the topology when even the default router would not fit on
/// it, else the largest of the router's per-VC settings raised from its default.
fn culprit(cfg: &Config, e: &MemoryEstimate) -> String {
    let largest =
        e.parts.iter().filter(|p| p.name != "headroom").max_by_key(|p| p.bytes).map_or("", |p| p.name);
    match largest {
        "traffic and measurement" => return "traffic".into(),
        "topology and routing" => return "topology".into(),
        "LID path tables" => return "routing.lmc".into(),
        "recorded messages" => return "simulation.record_messages".into(),
        "trace" => {
            let watch = cfg.trace.as_ref().is_some_and(|t| !t.watch_flows.is_empty());
            return if watch { "trace.watch_limit" } else { "trace" }.into();
        }
        _ => {}
    }
    let rc = &cfg.router;
    let default = crate::config::RouterConfig::default();
    let mut plain = cfg.clone();
    plain.router.vcs = rc.vcs.min(default.vcs);
    plain.router.input_buffer = rc.input_buffer.min(default.input_buffer);
    plain.router.output_buffer = rc.output_buffer.min(default.output_buffer);
    plain.router.preemption.extra_buffer = rc.preemption.extra_buffer.min(default.input_buffer);
    let shape = Shape::of_config(&cfg.topology);
    let plain_total = shape.map_or(u64::MAX, |s| {
        estimate(&plain, s, TrafficShape::default()).iter().fold(0u64, |a, p| a.saturating_add(p.bytes))
    });
    if plain_total > e.limit {
        return "topology".into();
    }
    // Bytes per VC each setting stands for, among those raised from their defaults.
    [
        ("router.output_buffer", rc.output_buffer, default.output_buffer, 16),
        ("router.input_buffer", rc.input_buffer, default.input_buffer, 16),
        ("router.preemption.extra_buffer", rc.preemption.extra_buffer, default.input_buffer, 16),
        ("router.vcs", rc.vcs, default.vcs, 128 + 16 * 80),
    ]
    .into_iter()
    .filter(|&(_, v, d, _)| v > d)
    .max_by_key(|&(_, v, _, per)| v as u64 * per)
    .map_or("topology", |(f, ..)| f)
    .into()
}

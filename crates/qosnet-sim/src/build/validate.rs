//! Semantic validation: every problem in a parsed configuration, each with its path and
//! the allowed values. Also builds what validation needs anyway (topology, routing,
//! traffic), so the engine never re-derives them.

use crate::admission::CallAdmission;
use crate::config::{
    ClassCounts, Config, NodeSet, Process, RouterKind, SchedulerConfig, TopologyConfig, TrafficClass,
    VcClasses, VtickConfig, MAX_CYCLES,
};
use crate::control::Agents;
use crate::endpoint::nic::NicParams;
use crate::error::{ConfigError, ConfigErrors};
use crate::router::Marking;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::pattern::Pattern;
use crate::traffic::{ProcessSpec, TrafficSpec};
use crate::units::Clock;

mod memory;

/// The parts of a configuration that validation had to build.
pub struct Validated {
    pub clock: Clock,
    pub topology: Topology,
    pub routing: Routing,
    /// Per spec, the nodes that run it.
    pub spec_nodes: Vec<Vec<u32>>,
    /// Per class: the VCs it may be given, and its own split (see `engine::Params`).
    pub class_vcs: [u32; 3],
    pub home_vcs: [u32; 3],
    pub nic: NicParams,
    /// DRB's contraction timer, cycles (`[routing] multipath`; 0 without DRB).
    pub(crate) drb_timer: crate::units::Cycle,
    /// The endpoints' control agents (`[endpoint] agent`).
    pub(crate) agents: Agents,
    /// The switch outputs' marking (`[router] marking`).
    pub(crate) marking: Marking,
    /// The memory the run will take when built, and the limit it was checked against.
    pub memory: crate::config::MemoryEstimate,
    /// The flows, their agents and recordings, built (`flows.rs`).
    pub flows: super::flows::Flows,
}

/// A video source's streams: its traces (read, or made by the synthetic model) at the frame
/// rate, and the mean rate of one stream in flits per cycle.
#[allow(clippy::too_many_arguments)] // one per field of the `video` process table
fn video_spec(
    cfg: &Config,
    clock: &Clock,
    path: &str,
    traces: &[crate::config::FilePath],
    format: crate::traffic::video::TraceFormat,
    fps: f64,
    mean_rate: Option<crate::units::Bandwidth>,
    scale: crate::config::video::TraceScale,
    synthetic: &crate::traffic::video::SyntheticVbr,
) -> Result<(crate::traffic::video::VideoSpec, f64), ConfigError> {
    use crate::config::video::TraceScale;
    use crate::traffic::video::{parse_trace, resolved_format, TraceFormat, VideoSpec};
    use rand::SeedableRng;
    if !(fps > 0.0 && fps <= 10_000.0) {
        return Err(ConfigError::new(
            format!("{path}.process.frame_rate"),
            format!("must be in (0, 10000] frames/s, got {fps}"),
        ));
    }
    if let Some(r) = mean_rate {
        if !(r.bits_per_second > 0.0 && clock.flits_per_cycle(r) <= 1.0) {
            return Err(ConfigError::new(
                format!("{path}.process.mean_rate"),
                format!("must be > 0 and at most the link bandwidth, got {r}"),
            ));
        }
    }
    if scale != TraceScale::Each {
        let name = if scale == TraceScale::Own { "own" } else { "common" };
        if traces.is_empty() {
            return Err(ConfigError::new(
                format!("{path}.process.scale"),
                format!(
                    "\"{name}\" needs `traces` (the synthetic model has no rate of its own): use \"each\""
                ),
            ));
        }
        match (scale, mean_rate) {
            (TraceScale::Own, Some(r)) => {
                return Err(ConfigError::new(
                    format!("{path}.process.mean_rate"),
                    format!(
                        "is not used with scale = \"own\" (each trace keeps its own rate), got {r}: \
                         remove it, or use scale = \"common\" or \"each\""
                    ),
                ))
            }
            (TraceScale::Common, None) => {
                return Err(ConfigError::new(
                    format!("{path}.process.mean_rate"),
                    "scale = \"common\" needs the streams' average rate, e.g. \"4 Mb/s\"",
                ))
            }
            _ => {}
        }
        for (i, p) in traces.iter().enumerate() {
            if resolved_format(p.extension(), format) == TraceFormat::Plain {
                return Err(ConfigError::new(
                    format!("{path}.process.traces[{i}]"),
                    format!(
                        "{}: a plain list of values, whose units are not stated, has no rate of its own: \
                         scale = \"{name}\" needs EvalVid (`.st`) or LTE-Sim (`.dat`) traces in bytes; \
                         use scale = \"each\" for it",
                        p.shown()
                    ),
                ));
            }
        }
    }
    let mut loaded = Vec::new();
    if traces.is_empty() {
        synthetic.validate().map_err(|e| ConfigError::new(format!("{path}.process.synthetic"), e))?;
        let Some(r) = mean_rate else {
            return Err(ConfigError::new(
                format!("{path}.process.mean_rate"),
                "the synthetic model (no `traces`) needs a mean rate, e.g. \"4 Mb/s\"",
            ));
        };
        // Ten minutes of video, the same for every run with the same seed.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(crate::traffic::mix_seed(
            cfg.simulation.seed,
            0x0056_4944_454f, // "VIDEO"
        ));
        let frames = (fps * 600.0).ceil() as usize;
        loaded.push(synthetic.generate(frames, &mut rng).scaled_to(r.bits_per_second, fps));
    }
    for (i, p) in traces.iter().enumerate() {
        let field = format!("{path}.process.traces[{i}]");
        let files = cfg.files();
        let read = files.read(&field, p)?;
        let t = parse_trace(&read.text, &read.shown, p.extension(), format)
            .map_err(|e| files.about_contents(ConfigError::new(&field, e), &read.shown, "video trace"))?;
        loaded.push(match (scale, mean_rate) {
            (TraceScale::Each, Some(r)) => t.scaled_to(r.bits_per_second, fps),
            _ => t,
        });
    }
    if let (TraceScale::Common, Some(r), false) = (scale, mean_rate, loaded.is_empty()) {
        // One factor: the traces' average rate becomes `mean_rate`, their ratios kept.
        let average = loaded.iter().map(|t| t.mean_bytes()).sum::<f64>() / loaded.len() as f64;
        let k = r.bits_per_second / (average * 8.0 * fps);
        for t in &mut loaded {
            t.frame_bytes.iter_mut().for_each(|b| *b *= k);
        }
    }
    let period = 1.0 / fps / clock.cycle_seconds();
    let flits_per_cycle: Vec<f64> =
        loaded.iter().map(|t| clock.bytes_to_flits(t.mean_bytes()) / period).collect();
    let vticks =
        flits_per_cycle.iter().map(|r| (1.0 / r).round().clamp(1.0, u32::MAX as f64) as u32).collect();
    let stream_rate = flits_per_cycle.iter().sum::<f64>() / flits_per_cycle.len() as f64;
    Ok((
        VideoSpec {
            traces: loaded,
            period,
            streams_by_phase: vec![0],
            vticks,
            flits_per_cycle,
            first_deadline: Default::default(),
        },
        stream_rate,
    ))
}

/// Check one scheduler configuration's parameters.
/// `[router] allocator`: iterations in range, and the combinations the allocators support.
fn check_allocator(errs: &mut Vec<ConfigError>, rc: &crate::config::RouterConfig) {
    use crate::config::AllocatorKind;
    let a = &rc.allocator;
    if let Some(n) = a.iterations {
        if a.kind == AllocatorKind::Wavefront {
            errs.push(ConfigError::new(
                "router.allocator.iterations",
                format!("the wavefront allocator finds a maximal matching in one pass and takes no iterations; remove the key, got {n}"),
            ));
        } else {
            range(errs, "router.allocator.iterations", n, 1, 16);
        }
    }
    if a.kind != AllocatorKind::SeparableInputFirst && rc.speedup > 1 {
        errs.push(ConfigError::new(
            "router.allocator.kind",
            format!(
                "with router.speedup > 1 (got {}) the allocator must be \"separable_input_first\"",
                rc.speedup
            ),
        ));
    }
    let rate_keys = !crate::sched::KeyMode::of(&rc.crossbar()).is_age();
    if a.kind == AllocatorKind::Wavefront && rate_keys {
        errs.push(ConfigError::new(
            "router.allocator.kind",
            format!(
                "the wavefront allocator orders requests by position, not by the crossbar scheduler's rate keys ({}); \
                 use \"separable_input_first\" or \"islip\", or an age-ordered crossbar_scheduler (fcfs, round_robin, wrr, vl_arbitration)",
                rc.crossbar().name()
            ),
        ));
    }
}

fn check_scheduler(errs: &mut Vec<ConfigError>, path: &str, cfg: &SchedulerConfig, vcs: u32) {
    match cfg {
        SchedulerConfig::VirtualClock { counter_bits } => {
            if *counter_bits != 0 && !(4..=63).contains(counter_bits) {
                errs.push(ConfigError::new(
                    format!("{path}.counter_bits"),
                    format!("must be 0 (unbounded) or in 4..=63, got {counter_bits}"),
                ));
            }
        }
        SchedulerConfig::Wrr { weights } => {
            if weights.len() > vcs as usize {
                errs.push(ConfigError::new(
                    format!("{path}.weights"),
                    format!("gives {} weights for {vcs} VCs", weights.len()),
                ));
            }
            for (i, &w) in weights.iter().enumerate() {
                range(errs, &format!("{path}.weights[{i}]"), w, 0, 65_535);
            }
            if !weights.is_empty() && weights.iter().all(|&w| w == 0) {
                errs.push(ConfigError::new(format!("{path}.weights"), "at least one weight must be > 0"));
            }
        }
        SchedulerConfig::VlArbitration { high, low, limit_of_high_priority, management_vl } => {
            for (name, table) in [("high", high), ("low", low)] {
                if table.len() > 64 {
                    errs.push(ConfigError::new(
                        format!("{path}.{name}"),
                        format!("at most 64 entries (IBA), got {}", table.len()),
                    ));
                }
                for (i, &[vl, w]) in table.iter().enumerate() {
                    if vl >= vcs {
                        errs.push(ConfigError::new(
                            format!("{path}.{name}[{i}]"),
                            format!("VL {vl} does not exist (VLs are 0..{})", vcs - 1),
                        ));
                    }
                    range(errs, &format!("{path}.{name}[{i}] weight"), w, 0, 255);
                }
            }
            if high.iter().chain(low.iter()).all(|e| e[1] == 0) {
                errs.push(ConfigError::new(path, "needs at least one high or low entry with weight > 0"));
            }
            range(errs, &format!("{path}.limit_of_high_priority"), *limit_of_high_priority, 0, 255);
            if let Some(m) = management_vl {
                if *m >= vcs {
                    errs.push(ConfigError::new(
                        format!("{path}.management_vl"),
                        format!("VL {m} does not exist (VLs are 0..{})", vcs - 1),
                    ));
                }
            }
        }
        SchedulerConfig::Fcfs | SchedulerConfig::RoundRobin | SchedulerConfig::FairQueueing => {}
    }
}

/// The VC masks of the classes, in priority order from VC 0 (document 003 §4.2: control on
/// VC 0, the ratio x:y of the first phase deciding the real-time / best-effort split).
/// `need`: the VCs a class needs for its routing's own VC classes (two on a torus, one per
/// LID layer: `Routing::vcs_per_class`); "auto" gives every class with traffic at least
/// that many, control included (document 003's one control VC, times `need`).
fn class_split(cfg: &Config, present: [bool; 3], vcs: u32, need: u32) -> Result<[u32; 3], String> {
    let counts = match cfg.router.vc_classes {
        VcClasses::Counts(c) => c,
        VcClasses::Auto => {
            if present.iter().filter(|&&p| p).count() <= 1 {
                return Ok([crate::routing::all_vcs(vcs); 3]);
            }
            let control = present[0] as u32 * need;
            let rest = vcs.saturating_sub(control);
            let (x, y) = match (&cfg.mix, present[1], present[2]) {
                (Some(m), true, true) if !m.phases.is_empty() => {
                    (m.phases[0].real_time, m.phases[0].best_effort)
                }
                _ => {
                    let load = |c: TrafficClass| -> f64 {
                        cfg.traffic.iter().filter(|t| t.class == c).map(|t| t.load.unwrap_or(0.0)).sum()
                    };
                    (load(TrafficClass::RealTime), load(TrafficClass::BestEffort))
                }
            };
            let share = if x + y > 0.0 { x / (x + y) } else { 0.5 };
            // (one VC for control and real time: real time gets none, which is reported)
            let mut rt = if present[1] {
                ((rest as f64 * share).round() as u32).clamp(need, rest.max(need)).min(rest)
            } else {
                0
            };
            if present[2] && rest.saturating_sub(rt) < need {
                rt = rest.saturating_sub(need);
            }
            let be = rest - rt;
            ClassCounts { control, real_time: rt, best_effort: be }
        }
    };
    // (in u64: the counts are the user's and may be anything)
    let total = counts.control as u64 + counts.real_time as u64 + counts.best_effort as u64;
    if total != vcs as u64 {
        return Err(format!(
            "VC counts control {} + real_time {} + best_effort {} = {total} must equal router.vcs = {vcs}",
            counts.control, counts.real_time, counts.best_effort
        ));
    }
    let mut masks = [0u32; 3];
    let mut first = 0;
    for (i, n) in [counts.control, counts.real_time, counts.best_effort].into_iter().enumerate() {
        if present[i] && n == 0 {
            return Err(format!("class {} has traffic but no VC", TrafficClass::ALL[i].name()));
        }
        masks[i] = if n == 0 { 0 } else { ((1u64 << (first + n)) - (1u64 << first)) as u32 };
        first += n;
    }
    Ok(masks)
}

fn range<T: PartialOrd + std::fmt::Display + Copy>(
    errs: &mut Vec<ConfigError>,
    path: &str,
    v: T,
    lo: T,
    hi: T,
) {
    if v < lo || v > hi {
        errs.push(ConfigError::new(path, format!("must be in {lo}..={hi}, got {v}")));
    }
}

/// A duration must be finite and at most [`MAX_CYCLES`] (a phase of "1e30 s" is no phase).
fn at_most_max_cycles(errs: &mut Vec<ConfigError>, path: &str, d: crate::units::Duration, clock: &Clock) {
    if clock.flit_bits == 0 {
        return; // (no cycle length: `physical.flit_bits` is reported)
    }
    let cycles = clock.duration_cycles_f64(d);
    if !(cycles.is_finite() && cycles <= MAX_CYCLES as f64) {
        let got = match d {
            crate::units::Duration::Seconds(s) if s.abs() >= 1e9 => format!("{s:e} s"),
            _ => d.to_string(),
        };
        errs.push(ConfigError::new(path, format!("must be at most {MAX_CYCLES} cycles, got {got}")));
    }
}

pub fn validate(cfg: &Config) -> Result<Validated, ConfigErrors> {
    let mut errs = Vec::new();
    let clock = Clock {
        flit_bits: cfg.physical.flit_bits,
        link_bits_per_second: cfg.physical.link_bandwidth.bits_per_second,
    };
    range(&mut errs, "physical.flit_bits", cfg.physical.flit_bits, 1, 1 << 20);

    let sim = &cfg.simulation;
    let rc = &cfg.router;
    if cfg.physical.flit_bits > 0 {
        for (name, d) in [
            ("warmup", sim.warmup),
            ("measure", sim.measure),
            ("drain_limit", sim.drain_limit),
            ("watchdog", sim.watchdog),
        ] {
            let c = clock.duration_cycles(d);
            if c > MAX_CYCLES || matches!(d, crate::units::Duration::Seconds(s) if !s.is_finite()) {
                errs.push(ConfigError::new(
                    format!("simulation.{name}"),
                    format!("must be at most {MAX_CYCLES} cycles, got {d}"),
                ));
            }
        }
        match sim.time_limit {
            Some(crate::units::Duration::Seconds(s)) if s > 0.0 && s.is_finite() => {}
            Some(crate::units::Duration::Cycles(c)) => errs.push(ConfigError::new(
                "simulation.time_limit",
                format!("is wall-clock time: give it with a unit (\"30 s\", \"10 min\", \"2 h\"), got {c} (cycles)"),
            )),
            Some(d) => errs.push(ConfigError::new(
                "simulation.time_limit",
                format!("must be a positive wall-clock time (\"10 min\"), got {d}"),
            )),
            None => {}
        }
        if clock.duration_cycles(sim.measure) == 0 {
            errs.push(ConfigError::new("simulation.measure", "must be at least one cycle, got 0"));
        }
        // The watchdog must outlast the longest single wait a flit can have with nothing
        // else moving, or a slow but healthy pipeline would be reported as a deadlock.
        let pl = &rc.pipeline;
        let link = rc.link_latency.max(cfg.endpoint.link_latency.unwrap_or(0));
        let longest = [
            pl.sync,
            pl.routing,
            pl.vc_alloc,
            pl.crossbar,
            pl.output.max(cfg.endpoint.output_stage).saturating_add(link),
            rc.credit_latency,
        ]
        .into_iter()
        .max()
        .unwrap_or(0) as u64;
        let wd = clock.duration_cycles(sim.watchdog);
        if wd <= longest {
            errs.push(ConfigError::new(
                "simulation.watchdog",
                format!("must be longer than the longest pipeline, link or credit delay ({longest} cycles), got {wd} cycles"),
            ));
        }
    }

    range(&mut errs, "router.vcs", rc.vcs, 1, 32);
    range(&mut errs, "router.input_buffer", rc.input_buffer, 1, crate::ring::MAX_DEPTH);
    range(&mut errs, "router.output_buffer", rc.output_buffer, 1, crate::ring::MAX_DEPTH);
    range(&mut errs, "router.link_latency", rc.link_latency, 1, 10_000);
    range(&mut errs, "router.credit_latency", rc.credit_latency, 1, 10_000);
    range(&mut errs, "router.speedup", rc.speedup, 1, 16);
    check_allocator(&mut errs, rc);
    range(&mut errs, "router.block_size", rc.block_size, 1, 65_535);
    check_scheduler(&mut errs, "router.crossbar_scheduler", &rc.crossbar(), rc.vcs);
    check_scheduler(&mut errs, "router.output_scheduler", &rc.output(), rc.vcs);
    if let Some(s) = &cfg.endpoint.scheduler {
        check_scheduler(&mut errs, "endpoint.scheduler", s, rc.vcs);
    }
    // The preemptive router's NIC may also send into the VCs' extra buffers.
    let lanes = if rc.kind == RouterKind::Preemptive { 2 * rc.vcs } else { rc.vcs };
    range(&mut errs, "endpoint.concurrent_packets", cfg.endpoint.concurrent_packets, 1, lanes.max(1));
    if let Some(l) = cfg.endpoint.link_latency {
        range(&mut errs, "endpoint.link_latency", l, 1, 10_000);
    }
    range(&mut errs, "endpoint.output_stage", cfg.endpoint.output_stage, 0, 10_000);
    if let Some(p) = cfg.endpoint.processors {
        range(&mut errs, "endpoint.processors", p, 1, 1_000_000);
    }
    if rc.kind == RouterKind::Preemptive {
        range(
            &mut errs,
            "router.preemption.extra_buffer",
            rc.preemption.extra_buffer,
            1,
            crate::ring::MAX_DEPTH,
        );
        if rc.vc_release == crate::config::VcRelease::TailSent {
            errs.push(ConfigError::new(
                "router.vc_release",
                "the preemptive router needs \"tail_credit\" (its preemption, dummy flits and history \
                 stack work on VCs that hold one packet), got \"tail_sent\"",
            ));
        }
        if rc.vcs > 16 {
            errs.push(ConfigError::new(
                "router.vcs",
                format!(
                    "the preemptive router supports at most 16 VCs (each with an extra buffer), got {}",
                    rc.vcs
                ),
            ));
        }
    }
    let pl = &rc.pipeline;
    for (name, v, lo) in [
        ("sync", pl.sync, 0),
        ("routing", pl.routing, 0),
        ("vc_alloc", pl.vc_alloc, 0),
        ("crossbar", pl.crossbar, 1),
        ("output", pl.output, 0),
    ] {
        range(&mut errs, &format!("router.pipeline.{name}"), v, lo, 10_000);
    }

    if rc.kind != RouterKind::Preemptive && rc.preemption.extra_buffer > crate::ring::MAX_DEPTH {
        // (unused by this router, but its input buffers are sized for it: `Routers::new`)
        range(
            &mut errs,
            "router.preemption.extra_buffer",
            rc.preemption.extra_buffer,
            0,
            crate::ring::MAX_DEPTH,
        );
    }

    // The memory the run needs, from the configuration alone: a network that cannot fit
    // is not built, not even its topology.
    if let (Some(shape), true) = (memory::Shape::of_config(&cfg.topology), (1..=32).contains(&rc.vcs)) {
        let traffic = memory::TrafficShape::of_config(cfg, shape.nodes);
        if let Err(e) = memory::check(cfg, memory::estimate(cfg, shape, traffic)) {
            errs.push(e);
            return Err(ConfigErrors(errs));
        }
    }

    let built = Topology::build_in(&cfg.topology, &cfg.files()).and_then(|t| {
        // A real fabric's routes (its forwarding tables, or minimal-hop ones) must take
        // every node to every other without loops.
        if let TopologyConfig::IbFabric { file, .. } = &cfg.topology {
            crate::routing::check_fabric_routes(&t, &file.shown())?;
        }
        Ok(t)
    });
    let topology = match built {
        Ok(t) => Some(t),
        Err(e) => {
            errs.push(e);
            None
        }
    };
    if let (Some(t), TopologyConfig::Star { .. } | TopologyConfig::FatTree { .. }) =
        (&topology, &cfg.topology)
    {
        if t.ports > crate::topology::MAX_PORTS {
            errs.push(ConfigError::new(
                "topology",
                format!("routers would have {} ports; at most {}", t.ports, crate::topology::MAX_PORTS),
            ));
        }
    }
    let routing = topology.as_ref().filter(|_| (1..=32).contains(&rc.vcs)).and_then(|t| {
        let paths = cfg.routing.multipath.as_ref().map_or(1, |m| m.paths);
        // (a fabric dump's LMC, where it gives one above 0, unless the configuration sets it)
        let dumped = match &t.shape {
            crate::topology::Shape::Fabric { lmc: Some(l), .. } if *l > 0 => Some(*l),
            _ => None,
        };
        let lids = |r: Routing| match cfg.routing.lmc.or(dumped) {
            Some(lmc) => r.with_lids(t, lmc, cfg.routing.slack, rc.vcs),
            None => Ok(r),
        };
        match Routing::build(cfg.routing.kind, t, rc.vcs).and_then(lids).and_then(|r| r.with_paths(paths)) {
            Ok(r) => Some(r),
            Err(e) => {
                errs.push(e);
                None
            }
        }
    });

    if cfg.traffic.is_empty() && cfg.application.is_empty() {
        errs.push(ConfigError::new(
            "traffic",
            "at least one [[traffic]] source or [[application]] is required",
        ));
    }
    let mut specs = Vec::new();
    let mut spec_nodes = Vec::new();
    for (i, t) in cfg.traffic.iter().enumerate() {
        let path = format!("traffic[{i}]");
        // Messages per cycle in each phase: an explicit load or rate holds throughout; an
        // entry of the mix takes its class's share of each phase; a periodic source has
        // its period's rate.
        let flits = t.message_flits.max(1) as f64;
        let mix_entries =
            cfg.traffic.iter().filter(|o| o.class == t.class && o.load.is_none() && o.rate.is_none()).count();
        let mix_loads: Option<Vec<f64>> = cfg.mix.as_ref().and_then(|m| {
            if t.class == TrafficClass::Control || m.phases.is_empty() {
                return None;
            }
            Some(
                m.phases
                    .iter()
                    .map(|p| {
                        let part =
                            if t.class == TrafficClass::RealTime { p.real_time } else { p.best_effort };
                        m.load * part / (p.real_time + p.best_effort) / mix_entries.max(1) as f64
                    })
                    .collect(),
            )
        });
        // The offered load per node in each phase (a fraction of link bandwidth).
        let given_load = |errs: &mut Vec<ConfigError>| -> Vec<f64> {
            match (t.load, t.rate, &mix_loads) {
                (Some(l), None, _) => {
                    if !(l > 0.0 && l <= 1.0) {
                        errs.push(ConfigError::new(
                            format!("{path}.load"),
                            format!("must be in (0, 1] (a fraction of link bandwidth), got {l}"),
                        ));
                    }
                    vec![l]
                }
                (None, Some(r), _) => {
                    let l = clock.flits_per_cycle(r);
                    if l > 1.0 {
                        errs.push(ConfigError::new(
                            format!("{path}.rate"),
                            format!("{r} exceeds the link bandwidth {}", cfg.physical.link_bandwidth),
                        ));
                    }
                    vec![l]
                }
                (None, None, Some(m)) => m.clone(),
                _ => {
                    errs.push(ConfigError::new(
                        path.clone(),
                        "give exactly one of `load` (fraction of link bandwidth) or `rate` (e.g. \"400 Mb/s\"), or neither for a real_time / best_effort entry of the [mix]",
                    ));
                    vec![0.0]
                }
            }
        };
        let (process, loads) = match &t.process {
            Process::Periodic { period } => {
                if t.load.is_some() || t.rate.is_some() {
                    errs.push(ConfigError::new(
                        path.clone(),
                        "a periodic source's rate is its period: give no `load` or `rate`",
                    ));
                }
                let p = clock.duration_cycles_f64(*period);
                if !(p >= 1.0 && p.is_finite()) {
                    errs.push(ConfigError::new(
                        format!("{path}.process.period"),
                        "must be at least one cycle",
                    ));
                }
                at_most_max_cycles(&mut errs, &format!("{path}.process.period"), *period, &clock);
                (ProcessSpec::Periodic { period: p.max(1.0) }, vec![flits / p.max(1.0)])
            }
            Process::Poisson => (ProcessSpec::Poisson, given_load(&mut errs)),
            Process::Bernoulli => (ProcessSpec::Bernoulli, given_load(&mut errs)),
            Process::OnOff { on, off, exponential } => {
                let (on, off) = (clock.duration_cycles_f64(*on), clock.duration_cycles_f64(*off));
                if !(on >= 1.0 && on.is_finite()) {
                    errs.push(ConfigError::new(format!("{path}.process.on"), "must be at least one cycle"));
                }
                if !(off >= 0.0 && off.is_finite()) {
                    errs.push(ConfigError::new(format!("{path}.process.off"), "must be >= 0"));
                }
                if let Process::OnOff { on: on_d, off: off_d, .. } = &t.process {
                    at_most_max_cycles(&mut errs, &format!("{path}.process.on"), *on_d, &clock);
                    at_most_max_cycles(&mut errs, &format!("{path}.process.off"), *off_d, &clock);
                }
                let params = crate::traffic::on_off::OnOffParams {
                    rate: 0.0,
                    on: on.max(1.0),
                    off,
                    exponential: *exponential,
                };
                let loads = given_load(&mut errs);
                // λ while ON is at most one message per cycle
                for &l in &loads {
                    if params.rate_on(l / flits) > 1.0 {
                        errs.push(ConfigError::new(
                            format!("{path}.process"),
                            format!("load {l} with ON {on} / OFF {off} cycles needs more than one message per cycle while ON"),
                        ));
                        break;
                    }
                }
                (ProcessSpec::OnOff(params), loads)
            }
            Process::Video {
                traces,
                format,
                frame_rate,
                mean_rate,
                scale,
                synthetic,
                streams,
                first_deadline,
            } => {
                match video_spec(
                    cfg,
                    &clock,
                    &path,
                    traces,
                    *format,
                    *frame_rate,
                    *mean_rate,
                    *scale,
                    synthetic,
                ) {
                    Ok((mut v, stream_rate)) => {
                        v.first_deadline = *first_deadline;
                        let loads = match streams {
                            Some(n) => {
                                if t.load.is_some() || t.rate.is_some() {
                                    errs.push(ConfigError::new(
                                        path.clone(),
                                        "give `process.streams` or a load, not both",
                                    ));
                                }
                                range(&mut errs, &format!("{path}.process.streams"), *n, 1, 4096);
                                v.streams_by_phase = vec![*n];
                                vec![*n as f64 * stream_rate]
                            }
                            None => {
                                let loads = given_load(&mut errs);
                                v.streams_by_phase =
                                    loads.iter().map(|l| (l / stream_rate).round() as u32).collect();
                                if v.streams_by_phase.iter().any(|&n| n > 4096) {
                                    errs.push(ConfigError::new(
                                        format!("{path}.process"),
                                        format!(
                                            "the load needs {} streams per node of {:.3e} flits/cycle each; at most 4096 (raise mean_rate)",
                                            v.streams_by_phase.iter().max().unwrap_or(&0),
                                            stream_rate
                                        ),
                                    ));
                                }
                                loads
                            }
                        };
                        (ProcessSpec::Video(std::sync::Arc::new(v)), loads)
                    }
                    Err(e) => {
                        errs.push(e);
                        (ProcessSpec::Poisson, vec![0.0])
                    }
                }
            }
        };
        let load = loads.iter().cloned().fold(0.0, f64::max);
        range(&mut errs, &format!("{path}.message_flits"), t.message_flits, 1, 1 << 24);
        range(&mut errs, &format!("{path}.packet_flits"), t.packet_flits, 1, 65_535);
        let Some(topo) = &topology else { continue };
        let nodes: Vec<u32> = match &t.sources {
            NodeSet::All(_) => (0..topo.nodes as u32).collect(),
            NodeSet::List(l) => {
                if l.is_empty() {
                    errs.push(ConfigError::new(
                        format!("{path}.sources"),
                        "must be \"all\" or a non-empty list of nodes",
                    ));
                }
                let mut seen = vec![false; topo.nodes];
                for &n in l {
                    if n as usize >= topo.nodes {
                        errs.push(ConfigError::new(
                            format!("{path}.sources"),
                            format!("node {n} does not exist (nodes are 0..{})", topo.nodes - 1),
                        ));
                    } else if std::mem::replace(&mut seen[n as usize], true) {
                        errs.push(ConfigError::new(
                            format!("{path}.sources"),
                            format!("node {n} is listed twice"),
                        ));
                    }
                }
                // Only nodes that exist go on: the checks below (reservations) index
                // per-node tables with them.
                l.iter().copied().filter(|&n| (n as usize) < topo.nodes).collect()
            }
        };
        let built = Pattern::build(&t.pattern, topo, &cfg.files(), &format!("{path}.pattern"));
        match built.map(|p| if t.self_traffic { p.with_self_traffic() } else { p }) {
            Ok(pattern) => {
                let vtick = match (t.vtick, t.class) {
                    (Some(VtickConfig::Cycles(c)), _) => c,
                    (Some(VtickConfig::Rate(r)), _) => 1.0 / clock.flits_per_cycle(r),
                    (None, TrafficClass::Control) => 1.0,
                    // (no load: already reported; keep this error out of its way)
                    (None, TrafficClass::RealTime) => {
                        if load > 0.0 {
                            1.0 / load
                        } else {
                            1.0
                        }
                    }
                    // unreserved: see `sched::RateKeys`
                    (None, TrafficClass::BestEffort) => 0.0,
                };
                if (t.vtick.is_some() || vtick != 0.0)
                    && !(vtick.is_finite() && (1.0 - 1e-9..=u32::MAX as f64).contains(&vtick))
                {
                    errs.push(ConfigError::new(
                        format!("{path}.vtick"),
                        format!(
                            "must be 1..={} cycles per flit (a rate up to the link bandwidth), got {vtick}",
                            u32::MAX
                        ),
                    ));
                }
                let vtick = vtick.round().clamp(0.0, u32::MAX as f64) as u32;
                let mut process = process;
                if let (ProcessSpec::Video(v), Some(_)) = (&mut process, t.vtick) {
                    // An explicit Vtick overrides the streams' own rates.
                    if let Some(v) = std::sync::Arc::get_mut(v) {
                        v.vticks.iter_mut().for_each(|x| *x = vtick);
                    }
                }
                specs.push(TrafficSpec {
                    reserve: t.reserve.map(|r| clock.flits_per_cycle(r)),
                    idt: t.idt,
                    vtick,
                    class: t.class,
                    process,
                    rate_by_phase: loads.iter().map(|l| l / flits).collect(),
                    message_flits: t.message_flits,
                    packet_flits: t.packet_flits,
                    pattern,
                });
                spec_nodes.push(nodes);
            }
            Err(e) => errs.push(e),
        }
    }

    if let Some(m) = &cfg.mix {
        if !(m.load > 0.0 && m.load <= 1.0) {
            errs.push(ConfigError::new(
                "mix.load",
                format!("must be in (0, 1] (a fraction of link bandwidth), got {}", m.load),
            ));
        }
        if m.phases.is_empty() {
            errs.push(ConfigError::new("mix.phases", "at least one phase is required"));
        }
        for (i, p) in m.phases.iter().enumerate() {
            let sum = p.real_time + p.best_effort;
            if !(p.real_time >= 0.0 && p.best_effort >= 0.0 && sum > 0.0 && sum.is_finite()) {
                errs.push(ConfigError::new(
                    format!("mix.phases[{i}]"),
                    format!(
                        "real_time and best_effort must be >= 0 and not both 0, got {}:{}",
                        p.real_time, p.best_effort
                    ),
                ));
            }
            at_most_max_cycles(&mut errs, &format!("mix.phases[{i}].duration"), p.duration, &clock);
            if clock.duration_cycles(p.duration) == 0 && i + 1 < m.phases.len() {
                errs.push(ConfigError::new(
                    format!("mix.phases[{i}].duration"),
                    "must be at least one cycle",
                ));
            }
        }
    }
    let mut present = [false; 3];
    for t in &cfg.traffic {
        present[t.class.index()] = true;
    }
    // Admission control's probes and answers are control traffic (document 000 §4.1).
    present[0] |= cfg.endpoint.admission.is_some();
    let mut split = [0u32; 3];
    if (1..=32).contains(&rc.vcs) {
        let need = routing.as_ref().map_or(1, Routing::vcs_per_class);
        match class_split(cfg, present, rc.vcs, need) {
            Ok(m) => split = m,
            Err(e) => errs.push(ConfigError::new("router.vc_classes", e)),
        }
    }
    // (an application's packets too: document 001 §4.2's jobs share the NICs)
    let app_packet = cfg.application.iter().map(|a| a.packet_flits).max().unwrap_or(1);
    let max_packet =
        specs.iter().map(|s| s.packet_flits.min(s.message_flits)).max().unwrap_or(1).max(app_packet);
    let nic = NicParams::build(cfg, &clock, max_packet, &mut errs);
    let nodes = topology.as_ref().map_or(0, |t| t.nodes);
    let marking =
        Marking::build(rc.marking.as_ref(), rc.input_buffer, rc.output_buffer).unwrap_or_else(|e| {
            errs.push(e);
            Marking::None
        });
    let agents =
        Agents::build(cfg.endpoint.agent.as_ref(), nodes, &clock, &cfg.files()).unwrap_or_else(|e| {
            errs.push(e);
            Agents::NONE
        });
    super::agents::check_params(cfg, &clock, &mut errs);
    // (an application's ranks are checked against the nodes; its jobs are built here)
    let jobs = match &topology {
        Some(t) => crate::traffic::application::build_jobs(cfg, &clock, t.nodes).unwrap_or_else(|e| {
            errs.extend(e);
            Vec::new()
        }),
        None => Vec::new(),
    };
    let drb_timer = check_drb(cfg, &clock, &mut errs);
    if let (Some(topo), Some(routing)) = (&topology, &routing) {
        check_reservations(cfg, &clock, &nic, topo, routing, &specs, &spec_nodes, &mut errs);
    }
    // The whole estimate, now that the topology (a fabric's size) and the sources are known.
    let mut estimate = None;
    if let Some(topo) = &topology {
        let shape = memory::Shape::of_topology(topo);
        let mut traffic = memory::TrafficShape::of_config(cfg, shape.nodes);
        if specs.len() == cfg.traffic.len() {
            traffic.sources = specs
                .iter()
                .zip(&spec_nodes)
                .map(|(s, n)| n.len() as u128 * s.sources_per_node() as u128)
                .sum();
            traffic.messages_per_cycle = specs
                .iter()
                .zip(&spec_nodes)
                .map(|(s, n)| n.len() as f64 * s.messages_per_cycle_per_node())
                .sum();
        }
        match memory::check(cfg, memory::estimate(cfg, shape, traffic)) {
            Ok(e) => estimate = Some(e),
            Err(e) => errs.push(e),
        }
    }
    // The preemptive router lets real-time and best-effort messages take any VC; control
    // keeps its own (document 003 §4.2: VC 0 "for both the models"), which the others may
    // not take (`control_vc = "exclusive"`) or may, control then preempting them ("shared").
    let class_vcs = match rc.kind {
        RouterKind::Preemptive => {
            let all = crate::routing::all_vcs(rc.vcs);
            let exclusive = rc.preemption.control_vc == crate::config::ControlVc::Exclusive;
            // (exclusive only where control runs and has VCs of its own: a run without
            // control traffic keeps every VC for the others)
            let own = all & !split[0];
            let others = if exclusive && present[0] && split[0] != 0 && own != 0 { own } else { all };
            [if split[0] != 0 { split[0] } else { all }, others, others]
        }
        _ => split,
    };
    if let Some(routing) = &routing {
        vcs_per_class(&mut errs, present, class_vcs, routing);
    }
    let (Some(topology), Some(routing), true) = (topology, routing, errs.is_empty()) else {
        return Err(ConfigErrors(errs));
    };
    let mut agents = agents;
    let lane_records = topology.routers * topology.ports * (lanes as usize | 1);
    let flows = super::flows::build(
        cfg,
        &clock,
        &topology,
        &routing,
        specs,
        &spec_nodes,
        jobs,
        &mut agents,
        class_vcs,
        lane_records,
    )?;
    Ok(Validated {
        clock,
        topology,
        routing,
        spec_nodes,
        class_vcs,
        home_vcs: split,
        nic,
        agents,
        drb_timer,
        marking,
        memory: estimate.unwrap_or_else(|| memory::assemble(Vec::new(), (u64::MAX, String::new()))),
        flows,
    })
}

/// A routing's VC classes — a torus's dateline pair, the LID paths' layers — are taken
/// within each traffic class's VCs (`Routing::route_in_class`): a class with traffic needs
/// one VC per routing class, or its packets that need a missing one would wait forever.
fn vcs_per_class(errs: &mut Vec<ConfigError>, present: [bool; 3], class_vcs: [u32; 3], routing: &Routing) {
    let need = routing.vcs_per_class();
    for (i, &mask) in class_vcs.iter().enumerate() {
        if present[i] && mask.count_ones() < need {
            let what = match routing {
                Routing::DorDateline { .. } => {
                    "on a torus, where dateline routing needs two per class".to_string()
                }
                _ => format!("where the LID paths' VC layers need {need} per class"),
            };
            errs.push(ConfigError::new(
                "router.vc_classes",
                format!(
                    "class {} has {} VC(s) {what} (raise router.vcs, or give the class more VCs with \
                     vc_classes counts)",
                    TrafficClass::ALL[i].name(),
                    mask.count_ones()
                ),
            ));
        }
    }
}

/// Reserved flows (document 004 §3.4): rate control must be on, each source must have one
/// destination, and call admission must admit every flow, in configuration order.
#[allow(clippy::too_many_arguments)] // the parts of validation it checks against
fn check_reservations(
    cfg: &Config,
    clock: &Clock,
    nic: &NicParams,
    topo: &Topology,
    routing: &Routing,
    specs: &[TrafficSpec],
    spec_nodes: &[Vec<u32>],
    errs: &mut Vec<ConfigError>,
) {
    // Specs and config entries pair up only when every entry built a spec.
    if specs.len() != cfg.traffic.len() {
        return;
    }
    // At the rates simulated: every link runs at `[physical] link_bandwidth`, a real
    // fabric's too (its own link rates are the control plane's, `CallAdmission::from_config`).
    let mut admission =
        CallAdmission::new(topo, routing, cfg.router.vcs, clock.link_bits_per_second, nic.peak_bps);
    for (i, (t, spec)) in cfg.traffic.iter().zip(specs).enumerate() {
        let path = format!("traffic[{i}]");
        let field = match (t.reserve, t.idt) {
            (None, None) => continue,
            (Some(_), Some(_)) => {
                errs.push(ConfigError::new(format!("{path}.idt"), "give `reserve` or `idt`, not both"));
                continue;
            }
            (Some(_), None) => "reserve",
            (None, Some(_)) => "idt",
        };
        let fpath = format!("{path}.{field}");
        if cfg.endpoint.queues != super::SourceQueues::RateControl {
            errs.push(ConfigError::new(
                &fpath,
                "needs NIC rate control: endpoint.queues = \"rate_control\" (with endpoint.model \"via\" or \"hca\")",
            ));
            continue;
        }
        if let Some(k) = t.idt {
            if !(k.is_finite() && k > 0.0 && k <= 1e9) {
                errs.push(ConfigError::new(&fpath, format!("must be in (0, 1e9] periods T, got {k}")));
            }
        }
        if let Some(r) = t.reserve {
            if !(r.bits_per_second > 0.0 && r.bits_per_second.is_finite()) {
                errs.push(ConfigError::new(&fpath, format!("must be > 0, got {r}")));
                continue;
            }
        }
        for &node in &spec_nodes[i] {
            if spec.pattern.is_silent(node as usize) {
                continue;
            }
            let Some(dst) = spec.pattern.fixed_destination(node as usize) else {
                errs.push(ConfigError::new(
                    format!("{path}.pattern"),
                    "a reserved flow needs one destination per source: use kind = \"fixed\", a permutation or a bit pattern",
                ));
                break;
            };
            let Some(r) = t.reserve else { continue };
            for _ in 0..spec.sources_per_node() {
                if let Err(why) = admission.admit(node, dst, r.bits_per_second) {
                    errs.push(ConfigError::new(
                        &fpath,
                        format!("call admission refuses the flow from node {node} to node {dst}: {why}"),
                    ));
                }
            }
        }
    }
}

/// DRB (`[routing] multipath` with `selection = "drb"`): its contraction timer (cycles), and
/// the congestion detection it reacts to. Other selections take no timer.
fn check_drb(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) -> crate::units::Cycle {
    let Some(m) = &cfg.routing.multipath else { return 0 };
    if m.split != crate::config::DrbSplit::default() && m.selection != crate::config::PathSelection::Drb {
        errs.push(ConfigError::new(
            "routing.multipath.split",
            "only with selection = \"drb\" (how DRB spreads messages over its open paths)",
        ));
    }
    match (m.selection, m.contraction_timer) {
        (crate::config::PathSelection::Drb, None) => {
            errs.push(ConfigError::new(
                "routing.multipath.contraction_timer",
                "required with selection = \"drb\" (e.g. \"20 us\")",
            ));
            0
        }
        (crate::config::PathSelection::Drb, Some(t)) => {
            if cfg.router.marking.is_none() {
                errs.push(ConfigError::new(
                    "routing.multipath.selection",
                    "\"drb\" reacts to congestion notifications: set [router] marking (e.g. { kind = \"iba_cc\", threshold = 10 })",
                ));
            }
            let t = clock.duration_cycles(t);
            if t == 0 {
                errs.push(ConfigError::new(
                    "routing.multipath.contraction_timer",
                    "must be a positive duration, got 0",
                ));
            }
            t
        }
        (_, Some(_)) => {
            errs.push(ConfigError::new(
                "routing.multipath.contraction_timer",
                "only with selection = \"drb\"",
            ));
            0
        }
        (_, None) => 0,
    }
}

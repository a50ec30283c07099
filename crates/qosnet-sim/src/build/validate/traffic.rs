//! `[[traffic]]` and `[mix]`: each source's process and loads, message sizes, nodes, pattern
//! and Vtick, built into a `TrafficSpec`; and the mix's phases.

use super::{at_most_max_cycles, range};
use crate::config::{Config, NodeSet, Process, TrafficClass, TrafficConfig, VtickConfig};
use crate::error::ConfigError;
use crate::topology::Topology;
use crate::traffic::pattern::Pattern;
use crate::traffic::{ProcessSpec, TrafficSpec};
use crate::units::Clock;

/// Every `[[traffic]]` entry: its spec and the nodes that run it (for the entries that could
/// be built over the topology).
pub(super) fn check_traffic(
    cfg: &Config,
    clock: &Clock,
    topology: Option<&Topology>,
    errs: &mut Vec<ConfigError>,
) -> (Vec<TrafficSpec>, Vec<Vec<u32>>) {
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
        let flits = t.message_flits.max(1) as f64;
        let (process, loads) = process_spec(cfg, clock, t, &path, errs);
        let load = loads.iter().cloned().fold(0.0, f64::max);
        range(errs, &format!("{path}.message_flits"), t.message_flits, 1, 1 << 24);
        range(errs, &format!("{path}.packet_flits"), t.packet_flits, 1, 65_535);
        let Some(topo) = topology else { continue };
        let nodes = source_nodes(t, topo, &path, errs);
        if t.pattern.sends_to_itself() && !t.self_traffic {
            errs.push(ConfigError::new(
                format!("{path}.self_traffic"),
                "must be true with this pattern: it sends some messages to the source itself by definition (BookSim2's)",
            ));
        }
        let built = Pattern::build(&t.pattern, topo, &cfg.files(), &format!("{path}.pattern"));
        match built.map(|p| if t.self_traffic { p.with_self_traffic() } else { p }) {
            Ok(pattern) => {
                let vtick = vtick(t, clock, load, &path, errs);
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
    (specs, spec_nodes)
}

/// An entry's process and its offered load per node in each phase (a fraction of link
/// bandwidth).
fn process_spec(
    cfg: &Config,
    clock: &Clock,
    t: &TrafficConfig,
    path: &str,
    errs: &mut Vec<ConfigError>,
) -> (ProcessSpec, Vec<f64>) {
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
                    let part = if t.class == TrafficClass::RealTime { p.real_time } else { p.best_effort };
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
                    path,
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
                    path,
                    "a periodic source's rate is its period: give no `load` or `rate`",
                ));
            }
            let p = clock.duration_cycles_f64(*period);
            if !(p >= 1.0 && p.is_finite()) {
                errs.push(ConfigError::new(format!("{path}.process.period"), "must be at least one cycle"));
            }
            at_most_max_cycles(errs, &format!("{path}.process.period"), *period, clock);
            (ProcessSpec::Periodic { period: p.max(1.0) }, vec![flits / p.max(1.0)])
        }
        Process::Poisson => (ProcessSpec::Poisson, given_load(errs)),
        Process::Bernoulli => (ProcessSpec::Bernoulli, given_load(errs)),
        Process::OnOff { on, off, exponential } => {
            let (on, off) = (clock.duration_cycles_f64(*on), clock.duration_cycles_f64(*off));
            if !(on >= 1.0 && on.is_finite()) {
                errs.push(ConfigError::new(format!("{path}.process.on"), "must be at least one cycle"));
            }
            if !(off >= 0.0 && off.is_finite()) {
                errs.push(ConfigError::new(format!("{path}.process.off"), "must be >= 0"));
            }
            if let Process::OnOff { on: on_d, off: off_d, .. } = &t.process {
                at_most_max_cycles(errs, &format!("{path}.process.on"), *on_d, clock);
                at_most_max_cycles(errs, &format!("{path}.process.off"), *off_d, clock);
            }
            let params = crate::traffic::on_off::OnOffParams {
                rate: 0.0,
                on: on.max(1.0),
                off,
                exponential: *exponential,
            };
            let loads = given_load(errs);
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
        Process::MarkovOnOff { on, off } => {
            let mut cycles = |name: &str, d: crate::units::Duration| {
                let c = clock.duration_cycles_f64(d);
                if !(c >= 1.0 && c.is_finite()) {
                    errs.push(ConfigError::new(
                        format!("{path}.process.{name}"),
                        format!("must be at least one cycle (a mean length), got {d}"),
                    ));
                }
                at_most_max_cycles(errs, &format!("{path}.process.{name}"), d, clock);
                c.max(1.0)
            };
            let params = crate::traffic::markov_on_off::MarkovParams {
                on: cycles("on", *on),
                off: cycles("off", *off),
            };
            let loads = given_load(errs);
            // a message at most every ON cycle
            if let Some(&l) = loads.iter().find(|&&l| params.rate_on(l / flits) > 1.0) {
                errs.push(ConfigError::new(
                    format!("{path}.load"),
                    format!(
                        "{l} needs {:.3} messages a cycle while ON, above one: ON {} of every {} cycles on average carries at most {:.3} (raise process.on or lower process.off)",
                        params.rate_on(l / flits),
                        params.on,
                        params.on + params.off,
                        params.on_share() * flits
                    ),
                ));
            }
            (ProcessSpec::MarkovOnOff(params), loads)
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
            match video_spec(cfg, clock, path, traces, *format, *frame_rate, *mean_rate, *scale, synthetic) {
                Ok((mut v, stream_rate)) => {
                    v.first_deadline = *first_deadline;
                    let loads = match streams {
                        Some(n) => {
                            if t.load.is_some() || t.rate.is_some() {
                                errs.push(ConfigError::new(
                                    path,
                                    "give `process.streams` or a load, not both",
                                ));
                            }
                            range(errs, &format!("{path}.process.streams"), *n, 1, 4096);
                            v.streams_by_phase = vec![*n];
                            vec![*n as f64 * stream_rate]
                        }
                        None => {
                            let loads = given_load(errs);
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
    (process, loads)
}

/// The nodes an entry runs on (those that exist).
fn source_nodes(t: &TrafficConfig, topo: &Topology, path: &str, errs: &mut Vec<ConfigError>) -> Vec<u32> {
    match &t.sources {
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
    }
}

/// An entry's Vtick in cycles per flit (`load`: its largest load, for a real-time default).
fn vtick(t: &TrafficConfig, clock: &Clock, load: f64, path: &str, errs: &mut Vec<ConfigError>) -> u32 {
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
    vtick.round().clamp(0.0, u32::MAX as f64) as u32
}

/// `[mix]`: its load and phases.
pub(super) fn check_mix(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) {
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
            at_most_max_cycles(errs, &format!("mix.phases[{i}].duration"), p.duration, clock);
            if clock.duration_cycles(p.duration) == 0 && i + 1 < m.phases.len() {
                errs.push(ConfigError::new(
                    format!("mix.phases[{i}].duration"),
                    "must be at least one cycle",
                ));
            }
        }
    }
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

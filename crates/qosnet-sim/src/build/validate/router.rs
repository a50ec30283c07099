//! `[router]`: ranges, the allocator, the schedulers, preemption and the pipeline; and the
//! split of the VCs among the traffic classes (`vc_classes`).

use super::range;
use crate::config::{ClassCounts, Config, CreditAt, RouterKind, SchedulerConfig, TrafficClass, VcClasses};
use crate::error::ConfigError;
use crate::routing::Routing;

/// `[router]`: its sizes and delays in range, its allocator and its two schedulers.
pub(super) fn check_router(cfg: &Config, errs: &mut Vec<ConfigError>) {
    let rc = &cfg.router;
    range(errs, "router.vcs", rc.vcs, 1, 32);
    range(errs, "router.input_buffer", rc.input_buffer, 1, crate::ring::MAX_DEPTH);
    range(errs, "router.output_buffer", rc.output_buffer, 1, crate::ring::MAX_DEPTH);
    range(errs, "router.link_latency", rc.link_latency, 1, 10_000);
    range(errs, "router.credit_latency", rc.credit_latency, 1, 10_000);
    range(errs, "router.speedup", rc.speedup, 1, 16);
    check_booksim_speedups(errs, rc);
    if rc.credit_at == CreditAt::Crossbar && rc.kind == RouterKind::Preemptive {
        // (its preemption moves flits of a packet that holds no credits: dummies, extra buffers)
        errs.push(ConfigError::new(
            "router.credit_at",
            "must be \"output\" with the preemptive router, got \"crossbar\"; use kind = \"traditional\" or \"non_preemptive\"",
        ));
    }
    check_allocator(errs, rc);
    check_vc_allocator(errs, rc);
    range(errs, "router.block_size", rc.block_size, 1, 65_535);
    check_scheduler(errs, "router.crossbar_scheduler", &rc.crossbar(), rc.vcs);
    check_scheduler(errs, "router.output_scheduler", &rc.output(), rc.vcs);
}

/// The preemptive router's extra buffers, VC release and VC count; every router's pipeline
/// stages; and the (unused) extra buffer a non-preemptive router is still sized for.
pub(super) fn check_preemption_and_pipeline(cfg: &Config, errs: &mut Vec<ConfigError>) {
    let rc = &cfg.router;
    if rc.kind == RouterKind::Preemptive {
        range(errs, "router.preemption.extra_buffer", rc.preemption.extra_buffer, 1, crate::ring::MAX_DEPTH);
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
        range(errs, &format!("router.pipeline.{name}"), v, lo, 10_000);
    }

    if rc.kind != RouterKind::Preemptive && rc.preemption.extra_buffer > crate::ring::MAX_DEPTH {
        // (unused by this router, but its input buffers are sized for it: `Routers::new`)
        range(errs, "router.preemption.extra_buffer", rc.preemption.extra_buffer, 0, crate::ring::MAX_DEPTH);
    }
}

/// BookSim2's speedups (`router.input_speedup`, `output_speedup`, `internal_speedup`): in
/// range, and not beside qosnet's own `router.speedup` (two models of one thing) or the
/// preemptive router (whose preemption and extra buffers assume one flit a VC a cycle).
fn check_booksim_speedups(errs: &mut Vec<ConfigError>, rc: &crate::config::RouterConfig) {
    let speedups = [
        ("router.input_speedup", rc.input_speedup),
        ("router.output_speedup", rc.output_speedup),
        ("router.internal_speedup", rc.internal_speedup),
    ];
    for (path, s) in speedups {
        range(errs, path, s, 1, crate::router::MAX_SPEEDUP as u32);
    }
    let Some((path, s)) = speedups.into_iter().find(|&(_, s)| s > 1) else { return };
    if rc.speedup > 1 {
        errs.push(ConfigError::new(
            path,
            format!(
                "BookSim2's speedups and router.speedup (qosnet's own, got {}) are two models of one \
                 thing: set router.speedup = 1 to use {path} = {s}",
                rc.speedup
            ),
        ));
    }
    if rc.kind == RouterKind::Preemptive {
        errs.push(ConfigError::new(
            path,
            format!(
                "must be 1 with the preemptive router (its preemption assumes one flit a VC a cycle), got {s}; \
                 use kind = \"traditional\" or \"non_preemptive\""
            ),
        ));
    }
}

/// BookSim2's expanded crossbar has `ports` x the larger of `router.input_speedup` and
/// `router.output_speedup` inputs and outputs, which the allocators keep in 64-bit masks.
pub(super) fn check_crossbar_ports(cfg: &Config, ports: usize, errs: &mut Vec<ConfigError>) {
    let rc = &cfg.router;
    let (s_in, s_out) = (rc.input_speedup as usize, rc.output_speedup as usize);
    let max = crate::topology::MAX_PORTS;
    let in_range = s_in <= crate::router::MAX_SPEEDUP && s_out <= crate::router::MAX_SPEEDUP;
    if (s_in > 1 || s_out > 1) && in_range && ports * s_in.max(s_out) > max {
        let path = if s_in >= s_out { "router.input_speedup" } else { "router.output_speedup" };
        errs.push(ConfigError::new(
            path,
            format!(
                "the routers' {ports} ports expand to {} crossbar ports, at most {max}: give at most {}, got {}",
                ports * s_in.max(s_out),
                max / ports,
                s_in.max(s_out)
            ),
        ));
    }
}

/// `[router] vc_allocator`: iSLIP's iterations in range, and the routers the allocators
/// over input and output VCs run on.
fn check_vc_allocator(errs: &mut Vec<ConfigError>, rc: &crate::config::RouterConfig) {
    use crate::config::{VcAllocatorKind, VcSelection};
    let a = &rc.vc_allocator;
    let name = match a.kind {
        VcAllocatorKind::OutputPort => "output_port",
        VcAllocatorKind::Islip => "islip",
        VcAllocatorKind::SeparableInputFirst => "separable_input_first",
    };
    match (a.kind, a.iterations) {
        (VcAllocatorKind::Islip, Some(n)) => range(errs, "router.vc_allocator.iterations", n, 1, 16),
        (_, Some(n)) => errs.push(ConfigError::new(
            "router.vc_allocator.iterations",
            format!(
                "the {name} VC allocator makes one pass (iSLIP's take iterations); remove the key, got {n}"
            ),
        )),
        (_, None) => {}
    }
    if a.kind != VcAllocatorKind::OutputPort {
        if rc.kind == RouterKind::Preemptive {
            errs.push(ConfigError::new(
                "router.vc_allocator.kind",
                format!(
                    "\"{name}\" runs on the traditional and non_preemptive routers: the preemptive router's \
                     headers may take a VC held by a lower class, which its matching does not model; use \"output_port\""
                ),
            ));
        }
        if rc.vc_selection != VcSelection::LowestFree {
            errs.push(ConfigError::new(
                "router.vc_selection",
                format!(
                    "has no effect with router.vc_allocator.kind = \"{name}\", whose pointers pick each header's VC; \
                     remove the key"
                ),
            ));
        }
    }
}

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
    // (BookSim2's input arbiters over outputs: its separable allocator's, without the
    // speedups whose crossbar inputs would each need their own)
    if a.input_choice == crate::config::InputChoice::Output {
        if a.kind != AllocatorKind::SeparableInputFirst {
            errs.push(ConfigError::new(
                "router.allocator.input_choice",
                "\"output\" is the separable allocator's input choice: give kind = \"separable_input_first\" \
                 or leave input_choice out",
            ));
        } else if rc.speedup > 1 || rc.input_speedup > 1 || rc.output_speedup > 1 {
            errs.push(ConfigError::new(
                "router.allocator.input_choice",
                "\"output\" runs without router.speedup, input_speedup and output_speedup (got them above 1); \
                 use \"vc\"",
            ));
        }
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

/// Check one scheduler configuration's parameters.
pub(super) fn check_scheduler(errs: &mut Vec<ConfigError>, path: &str, cfg: &SchedulerConfig, vcs: u32) {
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

/// Which classes have traffic: a `[[traffic]]` entry of the class, and control for admission
/// control's probes and answers.
pub(super) fn present_classes(cfg: &Config) -> [bool; 3] {
    let mut present = [false; 3];
    for t in &cfg.traffic {
        present[t.class.index()] = true;
    }
    // Admission control's probes and answers are control traffic (document 000 §4.1).
    present[0] |= cfg.endpoint.admission.is_some();
    present
}

/// The classes' own VC masks (`home_vcs`), from `vc_classes` and the VCs the routing needs
/// per class; all zero when `router.vcs` is out of range or the split is refused (reported).
pub(super) fn home_split(
    cfg: &Config,
    present: [bool; 3],
    routing: Option<&Routing>,
    errs: &mut Vec<ConfigError>,
) -> [u32; 3] {
    let rc = &cfg.router;
    let mut split = [0u32; 3];
    if (1..=32).contains(&rc.vcs) {
        let need = routing.map_or(1, Routing::vcs_per_class);
        match class_split(cfg, present, rc.vcs, need) {
            Ok(m) => split = m,
            Err(e) => errs.push(ConfigError::new("router.vc_classes", e)),
        }
    }
    split
}

/// The VCs each class may be given (`class_vcs`): its own split, but on the preemptive
/// router any VC but (where it is exclusive) control's.
pub(super) fn class_vcs(cfg: &Config, present: [bool; 3], split: [u32; 3]) -> [u32; 3] {
    let rc = &cfg.router;
    // The preemptive router lets real-time and best-effort messages take any VC; control
    // keeps its own (document 003 §4.2: VC 0 "for both the models"), which the others may
    // not take (`control_vc = "exclusive"`) or may, control then preempting them ("shared").
    match rc.kind {
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

/// A routing's VC classes — a torus's dateline pair, the LID paths', a dragonfly's or a
/// flattened butterfly's detour layers — are taken
/// within each traffic class's VCs (`Routing::route_in_class`): a class with traffic needs
/// one VC per routing class, or its packets that need a missing one would wait forever.
pub(super) fn vcs_per_class(
    errs: &mut Vec<ConfigError>,
    present: [bool; 3],
    class_vcs: [u32; 3],
    routing: &Routing,
) {
    let need = routing.vcs_per_class();
    for (i, &mask) in class_vcs.iter().enumerate() {
        if present[i] && mask.count_ones() < need {
            let what = match routing {
                Routing::DorDateline { .. } => {
                    "on a torus, where dateline routing needs two per class".to_string()
                }
                Routing::MinAdapt { torus, .. } => format!(
                    "where min_adapt routing needs {} escape VC(s) and one adaptive, {need} per class",
                    if *torus { 2 } else { 1 }
                ),
                Routing::Dragonfly { .. } | Routing::FlatFly { .. } | Routing::FlatFlyTurns { .. } => {
                    format!(
                        "on a {}, where routing.kind = {:?} needs a VC per layer, {need} per class",
                        if matches!(routing, Routing::Dragonfly { .. }) { "dragonfly" } else { "flatfly" },
                        routing.kind_name()
                    )
                }
                Routing::Oblivious { .. } | Routing::CMesh { .. } => format!(
                    "on a {}, where routing.kind = {:?} needs a VC per layer, {need} per class",
                    if matches!(routing, Routing::CMesh { .. }) { "cmesh" } else { "mesh" },
                    routing.kind_name()
                ),
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

//! `[physical]` and `[simulation]`: the flit size, and the run's durations, time limit and
//! watchdog.

use super::range;
use crate::config::{Config, VcRelease, MAX_CYCLES, MAX_THREADS};
use crate::error::ConfigError;
use crate::units::Clock;

/// `[physical] flit_bits`.
pub(super) fn check_physical(cfg: &Config, errs: &mut Vec<ConfigError>) {
    range(errs, "physical.flit_bits", cfg.physical.flit_bits, 1, 1 << 20);
}

/// `[simulation]`: durations within [`MAX_CYCLES`], a wall-clock time limit, a measurement
/// window, and a watchdog that outlasts every delay (given a flit size to count cycles by).
pub(super) fn check_simulation(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) {
    let sim = &cfg.simulation;
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
            format!(
                "is wall-clock time: give it with a unit (\"30 s\", \"10 min\", \"2 h\"), got {c} (cycles)"
            ),
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
}

/// The watchdog must outlast the longest single wait a flit can have with nothing else
/// moving, or a slow but healthy pipeline would be reported as a deadlock; `longest_link`:
/// the longest latency the built topology sets for some links (`Topology::longest_link`).
pub(super) fn check_watchdog(cfg: &Config, clock: &Clock, longest_link: u32, errs: &mut Vec<ConfigError>) {
    let rc = &cfg.router;
    let pl = &rc.pipeline;
    let link = rc.link_latency.max(cfg.endpoint.link_latency.unwrap_or(0)).max(longest_link);
    let longest = [
        pl.sync,
        pl.routing,
        pl.vc_alloc,
        pl.crossbar,
        pl.output.max(cfg.endpoint.output_stage).saturating_add(link),
        rc.credit_latency.saturating_add(longest_link),
    ]
    .into_iter()
    .max()
    .unwrap_or(0) as u64;
    let wd = clock.duration_cycles(cfg.simulation.watchdog);
    if wd <= longest {
        errs.push(ConfigError::new(
            "simulation.watchdog",
            format!("must be longer than the longest pipeline, link or credit delay ({longest} cycles), got {wd} cycles"),
        ));
    }
}

/// `simulation.threads` (ARCHITECTURE.md "Threads"): at most one a router, and 1 for a run
/// whose routers reach more of the simulation than a shard holds (`router::shards`):
/// marking, admission control's hops, the recordings of `[trace]`, agents that read the
/// routers, and a way drawn for a header that waits behind a tail (`VcRelease::TailSent`
/// with Valiant, UGAL, ...: it draws as the tail leaves, inside the routers' phase, where
/// the threads would not keep the one generator's order). What the build found:
/// `marking`, `sideband`, `admission`, `draws_at_source`.
pub(super) fn check_threads(cfg: &Config, routers: usize, found: ThreadsFound, errs: &mut Vec<ConfigError>) {
    let threads = cfg.simulation.threads;
    range(errs, "simulation.threads", threads, 1, MAX_THREADS);
    if threads <= 1 {
        return;
    }
    if threads as usize > routers {
        errs.push(ConfigError::new(
            "simulation.threads",
            format!("must be at most the number of routers ({routers}), got {threads}"),
        ));
    }
    let trace = cfg.trace.as_ref().is_some_and(|t| t.stalls || !t.watch_flows.is_empty());
    let needs_one = [
        (found.marking, "[router] marking"),
        (found.admission, "admission control (reserved connections)"),
        (trace, "[trace] stalls or watch_flows"),
        (found.sideband, "an agent that reads the routers (ALO, Self-Tuned)"),
        (
            found.draws_at_source && cfg.router.vc_release == VcRelease::TailSent,
            "router.vc_release = \"tail_sent\" with a routing that draws a way at the source (Valiant, UGAL, xy_yx, NCA)",
        ),
    ];
    let found: Vec<&str> = needs_one.iter().filter(|(on, _)| *on).map(|(_, what)| *what).collect();
    if !found.is_empty() {
        errs.push(ConfigError::new(
            "simulation.threads",
            format!(
                "must be 1 with {}: the routers then reach state a thread's shard does not hold, got {threads}",
                found.join(", ")
            ),
        ));
    }
}

/// What `check_threads` needs of the built run.
pub(super) struct ThreadsFound {
    pub marking: bool,
    pub sideband: bool,
    pub admission: bool,
    pub draws_at_source: bool,
}

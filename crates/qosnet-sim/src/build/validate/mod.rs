//! Semantic validation: every problem in a parsed configuration, each with its path and
//! the allowed values. Also builds what validation needs anyway (topology, routing,
//! traffic), so the engine never re-derives them.

use crate::config::{Config, MAX_CYCLES};
use crate::control::Agents;
use crate::endpoint::nic::NicParams;
use crate::error::{ConfigError, ConfigErrors};
use crate::router::Marking;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::TrafficSpec;
use crate::units::Clock;

mod endpoint;
mod memory;
mod network;
mod reservations;
mod router;
mod simulation;
mod traffic;

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

/// Check a configuration section by section, every error with its path (in this order),
/// and build what the run is built from.
pub fn validate(cfg: &Config) -> Result<Validated, ConfigErrors> {
    let mut errs = Vec::new();
    let clock = Clock {
        flit_bits: cfg.physical.flit_bits,
        link_bits_per_second: cfg.physical.link_bandwidth.bits_per_second,
    };
    simulation::check_physical(cfg, &mut errs);
    if cfg.physical.flit_bits > 0 {
        simulation::check_simulation(cfg, &clock, &mut errs);
    }
    router::check_router(cfg, &mut errs);
    endpoint::check_endpoint(cfg, &mut errs);
    router::check_preemption_and_pipeline(cfg, &mut errs);
    if let Err(e) = memory_before_building(cfg) {
        errs.push(e);
        return Err(ConfigErrors(errs));
    }
    let topology = network::build_topology(cfg, &mut errs);
    if let Some(t) = &topology {
        router::check_crossbar_ports(cfg, t.ports, &mut errs);
    }
    if cfg.physical.flit_bits > 0 {
        let longest_link = topology.as_ref().map_or(0, |t| t.longest_link());
        simulation::check_watchdog(cfg, &clock, longest_link, &mut errs);
    }
    let routing = network::build_routing(cfg, topology.as_ref(), &mut errs);
    let (specs, spec_nodes) = traffic::check_traffic(cfg, &clock, topology.as_ref(), &mut errs);
    traffic::check_mix(cfg, &clock, &mut errs);
    let present = router::present_classes(cfg);
    let split = router::home_split(cfg, present, routing.as_ref(), &mut errs);
    let rc = &cfg.router;
    // (an application's packets too: document 001 §4.2's jobs share the NICs)
    let app_packet = cfg.application.iter().map(|a| a.packet_flits).max().unwrap_or(1);
    let max_packet =
        specs.iter().map(|s| s.packet_flits.min(s.message_flits)).max().unwrap_or(1).max(app_packet);
    let nic = NicParams::build(cfg, &clock, max_packet, &mut errs);
    let nodes = topology.as_ref().map_or(0, |t| t.nodes);
    let marking = Marking::build(rc.marking.as_ref(), rc.input_buffer, rc.output_buffer, clock.flit_bits)
        .unwrap_or_else(|e| {
            errs.push(e);
            Marking::None
        });
    let agents =
        Agents::build(cfg.endpoint.agent.as_ref(), nodes, &clock, &cfg.files()).unwrap_or_else(|e| {
            errs.push(e);
            Agents::NONE
        });
    if agents.reacts_to_marks() && rc.marking.is_none() {
        errs.push(ConfigError::new(
            "endpoint.agent",
            "the agent reacts to marked packets (FECN, ECN), and no switch marks: set [router] marking (e.g. { kind = \"iba_cc\", threshold = 10 }, or { kind = \"red\", kmin = \"128 B\", kmax = \"512 B\", pmax = 0.01 })",
        ));
    }
    super::agents::check_params(cfg, &clock, &mut errs);
    // (an application's ranks are checked against the nodes; its jobs are built here)
    let jobs = match &topology {
        Some(t) => crate::traffic::application::build_jobs(cfg, &clock, t.nodes).unwrap_or_else(|e| {
            errs.extend(e);
            Vec::new()
        }),
        None => Vec::new(),
    };
    let drb_timer = network::check_drb(cfg, &clock, &mut errs);
    if let (Some(topo), Some(routing)) = (&topology, &routing) {
        reservations::check_reservations(cfg, &clock, &nic, topo, routing, &specs, &spec_nodes, &mut errs);
    }
    // The whole estimate, now that the topology (a fabric's size) and the sources are known.
    let estimate = topology.as_ref().and_then(|topo| memory_of(cfg, topo, &specs, &spec_nodes, &mut errs));
    let class_vcs = router::class_vcs(cfg, present, split);
    if let Some(routing) = &routing {
        router::vcs_per_class(&mut errs, present, class_vcs, routing);
    }
    let (Some(topology), Some(routing), true) = (topology, routing, errs.is_empty()) else {
        return Err(ConfigErrors(errs));
    };
    let mut agents = agents;
    let lanes = endpoint::lanes(rc);
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
    let mut errs = Vec::new();
    let found = simulation::ThreadsFound {
        marking: marking != Marking::None,
        sideband: agents.sideband != 0,
        admission: flows.reservations.is_on(),
        draws_at_source: routing.chooses_at_source(),
    };
    simulation::check_threads(cfg, topology.routers, found, &mut errs);
    if !errs.is_empty() {
        return Err(ConfigErrors(errs));
    }
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

/// The memory the run needs, from the configuration alone: a network that cannot fit
/// is not built, not even its topology.
fn memory_before_building(cfg: &Config) -> Result<(), ConfigError> {
    let rc = &cfg.router;
    if let (Some(shape), true) = (memory::Shape::of_config(&cfg.topology), (1..=32).contains(&rc.vcs)) {
        let traffic = memory::TrafficShape::of_config(cfg, shape.nodes);
        memory::check(cfg, memory::estimate(cfg, shape, traffic))?;
    }
    Ok(())
}

/// The whole memory estimate over the built topology and sources (None: over the limit,
/// reported).
fn memory_of(
    cfg: &Config,
    topo: &Topology,
    specs: &[TrafficSpec],
    spec_nodes: &[Vec<u32>],
    errs: &mut Vec<ConfigError>,
) -> Option<crate::config::MemoryEstimate> {
    let shape = memory::Shape::of_topology(topo);
    let mut traffic = memory::TrafficShape::of_config(cfg, shape.nodes);
    if specs.len() == cfg.traffic.len() {
        traffic.sources =
            specs.iter().zip(spec_nodes).map(|(s, n)| n.len() as u128 * s.sources_per_node() as u128).sum();
        traffic.messages_per_cycle =
            specs.iter().zip(spec_nodes).map(|(s, n)| n.len() as f64 * s.messages_per_cycle_per_node()).sum();
    }
    match memory::check(cfg, memory::estimate(cfg, shape, traffic)) {
        Ok(e) => Some(e),
        Err(e) => {
            errs.push(e);
            None
        }
    }
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

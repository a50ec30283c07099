//! Semantic validation: every problem in a parsed configuration, each with its path and
//! the allowed values. Also builds what validation needs anyway (topology, routing,
//! traffic), so the engine never re-derives them.

use super::{Config, NodeSet, TopologyConfig};
use crate::error::{ConfigError, ConfigErrors};
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::pattern::Pattern;
use crate::traffic::TrafficSpec;
use crate::units::Clock;

/// Longest run or measurement window accepted, in cycles (about 2.5 years at 80 ns).
pub const MAX_CYCLES: u64 = 1_000_000_000_000_000;

/// The parts of a configuration that validation had to build.
pub struct Validated {
    pub clock: Clock,
    pub topology: Topology,
    pub routing: Routing,
    pub specs: Vec<TrafficSpec>,
    /// Per spec, the nodes that run it.
    pub spec_nodes: Vec<Vec<u32>>,
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
        if clock.duration_cycles(sim.measure) == 0 {
            errs.push(ConfigError::new("simulation.measure", "must be at least one cycle, got 0"));
        }
        // The watchdog must outlast the longest single wait a flit can have with nothing
        // else moving, or a slow but healthy pipeline would be reported as a deadlock.
        let pl = &rc.pipeline;
        let longest =
            [pl.sync, pl.routing, pl.vc_alloc, pl.crossbar, pl.output + rc.link_latency, rc.credit_latency]
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
    range(&mut errs, "router.input_buffer", rc.input_buffer, 1, 65_535);
    range(&mut errs, "router.output_buffer", rc.output_buffer, 1, 65_535);
    range(&mut errs, "router.link_latency", rc.link_latency, 1, 10_000);
    range(&mut errs, "router.credit_latency", rc.credit_latency, 1, 10_000);
    range(&mut errs, "router.speedup", rc.speedup, 1, 16);
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

    let topology = match Topology::build(&cfg.topology) {
        Ok(t) => Some(t),
        Err(e) => {
            errs.push(e);
            None
        }
    };
    if let (Some(t), TopologyConfig::Star { .. } | TopologyConfig::FatTree { .. }) =
        (&topology, &cfg.topology)
    {
        if t.ports > crate::router::MAX_PORTS {
            errs.push(ConfigError::new(
                "topology",
                format!("routers would have {} ports; at most {}", t.ports, crate::router::MAX_PORTS),
            ));
        }
    }
    let routing =
        topology.as_ref().filter(|_| (1..=32).contains(&rc.vcs)).and_then(|t| {
            match Routing::build(cfg.routing.kind, t, rc.vcs) {
                Ok(r) => Some(r),
                Err(e) => {
                    errs.push(e);
                    None
                }
            }
        });

    if cfg.traffic.is_empty() {
        errs.push(ConfigError::new("traffic", "at least one [[traffic]] source is required"));
    }
    let mut specs = Vec::new();
    let mut spec_nodes = Vec::new();
    for (i, t) in cfg.traffic.iter().enumerate() {
        let path = format!("traffic[{i}]");
        let load = match (t.load, t.rate) {
            (Some(l), None) => {
                if !(l > 0.0 && l <= 1.0) {
                    errs.push(ConfigError::new(
                        format!("{path}.load"),
                        format!("must be in (0, 1] (a fraction of link bandwidth), got {l}"),
                    ));
                }
                l
            }
            (None, Some(r)) => {
                let l = clock.flits_per_cycle(r);
                if l > 1.0 {
                    errs.push(ConfigError::new(
                        format!("{path}.rate"),
                        format!("{r} exceeds the link bandwidth {}", cfg.physical.link_bandwidth),
                    ));
                }
                l
            }
            _ => {
                errs.push(ConfigError::new(
                    path.clone(),
                    "give exactly one of `load` (fraction of link bandwidth) or `rate` (e.g. \"400 Mb/s\")",
                ));
                0.0
            }
        };
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
                l.clone()
            }
        };
        match Pattern::build(&t.pattern, topo, |p| cfg.resolve_path(p), &format!("{path}.pattern")) {
            Ok(pattern) => {
                specs.push(TrafficSpec {
                    class: t.class,
                    process: t.process,
                    messages_per_cycle: load / t.message_flits.max(1) as f64,
                    message_flits: t.message_flits,
                    packet_flits: t.packet_flits,
                    pattern,
                });
                spec_nodes.push(nodes);
            }
            Err(e) => errs.push(e),
        }
    }

    if !errs.is_empty() {
        return Err(ConfigErrors(errs));
    }
    Ok(Validated { clock, topology: topology.unwrap(), routing: routing.unwrap(), specs, spec_nodes })
}

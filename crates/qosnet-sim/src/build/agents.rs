//! The control agents' part that needs the flows: what the flows are to them
//! (`control::FlowFacts`: each flow's node, class, destination and solicited bandwidth),
//! handed to the agents that are built from it (`Agents::for_flows`: credit-based, ALO,
//! Self-Tuned), and admission control's connections and link reservations (document 000
//! §4.1). No agent is named here: each builds and checks itself in its own file. Every
//! error names its field.

use crate::config::{Config, TrafficClass};
use crate::control::{AdmissionParams, Agents, FlowFacts, ProbeAdmission, Reservations, LINK};
use crate::error::{ConfigError, ConfigErrors};
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::driver::Traffic;
use crate::traffic::video::{frame_flits, FrameTrace};
use crate::traffic::ProcessSpec;
use crate::units::Clock;

/// Flow `s`'s mean and peak rate, flits per cycle (its busiest phase).
/// (`largest[spec][trace]`: the largest frame of each video trace, bytes.)
fn mean_and_peak(traffic: &Traffic, s: usize, clock: &Clock, largest: &[Vec<f64>]) -> (f64, f64) {
    let src = &traffic.sources[s];
    let spec = &traffic.specs[src.spec as usize];
    let phases = spec.rate_by_phase.len().max(1);
    let busiest = |f: &dyn Fn(usize) -> f64| (0..phases).map(f).fold(0.0, f64::max);
    match &spec.process {
        ProcessSpec::Video(v) => {
            let t = src.stream as usize % v.traces.len().max(1);
            let on = busiest(&|p| spec.source_rate(src.stream, p)) > 0.0;
            if !on {
                return (0.0, 0.0);
            }
            let largest = largest[src.spec as usize][t];
            (v.flits_per_cycle[t], frame_flits(largest, clock.flit_bits) as f64 / v.period)
        }
        ProcessSpec::OnOff(o) => {
            let mean = busiest(&|p| spec.rate(p)) * spec.message_flits as f64;
            (mean, o.rate_on(mean))
        }
        ProcessSpec::MarkovOnOff(m) => {
            let mean = busiest(&|p| spec.rate(p)) * spec.message_flits as f64;
            (mean, m.rate_on(mean))
        }
        _ => {
            let mean = busiest(&|p| spec.rate(p)) * spec.message_flits as f64;
            (mean, mean)
        }
    }
}

/// Complete `agents` for the flows of `traffic`: the credit agent's consumers, admission's
/// connections. Returns the link reservations (empty without admission control).
pub(super) fn complete(
    agents: &mut Agents,
    cfg: &Config,
    traffic: &Traffic,
    topo: &Topology,
    routing: &Routing,
    clock: &Clock,
    class_vcs: [u32; 3],
) -> Result<Reservations, ConfigErrors> {
    let control_vcs = class_vcs[0];
    let flows = traffic.sources.len() + 1;
    let mut errs = Vec::new();
    let spec_of = |s: usize| traffic.sources[s].spec as usize;
    let class_of = |s: usize| traffic.specs[spec_of(s)].class;
    // A source's one destination (a stream's own, or its pattern's), if it has one.
    let dst_of = |s: usize| {
        let src = &traffic.sources[s];
        if src.dst != u32::MAX {
            Some(src.dst)
        } else {
            traffic.specs[spec_of(s)].pattern.fixed_destination(src.node as usize)
        }
    };
    let fixed_dst = |s: usize| dst_of(s).is_some();
    // Solicited bandwidth per flow, flits per cycle (0: not a connection).
    let factor = cfg.endpoint.admission.as_ref().map_or(0.0, |a| a.effective_factor);
    // Each video trace's largest frame, found once: a run may have thousands of streams
    // on a trace of thousands of frames (the seed-003 router's mix spent a twelfth of a
    // 20 ms run finding it per stream).
    let largest: Vec<Vec<f64>> = traffic
        .specs
        .iter()
        .map(|spec| match &spec.process {
            ProcessSpec::Video(v) => v.traces.iter().map(FrameTrace::largest_bytes).collect(),
            _ => Vec::new(),
        })
        .collect();
    let bandwidth: Vec<f64> = (0..traffic.sources.len())
        .map(|s| {
            if class_of(s) != TrafficClass::RealTime || !fixed_dst(s) {
                return 0.0;
            }
            if let Some(r) = traffic.specs[spec_of(s)].reserve {
                return r;
            }
            let (mean, peak) = mean_and_peak(traffic, s, clock, &largest);
            mean + factor * (peak - mean)
        })
        .collect();

    let facts = FlowFacts {
        node: traffic.sources.iter().map(|s| s.node).collect(),
        spec: (0..traffic.sources.len()).map(spec_of).collect(),
        dst: (0..traffic.sources.len()).map(dst_of).collect(),
        bandwidth: bandwidth.clone(),
        class: (0..flows)
            .map(|f| if f < traffic.sources.len() { class_of(f) } else { TrafficClass::Control })
            .collect(),
        topo,
        routing,
        vcs: cfg.router.vcs,
        class_vcs,
        clock,
        admission: cfg.endpoint.admission.is_some(),
    };
    agents.for_flows(cfg.endpoint.agent.as_ref(), &facts, &mut errs);

    let mut reservations = Reservations::default();
    if let Some(a) = &cfg.endpoint.admission {
        if control_vcs == 0 {
            errs.push(ConfigError::new(
                "router.vc_classes",
                "admission control sends its probes on the control class, which has no VC: give control a VC",
            ));
        }
        let retry =
            crate::control::control_delay("endpoint.admission.retry_after", Some(a.retry_after), clock)
                .unwrap_or_else(|e| {
                    errs.push(e);
                    1
                })
                .max(1);
        for s in 0..traffic.sources.len() {
            if class_of(s) == TrafficClass::RealTime && !fixed_dst(s) {
                errs.push(ConfigError::new(
                    format!("traffic[{}].pattern", spec_of(s)),
                    "admission control sets up real-time connections: use one destination per source (kind = \"fixed\", a permutation or a bit pattern)",
                ));
                break;
            }
        }
        let units: Vec<u64> = (0..flows)
            .map(|f| {
                let b = bandwidth.get(f).copied().unwrap_or(0.0);
                if b > 0.0 {
                    ((b * LINK as f64).round() as u64).max(1)
                } else {
                    0
                }
            })
            .collect();
        let conns: Vec<_> = (0..flows)
            .map(|f| {
                (units[f] > 0).then(|| {
                    let dst = dst_of(f).unwrap_or(u32::MAX);
                    (traffic.sources[f].node, dst, class_of(f))
                })
            })
            .collect();
        if errs.is_empty() {
            let limit = (a.limit * LINK as f64).round() as u64;
            reservations = Reservations::new(topo.nodes, topo.routers, topo.ports, limit, &units);
            // The node port a router sends its NACKs from: its first attached node.
            let mut router_node = vec![u32::MAX; topo.routers];
            for (n, &(r, _)) in topo.attach.iter().enumerate().rev() {
                router_node[r.index()] = n as u32;
            }
            if let Some(r) = router_node.iter().position(|&n| n == u32::MAX) {
                errs.push(ConfigError::new(
                    "endpoint.admission",
                    format!("router {r} has no node port to send its NACKs from; admission control needs a node at every router, which a fat tree's upper levels and a fly's later stages lack (a mesh, torus, star, dragonfly, flattened butterfly or concentrated mesh has one)"),
                ));
            }
            reservations.router_node = router_node;
            let p = AdmissionParams {
                retry_after: retry,
                attempts: a.attempts,
                connection_messages: a.connection_messages,
                signal_flits: a.signal_flits,
            };
            agents.admission = Some(Box::new(ProbeAdmission::new(p, &conns)));
        }
    }
    if errs.is_empty() {
        Ok(reservations)
    } else {
        Err(ConfigErrors(errs))
    }
}

/// The agents' and admission control's parameters on their own (ranges, and settings that
/// would do nothing): checked with the rest of the configuration, before the flows exist.
pub(super) fn check_params(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) {
    Agents::check_params(cfg.endpoint.agent.as_ref(), cfg.endpoint.admission.is_some(), clock, errs);
    let mut err = |path: &str, message: String| errs.push(ConfigError::new(path, message));
    if let Some(a) = &cfg.endpoint.admission {
        if !(0.0..=1.0).contains(&a.effective_factor) {
            err(
                "endpoint.admission.effective_factor",
                format!("must be in [0, 1] (0: the mean rate, 1: the peak), got {}", a.effective_factor),
            );
        }
        if !(a.limit > 0.0 && a.limit <= 1.0) {
            err(
                "endpoint.admission.limit",
                format!("must be in (0, 1] (a share of a link's bandwidth), got {}", a.limit),
            );
        }
        if a.attempts > 0 && cfg.endpoint.model != crate::config::NicModel::Ideal && nic_flow_queues(cfg) {
            err(
                "endpoint.admission.attempts",
                "giving up (dropping a refused connection's messages at the source) is modelled with doorbell queues only (endpoint.queues = \"fifo\" or \"per_class\"): use 0 (retry until admitted) with flow send queues".into(),
            );
        }
        if a.signal_flits == 0 {
            err("endpoint.admission.signal_flits", "must be a whole number >= 1, got 0".into());
        }
    }
}

/// Whether the NIC uses GM-style send queues per flow rather than doorbell queues.
fn nic_flow_queues(cfg: &Config) -> bool {
    use crate::config::SourceQueues;
    matches!(
        cfg.endpoint.queues,
        SourceQueues::RoundRobin | SourceQueues::Interleaved | SourceQueues::RateControl
    )
}

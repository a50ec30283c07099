//! The per-flow control agents, built once the flows are known: the credit-based
//! congestion control's consumers and credits (document 000 §4.2) and admission control's
//! connections and link reservations (§4.1). Every error names its field.

use crate::config::{AgentConfig, Config, TrafficClass};
use crate::control::{
    AdmissionParams, Agents, Alo, Congestion, Consumer, CreditCc, ProbeAdmission, Reservations, SelfTuned,
    SelfTunedParams, Useful, LINK,
};
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

    if let Some(AgentConfig::Credit { hca_messages, best_effort, retry_after }) = &cfg.endpoint.agent {
        let m = *hca_messages;
        let retry = crate::control::control_delay(
            "endpoint.agent.retry_after",
            Some(retry_after.unwrap_or(crate::units::Duration::Cycles(40))),
            clock,
        )
        .unwrap_or_else(|e| {
            errs.push(e);
            1
        })
        .max(1);
        let mut consumer = vec![Consumer::Free; flows];
        let mut initial: Vec<u32> = vec![*best_effort; topo.nodes];
        let mut node_of: Vec<u32> = (0..topo.nodes as u32).collect();
        let mut per_node: Vec<u64> = vec![*best_effort as u64; topo.nodes];
        for s in 0..traffic.sources.len() {
            let node = traffic.sources[s].node as usize;
            consumer[s] = match class_of(s) {
                TrafficClass::Control => Consumer::Free,
                TrafficClass::BestEffort => Consumer::BestEffort(node as u32),
                TrafficClass::RealTime => {
                    let spec = spec_of(s);
                    if !fixed_dst(s) {
                        errs.push(ConfigError::new(
                            format!("traffic[{spec}].pattern"),
                            "credit-based congestion control gives credits per real-time connection: use one destination per source (kind = \"fixed\", a permutation or a bit pattern)",
                        ));
                        continue;
                    }
                    // C_j = b_j / B · M, B one flit per cycle.
                    let exact = bandwidth[s] * m as f64;
                    let c = exact.floor() as u64;
                    if c == 0 && m > 0 {
                        errs.push(ConfigError::new(
                            "endpoint.agent.hca_messages",
                            format!("C_j = b_j / B x M = {exact:.3} rounds to 0 credits for traffic[{spec}]'s connections: raise M"),
                        ));
                        continue;
                    }
                    per_node[node] += c;
                    initial.push(c.min(u32::MAX as u64) as u32);
                    node_of.push(node as u32);
                    Consumer::RealTime(initial.len() as u32 - 1)
                }
            };
        }
        // With admission control a connection holds its C_j only while admitted, and best
        // effort's credits shrink to what the admitted ones leave of M (`CreditCc`): only
        // C_b itself must fit. Without it every configured connection holds its C_j.
        // (C_b <= M itself is checked with the parameters: `check_params`)
        let admission = cfg.endpoint.admission.is_some();
        if let Some((node, &sum)) = per_node.iter().enumerate().find(|(_, &c)| c > m as u64 && !admission) {
            errs.push(ConfigError::new(
                "endpoint.agent.best_effort",
                format!("C_b + sum of C_j = {sum} at node {node} exceeds M = {m} (endpoint.agent.hca_messages): sum C_i <= M (with endpoint.admission, only the admitted connections count)"),
            ));
        }
        if errs.is_empty() {
            agents.congestion =
                Congestion::Credit(CreditCc::new(consumer, initial, node_of, m, !admission, retry));
        }
    }

    let flow_class: Vec<TrafficClass> = (0..flows)
        .map(|f| if f < traffic.sources.len() { class_of(f) } else { TrafficClass::Control })
        .collect();
    match &cfg.endpoint.agent {
        Some(AgentConfig::Alo) => match alo(topo, routing, cfg.router.vcs, class_vcs, flow_class.clone()) {
            Ok(a) => {
                agents.congestion = Congestion::Alo(a);
                agents.sideband = 1;
            }
            Err(e) => errs.push(e),
        },
        Some(AgentConfig::SelfTuned { gather, tune_every, increment, decrement, initial, tolerance }) => {
            // (ranges: `check_params`; defaults: our unverified reading of Thottethodi et al., HPCA 2001; see
            // `control/self_tuned.rs` for what was searched)
            let p = SelfTunedParams {
                gather: clock.duration_cycles(gather.unwrap_or(crate::units::Duration::Cycles(32))),
                tune_every: tune_every.unwrap_or(3),
                increment: increment.unwrap_or(SELF_TUNED_DEFAULTS[0]),
                decrement: decrement.unwrap_or(SELF_TUNED_DEFAULTS[1]),
                initial: initial.unwrap_or(SELF_TUNED_DEFAULTS[2]),
                tolerance: tolerance.unwrap_or(SELF_TUNED_DEFAULTS[3]),
            };
            let buffers = (topo.routers * topo.ports) as u64 * cfg.router.vcs as u64;
            agents.sideband = p.gather.max(1);
            agents.congestion = Congestion::SelfTuned(SelfTuned::new(p, buffers, flow_class.clone()));
        }
        _ => {}
    }

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
                    format!("router {r} has no node port to send its NACKs from; admission control needs a node at every router (a mesh, torus or single router)"),
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

/// Self-Tuned's increment, decrement, initial threshold and tolerance when not given (our
/// unverified reading of Thottethodi et al., HPCA 2001; see `control/self_tuned.rs`).
const SELF_TUNED_DEFAULTS: [f64; 4] = [0.01, 0.04, 0.04, 0.0];

/// The agents' and admission control's parameters on their own (ranges, and settings that
/// would do nothing): checked with the rest of the configuration, before the flows exist.
pub(super) fn check_params(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) {
    let mut err = |path: &str, message: String| errs.push(ConfigError::new(path, message));
    match &cfg.endpoint.agent {
        Some(AgentConfig::Credit { hca_messages, best_effort, .. }) => {
            if *hca_messages == 0 {
                err(
                    "endpoint.agent.hca_messages",
                    "must be a whole number >= 1 (M, the HCA buffer in messages), got 0".into(),
                );
            }
            if *best_effort == 0 {
                err(
                    "endpoint.agent.best_effort",
                    "must be a whole number >= 1 (C_b, best effort's initial credits per node), got 0".into(),
                );
            } else if cfg.endpoint.admission.is_some() && best_effort > hca_messages {
                // (without admission, C_b plus every connection's C_j must fit: `complete`)
                err(
                    "endpoint.agent.best_effort",
                    format!(
                        "C_b = {best_effort} exceeds M = {hca_messages} (endpoint.agent.hca_messages): C_b <= M - sum C_j"
                    ),
                );
            }
        }
        Some(AgentConfig::SelfTuned { gather, tune_every, increment, decrement, initial, tolerance }) => {
            let given = [increment, decrement, initial, tolerance];
            for (name, (v, d)) in ["increment", "decrement", "initial", "tolerance"]
                .into_iter()
                .zip(given.into_iter().zip(SELF_TUNED_DEFAULTS))
            {
                let v = v.unwrap_or(d);
                if !(0.0..=1.0).contains(&v) {
                    err(
                        &format!("endpoint.agent.{name}"),
                        format!("must be in [0, 1] (a fraction of the network's buffers), got {v}"),
                    );
                }
            }
            if gather.is_some_and(|g| clock.duration_cycles(g) == 0) {
                err("endpoint.agent.gather", "must be at least one cycle".into());
            }
            if *tune_every == Some(0) {
                err(
                    "endpoint.agent.tune_every",
                    "must be a whole number >= 1 (gathers per tuning period), got 0".into(),
                );
            }
        }
        _ => {}
    }
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

/// Most nodes ALO's first-hop table (nodes² entries) is built for.
const ALO_MAX_NODES: usize = 4096;

/// ALO over `topo`: per (source, destination) the useful channels at the source's router,
/// one per path the routing offers, with the VCs the route allows.
fn alo(
    topo: &Topology,
    routing: &Routing,
    vcs: u32,
    class_vcs: [u32; 3],
    class: Vec<TrafficClass>,
) -> Result<Alo, ConfigError> {
    let nodes = topo.nodes;
    if nodes > ALO_MAX_NODES {
        return Err(ConfigError::new(
            "endpoint.agent",
            format!(
                "ALO keeps a first-hop table of nodes^2 entries: at most {ALO_MAX_NODES} nodes, got {nodes}"
            ),
        ));
    }
    let mut first_hop = Vec::with_capacity(nodes * nodes);
    for src in 0..nodes {
        let (r, p) = topo.attach[src];
        for dst in 0..nodes {
            let useful = (0..routing.paths())
                .map(|path| {
                    let route = routing.route(topo, r.index(), p as usize, 0, dst, path, vcs);
                    Useful { port: r.0 * topo.ports as u32 + route.port, vcs: route.vcs }
                })
                .collect();
            first_hop.push(useful);
        }
    }
    Ok(Alo::new(nodes, first_hop, topo.routers * topo.ports, class, class_vcs))
}

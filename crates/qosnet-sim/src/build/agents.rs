//! The per-flow control agents, built once the flows are known: the credit-based
//! congestion control's consumers and credits (document 000 §4.2) and admission control's
//! connections and link reservations (§4.1). Every error names its field.

use crate::config::{AgentConfig, Config, TrafficClass};
use crate::control::{
    AdmissionParams, Agents, Congestion, Consumer, CreditCc, ProbeAdmission, Reservations, LINK,
};
use crate::error::{ConfigError, ConfigErrors};
use crate::topology::Topology;
use crate::traffic::driver::Traffic;
use crate::traffic::video::frame_flits;
use crate::traffic::ProcessSpec;
use crate::units::Clock;

/// Flow `s`'s mean and peak rate, flits per cycle (its busiest phase).
fn mean_and_peak(traffic: &Traffic, s: usize, clock: &Clock) -> (f64, f64) {
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
            let largest = v.traces[t].frame_bytes.iter().copied().fold(0.0, f64::max);
            (v.flits_per_cycle[t], frame_flits(largest, clock.flit_bits) as f64 / v.period)
        }
        ProcessSpec::OnOff(o) => {
            let mean = busiest(&|p| spec.rate(p)) * spec.message_flits as f64;
            (mean, o.rate_on(mean))
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
    clock: &Clock,
    control_vcs: u32,
) -> Result<Reservations, ConfigErrors> {
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
    let bandwidth: Vec<f64> = (0..traffic.sources.len())
        .map(|s| {
            if class_of(s) != TrafficClass::RealTime || !fixed_dst(s) {
                return 0.0;
            }
            if let Some(r) = traffic.specs[spec_of(s)].reserve {
                return r;
            }
            let (mean, peak) = mean_and_peak(traffic, s, clock);
            mean + factor * (peak - mean)
        })
        .collect();

    if let Some(AgentConfig::Credit { hca_messages, best_effort, retry_after }) = &cfg.endpoint.agent {
        let m = *hca_messages;
        if m == 0 {
            errs.push(ConfigError::new(
                "endpoint.agent.hca_messages",
                "must be a whole number >= 1 (M, the HCA buffer in messages), got 0",
            ));
        }
        if *best_effort == 0 {
            errs.push(ConfigError::new(
                "endpoint.agent.best_effort",
                "must be a whole number >= 1 (C_b, best effort's initial credits per node), got 0",
            ));
        }
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
                    Consumer::RealTime(initial.len() as u32 - 1)
                }
            };
        }
        if let Some((node, &sum)) = per_node.iter().enumerate().find(|(_, &c)| c > m as u64) {
            errs.push(ConfigError::new(
                "endpoint.agent.best_effort",
                format!("C_b + sum of C_j = {sum} at node {node} exceeds M = {m} (endpoint.agent.hca_messages): sum C_i <= M"),
            ));
        }
        if errs.is_empty() {
            agents.congestion = Congestion::Credit(CreditCc::new(consumer, initial, retry));
        }
    }

    let mut reservations = Reservations::default();
    if let Some(a) = &cfg.endpoint.admission {
        if !(0.0..=1.0).contains(&a.effective_factor) {
            errs.push(ConfigError::new(
                "endpoint.admission.effective_factor",
                format!("must be in [0, 1] (0: the mean rate, 1: the peak), got {}", a.effective_factor),
            ));
        }
        if !(a.limit > 0.0 && a.limit <= 1.0) {
            errs.push(ConfigError::new(
                "endpoint.admission.limit",
                format!("must be in (0, 1] (a share of a link's bandwidth), got {}", a.limit),
            ));
        }
        if a.attempts > 0 && cfg.endpoint.model != crate::config::NicModel::Ideal {
            errs.push(ConfigError::new(
                "endpoint.admission.attempts",
                "giving up (dropping a refused connection's messages at the source) is modelled with the ideal endpoint only: use 0 (retry until admitted) with a NIC model",
            ));
        }
        if a.signal_flits == 0 {
            errs.push(ConfigError::new(
                "endpoint.admission.signal_flits",
                "must be a whole number >= 1, got 0",
            ));
        }
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
                router_node[r as usize] = n as u32;
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

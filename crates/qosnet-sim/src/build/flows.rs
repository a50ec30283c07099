//! The flows of a run, built as the last step of validation: the sources and their calendar,
//! the video streams' deadline records, the application models' jobs, the control agents
//! completed for the flows (credits, admission's connections and link reservations) and the
//! recordings (`[trace]`). Their checks need the flows, so they run here; and since
//! `validate` runs them, a configuration it accepts is one `Simulation::new` builds and
//! runs: `validate` is "build everything, run nothing" (the routers' and endpoints' state,
//! which no configuration can make fail once validated, is all that is left to `new`).

use super::agents;
use crate::config::Config;
use crate::control::{Agents, Reservations};
use crate::error::{ConfigError, ConfigErrors};
use crate::metrics::deadline::StreamDeadlines;
use crate::metrics::trace::Tracing;
use crate::routing::Routing;
use crate::topology::{Peer, Topology};
use crate::traffic::application::JobSpec;
use crate::traffic::driver::Traffic;
use crate::traffic::{ProcessSpec, TrafficSpec};
use crate::units::{Clock, Cycle};

/// What the flows are, built.
pub struct Flows {
    pub(crate) traffic: Traffic,
    /// Per video stream, its deadline record; per source, its stream's index (or `u32::MAX`).
    pub deadlines: Vec<StreamDeadlines>,
    pub deadline_of: Vec<u32>,
    /// The application models' flows: (first, end).
    pub app_flows: (u32, u32),
    /// Admission control's link reservations (empty without it).
    pub(crate) reservations: Reservations,
    pub(crate) tracing: Tracing,
}

/// The measurement window: (warm-up end, window end), cycles.
pub fn window(cfg: &Config, clock: &Clock) -> (Cycle, Cycle) {
    let warmup = clock.duration_cycles(cfg.simulation.warmup);
    (warmup, warmup.saturating_add(clock.duration_cycles(cfg.simulation.measure)))
}

/// Build the flows of a configuration whose other parts validated; every error of this
/// step together (the agents' and the recordings' checks do not stop each other).
#[allow(clippy::too_many_arguments)] // the validated parts the flows are built over
pub fn build(
    cfg: &Config,
    clock: &Clock,
    topo: &Topology,
    routing: &Routing,
    specs: Vec<TrafficSpec>,
    spec_nodes: &[Vec<u32>],
    jobs: Vec<JobSpec>,
    agents: &mut Agents,
    class_vcs: [u32; 3],
    lane_records: usize,
) -> Result<Flows, ConfigErrors> {
    let n_phases = cfg.mix.as_ref().map_or(1, |m| m.phases.len().max(1));
    let phase_starts = cfg.mix.as_ref().map_or(Vec::new(), |m| {
        m.phases
            .iter()
            .take(m.phases.len().saturating_sub(1))
            .scan(0u64, |t, p| {
                *t = t.saturating_add(clock.duration_cycles(p.duration));
                Some(*t)
            })
            .collect()
    });
    let (mut deadlines, mut deadline_of) = (Vec::new(), Vec::new());
    let mut traffic = Traffic::new(specs, spec_nodes, cfg.simulation.seed, phase_starts, |_, spec| {
        if let ProcessSpec::Video(v) = &spec.process {
            deadline_of.push(deadlines.len() as u32);
            deadlines.push(StreamDeadlines::new(v.period, n_phases).starting(v.first_deadline));
        } else {
            deadline_of.push(u32::MAX);
        }
    });
    let app_flows = if jobs.is_empty() {
        (0, 0)
    } else {
        traffic.add_applications(jobs, cfg.simulation.seed, cfg.endpoint.processors, topo.nodes)
    };
    // (application flows are no video streams)
    deadline_of.resize(traffic.sources.len(), u32::MAX);

    let mut errs: Vec<ConfigError> = Vec::new();
    let reservations = agents::complete(agents, cfg, &traffic, topo, routing, clock, class_vcs)
        .unwrap_or_else(|e| {
            errs.extend(e.0);
            Reservations::default()
        });
    agents.size_flows(traffic.sources.len() + 1);
    let links = topo.nodes + topo.peer.iter().filter(|p| !matches!(p, Peer::None)).count();
    let tracing = Tracing::build(
        cfg.trace.as_ref(),
        clock,
        window(cfg, clock),
        links,
        traffic.sources.len() + 1,
        lane_records,
    )
    .unwrap_or_else(|e| {
        errs.extend(e);
        Tracing::default()
    });
    if !errs.is_empty() {
        return Err(ConfigErrors(errs));
    }
    Ok(Flows { traffic, deadlines, deadline_of, app_flows, reservations, tracing })
}

//! What a run will cost, told by `validate` before anything runs: the cycles it simulates,
//! the work in them (flit-hops: offered flits times the mean path length), and from these
//! an estimate of its wall-clock time on this machine.
//!
//! The estimate is a calibration, not a measurement: [`NS_PER_FLIT_HOP`] and
//! [`NS_PER_ROUTER_CYCLE`] are the engine's cost on this project's reference 2-core
//! machine (`configs/bench/README.md`: 92 ns per flit-hop on the 8x8 40-flit mesh, up to
//! 168 ns on 32x32 once the state leaves the caches; an idle router costs a visit of the
//! active list). It tells a run of seconds from one of hours; within a factor of about 2
//! on the bench configurations, more where the load is past saturation (the network then
//! carries less than is offered, and the drain may run to its limit).

use super::Validated;
use crate::config::Config;
use crate::ids::NodeId;
use crate::traffic::ProcessSpec;
use crate::units::Cycle;

/// Engine time per flit moved one hop (router traversal), nanoseconds.
pub const NS_PER_FLIT_HOP: f64 = 120.0;
/// Engine time per router per simulated cycle besides its flits, nanoseconds.
pub const NS_PER_ROUTER_CYCLE: f64 = 2.0;

/// A run's cost, estimated from its validated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    /// Cycles simulated: warm-up and measurement (the drain may add up to `drain_cycles`).
    pub cycles: Cycle,
    pub drain_cycles: Cycle,
    /// Offered flits per cycle over the whole network.
    pub offered_flits_per_cycle: f64,
    /// Mean routers a flit traverses (sampled pairs along the routing's first path).
    pub mean_hops: f64,
    /// Flit-hops in the warm-up and measurement, if the network carries what is offered.
    pub flit_hops: f64,
    /// Estimated wall-clock seconds for them on this machine, and at most with the drain.
    pub seconds: f64,
    pub seconds_with_drain: f64,
}

/// The cost of running `cfg`, validated as `v`.
pub fn estimate(cfg: &Config, v: &Validated) -> Cost {
    let (_, cycles) = super::flows::window(cfg, &v.clock);
    let drain_cycles = v.clock.duration_cycles(cfg.simulation.drain_limit);
    let traffic = &v.flows.traffic;
    let offered: f64 = traffic
        .sources
        .iter()
        .map(|s| {
            let spec = &traffic.specs[s.spec as usize];
            match &spec.process {
                ProcessSpec::Video(video) => {
                    let t = s.stream as usize % video.traces.len().max(1);
                    video.flits_per_cycle.get(t).copied().unwrap_or(0.0)
                }
                _ => {
                    let phases = spec.rate_by_phase.len().max(1);
                    let mean = (0..phases).map(|p| spec.rate(p)).sum::<f64>() / phases as f64;
                    mean * spec.message_flits as f64
                }
            }
        })
        .sum();
    let mean_hops = mean_hops(v, cfg.router.vcs);
    let flit_hops = offered * mean_hops * cycles as f64;
    let routers = v.topology.routers as f64;
    let at = |c: f64| (flit_hops * NS_PER_FLIT_HOP + c * routers * NS_PER_ROUTER_CYCLE) * 1e-9;
    Cost {
        cycles,
        drain_cycles,
        offered_flits_per_cycle: offered,
        mean_hops,
        flit_hops,
        seconds: at(cycles as f64),
        seconds_with_drain: at((cycles + drain_cycles) as f64),
    }
}

/// Mean routers per path over up to 256 node pairs spread over the network.
fn mean_hops(v: &Validated, vcs: u32) -> f64 {
    let n = v.topology.nodes;
    if n < 2 {
        return 1.0;
    }
    let samples = 256.min(n * (n - 1));
    let (mut total, mut counted) = (0usize, 0usize);
    for i in 0..samples {
        let src = (i * 7919) % n;
        let dst = (src + 1 + (i * 104_729) % (n - 1)) % n;
        if let Ok(path) = v.routing.walk(&v.topology, vcs, NodeId(src as u32), NodeId(dst as u32), 0) {
            total += path.len();
            counted += 1;
        }
    }
    if counted == 0 {
        1.0
    } else {
        total as f64 / counted as f64
    }
}

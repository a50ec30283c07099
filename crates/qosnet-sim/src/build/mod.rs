//! The one build step: a configuration (plain data) is validated and every component
//! constructed from it — routers, endpoints, traffic, links, observers — so no component
//! re-derives anything from the configuration at run time.

mod admission;
mod agents;
pub mod cost;
mod flows;
mod validate;

pub use validate::{validate, Validated};

use crate::config::{Config, CreditAt, RouterKind, SourceQueues, VcRelease, VirtualClockState};
use crate::endpoint::{EndpointParams, Endpoints, PathChoice};
use crate::engine::{RunParams, Simulation};
use crate::error::ConfigErrors;
use crate::flit::Slab;
use crate::links::Links;
use crate::metrics::{Metrics, Observers};
use crate::net::{Net, Progress};
use crate::router::inbox::{BLOCK, BLOCKS_FROM};
use crate::router::shards::Threads;
use crate::router::{Params, Rounds, Routers};
use crate::units::Cycle;

impl Simulation {
    /// Build a simulation from a TOML document (relative paths resolve against `base_dir`).
    pub fn from_toml(text: &str, base_dir: Option<&std::path::Path>) -> Result<Simulation, ConfigErrors> {
        let mut cfg = Config::from_toml_str(text)?;
        cfg.base_dir = base_dir.map(|p| p.to_path_buf());
        Simulation::new(cfg)
    }

    /// Validate `config` completely and build the network.
    pub fn new(config: Config) -> Result<Simulation, ConfigErrors> {
        let v = validate(&config)?;
        let (topo, routing, nic_p) = (v.topology, v.routing, v.nic);
        let clock = v.clock;
        let rc = &config.router;
        let (vcs, ports) = (rc.vcs as usize, topo.ports);
        let cyc = |d| clock.duration_cycles(d);
        let (warmup, window_end) = flows::window(&config, &clock);
        let run = RunParams {
            window_end,
            drain_end: window_end.saturating_add(cyc(config.simulation.drain_limit)),
            watchdog: cyc(config.simulation.watchdog).max(1),
        };
        let preemptive = rc.kind == RouterKind::Preemptive;
        let lanes = if preemptive { 2 * vcs } else { vcs };
        let endpoint_link = config.endpoint.link_latency.unwrap_or(rc.link_latency) as Cycle;
        // (an injected flit reaches the router after the endpoint's output register and the link)
        let injection = config.endpoint.output_stage as Cycle + endpoint_link;
        let p = Params {
            vcs,
            lanes,
            extra_depth: rc.preemption.extra_buffer,
            lane_stride: lanes | 1,
            acceleration: rc.preemption.acceleration,
            ports,
            input_depth: rc.input_buffer,
            output_depth: rc.output_buffer,
            d_sync: rc.pipeline.sync as Cycle,
            d_routing: rc.pipeline.routing as Cycle,
            d_vc_alloc: rc.pipeline.vc_alloc as Cycle,
            d_crossbar: rc.pipeline.crossbar as Cycle,
            d_output: rc.pipeline.output as Cycle,
            link: [rc.link_latency as Cycle, endpoint_link],
            credit: rc.credit_latency as Cycle,
            speedup: rc.speedup,
            input_speedup: rc.input_speedup as usize,
            input_lanes: Params::input_lanes_of(rc.input_speedup),
            output_speedup: rc.output_speedup as usize,
            rounds: Rounds::of(
                rc.allocator.kind,
                rc.allocator.input_choice == crate::config::InputChoice::Output,
                rc.speedup,
                rc.input_speedup,
                rc.output_speedup,
            ),
            internal_speedup: rc.internal_speedup,
            allocator: rc.allocator.kind,
            iterations: rc.allocator.iterations(),
            vc_selection: rc.vc_selection,
            vc_allocator: rc.vc_allocator.kind,
            vc_iterations: rc.vc_allocator.iterations(),
            release_on_send: rc.vc_release == VcRelease::TailSent,
            credit_at_crossbar: rc.credit_at == CreditAt::Crossbar,
            kind: rc.kind,
            class_vcs: v.class_vcs,
            home_vcs: v.home_vcs,
        };
        let ep = EndpointParams {
            vcs,
            lanes,
            preemptive,
            class_vcs: v.class_vcs,
            home_vcs: v.home_vcs,
            vc_selection: config.endpoint.vc_selection,
            vc_needs_credit: config.endpoint.vc_needs_credit,
            per_class_queues: matches!(config.endpoint.queues, SourceQueues::PerClass | SourceQueues::PerVc),
            per_vc_queues: config.endpoint.queues == SourceQueues::PerVc,
            seed: config.simulation.seed,
            concurrent_packets: config.endpoint.concurrent_packets,
            release_on_send: p.release_on_send,
            link: injection,
            credit: p.credit,
        };
        let longest = topo.longest_link() as Cycle;
        let max_delay = (p.d_output + p.link[0].max(p.link[1]).max(longest))
            .max(injection)
            .max(p.credit + longest) as usize;
        let (xbar_cfg, out_cfg) = (rc.crossbar(), rc.output());
        let nic_cfg = config.endpoint.scheduler.clone().unwrap_or_else(|| xbar_cfg.clone());
        let flows = v.flows;
        let (traffic, reservations) = (flows.traffic, flows.reservations);
        let nodes = topo.nodes;
        let n_ports = topo.routers * ports;
        let n_phases = config.mix.as_ref().map_or(1, |m| m.phases.len().max(1));
        let mut metrics = Metrics::new(warmup, window_end, nodes, n_ports, config.simulation.record_messages);
        metrics.flows = vec![Default::default(); traffic.sources.len() + 1];
        metrics.phases = vec![Default::default(); n_phases];
        let max_packet = traffic.specs.iter().map(|s| s.packet_flits.min(s.message_flits)).max().unwrap_or(1);
        let nic_idt = traffic
            .sources
            .iter()
            .map(|s| {
                let spec = &traffic.specs[s.spec as usize];
                nic_p.idt_ticks(spec.reserve, spec.idt, max_packet)
            })
            .collect();
        let agents = v.agents;
        let control_delay = agents.control_delay() as usize;
        let mut endpoints = Endpoints::new(
            ep,
            nodes,
            &nic_cfg,
            &clock,
            nic_p,
            agents,
            PathChoice::new(
                routing.paths(),
                config.routing.multipath.as_ref().map(|m| m.selection).unwrap_or_default(),
                traffic.sources.len() + 1,
            )
            .with_drb(
                v.drb_timer,
                config.routing.multipath.as_ref().map(|m| m.split).unwrap_or_default(),
                traffic.sources.len() + 1,
            ),
            &topo,
            |lane| p.lane_depth(lane),
            nic_idt,
        );
        endpoints.cnp_flow = traffic.sources.len() as u32;
        let streams =
            (rc.virtual_clock.state == VirtualClockState::Stream).then_some(traffic.sources.len() + 1);
        let shard = |p: Params, topo, routing| {
            let mut routers = Routers::new(
                p,
                topo,
                routing,
                &xbar_cfg,
                &out_cfg,
                &clock,
                rc.block_size,
                v.marking,
                config.simulation.seed,
            );
            if let Some(flows) = streams {
                routers.keep_stream_clocks(flows);
            }
            routers
        };
        // A threaded run's other shards (`router::shards`): as many as `threads` ranges of
        // `per` routers take, each visited by blocks on a large network (`router::inbox`).
        let per = topo.routers.div_ceil(config.simulation.threads.max(1) as usize);
        let (per, block) =
            if topo.routers >= BLOCKS_FROM { (per.next_multiple_of(BLOCK), BLOCK) } else { (per, per) };
        let threads = if per < topo.routers {
            let shards = topo.routers.div_ceil(per);
            let t = Threads::new(shards, (per, block), (topo.routers, p.ports), |_| {
                shard(p.clone(), topo.clone(), routing.clone())
            })
            .map_err(|e| {
                ConfigErrors(vec![crate::error::ConfigError::new(
                    "simulation.threads",
                    format!("no threads: {e}"),
                )])
            })?;
            Some(Box::new(t))
        } else {
            None
        };
        let mut routers = shard(p, topo, routing);
        let mut reservations = reservations;
        if reservations.is_on() {
            // Admission control rewrites each link's arbitration weights (document 000
            // §4.1): the lanes only real time, and only best effort, may use.
            let h = v.home_vcs;
            let lanes = [h[1] & !h[0] & !h[2], h[2] & !h[0] & !h[1]];
            reservations.out_tables = routers.follow_reservations(&out_cfg, &clock, lanes);
            reservations.hca_tables = endpoints.follow_reservations(&nic_cfg, &clock, lanes);
            routers.reweighted = reservations.out_tables.is_some() || reservations.hca_tables.is_some();
        }
        let mut sim = Simulation {
            routers,
            threads,
            blocks: None,
            endpoints,
            traffic,
            net: Net {
                links: Links::new(max_delay, control_delay),
                packets: Slab::default(),
                messages: Slab::default(),
                progress: Progress::default(),
                reservations,
                obs: Observers::new(metrics, flows.deadlines, flows.deadline_of, flows.tracing),
                app_deliveries: crate::net::AppDeliveries {
                    first: flows.app_flows.0,
                    count: flows.app_flows.1 - flows.app_flows.0,
                    list: Vec::new(),
                },
                via_rng: Net::via_rng(config.simulation.seed),
            },
            run,
            now: 0,
            finished: false,
            drain_incomplete: false,
            window_end_latency: None,
            stability_latency: 0.0,
            next_stability_test: window_end,
            reverse_visits: false,
            config,
            clock,
        };
        // One thread on a large network: its routers visited block by block, each block's
        // arrivals just before its visits (`router::inbox`).
        if sim.routers.topo.routers >= BLOCKS_FROM {
            sim.set_visits_by_block(Some(BLOCK));
        }
        Ok(sim)
    }
}

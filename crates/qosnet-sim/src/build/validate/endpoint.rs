//! `[endpoint]`: its scheduler, injection lanes, link latency, output stage and processors.

use super::{range, router::check_scheduler};
use crate::config::{Config, RouterConfig, RouterKind};
use crate::error::ConfigError;

/// The endpoint's injection lanes: the router's VCs, and the preemptive router's NIC may also
/// send into the VCs' extra buffers.
pub(super) fn lanes(rc: &RouterConfig) -> u32 {
    if rc.kind == RouterKind::Preemptive {
        2 * rc.vcs
    } else {
        rc.vcs
    }
}

/// `[endpoint]`: its scheduler and its sizes and delays in range.
pub(super) fn check_endpoint(cfg: &Config, errs: &mut Vec<ConfigError>) {
    let rc = &cfg.router;
    if let Some(s) = &cfg.endpoint.scheduler {
        check_scheduler(errs, "endpoint.scheduler", s, rc.vcs);
    }
    let lanes = lanes(rc);
    range(errs, "endpoint.concurrent_packets", cfg.endpoint.concurrent_packets, 1, lanes.max(1));
    if let Some(l) = cfg.endpoint.link_latency {
        range(errs, "endpoint.link_latency", l, 1, 10_000);
    }
    range(errs, "endpoint.output_stage", cfg.endpoint.output_stage, 0, 10_000);
    if let Some(p) = cfg.endpoint.processors {
        range(errs, "endpoint.processors", p, 1, 1_000_000);
    }
    // (BookSim2's source choice: the ideal endpoint's packet starts; the NIC models start
    // from their own buffers, the preemptive router's may take a held VC, and per-VC
    // queues are bound to their VC)
    if cfg.endpoint.vc_needs_credit {
        let why = if cfg.endpoint.model != crate::config::NicModel::Ideal {
            Some("the ideal endpoint's (model = \"ideal\")")
        } else if rc.kind == RouterKind::Preemptive {
            Some("non-preemptive routers' (the preemptive NIC may take a VC held by a lower class)")
        } else if cfg.endpoint.queues == crate::config::SourceQueues::PerVc {
            Some("the FIFO and per-class queues' (queues = \"per_vc\" binds a queue to its VC)")
        } else {
            None
        };
        if let Some(why) = why {
            errs.push(ConfigError::new(
                "endpoint.vc_needs_credit",
                format!("true is BookSim2's source choice, and only {why}; remove it or set it false"),
            ));
        }
    }
}

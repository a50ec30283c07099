//! `[topology]` and `[routing]`: the network built (a fabric's routes checked), the routing
//! function with its LID paths and multipath, and DRB's timer.

use crate::config::{Config, TopologyConfig};
use crate::error::ConfigError;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::units::Clock;

/// The topology, built; None (and the error reported) if it cannot be.
pub(super) fn build_topology(cfg: &Config, errs: &mut Vec<ConfigError>) -> Option<Topology> {
    let built = Topology::build_in(&cfg.topology, &cfg.files()).and_then(|t| {
        // A real fabric's routes (its forwarding tables, or minimal-hop ones) must take
        // every node to every other without loops.
        if let TopologyConfig::IbFabric { file, .. } = &cfg.topology {
            crate::routing::check_fabric_routes(&t, &file.shown())?;
        }
        Ok(t)
    });
    let topology = match built {
        Ok(t) => Some(t),
        Err(e) => {
            errs.push(e);
            None
        }
    };
    if let (Some(t), TopologyConfig::Star { .. } | TopologyConfig::FatTree { .. }) =
        (&topology, &cfg.topology)
    {
        if t.ports > crate::topology::MAX_PORTS {
            errs.push(ConfigError::new(
                "topology",
                format!("routers would have {} ports; at most {}", t.ports, crate::topology::MAX_PORTS),
            ));
        }
    }
    topology
}

/// The routing function, built over the topology (with `router.vcs` in range).
pub(super) fn build_routing(
    cfg: &Config,
    topology: Option<&Topology>,
    errs: &mut Vec<ConfigError>,
) -> Option<Routing> {
    let rc = &cfg.router;
    topology.filter(|_| (1..=32).contains(&rc.vcs)).and_then(|t| {
        let paths = cfg.routing.multipath.as_ref().map_or(1, |m| m.paths);
        // (a fabric dump's LMC, where it gives one above 0, unless the configuration sets it)
        let dumped = match &t.shape {
            crate::topology::Shape::Fabric { lmc: Some(l), .. } if *l > 0 => Some(*l),
            _ => None,
        };
        let kind = cfg.routing.kind;
        let lids = |r: Routing, drawn: bool| match cfg.routing.lmc.or(dumped) {
            // (LID paths are forwarding tables: a way drawn per packet has no place in them)
            Some(_) if drawn => Err(ConfigError::new(
                "routing.lmc",
                format!(
                    "LID paths are forwarding tables, and routing.kind = {:?} draws each packet's way; \
                     leave routing.lmc out, or use a deterministic routing.kind",
                    kind.name()
                ),
            )),
            Some(lmc) => r.with_lids(t, lmc, cfg.routing.slack, rc.vcs, cfg.routing.lid_vcs),
            None if cfg.routing.lid_vcs != crate::config::LidVcs::default() => Err(ConfigError::new(
                "routing.lid_vcs",
                format!(
                    "{:?} applies to LID paths: set routing.lmc (the LIDs per port)",
                    cfg.routing.lid_vcs.name()
                ),
            )),
            None => Ok(r),
        };
        let built = Routing::build(kind, t, rc.vcs)
            .and_then(|r| r.with_min_adapt(cfg.routing.min_adapt))
            .and_then(|r| r.with_torus_ties(cfg.routing.torus_ties))
            .and_then(|r| {
                // Routings that offer a header other ways at each hop (an escape VC, Duato's
                // protocol; minimal adaptive routing), or draw each packet's way at its source
                // (Valiant, UGAL, NCA, O1TURN): what needs one fixed path refuses them. Decided
                // on the routing built, so that a new routing is refused by what it does.
                let (drawn, adaptive) = (r.chooses_at_source(), r.has_other_ways());
                let r = lids(r, drawn)?;
                if r.has_other_ways() || drawn {
                    refuse_unfixed(cfg, drawn, adaptive)?;
                }
                r.with_paths(paths)
            });
        match built {
            Ok(r) => Some(r),
            Err(e) => {
                errs.push(e);
                None
            }
        }
    })
}

/// A routing without one fixed path per flow (`drawn`: each packet's way drawn at its
/// source; `adaptive`: other ways at each hop by its kind; else an escape VC of LID paths),
/// refused where one fixed path is needed.
fn refuse_unfixed(cfg: &Config, drawn: bool, adaptive: bool) -> Result<(), ConfigError> {
    let (field, what) = if adaptive || drawn {
        ("routing.kind", format!("{:?}", cfg.routing.kind.name()))
    } else {
        ("routing.lid_vcs", "\"escape\"".to_string())
    };
    let reserved = cfg.traffic.iter().position(|t| t.reserve.is_some() || t.idt.is_some());
    // (a packet's drawn way is kept with it, so a preempted packet's rest follows it)
    let why = if cfg.router.kind == crate::config::RouterKind::Preemptive && !drawn {
        // (a preempted packet's rest follows the way its first part took, document 003
        // §3.2.1; a way chosen again at every hop could send it another)
        Some("router.kind = \"preemptive\": a preempted packet resumes along its first part's way, which a way chosen at every hop could change".to_string())
    } else if cfg.endpoint.admission.is_some() {
        Some("[endpoint] admission: a probe reserves the links of one path, which the packets of the flow need not take".to_string())
    } else {
        reserved.map(|i| format!("a reserved flow (traffic[{i}]): call admission accounts the links of one path, which its packets need not take"))
    };
    match why {
        Some(why) => Err(ConfigError::new(field, format!("{what} does not apply with {why}"))),
        None => Ok(()),
    }
}

/// DRB (`[routing] multipath` with `selection = "drb"`): its contraction timer (cycles), and
/// the congestion detection it reacts to. Other selections take no timer.
pub(super) fn check_drb(cfg: &Config, clock: &Clock, errs: &mut Vec<ConfigError>) -> crate::units::Cycle {
    let Some(m) = &cfg.routing.multipath else { return 0 };
    if m.split != crate::config::DrbSplit::default() && m.selection != crate::config::PathSelection::Drb {
        errs.push(ConfigError::new(
            "routing.multipath.split",
            "only with selection = \"drb\" (how DRB spreads messages over its open paths)",
        ));
    }
    match (m.selection, m.contraction_timer) {
        (crate::config::PathSelection::Drb, None) => {
            errs.push(ConfigError::new(
                "routing.multipath.contraction_timer",
                "required with selection = \"drb\" (e.g. \"20 us\")",
            ));
            0
        }
        (crate::config::PathSelection::Drb, Some(t)) => {
            if cfg.router.marking.is_none() {
                errs.push(ConfigError::new(
                    "routing.multipath.selection",
                    "\"drb\" reacts to congestion notifications: set [router] marking (e.g. { kind = \"iba_cc\", threshold = 10 })",
                ));
            }
            let t = clock.duration_cycles(t);
            if t == 0 {
                errs.push(ConfigError::new(
                    "routing.multipath.contraction_timer",
                    "must be a positive duration, got 0",
                ));
            }
            t
        }
        (_, Some(_)) => {
            errs.push(ConfigError::new(
                "routing.multipath.contraction_timer",
                "only with selection = \"drb\"",
            ));
            0
        }
        (_, None) => 0,
    }
}

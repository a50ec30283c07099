//! Reserved flows (`reserve`, `idt` on a `[[traffic]]` entry): rate control, one destination
//! per source, and call admission.

use crate::admission::CallAdmission;
use crate::config::Config;
use crate::endpoint::nic::NicParams;
use crate::error::ConfigError;
use crate::routing::Routing;
use crate::topology::Topology;
use crate::traffic::TrafficSpec;
use crate::units::Clock;

/// Reserved flows (document 004 §3.4): rate control must be on, each source must have one
/// destination, and call admission must admit every flow, in configuration order.
#[allow(clippy::too_many_arguments)] // the parts of validation it checks against
pub(super) fn check_reservations(
    cfg: &Config,
    clock: &Clock,
    nic: &NicParams,
    topo: &Topology,
    routing: &Routing,
    specs: &[TrafficSpec],
    spec_nodes: &[Vec<u32>],
    errs: &mut Vec<ConfigError>,
) {
    // Specs and config entries pair up only when every entry built a spec.
    if specs.len() != cfg.traffic.len() {
        return;
    }
    // At the rates simulated: every link runs at `[physical] link_bandwidth`, a real
    // fabric's too (its own link rates are the control plane's, `CallAdmission::from_config`).
    let mut admission =
        CallAdmission::new(topo, routing, cfg.router.vcs, clock.link_bits_per_second, nic.peak_bps);
    for (i, (t, spec)) in cfg.traffic.iter().zip(specs).enumerate() {
        let path = format!("traffic[{i}]");
        let field = match (t.reserve, t.idt) {
            (None, None) => continue,
            (Some(_), Some(_)) => {
                errs.push(ConfigError::new(format!("{path}.idt"), "give `reserve` or `idt`, not both"));
                continue;
            }
            (Some(_), None) => "reserve",
            (None, Some(_)) => "idt",
        };
        let fpath = format!("{path}.{field}");
        if cfg.endpoint.queues != crate::config::SourceQueues::RateControl {
            errs.push(ConfigError::new(
                &fpath,
                "needs NIC rate control: endpoint.queues = \"rate_control\" (with endpoint.model \"via\" or \"hca\")",
            ));
            continue;
        }
        if let Some(k) = t.idt {
            if !(k.is_finite() && k > 0.0 && k <= 1e9) {
                errs.push(ConfigError::new(&fpath, format!("must be in (0, 1e9] periods T, got {k}")));
            }
        }
        if let Some(r) = t.reserve {
            if !(r.bits_per_second > 0.0 && r.bits_per_second.is_finite()) {
                errs.push(ConfigError::new(&fpath, format!("must be > 0, got {r}")));
                continue;
            }
        }
        for &node in &spec_nodes[i] {
            if spec.pattern.is_silent(node as usize) {
                continue;
            }
            let Some(dst) = spec.pattern.fixed_destination(node as usize) else {
                errs.push(ConfigError::new(
                    format!("{path}.pattern"),
                    "a reserved flow needs one destination per source: use kind = \"fixed\", a permutation or a bit pattern",
                ));
                break;
            };
            let Some(r) = t.reserve else { continue };
            for _ in 0..spec.sources_per_node() {
                if let Err(why) = admission.admit(node, dst, r.bits_per_second) {
                    errs.push(ConfigError::new(
                        &fpath,
                        format!("call admission refuses the flow from node {node} to node {dst}: {why}"),
                    ));
                }
            }
        }
    }
}

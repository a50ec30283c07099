//! Call admission built from a configuration: the control plane's view of a cluster comes
//! from the same validation, topology and routing as the simulator's (one source of truth).

use super::validate;
use crate::admission::CallAdmission;
use crate::config::Config;
use crate::error::{ConfigError, ConfigErrors};

impl CallAdmission {
    /// Call admission over the network a configuration describes (`[physical]`,
    /// `[topology]`, `[routing]`, `[router] vcs`, and the NIC's peak from `[endpoint]`): the
    /// control plane's view of the cluster, from the same validation and routing as the
    /// simulator's. A cluster description needs no `[[traffic]]`; without any, a nominal
    /// source stands in for validation only.
    pub fn from_config(cfg: &Config) -> Result<CallAdmission, ConfigErrors> {
        let mut cfg = cfg.clone();
        if cfg.traffic.is_empty() {
            let nominal = toml::from_str("load = 0.1")
                .map_err(|e| ConfigErrors(vec![ConfigError::new("traffic", e.to_string())]))?;
            cfg.traffic.push(nominal);
        }
        let v = validate(&cfg)?;
        let link = v.clock.link_bits_per_second;
        let mut a = CallAdmission::new(&v.topology, &v.routing, cfg.router.vcs, link, v.nic.peak_bps);
        // A real fabric's links run at their own rates (width x speed); a node can send and
        // receive no faster than its own link.
        let t = &v.topology;
        for (i, &bps) in t.link_bps.iter().enumerate() {
            if bps > 0.0 {
                a.port_capacity[i] = bps;
            }
        }
        for (node, &(r, p)) in t.attach.iter().enumerate() {
            let own = t.link_bps.get(r.index() * t.ports + p as usize).copied().unwrap_or(0.0);
            if own > 0.0 {
                a.node_capacity[node] = own;
            }
        }
        Ok(a)
    }
}

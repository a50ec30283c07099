//! A single router with one endpoint on every port (document 003's 8-port router).

use super::{Peer, Shape, Topology};
use crate::error::ConfigError;
use crate::ids::NodeId;

pub(super) fn build(ports: u32) -> Result<Topology, ConfigError> {
    if !(2..=64).contains(&ports) {
        return Err(ConfigError::new("topology.ports", format!("must be in 2..=64, got {ports}")));
    }
    let peer = (0..ports).map(|node| Peer::Endpoint { node: NodeId(node) }).collect();
    Ok(Topology::from_parts(Shape::Star { ports }, 1, ports as usize, peer))
}

//! A real InfiniBand fabric from a description of it, in one of two formats
//! (`[topology] format`):
//!
//! - `"ibnetdiscover"`: the ports report of `ibnetdiscover -p`, optionally with the
//!   switches' `ibroute` forwarding tables (`routes`), in `ibnetdiscover.rs`;
//! - `"ibsim"`: the net file of linux-rdma's ibsim simulator (`net-examples/net` there;
//!   `data/ib-topologies/ibsim-net-example.net`), in `ibsim.rs`. It has no LIDs, so
//!   no forwarding tables: `routes` with it is an error.
//!
//! Without `format`, the file's first record decides: the first line opening with ibsim's
//! `Switch`, `Hca` or `Ca` makes it a net file, the first opening with the report's `SW` or
//! `CA` a ports report, and a file with neither is read as a ports report. The file's name
//! is not consulted: ibsim's own examples are called `net`, `net.2sw2path`, ... An explicit
//! `format` always wins.
//!
//! Both parsers hand over the same thing, every connected port as the file lists it from
//! its own side (a `HalfLink`), and one path (`assemble`) turns that into the topology:
//! every switch is a router (ports numbered from 1 in the files, from 0 here), every
//! connected HCA port a node, both numbered in the parser's key order (LIDs in a ports
//! report, file order in a net file); each link's data rate (width x lane rate x encoding,
//! `lane_rate`) is kept for admission control, while the simulator runs every link at
//! `[physical] link_bandwidth`. Routes come from the forwarding tables (the fabric's real,
//! deterministic routing) or, without them, are minimal-hop routes spread over equally short
//! ports by destination (`routes.rs`; deadlock freedom then depends on the fabric: it holds
//! for fat trees such as avakas in `data/ib-topologies`, where every minimal route
//! goes up, then down).

mod ibnetdiscover;
mod ibsim;
mod routes;

pub(in crate::topology) use routes::minimal_routes;

use super::{Peer, Shape, Topology};
use crate::config::files::FileText;
use crate::config::IbFabricFormat;
use crate::error::ConfigError;
use crate::ids::{NodeId, RouterId};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// No route (the destination is unreachable from this switch).
pub const NO_ROUTE: u8 = u8::MAX;

/// One end of a link. `key` orders the switches, and the HCA ports, as they become routers
/// and nodes: their LIDs in a ports report, file order in a net file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct End {
    switch: bool,
    key: u32,
    /// From 1, as in the files.
    port: u32,
}

/// A connected port as the file lists it, from its own side (both formats list every link
/// from both ends).
#[derive(Clone, Debug)]
struct HalfLink {
    local: End,
    remote: End,
    bits_per_second: f64,
    /// The node's name when `local` is an HCA port.
    local_name: String,
    line: usize,
}

/// What a parser hands to [`assemble`].
#[derive(Debug)]
struct Dump {
    links: Vec<HalfLink>,
    /// The most ports a switch declares (0 when the file does not say: then the highest
    /// connected port).
    declared_ports: u32,
    /// The LID mask control of the HCA ports, where the file gives their LID ranges (the
    /// largest: a range of 2^LMC LIDs per port).
    lmc: Option<u8>,
}

/// The keys of the routers and of the nodes, in their order.
#[derive(Debug)]
struct Keys {
    switches: Vec<u32>,
    nodes: Vec<u32>,
}

/// Data rate of one lane in b/s after line encoding (IBA vol. 2: SDR/DDR/QDR use 8b/10b,
/// FDR and later 64b/66b).
fn lane_rate(speed: &str) -> Option<f64> {
    Some(match speed {
        "SDR" => 2.5e9 * 0.8,
        "DDR" => 5e9 * 0.8,
        "QDR" => 10e9 * 0.8,
        "FDR10" => 10.3125e9 * 64.0 / 66.0,
        "FDR" => 14.0625e9 * 64.0 / 66.0,
        "EDR" => 25.78125e9 * 64.0 / 66.0,
        "HDR" => 53.125e9 * 64.0 / 66.0,
        _ => return None,
    })
}

/// The format a file's first record is written in (see the module docs).
fn infer(text: &str) -> IbFabricFormat {
    for line in text.lines() {
        match line.split_whitespace().next() {
            Some("Switch" | "Hca" | "Ca") => return IbFabricFormat::Ibsim,
            Some("SW" | "CA") => return IbFabricFormat::Ibnetdiscover,
            _ => {}
        }
    }
    IbFabricFormat::Ibnetdiscover
}

fn describe(format: IbFabricFormat) -> &'static str {
    match format {
        IbFabricFormat::Ibnetdiscover => "an `ibnetdiscover -p` ports report",
        IbFabricFormat::Ibsim => "an ibsim net file",
    }
}

/// The forwarding tables' files, read when they are needed (through `config::Files`).
pub(super) type ReadRoutes<'a> = &'a dyn Fn() -> Result<Vec<FileText>, ConfigError>;

/// Build the topology from the fabric file's `text` (in `format`, or inferred) and the
/// optional forwarding tables (`shown`: the file's name for messages).
pub(super) fn build(
    text: &str,
    format: Option<IbFabricFormat>,
    routes: Option<ReadRoutes>,
    shown: &str,
) -> Result<Topology, ConfigError> {
    let read_as = format.unwrap_or_else(|| infer(text));
    let dump = match read_as {
        IbFabricFormat::Ibnetdiscover => ibnetdiscover::parse_report(text, shown)?,
        IbFabricFormat::Ibsim if routes.is_some() => {
            let why = if format.is_some() { "" } else { " (inferred from its first record)" };
            return Err(ConfigError::new(
                "topology.routes",
                format!(
                    "{shown} is read as an ibsim net file{why}, which has no LIDs for `ibroute` \
                     forwarding tables to route by: leave `routes` out (minimal-hop routes), or set \
                     `format = \"ibnetdiscover\"` for a ports report"
                ),
            ));
        }
        IbFabricFormat::Ibsim => ibsim::parse(text, shown)?,
    };
    let (mut t, keys) = assemble(&dump, shown, read_as)?;
    let table = match routes {
        Some(read) => ibnetdiscover::forwarding_tables(&read()?, shown, &keys, t.ports)?,
        None => routes::minimal_routes(&t),
    };
    t.shape = Shape::Fabric { routes: table, lmc: dump.lmc };
    Ok(t)
}

/// The one path from connected ports to a topology (routes still empty): routers, nodes,
/// the peer table, link rates and node names, checking that every link a switch is at the
/// far end of is listed by that switch too, pointing back.
fn assemble(dump: &Dump, shown: &str, format: IbFabricFormat) -> Result<(Topology, Keys), ConfigError> {
    let err =
        |line: usize, why: String| ConfigError::new("topology.file", format!("{shown} line {line}: {why}"));
    let mut switches = BTreeSet::new();
    let mut cas: BTreeMap<u32, String> = BTreeMap::new();
    let mut ports = dump.declared_ports;
    for l in &dump.links {
        if !l.local.switch && !l.remote.switch {
            return Err(err(l.line, "an HCA cabled to an HCA; only links to switches are read".into()));
        }
        for e in [&l.local, &l.remote] {
            if e.port == 0 {
                return Err(err(l.line, "port 0: ports are numbered from 1".into()));
            }
            if e.switch {
                switches.insert(e.key);
                ports = ports.max(e.port);
            } else {
                cas.entry(e.key).or_default();
            }
        }
        if !l.local.switch {
            cas.insert(l.local.key, l.local_name.clone());
        }
    }
    if switches.is_empty() || cas.is_empty() {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: no switch-to-HCA links found (read as {})", describe(format)),
        ));
    }
    if ports as usize > super::MAX_PORTS {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: switches with {ports} ports; at most {}", super::MAX_PORTS),
        ));
    }
    let keys = Keys { switches: switches.into_iter().collect(), nodes: cas.keys().copied().collect() };
    let router_of: HashMap<u32, usize> = keys.switches.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let node_of: HashMap<u32, usize> = keys.nodes.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let ports = ports as usize;
    let slot = |e: &End| router_of[&e.key] * ports + e.port as usize - 1;
    let as_peer = |e: &End| {
        if e.switch {
            Peer::Router { router: RouterId(router_of[&e.key] as u32), port: e.port - 1 }
        } else {
            Peer::Endpoint { node: NodeId(node_of[&e.key] as u32) }
        }
    };
    let mut peer = vec![Peer::None; keys.switches.len() * ports];
    let mut link_bps = vec![0.0; peer.len()];
    let mut line_of = vec![0; peer.len()];
    for l in dump.links.iter().filter(|l| l.local.switch) {
        let i = slot(&l.local);
        if peer[i] != Peer::None {
            return Err(err(l.line, format!("this switch port is listed twice (also line {})", line_of[i])));
        }
        (peer[i], link_bps[i], line_of[i]) = (as_peer(&l.remote), l.bits_per_second, l.line);
    }
    // An HCA or switch port seen only from its own side would be half a link.
    for l in dump.links.iter().filter(|l| l.remote.switch) {
        if peer[slot(&l.remote)] != as_peer(&l.local) {
            return Err(err(l.line, "the switch side of this link is missing or differs".into()));
        }
    }
    let mut t = Topology::from_parts(
        Shape::Fabric { routes: Vec::new(), lmc: None },
        keys.switches.len(),
        ports,
        peer,
    );
    if t.nodes != cas.len() {
        return Err(ConfigError::new("topology.file", format!("{shown}: an HCA port is attached twice")));
    }
    t.names = cas.into_values().collect();
    t.link_bps = link_bps;
    Ok((t, keys))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_record_decides_the_format() {
        let net = "# a comment naming Switch and CA\n\nSwitch 8 \"s\"\n[1] \"h\"[1]\n";
        assert_eq!(infer(net), IbFabricFormat::Ibsim);
        assert_eq!(infer("Hca 1 \"h\"\n[1] \"s\"[1]\n"), IbFabricFormat::Ibsim);
        let report =
            "DR path slid 0; dlid 0; 0 -> new Switch\nCA 3 1 0x3 4x QDR - SW 1 1 0x1 ( 'a' - 'b' )\n";
        assert_eq!(infer(report), IbFabricFormat::Ibnetdiscover);
        assert_eq!(infer(""), IbFabricFormat::Ibnetdiscover);
    }
}

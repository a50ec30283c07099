//! A real InfiniBand fabric from its discovery dump: the ports report of `ibnetdiscover -p`
//! (every connected port as `CA|SW lid port guid width speed - CA|SW lid port guid ( 'desc'
//! - 'desc' )`), and optionally the switches' linear forwarding tables as printed by
//! `ibroute` (one file per switch: `0xLID port : (...)` per destination LID).
//!
//! Every switch is a router (ports numbered from 1 in the dump, from 0 here); every
//! connected HCA port is a node, numbered in LID order. Each link's data rate (width x lane
//! rate x encoding) is kept for admission control; the simulator runs every link at
//! `[physical] link_bandwidth`. Routes come from the forwarding tables (the fabric's real,
//! deterministic routing), or, without them, minimal-hop routes spread over equally short
//! ports by destination (deadlock freedom then depends on the fabric: it holds for fat
//! trees such as avakas in `shared/data/ib-topologies`, where every minimal route goes up,
//! then down).

use super::{Peer, Shape, Topology};
use crate::error::ConfigError;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::Path;

/// No route (the destination is unreachable from this switch).
pub const NO_ROUTE: u8 = u8::MAX;

/// One end of a link in the ports report.
#[derive(Clone, Debug, PartialEq)]
struct End {
    switch: bool,
    lid: u32,
    port: u32,
    guid: u64,
}

#[derive(Clone, Debug)]
struct Line {
    local: End,
    remote: End,
    bits_per_second: f64,
    local_desc: String,
    line: usize,
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

fn parse_end(kind: &str, lid: &str, port: &str, guid: &str) -> Option<End> {
    let switch = match kind {
        "SW" => true,
        "CA" => false,
        _ => return None,
    };
    let guid = u64::from_str_radix(guid.strip_prefix("0x")?, 16).ok()?;
    Some(End { switch, lid: lid.parse().ok()?, port: port.parse().ok()?, guid })
}

/// Parse the connected ports of a ports report; unconnected ports and discovery lines are
/// skipped.
fn parse_report(text: &str, path: &str) -> Result<Vec<Line>, ConfigError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let t: Vec<&str> = raw.split_whitespace().collect();
        if !(t.first() == Some(&"CA") || t.first() == Some(&"SW")) || t.get(6) != Some(&"-") {
            continue;
        }
        let bad = |why: &str| ConfigError::new(path, format!("line {}: {why}: {raw:?}", i + 1));
        if t.len() < 11 {
            return Err(bad("expected `CA|SW lid port guid width speed - CA|SW lid port guid`"));
        }
        let local = parse_end(t[0], t[1], t[2], t[3]).ok_or_else(|| bad("bad local end"))?;
        let remote = parse_end(t[7], t[8], t[9], t[10]).ok_or_else(|| bad("bad remote end"))?;
        let width: f64 = t[4]
            .strip_suffix('x')
            .and_then(|w| w.parse().ok())
            .ok_or_else(|| bad("width must be 1x, 4x, 8x or 12x"))?;
        let rate =
            lane_rate(t[5]).ok_or_else(|| bad("speed must be SDR, DDR, QDR, FDR10, FDR, EDR or HDR"))?;
        let local_desc = raw.split('\'').nth(1).unwrap_or("").to_string();
        out.push(Line { local, remote, bits_per_second: width * rate, local_desc, line: i + 1 });
    }
    Ok(out)
}

/// Linear forwarding tables: switch LID -> (destination LID -> output port as in the dump).
fn parse_routes(dir: &Path, shown: &str) -> Result<HashMap<u32, HashMap<u32, u32>>, ConfigError> {
    let err = |why: String| ConfigError::new("topology.routes", format!("{shown}: {why}"));
    let entries = std::fs::read_dir(dir).map_err(|e| err(format!("cannot read the directory: {e}")))?;
    let mut files: Vec<_> =
        entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    files.sort();
    let mut out = HashMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| err(format!("{}: {e}", f.display())))?;
        let Some(lid) = text.lines().next().and_then(|l| {
            let rest = l.split(" of switch Lid ").nth(1)?;
            rest.split_whitespace().next()?.parse::<u32>().ok()
        }) else {
            continue; // not an ibroute dump
        };
        let mut table = HashMap::new();
        for l in text.lines() {
            let mut t = l.split_whitespace();
            let (Some(dst), Some(port)) = (t.next(), t.next()) else { continue };
            let Some(hex) = dst.strip_prefix("0x") else { continue };
            if let (Ok(d), Ok(p)) = (u32::from_str_radix(hex, 16), port.parse::<u32>()) {
                table.insert(d, p);
            }
        }
        out.insert(lid, table);
    }
    if out.is_empty() {
        return Err(err("no `ibroute` forwarding tables found".into()));
    }
    Ok(out)
}

/// Build the topology from a ports report (`file`) and optional forwarding tables.
pub(super) fn build(file: &Path, routes: Option<&Path>, shown: &str) -> Result<Topology, ConfigError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ConfigError::new("topology.file", format!("cannot read {shown}: {e}")))?;
    let lines = parse_report(&text, "topology.file")?;
    // Switches by LID, nodes (HCA ports) by LID: both numbered in LID order.
    let mut switches: BTreeMap<u32, u64> = BTreeMap::new();
    let mut cas: BTreeMap<u32, String> = BTreeMap::new();
    let mut ports = 0u32;
    for l in &lines {
        for e in [&l.local, &l.remote] {
            if e.switch {
                switches.insert(e.lid, e.guid);
                ports = ports.max(e.port);
            }
        }
        if !l.local.switch {
            cas.insert(l.local.lid, l.local_desc.clone());
        } else if !l.remote.switch {
            cas.entry(l.remote.lid).or_default();
        }
    }
    if switches.is_empty() || cas.is_empty() {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: no switch-to-HCA links found (expected an `ibnetdiscover -p` ports report)"),
        ));
    }
    if ports as usize > crate::router::MAX_PORTS {
        return Err(ConfigError::new(
            "topology.file",
            format!("{shown}: switches with {ports} ports; at most {}", crate::router::MAX_PORTS),
        ));
    }
    let router_of: HashMap<u32, usize> = switches.keys().enumerate().map(|(i, &lid)| (lid, i)).collect();
    let node_of: HashMap<u32, usize> = cas.keys().enumerate().map(|(i, &lid)| (lid, i)).collect();
    let (routers, ports, nodes) = (switches.len(), ports as usize, cas.len());
    let mut peer = vec![Peer::None; routers * ports];
    let mut link_bps = vec![0.0; routers * ports];
    for l in lines.iter().filter(|l| l.local.switch) {
        let (r, p) = (router_of[&l.local.lid], l.local.port as usize - 1);
        peer[r * ports + p] = if l.remote.switch {
            Peer::Router { router: router_of[&l.remote.lid] as u32, port: l.remote.port - 1 }
        } else {
            Peer::Endpoint { node: node_of[&l.remote.lid] as u32 }
        };
        link_bps[r * ports + p] = l.bits_per_second;
    }
    // An HCA seen only from its own side (its switch's line missing) would be half a link.
    for l in lines.iter().filter(|l| !l.local.switch && l.remote.switch) {
        let (r, p) = (router_of[&l.remote.lid], l.remote.port as usize - 1);
        if peer[r * ports + p] != (Peer::Endpoint { node: node_of[&l.local.lid] as u32 }) {
            return Err(ConfigError::new(
                "topology.file",
                format!("{shown} line {}: the switch side of this link is missing or differs", l.line),
            ));
        }
    }
    let names = cas.values().cloned().collect();
    let mut t = Topology::from_parts(Shape::Fabric { routes: Vec::new() }, routers, ports, peer);
    if t.nodes != nodes {
        return Err(ConfigError::new("topology.file", format!("{shown}: an HCA port is attached twice")));
    }
    t.names = names;
    t.link_bps = link_bps;
    let routes = match routes {
        Some(dir) => forwarding_tables(dir, shown, &switches, &cas, ports)?,
        None => minimal_routes(&t),
    };
    t.shape = Shape::Fabric { routes };
    check_routes(&t, shown)?;
    Ok(t)
}

fn forwarding_tables(
    dir: &Path,
    shown: &str,
    switches: &BTreeMap<u32, u64>,
    cas: &BTreeMap<u32, String>,
    ports: usize,
) -> Result<Vec<u8>, ConfigError> {
    let lfts = parse_routes(dir, shown)?;
    let nodes = cas.len();
    let mut table = vec![NO_ROUTE; switches.len() * nodes];
    for (r, lid) in switches.keys().enumerate() {
        let lft = lfts.get(lid).ok_or_else(|| {
            ConfigError::new("topology.routes", format!("no forwarding table for switch LID {lid}"))
        })?;
        for (n, dst) in cas.keys().enumerate() {
            match lft.get(dst) {
                Some(&p) if p >= 1 && p as usize <= ports => table[r * nodes + n] = (p - 1) as u8,
                Some(&p) => {
                    return Err(ConfigError::new(
                        "topology.routes",
                        format!("switch LID {lid} forwards LID {dst} to port {p}, which it does not have"),
                    ))
                }
                None => {
                    return Err(ConfigError::new(
                        "topology.routes",
                        format!("switch LID {lid} has no route to HCA LID {dst}"),
                    ))
                }
            }
        }
    }
    Ok(table)
}

/// Minimal-hop routes: a breadth-first search back from each destination's switch; each
/// switch forwards toward a switch one hop nearer, on the `node mod count`-th such port.
fn minimal_routes(t: &Topology) -> Vec<u8> {
    let (peer, routers, ports, nodes) = (&t.peer, t.routers, t.ports, t.nodes);
    let mut table = vec![NO_ROUTE; routers * nodes];
    let mut dist = vec![u32::MAX; routers];
    let mut queue = VecDeque::new();
    for (n, &(home, port)) in t.attach.iter().enumerate() {
        let (home, port) = (home as usize, port as usize);
        dist.fill(u32::MAX);
        dist[home] = 0;
        queue.clear();
        queue.push_back(home);
        while let Some(r) = queue.pop_front() {
            for p in 0..ports {
                if let Peer::Router { router, .. } = peer[r * ports + p] {
                    let next = router as usize;
                    if dist[next] == u32::MAX {
                        dist[next] = dist[r] + 1;
                        queue.push_back(next);
                    }
                }
            }
        }
        table[home * nodes + n] = port as u8;
        for r in (0..routers).filter(|&r| r != home && dist[r] != u32::MAX) {
            // Spread destinations over the equally short ports (D-mod-K style), so that
            // parallel links share the load instead of all routes taking the lowest port.
            let toward = |p: &usize| matches!(peer[r * ports + p], Peer::Router { router, .. } if dist[router as usize].wrapping_add(1) == dist[r]);
            let count = (0..ports).filter(toward).count();
            if let Some(p) = (0..ports).filter(toward).nth(n % count.max(1)) {
                table[r * nodes + n] = p as u8;
            }
        }
    }
    table
}

/// Every node reaches every other along the table, without loops.
fn check_routes(t: &Topology, shown: &str) -> Result<(), ConfigError> {
    let Shape::Fabric { routes } = &t.shape else { return Ok(()) };
    for src in 0..t.nodes {
        for dst in (0..t.nodes).filter(|&d| d != src) {
            let (mut r, _) = t.attach[src];
            let mut arrived = false;
            for _ in 0..=t.routers {
                let p = routes[r as usize * t.nodes + dst];
                let bad = |why: &str| {
                    ConfigError::new(
                        "topology.routes",
                        format!("{shown}: from node {src} to node {dst}, switch {r}: {why}"),
                    )
                };
                if p == NO_ROUTE {
                    return Err(bad("no route"));
                }
                match t.peer(r as usize, p as usize) {
                    Peer::Router { router, .. } => r = router,
                    Peer::Endpoint { node } if node as usize == dst => {
                        arrived = true;
                        break;
                    }
                    Peer::Endpoint { .. } => return Err(bad("the route ends at another node")),
                    Peer::None => return Err(bad("the route leaves through an unconnected port")),
                }
            }
            if !arrived {
                return Err(ConfigError::new(
                    "topology.routes",
                    format!("{shown}: the route from node {src} to node {dst} loops"),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\
DR path slid 0; dlid 0; 0 -> new Switch 0x0002 portnum 0 lid 1-1 \"s1\"
CA     3  1 0x0000000000000003 4x QDR - SW     1  1 0x0000000000000001 ( 'h0 HCA-1' - 's1' )
CA     4  1 0x0000000000000004 4x DDR - SW     2  1 0x0000000000000002 ( 'h1 HCA-1' - 's2' )
SW     1  1 0x0000000000000001 4x QDR - CA     3  1 0x0000000000000003 ( 's1' - 'h0 HCA-1' )
SW     1  2 0x0000000000000001 4x QDR - SW     2  2 0x0000000000000002 ( 's1' - 's2' )
SW     1  3 0x0000000000000001 4x SDR                                    's1'
SW     2  1 0x0000000000000002 4x DDR - CA     4  1 0x0000000000000004 ( 's2' - 'h1 HCA-1' )
SW     2  2 0x0000000000000002 4x QDR - SW     1  2 0x0000000000000001 ( 's2' - 's1' )
";

    fn two_switches() -> Topology {
        // one file per call: tests run in parallel threads of one process
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("qosnet-ib-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join(format!("report-{call}.txt"));
        std::fs::write(&f, REPORT).unwrap();
        build(&f, None, "report.txt").unwrap()
    }

    #[test]
    fn ports_report_becomes_routers_nodes_and_link_rates() {
        let t = two_switches();
        // unconnected ports (s1's port 3) are left out
        assert_eq!((t.routers, t.ports, t.nodes), (2, 2, 2));
        assert_eq!(t.names, vec!["h0 HCA-1".to_string(), "h1 HCA-1".to_string()]);
        assert_eq!(t.attach, vec![(0, 0), (1, 0)]);
        assert_eq!(t.peer(0, 1), Peer::Router { router: 1, port: 1 });
        // 4x QDR carries 32 Gb/s of data, 4x DDR 16 Gb/s (8b/10b)
        assert_eq!(t.link_bps[0], 32e9);
        assert_eq!(t.link_bps[2], 16e9);
    }

    #[test]
    fn minimal_routes_reach_every_node() {
        let t = two_switches();
        let Shape::Fabric { routes } = &t.shape else { panic!() };
        // switch 0: node 0 on port 0, node 1 through port 1; switch 1 likewise
        assert_eq!(routes, &vec![0, 1, 1, 0]);
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let e = parse_report("CA 3 1 0x3 4x XDR - SW 1 1 0x1 ( 'a' - 'b' )\n", "topology.file").unwrap_err();
        assert!(e.message.contains("line 1") && e.message.contains("speed must be"), "{e}");
    }
}

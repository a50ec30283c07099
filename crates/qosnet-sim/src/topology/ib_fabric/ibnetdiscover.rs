//! The ports report of `ibnetdiscover -p` (infiniband-diags, `man ibnetdiscover`): every
//! connected port as `CA|SW lid port guid width speed - CA|SW lid port guid ( 'desc' -
//! 'desc' )`; and the switches' linear forwarding tables as printed by `ibroute` (one file
//! per switch: `0xLID port : (...)` per destination LID).
//!
//! The discovery lines before the report (`DR path ... -> new Channel Adapter ... lid A-B`)
//! give each HCA port's LID range, 2^LMC LIDs from A (document 002 §3: the subnet manager's
//! LID mask control); where they do, the LMC is kept for `[routing]` (`Shape::Fabric`).
//!
//! Keys are LIDs: switches and HCA ports are numbered in LID order. A node's name is its
//! HCA's description (`'desc'`), as the report gives it. Each link's rate is its width
//! times [`lane_rate`] of its speed.

use super::{lane_rate, Dump, End, HalfLink, Keys, NO_ROUTE};
use crate::config::files::FileText;
use crate::error::ConfigError;
use std::collections::HashMap;

fn parse_end(kind: &str, lid: &str, port: &str, guid: &str) -> Option<End> {
    let switch = match kind {
        "SW" => true,
        "CA" => false,
        _ => return None,
    };
    u64::from_str_radix(guid.strip_prefix("0x")?, 16).ok()?;
    Some(End { switch, key: lid.parse().ok()?, port: port.parse().ok()? })
}

/// Parse the connected ports of a ports report; unconnected ports and discovery lines are
/// skipped.
pub(super) fn parse_report(text: &str, shown: &str) -> Result<Dump, ConfigError> {
    let mut out = Vec::new();
    let mut lmc = None;
    for (i, raw) in text.lines().enumerate() {
        let t: Vec<&str> = raw.split_whitespace().collect();
        if raw.contains("Channel Adapter") {
            if let Some(l) = lid_range_lmc(&t) {
                lmc = lmc.max(Some(l));
            }
            continue;
        }
        if !(t.first() == Some(&"CA") || t.first() == Some(&"SW")) || t.get(6) != Some(&"-") {
            continue;
        }
        let bad =
            |why: &str| ConfigError::new("topology.file", format!("{shown} line {}: {why}: {raw:?}", i + 1));
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
        let local_name = raw.split('\'').nth(1).unwrap_or("").to_string();
        out.push(HalfLink { local, remote, bits_per_second: width * rate, local_name, line: i + 1 });
    }
    Ok(Dump { links: out, declared_ports: 0, lmc })
}

/// The LMC of a discovery line's `lid A-B` (B - A + 1 = 2^LMC LIDs), if it has one; a
/// port without a LID yet (`lid 0-0`) or a range not a power of two says nothing.
fn lid_range_lmc(tokens: &[&str]) -> Option<u8> {
    let at = tokens.iter().position(|&t| t == "lid")?;
    let (a, b) = tokens.get(at + 1)?.split_once('-')?;
    let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
    let count = b.checked_sub(a)? + 1;
    (a > 0 && count.is_power_of_two()).then(|| count.trailing_zeros() as u8)
}

/// Linear forwarding tables: switch LID -> (destination LID -> output port as in the dump),
/// from the texts of the `routes` directory's files (read by `config::Files`, in name order).
fn parse_routes(files: &[FileText], shown: &str) -> Result<HashMap<u32, HashMap<u32, u32>>, ConfigError> {
    let err = |why: String| ConfigError::new("topology.routes", format!("{shown}: {why}"));
    let mut out = HashMap::new();
    for f in files {
        let text = &f.text;
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

/// The routes of the forwarding tables in `dir`: `[router * nodes + node]`, the output port
/// (from 0) toward `node`.
pub(super) fn forwarding_tables(
    dir: &[FileText],
    shown: &str,
    keys: &Keys,
    ports: usize,
) -> Result<Vec<u8>, ConfigError> {
    let lfts = parse_routes(dir, shown)?;
    let nodes = keys.nodes.len();
    let mut table = vec![NO_ROUTE; keys.switches.len() * nodes];
    for (r, lid) in keys.switches.iter().enumerate() {
        let lft = lfts.get(lid).ok_or_else(|| {
            ConfigError::new("topology.routes", format!("no forwarding table for switch LID {lid}"))
        })?;
        for (n, dst) in keys.nodes.iter().enumerate() {
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

#[cfg(test)]
mod tests {
    use super::super::build;
    use super::*;
    use crate::ids::RouterId;
    use crate::topology::{Peer, Shape, Topology};

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
        build(REPORT, None, None, "report.txt").unwrap()
    }

    #[test]
    fn ports_report_becomes_routers_nodes_and_link_rates() {
        let t = two_switches();
        // unconnected ports (s1's port 3) are left out
        assert_eq!((t.routers, t.ports, t.nodes), (2, 2, 2));
        assert_eq!(t.names, vec!["h0 HCA-1".to_string(), "h1 HCA-1".to_string()]);
        assert_eq!(t.attach, vec![(RouterId(0), 0), (RouterId(1), 0)]);
        assert_eq!(t.peer(0, 1), Peer::Router { router: RouterId(1), port: 1 });
        // 4x QDR carries 32 Gb/s of data, 4x DDR 16 Gb/s (8b/10b)
        assert_eq!(t.link_bps[0], 32e9);
        assert_eq!(t.link_bps[2], 16e9);
    }

    #[test]
    fn minimal_routes_reach_every_node() {
        let t = two_switches();
        let Shape::Fabric { routes, .. } = &t.shape else { panic!() };
        // switch 0: node 0 on port 0, node 1 through port 1; switch 1 likewise
        assert_eq!(routes, &vec![0, 1, 1, 0]);
    }

    #[test]
    fn one_sided_links_are_refused_not_half_built() {
        let err = |text: &str| {
            let dump = parse_report(text, "r.txt").unwrap();
            super::super::assemble(&dump, "r.txt", crate::config::IbFabricFormat::Ibnetdiscover)
                .unwrap_err()
                .message
        };
        // s2's line for the s1-s2 link removed: s1's line 5 has no other side
        let e = err(REPORT
            .lines()
            .filter(|l| !l.starts_with("SW     2  2"))
            .collect::<Vec<_>>()
            .join("\n")
            .as_str());
        assert!(e.contains("r.txt line 5: the switch side of this link is missing or differs"), "{e}");
        let e = err(&format!("{REPORT}CA 5 1 0x5 4x QDR - CA 6 1 0x6 4x QDR ( 'a' - 'b' )\n"));
        assert!(e.contains("line 9: an HCA cabled to an HCA"), "{e}");
    }

    #[test]
    fn malformed_lines_name_the_line() {
        let e = parse_report("CA 3 1 0x3 4x XDR - SW 1 1 0x1 ( 'a' - 'b' )\n", "r.txt").unwrap_err();
        assert!(e.message.contains("r.txt line 1") && e.message.contains("speed must be"), "{e}");
    }

    /// The discovery lines' LID ranges give the HCA ports' LMC (4-7: four LIDs, LMC 2);
    /// ports without LIDs (`lid 0-0`, as in the Avakas dump) say nothing.
    #[test]
    fn lid_ranges_give_the_lmc() {
        let line = |range: &str| {
            format!(
                "DR path slid 0; dlid 0; 0,1 -> new Channel Adapter {{0011}} portnum 1 lid {range} \"\"\n"
            )
        };
        let lmc = |text: &str| parse_report(text, "r.txt").unwrap().lmc;
        assert_eq!(lmc(&format!("{}{}{REPORT}", line("4-7"), line("8-11"))), Some(2));
        assert_eq!(lmc(&format!("{}{REPORT}", line("3-3"))), Some(0));
        assert_eq!(lmc(&format!("{}{REPORT}", line("0-0"))), None);
        assert_eq!(lmc(REPORT), None);
        assert_eq!(lid_range_lmc(&["lid", "4-6"]), None, "three LIDs are no LMC's range");
    }
}

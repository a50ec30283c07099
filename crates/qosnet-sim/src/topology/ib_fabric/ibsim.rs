//! The net file of linux-rdma's ibsim (`net-examples/net`, whose header comment defines
//! the format; `data/ib-topologies/ibsim-net-example.net`, data/SOURCES.md): records
//! separated by blank lines, `#` comments,
//!
//! ```text
//! Switch 8 "Switch1"           <- Switch|Hca|Ca, its port count (1-255), its unique id
//! [1] "Hca1"[1]                <- [local port] "remote id"[remote port], optional w=1|4|12
//! [3] "Switch2"[3] w=12
//! ```
//!
//! Read as ibsim reads it (`ibsim/sim_net.c`, commit 04d81ed): anything after a header's
//! id (ibsim's `# "description"`, `lid`, `enhanced port 0`) is ignored; a port line without
//! `[remote port]` means remote port 1; GUID and `devid` settings are ignored. Not read:
//! `Rt` router records, `@` aliases, `include`, `module`, the global `width=`/`speed=`
//! defaults and the per-port `s=` speed, and plain `ibnetdiscover` output (`[1](guid)`).
//!
//! Stricter than ibsim: every link must be listed from both ends, pointing back and with
//! the same width (ibsim refuses one-sided links and widths with no lane in common), and a
//! port may be listed once per record.
//!
//! Link rate: ibsim has no speed in the format and defaults every port to SDR
//! (`DEFAULT_LINKSPEED` in `sim.h`), 2.5 Gb/s a lane, 2 Gb/s of data after 8b/10b; width
//! defaults to 4x (`DEFAULT_LINKWIDTH`), so a link without `w=` carries 8 Gb/s. `w=` is
//! read as the header comment documents it, a lane count: 1, 4 or 12. (ibsim's code takes
//! it as the PortInfo LinkWidthEnabled bit mask, where 1 and 12 also mean 1x and 12x but 4
//! is 8x; other masks are refused here.)
//!
//! Keys, so numbering: switches in file order; nodes are the connected HCA ports in file
//! order (HCA records as written, each record's port lines as written). A node's name is
//! its HCA's id, or `id[port]` for an HCA with more than one connected port.

use super::{lane_rate, Dump, End, HalfLink};
use crate::error::ConfigError;
use std::collections::HashMap;

/// ibsim's default speed and width (`sim.h`: `DEFAULT_LINKSPEED`, `DEFAULT_LINKWIDTH`).
const SPEED: &str = "SDR";
const DEFAULT_LANES: u32 = 4;

/// Top-level settings that do not change the topology or its rates (ibsim's GUID bases,
/// device id, parser debugging): skipped.
const IGNORED: [&str; 6] = ["switchguid", "hcaguid", "caguid", "rtguid", "devid", "pdebug"];

/// A node record: its header and its port lines.
#[derive(Debug)]
struct Record {
    switch: bool,
    id: String,
    ports: u32,
    line: usize,
    links: Vec<PortLine>,
}

#[derive(Debug)]
struct PortLine {
    port: u32,
    remote: String,
    remote_port: u32,
    lanes: u32,
    line: usize,
}

/// Parse a net file into connected ports, each link checked against its other end.
pub(super) fn parse(text: &str, shown: &str) -> Result<Dump, ConfigError> {
    let records = records(text, shown)?;
    resolve(&records, shown)
}

fn error(shown: &str, line: usize, why: impl std::fmt::Display) -> ConfigError {
    ConfigError::new("topology.file", format!("{shown} line {line}: {why}"))
}

/// The records as written (syntax only).
fn records(text: &str, shown: &str) -> Result<Vec<Record>, ConfigError> {
    let mut out: Vec<Record> = Vec::new();
    let mut open = false; // until a blank line ends the record
    for (i, raw) in text.lines().enumerate() {
        let (n, line) = (i + 1, raw.trim());
        let bad = |why: String| error(shown, n, format!("{why}: {raw:?}"));
        if line.is_empty() {
            open = false;
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            let Some(rec) = out.last_mut().filter(|_| open) else {
                return Err(bad("a port line outside a record (a blank line ends a record)".into()));
            };
            let l = port_line(line, n).map_err(bad)?;
            if l.port == 0 || l.port > rec.ports {
                return Err(bad(format!(
                    "port {} is beyond the {} ports \"{}\" declares on line {} (ports are numbered from 1)",
                    l.port, rec.ports, rec.id, rec.line
                )));
            }
            if let Some(first) = rec.links.iter().find(|k| k.port == l.port) {
                return Err(bad(format!("port {} is listed twice (also line {})", l.port, first.line)));
            }
            rec.links.push(l);
        } else if let Some(word @ ("Switch" | "Hca" | "Ca")) = line.split_whitespace().next() {
            let (ports, id) = header(&line[word.len()..]).map_err(bad)?;
            out.push(Record { switch: word == "Switch", id, ports, line: n, links: Vec::new() });
            open = true;
        } else if !IGNORED.iter().any(|w| line.starts_with(w)) {
            return Err(bad(
                "not read: only `Switch`/`Hca` records, their `[port]` lines and `#` comments".into()
            ));
        }
    }
    Ok(out)
}

/// `<ports> "id"` after the record's keyword; the rest of the line is ignored (as ibsim does).
fn header(rest: &str) -> Result<(u32, String), String> {
    let rest = rest.trim_start();
    let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    let ports: u32 =
        rest[..digits].parse().map_err(|_| "expected `Switch|Hca <ports> \"id\"`".to_string())?;
    if !(1..=255).contains(&ports) {
        return Err(format!("the port count must be in 1..=255, got {ports}"));
    }
    match quoted(rest[digits..].trim_start()) {
        Some((id, _)) if !id.is_empty() => Ok((ports, id.to_string())),
        _ => Err("expected the node's \"id\" after its port count".into()),
    }
}

/// `[port] "remote"[remote_port] w=N # comment`.
fn port_line(line: &str, n: usize) -> Result<PortLine, String> {
    let (port, rest) = bracketed(line).ok_or("expected `[port] \"remoteid\"[remoteport]`")?;
    if rest.starts_with('(') {
        return Err("a port GUID after the port: plain `ibnetdiscover` output is not read, \
                    give its ports report (`ibnetdiscover -p`)"
            .into());
    }
    let (remote, rest) =
        quoted(rest.trim_start()).ok_or("expected the remote node's \"id\" after the port")?;
    let rest = rest.trim_start();
    let (remote_port, rest) = match bracketed(rest) {
        Some(found) => found,
        None if rest.starts_with('[') => return Err("bad remote port".into()),
        None => (1, rest), // ibsim's default
    };
    let mut lanes = DEFAULT_LANES;
    for word in rest.split('#').next().unwrap_or("").split_whitespace() {
        lanes = match word.strip_prefix("w=") {
            Some("1") => 1,
            Some("4") => 4,
            Some("12") => 12,
            Some(_) => return Err(format!("bad width `{word}`: must be w=1, w=4 or w=12 (lanes)")),
            None => return Err(format!("unexpected `{word}`: only a width `w=1|4|12` may follow")),
        };
    }
    Ok(PortLine { port, remote: remote.to_string(), remote_port, lanes, line: n })
}

/// `[123]rest` -> (123, rest).
fn bracketed(s: &str) -> Option<(u32, &str)> {
    let (number, rest) = s.strip_prefix('[')?.split_once(']')?;
    Some((number.trim().parse().ok()?, rest))
}

/// `"text"rest` -> (text, rest).
fn quoted(s: &str) -> Option<(&str, &str)> {
    s.strip_prefix('"')?.split_once('"')
}

/// Number the switches and HCA ports, and check every port line against the line of the
/// port it names: that port must exist, list this one back and have the same width.
fn resolve(records: &[Record], shown: &str) -> Result<Dump, ConfigError> {
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        if let Some(&first) = by_id.get(r.id.as_str()) {
            let why = format!("\"{}\" is already the id of the record on line {}", r.id, records[first].line);
            return Err(error(shown, r.line, why));
        }
        by_id.insert(&r.id, i);
    }
    // Keys in file order: switches by record, HCA ports by port line.
    let (mut switches, mut hca_ports) = (0u32, 0u32);
    let mut key: HashMap<(usize, u32), u32> = HashMap::new();
    for (i, r) in records.iter().enumerate() {
        for l in &r.links {
            let next = if r.switch { switches } else { hca_ports };
            key.insert((i, l.port), next);
            hca_ports += u32::from(!r.switch);
        }
        switches += u32::from(r.switch);
    }
    let end = |rec: usize, port: u32| End { switch: records[rec].switch, key: key[&(rec, port)], port };
    let lane = lane_rate(SPEED).expect("SDR is a known speed");
    let mut links = Vec::new();
    for (i, r) in records.iter().enumerate() {
        for l in &r.links {
            let far = check_link(records, &by_id, r, l).map_err(|why| error(shown, l.line, why))?;
            let local_name = match r.links.len() {
                1 => r.id.clone(),
                _ => format!("{}[{}]", r.id, l.port),
            };
            let (local, remote) = (end(i, l.port), end(far, l.remote_port));
            links.push(HalfLink {
                local,
                remote,
                bits_per_second: l.lanes as f64 * lane,
                local_name,
                line: l.line,
            });
        }
    }
    let declared_ports = records.iter().filter(|r| r.switch).map(|r| r.ports).max().unwrap_or(0);
    Ok(Dump { links, declared_ports, lmc: None })
}

/// The record `l` leads to, if its line for that port lists `l` back with the same width.
fn check_link(
    records: &[Record],
    by_id: &HashMap<&str, usize>,
    r: &Record,
    l: &PortLine,
) -> Result<usize, String> {
    let (id, port) = (&l.remote, l.remote_port);
    let &far =
        by_id.get(id.as_str()).ok_or_else(|| format!("unknown remote id \"{id}\": no record has it"))?;
    let f = &records[far];
    if port == 0 || port > f.ports {
        return Err(format!(
            "remote port {port} is beyond the {} ports \"{id}\" declares on line {} (ports are numbered from 1)",
            f.ports, f.line
        ));
    }
    let Some(back) = f.links.iter().find(|k| k.port == port) else {
        return Err(format!(
            "dangling link: the record of \"{id}\" (line {}) has no line for its port {port}",
            f.line
        ));
    };
    if back.remote != r.id || back.remote_port != l.port {
        return Err(format!(
            "mismatched link: this line joins \"{}\"[{}] to \"{id}\"[{port}], but line {} joins \"{id}\"[{port}] to \"{}\"[{}]",
            r.id, l.port, back.line, back.remote, back.remote_port
        ));
    }
    if back.lanes != l.lanes {
        return Err(format!("width differs: w={} here, w={} on line {}", l.lanes, back.lanes, back.line));
    }
    Ok(far)
}

#[cfg(test)]
mod tests {
    use super::super::assemble;
    use super::*;
    use crate::config::IbFabricFormat;
    use crate::ids::{NodeId, RouterId};
    use crate::topology::Peer;

    const NET: &str = "\
# two switches, one HCA
Switch 8 \"s1\"
[1] \"h\"[2] w=12
[3] \"s2\"[4]

Switch 4 \"s2\"
[4] \"s1\"[3]   # a comment

Hca 2 \"h\"
[2] \"s1\"[1] w=12
";

    fn err(text: &str) -> String {
        parse(text, "t.net")
            .and_then(|d| assemble(&d, "t.net", IbFabricFormat::Ibsim).map(|_| ()))
            .unwrap_err()
            .message
    }

    #[test]
    fn records_become_ports_with_rates() {
        let (t, keys) = assemble(&parse(NET, "t.net").unwrap(), "t.net", IbFabricFormat::Ibsim).unwrap();
        // the header's 8 ports, not the highest connected one
        assert_eq!((t.routers, t.ports, t.nodes), (2, 8, 1));
        assert_eq!(keys.switches, vec![0, 1]);
        assert_eq!(t.names, vec!["h".to_string()]);
        assert_eq!(t.peer(0, 0), Peer::Endpoint { node: NodeId(0) });
        assert_eq!(t.peer(0, 2), Peer::Router { router: RouterId(1), port: 3 });
        // w=12 at SDR: 12 lanes x 2 Gb/s of data; the default 4x: 8 Gb/s
        assert_eq!((t.link_bps[0], t.link_bps[2], t.link_bps[8 + 3]), (24e9, 8e9, 8e9));
    }

    #[test]
    fn a_missing_remote_port_is_port_1_and_multi_port_hcas_name_their_ports() {
        let net = "Switch 4 \"s\"\n[1] \"h\"\n[2] \"h\"[2]\n\nHca 2 \"h\"\n[2] \"s\"[2]\n[1] \"s\"[1]\n";
        let (t, _) = assemble(&parse(net, "t.net").unwrap(), "t.net", IbFabricFormat::Ibsim).unwrap();
        // nodes in file order: the HCA's port 2 was written first
        assert_eq!(t.names, vec!["h[2]".to_string(), "h[1]".to_string()]);
        assert_eq!(t.attach, vec![(RouterId(0), 1), (RouterId(0), 0)]);
    }

    #[test]
    fn every_link_is_checked_from_both_ends() {
        // s1's port 3 names s2's port 4, which names s1's port 2 back
        let e = err(&NET.replace("[4] \"s1\"[3]", "[4] \"s1\"[2]"));
        assert!(e.contains("t.net line 4") && e.contains("but line 7 joins \"s2\"[4] to \"s1\"[2]"), "{e}");
        let e = err(&NET.replace("[2] \"s1\"[1] w=12", "[2] \"s1\"[1]"));
        assert!(e.contains("line 3") && e.contains("width differs: w=12 here, w=4 on line 10"), "{e}");
        let e = err(&NET.replace("[4] \"s1\"[3]   # a comment\n", ""));
        assert!(e.contains("line 4") && e.contains("dangling link"), "{e}");
        let e = err(&NET.replace("\"s2\"[4]", "\"s3\"[4]"));
        assert!(e.contains("unknown remote id \"s3\""), "{e}");
        let e = err(&NET.replace("\"s2\"[4]", "\"s2\"[5]"));
        assert!(
            e.contains("line 4")
                && e.contains("remote port 5 is beyond the 4 ports \"s2\" declares on line 6"),
            "{e}"
        );
    }

    #[test]
    fn malformed_lines_name_the_line_and_the_problem() {
        for (text, expect) in [
            ("Switch 300 \"s\"\n", "line 1: the port count must be in 1..=255, got 300"),
            ("Switch 8 s\n", "expected the node's \"id\""),
            (
                "Switch 8 \"s\"\n[9] \"h\"[1]\n",
                "line 2: port 9 is beyond the 8 ports \"s\" declares on line 1",
            ),
            ("Switch 8 \"s\"\n[0] \"h\"[1]\n", "port 0 is beyond"),
            ("Switch 8 \"s\"\n[1] \"h\"[1] w=2\n", "bad width `w=2`"),
            ("Switch 8 \"s\"\n[1] \"h\"[1] s=2\n", "unexpected `s=2`"),
            ("Switch 8 \"s\"\n[1] \"h\"[1]\n[1] \"g\"[1]\n", "line 3: port 1 is listed twice (also line 2)"),
            ("Switch 8 \"s\"\n\n[1] \"h\"[1]\n", "line 3: a port line outside a record"),
            ("Switch 8 \"s\"\n[1](0x2) \"h\"[1]\n", "`ibnetdiscover -p`"),
            ("Rt 2 \"r\"\n", "not read"),
            ("width=8\n", "not read"),
            ("Switch 8 \"s\"\n\nHca 1 \"s\"\n", "line 3: \"s\" is already the id of the record on line 1"),
        ] {
            let e = err(text);
            assert!(e.starts_with("t.net ") && e.contains(expect), "{text:?}: {e}");
        }
    }
}

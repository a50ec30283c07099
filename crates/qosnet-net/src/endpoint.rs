//! Endpoint names. A flow is a pair of ports and a priority (document 004 §4.2: GM ports);
//! an endpoint names a port of a host's agent: `host:port/N` is local port N of the agent
//! listening at `host:port`, and plain `host:port` is its port 0 (a library-mode agent's own
//! port, or the port a daemon's client opens as 0, which the service's host-level
//! reservations name).

use crate::error::NetError;
use std::net::{SocketAddr, ToSocketAddrs};

/// A local port of an agent (the application's GM port).
pub type Port = u32;

/// Split an endpoint into the agent's address and the port.
pub fn split(endpoint: &str) -> Result<(&str, Port), NetError> {
    match endpoint.rsplit_once('/') {
        None => Ok((endpoint, 0)),
        Some((agent, port)) => port.parse::<Port>().map(|p| (agent, p)).map_err(|_| {
            NetError::Config(format!(
                "endpoint: must be host:port or host:port/N with N a port number, got {endpoint:?}"
            ))
        }),
    }
}

/// The endpoint of `port` on the agent at `agent`.
pub fn join(agent: &str, port: Port) -> String {
    if port == 0 {
        agent.to_string()
    } else {
        format!("{agent}/{port}")
    }
}

/// `endpoint` with its agent's address resolved (`node7:7400/2` -> `10.0.0.7:7400/2`), as
/// a receiving agent names a flow's source: how the control plane's names (a host file's)
/// and the connections' addresses meet.
pub fn resolve(endpoint: &str) -> Result<String, NetError> {
    let (agent, port) = split(endpoint)?;
    let addr = agent.to_socket_addrs().ok().and_then(|mut a| a.next()).ok_or_else(|| {
        NetError::Config(format!("endpoint: cannot resolve {agent:?} to an address (in {endpoint:?})"))
    })?;
    Ok(join(&canonical(addr).to_string(), port))
}

/// The source endpoint of a connection from `peer` whose hello claims `claimed`: the
/// claimed agent port and local port at the connection's own address (so a sender cannot
/// name another host, and an agent listening on 0.0.0.0 is still named by its address).
/// None if `claimed` is not `ip:port` or `ip:port/N`.
pub fn source(claimed: &str, peer: SocketAddr) -> Option<String> {
    let (agent, port) = split(claimed).ok()?;
    let listen: SocketAddr = agent.parse().ok()?;
    Some(join(&canonical(SocketAddr::new(peer.ip(), listen.port())).to_string(), port))
}

/// An IPv4 peer of a dual-stack socket (`::ffff:a.b.c.d`) as plain IPv4.
fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_round_trip_and_bad_ports_are_named() {
        assert_eq!(split("10.0.0.1:7400").unwrap(), ("10.0.0.1:7400", 0));
        assert_eq!(split("10.0.0.1:7400/3").unwrap(), ("10.0.0.1:7400", 3));
        assert_eq!(join("h:1", 0), "h:1");
        assert_eq!(join("h:1", 7), "h:1/7");
        assert_eq!(split(&join("h:1", 7)).unwrap(), ("h:1", 7));
        assert!(split("h:1/x").unwrap_err().to_string().starts_with("endpoint: must be"));
    }

    #[test]
    fn a_source_is_named_by_its_connection_address() {
        let peer: SocketAddr = "10.0.0.9:51234".parse().unwrap();
        assert_eq!(source("10.0.0.9:7400/3", peer).as_deref(), Some("10.0.0.9:7400/3"));
        // An agent listening on every address, or claiming another host's: the connection's.
        assert_eq!(source("0.0.0.0:7400", peer).as_deref(), Some("10.0.0.9:7400"));
        assert_eq!(source("10.0.0.1:7400/2", peer).as_deref(), Some("10.0.0.9:7400/2"));
        let mapped: SocketAddr = "[::ffff:10.0.0.9]:5".parse().unwrap();
        assert_eq!(source("[::]:7400", mapped).as_deref(), Some("10.0.0.9:7400"));
        assert_eq!(source("x:1", peer), None);
        assert_eq!(source("10.0.0.9:7400/x", peer), None);
        let local = resolve("localhost:7400/2").unwrap();
        assert!(local == "127.0.0.1:7400/2" || local == "[::1]:7400/2", "{local}");
        assert_eq!(resolve("127.0.0.1:1").unwrap(), "127.0.0.1:1");
        assert!(resolve("no-such-host.invalid:1").unwrap_err().to_string().contains("cannot resolve"));
    }
}

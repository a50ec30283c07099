//! Endpoint names. A flow is a pair of ports and a priority (document 004 §4.2: GM ports);
//! an endpoint names a port of a host's agent: `host:port/N` is local port N of the agent
//! listening at `host:port`, and plain `host:port` is its port 0 (a library-mode agent's own
//! port, or the port a daemon's client opens as 0, which the service's host-level
//! reservations name).

use crate::agent::NetError;

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
}

//! The flow sockets' options. The `kernel` back end's lever: Linux's per-socket pacing
//! (`SO_MAX_PACING_RATE`, bytes/s), enforced by TCP's internal pacing and, with the `fq`
//! qdisc on the egress device, by fq's per-flow earliest departure times (the agent then
//! only admits and accounts; the kernel spaces the packets). Both back ends' marking of
//! reserved flows for priority in the network (`set_marking`).

use std::io;
use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// No pacing limit (the kernel's "unlimited").
pub const UNLIMITED: u64 = u64::MAX;

/// Cap `sock`'s sending rate at `bytes_per_second` (`UNLIMITED` removes the cap).
pub fn set_max_pacing_rate(sock: &TcpStream, bytes_per_second: u64) -> io::Result<()> {
    // The kernel takes an unsigned long (64-bit here), ~0 meaning unlimited.
    let rate: libc::c_ulong = bytes_per_second as libc::c_ulong;
    // SAFETY: setsockopt reads `size_of(rate)` bytes from a valid pointer to a local.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_MAX_PACING_RATE,
            &rate as *const libc::c_ulong as *const libc::c_void,
            std::mem::size_of::<libc::c_ulong>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Set the socket's send buffer, so that little data waits in the kernel past the scheduler's
/// decision (the agent back end's shares are decided when a packet enters the socket).
pub fn set_send_buffer(sock: &TcpStream, bytes: u32) -> io::Result<()> {
    set_int(sock, libc::SOL_SOCKET, libc::SO_SNDBUF, bytes.min(i32::MAX as u32) as libc::c_int)
}

/// Mark `sock`'s packets as a reserved flow's (`dscp`: the IP header's DSCP, IPv4 TOS or
/// IPv6 traffic class, and `SO_PRIORITY` 6, the band Linux's priority qdiscs serve first)
/// or, with None, as best effort again (both 0). Switch ports that trust the DSCP, and the
/// host's own priority qdisc, then serve reserved traffic ahead of unreserved traffic the
/// agent cannot see (another host's): document 000's service levels and VL arbitration,
/// document 003's real-time VCs, for the part of the path the agent does not schedule.
pub fn set_marking(sock: &TcpStream, dscp: Option<u8>) -> io::Result<()> {
    let tos: libc::c_int = dscp.map_or(0, |d| (d as libc::c_int) << 2);
    let (level, name) = match sock.local_addr()? {
        std::net::SocketAddr::V4(_) => (libc::IPPROTO_IP, libc::IP_TOS),
        std::net::SocketAddr::V6(_) => (libc::IPPROTO_IPV6, libc::IPV6_TCLASS),
    };
    set_int(sock, level, name, tos)?;
    // Priorities 0..=6 need no privilege.
    set_int(sock, libc::SOL_SOCKET, libc::SO_PRIORITY, if dscp.is_some() { 6 } else { 0 })
}

fn set_int(sock: &TcpStream, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: setsockopt reads `size_of(c_int)` bytes from a valid pointer to a local.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

//! The `kernel` back end's lever: Linux's per-socket pacing (`SO_MAX_PACING_RATE`, bytes/s),
//! enforced by TCP's internal pacing and, with the `fq` qdisc on the egress device, by fq's
//! per-flow earliest departure times. The agent then only admits and accounts; the kernel
//! spaces the packets.

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
    let v: libc::c_int = bytes.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: as above, a valid pointer to a local c_int.
    let rc = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

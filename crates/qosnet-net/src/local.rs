//! The local protocol between a host's daemon (`daemon`) and its applications (`client`),
//! over a Unix domain socket: the only way an application's bytes reach the network when
//! the host runs the daemon (document 004 §3.2: every send of the host goes through the
//! trusted rate controller, as every GM send went through the NIC).
//!
//! A request is `len u32 | op u8 | body` (`len` counts op and body, little endian); a reply
//! is `len u32 | status u8 | body`, status 0 for success, else an error kind with a UTF-8
//! message as body. Bodies, little endian, strings prefixed by a u16 length:
//!
//! | op | request body | reply body |
//! |----|--------------|------------|
//! | OPEN    | port u32 (`ANY_PORT`: the lowest free) | port u32, endpoint |
//! | ATTACH  | port u32 (a second connection of the port's owner) | - |
//! | SEND    | priority u8, dst, data | - |
//! | FLUSH   | priority u8, timeout ms u64, dst | - |
//! | RECV    | timeout ms u64 (`FOREVER`) | priority u8, src, data |
//! | STATS   | - | the agent's `Stats` as JSON |
//! | RESERVE | priority u8, bits/s f64, lease ms u64 (`FOREVER`: none), port u32, dst | - |
//! | RELEASE | priority u8, port u32, dst | had u8 |
//! | SEND_PIPELINED | priority u8, dst, data | none on success; on failure an `ASYNC` error |
//!
//! Pipelined sends (`SEND_PIPELINED`) are how a client streams: it does not wait for a
//! reply per message (that wait was a fixed ~20 us of latency and CPU per message, a Unix
//! socket round trip). The daemon answers one only when it fails, with a reply whose status
//! has the `ASYNC` bit set and whose body is `priority u8, dst, message`: the client finds it
//! before its next call, or skips it while reading a later request's reply, and reports it on
//! that flow's next send or flush, as a socket reports an earlier send's failure. A flow's
//! first send is a plain `SEND`, so that admission (a refused or unadmitted flow) still fails
//! the call that asked.
//!
//! The first request of a connection must be OPEN or ATTACH. Everything is checked before it
//! is trusted (`Reader`): a length over the daemon's limit, an unknown op, a truncated body
//! or a bad string ends the connection with an error reply.

use crate::error::NetError;
use std::io::{self, Read, Write};

pub const OPEN: u8 = 1;
pub const ATTACH: u8 = 2;
pub const SEND: u8 = 3;
pub const FLUSH: u8 = 4;
pub const RECV: u8 = 5;
pub const STATS: u8 = 6;
pub const RESERVE: u8 = 7;
pub const RELEASE: u8 = 8;
pub const SEND_PIPELINED: u8 = 9;

/// Set in the status of a reply that answers an earlier pipelined send (its failure), not
/// the request being waited for.
pub const ASYNC: u8 = 0x80;

pub const ANY_PORT: u32 = u32::MAX;
pub const FOREVER: u64 = u64::MAX;

/// Error kinds of a reply (status byte).
pub const E_NOT_ADMITTED: u8 = 1;
pub const E_FLOW_FAILED: u8 = 2;
pub const E_TIMEOUT: u8 = 3;
pub const E_INVALID: u8 = 4;
pub const E_SHUTDOWN: u8 = 5;
pub const E_PORT: u8 = 6;
pub const E_DENIED: u8 = 7;
pub const E_OTHER: u8 = 8;
/// A request the protocol cannot parse (counted by the daemon).
pub const E_MALFORMED: u8 = 9;
/// The flow's receiver refused it (not admitted there).
pub const E_REFUSED: u8 = 10;

/// The error kind a daemon replies for `e`.
pub fn error_kind(e: &NetError) -> u8 {
    match e {
        NetError::NotAdmitted { .. } => E_NOT_ADMITTED,
        NetError::Refused { .. } => E_REFUSED,
        NetError::FlowFailed { .. } | NetError::Connect { .. } => E_FLOW_FAILED,
        NetError::Timeout => E_TIMEOUT,
        NetError::Config(_) | NetError::Rate(_) => E_INVALID,
        NetError::Shutdown => E_SHUTDOWN,
        NetError::PortInUse(_) | NetError::PortClosed(_) => E_PORT,
        NetError::Io(_) | NetError::Daemon(_) => E_OTHER,
    }
}

/// A request or reply body being built.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn new(op: u8) -> Writer {
        let mut w = Writer(Vec::with_capacity(64));
        w.0.extend_from_slice(&[0, 0, 0, 0, op]);
        w
    }
    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn f64(mut self, v: f64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn str(mut self, s: &str) -> Self {
        let n = s.len().min(u16::MAX as usize);
        self.0.extend_from_slice(&(n as u16).to_le_bytes());
        self.0.extend_from_slice(&s.as_bytes()[..n]);
        self
    }
    /// Write the frame, `tail` (a message's bytes) after the body built so far.
    pub fn send(mut self, out: &mut impl Write, tail: &[u8]) -> io::Result<()> {
        let len = (self.0.len() - 4 + tail.len()) as u64;
        let len = u32::try_from(len)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "message too long"))?;
        self.0[0..4].copy_from_slice(&len.to_le_bytes());
        if tail.len() < 4096 {
            self.0.extend_from_slice(tail);
            return out.write_all(&self.0);
        }
        // Header and message in one system call (a pipelined send is one write).
        let mut bufs = [io::IoSlice::new(&self.0), io::IoSlice::new(tail)];
        let mut bufs = &mut bufs[..];
        while !bufs.is_empty() {
            match out.write_vectored(bufs) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => io::IoSlice::advance_slices(&mut bufs, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Read one frame: (op or status, body). `Ok(None)` at a clean end between frames; a frame
/// longer than `max` is refused before anything is allocated for it, and the body is read as
/// it arrives (a length claimed but not sent costs nothing).
pub fn read_frame(r: &mut impl Read, max: u64) -> io::Result<Option<(u8, Vec<u8>)>> {
    let mut h = [0u8; 5];
    let mut n = 0;
    while n < 5 {
        match r.read(&mut h[n..]) {
            Ok(0) if n == 0 => return Ok(None),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated request header")),
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as u64;
    if len == 0 || len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("request length: must be in 1..={max}, got {len}"),
        ));
    }
    let mut body = Vec::new();
    r.take(len - 1).read_to_end(&mut body)?;
    if (body.len() as u64) < len - 1 {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated request body"));
    }
    Ok(Some((h[4], body)))
}

/// Reads a body's fields, each checked.
pub struct Reader<'a> {
    b: &'a [u8],
}

fn short() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "request body too short for its op")
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b }
    }
    fn take(&mut self, n: usize) -> io::Result<&'a [u8]> {
        if self.b.len() < n {
            return Err(short());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    pub fn u8(&mut self) -> io::Result<u8> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> io::Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> io::Result<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn f64(&mut self) -> io::Result<f64> {
        Ok(f64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn str(&mut self) -> io::Result<&'a str> {
        let n = u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        std::str::from_utf8(self.take(n)?)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "string is not UTF-8"))
    }
    /// The rest of the body (a message's bytes).
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }
    /// The body must be used up.
    pub fn end(&self) -> io::Result<()> {
        if self.b.is_empty() {
            Ok(())
        } else {
            Err(io::Error::new(io::ErrorKind::InvalidData, "request body longer than its op"))
        }
    }
}

/// A millisecond count as a timeout (`FOREVER`: none).
pub fn millis(ms: u64) -> Option<std::time::Duration> {
    (ms != FOREVER).then(|| std::time::Duration::from_millis(ms))
}

/// A timeout as a millisecond count.
pub fn to_millis(t: Option<std::time::Duration>) -> u64 {
    t.map_or(FOREVER, |d| (d.as_millis() as u64).min(FOREVER - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_round_trips_and_bad_lengths_are_refused() {
        let mut out = Vec::new();
        Writer::new(SEND).u8(3).str("h:1/2").send(&mut out, b"data").unwrap();
        let (op, body) = read_frame(&mut out.as_slice(), 1 << 20).unwrap().unwrap();
        assert_eq!(op, SEND);
        let mut r = Reader::new(&body);
        assert_eq!((r.u8().unwrap(), r.str().unwrap(), r.rest()), (3, "h:1/2", &b"data"[..]));
        let huge = [0xff, 0xff, 0xff, 0xff, SEND];
        let e = read_frame(&mut huge.as_slice(), 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "request length: must be in 1..=1048576, got 4294967295");
        assert!(read_frame(&mut [0u8, 0, 0, 0, 1].as_slice(), 9).is_err());
        // A length claimed but not sent: refused as truncated, nothing held.
        assert!(read_frame(&mut [100u8, 0, 0, 0, SEND, 1].as_slice(), 1 << 20).is_err());
        assert!(read_frame(&mut [0u8; 0].as_slice(), 9).unwrap().is_none());
        assert!(Reader::new(&[1]).u32().is_err());
        assert!(Reader::new(&[2, 0, 0xff, 0xfe]).str().is_err());
    }

    proptest::proptest! {
        /// Arbitrary bytes are a frame or an error, never a panic, and never a body longer
        /// than the limit.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(0u8..=255, 0..64)) {
            if let Ok(Some((_, body))) = read_frame(&mut bytes.as_slice(), 32) {
                proptest::prop_assert!(body.len() < 32);
                let mut r = Reader::new(&body);
                let _ = (r.u8(), r.str(), r.u64(), r.f64(), r.u32());
            }
        }
    }
}

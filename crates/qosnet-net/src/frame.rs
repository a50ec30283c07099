//! The wire format: every TCP connection carries one flow's packets as frames.
//!
//! A message is cut into packets of at most the agent's packet size (4 KB by default, GM's
//! packet size, document 004 §5.2: all packets but a message's last are full); each packet
//! travels as one frame, a 16-byte header and its payload. The first frame on a connection
//! is a `Hello` naming the flow (document 004 §4.2's flow is a pair of ports and a priority):
//! its payload is the source endpoint (`host:port/N`, see `endpoint`), its `message` field
//! the destination's local port, its `priority` the flow's.
//!
//! Before the hello, the receiving agent opens the connection with a `Challenge` (a fresh
//! nonce), and the hello proves the cluster key against it (`auth`): the hello's payload is
//! `sender nonce (32) | MAC (32) | source endpoint`.
//!
//! The receiving agent answers the hello with one frame before any data flows: `Welcome`
//! (the flow is admitted there) or `Refuse` (payload: the reason, UTF-8), after which it
//! closes the connection (document 004 §3.4 (c): admission at the destination too; a closed
//! agent takes only the flows the control plane admitted, see `agent`).
//!
//! Header, little endian:
//! `magic u16 = 0x4e51 ("QN") | version u8 = 3 | kind u8 | flags u8 | priority u8 |
//!  reserved u16 = 0 | length u32 | message u32`
//!
//! Everything a peer sends is checked before it is trusted (a rogue client must not crash or
//! wedge an agent): a bad magic, version, kind, flag or reserved field, a payload longer than
//! the receiver's packet limit, a message id that changes inside a message or a message
//! longer than the receiver's limit is a `FrameError`; the agent counts it and closes the
//! connection.

use std::io::{self, Read};

pub const MAGIC: u16 = 0x4e51;
/// 2: the receiver answers the hello (`Welcome` / `Refuse`); 3: the receiver challenges
/// first and the hello and welcome carry the cluster key's proofs (`auth`).
pub const VERSION: u8 = 3;
pub const HEADER_BYTES: usize = 16;
/// The longest packet any agent sends or accepts. A receiver accepts packets of any size up
/// to this, not only its own packet size: two agents configured with different packet
/// sizes still talk.
pub const MAX_PACKET_BYTES: u32 = 1 << 20;

/// The last packet of its message.
pub const FLAG_LAST: u8 = 1;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Opens a connection: the payload is the sender's endpoint name (UTF-8, host:port/N),
    /// the header's `message` the destination port.
    Hello = 1,
    /// A packet of a message.
    Data = 2,
    /// The receiver's answer to a hello: the flow is admitted.
    Welcome = 3,
    /// The receiver's answer to a hello: the flow is refused (payload: the reason).
    Refuse = 4,
    /// The receiver's first frame on a connection: a fresh nonce the hello must prove the
    /// cluster key against (`auth`).
    Challenge = 5,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub flags: u8,
    pub priority: u8,
    pub length: u32,
    pub message: u32,
}

impl Header {
    pub fn encode(&self, out: &mut [u8; HEADER_BYTES]) {
        out[0..2].copy_from_slice(&MAGIC.to_le_bytes());
        out[2] = VERSION;
        out[3] = self.kind as u8;
        out[4] = self.flags;
        out[5] = self.priority;
        out[6..8].copy_from_slice(&0u16.to_le_bytes());
        out[8..12].copy_from_slice(&self.length.to_le_bytes());
        out[12..16].copy_from_slice(&self.message.to_le_bytes());
    }

    /// Parse and check a header; `max_payload` is the receiver's packet limit.
    pub fn decode(b: &[u8; HEADER_BYTES], max_payload: u32) -> Result<Header, FrameError> {
        let magic = u16::from_le_bytes([b[0], b[1]]);
        if magic != MAGIC {
            return Err(FrameError::Magic(magic));
        }
        if b[2] != VERSION {
            return Err(FrameError::Version(b[2]));
        }
        let kind = match b[3] {
            1 => Kind::Hello,
            2 => Kind::Data,
            3 => Kind::Welcome,
            4 => Kind::Refuse,
            5 => Kind::Challenge,
            k => return Err(FrameError::Kind(k)),
        };
        let flags = b[4];
        if flags & !FLAG_LAST != 0 {
            return Err(FrameError::Flags(flags));
        }
        if b[6] != 0 || b[7] != 0 {
            return Err(FrameError::Reserved);
        }
        let length = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        if length > max_payload {
            return Err(FrameError::TooLong { length, max: max_payload });
        }
        let message = u32::from_le_bytes([b[12], b[13], b[14], b[15]]);
        Ok(Header { kind, flags, priority: b[5], length, message })
    }
}

/// Why a frame was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    #[error("bad magic {0:#06x} (expected {MAGIC:#06x})")]
    Magic(u16),
    #[error("unsupported version {0} (expected {VERSION})")]
    Version(u8),
    #[error("unknown frame kind {0} (allowed: 1 hello, 2 data, 3 welcome, 4 refuse, 5 challenge)")]
    Kind(u8),
    #[error("unknown flags {0:#04x} (allowed: {FLAG_LAST:#04x} last)")]
    Flags(u8),
    #[error("reserved header field is not zero")]
    Reserved,
    #[error("payload of {length} bytes is longer than the packet limit {max}")]
    TooLong { length: u32, max: u32 },
    #[error("a data frame before the connection's hello")]
    DataBeforeHello,
    #[error("a second hello on the connection")]
    SecondHello,
    #[error("hello's endpoint name is not host:port or host:port/N with an IP address")]
    HelloName,
    #[error("hello's payload is shorter than its nonce and proof ({0} bytes)")]
    HelloShort(usize),
    #[error("a {0:?} frame from the sending side of a flow")]
    Direction(Kind),
    #[error("message id changed from {expected} to {got} inside a message")]
    Interleaved { expected: u32, got: u32 },
    #[error("message longer than the limit {max} bytes")]
    MessageTooLong { max: u64 },
    #[error("the connection closed inside a frame")]
    Truncated,
}

/// A frame read from a connection.
pub struct Frame {
    pub header: Header,
    pub payload: Vec<u8>,
}

/// Read one frame; `Ok(None)` at a clean end of stream between frames.
pub fn read_frame(r: &mut impl Read, max_payload: u32) -> io::Result<Option<Result<Frame, FrameError>>> {
    let mut h = [0u8; HEADER_BYTES];
    match read_full(r, &mut h)? {
        0 => return Ok(None),
        n if n < HEADER_BYTES => return Ok(Some(Err(FrameError::Truncated))),
        _ => {}
    }
    let header = match Header::decode(&h, max_payload) {
        Ok(h) => h,
        Err(e) => return Ok(Some(Err(e))),
    };
    let mut payload = vec![0u8; header.length as usize];
    if read_full(r, &mut payload)? < payload.len() {
        return Ok(Some(Err(FrameError::Truncated)));
    }
    Ok(Some(Ok(Frame { header, payload })))
}

/// Read until `buf` is full or the stream ends; the count read.
fn read_full(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reassembles one connection's frames into whole messages (GM delivers in order per flow,
/// so a connection's packets never interleave messages).
#[derive(Debug)]
pub struct Reassembly {
    max_message: u64,
    current: Option<u32>,
    buf: Vec<u8>,
}

impl Reassembly {
    pub fn new(max_message: u64) -> Reassembly {
        Reassembly { max_message, current: None, buf: Vec::new() }
    }

    /// Add a data frame; the whole message when it was its last packet.
    pub fn push(&mut self, h: &Header, payload: &[u8]) -> Result<Option<Vec<u8>>, FrameError> {
        match self.current {
            Some(m) if m != h.message => return Err(FrameError::Interleaved { expected: m, got: h.message }),
            _ => self.current = Some(h.message),
        }
        if (self.buf.len() + payload.len()) as u64 > self.max_message {
            return Err(FrameError::MessageTooLong { max: self.max_message });
        }
        self.buf.extend_from_slice(payload);
        if h.flags & FLAG_LAST != 0 {
            self.current = None;
            return Ok(Some(std::mem::take(&mut self.buf)));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(message: u32, last: bool, length: u32) -> Header {
        Header { kind: Kind::Data, flags: if last { FLAG_LAST } else { 0 }, priority: 3, length, message }
    }

    #[test]
    fn a_header_round_trips() {
        let h = data(7, true, 4096);
        let mut b = [0u8; HEADER_BYTES];
        h.encode(&mut b);
        assert_eq!(&b[0..2], b"QN");
        assert_eq!(Header::decode(&b, 4096), Ok(h));
    }

    #[test]
    fn every_bad_field_is_named() {
        let mut b = [0u8; HEADER_BYTES];
        data(1, false, 10).encode(&mut b);
        let bad = |i: usize, v: u8| {
            let mut c = b;
            c[i] = v;
            Header::decode(&c, 4096).unwrap_err()
        };
        assert_eq!(bad(0, 0), FrameError::Magic(0x4e00));
        assert_eq!(bad(2, 9), FrameError::Version(9));
        assert_eq!(bad(3, 6), FrameError::Kind(6));
        let mut refuse = b;
        refuse[3] = 4;
        assert_eq!(Header::decode(&refuse, 4096).map(|h| h.kind), Ok(Kind::Refuse));
        assert_eq!(bad(4, 2), FrameError::Flags(2));
        assert_eq!(bad(7, 1), FrameError::Reserved);
        assert_eq!(Header::decode(&b, 9), Err(FrameError::TooLong { length: 10, max: 9 }));
    }

    #[test]
    fn packets_reassemble_into_the_whole_message() {
        let mut r = Reassembly::new(1 << 20);
        assert_eq!(r.push(&data(1, false, 2), b"ab"), Ok(None));
        assert_eq!(r.push(&data(1, true, 1), b"c"), Ok(Some(b"abc".to_vec())));
        assert_eq!(r.push(&data(2, true, 0), b""), Ok(Some(vec![])));
        assert_eq!(r.push(&data(3, false, 1), b"x"), Ok(None));
        assert_eq!(r.push(&data(4, true, 1), b"y"), Err(FrameError::Interleaved { expected: 3, got: 4 }));
        let mut small = Reassembly::new(3);
        assert_eq!(small.push(&data(1, false, 4), b"abcd"), Err(FrameError::MessageTooLong { max: 3 }));
    }

    #[test]
    fn a_truncated_stream_is_refused_and_an_empty_one_is_a_clean_end() {
        let mut b = [0u8; HEADER_BYTES];
        data(1, true, 8).encode(&mut b);
        let mut short = &b[..10];
        assert!(matches!(read_frame(&mut short, 4096), Ok(Some(Err(FrameError::Truncated)))));
        let mut with_part = b.to_vec();
        with_part.extend_from_slice(b"abc");
        assert!(matches!(read_frame(&mut with_part.as_slice(), 4096), Ok(Some(Err(FrameError::Truncated)))));
        let mut empty: &[u8] = &[];
        assert!(matches!(read_frame(&mut empty, 4096), Ok(None)));
    }

    proptest::proptest! {
        /// Arbitrary bytes never panic the decoder: every header is accepted or refused.
        #[test]
        fn arbitrary_bytes_are_accepted_or_refused(bytes in proptest::collection::vec(0u8..=255, 0..64)) {
            let mut r = bytes.as_slice();
            let _ = read_frame(&mut r, 4096);
        }
    }
}

//! Peer agents authenticate each other with a cluster key.
//!
//! Document 004 §3.2 and §3.4 rest on every send of a host going through its trusted rate
//! controller (the NIC firmware; "nodes in clusters belong to the same administrative domain
//! and can be trusted"). On real hosts any process can open a TCP connection to a peer
//! agent and send past its own agent's pacing; the receiving agent's admission names the
//! source by the connection's address, so a process on an *admitted* host would pass. The
//! agents therefore prove to each other that they hold a key the operator gave every agent
//! of the cluster (and no application): a process without it is refused at the hello.
//!
//! The handshake (frame version 3, see `frame`), HMAC-SHA-256 challenge-response:
//! 1. the receiver opens every connection with a `Challenge`: a fresh 32-byte random nonce;
//! 2. the sender's `Hello` carries its own nonce and `hello_mac` = HMAC(key, "qosnet hello"
//!    | challenge | sender nonce | priority | destination port | source endpoint name):
//!    it can only be made by a key holder, for this connection's challenge (a hello
//!    recorded from another connection is refused: a replay);
//! 3. the receiver checks it (in constant time) and answers `Welcome` carrying
//!    `welcome_mac` = HMAC(key, "qosnet welcome" | challenge | sender nonce), so the sender
//!    knows it reached a key holder too, or `Refuse`, counting the refusal.
//!
//! Without a key (an open agent, or library mode) the MACs are zeros and not checked; a
//! keyed agent refuses such a peer, and a keyed sender refuses such a receiver.

use crate::error::NetError;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

pub const NONCE_BYTES: usize = 32;
pub const MAC_BYTES: usize = 32;
/// The shortest key accepted: 256 bits, HMAC-SHA-256's own strength.
pub const MIN_KEY_BYTES: usize = 32;

pub type Nonce = [u8; NONCE_BYTES];
pub type Tag = [u8; MAC_BYTES];

/// The cluster's shared key (never printed).
#[derive(Clone)]
pub struct ClusterKey(Vec<u8>);

impl std::fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClusterKey(..)")
    }
}

impl ClusterKey {
    /// The key in `path` (its bytes, surrounding whitespace trimmed: a base64 or hex line
    /// works). The file must be the operator's alone: not readable by group or others.
    pub fn from_file(path: &Path) -> Result<ClusterKey, NetError> {
        let bad = |m: String| NetError::Config(format!("key_file: {m}"));
        let meta =
            std::fs::metadata(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(bad(format!(
                "{} must be readable by its owner only (mode 600), got mode {mode:o}: any local user \
                 could read the cluster key",
                path.display()
            )));
        }
        let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
        ClusterKey::new(bytes.trim_ascii().to_vec()).map_err(|e| bad(format!("{}: {e}", path.display())))
    }

    /// A key from its bytes (at least `MIN_KEY_BYTES`).
    pub fn new(bytes: Vec<u8>) -> Result<ClusterKey, NetError> {
        if bytes.len() < MIN_KEY_BYTES {
            return Err(NetError::Config(format!(
                "the cluster key must be at least {MIN_KEY_BYTES} bytes, got {} (make one with \
                 `head -c 32 /dev/urandom | base64`)",
                bytes.len()
            )));
        }
        Ok(ClusterKey(bytes))
    }

    fn mac(&self, parts: &[&[u8]]) -> Hmac<Sha256> {
        let mut m = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes a key of any length");
        for p in parts {
            m.update(p);
        }
        m
    }

    /// The sender's proof for this connection's `challenge`.
    pub fn hello_mac(&self, challenge: &Nonce, nonce: &Nonce, priority: u8, port: u32, name: &str) -> Tag {
        self.mac(&hello_parts(challenge, nonce, &[priority], &port.to_le_bytes(), name))
            .finalize()
            .into_bytes()
            .into()
    }

    /// Check a sender's proof (constant time).
    pub fn check_hello(
        &self,
        challenge: &Nonce,
        nonce: &Nonce,
        priority: u8,
        port: u32,
        name: &str,
        tag: &[u8],
    ) -> bool {
        self.mac(&hello_parts(challenge, nonce, &[priority], &port.to_le_bytes(), name))
            .verify_slice(tag)
            .is_ok()
    }

    /// The receiver's proof, answering the sender's `nonce`.
    pub fn welcome_mac(&self, challenge: &Nonce, nonce: &Nonce) -> Tag {
        self.mac(&[b"qosnet welcome", challenge, nonce]).finalize().into_bytes().into()
    }

    pub fn check_welcome(&self, challenge: &Nonce, nonce: &Nonce, tag: &[u8]) -> bool {
        self.mac(&[b"qosnet welcome", challenge, nonce]).verify_slice(tag).is_ok()
    }
}

fn hello_parts<'a>(
    challenge: &'a Nonce,
    nonce: &'a Nonce,
    priority: &'a [u8],
    port: &'a [u8],
    name: &'a str,
) -> [&'a [u8]; 6] {
    [b"qosnet hello", challenge, nonce, priority, port, name.as_bytes()]
}

/// A fresh random nonce (the kernel's CSPRNG).
pub fn nonce() -> std::io::Result<Nonce> {
    let mut n = [0u8; NONCE_BYTES];
    getrandom::getrandom(&mut n).map_err(std::io::Error::from)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> ClusterKey {
        ClusterKey::new(vec![b; 32]).unwrap()
    }

    #[test]
    fn a_proof_checks_only_for_its_key_challenge_and_fields() {
        let nonce = || super::nonce().unwrap();
        let (c, n) = (nonce(), nonce());
        assert_ne!(c, n, "nonces are fresh");
        let tag = key(1).hello_mac(&c, &n, 3, 7, "10.0.0.1:7400/2");
        assert!(key(1).check_hello(&c, &n, 3, 7, "10.0.0.1:7400/2", &tag));
        assert!(!key(2).check_hello(&c, &n, 3, 7, "10.0.0.1:7400/2", &tag), "another key");
        assert!(!key(1).check_hello(&nonce(), &n, 3, 7, "10.0.0.1:7400/2", &tag), "another challenge");
        assert!(!key(1).check_hello(&c, &n, 4, 7, "10.0.0.1:7400/2", &tag), "another priority");
        assert!(!key(1).check_hello(&c, &n, 3, 8, "10.0.0.1:7400/2", &tag), "another port");
        assert!(!key(1).check_hello(&c, &n, 3, 7, "10.0.0.1:7400/3", &tag), "another source");
        assert!(!key(1).check_hello(&c, &n, 3, 7, "10.0.0.1:7400/2", &[0; 32]), "no proof");
        let w = key(1).welcome_mac(&c, &n);
        assert!(key(1).check_welcome(&c, &n, &w));
        assert!(!key(2).check_welcome(&c, &n, &w));
        assert!(!key(1).check_welcome(&c, &nonce(), &w));
        assert_eq!(format!("{:?}", key(1)), "ClusterKey(..)");
    }

    #[test]
    fn a_key_file_must_be_private_and_long_enough() {
        let dir = std::env::temp_dir().join(format!("qosnet-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("key");
        std::fs::write(&f, format!("{}\n", "k".repeat(40))).unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = ClusterKey::from_file(&f).unwrap_err().to_string();
        assert!(e.starts_with("key_file: ") && e.contains("mode 644"), "{e}");
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o600)).unwrap();
        ClusterKey::from_file(&f).unwrap();
        std::fs::write(&f, "short\n").unwrap();
        let e = ClusterKey::from_file(&f).unwrap_err().to_string();
        assert!(e.starts_with("key_file: ") && e.contains("at least 32 bytes, got 5"), "{e}");
        let e = ClusterKey::from_file(&dir.join("missing")).unwrap_err().to_string();
        assert!(e.starts_with("key_file: cannot read"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

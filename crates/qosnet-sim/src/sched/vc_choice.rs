//! Which VC a sender takes, shared by the routers' VC allocators and the NICs' injection
//! (both are senders into a VC buffer, document 003 §3 and §5.3): a free VC by the
//! configured policy, and in the preemptive router the VC a higher-priority message
//! preempts (§3.2.1).

use super::RoundRobin;
use crate::config::VcSelection;

/// Pick a free VC among `free` (non-empty) by the configured policy.
#[inline]
pub(crate) fn select_vc(policy: VcSelection, free: u32, rr: &mut RoundRobin) -> usize {
    debug_assert!(free != 0);
    match policy {
        VcSelection::LowestFree => free.trailing_zeros() as usize,
        VcSelection::RoundRobin => rr.select(free, |_| true).unwrap_or(0),
    }
}

/// The VC a message of `class` preempts: among `candidates` (VCs whose extra buffer is
/// free), one held by the lowest-priority class below `class` (`held[c]`: the VCs class c
/// holds), the highest-numbered, so that VC 0 — control's own — is taken last.
pub(crate) fn victim(held: &[u32; 3], candidates: u32, class: u8) -> Option<usize> {
    let m = (class as usize + 1..3).rev().map(|c| held[c] & candidates).find(|&m| m != 0)?;
    Some(31 - m.leading_zeros() as usize)
}

//! Stage 4's iSLIP allocator (McKeown, "The iSLIP scheduling algorithm for input-queued
//! switches", IEEE/ACM Transactions on Networking 7(2), 1999), over VCs as BookSim2's `iq`
//! router runs it (`sw_allocator = islip`), chosen by `[router] allocator`:
//! 1. request: each unmatched input asks every unmatched output that one of its ready VCs
//!    heads to;
//! 2. grant: each output asked grants one input, the first from its grant pointer (round
//!    robin) or, with rate-based keys, the one whose best VC toward it has the smallest key
//!    (ties in round-robin order);
//! 3. accept: each input granted accepts one output the same way from its accept pointer,
//!    and its crossbar scheduler picks which of its VCs toward that output sends.
//!
//! Pointers move one past the match only for matches of the first iteration (what keeps
//! iSLIP's outputs from granting in lockstep); unmatched inputs and outputs try again in
//! the next. The QoS order holds within each output (it grants the smallest key that asked
//! it) and each input (it sends the smallest key among the outputs that granted it).

use super::crossbar::first_request;
use super::Routers;
use crate::net::Net;
use crate::sched::{bits64, low_bits, rotated};
use crate::unchecked::At;
use crate::units::Cycle;

impl Routers {
    /// iSLIP's rounds at router `r` for the crossbar inputs `inputs` (no speedup).
    #[inline(never)]
    pub(super) fn rounds_islip<const PRE: bool, const AGE: bool, const HOOK: bool>(
        &mut self,
        net: &mut Net,
        r: usize,
        inputs: u64,
        by_key: bool,
        now: Cycle,
    ) {
        let ports = self.p.ports;
        let mut pending = inputs;
        let mut free = low_bits(ports);
        for iteration in 0..self.p.iterations {
            // 1. requests (`wants` is cleared to collect the grants)
            let mut asked = 0u64;
            for port in bits64(pending) {
                let ready = self.ready_vcs::<PRE>(r, port, now);
                let wants = if ready == 0 { 0 } else { self.outputs_of(r, port, ready) & free };
                if wants == 0 {
                    // (what it could send heads to outputs already matched this cycle)
                    pending &= !(1 << port);
                    continue;
                }
                *self.xbar.ready.at_mut(port) = ready;
                *self.xbar.wants.at_mut(port) = 0;
                for out in bits64(wants) {
                    *self.xbar.requests.at_mut(out) |= 1 << port;
                }
                asked |= wants;
            }
            if asked == 0 {
                break;
            }
            // 2. grants
            let mut granted = 0u64;
            for out in bits64(asked) {
                let requests = std::mem::take(self.xbar.requests.at_mut(out));
                if by_key {
                    for p in bits64(requests) {
                        let vcs = self.toward(r, p, out, *self.xbar.ready.at(p));
                        *self.xbar.keys.at_mut(p) = self.best_key(r, p, vcs);
                    }
                }
                let start = *self.xbar_rr.at(r * ports + out) as u32;
                let port = first_request(requests, start, ports, by_key.then_some(&self.xbar.keys));
                *self.xbar.wants.at_mut(port) |= 1 << out;
                granted |= 1 << port;
            }
            // 3. accepts
            for port in bits64(granted) {
                let offers = *self.xbar.wants.at(port);
                let ready = *self.xbar.ready.at(port);
                let ip = r * ports + port;
                let mut best = (u64::MAX, usize::MAX);
                for out in rotated(offers, *self.xbar_accept.at(ip) as u32, ports) {
                    let key =
                        if by_key { self.best_key(r, port, self.toward(r, port, out, ready)) } else { 0 };
                    if best.1 == usize::MAX || key < best.0 {
                        best = (key, out);
                    }
                }
                let out = best.1;
                let Some(v) = self.choose_vc(r, port, self.toward(r, port, out, ready), now) else {
                    continue;
                };
                self.traverse::<PRE, AGE, HOOK>(net, r, port, v, now);
                if iteration == 0 {
                    self.served(r * ports + out, port);
                    *self.xbar_accept.at_mut(ip) = if out + 1 >= ports { 0 } else { out as u8 + 1 };
                }
                pending &= !(1 << port);
                free &= !(1 << out);
            }
        }
    }
}

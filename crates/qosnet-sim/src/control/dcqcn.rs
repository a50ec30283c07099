//! DCQCN, the congestion control of RoCEv2 (Zhu, Eran, Firestone, Guo, Lipshteyn, Liron,
//! Padhye, Raindel, Yahia and Zhang, "Congestion Control for Large-Scale RDMA
//! Deployments", SIGCOMM 2015, §3): rate-based, built from QCN's rate machine and DCTCP's
//! α. Its three parts:
//! - **congestion point** (the switch): RED-style ECN marking on the queue (`[router]
//!   marking = { kind = "red" }`, `router/marking.rs`);
//! - **notification point** (the destination, `on_mark`): a marked packet of a flow is
//!   answered with a CNP, at most one per flow every `cnp_interval` (N, 50 µs);
//! - **reaction point** (the source, per flow): on a CNP, R_T = R_C, R_C = R_C (1 − α/2),
//!   α = (1 − g) α + g, and the increase counters restart; α decays, α = (1 − g) α, every
//!   K (`alpha_timer`, 55 µs) without a CNP; a timer (T, `rate_timer`, 55 µs) and a byte
//!   counter (B, `byte_counter`, 10 MB) each count increase events, each event first
//!   fast recovery (R_C = (R_T + R_C)/2) while both counts are at most F (5), then
//!   additive increase (R_T += R_AI, then the same halving) while one is, then hyper
//!   increase (R_T += i R_HAI, i = min(T, BC) − F) once both exceed F. R_C never rises
//!   above the line rate; a flow at the line rate stops its rate timer.
//!
//! The reaction point paces packets (`next_send`): a packet of s flits that starts at t
//! lets the next start at t + s/R_C, R_C as it stands when asked (a cut slows the very next
//! packet), the fraction of a cycle carried to the next so the mean rate is R_C. Timers run
//! lazily: a flow's expiries up to `now` are applied in order whenever its state is read (at
//! each packet and each CNP), which is exact because the rate only matters when a packet
//! asks and byte-counter events happen only as packets start.
//!
//! Defaults, in physical units, from the paper (§5, "parameters"), as confirmed against
//! htsim's DCQCN model (`dcqcn.cpp`: CNP interval 50 µs, update period 55 µs, g = 1/256,
//! B = 10 MB, F = 5): N 50 µs, K 55 µs, T 55 µs, g 1/256, B 10 MB, F 5, R_AI 40 Mb/s
//! (the paper's, not confirmed there: htsim uses the line rate / 20). R_HAI is ours: twice
//! R_AI, htsim's ratio (line / 10 against line / 20); so is the floor R_C >= `min_rate`
//! (40 Mb/s) that keeps a flow from stopping. At our 1.6 Gb/s links R_AI is 2.5% of the
//! line rate, against 0.1% at the paper's 40 Gb/s. Counters (the results' `flows` columns):
//! CNPs sent per flow, CNPs received, cycles a ready packet waited for its pacing.

use super::interface::{CcCounters, CongestionControl, HeldBack};
use super::{positive_cycles, MAX_CONTROL_DELAY};
use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::units::{Bandwidth, ByteSize, Clock, Cycle, Duration};

/// The notification point's CNP interval N (§3.2), seconds.
pub(crate) const CNP_INTERVAL: f64 = 50e-6;
/// The α update period K (§3.3), seconds.
pub(crate) const ALPHA_TIMER: f64 = 55e-6;
/// α's gain g (§3.3).
pub(crate) const G: f64 = 1.0 / 256.0;
/// The rate-increase timer T (§3.3), seconds.
pub(crate) const RATE_TIMER: f64 = 55e-6;
/// The byte counter B (§3.3), bytes.
pub(crate) const BYTE_COUNTER: u64 = 10_000_000;
/// Fast-recovery steps F (§3.3, QCN's).
pub(crate) const FAST_RECOVERY: u32 = 5;
/// Additive increase R_AI (§5), bits per second.
pub(crate) const RATE_AI: f64 = 40e6;
/// Hyper increase R_HAI (ours: twice R_AI, module comment), bits per second.
pub(crate) const RATE_HAI: f64 = 80e6;
/// The lowest rate a cut leaves (ours, module comment), bits per second.
pub(crate) const MIN_RATE: f64 = 40e6;
/// The longest packet the retry timer is sized for, flits (a held-back flow looks again at
/// least this often: a longer wait is timed in several steps).
const RETRY_PACKET: f64 = 64.0;

/// The reaction and notification points' parameters, in cycles, flits and flits per cycle
/// (the line rate is 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Params {
    pub cnp_interval: Cycle,
    pub alpha_timer: Cycle,
    pub g: f64,
    pub rate_timer: Cycle,
    pub byte_counter: f64,
    pub fast_recovery: u32,
    pub rate_ai: f64,
    pub rate_hai: f64,
    pub min_rate: f64,
    /// Marks within N of the last CNP answered by one CNP at N's end (the paper's), or
    /// dropped.
    pub defer_cnp: bool,
}

/// One flow's reaction point.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Rp {
    /// Current and target rate (R_C, R_T), flits per cycle; α.
    rc: f64,
    rt: f64,
    alpha: f64,
    /// The next α-timer and rate-timer expiries (`Cycle::MAX`: not running).
    alpha_next: Cycle,
    rate_next: Cycle,
    /// Increase events since the last CNP: timer expiries (T) and byte-counter ones (BC).
    t: u32,
    bc: u32,
    /// Flits sent since the byte counter last expired.
    bytes: f64,
    /// When the last packet started (with the fraction carried), and its flits.
    last_start: f64,
    last_flits: f64,
    /// A ready packet held back by the pacing, and its retry.
    held: HeldBack,
}

impl Rp {
    const LINE: Rp = Rp {
        rc: 1.0,
        rt: 1.0,
        alpha: 1.0,
        alpha_next: Cycle::MAX,
        rate_next: Cycle::MAX,
        t: 0,
        bc: 0,
        bytes: 0.0,
        last_start: f64::NEG_INFINITY,
        last_flits: 0.0,
        held: HeldBack::NONE,
    };

    /// When the next packet is due: the last one's start plus its flits at R_C (fractional).
    #[inline]
    fn due(&self) -> f64 {
        self.last_start + self.last_flits / self.rc
    }
}

/// DCQCN for every flow of a run.
#[derive(Clone, Debug)]
pub(crate) struct Dcqcn {
    p: Params,
    rp: Vec<Rp>,
    /// Per flow, at its destination: when the last CNP was sent (`Cycle::MAX`: never).
    last_cnp: Vec<Cycle>,
    counters: Vec<CcCounters>,
    /// The longest retry the agent times, cycles.
    retry_cap: Cycle,
    /// Per flow, at its destination: a CNP deferred to the end of the interval is pending.
    deferred: Vec<bool>,
}

impl Dcqcn {
    /// Check `cfg` (`[endpoint] agent`, kind `dcqcn`) and build the agent.
    pub fn build(cfg: &AgentConfig, clock: &Clock) -> Result<Dcqcn, ConfigError> {
        let &AgentConfig::Dcqcn {
            cnp_interval,
            alpha_timer,
            g,
            rate_timer,
            byte_counter,
            fast_recovery,
            rate_ai,
            rate_hai,
            min_rate,
            defer_cnp,
        } = cfg
        else {
            unreachable!("Dcqcn::build is called with DCQCN's configuration")
        };
        let period = |name: &str, d: Option<Duration>, default: f64| {
            positive_cycles(&format!("endpoint.agent.{name}"), d.unwrap_or(Duration::Seconds(default)), clock)
        };
        let rate = |name: &str, b: Option<Bandwidth>, default: f64| {
            let r = clock.flits_per_cycle(b.unwrap_or(Bandwidth { bits_per_second: default }));
            if !(r > 0.0 && r <= 1.0) {
                return Err(ConfigError::new(
                    format!("endpoint.agent.{name}"),
                    format!(
                        "must be a rate above 0 and at most the link rate ({} b/s), got {} b/s",
                        clock.link_bits_per_second,
                        clock.bits_per_second(r)
                    ),
                ));
            }
            Ok(r)
        };
        let g = g.unwrap_or(G);
        if !(g > 0.0 && g <= 1.0) {
            return Err(ConfigError::new("endpoint.agent.g", format!("must be in (0, 1], got {g}")));
        }
        let fast_recovery = fast_recovery.unwrap_or(FAST_RECOVERY);
        let bytes = byte_counter.unwrap_or(ByteSize(BYTE_COUNTER)).0;
        if bytes == 0 || bytes == ByteSize::UNLIMITED.0 {
            return Err(ConfigError::new(
                "endpoint.agent.byte_counter",
                format!("must be a positive size like \"10 MB\", got {bytes} bytes"),
            ));
        }
        let p = Params {
            cnp_interval: period("cnp_interval", cnp_interval, CNP_INTERVAL)?,
            alpha_timer: period("alpha_timer", alpha_timer, ALPHA_TIMER)?,
            g,
            rate_timer: period("rate_timer", rate_timer, RATE_TIMER)?,
            byte_counter: clock.bytes_to_flits(bytes as f64),
            fast_recovery,
            rate_ai: rate("rate_ai", rate_ai, RATE_AI)?,
            rate_hai: rate("rate_hai", rate_hai, RATE_HAI)?,
            min_rate: rate("min_rate", min_rate, MIN_RATE)?,
            defer_cnp: defer_cnp.unwrap_or(true),
        };
        if p.defer_cnp && p.cnp_interval > MAX_CONTROL_DELAY {
            // (the deferred CNP is a timer on the control channel)
            return Err(ConfigError::new(
                "endpoint.agent.cnp_interval",
                format!(
                    "at most {MAX_CONTROL_DELAY} cycles with defer_cnp (the default), got {}",
                    p.cnp_interval
                ),
            ));
        }
        Ok(Dcqcn::new(p))
    }

    pub fn new(p: Params) -> Dcqcn {
        let retry_cap = ((RETRY_PACKET / p.min_rate).ceil() as Cycle).clamp(1, MAX_CONTROL_DELAY);
        Dcqcn {
            p,
            rp: Vec::new(),
            last_cnp: Vec::new(),
            counters: Vec::new(),
            retry_cap,
            deferred: Vec::new(),
        }
    }

    /// Apply flow `flow`'s timer expiries up to `now`, in order (module comment).
    fn catch_up(&mut self, flow: u32, now: Cycle) {
        let p = self.p;
        let f = &mut self.rp[flow as usize];
        while f.alpha_next <= now {
            f.alpha *= 1.0 - p.g;
            f.alpha_next += p.alpha_timer;
        }
        while f.rate_next <= now {
            f.t += 1;
            increase(&p, f);
            f.rate_next = if f.rc >= 1.0 { Cycle::MAX } else { f.rate_next + p.rate_timer };
        }
    }

    /// Flow `flow`'s current rate at `now`, flits per cycle (tests).
    #[cfg(test)]
    fn rate(&mut self, flow: u32, now: Cycle) -> (f64, f64, f64) {
        self.catch_up(flow, now);
        let f = &self.rp[flow as usize];
        (f.rc, f.rt, f.alpha)
    }
}

/// One increase event (timer or byte counter) of reaction point `f` (module comment; QCN's
/// machine as DCQCN keeps it, §3.3).
fn increase(p: &Params, f: &mut Rp) {
    if f.rc >= 1.0 {
        return;
    }
    let (most, least) = (f.t.max(f.bc), f.t.min(f.bc));
    if most <= p.fast_recovery {
        // fast recovery: R_T stays, R_C halves the distance to it
    } else if least > p.fast_recovery {
        f.rt += (least - p.fast_recovery) as f64 * p.rate_hai;
    } else {
        f.rt += p.rate_ai;
    }
    f.rc = ((f.rt + f.rc) / 2.0).min(1.0);
}

impl CongestionControl for Dcqcn {
    fn size_flows(&mut self, flows: usize) {
        self.rp = vec![Rp::LINE; flows];
        self.last_cnp = vec![Cycle::MAX; flows];
        self.deferred = vec![false; flows];
        self.counters = vec![CcCounters::default(); flows];
    }

    fn control_delay(&self) -> Cycle {
        if self.p.defer_cnp {
            self.retry_cap.max(self.p.cnp_interval)
        } else {
            self.retry_cap
        }
    }

    fn reacts_to_marks(&self) -> bool {
        true
    }

    fn paces(&self) -> bool {
        true
    }

    #[inline]
    fn next_send(&mut self, flow: u32, now: Cycle) -> Cycle {
        self.catch_up(flow, now);
        let at = self.rp[flow as usize].due();
        if at <= 0.0 {
            0
        } else {
            at.ceil() as Cycle
        }
    }

    fn packet_sent(&mut self, flow: u32, flits: u32, now: Cycle) {
        self.catch_up(flow, now);
        let p = self.p;
        let f = &mut self.rp[flow as usize];
        // Back to back, the start keeps the fraction of a cycle the pacing left; after a
        // pause it is now.
        let ideal = f.due();
        f.last_start = if (now as f64) - ideal < 1.0 { ideal } else { now as f64 };
        f.last_flits = flits as f64;
        self.counters[flow as usize].throttled_cycles += f.held.release(now);
        if f.rate_next == Cycle::MAX && f.alpha_next == Cycle::MAX {
            return; // no CNP yet: the byte counter is not running
        }
        f.bytes += flits as f64;
        while f.bytes >= p.byte_counter {
            f.bytes -= p.byte_counter;
            f.bc += 1;
            increase(&p, f);
        }
    }

    /// The notification point: at most one CNP per flow every N (§3.1).
    fn on_mark(&mut self, flow: u32, now: Cycle) -> bool {
        let last = &mut self.last_cnp[flow as usize];
        if *last != Cycle::MAX && now - *last < self.p.cnp_interval {
            return false;
        }
        *last = now;
        self.deferred[flow as usize] = false;
        self.counters[flow as usize].cnps_sent += 1;
        true
    }

    /// ... and for the marks within N, one CNP at its end (the paper: "at most one CNP
    /// every N µs for the flow, if any packet that arrives within that time window was
    /// marked"), timed once per interval.
    fn defer_notification(&mut self, flow: u32, _now: Cycle) -> Option<Cycle> {
        let f = flow as usize;
        if !self.p.defer_cnp || self.deferred[f] || self.last_cnp[f] == Cycle::MAX {
            return None;
        }
        self.deferred[f] = true;
        Some(self.last_cnp[f] + self.p.cnp_interval)
    }

    /// The reaction point's cut (§3.3).
    fn on_notification(&mut self, flow: u32, now: Cycle) {
        self.catch_up(flow, now);
        let p = self.p;
        let f = &mut self.rp[flow as usize];
        f.rt = f.rc;
        f.rc = (f.rc * (1.0 - f.alpha / 2.0)).max(p.min_rate);
        f.alpha = (1.0 - p.g) * f.alpha + p.g;
        (f.t, f.bc, f.bytes) = (0, 0, 0.0);
        f.alpha_next = now + p.alpha_timer;
        f.rate_next = now + p.rate_timer;
        self.counters[flow as usize].becns += 1;
    }

    /// A paced packet waits: a retry when its next send comes (at most `retry_cap` ahead),
    /// unless one firing no later is pending.
    fn held_back(&mut self, _: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        let ready = self.next_send(flow, now).min(now + self.retry_cap);
        self.rp[flow as usize].held.hold(now, ready)
    }

    fn counters(&self) -> Option<&[CcCounters]> {
        Some(&self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// g = 1/4 and F = 2 so a few events show every phase; R_AI 1/64, R_HAI 1/16 of the line;
    /// timers of 100 cycles; a byte counter of 1000 flits.
    fn params() -> Params {
        Params {
            cnp_interval: 50,
            alpha_timer: 100,
            g: 0.25,
            rate_timer: 100,
            byte_counter: 1000.0,
            fast_recovery: 2,
            rate_ai: 1.0 / 64.0,
            rate_hai: 1.0 / 16.0,
            min_rate: 1.0 / 1024.0,
            defer_cnp: true,
        }
    }

    fn agent() -> Dcqcn {
        let mut a = Dcqcn::new(params());
        a.size_flows(2);
        a
    }

    #[test]
    fn a_cnp_cuts_the_rate_by_half_alpha_and_moves_alpha_toward_one() {
        let mut a = agent();
        assert_eq!(a.rate(0, 0), (1.0, 1.0, 1.0), "line rate, α = 1 before any CNP");
        a.on_notification(0, 10);
        // R_T = 1, R_C = 1 (1 - 1/2) = 0.5, α = 0.75 + 0.25 = 1.
        assert_eq!(a.rate(0, 10), (0.5, 1.0, 1.0));
        a.on_notification(0, 20);
        // R_T = 0.5, R_C = 0.25, α stays 1.
        assert_eq!(a.rate(0, 20), (0.25, 0.5, 1.0));
        assert_eq!(a.rate(1, 20), (1.0, 1.0, 1.0), "per flow");
        assert_eq!(a.counters[0].becns, 2);
    }

    #[test]
    fn alpha_decays_every_k_without_a_cnp_and_sets_the_next_cut() {
        let mut a = agent();
        a.on_notification(0, 0); // α = 1, R_C = 0.5; timers at 100, 200, ...
        assert_eq!(a.rate(0, 99).2, 1.0, "no decay before K");
        assert_eq!(a.rate(0, 100).2, 0.75, "α (1 - g) at K");
        assert_eq!(a.rate(0, 250).2, 0.5625, "and at 2K");
        // The cut at 250 uses α = 0.5625: R_C × (1 - 0.28125); then α = 0.5625 × 0.75 + 0.25.
        let (rc, _, _) = a.rate(0, 250);
        a.on_notification(0, 250);
        let (rc2, rt2, alpha2) = a.rate(0, 250);
        assert_eq!((rt2, alpha2), (rc, 0.671875));
        assert_eq!(rc2, rc * (1.0 - 0.28125));
        // A CNP restarts the α timer: the next decay is at 350, not 300.
        assert_eq!(a.rate(0, 349).2, 0.671875);
        assert_eq!(a.rate(0, 350).2, 0.671875 * 0.75);
    }

    #[test]
    fn the_timer_steps_fast_recovery_then_additive_increase() {
        let mut a = agent();
        a.on_notification(0, 0); // R_T = 1, R_C = 0.5
                                 // T = 1, 2 (<= F): fast recovery, R_C = (R_T + R_C) / 2.
        assert_eq!(a.rate(0, 100).0, 0.75);
        assert_eq!(a.rate(0, 200).0, 0.875);
        // Cut again: R_T = 0.875, R_C = 0.875 (1 - α/2), α = 0.5625 × 0.75 + 0.25 (two
        // decays first: 1 → 0.75 → 0.5625).
        a.on_notification(0, 200);
        let alpha = 0.5625;
        let rc0 = 0.875 * (1.0 - alpha / 2.0);
        assert_eq!(a.rate(0, 200), (rc0, 0.875, alpha * 0.75 + 0.25));
        let fr1 = (0.875 + rc0) / 2.0;
        let fr2 = (0.875 + fr1) / 2.0;
        assert_eq!(a.rate(0, 300).0, fr1, "fast recovery 1");
        assert_eq!(a.rate(0, 400).0, fr2, "fast recovery 2 (F = 2)");
        // T = 3 > F, BC = 0: additive increase, R_T += R_AI, then the halving.
        let rt = 0.875 + 1.0 / 64.0;
        let (rc, rt_now, _) = a.rate(0, 500);
        assert_eq!((rc, rt_now), ((rt + fr2) / 2.0, rt));
        // Never hyper with the byte counter idle: T = 4 adds R_AI again.
        let (_, rt4, _) = a.rate(0, 600);
        assert_eq!(rt4, rt + 1.0 / 64.0);
    }

    #[test]
    fn the_byte_counter_with_the_timer_reaches_hyper_increase() {
        let mut a = agent();
        a.on_notification(0, 0);
        a.on_notification(0, 0); // R_T = 0.5, R_C = 0.25, α = 1
                                 // 3000 flits sent at cycle 1: the byte counter expires three times (BC = 1, 2, 3)
                                 // with T = 0: max(T, BC) = 1, 2 fast recovery; BC = 3 additive.
        a.packet_sent(0, 3000, 1);
        let fr = (0.5 + (0.5 + 0.25) / 2.0) / 2.0; // two fast-recovery halvings: 0.4375
        let rt = 0.5 + 1.0 / 64.0;
        let (rc, rt_now, _) = a.rate(0, 1);
        assert_eq!((rc, rt_now), ((rt + fr) / 2.0, rt));
        assert_eq!(a.rp[0].bc, 3);
        // Timer expiries at 100, 200: T = 1, 2, min(T, BC) <= F: additive; at 300 T = 3:
        // both exceed F = 2, hyper increase by (3 - 2) R_HAI.
        let (_, rt200, _) = a.rate(0, 200);
        assert_eq!(rt200, rt + 2.0 / 64.0);
        let (_, rt300, _) = a.rate(0, 300);
        assert_eq!(rt300, rt200 + 1.0 / 16.0, "hyper increase");
        // Four more byte-counter expiries (BC = 7) with T = 3: min = 3, i = 1 each time.
        a.packet_sent(0, 4000, 301);
        assert_eq!(a.rp[0].bc, 7);
        assert_eq!(a.rp[0].rt, rt300 + 4.0 / 16.0);
    }

    #[test]
    fn the_rate_stops_at_the_line_rate_and_the_timer_with_it() {
        let mut a = agent();
        a.on_notification(0, 0);
        let (rc, _, _) = a.rate(0, 100_000);
        assert_eq!(rc, 1.0);
        assert_eq!(a.rp[0].rate_next, Cycle::MAX, "the rate timer stopped");
        assert!(a.rp[0].t < 40, "stopped soon after reaching the line rate, T = {}", a.rp[0].t);
    }

    #[test]
    fn the_notification_point_sends_at_most_one_cnp_per_interval() {
        let mut a = agent();
        assert!(a.on_mark(0, 10));
        assert!(!a.on_mark(0, 59), "within N = 50 of the last");
        assert!(a.on_mark(1, 59), "per flow");
        assert!(a.on_mark(0, 60));
        assert!(!a.on_mark(0, 61));
        assert_eq!((a.counters[0].cnps_sent, a.counters[1].cnps_sent), (2, 1));
    }

    #[test]
    fn marks_within_the_interval_get_one_cnp_at_its_end() {
        // N = 50: a CNP at 10; marks at 20 and 30 are left unanswered, the first asks for
        // the destination's timer at 60 (10 + N), the second for none (one is pending);
        // at 60 the mark is answered (the CNP that goes then), which starts the next
        // interval; a mark at 70 asks for 110.
        let mut a = agent();
        assert!(a.on_mark(0, 10));
        assert!(!a.on_mark(0, 20));
        assert_eq!(a.defer_notification(0, 20), Some(60));
        assert!(!a.on_mark(0, 30));
        assert_eq!(a.defer_notification(0, 30), None, "one deferred CNP an interval");
        assert!(a.on_mark(0, 60), "the timer's CNP");
        assert!(!a.on_mark(0, 70));
        assert_eq!(a.defer_notification(0, 70), Some(110));
        assert_eq!(a.counters[0].cnps_sent, 2);
        // a flow that never had a CNP defers nothing (its first mark is answered at once)
        assert_eq!(a.defer_notification(1, 70), None);
        // without deferral (defer_cnp = false) marks within N are dropped, as before
        let mut b = Dcqcn::new(Params { defer_cnp: false, ..params() });
        b.size_flows(1);
        assert!(b.on_mark(0, 10) && !b.on_mark(0, 20));
        assert_eq!(b.defer_notification(0, 20), None);
    }

    #[test]
    fn packets_are_paced_at_the_current_rate() {
        let mut a = agent();
        assert_eq!(a.next_send(0, 0), 0, "nothing sent yet");
        a.packet_sent(0, 32, 0);
        assert_eq!(a.next_send(0, 1), 32, "line rate: one packet time");
        a.on_notification(0, 5); // R_C = 0.5
        assert_eq!(a.next_send(0, 5), 64, "the cut slows the very next packet");
        assert_eq!(a.held_back(0, 0, 5), Some(64));
        assert_eq!(a.held_back(0, 0, 6), None, "the pending retry serves");
        a.packet_sent(0, 32, 64);
        assert_eq!(a.counters[0].throttled_cycles, 59, "held from 5, sent at 64");
        // R_C = 0.75 after the timer's first step at 105: 32 / 0.75 = 42.67 cycles.
        assert_eq!(a.next_send(0, 105), 107);
        a.packet_sent(0, 32, 107);
        // Back to back: the start 106.67 is kept, so the next is at 149.33, cycle 150.
        assert_eq!(a.next_send(0, 107), 150);
        // After a pause the start is the cycle itself.
        a.packet_sent(0, 32, 1000);
        assert_eq!(a.rate(0, 1000).0, 1.0);
        assert_eq!(a.next_send(0, 1000), 1032);
    }

    #[test]
    fn the_parameters_default_to_the_papers_and_bad_ones_are_refused() {
        let clock = Clock { flit_bits: 128, link_bits_per_second: 1.6e9 };
        let cfg = |f: &dyn Fn(&mut AgentConfig)| {
            let mut c = AgentConfig::Dcqcn {
                cnp_interval: None,
                alpha_timer: None,
                g: None,
                rate_timer: None,
                byte_counter: None,
                fast_recovery: None,
                rate_ai: None,
                rate_hai: None,
                min_rate: None,
                defer_cnp: None,
            };
            f(&mut c);
            Dcqcn::build(&c, &clock)
        };
        let d = cfg(&|_| {}).unwrap();
        // 80 ns cycles: 50 µs = 625 cycles, 55 µs = 687.5 → 688; 10 MB = 625 000 flits;
        // 40 Mb/s = 1/40 of the link.
        assert_eq!((d.p.cnp_interval, d.p.alpha_timer, d.p.rate_timer), (625, 688, 688));
        assert_eq!((d.p.byte_counter, d.p.fast_recovery, d.p.g), (625_000.0, 5, 1.0 / 256.0));
        assert_eq!((d.p.rate_ai, d.p.rate_hai, d.p.min_rate), (0.025, 0.05, 0.025));
        let e = cfg(&|c| {
            if let AgentConfig::Dcqcn { g, .. } = c {
                *g = Some(0.0);
            }
        })
        .unwrap_err();
        assert!(e.to_string().contains("endpoint.agent.g"), "{e}");
        let e = cfg(&|c| {
            if let AgentConfig::Dcqcn { rate_ai, .. } = c {
                *rate_ai = Some(Bandwidth { bits_per_second: 2e9 });
            }
        })
        .unwrap_err();
        assert!(
            e.to_string().contains("endpoint.agent.rate_ai") && e.to_string().contains("link rate"),
            "{e}"
        );
    }

    /// A hot spot on a 4x4 mesh under RED and DCQCN, run in steps: the invariants hold,
    /// the destinations send at most one CNP per flow per N, every CNP reaches its source
    /// or is on its way, and the sources were held back by their pacing.
    #[test]
    fn a_hot_spot_under_red_and_dcqcn_keeps_its_invariants_and_its_cnp_interval() {
        let toml = "[simulation]\nwarmup = 200\nmeasure = 6000\n\
             [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n\
             [router]\nvcs = 3\ninput_buffer = 8\noutput_buffer = 8\n\
             marking = { kind = \"red\", kmin = \"32 B\", kmax = \"192 B\", pmax = 0.5 }\n\
             [endpoint]\nagent = { kind = \"dcqcn\", cnp_interval = \"2 us\", rate_timer = \"4 us\" }\n\
             [[traffic]]\nload = 0.6\nmessage_flits = 8\npacket_flits = 8\n\
             pattern = { kind = \"hot_spot\", fraction = 0.5, nodes = [5] }\n";
        let mut sim = crate::Simulation::from_toml(toml, None).unwrap();
        let cycles = 40 * 150;
        for _ in 0..40 {
            sim.advance(150).unwrap();
            sim.check_invariants().unwrap();
        }
        let c = sim.endpoints.agents.cc_counters().unwrap().to_vec();
        // N = 2 us = 25 cycles of 80 ns.
        let bound = cycles / 25 + 1;
        assert!(c.iter().all(|f| f.cnps_sent <= bound), "{c:?}");
        assert!(c.iter().all(|f| f.becns <= f.cnps_sent));
        let (sent, received, held): (u64, u64, u64) =
            c.iter().fold((0, 0, 0), |a, f| (a.0 + f.cnps_sent, a.1 + f.becns, a.2 + f.throttled_cycles));
        assert!(sent > 10 && received > 10 && held > 0, "sent {sent}, received {received}, held {held}");
    }

    #[test]
    fn dcqcn_without_a_marking_switch_is_refused() {
        let e = crate::Simulation::from_toml(
            "[topology]\nkind = \"mesh\"\nk = 2\nn = 2\n[endpoint]\nagent = { kind = \"dcqcn\" }\n\
             [[traffic]]\nload = 0.1\n",
            None,
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(e.contains("endpoint.agent") && e.contains("no switch marks") && e.contains("red"), "{e}");
    }
}

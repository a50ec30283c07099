//! A Markov-modulated Bernoulli source: BookSim2's `injection_process = on_off`, the bursty
//! injection of network-on-chip studies. Each source is ON or OFF. At every cycle it first
//! moves: ON → OFF with probability β = 1 / (mean ON length in cycles), OFF → ON with
//! probability α = 1 / (mean OFF length); then, if ON, it creates a message with
//! probability r₁. ON and OFF periods are geometric with those means, the long-run share of
//! ON cycles is α / (α + β), and r₁ = rate · (α + β) / α gives the configured mean rate.
//!
//! Unlike document 000's ON/OFF stream (`on_off.rs`: one destination, messages evenly
//! spaced while ON), each message picks its destination from the pattern, and arrivals
//! while ON are Bernoulli trials.
//!
//! The chain is not stepped cycle by cycle: from a known state the cycles to the next
//! event are geometric, so a source costs one or two draws per message, not per cycle.
//! A source starts (and restarts at a phase boundary, its rate changed) in the chain's
//! stationary state: ON with probability α / (α + β). BookSim2 starts each node ON or OFF
//! with probability 1/2; the difference fades within a few mean periods, well inside a
//! warm-up.

use super::geometric;
use crate::units::Cycle;
use rand::Rng;

/// The process's parameters: mean ON and OFF lengths in cycles (each at least one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MarkovParams {
    pub on: f64,
    pub off: f64,
}

impl MarkovParams {
    /// β: the probability a cycle ends an ON period.
    fn beta(&self) -> f64 {
        1.0 / self.on
    }
    /// α: the probability a cycle ends an OFF period.
    fn alpha(&self) -> f64 {
        1.0 / self.off
    }
    /// The long-run share of ON cycles, α / (α + β).
    pub fn on_share(&self) -> f64 {
        self.on / (self.on + self.off)
    }
    /// r₁: the probability of a message in an ON cycle for a mean of `mean` messages per
    /// cycle (above 1: the mean cannot be reached).
    pub fn rate_on(&self, mean: f64) -> f64 {
        mean / self.on_share()
    }
}

/// One source's chain.
#[derive(Clone, Copy, Debug, Default)]
pub struct MarkovOnOff {
    alpha: f64,
    beta: f64,
    r1: f64,
    /// Its state at the last cycle settled.
    on: bool,
}

impl MarkovOnOff {
    /// A chain for a mean of `mean` messages per cycle, in its stationary state.
    pub fn new(p: MarkovParams, mean: f64, rng: &mut impl Rng) -> Self {
        let on = rng.gen::<f64>() < p.on_share();
        Self { alpha: p.alpha(), beta: p.beta(), r1: p.rate_on(mean).min(1.0), on }
    }

    /// The first cycle after `last` (whose state is settled) with a message; the chain is
    /// then at that cycle, ON.
    pub fn next_after(&mut self, last: Cycle, rng: &mut impl Rng) -> Cycle {
        self.after(last as i128, rng)
    }

    /// The first cycle from `now` on with a message, the chain's state drawn (`new`) for
    /// the cycle before.
    pub fn first_from(&mut self, now: Cycle, rng: &mut impl Rng) -> Cycle {
        self.after(now as i128 - 1, rng)
    }

    fn after(&mut self, last: i128, rng: &mut impl Rng) -> Cycle {
        // (signed and wide: the cycle before cycle 0 is -1, and geometric gaps of rare
        // events are capped at Cycle::MAX / 2)
        let mut t = last;
        loop {
            if self.on {
                // Each cycle: leave (β), or stay and create ((1 - β) r₁), or neither; the
                // cycles to the first of the two are geometric in their sum.
                let create = (1.0 - self.beta) * self.r1;
                let p = self.beta + create;
                t += geometric(rng, p) as i128;
                if rng.gen::<f64>() * p < create {
                    return t.min(Cycle::MAX as i128) as Cycle;
                }
                self.on = false;
            } else {
                // OFF until a cycle turns it ON, which may create at once.
                t += geometric(rng, self.alpha) as i128;
                self.on = true;
                if rng.gen::<f64>() < self.r1 {
                    return t.min(Cycle::MAX as i128) as Cycle;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    #[test]
    fn worked_parameters() {
        // BookSim2's burst_alpha = 0.25, burst_beta = 0.5 at 0.2 packets a cycle: ON a third
        // of the time, so r1 = 0.2 * (0.25 + 0.5) / 0.25 = 0.6.
        let p = MarkovParams { on: 2.0, off: 4.0 };
        assert!((p.on_share() - 1.0 / 3.0).abs() < 1e-12);
        assert!((p.rate_on(0.2) - 0.6).abs() < 1e-12);
    }

    #[test]
    fn alternates_when_every_period_is_one_cycle() {
        // ON and OFF one cycle each (α = β = 1): the state flips every cycle, and a mean of
        // 1/2 a cycle needs r1 = 1, a message in every ON cycle. From OFF at cycle 0:
        // messages at cycles 1, 3, 5, ...
        let p = MarkovParams { on: 1.0, off: 1.0 };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut c = MarkovOnOff::new(p, 0.5, &mut rng);
        c.on = false;
        let mut t = 0;
        for k in 1..=10 {
            t = c.next_after(t, &mut rng);
            assert_eq!(t, 2 * k - 1, "every other cycle");
        }
    }

    #[test]
    fn mean_rate_and_burst_lengths_come_out() {
        // Mean ON 8 cycles, OFF 24: ON a quarter of the time; 0.1 messages a cycle means
        // r1 = 0.4 while ON. Over a million cycles the rate is within 2%, and messages come
        // in bursts: the gaps' squared coefficient of variation is well above a Bernoulli
        // source's (1 - 0.1 = 0.9).
        let p = MarkovParams { on: 8.0, off: 24.0 };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut c = MarkovOnOff::new(p, 0.1, &mut rng);
        let (mut t, mut n, mut gaps) = (0u64, 0u64, Vec::new());
        while t < 1_000_000 {
            let next = c.next_after(t, &mut rng);
            gaps.push((next - t) as f64);
            t = next;
            n += 1;
        }
        let rate = n as f64 / t as f64;
        assert!((rate - 0.1).abs() < 0.002, "rate {rate}");
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64;
        let scv = var / (mean * mean);
        assert!(scv > 2.0, "squared coefficient of variation {scv}");
    }

    #[test]
    fn stepped_cycle_by_cycle_the_same_law() {
        // The geometric skips against BookSim2's own per-cycle stepping (move, then a
        // trial): the fraction of cycles with a message and of consecutive pairs agree.
        let p = MarkovParams { on: 5.0, off: 3.0 };
        let (alpha, beta, r1) = (1.0 / 3.0, 1.0 / 5.0, p.rate_on(0.3));
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let cycles = 2_000_000u64;
        let (mut on, mut hits, mut pairs, mut prev) = (false, 0u64, 0u64, false);
        for _ in 0..cycles {
            on = if on { rng.gen::<f64>() >= beta } else { rng.gen::<f64>() < alpha };
            let hit = on && rng.gen::<f64>() < r1;
            hits += hit as u64;
            pairs += (hit && prev) as u64;
            prev = hit;
        }
        let mut c = MarkovOnOff::new(p, 0.3, &mut rng);
        let (mut t, mut n, mut n_pairs) = (0u64, 0u64, 0u64);
        while t < cycles {
            let next = c.next_after(t, &mut rng);
            n_pairs += (next == t + 1 && n > 0) as u64;
            t = next;
            n += 1;
        }
        let (a, b) = (hits as f64 / cycles as f64, n as f64 / t as f64);
        assert!((a - b).abs() < 0.005, "rate stepped {a}, skipped {b}");
        let (a, b) = (pairs as f64 / cycles as f64, n_pairs as f64 / t as f64);
        assert!((a - b).abs() < 0.005, "back-to-back stepped {a}, skipped {b}");
    }
}

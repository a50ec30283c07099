//! ON/OFF real-time source (document 000 §5.2): a stream between one source and one
//! destination; during an ON period messages are generated at rate λ, "evenly scattered"
//! (exactly 1/λ apart, to avoid bursts); during an OFF period none. ON and OFF lengths are
//! exponential with the configured means, or fixed (our choice; the document gives no
//! distribution). λ is set so the long-run mean rate is the configured load:
//! λ = rate · (on + off) / on.

use rand::Rng;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OnOffParams {
    /// Messages per cycle while ON (filled in from the mean rate by `rate_on`).
    pub rate: f64,
    /// Mean ON and OFF lengths, cycles.
    pub on: f64,
    pub off: f64,
    pub exponential: bool,
}

impl OnOffParams {
    /// The ON rate that gives a long-run mean rate of `mean` messages per cycle.
    pub fn rate_on(&self, mean: f64) -> f64 {
        mean * (self.on + self.off) / self.on
    }
}

/// The state of one ON/OFF stream.
#[derive(Clone, Copy, Debug, Default)]
pub struct OnOff {
    p: OnOffParams,
    /// End of the current ON period.
    on_end: f64,
    /// Time of the next arrival inside it.
    next: f64,
}

impl OnOff {
    /// Begin with an ON period at `now`.
    pub fn new(p: OnOffParams, now: f64, rng: &mut impl Rng) -> Self {
        let on = Self::length(p.on, p.exponential, rng);
        Self { p, on_end: now + on, next: now }
    }

    fn length(mean: f64, exponential: bool, rng: &mut impl Rng) -> f64 {
        if exponential {
            -(1.0 - rng.gen::<f64>()).ln() * mean
        } else {
            mean
        }
    }

    /// The time of the next message (strictly increasing).
    pub fn next_arrival(&mut self, rng: &mut impl Rng) -> f64 {
        let gap = 1.0 / self.p.rate;
        while self.next >= self.on_end {
            // OFF, then a new ON period starting with a message.
            let off = Self::length(self.p.off, self.p.exponential, rng);
            let on = Self::length(self.p.on, self.p.exponential, rng);
            let start = self.on_end + off;
            self.on_end = start + on;
            self.next = start;
        }
        let t = self.next;
        self.next += gap;
        t
    }

    /// Long-run messages per cycle.
    pub fn mean_rate(&self) -> f64 {
        self.p.rate * self.p.on / (self.p.on + self.p.off)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn fixed_periods_worked_example() {
        // ON 10, OFF 20, 0.5 messages per cycle while ON: 0 2 4 6 8 | off | 30 32 ...
        let p = OnOffParams { rate: 0.5, on: 10.0, off: 20.0, exponential: false };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut s = OnOff::new(p, 0.0, &mut rng);
        let t: Vec<f64> = (0..8).map(|_| s.next_arrival(&mut rng)).collect();
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0, 30.0, 32.0, 34.0]);
        assert!((s.mean_rate() - 0.5 / 3.0).abs() < 1e-12);
        assert!((p.rate_on(0.5 / 3.0) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn exponential_periods_give_the_mean_rate() {
        let p = OnOffParams { rate: 0.2, on: 300.0, off: 700.0, exponential: true };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(9);
        let mut s = OnOff::new(p, 0.0, &mut rng);
        let mut n = 0u64;
        let mut last = -1.0;
        let mut t = 0.0;
        while t < 5e6 {
            t = s.next_arrival(&mut rng);
            assert!(t > last);
            last = t;
            n += 1;
        }
        assert!((n as f64 / 5e6 - 0.06).abs() < 0.0015, "{}", n as f64 / 5e6);
    }
}

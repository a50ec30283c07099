//! Traffic sources: when messages are created (temporal process) and where they go
//! (spatial [`pattern`]). One RNG stream per source, derived from the master seed.

pub mod application;
pub(crate) mod birth;
mod booksim_patterns;
mod calendar;
pub(crate) mod driver;
pub mod markov_on_off;
pub mod on_off;
pub mod pattern;
pub(crate) mod processors;
pub mod video;

use crate::config::TrafficClass;
use crate::units::Cycle;
use pattern::Pattern;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A resolved temporal process (durations in cycles).
#[derive(Clone, Debug, PartialEq)]
pub enum ProcessSpec {
    Poisson,
    Bernoulli,
    /// One message every `period` cycles.
    Periodic {
        period: f64,
    },
    /// ON/OFF stream (document 000 §5.2); the spec's rate is the mean rate.
    OnOff(on_off::OnOffParams),
    /// Markov-modulated Bernoulli (BookSim2's `on_off`); the spec's rate is the mean rate.
    MarkovOnOff(markov_on_off::MarkovParams),
    /// VBR video streams (document 003 §4.2): each source is one stream sending a frame
    /// every `period` cycles; `streams_by_phase[p]` streams per node are on in phase p.
    Video(std::sync::Arc<video::VideoSpec>),
}

/// What a `[[traffic]]` entry creates, shared by all its sources.
#[derive(Clone, Debug)]
pub struct TrafficSpec {
    pub class: TrafficClass,
    pub process: ProcessSpec,
    /// Messages per cycle per source in each phase of the mix (one entry without phases).
    pub rate_by_phase: Vec<f64>,
    pub message_flits: u32,
    pub packet_flits: u32,
    pub pattern: Pattern,
    /// VirtualClock Vtick of its messages, cycles per flit.
    pub vtick: u32,
    /// Bandwidth reserved per flow (flits per cycle), admitted by call admission.
    pub reserve: Option<f64>,
    /// Rate control's inter-dispatch time given directly, in periods T.
    pub idt: Option<f64>,
}

impl TrafficSpec {
    #[inline]
    pub fn rate(&self, phase: usize) -> f64 {
        self.rate_by_phase[phase.min(self.rate_by_phase.len() - 1)]
    }

    /// Events per cycle of source `stream` (its index among the node's sources of this
    /// spec) in `phase`: for video, its frame rate while it is on.
    pub fn source_rate(&self, stream: u32, phase: usize) -> f64 {
        match &self.process {
            ProcessSpec::Video(v) => {
                let on = v.streams_by_phase[phase.min(v.streams_by_phase.len() - 1)];
                if stream < on {
                    1.0 / v.period
                } else {
                    0.0
                }
            }
            _ => self.rate(phase),
        }
    }

    /// Sources per node this spec needs (video: the most streams any phase has).
    /// Messages a node creates per cycle in the busiest phase (every stream of a video
    /// source on: its mean rate in flits over the message length, rounded up per frame).
    pub fn messages_per_cycle_per_node(&self) -> f64 {
        match &self.process {
            ProcessSpec::Video(v) => {
                let flits: f64 =
                    v.flits_per_cycle.iter().sum::<f64>() / v.flits_per_cycle.len().max(1) as f64;
                let per_frame = (flits * v.period / self.message_flits.max(1) as f64).ceil();
                self.sources_per_node() as f64 * per_frame / v.period
            }
            _ => self.rate_by_phase.iter().copied().fold(0.0, f64::max),
        }
    }

    pub fn sources_per_node(&self) -> u32 {
        match &self.process {
            ProcessSpec::Video(v) => v.streams_by_phase.iter().copied().max().unwrap_or(0),
            _ => 1,
        }
    }
}

/// One node running one traffic spec.
#[derive(Clone, Debug)]
pub struct Source {
    pub node: u32,
    pub spec: u32,
    /// Continuous arrival time of the next message (Poisson, periodic); cycle for Bernoulli.
    next: f64,
    /// Bumped when the source is rescheduled (a phase changed its rate), so events already
    /// queued for it are recognised as stale.
    pub epoch: u32,
    pub rng: Xoshiro256PlusPlus,
    /// Its index among the node's sources of the spec (video streams).
    pub stream: u32,
    /// A stream's fixed destination (video, ON/OFF), `u32::MAX` for per-message choice.
    pub dst: u32,
    /// Vtick of its messages.
    pub vtick: u32,
    /// Video: trace and position in it, and frames sent.
    pub trace: u32,
    pub pos: u32,
    pub frames: u32,
    on_off: on_off::OnOff,
    markov: markov_on_off::MarkovOnOff,
}

pub use crate::seed::mix_seed;

impl Source {
    /// Source `stream` of `spec` at `node`; streams (video, ON/OFF) pick their
    /// destination, trace and starting frame here.
    pub fn new(node: u32, spec_id: u32, stream: u32, spec: &TrafficSpec, master_seed: u64) -> Self {
        let id = ((spec_id as u64) << 32) | ((stream as u64) << 20) | node as u64;
        let mut s = Self {
            node,
            spec: spec_id,
            next: 0.0,
            epoch: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(mix_seed(master_seed, id)),
            stream,
            dst: u32::MAX,
            vtick: spec.vtick,
            trace: 0,
            pos: 0,
            frames: 0,
            on_off: on_off::OnOff::default(),
            markov: markov_on_off::MarkovOnOff::default(),
        };
        match &spec.process {
            ProcessSpec::Video(v) => {
                s.trace = stream % v.traces.len() as u32;
                // a stream starts at a random point of its trace
                s.pos = s.rng.gen_range(0..v.traces[s.trace as usize].frame_bytes.len()) as u32;
                s.vtick = v.vticks[s.trace as usize];
                s.dst = spec.pattern.destination(node as usize, &mut s.rng).map_or(u32::MAX, |d| d as u32);
            }
            ProcessSpec::OnOff(_) => {
                s.dst = spec.pattern.destination(node as usize, &mut s.rng).map_or(u32::MAX, |d| d as u32);
            }
            _ => {}
        }
        s
    }

    /// (Re)start at cycle `now` with the rate of `phase`: draw the first arrival; `None` if
    /// the source is silent in that phase. Memoryless processes restart exactly; a
    /// periodic source restarts at a random offset within its period.
    pub fn start(&mut self, spec: &TrafficSpec, phase: usize, now: Cycle) -> Option<Cycle> {
        self.epoch = self.epoch.wrapping_add(1);
        let rate = spec.source_rate(self.stream, phase);
        if rate <= 0.0 {
            return None;
        }
        match &spec.process {
            ProcessSpec::Poisson => {
                self.next = now as f64;
                Some(self.advance(spec, phase, now))
            }
            // Trials start in cycle `now`.
            ProcessSpec::Bernoulli => Some(now + self.geometric(rate) - 1),
            ProcessSpec::Periodic { period } => {
                self.next = now as f64 + self.rng.gen::<f64>() * period;
                Some(self.next.floor() as Cycle)
            }
            // A stream starts at a random offset within one frame period.
            ProcessSpec::Video(v) => {
                self.next = now as f64 + self.rng.gen::<f64>() * v.period;
                Some(self.next.floor() as Cycle)
            }
            ProcessSpec::OnOff(p) => {
                let p = on_off::OnOffParams { rate: p.rate_on(rate), ..*p };
                self.on_off = on_off::OnOff::new(p, now as f64, &mut self.rng);
                self.next = self.on_off.next_arrival(&mut self.rng);
                Some(self.next.floor() as Cycle)
            }
            // Trials start in cycle `now`.
            ProcessSpec::MarkovOnOff(p) => {
                self.markov = markov_on_off::MarkovOnOff::new(*p, rate, &mut self.rng);
                Some(self.markov.first_from(now, &mut self.rng))
            }
        }
    }

    /// Draw the arrival after the one at `now`; returns its cycle.
    pub fn advance(&mut self, spec: &TrafficSpec, phase: usize, now: Cycle) -> Cycle {
        let rate = spec.rate(phase);
        match &spec.process {
            ProcessSpec::Poisson => {
                // Exponential gaps on a continuous clock; a message is created in the
                // cycle its arrival time falls into.
                let u: f64 = 1.0 - self.rng.gen::<f64>();
                self.next += -u.ln() / rate;
                (self.next.floor() as Cycle).max(now)
            }
            ProcessSpec::Bernoulli => now + self.geometric(rate),
            ProcessSpec::Periodic { period } => {
                self.next += period;
                (self.next.floor() as Cycle).max(now + 1)
            }
            ProcessSpec::Video(v) => {
                self.next += v.period;
                (self.next.floor() as Cycle).max(now + 1)
            }
            ProcessSpec::OnOff(_) => {
                self.next = self.on_off.next_arrival(&mut self.rng);
                (self.next.floor() as Cycle).max(now)
            }
            ProcessSpec::MarkovOnOff(_) => self.markov.next_after(now, &mut self.rng),
        }
    }

    /// The size in bytes of the next frame of a video stream (its trace wraps around).
    pub fn next_frame_bytes(&mut self, v: &video::VideoSpec) -> f64 {
        let t = &v.traces[self.trace as usize].frame_bytes;
        let b = t[self.pos as usize % t.len()];
        self.pos = (self.pos + 1) % t.len() as u32;
        self.frames += 1;
        b
    }

    /// Trials until the first success of a Bernoulli(p) trial per cycle, on {1, 2, ...}.
    fn geometric(&mut self, p: f64) -> Cycle {
        geometric(&mut self.rng, p)
    }
}

/// Trials until the first success of a Bernoulli(`p`) trial per cycle, on {1, 2, ...}.
pub(crate) fn geometric(rng: &mut impl Rng, p: f64) -> Cycle {
    if p >= 1.0 {
        return 1;
    }
    let u: f64 = 1.0 - rng.gen::<f64>();
    // ln(1 - p) via ln_1p: exact for tiny p, where 1.0 - p would round to 1.
    let gap = (u.ln() / (-p).ln_1p()).floor();
    if gap >= (Cycle::MAX / 2) as f64 {
        Cycle::MAX / 2
    } else {
        gap as Cycle + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(process: ProcessSpec, rate: f64) -> TrafficSpec {
        TrafficSpec {
            reserve: None,
            idt: None,
            class: TrafficClass::BestEffort,
            process,
            rate_by_phase: vec![rate],
            message_flits: 1,
            packet_flits: 1,
            pattern: Pattern::Uniform { nodes: 2, with_self: false },
            vtick: 1,
        }
    }

    #[test]
    fn mean_rate_matches() {
        for process in [ProcessSpec::Poisson, ProcessSpec::Bernoulli, ProcessSpec::Periodic { period: 20.0 }]
        {
            let s = spec(process.clone(), 0.05);
            let mut src = Source::new(0, 0, 0, &s, 7);
            let mut t = src.start(&s, 0, 0).unwrap();
            let mut n = 0u64;
            while t < 2_000_000 {
                n += 1;
                t = src.advance(&s, 0, t);
            }
            let rate = n as f64 / 2e6;
            assert!((rate - 0.05).abs() < 0.001, "{process:?}: {rate}");
        }
    }

    #[test]
    fn periodic_is_evenly_spaced_and_a_silent_phase_is_silent() {
        let mut s = spec(ProcessSpec::Periodic { period: 10.5 }, 1.0 / 10.5);
        let mut src = Source::new(0, 0, 0, &s, 3);
        let t0 = src.start(&s, 0, 100).unwrap();
        assert!((100..111).contains(&t0));
        let t1 = src.advance(&s, 0, t0);
        let t2 = src.advance(&s, 0, t1);
        assert!((t2 - t0) == 21, "{t0} {t1} {t2}");
        s.rate_by_phase = vec![0.1, 0.0];
        assert_eq!(src.start(&s, 1, 0), None);
        assert_eq!(src.start(&s, 7, 0), None); // phases past the last keep its rate
    }

    #[test]
    fn bernoulli_at_one_fires_every_cycle() {
        let s = spec(ProcessSpec::Bernoulli, 1.0);
        let mut src = Source::new(0, 0, 0, &s, 1);
        let t0 = src.start(&s, 0, 0).unwrap();
        assert_eq!(t0, 0);
        assert_eq!(src.advance(&s, 0, 0), 1);
        assert_eq!(src.advance(&s, 0, 1), 2);
    }

    #[test]
    fn bernoulli_at_a_tiny_rate_stays_silent() {
        // 1 - 1e-15 rounds to 1 in f64; the gap must still be astronomically long.
        let s = spec(ProcessSpec::Bernoulli, 1e-15);
        let mut src = Source::new(0, 0, 0, &s, 1);
        assert!(src.start(&s, 0, 0).unwrap() > 1_000_000_000);
    }
}

//! The real-time metrics of documents 003 §4.2 and 000 §5.2, exactly as defined there.
//!
//! A frame *arrives* when its last message is delivered. Its deadline is the previous
//! frame's deadline + P (P = 1/frame rate = 33.3 ms); but if the previous frame missed its
//! deadline, the deadline is the previous frame's arrival + P. The first frame's deadline is
//! its creation + P (our choice: the documents do not say), or with
//! `first_deadline = "arrival"` its own arrival (it cannot miss; the chain then follows the
//! jitter of delivery). A frame misses when it arrives
//! after its deadline, by `arrival − deadline`. Deadline missing probability DMP = missed /
//! delivered frames; deadline missing time DMT = mean lateness of missed frames;
//! inter-frame delivery time = arrival_k − arrival_(k−1), its mean and standard deviation
//! (document 003 Table 1). Frames are evaluated in frame order (the chain needs the
//! previous frame), so a frame whose messages finish before an earlier frame's waits.

use crate::config::video::FirstDeadline;
use std::collections::VecDeque;

/// Counts over a set of frames (a stream, a phase, a run). Times in cycles.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeadlineStats {
    pub frames: u64,
    pub missed: u64,
    pub miss_time_sum: f64,
    pub miss_time_max: f64,
    /// Inter-frame delivery times: count, mean and sum of squared deviations (Welford).
    pub gaps: u64,
    pub gap_mean: f64,
    pub gap_m2: f64,
}

impl DeadlineStats {
    pub fn dmp(&self) -> f64 {
        if self.frames == 0 {
            f64::NAN
        } else {
            self.missed as f64 / self.frames as f64
        }
    }
    /// Mean lateness of missed frames (NaN when none missed).
    pub fn dmt(&self) -> f64 {
        if self.missed == 0 {
            f64::NAN
        } else {
            self.miss_time_sum / self.missed as f64
        }
    }
    pub fn inter_frame_mean(&self) -> f64 {
        if self.gaps == 0 {
            f64::NAN
        } else {
            self.gap_mean
        }
    }
    /// Population standard deviation of the inter-frame delivery time.
    pub fn inter_frame_sd(&self) -> f64 {
        if self.gaps == 0 {
            f64::NAN
        } else {
            (self.gap_m2 / self.gaps as f64).sqrt()
        }
    }

    fn frame(&mut self, lateness: Option<f64>) {
        self.frames += 1;
        if let Some(l) = lateness {
            self.missed += 1;
            self.miss_time_sum += l;
            self.miss_time_max = self.miss_time_max.max(l);
        }
    }

    fn gap(&mut self, g: f64) {
        self.gaps += 1;
        let d = g - self.gap_mean;
        self.gap_mean += d / self.gaps as f64;
        self.gap_m2 += d * (g - self.gap_mean);
    }

    /// Add another set's counts (Chan et al.'s parallel Welford update).
    pub fn merge(&mut self, o: &DeadlineStats) {
        self.frames += o.frames;
        self.missed += o.missed;
        self.miss_time_sum += o.miss_time_sum;
        self.miss_time_max = self.miss_time_max.max(o.miss_time_max);
        let n = self.gaps + o.gaps;
        if n > 0 {
            let d = o.gap_mean - self.gap_mean;
            self.gap_m2 += o.gap_m2 + d * d * (self.gaps as f64 * o.gaps as f64) / n as f64;
            self.gap_mean += d * o.gaps as f64 / n as f64;
        }
        self.gaps = n;
    }
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    frame: u64,
    created: u64,
    messages_left: u32,
    arrival: u64,
    phase: u16,
    measured: bool,
}

/// The deadline chain of one stream.
#[derive(Clone, Debug)]
pub struct StreamDeadlines {
    period: f64,
    pending: VecDeque<Pending>,
    /// (deadline, arrival, missed) of the last evaluated frame.
    last: Option<(f64, u64, bool, bool)>,
    overall: DeadlineStats,
    per_phase: Vec<DeadlineStats>,
    first: FirstDeadline,
}

impl StreamDeadlines {
    pub fn new(period: f64, phases: usize) -> Self {
        Self {
            period,
            pending: VecDeque::new(),
            last: None,
            overall: DeadlineStats::default(),
            per_phase: vec![DeadlineStats::default(); phases.max(1)],
            first: FirstDeadline::Created,
        }
    }

    /// The chain starts as `first` says (`FirstDeadline`).
    pub fn starting(mut self, first: FirstDeadline) -> Self {
        self.first = first;
        self
    }

    /// Frame `frame` (numbered in creation order) was created at `created` as `messages`
    /// messages.
    pub fn expect_frame(&mut self, frame: u64, created: u64, messages: u32, phase: usize, measured: bool) {
        debug_assert!(self.pending.back().is_none_or(|p| p.frame < frame));
        self.pending.push_back(Pending {
            frame,
            created,
            messages_left: messages.max(1),
            arrival: 0,
            phase: phase as u16,
            measured,
        });
    }

    /// One message of `frame` was delivered at `at`.
    pub fn message_delivered(&mut self, frame: u64, at: u64) {
        let Some(front) = self.pending.front().map(|p| p.frame) else { return };
        let Some(p) = self.pending.get_mut(frame.wrapping_sub(front) as usize) else { return };
        debug_assert_eq!(p.frame, frame);
        p.messages_left -= 1;
        p.arrival = p.arrival.max(at);
        while let Some(p) = self.pending.front().copied() {
            if p.messages_left > 0 {
                break;
            }
            self.pending.pop_front();
            self.evaluate(p);
        }
    }

    fn evaluate(&mut self, p: Pending) {
        let deadline = match self.last {
            None => match self.first {
                FirstDeadline::Created => p.created as f64 + self.period,
                FirstDeadline::Arrival => p.arrival as f64,
            },
            Some((d, _, false, _)) => d + self.period,
            Some((_, arrival, true, _)) => arrival as f64 + self.period,
        };
        let late = p.arrival as f64 - deadline;
        let missed = late > 0.0;
        if p.measured {
            let lateness = missed.then_some(late);
            self.overall.frame(lateness);
            let ph = (p.phase as usize).min(self.per_phase.len() - 1);
            self.per_phase[ph].frame(lateness);
            if let Some((_, prev, _, true)) = self.last {
                let g = (p.arrival - prev) as f64;
                self.overall.gap(g);
                self.per_phase[ph].gap(g);
            }
        }
        self.last = Some((deadline, p.arrival, missed, p.measured));
    }

    pub fn overall(&self) -> &DeadlineStats {
        &self.overall
    }
    pub fn phase(&self, i: usize) -> &DeadlineStats {
        &self.per_phase[i]
    }
    pub fn phases(&self) -> usize {
        self.per_phase.len()
    }
    /// Frames created but not yet evaluated.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// P = 100; frames created at 0, 100, 200, 300, 400 arrive at 90, 230, 310, 420, 480:
    ///
    /// | frame | deadline                   | arrival | missed by |
    /// |-------|----------------------------|---------|-----------|
    /// | 0     | 0 + 100 = 100              | 90      | -         |
    /// | 1     | 100 + 100 = 200            | 230     | 30        |
    /// | 2     | 230 + 100 = 330 (after a miss: previous arrival) | 310 | - |
    /// | 3     | 330 + 100 = 430            | 420     | -         |
    /// | 4     | 430 + 100 = 530            | 480     | -         |
    ///
    /// DMP = 1/5, DMT = 30; inter-frame times 140, 80, 110, 60: mean 97.5, SD
    /// sqrt((42.5² + 17.5² + 12.5² + 37.5²) / 4) = sqrt(918.75) = 30.31.
    #[test]
    fn the_chain_can_start_at_the_first_arrival() {
        // The arrivals above with `first_deadline = "arrival"`:
        // | frame | deadline                         | arrival | missed by |
        // | 0     | its own arrival, 90              | 90      | -         |
        // | 1     | 90 + 100 = 190                   | 230     | 40        |
        // | 2     | 230 + 100 = 330 (after a miss)   | 310     | -         |
        // | 3     | 430                              | 420     | -         |
        // | 4     | 530                              | 480     | -         |
        let mut s = StreamDeadlines::new(100.0, 1).starting(FirstDeadline::Arrival);
        for (k, arrival) in [90u64, 230, 310, 420, 480].into_iter().enumerate() {
            s.expect_frame(k as u64, 100 * k as u64, 1, 0, true);
            s.message_delivered(k as u64, arrival);
        }
        assert_eq!((s.overall().frames, s.overall().missed, s.overall().dmt()), (5, 1, 40.0));
        // a frame quicker than the first sets nothing back: 50, 140 (deadline 150), 260
        // (deadline 250: 10 late), 350 (deadline 360)
        let mut s = StreamDeadlines::new(100.0, 1).starting(FirstDeadline::Arrival);
        for (k, arrival) in [50u64, 140, 260, 350].into_iter().enumerate() {
            s.expect_frame(k as u64, 100 * k as u64, 1, 0, true);
            s.message_delivered(k as u64, arrival);
        }
        assert_eq!((s.overall().missed, s.overall().miss_time_sum), (1, 10.0));
    }

    #[test]
    fn hand_worked_arrivals() {
        let mut s = StreamDeadlines::new(100.0, 1);
        for (k, arrival) in [90u64, 230, 310, 420, 480].into_iter().enumerate() {
            s.expect_frame(k as u64, 100 * k as u64, 1, 0, true);
            s.message_delivered(k as u64, arrival);
        }
        let o = s.overall();
        assert_eq!((o.frames, o.missed), (5, 1));
        assert_eq!(o.dmp(), 0.2);
        assert_eq!(o.dmt(), 30.0);
        assert_eq!(o.inter_frame_mean(), 97.5);
        assert!((o.inter_frame_sd() - 918.75f64.sqrt()).abs() < 1e-9);
        // a second miss chains from its own arrival: frame 5 created 500, deadline 630
        s.expect_frame(5, 500, 2, 0, true);
        s.message_delivered(5, 600);
        assert_eq!(s.pending(), 1);
        s.message_delivered(5, 640); // arrives with its last message: 10 late
        assert_eq!((s.overall().missed, s.overall().miss_time_sum), (2, 40.0));
    }

    #[test]
    fn out_of_order_completion_is_evaluated_in_frame_order() {
        let mut a = StreamDeadlines::new(100.0, 2);
        let mut b = StreamDeadlines::new(100.0, 2);
        for k in 0..4u64 {
            a.expect_frame(k, 100 * k, 2, (k / 2) as usize, true);
            b.expect_frame(k, 100 * k, 2, (k / 2) as usize, true);
        }
        let msgs = [(0, 50), (0, 60), (1, 250), (1, 260), (2, 280), (2, 290), (3, 380), (3, 395)];
        for &(f, t) in &msgs {
            a.message_delivered(f, t);
        }
        // frame 2 finishes before frame 1 does
        for &(f, t) in &[(0, 50), (0, 60), (2, 280), (2, 290), (1, 250), (3, 380), (1, 260), (3, 395)] {
            b.message_delivered(f, t);
        }
        assert_eq!(a.overall(), b.overall());
        assert_eq!(a.phase(1), b.phase(1));
        assert_eq!(a.phase(0).frames + a.phase(1).frames, 4);
        // frame 1 (deadline 200) misses by 60; frame 2's deadline is 260 + 100
        assert_eq!((a.phase(0).missed, a.phase(0).miss_time_sum), (1, 60.0));
        assert_eq!(a.phase(1).missed, 0);
    }

    #[test]
    fn warm_up_frames_chain_but_are_not_counted() {
        let mut s = StreamDeadlines::new(100.0, 1);
        s.expect_frame(0, 0, 1, 0, false);
        s.message_delivered(0, 150); // missed, unmeasured
        s.expect_frame(1, 100, 1, 0, true);
        s.message_delivered(1, 240); // deadline 150 + 100 = 250: met
        assert_eq!((s.overall().frames, s.overall().missed, s.overall().gaps), (1, 0, 0));
    }

    proptest! {
        #[test]
        fn merge_equals_sequential(gaps in prop::collection::vec(0.0f64..1e6, 0..40), split in 0usize..40) {
            let split = split.min(gaps.len());
            let mut all = DeadlineStats::default();
            let (mut x, mut y) = (DeadlineStats::default(), DeadlineStats::default());
            for (i, &g) in gaps.iter().enumerate() {
                all.gap(g);
                all.frame(if g > 5e5 { Some(g) } else { None });
                let part = if i < split { &mut x } else { &mut y };
                part.gap(g);
                part.frame(if g > 5e5 { Some(g) } else { None });
            }
            x.merge(&y);
            prop_assert_eq!((x.frames, x.missed, x.gaps), (all.frames, all.missed, all.gaps));
            prop_assert!((x.gap_mean - all.gap_mean).abs() <= 1e-6 * all.gap_mean.abs().max(1.0));
            prop_assert!((x.gap_m2 - all.gap_m2).abs() <= 1e-6 * all.gap_m2.abs().max(1.0));
            prop_assert!((x.miss_time_sum - all.miss_time_sum).abs() <= 1e-6 * all.miss_time_sum.max(1.0));
        }
    }
}

//! The traffic driver: the sources of a run (one per stream of each traffic spec at each
//! of its nodes), the calendar of their next message creations, and the mix's phases
//! (document 003 §4.2). Each cycle it says what is born — a message, or a video frame cut
//! into messages — and leaves queueing it at the source to the endpoints.

use super::application::{Applications, JobSpec};
use super::birth::Birth;
use super::calendar::Calendar;
use super::video::frame_flits;
use super::{ProcessSpec, Source, TrafficSpec};
use crate::ids::NodeId;
use crate::unchecked::At;
use crate::units::Cycle;

/// The sources of a run and when each creates next.
pub(crate) struct Traffic {
    pub specs: Vec<TrafficSpec>,
    pub sources: Vec<Source>,
    /// Message creations due: (cycle, source, the source's epoch when it was queued).
    events: Calendar,
    /// Start cycles of the mix's phases after the first.
    pub phase_starts: Vec<Cycle>,
    /// The phase in force now.
    pub phase: usize,
    /// Application models (`[[application]]`, document 001 §4.2), if the run has any.
    pub apps: Option<Box<Applications>>,
}

impl Traffic {
    /// Add `jobs` (`Applications::build`: a source row per flow of each); returns the
    /// range of their flows.
    pub fn add_applications(
        &mut self,
        jobs: Vec<JobSpec>,
        seed: u64,
        processors: Option<u32>,
        nodes: usize,
    ) -> (u32, u32) {
        let first = self.sources.len() as u32;
        let apps = Applications::build(jobs, seed, processors, nodes, &mut self.sources, &mut self.specs);
        self.apps = Some(Box::new(apps));
        (first, self.sources.len() as u32)
    }

    /// The sources of `specs` at their nodes (`spec_nodes[spec]`), seeded from `seed`, with
    /// the mix's phases starting at `phase_starts`. Calls `each` with every source made.
    pub fn new(
        specs: Vec<TrafficSpec>,
        spec_nodes: &[Vec<u32>],
        seed: u64,
        phase_starts: Vec<Cycle>,
        mut each: impl FnMut(&Source, &TrafficSpec),
    ) -> Traffic {
        let mut sources = Vec::new();
        let mut events = Calendar::new();
        for (si, spec) in specs.iter().enumerate() {
            for &node in &spec_nodes[si] {
                if spec.pattern.is_silent(node as usize) || spec.rate_by_phase.iter().all(|&r| r <= 0.0) {
                    continue;
                }
                for stream in 0..spec.sources_per_node() {
                    let mut s = Source::new(node, si as u32, stream, spec, seed);
                    if let Some(t) = s.start(spec, 0, 0) {
                        events.push(t, sources.len() as u32, s.epoch);
                    }
                    each(&s, spec);
                    sources.push(s);
                }
            }
        }
        Traffic { specs, sources, events, phase_starts, phase: 0, apps: None }
    }

    /// The next cycle anything happens: a source's creation or a phase change.
    pub fn next_event(&self) -> Cycle {
        let next = self.events.next();
        let next = self.apps.as_ref().map_or(next, |a| next.min(a.next_event()));
        next.min(self.phase_starts.get(self.phase).copied().unwrap_or(Cycle::MAX))
    }

    /// What the sources create at `now` (`flit_bits`: a flit's size, to cut video frames),
    /// each handed to `born` in the order created.
    #[inline(always)]
    pub fn generate(&mut self, now: Cycle, flit_bits: u32, mut born: impl FnMut(Birth)) {
        if self.phase_starts.get(self.phase) == Some(&now) {
            self.next_phase(now);
        }
        self.events.begin(now);
        while let Some((s, epoch)) = self.events.pop() {
            if epoch != self.sources.at(s as usize).epoch {
                continue; // rescheduled by a phase change
            }
            if let Some(b) = self.fire(s as usize, flit_bits) {
                born(b);
            }
            let source = self.sources.at_mut(s as usize);
            let next = source.advance(self.specs.at(source.spec as usize), self.phase, now);
            self.events.push(next, s, source.epoch);
        }
    }

    /// Source `s` is due: a message, or for a video stream a frame to be cut into messages
    /// (document 003 §4.2).
    fn fire(&mut self, s: usize, flit_bits: u32) -> Option<Birth> {
        let source = self.sources.at_mut(s);
        let spec = self.specs.at(source.spec as usize);
        let mut b = Birth {
            node: NodeId(source.node),
            dst: NodeId(source.dst),
            class: spec.class,
            vtick: source.vtick,
            flow: s as u32,
            frame: u32::MAX,
            total: spec.message_flits,
            message_flits: spec.message_flits,
            packet_flits: spec.packet_flits,
            phase: self.phase,
        };
        if let ProcessSpec::Video(v) = &spec.process {
            let bytes = source.next_frame_bytes(v);
            if source.dst == u32::MAX {
                return None;
            }
            b.frame = source.frames - 1;
            b.total = frame_flits(bytes, flit_bits);
            return Some(b);
        }
        if source.dst == u32::MAX {
            b.dst = NodeId(spec.pattern.destination(source.node as usize, &mut source.rng)? as u32);
        }
        Some(b)
    }

    /// A new phase of the mix begins: sources whose rate changes restart at the new rate
    /// (exact for memoryless processes).
    fn next_phase(&mut self, now: Cycle) {
        let (old, new) = (self.phase, self.phase + 1);
        self.phase = new;
        for (i, source) in self.sources.iter_mut().enumerate() {
            let spec = self.specs.at(source.spec as usize);
            if spec.source_rate(source.stream, old) == spec.source_rate(source.stream, new) {
                continue;
            }
            if let Some(t) = source.start(spec, new, now) {
                self.events.push(t, i as u32, source.epoch);
            }
        }
    }
}

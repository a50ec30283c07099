//! Application models (document 001 §3.2, §4.2): a parallel job as compute phases and
//! communication phases, run on the packet-level network.
//!
//! Document 001 profiles real applications (ray tracing, polygon rendering, NAS kernels) whose
//! execution time falls as the bandwidth reserved per flow rises (Figs. 4.1-4.2). Here a job
//! is N ranks on N nodes running the same phases in lock step per rank: in phase p a rank
//! computes for the phase's compute time, then sends the phase's messages (its partners in the
//! phase's pattern); it enters phase p + 1 once it has received every message of phase p
//! addressed to it (a message counts when its last packet has reached the destination host).
//! A job completes when its last rank has finished its last phase; its completion time is
//! what the middleware promised (§4.4.3: T_actual against T_requested).
//!
//! Each (sender, receiver) pair of a job is one flow (§2.1: "a message stream between
//! applications"), a row of the per-flow table; with `reserve` it is rate controlled by the
//! NIC with idt = T · Bpeak / Breq like any reserved flow, without it it is unreserved.
//!
//! Ranks on one node share its host's processors when `endpoint.processors` is set
//! (`traffic::processors`: document 001 §4.3.1's dual-processor nodes; k ranks computing on a
//! node of p processors each progress at min(1, p / k)); unset, every rank computes at full
//! speed whatever else runs on its node.
//!
//! The driver calls [`Applications::due`] once per cycle only when a run has applications,
//! and endpoints report only whole messages of application flows (`net::AppDeliveries`):
//! without `[[application]]` nothing here runs.

use super::birth::Birth;
use super::pattern::Pattern;
use super::processors::{End, Processors};
use super::{ProcessSpec, Source, TrafficSpec};
use crate::config::application::{AppPattern, ApplicationConfig};
use crate::config::{Config, TrafficClass};
use crate::error::ConfigError;
use crate::ids::NodeId;
use crate::units::{Clock, Cycle};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// One communication phase of a job, its pattern expanded over the job's ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseSpec {
    /// Compute before the phase's messages, cycles.
    pub compute: Cycle,
    /// The size of each message, flits.
    pub flits: u32,
    /// Per rank, the ranks it sends to.
    pub sends: Vec<Vec<u32>>,
    /// Per rank, how many messages it waits for.
    pub expect: Vec<u32>,
}

/// A validated `[[application]]` entry.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub name: String,
    /// The node of each rank.
    pub nodes: Vec<u32>,
    pub start: Cycle,
    pub iterations: u32,
    /// One iteration's phases.
    pub phases: Vec<PhaseSpec>,
    pub class: TrafficClass,
    /// Bandwidth reserved per flow, flits per cycle.
    pub reserve: Option<f64>,
    pub packet_flits: u32,
}

impl JobSpec {
    fn total_phases(&self) -> usize {
        self.phases.len() * self.iterations as usize
    }

    fn phase(&self, p: usize) -> &PhaseSpec {
        &self.phases[p % self.phases.len()]
    }

    /// The (sender, receiver) rank pairs that ever exchange a message, sorted.
    pub fn pairs(&self) -> Vec<(u32, u32)> {
        let mut pairs: Vec<(u32, u32)> = self
            .phases
            .iter()
            .flat_map(|ph| {
                ph.sends.iter().enumerate().flat_map(|(r, d)| d.iter().map(move |&d| (r as u32, d)))
            })
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        pairs
    }
}

/// Per rank, the ranks it sends to under `pattern` on `n` ranks (one stage of it: `stage`
/// for binary swap).
fn partners(pattern: AppPattern, n: u32, stage: u32) -> Vec<Vec<u32>> {
    (0..n)
        .map(|r| match pattern {
            AppPattern::None => vec![],
            AppPattern::AllToAll => (0..n).filter(|&d| d != r).collect(),
            AppPattern::Hypercube => (0..n.trailing_zeros()).map(|k| r ^ (1 << k)).collect(),
            AppPattern::BinarySwap => vec![r ^ (1 << stage)],
            AppPattern::Gather => {
                if r == 0 {
                    vec![]
                } else {
                    vec![0]
                }
            }
            AppPattern::Scatter => {
                if r == 0 {
                    (1..n).collect()
                } else {
                    vec![]
                }
            }
            AppPattern::Ring => {
                if n > 1 {
                    vec![(r + 1) % n]
                } else {
                    vec![]
                }
            }
        })
        .collect()
}

fn phase_spec(compute: Cycle, flits: u32, sends: Vec<Vec<u32>>) -> PhaseSpec {
    let mut expect = vec![0u32; sends.len()];
    for d in sends.iter().flatten() {
        expect[*d as usize] += 1;
    }
    PhaseSpec { compute, flits, sends, expect }
}

/// Validate `[[application]]` entry `i` against a network of `nodes` nodes; every problem
/// names its field.
pub fn build_job(
    cfg: &ApplicationConfig,
    i: usize,
    clock: &Clock,
    nodes: usize,
    errs: &mut Vec<ConfigError>,
) -> Option<JobSpec> {
    let path = format!("application[{i}]");
    let before = errs.len();
    let n = cfg.nodes.len() as u32;
    if n == 0 {
        errs.push(ConfigError::new(format!("{path}.nodes"), "must list at least one node (one per rank)"));
    }
    for (r, &node) in cfg.nodes.iter().enumerate() {
        if node as usize >= nodes {
            errs.push(ConfigError::new(
                format!("{path}.nodes[{r}]"),
                format!("must be a node of the network, 0..={}, got {node}", nodes.saturating_sub(1)),
            ));
        }
        if cfg.nodes[..r].contains(&node) {
            errs.push(ConfigError::new(
                format!("{path}.nodes[{r}]"),
                format!("node {node} is listed twice (one rank per node)"),
            ));
        }
    }
    if cfg.iterations == 0 {
        errs.push(ConfigError::new(format!("{path}.iterations"), "must be >= 1, got 0"));
    }
    if cfg.packet_flits == 0 || cfg.packet_flits > 65_535 {
        errs.push(ConfigError::new(
            format!("{path}.packet_flits"),
            format!("must be 1..=65535, got {}", cfg.packet_flits),
        ));
    }
    if cfg.phases.is_empty() {
        errs.push(ConfigError::new(format!("{path}.phases"), "must have at least one phase"));
    }
    let reserve = match cfg.reserve {
        Some(r) if !(r.bits_per_second > 0.0 && r.bits_per_second <= clock.link_bits_per_second) => {
            errs.push(ConfigError::new(
                format!("{path}.reserve"),
                format!("must be > 0 and at most the link bandwidth, got {r}"),
            ));
            None
        }
        r => r.map(|r| clock.flits_per_cycle(r)),
    };
    let mut phases = Vec::new();
    for (k, ph) in cfg.phases.iter().enumerate() {
        let ppath = format!("{path}.phases[{k}]");
        let compute = ph.compute.map_or(0, |d| clock.duration_cycles(d));
        let power_of_two = matches!(ph.pattern, AppPattern::Hypercube | AppPattern::BinarySwap);
        if power_of_two && n > 0 && !n.is_power_of_two() {
            errs.push(ConfigError::new(
                format!("{ppath}.pattern"),
                format!("{:?} needs a power-of-two number of ranks, got {n} nodes", ph.pattern)
                    .to_lowercase(),
            ));
            continue;
        }
        let flits = |bytes: f64| (clock.bytes_to_flits(bytes).ceil() as u64).clamp(1, u32::MAX as u64) as u32;
        if let Some(b) = ph.bytes {
            // (a message past this never arrives in any run a machine can make: refused, not
            // left to run for ever doing nothing)
            if clock.bytes_to_flits(b.0 as f64) > MAX_MESSAGE_FLITS as f64 {
                errs.push(ConfigError::new(
                    format!("{ppath}.bytes"),
                    format!(
                        "a message of at most {MAX_MESSAGE_FLITS} flits ({} bytes at {} bits per flit), got {}",
                        MAX_MESSAGE_FLITS as u64 * clock.flit_bits as u64 / 8,
                        clock.flit_bits,
                        b.0
                    ),
                ));
                continue;
            }
        }
        match (ph.pattern, ph.bytes) {
            (AppPattern::None, Some(_)) => {
                errs.push(ConfigError::new(
                    format!("{ppath}.bytes"),
                    "a phase with pattern \"none\" sends nothing",
                ));
            }
            (AppPattern::None, None) => phases.push(phase_spec(compute, 0, partners(AppPattern::None, n, 0))),
            (_, None) => {
                errs.push(ConfigError::new(
                    format!("{ppath}.bytes"),
                    "required: the size of each message (e.g. \"64 KB\")",
                ));
            }
            (AppPattern::BinarySwap, Some(b)) => {
                // Stage k exchanges half of what each rank still holds.
                for stage in 0..n.trailing_zeros() {
                    let bytes = b.0 as f64 / (2u64 << stage) as f64;
                    let c = if stage == 0 { compute } else { 0 };
                    phases.push(phase_spec(c, flits(bytes), partners(AppPattern::BinarySwap, n, stage)));
                }
            }
            (p, Some(b)) => phases.push(phase_spec(compute, flits(b.0 as f64), partners(p, n, 0))),
        }
    }
    if errs.len() > before {
        return None;
    }
    Some(JobSpec {
        name: cfg.name.clone(),
        nodes: cfg.nodes.clone(),
        start: cfg.start.map_or(0, |d| clock.duration_cycles(d)),
        iterations: cfg.iterations,
        phases,
        class: cfg.class.unwrap_or(if reserve.is_some() {
            TrafficClass::RealTime
        } else {
            TrafficClass::BestEffort
        }),
        reserve,
        packet_flits: cfg.packet_flits,
    })
}

/// Longest message a phase may send, flits (as a `[[traffic]]` source's `message_flits`).
pub const MAX_MESSAGE_FLITS: u32 = 1 << 24;

/// Every `[[application]]` of `cfg`, validated.
pub fn build_jobs(cfg: &Config, clock: &Clock, nodes: usize) -> Result<Vec<JobSpec>, Vec<ConfigError>> {
    let mut errs = Vec::new();
    for (i, a) in cfg.application.iter().enumerate() {
        if a.reserve.is_some() && cfg.endpoint.queues != crate::config::SourceQueues::RateControl {
            errs.push(ConfigError::new(
                format!("application[{i}].reserve"),
                "needs NIC rate control: endpoint.queues = \"rate_control\" (with endpoint.model \"via\" or \"hca\")",
            ));
        }
    }
    let jobs: Vec<JobSpec> = cfg
        .application
        .iter()
        .enumerate()
        .filter_map(|(i, a)| build_job(a, i, clock, nodes, &mut errs))
        .collect();
    if errs.is_empty() {
        Ok(jobs)
    } else {
        Err(errs)
    }
}

/// What happens to a rank: its compute ends, a message of a phase reached it, or its job
/// starts (only with shared processors: the rank's first compute then takes a processor).
const COMPUTE_END: u32 = 0;
const RECEIVED: u32 = 1;
const START: u32 = 2;

/// A rank's event: (cycle, what, job, rank, phase); the heap orders by cycle first.
type Event = (Cycle, u32, u32, u32, u32);

/// One job's run state.
#[derive(Clone, Debug)]
struct Job {
    spec: JobSpec,
    /// Per (sender, receiver) rank pair, its flow (`u32::MAX`: the pair never talks).
    flow_of: Vec<u32>,
    /// Per rank, the phase it is in (`total_phases`: done).
    phase: Vec<u32>,
    /// Per rank, whether it has computed and sent its current phase's messages.
    sent: Vec<bool>,
    /// Per rank and phase, messages received.
    received: Vec<u32>,
    ranks_done: u32,
    finished: Option<Cycle>,
    /// Its messages' Vtick.
    vtick: u32,
    /// Per rank, the cycle its current compute phase ends (`Cycle::MAX`: not computing); an
    /// end event for another cycle was superseded (shared processors reschedule ends).
    compute_end: Vec<Cycle>,
    /// Cycles its ranks' compute phases took beyond their work (processor sharing).
    stretch: u64,
}

/// How one job ran.
#[derive(Clone, Debug, PartialEq)]
pub struct JobResult {
    pub name: String,
    pub ranks: u32,
    pub start: Cycle,
    /// The cycle its last rank finished, if it did.
    pub finished: Option<Cycle>,
    /// Messages and flits its ranks sent.
    pub messages: u64,
    pub flits: u64,
    /// Cycles its ranks' compute phases took beyond their work, summed over ranks and phases:
    /// what sharing its nodes' processors with other jobs cost it (0 without
    /// `endpoint.processors`).
    pub compute_stretch: u64,
}

/// The applications of a run (see the module comment).
#[derive(Clone, Debug)]
pub(crate) struct Applications {
    jobs: Vec<Job>,
    /// The first flow (source index) of the applications' flows.
    first_flow: u32,
    /// Per application flow: (job, sender rank, receiver rank).
    flows: Vec<(u32, u32, u32)>,
    /// Per application flow: its messages not yet delivered (created, job phase).
    in_flight: Vec<VecDeque<(Cycle, u32)>>,
    /// (cycle, what, job, rank, phase), earliest first.
    events: BinaryHeap<Reverse<Event>>,
    unfinished: u32,
    messages: Vec<u64>,
    flits: Vec<u64>,
    /// The nodes' shared processors (`endpoint.processors`), if modelled.
    processors: Option<Processors>,
}

impl Applications {
    /// The applications of `jobs`, with one source row per flow of each pushed onto
    /// `sources` (and a spec per job onto `specs`), never scheduled by the temporal
    /// processes, so that per-flow tables, path choice and the NIC's IDTs cover them.
    /// `processors`: each of the `nodes` nodes' processors, shared by the ranks computing
    /// on it (`None`: a processor per rank).
    pub(crate) fn build(
        jobs: Vec<JobSpec>,
        seed: u64,
        processors: Option<u32>,
        nodes: usize,
        sources: &mut Vec<Source>,
        specs: &mut Vec<TrafficSpec>,
    ) -> Applications {
        let first_flow = sources.len() as u32;
        let mut apps = Applications {
            jobs: Vec::new(),
            first_flow,
            flows: Vec::new(),
            in_flight: Vec::new(),
            events: BinaryHeap::new(),
            unfinished: jobs.len() as u32,
            messages: vec![0; jobs.len()],
            flits: vec![0; jobs.len()],
            processors: processors.map(|p| Processors::new(p, nodes)),
        };
        for (j, spec) in jobs.into_iter().enumerate() {
            let n = spec.nodes.len();
            let spec_id = specs.len() as u32;
            let tspec = TrafficSpec {
                class: spec.class,
                process: ProcessSpec::Poisson,
                // silent: the job, not a temporal process, creates its messages
                rate_by_phase: vec![0.0],
                message_flits: spec.packet_flits,
                packet_flits: spec.packet_flits,
                pattern: Pattern::Uniform { nodes: n, with_self: false },
                vtick: match (spec.class, spec.reserve) {
                    (TrafficClass::BestEffort, _) => 0,
                    (_, Some(r)) => (1.0 / r).round().clamp(1.0, u32::MAX as f64) as u32,
                    (_, None) => 1,
                },
                reserve: spec.reserve,
                idt: None,
            };
            let mut flow_of = vec![u32::MAX; n * n];
            for (k, (s, d)) in spec.pairs().into_iter().enumerate() {
                flow_of[s as usize * n + d as usize] = sources.len() as u32;
                let mut source = Source::new(spec.nodes[s as usize], spec_id, k as u32, &tspec, seed);
                source.dst = spec.nodes[d as usize];
                sources.push(source);
                apps.flows.push((j as u32, s, d));
                apps.in_flight.push(VecDeque::new());
            }
            let vtick = tspec.vtick;
            specs.push(tspec);
            let mut compute_end = vec![Cycle::MAX; n];
            for r in 0..n as u32 {
                if apps.processors.is_some() {
                    // its processor is taken when the job starts, among whatever runs then
                    apps.events.push(Reverse((spec.start, START, j as u32, r, 0)));
                } else {
                    let end = spec.start + spec.phases[0].compute;
                    compute_end[r as usize] = end;
                    apps.events.push(Reverse((end, COMPUTE_END, j as u32, r, 0)));
                }
            }
            let total = spec.total_phases();
            apps.jobs.push(Job {
                flow_of,
                phase: vec![0; n],
                sent: vec![false; n],
                received: vec![0; n * total],
                ranks_done: 0,
                finished: None,
                vtick,
                compute_end,
                stretch: 0,
                spec,
            });
        }
        apps
    }
}

impl Applications {
    /// The next cycle a rank does something on its own (a compute phase ends).
    pub fn next_event(&self) -> Cycle {
        self.events.peek().map_or(Cycle::MAX, |Reverse(e)| e.0)
    }

    /// Every job has completed.
    pub fn all_done(&self) -> bool {
        self.unfinished == 0
    }

    /// Whole messages of application flows delivered: (flow, created, done), each acted on
    /// when its data is at the receiving host (`done`), at the earliest in the next cycle.
    pub fn delivered(&mut self, list: &mut Vec<(u32, Cycle, Cycle)>) {
        for &(flow, created, done) in list.iter() {
            let f = (flow - self.first_flow) as usize;
            let q = &mut self.in_flight[f];
            // A flow carries at most one message per phase, created in distinct cycles.
            let Some(i) = q.iter().position(|&(c, _)| c == created) else { continue };
            let (_, phase) = q.remove(i).unwrap_or_default();
            let (job, _, dst) = self.flows[f];
            self.events.push(Reverse((done, RECEIVED, job, dst, phase)));
        }
        list.clear();
    }

    /// What is due at `now`: ranks whose compute ended send their phase's messages
    /// (handed to `born`), received messages advance their ranks.
    pub fn due(&mut self, now: Cycle, mix_phase: usize, mut born: impl FnMut(Birth)) {
        while let Some(&Reverse((t, what, j, r, p))) = self.events.peek() {
            if t > now {
                break;
            }
            self.events.pop();
            let (ju, ru) = (j as usize, r as usize);
            if what == START {
                self.begin_compute(ju, ru, 0, t);
                continue;
            }
            if what == COMPUTE_END {
                // Superseded: the node's sharing moved this end. An end moved earlier leaves
                // its old event behind, which a later phase of the rank (a compute of 0
                // cycles, say) may end on the very cycle of: the phase tells them apart.
                let job = &self.jobs[ju];
                if job.compute_end[ru] != t || job.phase[ru] != p {
                    continue;
                }
                self.end_compute(ju, ru, p, t);
                let job = &mut self.jobs[ju];
                let n = job.spec.nodes.len();
                let ph = job.spec.phase(p as usize);
                for &d in &ph.sends[ru] {
                    let flow = job.flow_of[ru * n + d as usize];
                    born(Birth {
                        node: NodeId(job.spec.nodes[ru]),
                        dst: NodeId(job.spec.nodes[d as usize]),
                        class: job.spec.class,
                        vtick: job.vtick,
                        flow,
                        frame: u32::MAX,
                        total: ph.flits,
                        message_flits: ph.flits,
                        packet_flits: job.spec.packet_flits,
                        phase: mix_phase,
                    });
                    self.in_flight[(flow - self.first_flow) as usize].push_back((now, p));
                    self.messages[ju] += 1;
                    self.flits[ju] += ph.flits as u64;
                }
                job.sent[ru] = true;
            } else {
                let total = self.jobs[ju].spec.total_phases();
                self.jobs[ju].received[ru * total + p as usize] += 1;
            }
            // (a rank moves on when the event took place: a message's `done` may be
            // earlier than the cycle it is acted on)
            self.advance(ju, ru, t);
        }
    }

    /// Rank `r` of job `j` moves on at `now` if it has completed its phase: sent its
    /// messages and received all it waits for.
    fn advance(&mut self, j: usize, r: usize, now: Cycle) {
        let job = &mut self.jobs[j];
        let total = job.spec.total_phases();
        let p = job.phase[r] as usize;
        if p >= total || !job.sent[r] || job.received[r * total + p] < job.spec.phase(p).expect[r] {
            return;
        }
        job.phase[r] += 1;
        job.sent[r] = false;
        if p + 1 < total {
            self.begin_compute(j, r, p + 1, now);
            return;
        }
        job.ranks_done += 1;
        if job.ranks_done == job.spec.nodes.len() as u32 {
            job.finished = Some(now);
            self.unfinished -= 1;
        }
    }

    /// Rank `r` of job `j` starts phase `p`'s compute at `t`: on its node's shared
    /// processors if they are modelled (and it has work), else it ends `compute` later.
    fn begin_compute(&mut self, j: usize, r: usize, p: usize, t: Cycle) {
        let Applications { jobs, events, processors, .. } = self;
        let job = &mut jobs[j];
        let work = job.spec.phase(p).compute;
        match processors {
            Some(procs) if work > 0 => {
                let node = job.spec.nodes[r];
                procs.start(node, t, (j as u32, r as u32, p as u32), work, |e| reschedule(jobs, events, e));
            }
            _ => {
                job.compute_end[r] = t + work;
                events.push(Reverse((t + work, COMPUTE_END, j as u32, r as u32, p as u32)));
            }
        }
    }

    /// Rank `r` of job `j` ended phase `p`'s compute at `t`: it frees its share of its
    /// node's processors (the others on the node may speed up).
    fn end_compute(&mut self, j: usize, r: usize, p: u32, t: Cycle) {
        let Applications { jobs, events, processors, .. } = self;
        jobs[j].compute_end[r] = Cycle::MAX;
        let (node, work) = (jobs[j].spec.nodes[r], jobs[j].spec.phase(p as usize).compute);
        if let Some(procs) = processors {
            if work > 0 {
                let lost = procs.end(node, t, j as u32, r as u32, |e| reschedule(jobs, events, e));
                jobs[j].stretch += lost;
            }
        }
    }

    /// How each job ran.
    pub fn results(&self) -> Vec<JobResult> {
        self.jobs
            .iter()
            .enumerate()
            .map(|(j, job)| JobResult {
                name: job.spec.name.clone(),
                ranks: job.spec.nodes.len() as u32,
                start: job.spec.start,
                finished: job.finished,
                messages: self.messages[j],
                flits: self.flits[j],
                compute_stretch: job.stretch,
            })
            .collect()
    }
}

/// A compute end from the node's processors: replaces the rank's pending end if it moved.
fn reschedule(jobs: &mut [Job], events: &mut BinaryHeap<Reverse<Event>>, (end, j, r, p): End) {
    let pending = &mut jobs[j as usize].compute_end[r as usize];
    if *pending != end {
        *pending = end;
        events.push(Reverse((end, COMPUTE_END, j, r, p)));
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::Simulation;

    const IDEAL: &str = "[simulation]\nseed = 1\nwarmup = 0\nmeasure = 100000\ndrain_limit = 100000\n\
                         [topology]\nkind = \"star\"\nports = 4\n";

    fn finish(toml: &str) -> Vec<Option<u64>> {
        let mut sim = Simulation::from_toml(toml, None).unwrap();
        sim.run().unwrap();
        sim.job_results().unwrap().iter().map(|j| j.finished.map(|f| f - j.start)).collect()
    }

    fn job(body: &str) -> String {
        format!("{IDEAL}[[application]]\nnodes = [0, 1]\nstart = 10\n{body}")
    }

    /// On an idle star with one cycle per router stage and per link, a message of F flits
    /// reaches its destination 7 + (F - 1) cycles after it is created: the endpoint's link,
    /// the five stages (sync, routing, VC allocation, crossbar, output), the link to the sink,
    /// then one more flit per cycle. So a rank computing 100 cycles, sending 10 flits (160
    /// bytes) to its partner and waiting for its partner's, then computing 50 more, is done
    /// 100 + 16 + 50 cycles after the job started; a second round adds 100 + 16 again.
    #[test]
    fn a_tiny_job_takes_its_hand_worked_time() {
        let one = "[[application.phases]]\ncompute = 100\npattern = \"ring\"\nbytes = 160\n";
        let tail = "[[application.phases]]\ncompute = 50\n";
        assert_eq!(finish(&job(&format!("{one}{tail}"))), vec![Some(166)]);
        let one_flit = "[[application.phases]]\ncompute = 100\npattern = \"ring\"\nbytes = 16\n";
        assert_eq!(finish(&job(&format!("{one_flit}{tail}"))), vec![Some(157)]);
        assert_eq!(finish(&job(&format!("iterations = 2\n{one}"))), vec![Some(232)]);
        // All-to-all on 4 ranks: each rank's 3 messages (30 flits) leave its endpoint one
        // flit per cycle, so the last cannot arrive before 7 + 29 cycles after the compute;
        // nor after every message has crossed one by one (7 + 12 x 10 - 1).
        let a2a = format!(
            "{IDEAL}[[application]]\nnodes = [0, 1, 2, 3]\n[[application.phases]]\ncompute = 100\n\
             pattern = \"all_to_all\"\nbytes = 160\n"
        );
        let t = finish(&a2a)[0].unwrap();
        assert!((136..=226).contains(&t), "{t}");
    }

    fn shared(processors: Option<u32>) -> String {
        let procs = processors.map_or(String::new(), |p| format!("[endpoint]\nprocessors = {p}\n"));
        format!(
            "{IDEAL}{procs}[[application]]\nname = \"a\"\nnodes = [0, 1]\nstart = 10\n\
             [[application.phases]]\ncompute = 100\npattern = \"ring\"\nbytes = 160\n\
             [[application.phases]]\ncompute = 50\n\
             [[application]]\nname = \"b\"\nnodes = [0]\nstart = 10\n\
             [[application.phases]]\ncompute = 100\n"
        )
    }

    /// Document 001 §4.3.1's nodes have two processors (`endpoint.processors`). Job a is
    /// `a_tiny_job_takes_its_hand_worked_time`'s (166 cycles alone); job b computes 100 cycles
    /// on a's node 0 from the same cycle. On one processor per node, a's rank 0 and b share
    /// node 0 at half speed: both end their 100 cycles at 200; a's rank 0 then sends (its
    /// partner, alone on node 1, sent at 100), its message is at rank 1 16 cycles later, and
    /// rank 1 computes 50 more: 266. On two processors (or with no processor model) each has
    /// one of its own: 166 and 100. Each job's stretch is what it lost: 100 cycles each.
    #[test]
    fn ranks_on_one_node_share_its_processors() {
        assert_eq!(finish(&shared(None)), vec![Some(166), Some(100)]);
        assert_eq!(finish(&shared(Some(2))), vec![Some(166), Some(100)]);
        assert_eq!(finish(&shared(Some(1))), vec![Some(266), Some(200)]);
        let mut sim = Simulation::from_toml(&shared(Some(1)), None).unwrap();
        sim.run().unwrap();
        let lost: Vec<u64> = sim.job_results().unwrap().iter().map(|j| j.compute_stretch).collect();
        assert_eq!(lost, vec![100, 100]);
        let e = Simulation::from_toml(&shared(Some(0)), None).err().expect("refused");
        assert!(e.0.iter().any(|e| e.path == "endpoint.processors"), "{e:?}");
    }

    /// A compute end moved earlier leaves its old event in the calendar; here the rank's next
    /// compute phase ends on exactly that cycle. One processor per node. Job a (ranks on
    /// nodes 0 and 1): 100 cycles then a 1-flit ring exchange, 70 cycles then another. b
    /// (node 0, 20 cycles from 10) halves a's rank 0 from 10: its end moves to 10 + 2 x 90 =
    /// 190, then, when b ends at 10 + 2 x 20 = 50, back to 50 + 70 = 120, leaving an event at
    /// 190. Rank 1 (alone) ends at 100, its message is at rank 0 at 107; rank 0 sends at 120
    /// (at rank 1 at 127) and computes its second phase 120..190 — ending on the old event's
    /// cycle. Rank 1 computes 127..197 and sends; rank 0's second message (sent at 190) is at
    /// rank 1 at 197, rank 1's at rank 0 at 204: a completes at 204, b in its 40 cycles.
    /// Taking the old event for the second phase's end would resend the first phase's message
    /// and never send the second: a would not complete.
    #[test]
    fn a_superseded_end_is_not_taken_for_a_later_phase_ending_on_its_cycle() {
        let toml = format!(
            "{IDEAL}[endpoint]\nprocessors = 1\n\
             [[application]]\nname = \"a\"\nnodes = [0, 1]\n\
             [[application.phases]]\ncompute = 100\npattern = \"ring\"\nbytes = 16\n\
             [[application.phases]]\ncompute = 70\npattern = \"ring\"\nbytes = 16\n\
             [[application]]\nname = \"b\"\nnodes = [0]\nstart = 10\n\
             [[application.phases]]\ncompute = 20\n"
        );
        assert_eq!(finish(&toml), vec![Some(204), Some(40)]);
    }

    /// With as many processors as ranks per node, the processor model changes nothing: a run
    /// of three reserved iterations with best-effort traffic beside it is cycle for cycle the
    /// run without it.
    #[test]
    fn enough_processors_change_nothing() {
        let with = reserved(5.0, 1).replace("[endpoint]\n", "[endpoint]\nprocessors = 1\n");
        assert!(with.contains("processors = 1"));
        assert_eq!(finish(&with), finish(&reserved(5.0, 1)));
    }

    fn reserved(mb_s: f64, seed: u64) -> String {
        format!(
            "[simulation]\nseed = {seed}\nwarmup = 0\nmeasure = \"1 ms\"\ndrain_limit = \"1 s\"\n\
             [physical]\nflit_bits = 128\nlink_bandwidth = \"1.6 Gb/s\"\n\
             [topology]\nkind = \"star\"\nports = 8\n\
             [endpoint]\nmodel = \"hca\"\nqueues = \"rate_control\"\n\
             [[application]]\nnodes = [0, 1, 2, 3]\niterations = 3\nreserve = \"{mb_s} MB/s\"\n\
             [[application.phases]]\ncompute = \"100 us\"\npattern = \"all_to_all\"\nbytes = \"64 KB\"\n\
             [[traffic]]\nsources = [4]\npattern = {{ kind = \"fixed\", destination = 5 }}\nload = 0.1\n"
        )
    }

    /// Document 001 Figs. 4.1-4.2: the more bandwidth each flow reserves, the sooner the job
    /// completes; and a run is a function of its configuration.
    #[test]
    fn completion_time_falls_as_the_reservation_rises_and_is_deterministic() {
        let times: Vec<u64> =
            [2.0, 5.0, 10.0, 30.0].iter().map(|&b| finish(&reserved(b, 1))[0].unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] > w[1]), "{times:?}");
        assert_eq!(finish(&reserved(5.0, 1)), finish(&reserved(5.0, 1)));
    }

    #[test]
    fn bad_applications_are_refused_naming_the_field() {
        let errs = |body: &str| {
            let e = Simulation::from_toml(&format!("{IDEAL}{body}"), None).err().expect("refused");
            e.0.iter().map(|e| format!("{}: {}", e.path, e.message)).collect::<Vec<_>>().join("\n")
        };
        let e =
            errs("[[application]]\nnodes = [0, 9]\n[[application.phases]]\npattern = \"ring\"\nbytes = 8\n");
        assert!(e.contains("application[0].nodes[1]: must be a node of the network, 0..=3, got 9"), "{e}");
        let e = errs("[[application]]\nnodes = [0, 1, 2]\n[[application.phases]]\npattern = \"binary_swap\"\nbytes = 8\n");
        assert!(e.contains("application[0].phases[0].pattern"), "{e}");
        let e = errs("[[application]]\nnodes = [0, 1]\n[[application.phases]]\npattern = \"all_to_all\"\n");
        assert!(e.contains("application[0].phases[0].bytes: required"), "{e}");
        let e = errs(
            "[[application]]\nnodes = [0, 1]\nreserve = \"1 MB/s\"\n[[application.phases]]\ncompute = 5\n",
        );
        assert!(e.contains("application[0].reserve: needs NIC rate control"), "{e}");
        let e = errs("[[application]]\nnodes = [0, 1]\niterations = 0\nphases = []\n");
        assert!(e.contains("application[0].iterations: must be >= 1"), "{e}");
        assert!(e.contains("application[0].phases: must have at least one phase"), "{e}");
        let e = errs("[[application]]\nnodes = [0, 1]\n[[application.phases]]\npattern = \"fan\"\n");
        assert!(e.contains("application[0].phases[0].pattern"), "{e}");
    }

    #[test]
    fn binary_swap_halves_its_messages_stage_by_stage() {
        let cfg = crate::config::Config::from_toml_str(
            "[topology]\nkind = \"star\"\nports = 8\n[[application]]\nnodes = [0, 1, 2, 3]\n\
             [[application.phases]]\ncompute = 7\npattern = \"binary_swap\"\nbytes = 1024\n",
        )
        .unwrap();
        let clock = crate::units::Clock { flit_bits: 128, link_bits_per_second: 1.6e9 };
        let jobs = super::build_jobs(&cfg, &clock, 8).unwrap();
        let p = &jobs[0].phases;
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].compute, p[0].flits, p[1].compute, p[1].flits), (7, 32, 0, 16));
        assert_eq!(p[0].sends, vec![vec![1], vec![0], vec![3], vec![2]]);
        assert_eq!(p[1].sends, vec![vec![2], vec![3], vec![0], vec![1]]);
        assert_eq!(p[1].expect, vec![1, 1, 1, 1]);
    }
}

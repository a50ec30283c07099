//! The processors of each node's host, shared by the compute phases of the application ranks
//! running on it (`endpoint.processors`; runtime of `traffic::application`).
//!
//! Document 001's middleware testbed has "sixteen 1GHz Dual Pentium III processors" (§4.3.1):
//! sixteen nodes of two processors. Its rate-control testbed's nodes are "Quad Pentium III"
//! (§4.1.1), and there the document argues interference away: "Since the nodes in the testbed
//! are quad SMPs, we can reasonably suppose that the flows are assigned to different processors
//! from those on which the application is running, and the interference due to the flows is
//! solely at the network level" (§4.2.2); the jobs of §4.2.3 ran "on the same set of nodes, on
//! different sets of processors" (§4.1). Document 004 §3.4 names the case that assumption
//! leaves out: "In environments characterized by more than one compute-intensive job per
//! processor, rate control needs to be used in conjunction with a CPU reservation scheme".
//! So a node here has `p` processors; while k ranks (of different jobs) are in a compute
//! phase on it, each progresses at min(1, p / k) of full speed — the operating system's time
//! sharing of the node's processors, without affinity or priorities (neither document says
//! more). A rank that waits for messages is not counted (it is assumed to block, not to poll:
//! the documents do not say how MPICH-GM waits).
//!
//! Compute is work in cycles of one processor. A node's work is settled lazily: whenever the
//! number of ranks computing on it changes, what each has left is reduced by the time since
//! the last change times the speed in force, and, if the speed changed, every end is computed
//! again (`End`s handed back to the caller, who drops the ends they replace). Work is an
//! `f64` of processor cycles; an end is the first cycle by which the work is done, to within
//! a millionth of a cycle (so that p / k speeds such as 2/3 do not round an exact end up).

use crate::units::Cycle;

/// A compute phase's end, (re)scheduled: (cycle, job, rank, phase).
pub(crate) type End = (Cycle, u32, u32, u32);

/// Rounding slack when turning work left into an end cycle (see the module comment).
const SLACK: f64 = 1e-6;

/// One rank's compute phase in progress on a node.
#[derive(Clone, Debug)]
struct Task {
    job: u32,
    rank: u32,
    phase: u32,
    /// Processor cycles of work left at the host's `last` settlement.
    left: f64,
    /// When it started, and its work: what it lost to sharing is end - from - work.
    from: Cycle,
    work: Cycle,
}

/// The ranks computing on one node.
#[derive(Clone, Debug, Default)]
struct Host {
    /// The cycle up to which every task's `left` is settled.
    last: Cycle,
    tasks: Vec<Task>,
}

/// Every node's processors (see the module comment).
#[derive(Clone, Debug)]
pub(crate) struct Processors {
    per_node: u32,
    hosts: Vec<Host>,
}

impl Processors {
    pub fn new(per_node: u32, nodes: usize) -> Self {
        Processors { per_node: per_node.max(1), hosts: vec![Host::default(); nodes] }
    }

    /// The speed of each of `k` ranks computing at once on one node.
    fn speed(&self, k: usize) -> f64 {
        if k <= self.per_node as usize {
            1.0
        } else {
            self.per_node as f64 / k as f64
        }
    }

    /// Rank `rank` of `job` starts phase `phase`'s `work` cycles of compute on `node` at `t`.
    /// Hands `schedule` its end, and every other task's on the node if their speed changed.
    pub fn start(
        &mut self,
        node: u32,
        t: Cycle,
        (job, rank, phase): (u32, u32, u32),
        work: Cycle,
        schedule: impl FnMut(End),
    ) {
        let k = self.hosts[node as usize].tasks.len();
        let (old, new) = (self.speed(k), self.speed(k + 1));
        let host = &mut self.hosts[node as usize];
        host.settle(t, old);
        // A start acted on a cycle or two late (a message's delivery is acted on in the
        // cycle after it completed) is credited the cycles since `t` at the new speed.
        let late = host.last.saturating_sub(t) as f64;
        let left = (work as f64 - late * new).max(0.0);
        host.tasks.push(Task { job, rank, phase, left, from: t, work });
        let only = if old == new { Some(host.tasks.len() - 1) } else { None };
        host.schedule(new, only, schedule);
    }

    /// Rank `rank` of `job`'s compute on `node` ended at `t`: it leaves the node, whose other
    /// tasks are handed to `schedule` if their speed changed. Returns the cycles the phase
    /// took beyond its work (what sharing cost it).
    pub fn end(&mut self, node: u32, t: Cycle, job: u32, rank: u32, schedule: impl FnMut(End)) -> Cycle {
        let k = self.hosts[node as usize].tasks.len();
        let (old, new) = (self.speed(k), self.speed(k.saturating_sub(1)));
        let host = &mut self.hosts[node as usize];
        host.settle(t, old);
        let Some(i) = host.tasks.iter().position(|x| x.job == job && x.rank == rank) else { return 0 };
        let task = host.tasks.swap_remove(i);
        if old != new {
            host.schedule(new, None, schedule);
        }
        t.saturating_sub(task.from + task.work)
    }
}

impl Host {
    /// Every task's work left as of `t`, at `speed` since the last settlement.
    fn settle(&mut self, t: Cycle, speed: f64) {
        if t > self.last {
            let done = (t - self.last) as f64 * speed;
            for task in &mut self.tasks {
                task.left = (task.left - done).max(0.0);
            }
            self.last = t;
        }
    }

    /// The ends at `speed` of task `only`, or of every task.
    fn schedule(&self, speed: f64, only: Option<usize>, mut schedule: impl FnMut(End)) {
        let end = |x: &Task| self.last + (x.left / speed - SLACK).ceil().max(0.0) as Cycle;
        match only {
            Some(i) => {
                let x = &self.tasks[i];
                schedule((end(x), x.job, x.rank, x.phase));
            }
            None => self.tasks.iter().for_each(|x| schedule((end(x), x.job, x.rank, x.phase))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ends handed out, latest per (job, rank), sorted.
    fn run(p: u32, steps: &[(char, Cycle, u32, Cycle)]) -> Vec<(u32, Cycle)> {
        let mut procs = Processors::new(p, 1);
        let mut ends = std::collections::BTreeMap::new();
        for &(what, t, job, work) in steps {
            let mut put = |(c, j, _, _): End| {
                ends.insert(j, c);
            };
            match what {
                's' => procs.start(0, t, (job, 0, 0), work, &mut put),
                _ => {
                    procs.end(0, t, job, 0, &mut put);
                    ends.remove(&job);
                }
            }
        }
        ends.into_iter().collect()
    }

    /// Two ranks of 100 cycles each starting together on one processor: each at half speed,
    /// both end at 200. On two processors, each has its own: both at 100.
    #[test]
    fn two_ranks_share_one_processor_and_not_two() {
        assert_eq!(run(1, &[('s', 0, 0, 100), ('s', 0, 1, 100)]), vec![(0, 200), (1, 200)]);
        assert_eq!(run(2, &[('s', 0, 0, 100), ('s', 0, 1, 100)]), vec![(0, 100), (1, 100)]);
    }

    /// Rank A (100 cycles) alone from 0; B (100) joins at 40 on one processor: A has 60 left,
    /// both at 1/2 until A ends at 40 + 120 = 160 (B has 40 left then); B alone again ends at
    /// 160 + 40 = 200. The whole is the work of both, 200 cycles, on one processor.
    #[test]
    fn a_rank_joining_halves_the_speed_of_the_one_computing_until_it_ends() {
        let mut procs = Processors::new(1, 1);
        let mut ends = std::collections::BTreeMap::new();
        procs.start(0, 0, (0, 0, 0), 100, |(c, j, _, _)| {
            ends.insert(j, c);
        });
        assert_eq!(ends[&0], 100);
        procs.start(0, 40, (1, 0, 0), 100, |(c, j, _, _)| {
            ends.insert(j, c);
        });
        assert_eq!((ends[&0], ends[&1]), (160, 240));
        let lost = procs.end(0, 160, 0, 0, |(c, j, _, _)| {
            ends.insert(j, c);
        });
        assert_eq!(lost, 60);
        assert_eq!(ends[&1], 200);
        assert_eq!(procs.end(0, 200, 1, 0, |_| panic!("nothing left to reschedule")), 60);
    }

    /// Three ranks on two processors: each at 2/3; 90 cycles of work end at 135, exactly
    /// (the rounding slack keeps 90 / (2/3) from rounding up to 136).
    #[test]
    fn three_ranks_on_two_processors_each_get_two_thirds() {
        let ends = run(2, &[('s', 0, 0, 90), ('s', 0, 1, 90), ('s', 0, 2, 90)]);
        assert_eq!(ends, vec![(0, 135), (1, 135), (2, 135)]);
    }
}

//! DRB, Distributed Routing Balancing (document 002 §2.1 and §4), at the source: "los
//! nodos fuente que inyectan paquetes en zonas congestionadas ... comenzarán eventualmente a
//! recibir notificaciones ... La apertura de las trayectorias se hace de forma gradual en
//! función de la distribución de notificaciones recibidas (tal que las trayectorias
//! alternativas son seleccionadas de forma inversamente proporcional a dicha distribución,
//! es decir, los caminos menos ocupados son los más utilizados) ... Cada vez que el contador
//! expira y no hayan llegado ... paquetes de notificación, el camino ... se contrae
//! gradualmente hasta recuperar la trayectoria original" — sources receiving congestion
//! notifications open alternative paths gradually, spreading messages over them in inverse
//! proportion to the notifications each received (the least notified most used); each time
//! the timer expires with no notification, the paths contract one by one back to the
//! original (minimal) one.
//!
//! Per flow: paths 0..open are open (path 0, the routing's first and minimal path, always);
//! a notification (a BECN for a packet that took path p, `endpoint/congestion.rs`) counts
//! against p and opens the next path; the next message takes the open path p with the
//! least `(sent[p] + 1) x (notified[p] + 1)`, so path p carries a share proportional to
//! 1 / (notified[p] + 1); each `timer` without a notification closes the last opened path
//! (its counts forgotten). `split = "round_robin"` takes the open paths in turn instead
//! (least `sent[p]`), so the opening can be measured apart from the split.

use crate::config::DrbSplit;
use crate::units::Cycle;

/// DRB's per-flow path state.
#[derive(Clone, Debug)]
pub(crate) struct Drb {
    paths: usize,
    timer: Cycle,
    split: DrbSplit,
    /// Per flow: paths open (>= 1).
    open: Vec<u8>,
    /// Per flow: the last notification or contraction.
    since: Vec<Cycle>,
    /// Per flow and path: notifications received, messages sent, since the path opened.
    notified: Vec<u32>,
    sent: Vec<u32>,
}

impl Drb {
    /// `paths` paths per destination, contracting every `timer` cycles (>= 1), `flows` flows.
    pub fn new(paths: u32, timer: Cycle, flows: usize) -> Drb {
        let paths = paths as usize;
        Drb {
            paths,
            timer: timer.max(1),
            split: DrbSplit::InverseNotifications,
            open: vec![1; flows],
            since: vec![0; flows],
            notified: vec![0; flows * paths],
            sent: vec![0; flows * paths],
        }
    }

    /// This DRB spreading its messages by `split`.
    pub fn with_split(mut self, split: DrbSplit) -> Drb {
        self.split = split;
        self
    }

    /// Close the paths of `flow` whose timers expired without a notification by `now`.
    fn contract(&mut self, flow: usize, now: Cycle) {
        let expiries = (now.saturating_sub(self.since[flow]) / self.timer) as usize;
        if expiries == 0 {
            return;
        }
        self.since[flow] += expiries as Cycle * self.timer;
        let open = self.open[flow] as usize;
        let keep = open.saturating_sub(expiries).max(1);
        for p in keep..open {
            self.notified[flow * self.paths + p] = 0;
            self.sent[flow * self.paths + p] = 0;
        }
        self.open[flow] = keep as u8;
    }

    /// The path of `flow`'s next message at `now`.
    pub fn choose(&mut self, flow: u32, now: Cycle) -> u8 {
        let f = flow as usize;
        self.contract(f, now);
        let base = f * self.paths;
        let weigh = self.split == DrbSplit::InverseNotifications;
        let cost = |p: usize| {
            let notified = if weigh { self.notified[base + p] as u64 } else { 0 };
            (self.sent[base + p] as u64 + 1) * (notified + 1)
        };
        let p = (0..self.open[f] as usize).min_by_key(|&p| (cost(p), p)).unwrap_or(0);
        self.sent[base + p] += 1;
        p as u8
    }

    /// A notification for a packet of `flow` that took `path` reached the source at `now`.
    pub fn notified(&mut self, flow: u32, path: u8, now: Cycle) {
        let f = flow as usize;
        self.contract(f, now);
        if (path as usize) < self.open[f] as usize {
            self.notified[f * self.paths + path as usize] += 1;
        }
        if (self.open[f] as usize) < self.paths {
            self.open[f] += 1;
        }
        self.since[f] = now;
    }

    /// Paths open for `flow` at `now` (tests and reports).
    #[cfg(test)]
    pub fn open(&mut self, flow: u32, now: Cycle) -> u8 {
        self.contract(flow as usize, now);
        self.open[flow as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_open_paths_one_by_one() {
        let mut d = Drb::new(4, 100, 2);
        assert_eq!([d.choose(0, 0), d.choose(0, 1)], [0, 0], "one path until notified");
        d.notified(0, 0, 10);
        assert_eq!(d.open(0, 10), 2);
        assert_eq!(d.open(1, 10), 1, "per flow");
        for t in 11..20 {
            d.notified(0, 0, t);
        }
        assert_eq!(d.open(0, 20), 4, "at most the paths there are");
    }

    #[test]
    fn traffic_splits_inversely_to_the_notifications() {
        // Two paths open; path 0 notified 3 times, path 1 never: path 1 takes 4 messages
        // for every one on path 0 (shares 1/(3+1) against 1/(0+1)).
        let mut d = Drb::new(2, 1_000_000, 1);
        for t in 0..3 {
            d.notified(0, 0, t);
        }
        let mut on = [0; 2];
        for t in 0..100 {
            on[d.choose(0, 10 + t) as usize] += 1;
        }
        assert_eq!(on, [20, 80]);
        // Equal notifications: an even split.
        let mut d = Drb::new(3, 1_000_000, 1);
        d.notified(0, 0, 0);
        d.notified(0, 1, 0);
        d.notified(0, 2, 0);
        let mut on = [0; 3];
        for t in 0..99 {
            on[d.choose(0, t) as usize] += 1;
        }
        assert_eq!(on, [33, 33, 33]);
    }

    #[test]
    fn round_robin_ignores_the_notifications_in_the_split() {
        // As above, path 0 notified 3 times, path 1 never: in turn, half and half.
        let mut d = Drb::new(2, 1_000_000, 1).with_split(DrbSplit::RoundRobin);
        for t in 0..3 {
            d.notified(0, 0, t);
        }
        let mut on = [0; 2];
        for t in 0..100 {
            on[d.choose(0, 10 + t) as usize] += 1;
        }
        assert_eq!(on, [50, 50]);
    }

    #[test]
    fn paths_contract_last_opened_first_one_per_quiet_timer() {
        let mut d = Drb::new(4, 100, 1);
        for t in 0..3 {
            d.notified(0, 0, t);
        }
        assert_eq!(d.open(0, 2), 4);
        assert_eq!(d.open(0, 101), 4, "the timer runs from the last notification (2)");
        assert_eq!(d.open(0, 102), 3, "path 3 closes first");
        assert_eq!(d.choose(0, 150), 1, "paths 1 and 2 still open and never notified: 1 first");
        assert_eq!(d.choose(0, 151), 2);
        assert_eq!(d.open(0, 202), 2);
        assert_eq!(d.open(0, 302), 1);
        assert_eq!(d.open(0, 10_000), 1, "never below the original path");
        assert_eq!(d.choose(0, 10_001), 0);
        // A notification restarts the timer.
        d.notified(0, 0, 10_050);
        assert_eq!(d.open(0, 10_149), 2);
        assert_eq!(d.open(0, 10_150), 1);
    }

    #[test]
    fn a_split_without_drb_is_refused() {
        let toml = "[topology]\nkind = \"fat_tree\"\nk = 2\nn = 2\n\
                    [routing]\nmultipath = { paths = 2, split = \"round_robin\" }\n\
                    [[traffic]]\nload = 0.1\n";
        let e = crate::Simulation::from_toml(toml, None).err().expect("refused").to_string();
        assert!(e.contains("routing.multipath.split") && e.contains("drb"), "{e}");
    }
}

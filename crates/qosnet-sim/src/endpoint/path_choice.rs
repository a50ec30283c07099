//! Path choice at the source (ARCHITECTURE.md "One cycle, and where the seams are"): where
//! the routing offers several paths to a destination (`Routing::paths`, `[routing]
//! multipath`), the source picks one per message, and all the message's packets follow it
//! (so a message's packets arrive in order; messages of a flow on different paths may not:
//! `flows.out_of_order`). Fixed policies, or DRB's adaptive choice (document 002 §2.1,
//! `drb.rs`).

use super::drb::Drb;
use crate::config::{DrbSplit, PathSelection};
use crate::units::Cycle;

/// The sources' path choice.
#[derive(Clone, Debug)]
pub(crate) struct PathChoice {
    paths: u32,
    selection: PathSelection,
    /// Per flow: the path its next message takes (`ByMessage`).
    next: Vec<u32>,
    /// DRB's adaptive state (`Drb`).
    drb: Option<Drb>,
}

impl PathChoice {
    /// `paths` paths per destination, chosen by `selection`, for `flows` flows.
    pub fn new(paths: u32, selection: PathSelection, flows: usize) -> PathChoice {
        let next = if paths > 1 { vec![0; flows] } else { Vec::new() };
        PathChoice { paths, selection, next, drb: None }
    }

    /// DRB (`selection = "drb"`), contracting every `timer` cycles, for `flows` flows.
    pub fn with_drb(mut self, timer: Cycle, split: DrbSplit, flows: usize) -> PathChoice {
        if self.selection == PathSelection::Drb {
            self.drb = Some(Drb::new(self.paths, timer, flows).with_split(split));
        }
        self
    }

    /// Whether sources adapt their paths to congestion notifications (DRB).
    #[inline(always)]
    pub fn hears_notifications(&self) -> bool {
        self.drb.is_some()
    }

    /// A congestion notification for `flow`'s packet that took `path` arrived at `now`.
    pub fn notified(&mut self, flow: u32, path: u8, now: Cycle) {
        if let Some(d) = &mut self.drb {
            d.notified(flow, path, now);
        }
    }

    /// The path of the next message of `flow`, created at `now`.
    #[inline(always)]
    pub fn choose(&mut self, flow: u32, now: Cycle) -> u8 {
        if self.paths == 1 {
            0
        } else {
            self.choose_among(flow, now)
        }
    }

    /// `choose` where there is a choice (kept out of the message-creation path).
    #[inline(never)]
    fn choose_among(&mut self, flow: u32, now: Cycle) -> u8 {
        if let Some(d) = &mut self.drb {
            return d.choose(flow, now);
        }
        match self.selection {
            PathSelection::Drb => 0,
            PathSelection::ByFlow => (flow % self.paths) as u8,
            PathSelection::ByMessage => {
                let next = &mut self.next[flow as usize];
                let path = *next;
                *next = (path + 1) % self.paths;
                path as u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_take_the_paths_in_turn_or_by_flow() {
        let mut c = PathChoice::new(3, PathSelection::ByMessage, 2);
        assert_eq!(
            [c.choose(0, 0), c.choose(0, 0), c.choose(1, 0), c.choose(0, 0), c.choose(0, 0)],
            [0, 1, 0, 2, 0]
        );
        let mut c = PathChoice::new(3, PathSelection::ByFlow, 8);
        assert_eq!([c.choose(7, 0), c.choose(7, 0), c.choose(5, 0)], [1, 1, 2]);
        assert_eq!(PathChoice::new(1, PathSelection::ByMessage, 0).choose(9, 0), 0);
    }
}

//! Path choice at the source (DESIGN.md "Seams"): where the routing offers several paths
//! to a destination (`Routing::paths`, `[routing] multipath`), the source picks one per
//! message, and all the message's packets follow it (so they arrive in order). DRB's
//! adaptive choice (document 002 §2.1) will replace the fixed policies here.

use crate::config::PathSelection;

/// The sources' path choice.
#[derive(Clone, Debug)]
pub(crate) struct PathChoice {
    paths: u32,
    selection: PathSelection,
    /// Per flow: the path its next message takes (`ByMessage`).
    next: Vec<u32>,
}

impl PathChoice {
    /// `paths` paths per destination, chosen by `selection`, for `flows` flows.
    pub fn new(paths: u32, selection: PathSelection, flows: usize) -> PathChoice {
        let next = if paths > 1 { vec![0; flows] } else { Vec::new() };
        PathChoice { paths, selection, next }
    }

    /// The path of the next message of `flow`.
    #[inline]
    pub fn choose(&mut self, flow: u32) -> u8 {
        if self.paths == 1 {
            return 0;
        }
        match self.selection {
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
        assert_eq!([c.choose(0), c.choose(0), c.choose(1), c.choose(0), c.choose(0)], [0, 1, 0, 2, 0]);
        let mut c = PathChoice::new(3, PathSelection::ByFlow, 8);
        assert_eq!([c.choose(7), c.choose(7), c.choose(5)], [1, 1, 2]);
        assert_eq!(PathChoice::new(1, PathSelection::ByMessage, 0).choose(9), 0);
    }
}

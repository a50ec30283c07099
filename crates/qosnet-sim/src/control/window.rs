//! A fixed end-to-end injection window: each node may have at most `W` messages started
//! and not yet delivered (window flow control in its simplest form; the first agent on the
//! control-agent seam, and the shape the credit-based congestion control of document 000
//! §4.2 takes with per-consumer windows).
//!
//! The source learns of a delivery at once: an ideal acknowledgement, as a completion
//! queue entry seen by the consumer would be, without the network delay of an ACK packet.

/// Per node: messages in flight, against the window.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    window: u32,
    in_flight: Vec<u32>,
}

impl Window {
    pub fn new(window: u32, nodes: usize) -> Window {
        Window { window, in_flight: vec![0; nodes] }
    }

    pub fn may_start(&self, node: usize) -> bool {
        self.in_flight[node] < self.window
    }

    pub fn started(&mut self, node: usize) {
        self.in_flight[node] += 1;
    }

    /// Returns whether the node's window has room again.
    pub fn delivered(&mut self, node: usize) -> bool {
        self.in_flight[node] -= 1;
        self.in_flight[node] + 1 == self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_closes_at_w_and_opens_on_a_delivery() {
        let mut w = Window::new(2, 3);
        assert!(w.may_start(1));
        w.started(1);
        w.started(1);
        assert!(!w.may_start(1) && w.may_start(0), "per node");
        assert!(w.delivered(1), "room again");
        assert!(w.may_start(1));
        w.started(1);
        assert!(w.delivered(1) && !w.delivered(1), "only the delivery that opens it says so");
    }
}

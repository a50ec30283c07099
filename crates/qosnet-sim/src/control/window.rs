//! A fixed end-to-end injection window: each node may have at most `W` messages started
//! and not yet delivered (window flow control in its simplest form; the first agent on the
//! control-agent seam, and the shape the credit-based congestion control of document 000
//! §4.2 takes with per-consumer windows).
//!
//! The source learns of a delivery at once (an ideal acknowledgement), or `ack_delay`
//! cycles later, by an acknowledgement on the control channel.

use super::interface::{CongestionControl, Timer};
use super::Reply;
use crate::error::ConfigError;
use crate::links::Control;
use crate::units::{Clock, Cycle, Duration};

/// Per node: messages in flight, against the window.
#[derive(Clone, Debug)]
pub(crate) struct Window {
    window: u32,
    ack_delay: Cycle,
    in_flight: Vec<u32>,
}

impl Window {
    pub fn new(window: u32, nodes: usize, ack_delay: Cycle) -> Window {
        Window { window, ack_delay, in_flight: vec![0; nodes] }
    }

    /// Check `[endpoint] agent`'s `messages` and `ack_delay` and build the window for
    /// `nodes` nodes.
    pub fn build(
        messages: u32,
        ack_delay: Option<Duration>,
        nodes: usize,
        clock: &Clock,
    ) -> Result<Window, ConfigError> {
        if messages == 0 {
            return Err(ConfigError::new(
                "endpoint.agent.messages",
                "must be a whole number >= 1 (messages in flight per node), got 0",
            ));
        }
        let delay = super::control_delay("endpoint.agent.ack_delay", ack_delay, clock)?;
        Ok(Window::new(messages, nodes, delay))
    }

    /// A message of `flow` from `node` was delivered: acknowledged at once, or sent an
    /// acknowledgement.
    pub fn delivered(&mut self, node: usize, flow: u32) -> Reply {
        if self.ack_delay > 0 {
            return Reply::Send { delay: self.ack_delay, msg: Control::Ack { flow } };
        }
        if self.acknowledged(node) {
            Reply::Wake
        } else {
            Reply::Nothing
        }
    }

    pub fn may_start(&self, node: usize) -> bool {
        self.in_flight[node] < self.window
    }

    pub fn started(&mut self, node: usize) {
        self.in_flight[node] += 1;
    }

    /// A delivery of `node`'s was acknowledged. Returns whether its window has room again.
    pub fn acknowledged(&mut self, node: usize) -> bool {
        self.in_flight[node] -= 1;
        self.in_flight[node] + 1 == self.window
    }
}

impl CongestionControl for Window {
    fn control_delay(&self) -> Cycle {
        self.ack_delay
    }
    #[inline]
    fn may_start(&mut self, node: usize, _: u32, _: u32, _: Cycle, _: &mut Vec<Timer>) -> bool {
        Window::may_start(self, node)
    }
    #[inline]
    fn started(&mut self, node: usize, _: u32, _: Cycle, _: bool) {
        Window::started(self, node)
    }
    #[inline]
    fn delivered(&mut self, src: usize, flow: u32, _: Cycle) -> Reply {
        Window::delivered(self, src, flow)
    }
    fn on_control(&mut self, node: usize, msg: Control, _: Cycle) -> bool {
        matches!(msg, Control::Ack { .. }) && self.acknowledged(node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_closes_at_w_and_opens_on_a_delivery() {
        let mut w = Window::new(2, 3, 0);
        assert!(w.may_start(1));
        w.started(1);
        w.started(1);
        assert!(!w.may_start(1) && w.may_start(0), "per node");
        assert_eq!(w.delivered(1, 0), Reply::Wake, "room again");
        assert!(w.may_start(1));
        w.started(1);
        assert_eq!(w.delivered(1, 0), Reply::Wake);
        assert_eq!(w.delivered(1, 0), Reply::Nothing, "only the delivery that opens it wakes");
        let mut late = Window::new(1, 1, 30);
        late.started(0);
        assert_eq!(late.delivered(0, 4), Reply::Send { delay: 30, msg: Control::Ack { flow: 4 } });
        assert!(!late.may_start(0), "closed until the acknowledgement arrives");
        assert!(late.acknowledged(0) && late.may_start(0));
    }
}

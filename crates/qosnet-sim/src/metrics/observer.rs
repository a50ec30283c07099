//! The observers: every measurement the stages make goes through here, as an event
//! (a flit sent on a link, a message created or delivered, a frame expected), so the
//! stages say what happened and this module alone decides what is counted and when
//! (inside the measurement window, ARCHITECTURE.md "Traffic and metrics").

use super::deadline::StreamDeadlines;
use super::trace::{Hop, HopEvent, Tracing};
use super::Metrics;
use crate::config::TrafficClass;
use crate::flit::Message;
use crate::ids::{NodeId, PacketId};
use crate::unchecked::At;
use crate::units::Cycle;

/// What a run measures: the metrics, and each video stream's frame deadlines.
#[derive(Clone, Debug)]
pub(crate) struct Observers {
    pub metrics: Metrics,
    /// Per video stream: its frames' deadlines (document 003 §4.2); `deadline_of[flow]`
    /// indexes it (`u32::MAX` for other flows).
    pub deadlines: Vec<StreamDeadlines>,
    pub deadline_of: Vec<u32>,
    /// Whether the current cycle lies in the measurement window (set once per cycle).
    pub measuring: bool,
    /// What `[trace]` asked to record.
    pub trace: Tracing,
}

impl Observers {
    pub fn new(
        metrics: Metrics,
        deadlines: Vec<StreamDeadlines>,
        deadline_of: Vec<u32>,
        trace: Tracing,
    ) -> Observers {
        Observers { metrics, deadlines, deadline_of, measuring: false, trace }
    }

    /// A new cycle begins at `now`.
    #[inline(always)]
    pub fn begin_cycle(&mut self, now: Cycle) {
        self.measuring = self.metrics.in_window(now);
        if let Some(s) = &mut self.trace.series {
            if now >= s.next {
                s.sample(now, &self.metrics.nic_link_flits, &self.metrics.router_link_flits);
            }
        }
    }

    /// A watched flow's packet made a hop (`[trace] watch_flows`).
    #[inline]
    #[allow(clippy::too_many_arguments)] // one per column of the trace table
    pub fn hop(
        &mut self,
        cycle: Cycle,
        flow: u32,
        packet: PacketId,
        kind: Hop,
        at: usize,
        port: usize,
        vc: usize,
    ) {
        if let Some(w) = &mut self.trace.watch {
            w.record(HopEvent { cycle, flow, packet, kind, at: at as u32, port: port as u32, vc: vc as u32 });
        }
    }

    /// A router's output port `op` put a flit on its link.
    #[inline(always)]
    pub fn router_flit_sent(&mut self, op: usize) {
        if self.measuring {
            *self.metrics.router_link_flits.at_mut(op) += 1;
        }
    }

    /// Node `n` injected a flit.
    #[inline(always)]
    pub fn flit_injected(&mut self, n: usize) {
        if self.measuring {
            self.metrics.nodes.at_mut(n).flits_injected += 1;
            *self.metrics.nic_link_flits.at_mut(n) += 1;
        }
    }

    /// Node `n` accepted a data flit of `class` from `flow`.
    #[inline(always)]
    pub fn flit_accepted(&mut self, n: usize, class: TrafficClass, flow: u32) {
        if self.measuring {
            self.metrics.nodes.at_mut(n).flits_accepted += 1;
            self.metrics.classes.at_mut(class.index()).flits_accepted += 1;
            self.metrics.flows.at_mut(flow as usize).flits += 1;
        }
    }

    /// A measured message of `size` flits was created at `src` in mix phase `phase`.
    #[inline]
    pub fn message_offered(&mut self, phase: usize, class: TrafficClass, src: NodeId, size: u32) {
        let c = class.index();
        self.metrics.phases.at_mut(phase)[c].flits_offered += size as u64;
        self.metrics.classes.at_mut(c).messages_measured += 1;
        self.metrics.classes.at_mut(c).flits_offered += size as u64;
        self.metrics.nodes.at_mut(src.index()).flits_offered += size as u64;
    }

    /// Video flow `flow` cut frame `frame` into `messages` messages at `now`.
    #[inline]
    pub fn frame_expected(&mut self, flow: usize, frame: u64, now: Cycle, messages: u32, phase: usize) {
        let d = *self.deadline_of.at(flow) as usize;
        let measured = self.measuring;
        self.deadlines.at_mut(d).expect_frame(frame, now, messages, phase, measured);
    }

    /// A send completion (CQE) was posted for a message of `flow`.
    #[inline]
    pub fn send_completed(&mut self, flow: u32) {
        if self.measuring {
            self.metrics.flows[flow as usize].send_cqes += 1;
        }
    }

    /// A marked packet of `flow` reached its destination (`router::Marking`).
    #[inline]
    pub fn packet_marked(&mut self, flow: u32) {
        if self.measuring {
            self.metrics.flows.at_mut(flow as usize).marked_packets += 1;
        }
    }

    /// Message `msg` was delivered whole at `done`.
    #[inline]
    pub fn message_delivered(&mut self, msg: &Message, done: Cycle) {
        if self.measuring {
            let f = self.metrics.flows.at_mut(msg.flow as usize);
            f.messages += 1;
            f.latency_sum += done - msg.created;
            f.out_of_order += (msg.created < f.newest_created) as u64;
            f.newest_created = f.newest_created.max(msg.created);
        }
        if msg.frame != u32::MAX {
            let d = *self.deadline_of.at(msg.flow as usize) as usize;
            self.deadlines.at_mut(d).message_delivered(msg.frame as u64, done);
        }
        if msg.measured {
            self.metrics.delivered(msg.class, msg.src, msg.dst, msg.size, msg.created, msg.injected, done);
            let p = &mut self.metrics.phases.at_mut(msg.phase as usize)[msg.class.index()];
            p.messages += 1;
            p.flits += msg.size as u64;
            p.queueing_sum += msg.injected - msg.created;
            p.network_sum += done - msg.injected;
        }
    }
}

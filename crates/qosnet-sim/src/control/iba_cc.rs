//! InfiniBand congestion control at the channel adapters (IBA Annex A10; document 002 §3:
//! "Si el nodo destino recibe un paquete marcado, el agente de control de congestión de
//! dicho nodo solicita el envío de un mensaje de notificación ... con el bit BECN ...
//! La disminución en la inyección será más restrictiva dependiendo de la cantidad de
//! mensajes de notificación recibidos. ... Cada vez que transcurre un intervalo de tiempo
//! sin que se hayan recibido mensajes de notificación, se recupera el nivel normal de
//! inyección" — a destination that receives a marked packet sends a notification with
//! BECN to the source; the source throttles more the more notifications it receives; each
//! interval of the timer restores injection a step).
//!
//! The switch side marks packets FECN (`router/marking.rs`); the destination answers each
//! marked packet with a CNP, a real one-flit control-class packet (`endpoint/cnp.rs`). Here,
//! per flow (a QP of the specification's QP-based control): on a BECN the flow's index into
//! the CCT (`cct.rs`) rises by CCTI_Increase, up to CCTI_Limit; each CCTI_Timer period
//! lowers it by one, not below CCTI_Min (the timer runs freely from cycle 0, as the
//! specification's per-port timer, and is applied lazily when the index is read); a flow
//! waits the CCT entry's delay after each message start before the next. Counters: BECNs
//! received and cycles spent throttled (a message ready but held back), per flow.

use super::cct::Cct;
use super::interface::CcCounters;
use super::interface::{CongestionControl, HeldBack, Timer};
use crate::config::AgentConfig;
use crate::error::ConfigError;
use crate::units::{Clock, Cycle};

/// The CA congestion setting (IBA CACongestionEntry / OpenSM `cc_ca_cong_setting_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CaSetting {
    pub ccti_increase: u16,
    pub ccti_limit: u16,
    pub ccti_min: u16,
    /// CCTI_Timer, cycles (>= 1).
    pub ccti_timer: Cycle,
}

/// One flow's congestion control state.
#[derive(Clone, Copy, Debug)]
struct FlowCc {
    ccti: u16,
    /// The cycle `ccti` was last brought up to date.
    at: Cycle,
    /// When the flow last started a message (`Cycle::MAX`: never).
    last_start: Cycle,
    /// A ready message held back by the CCT's delay, and its retry.
    held: HeldBack,
}

/// IBA CC's CA side for every flow of a run.
#[derive(Clone, Debug)]
pub(crate) struct IbaCc {
    setting: CaSetting,
    cct: Cct,
    flows: Vec<FlowCc>,
    counters: Vec<CcCounters>,
}

impl IbaCc {
    /// Check `cfg` (`[endpoint] agent`, kind `iba_cc`) and build the agent; the CCT file
    /// it names is read through `files`.
    pub fn build(
        cfg: &AgentConfig,
        clock: &Clock,
        files: &crate::config::Files,
    ) -> Result<IbaCc, ConfigError> {
        let AgentConfig::IbaCc { ccti_increase, ccti_limit, ccti_min, ccti_timer, cct } = cfg else {
            unreachable!("IbaCc::build is called with IBA CC's configuration")
        };
        if *ccti_increase == 0 {
            return Err(ConfigError::new(
                "endpoint.agent.ccti_increase",
                "must be >= 1 (a BECN that raises the index by 0 never throttles), got 0",
            ));
        }
        let cct = Cct::build(cct, "endpoint.agent.cct", clock, super::MAX_CONTROL_DELAY, files)?;
        let ccti_limit = ccti_limit.unwrap_or(cct.last());
        if ccti_limit > cct.last() {
            return Err(ConfigError::new(
                "endpoint.agent.ccti_limit",
                format!("must be at most {} (the CCT's last index), got {ccti_limit}", cct.last()),
            ));
        }
        if *ccti_min > ccti_limit {
            return Err(ConfigError::new(
                "endpoint.agent.ccti_min",
                format!("must be at most ccti_limit ({ccti_limit}), got {ccti_min}"),
            ));
        }
        let ccti_timer = super::positive_cycles("endpoint.agent.ccti_timer", *ccti_timer, clock)?;
        let setting =
            CaSetting { ccti_increase: *ccti_increase, ccti_limit, ccti_min: *ccti_min, ccti_timer };
        Ok(IbaCc::new(setting, cct))
    }

    pub fn new(setting: CaSetting, cct: Cct) -> IbaCc {
        IbaCc { setting, cct, flows: Vec::new(), counters: Vec::new() }
    }

    /// State for `flows` flows.
    pub fn size_flows(&mut self, flows: usize) {
        let fresh =
            FlowCc { ccti: self.setting.ccti_min, at: 0, last_start: Cycle::MAX, held: HeldBack::NONE };
        self.flows = vec![fresh; flows];
        self.counters = vec![CcCounters::default(); flows];
    }

    /// The longest injection delay (the control channel must reach that far: retry timers).
    pub fn max_delay(&self) -> Cycle {
        self.cct.max_delay()
    }

    /// Flow `flow`'s CCT index at `now` (the timer's expiries since it was last brought up
    /// to date applied).
    pub fn ccti_at(&self, flow: u32, now: Cycle) -> u16 {
        let s = self.setting;
        let f = &self.flows[flow as usize];
        let expiries = now / s.ccti_timer - f.at / s.ccti_timer;
        (f.ccti as u64).saturating_sub(expiries).max(s.ccti_min as u64) as u16
    }

    /// Bring flow `flow`'s index up to date at `now`.
    fn ccti(&mut self, flow: u32, now: Cycle) -> u16 {
        let ccti = self.ccti_at(flow, now);
        let f = &mut self.flows[flow as usize];
        (f.ccti, f.at) = (ccti, now);
        ccti
    }

    /// When `flow` may start its next message, as of `now`.
    fn ready_at(&self, flow: u32, now: Cycle) -> Cycle {
        match self.flows[flow as usize].last_start {
            Cycle::MAX => 0,
            last => last + self.cct.delay(self.ccti_at(flow, now)),
        }
    }

    /// Whether `flow` may start a message at `now`.
    #[inline]
    pub fn may_start(&self, flow: u32, now: Cycle) -> bool {
        now >= self.ready_at(flow, now)
    }

    /// `flow` was held back at `now` (`may_start` said no): when to look again — a retry
    /// timer to set, unless one firing no later is pending already.
    pub fn refused(&mut self, flow: u32, now: Cycle) -> Option<Cycle> {
        let ready = self.ready_at(flow, now);
        self.flows[flow as usize].held.hold(now, ready)
    }

    /// `flow` started a message at `now`.
    pub fn started(&mut self, flow: u32, now: Cycle) {
        let f = &mut self.flows[flow as usize];
        f.last_start = now;
        self.counters[flow as usize].throttled_cycles += f.held.release(now);
    }

    /// A CNP with BECN for `flow` arrived at its source at `now`.
    pub fn becn(&mut self, flow: u32, now: Cycle) {
        let s = self.setting;
        let ccti = self.ccti(flow, now);
        self.flows[flow as usize].ccti = ccti.saturating_add(s.ccti_increase).min(s.ccti_limit);
        self.counters[flow as usize].becns += 1;
    }

    /// The destination sent a CNP for a FECN-marked packet of `flow`.
    pub fn cnp_sent(&mut self, flow: u32) {
        self.counters[flow as usize].cnps_sent += 1;
    }

    /// The counters of every flow.
    pub fn counters(&self) -> &[CcCounters] {
        &self.counters
    }
}

impl CongestionControl for IbaCc {
    fn size_flows(&mut self, flows: usize) {
        IbaCc::size_flows(self, flows)
    }
    fn control_delay(&self) -> Cycle {
        self.max_delay()
    }
    #[inline]
    fn may_start(&mut self, _: usize, flow: u32, _: u32, now: Cycle, _: &mut Vec<Timer>) -> bool {
        IbaCc::may_start(self, flow, now)
    }
    #[inline]
    fn started(&mut self, _: usize, flow: u32, now: Cycle, _: bool) {
        IbaCc::started(self, flow, now)
    }
    fn reacts_to_marks(&self) -> bool {
        true
    }
    /// Every FECN-marked packet is answered with a CNP (Annex A10).
    fn on_mark(&mut self, flow: u32, _: Cycle) -> bool {
        self.cnp_sent(flow);
        true
    }
    fn on_notification(&mut self, flow: u32, now: Cycle) {
        self.becn(flow, now)
    }
    fn held_back(&mut self, _: usize, flow: u32, now: Cycle) -> Option<Cycle> {
        self.refused(flow, now)
    }
    fn counters(&self) -> Option<&[CcCounters]> {
        Some(IbaCc::counters(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn agent(increase: u16, limit: u16, min: u16, timer: Cycle) -> IbaCc {
        let setting =
            CaSetting { ccti_increase: increase, ccti_limit: limit, ccti_min: min, ccti_timer: timer };
        let mut a = IbaCc::new(setting, Cct::of(vec![0, 10, 20, 30, 40, 50]));
        a.size_flows(3);
        a
    }

    #[test]
    fn a_becn_raises_the_index_by_the_increase_and_the_timer_lowers_it_by_one() {
        // CCTI_Increase 2, CCTI_Timer 100 cycles (expiring at 100, 200, ...).
        let mut a = agent(2, 5, 0, 100);
        a.becn(1, 50);
        assert_eq!(a.ccti(1, 50), 2, "one BECN: 0 + CCTI_Increase");
        assert_eq!(a.ccti(0, 50), 0, "per flow");
        assert_eq!(a.ccti(1, 99), 2);
        assert_eq!(a.ccti(1, 100), 1, "the first expiry");
        assert_eq!(a.ccti(1, 199), 1);
        assert_eq!(a.ccti(1, 200), 0, "back to 0 after the second");
        assert_eq!(a.ccti(1, 5000), 0, "never below CCTI_Min");
        for t in 0..4 {
            a.becn(2, 10 + t);
        }
        assert_eq!(a.ccti(2, 20), 5, "capped at CCTI_Limit");
        assert_eq!(a.counters()[2].becns, 4);
        // CCTI_Min 1: the index starts there and the timer stops there.
        let mut b = agent(1, 5, 1, 10);
        assert_eq!(b.ccti(0, 0), 1);
        b.becn(0, 0);
        assert_eq!((b.ccti(0, 9), b.ccti(0, 10), b.ccti(0, 1000)), (2, 1, 1));
    }

    #[test]
    fn the_injection_delay_is_the_cct_entry_of_the_index() {
        let mut a = agent(3, 5, 0, 1000);
        assert!(a.may_start(0, 0));
        a.started(0, 0);
        assert!(a.may_start(0, 1), "entry 0 delays nothing");
        a.started(0, 1);
        a.becn(0, 2);
        // CCTI 3: entry 3 delays 30 cycles after the start at 1.
        assert!(!a.may_start(0, 5) && a.may_start(0, 31) && !a.may_start(0, 30));
        assert_eq!(a.refused(0, 5), Some(31), "a retry timer at 31");
        assert_eq!(a.refused(0, 6), None, "the pending timer serves");
        a.started(0, 31);
        assert_eq!(a.counters()[0].throttled_cycles, 26, "held from 5, started at 31");
        // After a timer expiry (1000) the index is 2: 20 cycles.
        assert!(a.may_start(0, 1005));
        a.started(0, 1005);
        assert!(!a.may_start(0, 1024));
        assert_eq!(a.refused(0, 1024), Some(1025));
    }

    proptest! {
        /// Whatever BECNs arrive when, the index stays in [CCTI_Min, CCTI_Limit], each BECN
        /// raises it by at most CCTI_Increase, and between BECNs it only falls, one step
        /// per timer expiry.
        #[test]
        fn the_index_stays_in_its_bounds(
            increase in 0u16..4, min in 0u16..3, timer in 1u64..50,
            events in prop::collection::vec((0u64..200, any::<bool>()), 1..60),
        ) {
            let mut a = agent(increase, 5, min, timer);
            let mut now = 0;
            let mut last = a.ccti_at(0, 0);
            for (gap, becn) in events {
                let before = a.ccti_at(0, now + gap);
                prop_assert!(before <= last, "no BECN: it only falls");
                prop_assert!((last - before) as u64 <= (now + gap) / timer - now / timer, "a step per expiry");
                now += gap;
                if becn {
                    a.becn(0, now);
                }
                let after = a.ccti_at(0, now);
                prop_assert!((min..=5).contains(&after));
                prop_assert!(after <= before + increase);
                if !becn {
                    prop_assert_eq!(after, before);
                }
                last = after;
            }
        }
    }
}

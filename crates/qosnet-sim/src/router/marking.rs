//! The switch output hook: what happens as a flit enters an output VC buffer (document 003
//! §3's stage 5). Congestion detection lives here — a switch marks the packets that find an
//! output buffer filling up (explicit congestion notification's switch side: InfiniBand
//! CC's FECN, document 002; the buffer counts of document 000's ALO and Self-Tuned) — and
//! the endpoints' agents react to the marks. An output VC buffer fills when the buffer
//! downstream has no room for its flits (no credits): with packets no longer than the
//! input buffers, wormhole back-pressure acts through VC allocation instead, and buffers
//! stay nearly empty. Unused, the hook costs one predictable branch per flit.

use crate::config::MarkingConfig;
use crate::error::ConfigError;
use crate::ids::PacketId;

/// The marking of a run's switch outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marking {
    None,
    /// Mark when the output VC buffer holds at least this many flits after the flit enters.
    Threshold(u32),
    /// InfiniBand CC's switch (IBA Annex A10's SwitchCongestionSetting, document 002 §4,
    /// Fig. 5): a packet of at least `packet_size` flits that finds its output VL buffer
    /// holding more than `above` flits is eligible; one in every `marking_rate + 1`
    /// eligible packets of a port is marked FECN (`IbaCounters`).
    IbaCc {
        above: u32,
        packet_size: u32,
        marking_rate: u16,
    },
}

/// IBA CC's per-port marking state: eligible packets still to let pass unmarked, and per
/// output VL the last packet counted (a packet is eligible once per port, whichever of
/// its flits finds the buffer above the threshold).
#[derive(Clone, Debug, Default)]
pub(crate) struct IbaCounters {
    to_skip: Vec<u16>,
    counted: Vec<PacketId>,
}

impl IbaCounters {
    /// Counters for `ports` ports and `lanes` output VL records in all (none unless IBA CC
    /// marks).
    pub fn new(marking: Marking, ports: usize, lanes: usize) -> IbaCounters {
        match marking {
            Marking::IbaCc { .. } => {
                IbaCounters { to_skip: vec![0; ports], counted: vec![PacketId::NONE; lanes] }
            }
            _ => IbaCounters::default(),
        }
    }
}

/// The occupancy above which IBA CC threshold `t` (1..=15) marks, for VL buffers of
/// `depth` flits. The specification leaves the mapping to the switch; ours spreads the
/// sixteen levels evenly over the buffer: threshold t marks above (16 - t)/16 of it,
/// rounded up (15, most restrictive: above a sixteenth; 1, loosest: above 15/16).
pub(crate) fn iba_threshold_flits(t: u8, depth: u32) -> u32 {
    (depth * (16 - t as u32)).div_ceil(16)
}

impl Marking {
    /// Check `cfg` (`[router] marking`) against output buffers of `output_depth` flits.
    pub fn build(cfg: Option<&MarkingConfig>, output_depth: u32) -> Result<Marking, ConfigError> {
        Ok(match cfg {
            None => Marking::None,
            Some(&MarkingConfig::Threshold { flits }) => {
                if flits == 0 || flits > output_depth {
                    return Err(ConfigError::new(
                        "router.marking.flits",
                        format!("must be a whole number in 1..={output_depth} (router.output_buffer), got {flits}"),
                    ));
                }
                Marking::Threshold(flits)
            }
            Some(&MarkingConfig::IbaCc { threshold, packet_size, marking_rate }) => {
                if threshold > 15 {
                    return Err(ConfigError::new(
                        "router.marking.threshold",
                        format!("must be a whole number in 0..=15 (0: never mark, 15: most restrictive), got {threshold}"),
                    ));
                }
                if threshold == 0 {
                    return Ok(Marking::None);
                }
                let above = iba_threshold_flits(threshold, output_depth);
                Marking::IbaCc { above, packet_size, marking_rate }
            }
        })
    }

    /// Whether the flit of `packet` (`size` flits; `tail`: its last) entering output VL
    /// `lane` (of port `port`), which then holds `occupancy` flits, marks its packet. For
    /// IBA CC this counts the packet's eligibility against the port's marking rate.
    #[allow(clippy::too_many_arguments)] // the flit's place, packet and buffer
    #[inline(always)]
    pub fn mark(
        self,
        counters: &mut IbaCounters,
        port: usize,
        lane: usize,
        packet: PacketId,
        tail: bool,
        size: impl FnOnce() -> u32,
        occupancy: u32,
    ) -> bool {
        let Marking::IbaCc { above, packet_size, marking_rate } = self else {
            return self.marks(occupancy);
        };
        let eligible = occupancy > above && counters.counted[lane] != packet && size() >= packet_size;
        // (a packet id is a slab slot, reused once the packet is delivered: forget it at its tail)
        counters.counted[lane] = if tail {
            PacketId::NONE
        } else if eligible {
            packet
        } else {
            counters.counted[lane]
        };
        if !eligible {
            return false;
        }
        // Mark, then let the next `marking_rate` eligible packets of the port pass.
        let skip = &mut counters.to_skip[port];
        if *skip == 0 {
            *skip = marking_rate;
            true
        } else {
            *skip -= 1;
            false
        }
    }

    /// Whether a flit that leaves its output VC buffer holding `occupancy` flits marks its
    /// packet.
    #[inline(always)]
    pub fn marks(self, occupancy: u32) -> bool {
        match self {
            Marking::None => false,
            Marking::Threshold(flits) => occupancy >= flits,
            Marking::IbaCc { above, .. } => occupancy > above,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_marks_from_its_occupancy_on() {
        let m = Marking::build(Some(&MarkingConfig::Threshold { flits: 3 }), 8).unwrap();
        assert!(!m.marks(2) && m.marks(3) && m.marks(8));
        assert!(!Marking::None.marks(u32::MAX));
        let e = Marking::build(Some(&MarkingConfig::Threshold { flits: 9 }), 8).unwrap_err();
        assert!(e.to_string().contains("router.marking.flits") && e.to_string().contains("1..=8"), "{e}");
    }

    fn iba(threshold: u8, packet_size: u32, marking_rate: u16) -> Result<Marking, ConfigError> {
        Marking::build(Some(&MarkingConfig::IbaCc { threshold, packet_size, marking_rate }), 16)
    }

    #[test]
    fn iba_thresholds_spread_over_the_buffer() {
        // 16-flit VL buffers: threshold t marks above 16 - t flits.
        assert_eq!(iba_threshold_flits(15, 16), 1);
        assert_eq!(iba_threshold_flits(8, 16), 8);
        assert_eq!(iba_threshold_flits(1, 16), 15);
        // 40 flits: 15 marks above 3 (2.5 rounded up), 1 above 38 (37.5).
        assert_eq!(iba_threshold_flits(15, 40), 3);
        assert_eq!(iba_threshold_flits(1, 40), 38);
        assert_eq!(iba(0, 0, 0).unwrap(), Marking::None, "threshold 0 never marks");
        let e = iba(16, 0, 0).unwrap_err().to_string();
        assert!(e.contains("router.marking.threshold") && e.contains("0..=15") && e.contains("16"), "{e}");
    }

    #[test]
    fn iba_marks_exactly_above_the_threshold_once_per_packet() {
        let m = iba(8, 0, 0).unwrap();
        let mut c = IbaCounters::new(m, 2, 8);
        let p = |i| PacketId(i);
        assert!(!m.mark(&mut c, 0, 1, p(1), false, || 4, 8), "at the threshold: not above it");
        assert!(m.mark(&mut c, 0, 1, p(1), false, || 4, 9), "one flit above it");
        assert!(!m.mark(&mut c, 0, 1, p(1), true, || 4, 10), "the packet was counted already");
        assert!(m.mark(&mut c, 0, 1, p(1), false, || 4, 16), "after its tail the id is a new packet's");
        assert!(m.mark(&mut c, 0, 1, p(2), false, || 4, 16));
    }

    #[test]
    fn iba_marking_rate_and_packet_size() {
        // Marking rate 2: one in every three eligible packets of a port, the first marked.
        let m = iba(15, 3, 2).unwrap();
        let mut c = IbaCounters::new(m, 2, 8);
        let marks: Vec<bool> = (0..7).map(|i| m.mark(&mut c, 1, 5, PacketId(i), false, || 3, 2)).collect();
        assert_eq!(marks, [true, false, false, true, false, false, true]);
        assert!(m.mark(&mut c, 0, 0, PacketId(9), false, || 3, 2), "ports count apart");
        assert!(
            !m.mark(&mut c, 0, 1, PacketId(10), false, || 2, 16),
            "shorter than packet_size: never eligible"
        );
    }
}

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

/// The marking of a run's switch outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marking {
    None,
    /// Mark when the output VC buffer holds at least this many flits after the flit enters.
    Threshold(u32),
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
        })
    }

    /// Whether a flit that leaves its output VC buffer holding `occupancy` flits marks its
    /// packet.
    #[inline(always)]
    pub fn marks(self, occupancy: u32) -> bool {
        match self {
            Marking::None => false,
            Marking::Threshold(flits) => occupancy >= flits,
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
}

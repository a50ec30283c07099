//! The switch output hook: what happens as a flit enters an output VC buffer (document 003
//! §3's stage 5). Congestion detection lives here — a switch marks the packets that find an
//! output buffer filling up (explicit congestion notification's switch side: InfiniBand
//! CC's FECN, document 002; the buffer counts of document 000's ALO and Self-Tuned) — and
//! the endpoints' agents react to the marks. Unused, the hook is compiled out of the
//! cycle loop (`HOOK`), and where it is compiled in for tracing alone it costs one
//! predictable branch per flit.
//!
//! What "port VL in congestion" counts (IBA Annex A10.2.1: a switch port's VL is in
//! congestion when its buffered data for that VL is above the threshold). An output VC
//! buffer here fills only when the buffer downstream has no room (no credits); contention
//! among inputs for one output port waits in the input buffers, where our switch, like
//! most InfiniBand switches, keeps its buffering. Reading the annex's "buffer" as the
//! output VC buffer alone, a 4-ary 3-tree under bit reversal was never marked while its
//! inputs queued for the same port. So for IBA CC the congestion state of (output port p,
//! VL v) is everything queued for it in this switch: the flits of v's output buffer, plus
//! the flits in input VCs whose packet is routed to p and either holds v or is waiting
//! for a VC of p its route allows v among (`port_queue`); the threshold is relative to
//! the buffering one VL has through the switch, an input VL buffer plus an output one.
//! (The flits of a waiting header count against each VL it may take: before VC
//! allocation it has none yet, and any of them may be the one it is stuck behind. That
//! is aggressive — a header allowed three VLs counts three times — so `waiting =
//! "held_vl"` counts an input VC only once it holds its output VL, as a switch whose
//! packets have one VL per hop (IBA's SL-to-VL mapping) would.)
//! That sum is kept as flits come and go (`PortQueues`): an input lane counts toward the
//! (port, VLs) of its state — the VL it holds, or the VLs its waiting header may take —
//! and moves its flits when the state changes (`Routers::requeue`, `port_queue.rs`), so a
//! flit's look is a read, where a scan of the router's input VCs per flit had cost IBA CC's
//! runs a third of their instructions. The invariant checks compare it with the scan
//! (`port_queue`).
//! A port VL whose output buffer waits for credits is a victim of congestion further on,
//! not its root; IBA's Victim_Mask decides whether it marks (`victims = "not_marked"`:
//! only ports with credits mark, so flows that merely pass through the tree of
//! congestion are not throttled for it).
//! `Threshold` (document 000's fixed buffer threshold) keeps the output buffer alone.

use super::params::Params;
use crate::config::{MarkingConfig, VictimMarking, WaitingHeaders};
use crate::error::ConfigError;
use crate::ids::PacketId;
use crate::sched::bits;
use crate::unchecked::At;

/// The marking of a run's switch outputs: the switch side's one interface (`build`, then
/// `mark` per flit entering an output VC buffer, with its per-router state `MarkState`),
/// statically dispatched on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Marking {
    None,
    /// Mark when the output VC buffer holds at least this many flits after the flit enters.
    Threshold(u32),
    /// InfiniBand CC's switch (IBA Annex A10's SwitchCongestionSetting, document 002 §4,
    /// Fig. 5): a packet of at least `packet_size` flits that finds more than `above`
    /// flits queued for its output port and VL (`port_queue`) is eligible; one in every `marking_rate + 1`
    /// eligible packets of a port is marked FECN (`MarkState`).
    IbaCc {
        above: u32,
        packet_size: u32,
        marking_rate: u16,
        waiting: WaitingHeaders,
        victims: VictimMarking,
    },
    /// RED-style probabilistic ECN marking (`config::MarkingConfig::Red`; DCQCN's switch,
    /// Zhu et al., SIGCOMM 2015, §3): a packet's header that finds `q` flits queued for its
    /// output port and VL (the port-and-VL count, waiting headers included) marks it with
    /// probability 0 for q <= `kmin`, `pmax` (q − kmin)/(kmax − kmin) up to `kmax`, 1 from
    /// `kmax` on; `pmax` as a fraction of 2^32, drawn per output port from the master seed.
    Red {
        kmin: u32,
        kmax: u32,
        pmax: u64,
    },
}

/// One in 2^32: RED's probabilities are compared with a 32-bit draw.
const P_ONE: f64 = 4_294_967_296.0;
/// The stream of RED's draws among the master seed's (`seed.rs`), per output port beside it.
const RED_STREAM: u64 = 0x5245_4400_0000_0000;

/// The marking's per-router state: IBA CC's per port eligible packets still to let pass
/// unmarked and per output VL the last packet counted (a packet is eligible once per port,
/// whichever of its flits finds the buffer above the threshold); RED's draws per output
/// port (a seed and a count, so the draws do not depend on the order routers are visited).
#[derive(Clone, Debug, Default)]
pub(crate) struct MarkState {
    to_skip: Vec<u16>,
    counted: Vec<PacketId>,
    port_seed: Vec<u64>,
    draws: Vec<u64>,
}

impl MarkState {
    /// State for `ports` ports and `lanes` output VL records in all (none unless IBA CC or
    /// RED marks); RED's draws from master seed `seed`.
    pub fn new(marking: Marking, ports: usize, lanes: usize, seed: u64) -> MarkState {
        match marking {
            Marking::IbaCc { .. } => MarkState {
                to_skip: vec![0; ports],
                counted: vec![PacketId::NONE; lanes],
                ..Default::default()
            },
            Marking::Red { .. } => MarkState {
                port_seed: (0..ports as u64).map(|p| crate::seed::mix_seed(seed, RED_STREAM + p)).collect(),
                draws: vec![0; ports],
                ..Default::default()
            },
            _ => MarkState::default(),
        }
    }

    /// Output port `port`'s next uniform draw in [0, 2^32).
    #[inline]
    fn draw(&mut self, port: usize) -> u64 {
        let n = &mut self.draws[port];
        *n += 1;
        crate::seed::mix_seed(self.port_seed[port], *n) >> 32
    }
}

/// IBA CC's queues per (output port, VL) of every router (module comment), kept only
/// when IBA CC marks (`on`; empty vectors otherwise).
#[derive(Clone, Debug, Default)]
pub(crate) struct PortQueues {
    pub on: bool,
    /// Whether a header waiting for an output VC counts (against every VL it may take).
    pub count_waiting: bool,
    /// Per output lane (`Params::lane_index(op, ov)`): the input flits queued for it.
    queued: Vec<u32>,
    /// Per input lane: the output port (global) and the output lanes (bits) its flits
    /// count toward now.
    target: Vec<(u32, u32)>,
}

impl PortQueues {
    /// Queues for `lanes` input and output lanes in all, kept if `marking` is IBA CC's.
    pub fn new(marking: Marking, lanes: usize) -> PortQueues {
        match marking {
            Marking::IbaCc { .. } | Marking::Red { .. } => PortQueues {
                on: true,
                // (RED counts as IBA CC does by default: what queues for the port in an
                // input-buffered switch is what an output-queued one holds at its egress)
                count_waiting: matches!(
                    marking,
                    Marking::IbaCc { waiting: WaitingHeaders::EveryVl, .. } | Marking::Red { .. }
                ),
                queued: vec![0; lanes],
                target: vec![(0, 0); lanes],
            },
            _ => PortQueues::default(),
        }
    }

    /// The input flits queued for output lane `ovc`.
    #[inline]
    pub fn queued(&self, ovc: usize) -> u32 {
        *self.queued.at(ovc)
    }

    /// A flit entered input lane `ivc`.
    #[inline]
    pub fn flit_in(&mut self, p: &Params, ivc: usize) {
        self.count(p, *self.target.at(ivc), 1, true);
    }

    /// A flit left input lane `ivc`.
    #[inline]
    pub fn flit_out(&mut self, p: &Params, ivc: usize) {
        self.count(p, *self.target.at(ivc), 1, false);
    }

    /// Input lane `ivc`, holding `len` flits, counts toward `target` from now on.
    pub(super) fn retarget(&mut self, p: &Params, ivc: usize, len: u32, target: (u32, u32)) {
        let old = std::mem::replace(self.target.at_mut(ivc), target);
        self.count(p, old, len, false);
        self.count(p, target, len, true);
    }

    /// Add (or take) `flits` to the queues of output port `op`'s lanes `lanes`.
    #[inline(always)]
    fn count(&mut self, p: &Params, (op, lanes): (u32, u32), flits: u32, add: bool) {
        for ov in bits(lanes) {
            let q = self.queued.at_mut(p.lane_index(op as usize, ov));
            *q = if add { *q + flits } else { *q - flits };
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
    /// Check `cfg` (`[router] marking`) against input and output VC buffers of
    /// `input_depth` and `output_depth` flits (of `flit_bits` bits).
    pub fn build(
        cfg: Option<&MarkingConfig>,
        input_depth: u32,
        output_depth: u32,
        flit_bits: u32,
    ) -> Result<Marking, ConfigError> {
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
            Some(&MarkingConfig::IbaCc { threshold, packet_size, marking_rate, waiting, victims }) => {
                if threshold > 15 {
                    return Err(ConfigError::new(
                        "router.marking.threshold",
                        format!("must be a whole number in 0..=15 (0: never mark, 15: most restrictive), got {threshold}"),
                    ));
                }
                if threshold == 0 {
                    return Ok(Marking::None);
                }
                // (relative to the VL's buffering through the switch: module comment)
                let above = iba_threshold_flits(threshold, input_depth + output_depth);
                Marking::IbaCc { above, packet_size, marking_rate, waiting, victims }
            }
            Some(&MarkingConfig::Red { kmin, kmax, pmax }) => {
                // (the queue a flit of this VL can find: its input and output buffers)
                let depth = input_depth + output_depth;
                let flits = |b: crate::units::ByteSize| {
                    b.0.saturating_mul(8).div_ceil(flit_bits as u64).min(u32::MAX as u64) as u32
                };
                let (lo, hi) = (flits(kmin), flits(kmax));
                if hi <= lo || lo >= depth {
                    return Err(ConfigError::new(
                        "router.marking.kmin",
                        format!("must be below kmax and below a VL's buffering ({depth} flits of {} bytes: router.input_buffer + router.output_buffer); got kmin {lo} and kmax {hi} flits", flit_bits / 8),
                    ));
                }
                if !(pmax > 0.0 && pmax <= 1.0) {
                    return Err(ConfigError::new(
                        "router.marking.pmax",
                        format!("must be in (0, 1], got {pmax}"),
                    ));
                }
                Marking::Red { kmin: lo, kmax: hi, pmax: (pmax * P_ONE).round() as u64 }
            }
        })
    }

    /// Whether the flit of `packet` (`size` flits; `tail`: its last) entering output VL
    /// `lane` (of port `port`), which then holds `occupancy` flits, marks its packet. For
    /// IBA CC this counts the packet's eligibility against the port's marking rate, and
    /// the occupancy that matters is `queued()`, all that waits for the port and VL
    /// (`port_queue`), counted only while the packet is not yet eligible; `credited`: the
    /// output VL has credits (a root, not a victim).
    #[allow(clippy::too_many_arguments)] // the flit's place, packet and buffer
    #[inline(always)]
    pub fn mark(
        self,
        counters: &mut MarkState,
        port: usize,
        lane: usize,
        packet: PacketId,
        (head, tail): (bool, bool),
        size: impl FnOnce() -> u32,
        occupancy: u32,
        queued: impl FnOnce() -> u32,
        credited: bool,
    ) -> bool {
        if let Marking::Red { kmin, kmax, pmax } = self {
            return head && red(counters, port, queued(), kmin, kmax, pmax);
        }
        let Marking::IbaCc { above, packet_size, marking_rate, victims, .. } = self else {
            return self.marks(occupancy);
        };
        let eligible = counters.counted[lane] != packet
            && (credited || victims == VictimMarking::Marked)
            && (occupancy > above || queued() > above)
            && size() >= packet_size;
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
            Marking::Red { kmax, .. } => occupancy >= kmax,
        }
    }
}

/// RED's decision for a header that finds `q` flits queued (`Marking::Red`).
#[inline]
fn red(state: &mut MarkState, port: usize, q: u32, kmin: u32, kmax: u32, pmax: u64) -> bool {
    if q <= kmin {
        return false;
    }
    if q >= kmax {
        return true;
    }
    let p = pmax * (q - kmin) as u64 / (kmax - kmin) as u64;
    state.draw(port) < p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::router::port_queue::port_queue;

    #[test]
    fn a_threshold_marks_from_its_occupancy_on() {
        let m = Marking::build(Some(&MarkingConfig::Threshold { flits: 3 }), 8, 8, 128).unwrap();
        assert!(!m.marks(2) && m.marks(3) && m.marks(8));
        assert!(!Marking::None.marks(u32::MAX));
        let e = Marking::build(Some(&MarkingConfig::Threshold { flits: 9 }), 8, 8, 128).unwrap_err();
        assert!(e.to_string().contains("router.marking.flits") && e.to_string().contains("1..=8"), "{e}");
    }

    fn iba(threshold: u8, packet_size: u32, marking_rate: u16) -> Result<Marking, ConfigError> {
        Marking::build(
            Some(&MarkingConfig::IbaCc {
                threshold,
                packet_size,
                marking_rate,
                waiting: WaitingHeaders::EveryVl,
                victims: VictimMarking::Marked,
            }),
            8,
            8,
            128,
        )
    }

    #[test]
    fn iba_thresholds_spread_over_the_buffer() {
        // 8-flit input and output VL buffers (16 through the switch): threshold t marks
        // above 16 - t flits.
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
        let mut c = MarkState::new(m, 2, 8, 0);
        let p = |i| PacketId(i);
        assert!(
            !m.mark(&mut c, 0, 1, p(1), (false, false), || 4, 8, || 0, true),
            "at the threshold: not above it"
        );
        assert!(m.mark(&mut c, 0, 1, p(1), (false, false), || 4, 9, || 0, true), "one flit above it");
        assert!(
            !m.mark(&mut c, 0, 1, p(1), (false, true), || 4, 10, || 0, true),
            "the packet was counted already"
        );
        assert!(
            m.mark(&mut c, 0, 1, p(1), (false, false), || 4, 16, || 0, true),
            "after its tail the id is a new packet's"
        );
        assert!(m.mark(&mut c, 0, 1, p(2), (false, false), || 4, 16, || 0, true));
        // Out of credits (a victim): marks only where the Victim_Mask bit is set.
        assert!(m.mark(&mut c, 0, 2, p(3), (false, false), || 4, 16, || 0, false));
        let Marking::IbaCc { above, packet_size, marking_rate, waiting, .. } = m else { panic!() };
        let roots =
            Marking::IbaCc { above, packet_size, marking_rate, waiting, victims: VictimMarking::NotMarked };
        let mut c = MarkState::new(roots, 2, 8, 0);
        assert!(
            !roots.mark(&mut c, 0, 1, p(4), (false, false), || 4, 16, || 0, false),
            "a victim: not eligible"
        );
        assert!(roots.mark(&mut c, 0, 1, p(4), (false, false), || 4, 16, || 0, true), "with credits: a root");
    }

    #[test]
    fn iba_marking_rate_and_packet_size() {
        // Marking rate 2: one in every three eligible packets of a port, the first marked.
        let m = iba(15, 3, 2).unwrap();
        let mut c = MarkState::new(m, 2, 8, 0);
        let marks: Vec<bool> =
            (0..7).map(|i| m.mark(&mut c, 1, 5, PacketId(i), (false, false), || 3, 2, || 0, true)).collect();
        assert_eq!(marks, [true, false, false, true, false, false, true]);
        assert!(m.mark(&mut c, 0, 0, PacketId(9), (false, false), || 3, 2, || 0, true), "ports count apart");
        assert!(
            !m.mark(&mut c, 0, 1, PacketId(10), (false, false), || 2, 16, || 0, true),
            "shorter than packet_size: never eligible"
        );
    }

    /// A switch whose output buffer is empty (the next hop always has room) but whose
    /// inputs queue for one output port: IBA CC marks once the queue for the port's VL is
    /// above the threshold, counting exactly the input VCs routed to that port and VL.
    #[test]
    fn contention_only_at_the_port_marks_exactly_above_the_threshold() {
        use crate::flit::Flit;
        // One 4-port router, 2 VCs, 4-flit input and output buffers.
        let toml = "[topology]\nkind = \"star\"\nports = 4\n\
                    [router]\nvcs = 2\ninput_buffer = 4\noutput_buffer = 4\n\
                    [[traffic]]\nload = 0.1\n";
        let mut sim = crate::Simulation::from_toml(toml, None).unwrap();
        let rs = &mut sim.routers;
        // Queue `flits` flits in lane `v` of input port `ip`, its packet routed to `out`
        // and allowed `route_vcs`.
        let mut fill = |ip: usize, v: usize, flits: u32, out: u16, route_vcs: u32| {
            let i = rs.p.lane_index(ip, v);
            let s = &mut rs.in_vc[i];
            for _ in 0..flits {
                rs.inbuf.push(&mut s.buf, i, Flit::default());
            }
            (s.out_port, s.route_vcs) = (out, route_vcs);
            i
        };
        // Port 1 VC 0 holds output VC 0 of port 0 (3 flits queued).
        let held = fill(1, 0, 3, 0, 0b11);
        // Port 2 VC 0 waits for a VC of port 0, either VC (4 flits).
        fill(2, 0, 4, 0, 0b11);
        // Port 3 VC 1 waits for port 0 but may take VC 1 only (2 flits): not VL 0's.
        fill(3, 1, 2, 0, 0b10);
        // Port 2 VC 1 holds output VC 0 of port 3 (4 flits): another port's queue.
        let other = fill(2, 1, 4, 3, 0b11);
        rs.in_vc[held].out_vc = 0;
        rs.in_vc[other].out_vc = 0;
        let active = vec![0, 0b01, 0b10, 0];
        let alloc = [0u32, 0, 0b01, 0];
        let parked = [0u32, 0, 0, 0b10];
        let queue = |out, ov| {
            let waiting = |ip: usize| alloc[ip] | parked[ip];
            port_queue(&rs.p, &rs.in_vc, 0..4, &active, waiting, (out, ov), 0)
        };
        assert_eq!(queue(0, 0), 3 + 4, "the holder of VL 0 and the header that may take it");
        assert_eq!(queue(0, 1), 4 + 2, "the two headers that may take VL 1");
        assert_eq!(queue(3, 0), 4);
        assert_eq!(queue(1, 0), 0);
        // Through the switch a VL has 4 + 4 flits of buffer. Threshold 4 marks above
        // 8 * 12/16 = 6 flits, threshold 2 above 7: the 7 queued for (port 0, VL 0) are
        // one above the first and at the second, with the output buffer itself empty.
        let q = queue(0, 0);
        for (threshold, marks) in [(4, true), (2, false)] {
            let m = Marking::build(
                Some(&MarkingConfig::IbaCc {
                    threshold,
                    packet_size: 0,
                    marking_rate: 0,
                    waiting: WaitingHeaders::EveryVl,
                    victims: VictimMarking::Marked,
                }),
                4,
                4,
                128,
            )
            .unwrap();
            let mut c = MarkState::new(m, 4, 8, 0);
            assert_eq!(
                m.mark(&mut c, 0, 0, PacketId(1), (false, false), || 4, 0, || q, true),
                marks,
                "threshold {threshold}"
            );
        }
    }

    /// A hot spot on a 4x4 mesh with IBA CC marking: counting waiting headers or not
    /// (`held_vl`), the kept queues equal the scan every 50 cycles (the invariant check).
    fn red(kmin: u64, kmax: u64, pmax: f64) -> Result<Marking, ConfigError> {
        use crate::units::ByteSize;
        Marking::build(
            Some(&MarkingConfig::Red { kmin: ByteSize(kmin), kmax: ByteSize(kmax), pmax }),
            16,
            16,
            128,
        )
    }

    #[test]
    fn red_thresholds_are_bytes_in_flits_and_bad_ones_are_refused() {
        // 16-byte flits: 128 B = 8 flits, 500 B = 31.25 → 32 flits; pmax 1/4 of 2^32.
        assert_eq!(red(128, 500, 0.25).unwrap(), Marking::Red { kmin: 8, kmax: 32, pmax: 1 << 30 });
        let e = red(512, 256, 0.5).unwrap_err().to_string();
        assert!(e.contains("router.marking.kmin") && e.contains("below kmax"), "{e}");
        let e = red(512, 1024, 0.5).unwrap_err().to_string();
        assert!(e.contains("32 flits"), "kmin 32 flits is a VL's whole buffering: {e}");
        let e = red(16, 256, 0.0).unwrap_err().to_string();
        assert!(e.contains("router.marking.pmax"), "{e}");
    }

    #[test]
    fn red_marks_a_header_by_its_queue_linearly_between_kmin_and_kmax() {
        let m = red(128, 512, 0.5).unwrap(); // kmin 8, kmax 32 flits
        let mut s = MarkState::new(m, 4, 8, 7);
        let look = |s: &mut MarkState, port: usize, head: bool, q: u32| {
            m.mark(s, port, 0, PacketId(1), (head, false), || 32, 0, || q, true)
        };
        assert!(!look(&mut s, 0, true, 8), "at kmin: never");
        assert!(look(&mut s, 0, true, 32), "at kmax: always");
        assert!(!look(&mut s, 0, false, 40), "a body flit does not decide");
        assert_eq!(s.draws[0], 0, "no draw outside (kmin, kmax)");
        // Midway (q = 20): p = 0.5 × 12/24 = 1/4; over 4000 headers of port 1 the share
        // marked is 1/4 within 4 standard deviations (0.0068 each).
        let marked = (0..4000).filter(|_| look(&mut s, 1, true, 20)).count() as f64 / 4000.0;
        assert!((marked - 0.25).abs() < 0.03, "{marked}");
        // q = 29: p = 0.5 × 21/24 = 0.4375.
        let marked = (0..4000).filter(|_| look(&mut s, 2, true, 29)).count() as f64 / 4000.0;
        assert!((marked - 0.4375).abs() < 0.035, "{marked}");
        // The draws are per port from the seed: port 1 again from the start repeats itself,
        // whatever other ports drew in between.
        let mut t = MarkState::new(m, 4, 8, 7);
        let mut u = MarkState::new(m, 4, 8, 7);
        for _ in 0..50 {
            look(&mut u, 3, true, 20);
        }
        let a: Vec<bool> = (0..64).map(|_| look(&mut t, 1, true, 20)).collect();
        let b: Vec<bool> = (0..64).map(|_| look(&mut u, 1, true, 20)).collect();
        assert_eq!(a, b);
        let mut other = MarkState::new(m, 4, 8, 8);
        let c: Vec<bool> = (0..64).map(|_| look(&mut other, 1, true, 20)).collect();
        assert_ne!(a, c, "another master seed draws otherwise");
    }

    #[test]
    fn waiting_headers_counted_or_not_keep_the_queues_true() {
        let kept = |waiting: &str| {
            let toml = format!(
                "[simulation]\nwarmup = 200\nmeasure = 1500\n\
                 [topology]\nkind = \"mesh\"\nk = 4\nn = 2\n\
                 [router]\nvcs = 3\ninput_buffer = 8\noutput_buffer = 8\n\
                 marking = {{ kind = \"iba_cc\", threshold = 8, waiting = \"{waiting}\" }}\n\
                 [[traffic]]\nload = 0.5\nmessage_flits = 8\npacket_flits = 8\n\
                 pattern = {{ kind = \"hot_spot\", fraction = 0.5, nodes = [5] }}\n"
            );
            let mut sim = crate::Simulation::from_toml(&toml, None).unwrap();
            for _ in 0..30 {
                sim.advance(50).unwrap();
                sim.check_invariants().unwrap();
            }
            sim.routers.port_queues.count_waiting
        };
        assert!(kept("every_vl"));
        assert!(!kept("held_vl"));
        let e = crate::Simulation::from_toml(
            "[topology]\nkind = \"mesh\"\nk = 2\nn = 2\n[router]\n\
             marking = { kind = \"iba_cc\", threshold = 8, waiting = \"some\" }\n[[traffic]]\nload = 0.1\n",
            None,
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(e.contains("router.marking.waiting") && e.contains("held_vl"), "{e}");
    }
}

//! The NIC's host DMA engine (document 003 §3.3, document 000 §3.2): a transfer costs a
//! set-up time and then moves its bytes at the host bus bandwidth (the document's baseline
//! NIC sits on a 64-bit 66 MHz PCI bus: 528 MB/s). One transfer at a time per engine.
//!
//! A VIA send takes two transfers, the descriptor and then the data; an InfiniBand HCA on
//! the system bus takes one (document 000 §3.2). Data reaches the NIC buffer flit by flit
//! as the transfer proceeds, so the wire may start on a packet's header before its tail is
//! in the NIC (the NIC "breaks messages into flits as they arrive", document 003 §3.3.1).

use crate::config::DmaConfig;
use crate::units::{Clock, Cycle};

/// DMA timing in cycles, resolved once from the physical configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct DmaTiming {
    /// Set-up cost of one transfer.
    pub setup: Cycle,
    /// Cycles to move one flit's bytes (fractional).
    pub cycles_per_flit: f64,
    /// Cycles to transfer a descriptor (set-up included): VIA's first DMA.
    pub descriptor: Cycle,
    /// `flit_ready[i]`: cycles after a data transfer starts until flit i is in the NIC
    /// (set-up included), for i up to the longest packet.
    pub flit_ready: Vec<Cycle>,
}

impl DmaTiming {
    pub fn new(cfg: &DmaConfig, clock: &Clock, max_packet_flits: u32) -> DmaTiming {
        let setup = clock.duration_cycles(cfg.setup);
        let cycles_per_flit = clock.transfer_cycles(clock.flit_bytes(), cfg.bandwidth);
        // Saturating: an invalid clock (reported by validation) must not overflow here.
        let descriptor =
            setup.saturating_add(
                clock.transfer_cycles(cfg.descriptor_bytes as f64, cfg.bandwidth).ceil() as Cycle
            );
        let mut d = DmaTiming { setup, cycles_per_flit, descriptor, flit_ready: Vec::new() };
        d.flit_ready = (0..max_packet_flits).map(|i| d.ready(i)).collect();
        d
    }

    /// Flit `i` is in the NIC once the set-up and `i + 1` flits' bytes have gone by.
    fn ready(&self, i: u32) -> Cycle {
        self.setup.saturating_add(((i as f64 + 1.0) * self.cycles_per_flit).ceil() as Cycle)
    }

    /// Cycles after a data transfer starts until its flit `i` (0-based) is in the NIC.
    #[inline]
    pub fn flit(&self, i: u32) -> Cycle {
        match self.flit_ready.get(i as usize) {
            Some(&c) => c,
            // Longer than any configured packet (hand-posted test messages).
            None => self.ready(i),
        }
    }

    /// Cycles a transfer of `flits` flits keeps the engine busy (set-up included).
    #[inline]
    pub fn data(&self, flits: u32) -> Cycle {
        self.flit(flits.max(1) - 1)
    }

    /// Cycles the engine is busy for one packet of `flits` flits, with the descriptor
    /// transfer first when `with_descriptor` (VIA's first packet of a message).
    #[inline]
    pub fn packet(&self, flits: u32, with_descriptor: bool) -> Cycle {
        self.data(flits) + if with_descriptor { self.descriptor } else { 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Bandwidth, Duration};

    fn clock() -> Clock {
        // The documents' 128-bit flits on 1.6 Gb/s links: 80 ns cycles, 16-byte flits.
        Clock { flit_bits: 128, link_bits_per_second: 1.6e9 }
    }

    #[test]
    fn pci_64_bit_66_mhz_timing_by_hand() {
        // 528 MB/s: a 16-byte flit takes 30.3 ns = 0.3788 cycles; 0.5 us set-up = 6.25 -> 6
        // cycles; a 64-byte descriptor takes 121 ns = 1.52 -> 2 cycles after its set-up.
        let cfg = DmaConfig {
            setup: Duration::Seconds(0.5e-6),
            bandwidth: Bandwidth { bits_per_second: 528e6 * 8.0 },
            descriptor_bytes: 64,
        };
        let d = DmaTiming::new(&cfg, &clock(), 40);
        assert_eq!(d.setup, 6);
        assert!((d.cycles_per_flit - 16.0 / 528e6 / 80e-9).abs() < 1e-12);
        assert_eq!(d.descriptor, 6 + 2);
        // 40 flits = 640 B = 1.212 us = 15.15 cycles -> 16, after the 6-cycle set-up.
        assert_eq!(d.data(40), 6 + 16);
        assert_eq!(d.flit_ready[0], 6 + 1);
        assert_eq!(d.flit_ready[2], 6 + 2, "3 flits = 1.14 cycles -> 2");
        assert_eq!(d.packet(40, true), 22 + 8);
        assert_eq!(d.packet(40, false), 22);
    }

    #[test]
    fn a_slow_bus_delivers_flits_slower_than_the_link() {
        // 100 MB/s: a flit takes 160 ns = 2 cycles.
        let cfg = DmaConfig {
            setup: Duration::Cycles(0),
            bandwidth: Bandwidth { bits_per_second: 800e6 },
            descriptor_bytes: 0,
        };
        let d = DmaTiming::new(&cfg, &clock(), 4);
        assert_eq!(d.flit_ready, vec![2, 4, 6, 8]);
        assert_eq!(d.descriptor, 0);
    }
}

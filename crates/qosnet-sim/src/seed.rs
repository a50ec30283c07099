//! Seeds derived from the master seed (ARCHITECTURE.md "Randomness": one generator per source or
//! component, so a configuration and seed give the same run everywhere): one mixing
//! function for every component that draws, so none names another to share it.

/// SplitMix64 finaliser: decorrelates per-component seeds derived from one master seed.
pub fn mix_seed(master: u64, stream: u64) -> u64 {
    let mut z = master ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(0x632B_E59B_D9B4_E019);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

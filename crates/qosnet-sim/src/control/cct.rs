//! InfiniBand's congestion control table (CCT; IBA Annex A10's CongestionControlTable,
//! OpenSM's `cc_cct`): the injection delays a throttled flow waits between messages, by
//! index (the flow's CCTI, `iba_cc.rs`). An entry is a 2-bit shift and a 14-bit
//! multiplier; we read an entry as the delay multiplier x 2^shift x a unit the operator
//! gives (the specification ties the unit to the port's packet time; the unit keeps the
//! table in physical time here, as every duration in a configuration is). The table is
//! generated (linear), given delay by delay, or read from an OpenSM-style file.

use crate::config::{CctConfig, Files};
use crate::error::ConfigError;
use crate::units::{Clock, Cycle};

/// The most entries a table has (CCTI_Limit is a 16-bit index).
pub(crate) const MAX_ENTRIES: usize = 1 << 16;

/// Injection delays by CCT index, cycles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cct {
    delays: Vec<Cycle>,
}

impl Cct {
    /// Check `cfg` (at `path`, e.g. `endpoint.agent.cct`) and build the table; each delay
    /// is at most `max_delay` cycles (the control channel's reach); a file is read through
    /// `files` (the one resolver, `config/files.rs`).
    pub fn build(
        cfg: &CctConfig,
        path: &str,
        clock: &Clock,
        max_delay: Cycle,
        files: &Files,
    ) -> Result<Cct, ConfigError> {
        let delays: Vec<Cycle> = match cfg {
            CctConfig::Linear { entries, step } => {
                let n = *entries as usize;
                if n == 0 || n > MAX_ENTRIES {
                    return Err(ConfigError::new(
                        format!("{path}.entries"),
                        format!("must be a whole number in 1..={MAX_ENTRIES}, got {entries}"),
                    ));
                }
                let step = clock.duration_cycles_f64(*step);
                (0..n).map(|i| (i as f64 * step).round() as Cycle).collect()
            }
            CctConfig::Delays { delays } => {
                if delays.is_empty() || delays.len() > MAX_ENTRIES {
                    return Err(ConfigError::new(
                        format!("{path}.delays"),
                        format!("must hold 1..={MAX_ENTRIES} delays, got {}", delays.len()),
                    ));
                }
                delays.iter().map(|&d| clock.duration_cycles(d)).collect()
            }
            CctConfig::File { path: file, unit } => {
                let field = format!("{path}.path");
                let read = files.read(&field, file)?;
                let entries = parse_opensm(&read.text).map_err(|e| {
                    let e = ConfigError::new(&field, format!("{}: {e}", read.shown));
                    files.about_contents(e, &read.shown, "congestion control table")
                })?;
                let unit = clock.duration_cycles_f64(*unit);
                entries
                    .iter()
                    .map(|&(shift, mult)| (mult as f64 * (1u32 << shift) as f64 * unit).round() as Cycle)
                    .collect()
            }
        };
        if let Some((i, d)) = delays.iter().enumerate().find(|&(_, &d)| d > max_delay) {
            return Err(ConfigError::new(
                path,
                format!(
                    "entry {i} delays {d} cycles; at most {max_delay} cycles (the control channel's reach)"
                ),
            ));
        }
        Ok(Cct { delays })
    }

    /// A table of these delays, cycles (tests).
    #[cfg(test)]
    pub fn of(delays: Vec<Cycle>) -> Cct {
        Cct { delays }
    }

    /// The delay of entry `ccti`.
    #[inline]
    pub fn delay(&self, ccti: u16) -> Cycle {
        self.delays[ccti as usize]
    }

    /// The last index.
    pub fn last(&self) -> u16 {
        (self.delays.len() - 1) as u16
    }

    /// The longest delay.
    pub fn max_delay(&self) -> Cycle {
        self.delays.iter().copied().max().unwrap_or(0)
    }
}

/// The entries of an OpenSM-style CCT: `shift:multiplier` pairs separated by commas, after
/// an optional `cc_cct` key (as `opensm.conf` writes it); `#` starts a comment. A shift is
/// 0..=3 and a multiplier 0..=16383 (the entry's 2 and 14 bits).
pub(crate) fn parse_opensm(text: &str) -> Result<Vec<(u32, u32)>, String> {
    let body: String = text.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join(" ");
    let body = body.trim();
    let body = body.strip_prefix("cc_cct").unwrap_or(body).trim();
    if body.is_empty() {
        return Err("no CCT entries (expected shift:multiplier,shift:multiplier,...)".into());
    }
    let mut out = Vec::new();
    for (i, entry) in body.split(',').enumerate() {
        let entry = entry.trim();
        let (s, m) =
            entry.split_once(':').ok_or_else(|| format!("entry {i} {entry:?}: expected shift:multiplier"))?;
        let num = |what: &str, v: &str, max: u32| -> Result<u32, String> {
            let v = v.trim();
            let parsed = match v.strip_prefix("0x") {
                Some(hex) => u32::from_str_radix(hex, 16),
                None => v.parse::<u32>(),
            };
            match parsed {
                Ok(x) if x <= max => Ok(x),
                Ok(x) => Err(format!("entry {i}: {what} must be in 0..={max}, got {x}")),
                Err(_) => Err(format!("entry {i}: {what} must be a whole number in 0..={max}, got {v:?}")),
            }
        };
        if out.len() == MAX_ENTRIES {
            return Err(format!("at most {MAX_ENTRIES} entries, got more"));
        }
        out.push((num("shift", s, 3)?, num("multiplier", m, 16383)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Duration;

    fn clock() -> Clock {
        Clock { flit_bits: 128, link_bits_per_second: 1.6e9 }
    }

    fn build(cfg: &CctConfig) -> Result<Cct, ConfigError> {
        Cct::build(cfg, "endpoint.agent.cct", &clock(), 1000, &Files::local(None))
    }

    #[test]
    fn a_linear_table_delays_i_steps_at_entry_i() {
        // 80 ns cycles: a 0.16 us step is 2 cycles.
        let cct = build(&CctConfig::Linear { entries: 4, step: Duration::Seconds(0.16e-6) }).unwrap();
        assert_eq!([cct.delay(0), cct.delay(1), cct.delay(3)], [0, 2, 6]);
        assert_eq!((cct.last(), cct.max_delay()), (3, 6));
        let e = build(&CctConfig::Linear { entries: 0, step: Duration::Cycles(1) }).unwrap_err().to_string();
        assert!(e.contains("endpoint.agent.cct.entries"), "{e}");
        let e = build(&CctConfig::Delays { delays: vec![Duration::Cycles(5), Duration::Cycles(1001)] })
            .unwrap_err()
            .to_string();
        assert!(e.contains("endpoint.agent.cct") && e.contains("entry 1") && e.contains("1000"), "{e}");
    }

    #[test]
    fn opensm_entries_read_as_multiplier_times_two_to_the_shift() {
        let e = parse_opensm("# CCT\ncc_cct 0:0,0:3, 1:3,2:0x10 # end\n").unwrap();
        assert_eq!(e, [(0, 0), (0, 3), (1, 3), (2, 16)]);
        let dir = std::env::temp_dir().join(format!("qosnet-cct-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("cct.conf"), "cc_cct 0:0,0:3,1:3,2:16\n").unwrap();
        let cfg =
            CctConfig::File { path: crate::config::FilePath::new("cct.conf"), unit: Duration::Cycles(2) };
        let cct = Cct::build(&cfg, "endpoint.agent.cct", &clock(), 1000, &Files::local(Some(&dir))).unwrap();
        assert_eq!(cct, Cct::of(vec![0, 6, 12, 128]));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn bad_entries_are_named() {
        let e = parse_opensm("cc_cct 0:1,-1:5").unwrap_err();
        assert!(e.contains("entry 1") && e.contains("shift") && e.contains("\"-1\""), "{e}");
        let e = parse_opensm("0:1,4:5").unwrap_err();
        assert!(e.contains("entry 1") && e.contains("0..=3") && e.contains("got 4"), "{e}");
        let e = parse_opensm("0:16384").unwrap_err();
        assert!(e.contains("multiplier") && e.contains("0..=16383"), "{e}");
        assert!(parse_opensm("cc_cct").unwrap_err().contains("no CCT entries"));
        assert!(parse_opensm("0-1").unwrap_err().contains("shift:multiplier"));
        let cfg = CctConfig::File {
            path: crate::config::FilePath::new("/nonexistent/cct.conf"),
            unit: Duration::Cycles(1),
        };
        let e = build(&cfg).unwrap_err().to_string();
        assert!(e.contains("endpoint.agent.cct.path") && e.contains("cannot read"), "{e}");
    }
}

//! Physical units and their conversion to simulator units — the one place where it happens.
//!
//! The engine counts time in integer cycles; one cycle is the time to move one flit across
//! one link (ARCHITECTURE.md "Time"). With the documents' 128-bit flits on 1.6 Gb/s links
//! (document 003 §4.1, document 000 §5.1) a cycle is 80 ns. Users write physical units
//! ("1.6 Gb/s", "33.3 ms", "500 Mb/s"); this module parses them and converts them once.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A point or span of simulated time, in cycles.
pub type Cycle = u64;

/// A data rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bandwidth {
    pub bits_per_second: f64,
}

/// A duration as the user wrote it: either a number of cycles or a physical time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Duration {
    Cycles(u64),
    Seconds(f64),
}

/// Cycle time and flit size: everything needed to convert physical units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    pub flit_bits: u32,
    pub link_bits_per_second: f64,
}

impl Clock {
    /// Seconds per cycle: one flit time on one link.
    pub fn cycle_seconds(&self) -> f64 {
        self.flit_bits as f64 / self.link_bits_per_second
    }

    pub fn cycles_to_seconds(&self, cycles: f64) -> f64 {
        cycles * self.cycle_seconds()
    }

    /// A duration in whole cycles (rounded to nearest; a physical span shorter than a
    /// cycle but above zero rounds up to one).
    pub fn duration_cycles(&self, d: Duration) -> u64 {
        match d {
            Duration::Cycles(c) => c,
            Duration::Seconds(s) => {
                let c = (s / self.cycle_seconds()).round();
                if s > 0.0 && c < 1.0 {
                    1
                } else {
                    c as u64
                }
            }
        }
    }

    /// A size in bytes as flits (fractional).
    pub fn bytes_to_flits(&self, bytes: f64) -> f64 {
        bytes * 8.0 / self.flit_bits as f64
    }

    /// A duration in cycles, unrounded (periods of sources).
    pub fn duration_cycles_f64(&self, d: Duration) -> f64 {
        match d {
            Duration::Cycles(c) => c as f64,
            Duration::Seconds(s) => s / self.cycle_seconds(),
        }
    }

    /// A bandwidth as a fraction of the link bandwidth, i.e. flits per cycle.
    pub fn flits_per_cycle(&self, b: Bandwidth) -> f64 {
        b.bits_per_second / self.link_bits_per_second
    }

    /// Cycles to move `bytes` at `b` (fractional): a DMA transfer's data time.
    pub fn transfer_cycles(&self, bytes: f64, b: Bandwidth) -> f64 {
        bytes * 8.0 / b.bits_per_second / self.cycle_seconds()
    }

    /// Bytes in a flit.
    pub fn flit_bytes(&self) -> f64 {
        self.flit_bits as f64 / 8.0
    }

    /// Flits per cycle (per node) back to bits per second.
    pub fn bits_per_second(&self, flits_per_cycle: f64) -> f64 {
        flits_per_cycle * self.link_bits_per_second
    }
}

/// An amount of memory in bytes (`[simulation] memory_limit = "4 GB"`); `u64::MAX` is
/// "unlimited".
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ByteSize(pub u64);

const BYTE_UNITS: &[(&str, f64)] = &[
    ("B", 1.0),
    ("kB", 1e3),
    ("KB", 1e3),
    ("MB", 1e6),
    ("GB", 1e9),
    ("TB", 1e12),
    ("KiB", 1024.0),
    ("MiB", 1048576.0),
    ("GiB", 1073741824.0),
    ("TiB", 1099511627776.0),
];

impl ByteSize {
    pub const UNLIMITED: ByteSize = ByteSize(u64::MAX);

    /// "4 GB", "512 MiB", "1e9 B", "unlimited".
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.trim() == "unlimited" {
            return Ok(Self::UNLIMITED);
        }
        let (v, unit) = split_number(s).ok_or_else(|| {
            format!(
                "expected a size like \"4 GB\" or \"unlimited\", got {} (units: {})",
                crate::error::clip(&format!("{s:?}")),
                allowed(BYTE_UNITS)
            )
        })?;
        let unit = if unit.is_empty() { "B" } else { unit };
        let mult = BYTE_UNITS.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m).ok_or_else(|| {
            format!(
                "unknown size unit {:?} in {}; allowed: {}",
                crate::error::clip(unit),
                crate::error::clip(&format!("{s:?}")),
                allowed(BYTE_UNITS)
            )
        })?;
        let bytes = v * mult;
        if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
            return Err(format!(
                "must be at least 1 byte and finite, got {}",
                crate::error::clip(&format!("{s:?}"))
            ));
        }
        Ok(ByteSize(bytes.round() as u64))
    }
}

impl fmt::Display for ByteSize {
    /// Decimal units, three significant digits: "12.1 GB", "640 kB".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::UNLIMITED {
            return f.write_str("unlimited");
        }
        let b = self.0 as f64;
        let (v, unit) = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
            .into_iter()
            .find(|(m, _)| b >= *m)
            .map_or((b, "B"), |(m, u)| (b / m, u));
        if unit == "B" {
            write!(f, "{} B", self.0)
        } else if v >= 100.0 {
            write!(f, "{v:.0} {unit}")
        } else if v >= 10.0 {
            write!(f, "{v:.1} {unit}")
        } else {
            write!(f, "{v:.2} {unit}")
        }
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if *self == Self::UNLIMITED {
            s.serialize_str("unlimited")
        } else {
            s.serialize_str(&format!("{} B", self.0))
        }
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = ByteSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size like \"4 GB\" (or a number of bytes), or \"unlimited\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
                if v == 0 {
                    return Err(E::custom("must be at least 1 byte, got 0"));
                }
                Ok(ByteSize(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
                Err(E::custom(format!("must be at least 1 byte, got {v}")))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
                ByteSize::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

const BANDWIDTH_UNITS: &[(&str, f64)] = &[
    ("b/s", 1.0),
    ("kb/s", 1e3),
    ("Mb/s", 1e6),
    ("Gb/s", 1e9),
    ("Tb/s", 1e12),
    ("B/s", 8.0),
    ("kB/s", 8e3),
    ("KB/s", 8e3),
    ("MB/s", 8e6),
    ("GB/s", 8e9),
    ("bps", 1.0),
    ("Kbps", 1e3),
    ("Mbps", 1e6),
    ("Gbps", 1e9),
];

const TIME_UNITS: &[(&str, f64)] = &[
    ("s", 1.0),
    ("ms", 1e-3),
    ("us", 1e-6),
    ("µs", 1e-6),
    ("ns", 1e-9),
    ("ps", 1e-12),
    ("min", 60.0),
    ("h", 3600.0),
];

fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "1e" followed by a unit letter is ambiguous; require a parseable number prefix.
    let (num, unit) = s.split_at(end);
    let value: f64 = num.trim().parse().ok()?;
    Some((value, unit.trim()))
}

fn allowed(units: &[(&str, f64)]) -> String {
    units.iter().map(|(u, _)| *u).collect::<Vec<_>>().join(", ")
}

impl Bandwidth {
    pub fn parse(s: &str) -> Result<Self, String> {
        let (v, unit) = split_number(s).ok_or_else(|| {
            format!("expected a bandwidth like \"1.6 Gb/s\", got {s:?} (units: {})", allowed(BANDWIDTH_UNITS))
        })?;
        let mult = BANDWIDTH_UNITS.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m).ok_or_else(|| {
            format!("unknown bandwidth unit {unit:?} in {s:?}; allowed: {}", allowed(BANDWIDTH_UNITS))
        })?;
        if !(v * mult).is_finite() {
            return Err(format!("must be a finite bandwidth, got {s:?}"));
        }
        if v <= 0.0 {
            return Err(format!("must be a positive bandwidth, got {s:?}"));
        }
        Ok(Bandwidth { bits_per_second: v * mult })
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bits_per_second;
        if b >= 1e9 {
            write!(f, "{} Gb/s", b / 1e9)
        } else if b >= 1e6 {
            write!(f, "{} Mb/s", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{} kb/s", b / 1e3)
        } else {
            write!(f, "{b} b/s")
        }
    }
}

impl Duration {
    pub fn parse(s: &str) -> Result<Self, String> {
        let (v, unit) = split_number(s)
            .ok_or_else(|| format!("expected a duration like \"10 us\" or \"5000 cycles\", got {s:?}"))?;
        if !v.is_finite() || v < 0.0 {
            return Err(format!("must be a non-negative duration, got {s:?}"));
        }
        if unit == "cycles" || unit == "cycle" {
            if v.fract() != 0.0 {
                return Err(format!("a cycle count must be a whole number, got {s:?}"));
            }
            return Ok(Duration::Cycles(v as u64));
        }
        let mult = TIME_UNITS.iter().find(|(u, _)| *u == unit).map(|(_, m)| *m).ok_or_else(|| {
            format!("unknown time unit {unit:?} in {s:?}; allowed: cycles, {}", allowed(TIME_UNITS))
        })?;
        Ok(Duration::Seconds(v * mult))
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Duration::Cycles(c) => write!(f, "{c} cycles"),
            Duration::Seconds(s) => {
                // Largest unit in which the value is >= 1, rounded to 12 significant digits
                // so "800 us" prints back as "800 us", not "799.9999999999999 us".
                let (v, unit) = [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")]
                    .into_iter()
                    .map(|(m, u)| (s / m, u))
                    .find(|(v, _)| v.abs() >= 1.0)
                    .unwrap_or((s / 1e-12, "ps"));
                let digits = 11 - v.abs().log10().floor().max(0.0) as i32;
                let scale = 10f64.powi(digits);
                write!(f, "{} {unit}", (v * scale).round() / scale)
            }
        }
    }
}

impl Serialize for Bandwidth {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Bandwidth {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Bandwidth;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a bandwidth with its unit, as a string like \"1.6 Gb/s\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Bandwidth, E> {
                Bandwidth::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

impl Serialize for Duration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Duration::Cycles(c) => s.serialize_u64(*c),
            Duration::Seconds(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a cycle count (integer) or a duration string like \"10 us\"")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
                Ok(Duration::Cycles(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
                u64::try_from(v)
                    .map(Duration::Cycles)
                    .map_err(|_| E::custom(format!("must be >= 0 cycles, got {v}")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
                Err(E::custom(format!(
                    "a bare number is a cycle count and must be whole, got {v}; write units, e.g. \"{v} us\""
                )))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
                Duration::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// The JSON Schema of a quantity written with its unit (`config::schema`): a string whose
/// pattern admits exactly this module's units, so an editor flags `"1.6 Gbit/s"` as the
/// engine would. No sign: every quantity must be positive (or zero), as the parsers say.
fn quantity_pattern(units: &[&str], whole: bool) -> String {
    let alternatives: Vec<String> = units.iter().map(|u| regex_escape(u)).collect();
    let number =
        if whole { r"[0-9]+([eE]\+?[0-9]+)?" } else { r"([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?" };
    format!(r"^\s*\+?{number}\s*({})\s*$", alternatives.join("|"))
}

fn regex_escape(s: &str) -> String {
    s.chars().flat_map(|c| if "/.+*?()[]{}|^$\\".contains(c) { vec!['\\', c] } else { vec![c] }).collect()
}

fn unit_names(units: &[(&'static str, f64)]) -> Vec<&'static str> {
    units.iter().map(|(u, _)| *u).collect()
}

impl schemars::JsonSchema for Bandwidth {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Bandwidth".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "type": "string",
            "pattern": quantity_pattern(&unit_names(BANDWIDTH_UNITS), false),
            "description": format!("A bandwidth with its unit ({}).", allowed(BANDWIDTH_UNITS)),
            "examples": ["1.6 Gb/s"],
        })
    }
}

impl schemars::JsonSchema for Duration {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Duration".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": format!(
                "A whole number of cycles, or a time with its unit (cycles, {}).",
                allowed(TIME_UNITS)
            ),
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "pattern": quantity_pattern(&unit_names(TIME_UNITS), false) },
                // A cycle count written with its unit must be whole.
                { "type": "string", "pattern": quantity_pattern(&["cycles", "cycle"], true) },
            ],
            "examples": [10000, "10 us"],
        })
    }
}

impl schemars::JsonSchema for ByteSize {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ByteSize".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut units = unit_names(BYTE_UNITS);
        units.push(""); // a bare number of bytes, as a string
        schemars::json_schema!({
            "description": format!("A size with its unit ({}), a number of bytes, or \"unlimited\".", allowed(BYTE_UNITS)),
            "anyOf": [
                { "type": "integer", "minimum": 1 },
                { "const": "unlimited" },
                { "type": "string", "pattern": quantity_pattern(&units, false) },
            ],
            "examples": ["4 GB", "unlimited"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_cycle_is_80ns() {
        let c = Clock { flit_bits: 128, link_bits_per_second: 1.6e9 };
        assert!((c.cycle_seconds() - 80e-9).abs() < 1e-15);
        // One video frame period of 33.3 ms is 416,250 cycles.
        assert_eq!(c.duration_cycles(Duration::parse("33.3 ms").unwrap()), 416_250);
        // 1 simulated second = 12.5 M cycles (issue 3's benchmark target).
        assert_eq!(c.duration_cycles(Duration::parse("1 s").unwrap()), 12_500_000);
        let b = Bandwidth::parse("400 Mb/s").unwrap();
        assert!((c.flits_per_cycle(b) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn rejects_bad_units() {
        assert!(Bandwidth::parse("1.6 Gb").unwrap_err().contains("allowed"));
        assert!(Bandwidth::parse("-3 Gb/s").is_err());
        assert!(Duration::parse("10 parsecs").unwrap_err().contains("allowed"));
        assert!(Duration::parse("1.5 cycles").is_err());
        assert_eq!(Duration::parse("7 cycles").unwrap(), Duration::Cycles(7));
    }

    #[test]
    fn byte_sizes() {
        assert_eq!(ByteSize::parse("4 GB"), Ok(ByteSize(4_000_000_000)));
        assert_eq!(ByteSize::parse("1.5GiB"), Ok(ByteSize(1_610_612_736)));
        assert_eq!(ByteSize::parse("1000"), Ok(ByteSize(1000)));
        assert_eq!(ByteSize::parse("unlimited"), Ok(ByteSize::UNLIMITED));
        assert!(ByteSize::parse("4 GW").unwrap_err().contains("allowed"));
        assert!(ByteSize::parse("0 GB").is_err());
        assert!(ByteSize::parse("1e30 TB").is_err());
        assert_eq!(ByteSize(12_100_000_000).to_string(), "12.1 GB");
        assert_eq!(ByteSize(5_700_000_000).to_string(), "5.70 GB");
        assert_eq!(ByteSize(640_000).to_string(), "640 kB");
    }

    #[test]
    fn durations_print_back_as_written() {
        for s in ["800 us", "33.3 ms", "1 s", "80 ns", "7 cycles"] {
            assert_eq!(Duration::parse(s).unwrap().to_string(), s);
        }
    }
}

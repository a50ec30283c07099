//! Real-time VBR video (document 003 §4.2): a stream sends one frame every 1/fps (30
//! frames/s, so one per 33.3 ms); a frame is cut into messages of `message_flits` flits
//! (40 in the document; the last may be shorter), every message carrying the stream's Vtick.
//! Frame sizes come from real traces (the repository's `data/video-traces/`) or, without a trace,
//! from a synthetic MPEG model.
//!
//! Trace formats:
//! - EvalVid sender trace (`st_*`): `frame_no type size packets send_time`, size in bytes
//!   in column 3 (the send times are packetisation times with jitter; frames are taken at
//!   the configured rate instead);
//! - LTE-Sim `.dat`: `frame_no type time_ms size`, size in column 4 (25 frames/s);
//! - plain: one value per line, `#` comments (units unknown: rescale with `mean_rate`).

pub use crate::config::video::{SyntheticVbr, TraceFormat};
use rand::Rng;

/// Frame sizes of one video, in bytes, in display order.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTrace {
    pub frame_bytes: Vec<f64>,
}

impl FrameTrace {
    pub fn mean_bytes(&self) -> f64 {
        self.frame_bytes.iter().sum::<f64>() / self.frame_bytes.len().max(1) as f64
    }

    /// The largest frame, bytes (its peak rate: admission's reservations, document 000).
    pub fn largest_bytes(&self) -> f64 {
        self.frame_bytes.iter().copied().fold(0.0, f64::max)
    }

    /// The same trace scaled so that at `fps` frames/s its mean rate is `bits_per_second`.
    pub fn scaled_to(&self, bits_per_second: f64, fps: f64) -> FrameTrace {
        let k = bits_per_second / (self.mean_bytes() * 8.0 * fps);
        FrameTrace { frame_bytes: self.frame_bytes.iter().map(|b| b * k).collect() }
    }
}

/// The format a trace named with `extension` is read in: `format`, or by extension if `Auto`.
pub fn resolved_format(extension: Option<&str>, format: TraceFormat) -> TraceFormat {
    match format {
        TraceFormat::Auto => match extension {
            Some("st") => TraceFormat::Evalvid,
            Some("dat") => TraceFormat::LteSim,
            _ => TraceFormat::Plain,
        },
        f => f,
    }
}

/// A frame-size trace from its text (read through `config::Files`; `name` for messages,
/// `extension` for the format when `Auto`); errors name the file, the line and what is wrong.
pub fn parse_trace(
    text: &str,
    name: &str,
    extension: Option<&str>,
    format: TraceFormat,
) -> Result<FrameTrace, String> {
    let format = resolved_format(extension, format);
    let (column, columns) = match format {
        TraceFormat::Evalvid => (2, 5),
        TraceFormat::LteSim => (3, 4),
        _ => (0, 1),
    };
    let mut frame_bytes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() < columns {
            return Err(format!(
                "{name} line {}: expected {columns} columns ({format:?} trace), got {}",
                i + 1,
                fields.len()
            ));
        }
        let v: f64 = fields[column]
            .parse()
            .map_err(|_| format!("{name} line {}: frame size {:?} is not a number", i + 1, fields[column]))?;
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("{name} line {}: frame size must be >= 0, got {v}", i + 1));
        }
        frame_bytes.push(v);
    }
    if frame_bytes.is_empty() || frame_bytes.iter().all(|&b| b == 0.0) {
        return Err(format!("{name}: no frames (or only empty ones)"));
    }
    Ok(FrameTrace { frame_bytes })
}

impl SyntheticVbr {
    /// `frames` frame sizes (relative units; rescale with `FrameTrace::scaled_to`).
    pub fn generate(&self, frames: usize, rng: &mut impl Rng) -> FrameTrace {
        let (b, p) = (1.0, self.p_to_b);
        let i = p * self.i_to_p;
        // lognormal with mean m and CoV c: sigma^2 = ln(1 + c^2), mu = ln m - sigma^2 / 2
        let s2 = (1.0 + self.cov * self.cov).ln();
        let gop: Vec<char> = self.gop.chars().collect();
        let frame_bytes = (0..frames)
            .map(|k| {
                let m = match gop[k % gop.len()] {
                    'I' => i,
                    'P' => p,
                    _ => b,
                };
                // Box-Muller
                let (u1, u2): (f64, f64) = (1.0 - rng.gen::<f64>(), rng.gen());
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (m.ln() - s2 / 2.0 + s2.sqrt() * z).exp()
            })
            .collect();
        FrameTrace { frame_bytes }
    }
}

/// A resolved video source description, shared by all its streams.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoSpec {
    /// The traces (or one synthetic), sizes in bytes at the configured rate.
    pub traces: Vec<FrameTrace>,
    /// Cycles between frames (1 / frame rate).
    pub period: f64,
    /// Streams per node in each phase.
    pub streams_by_phase: Vec<u32>,
    /// Per trace: its streams' Vtick (cycles per flit at the trace's mean rate).
    pub vticks: Vec<u32>,
    /// Per trace: mean rate in flits per cycle.
    pub flits_per_cycle: Vec<f64>,
    /// Where each stream's deadline chain starts (`metrics::deadline`).
    pub first_deadline: crate::config::video::FirstDeadline,
}

/// Flits of a frame of `bytes` (at least one).
pub fn frame_flits(bytes: f64, flit_bits: u32) -> u32 {
    ((bytes * 8.0 / flit_bits as f64).ceil() as u64).clamp(1, u32::MAX as u64) as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::path::Path;

    fn data(name: &str) -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/video-traces").join(name)
    }

    #[test]
    fn real_traces_parse_with_their_published_statistics() {
        // frame counts and mean sizes from data/SOURCES.md
        for (file, frames, mean) in [
            ("evalvid_st_BigBuckBunny_cif.st", 14_315, 5_945.0),
            ("evalvid_st_highway_cif.st", 2_000, 287.0),
            ("ltesim_foreman_H264_440k.dat", 1_500, 2_236.0),
            ("ltesim_highway_H264_128k.dat", 5_000, 641.0),
            ("longmemo_videoVBR.txt", 1_000, f64::NAN),
        ] {
            let path = data(file);
            let t =
                read_trace(&path, TraceFormat::Auto).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(t.frame_bytes.len(), frames, "{file}");
            if mean.is_finite() {
                // (SOURCES.md rounds to the byte)
                assert!((t.mean_bytes() - mean).abs() < 2.0, "{file}: {}", t.mean_bytes());
            }
        }
    }

    fn read_trace(path: &Path, format: TraceFormat) -> Result<FrameTrace, String> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {name}: {e}"))?;
        parse_trace(&text, &name, path.extension().and_then(|e| e.to_str()), format)
    }

    #[test]
    fn bad_traces_are_rejected_with_the_line() {
        let dir = std::env::temp_dir();
        let write = |name: &str, text: &str| {
            let p = dir.join(format!("qosnet_video_{}_{name}", std::process::id()));
            std::fs::write(&p, text).unwrap();
            p
        };
        let p = write("a.st", "1\tH\t100\t1\t0.0\n2\tP\tabc\t1\t0.1\n");
        let e = read_trace(&p, TraceFormat::Auto).unwrap_err();
        assert!(e.ends_with("line 2: frame size \"abc\" is not a number"), "{e}");
        let p = write("b.dat", "1\tI\t0\n");
        let e = read_trace(&p, TraceFormat::Auto).unwrap_err();
        assert!(e.contains("line 1: expected 4 columns"), "{e}");
        let p = write("c.txt", "# nothing\n\n");
        assert!(read_trace(&p, TraceFormat::Plain).unwrap_err().contains("no frames"));
        let p = write("d.txt", "5\n-3\n");
        assert!(read_trace(&p, TraceFormat::Plain).unwrap_err().contains("line 2: frame size must be >= 0"));
        assert!(read_trace(&dir.join("qosnet_no_such_trace"), TraceFormat::Auto)
            .unwrap_err()
            .starts_with("cannot read"));
    }

    #[test]
    fn scaling_sets_the_mean_rate() {
        let t = FrameTrace { frame_bytes: vec![1000.0, 3000.0] };
        let s = t.scaled_to(4e6, 25.0); // 4 Mb/s at 25 frames/s = 20000 bytes per frame
        assert!((s.mean_bytes() - 20_000.0).abs() < 1e-9);
        assert!((s.frame_bytes[1] / s.frame_bytes[0] - 3.0).abs() < 1e-12);
    }

    #[test]
    fn synthetic_model_keeps_its_frame_type_ratios() {
        let m = SyntheticVbr::default();
        m.validate().unwrap();
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(5);
        let t = m.generate(120_000, &mut rng);
        let mean_of = |c: char| {
            let gop: Vec<char> = m.gop.chars().collect();
            let v: Vec<f64> = t
                .frame_bytes
                .iter()
                .enumerate()
                .filter(|(k, _)| gop[k % gop.len()] == c)
                .map(|(_, b)| *b)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        let (i, p, b) = (mean_of('I'), mean_of('P'), mean_of('B'));
        assert!((i / p - 2.0).abs() < 0.05 && (p / b - 2.5).abs() < 0.05, "{i} {p} {b}");
        assert!(SyntheticVbr { gop: "BIP".into(), ..m.clone() }.validate().is_err());
        assert!(SyntheticVbr { cov: -1.0, ..m }.validate().is_err());
    }

    #[test]
    fn frames_cut_into_flits() {
        // 1000 bytes of 128-bit flits: 8000 / 128 = 62.5 -> 63 flits (40 + 23 in messages)
        assert_eq!(frame_flits(1000.0, 128), 63);
        assert_eq!(frame_flits(0.0, 128), 1);
        assert_eq!(frame_flits(16.0, 128), 1);
        assert_eq!(frame_flits(17.0, 128), 2);
    }
}

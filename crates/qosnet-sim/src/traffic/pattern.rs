//! Spatial traffic patterns: who a source sends to.
//!
//! Bit permutations (transpose, bit-complement, bit-reversal, perfect shuffle, butterfly)
//! act on the b-bit node index and need a power-of-two node count (transpose: an even b);
//! tornado and neighbour act on mesh/torus coordinates. Uniform never picks the source
//! itself. A source that a permutation maps onto itself sends nothing. With a traffic
//! entry's `self_traffic` (BookSim2's convention) both go to the source instead
//! (`Pattern::with_self_traffic`).

use super::booksim_patterns as booksim;
use crate::config::PatternConfig;
use crate::error::ConfigError;
use crate::topology::mesh::{coord, stride};
use crate::topology::Topology;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[derive(Clone, Debug)]
pub enum Pattern {
    Uniform {
        nodes: usize,
        /// The source itself is among the destinations drawn (`self_traffic`).
        with_self: bool,
    },
    /// A fixed destination per source (`None`: this source is silent).
    Fixed(Vec<Option<u32>>),
    HotSpot {
        nodes: usize,
        fraction: f64,
        hot: Vec<u32>,
    },
    /// Per source its destinations of positive weight, each with the cumulative weight up
    /// to it (a matrix file, or BookSim2's weighted patterns: `booksim_patterns.rs`).
    Matrix {
        rows: Vec<Vec<(u32, f64)>>,
    },
    /// Any of `nodes` alike (sorted; the source itself only `with_self`).
    Among {
        nodes: Vec<u32>,
        with_self: bool,
    },
    /// Any node of the next block of `block` nodes alike (block i + 1 mod the blocks): a
    /// dragonfly's next group.
    NextBlock {
        block: usize,
        nodes: usize,
    },
    /// The nodes as a `width`-by-`width` grid of node numbers: a source of row r to any
    /// node of column r alike (BookSim2's `badperm_yarc`).
    RowToColumn {
        width: usize,
    },
}

fn pow2_bits(nodes: usize, path: &str, name: &str) -> Result<u32, ConfigError> {
    // (one node has no bits to permute: the patterns' `b - 1` needs b >= 1)
    if !nodes.is_power_of_two() || nodes < 2 {
        return Err(ConfigError::new(
            path,
            format!("pattern \"{name}\" needs a power-of-two node count, this topology has {nodes} nodes"),
        ));
    }
    Ok(nodes.trailing_zeros())
}

impl Pattern {
    /// Build a pattern for `topo`; `path` is the config path of the pattern table.
    pub fn build(
        cfg: &PatternConfig,
        topo: &Topology,
        files: &crate::config::Files,
        path: &str,
    ) -> Result<Pattern, ConfigError> {
        let n = topo.nodes;
        let fixed = |f: &dyn Fn(usize) -> usize| -> Pattern {
            Pattern::Fixed((0..n).map(|s| Some(f(s) as u32).filter(|&d| d as usize != s)).collect())
        };
        let kind_path = format!("{path}.kind");
        if n < 2 {
            // Every pattern sends to another node (uniform draws among the n - 1 others).
            return Err(ConfigError::new(
                kind_path,
                format!("a traffic pattern needs at least 2 nodes, this topology has {n}"),
            ));
        }
        Ok(match cfg {
            PatternConfig::Uniform => Pattern::Uniform { nodes: n, with_self: false },
            PatternConfig::Transpose => {
                let b = pow2_bits(n, &kind_path, "transpose")?;
                if b % 2 != 0 {
                    return Err(ConfigError::new(
                        kind_path,
                        format!("pattern \"transpose\" needs an even number of index bits (a square power-of-two node count), got {n} nodes"),
                    ));
                }
                let h = b / 2;
                let lo = (1usize << h) - 1;
                fixed(&|s| ((s & lo) << h) | (s >> h))
            }
            PatternConfig::BitComplement => {
                pow2_bits(n, &kind_path, "bit_complement")?;
                fixed(&|s| !s & (n - 1))
            }
            PatternConfig::BitReversal => {
                let b = pow2_bits(n, &kind_path, "bit_reversal")?;
                fixed(&|s| {
                    if b == 0 {
                        s
                    } else {
                        s.reverse_bits() >> (usize::BITS - b)
                    }
                })
            }
            PatternConfig::PerfectShuffle => {
                let b = pow2_bits(n, &kind_path, "perfect_shuffle")?;
                fixed(&|s| ((s << 1) | (s >> (b - 1))) & (n - 1))
            }
            PatternConfig::Butterfly => {
                let b = pow2_bits(n, &kind_path, "butterfly")?;
                // swap the most and least significant bits
                fixed(&|s| {
                    let (msb, lsb) = ((s >> (b - 1)) & 1, s & 1);
                    (s & !(1 | (1 << (b - 1)))) | (lsb << (b - 1)) | msb
                })
            }
            PatternConfig::Tornado | PatternConfig::Neighbour => {
                let dims = topo.dims();
                let tornado = matches!(cfg, PatternConfig::Tornado);
                fixed(&|s| {
                    (0..dims.len())
                        .map(|d| {
                            let k = dims[d];
                            let off = if tornado { k.div_ceil(2) - 1 } else { 1 };
                            ((coord(&dims, s, d) + off) % k) as usize * stride(&dims, d)
                        })
                        .sum()
                })
            }
            PatternConfig::HotSpot { fraction, nodes } => {
                if !(0.0..=1.0).contains(fraction) || fraction.is_nan() {
                    return Err(ConfigError::new(
                        format!("{path}.fraction"),
                        format!("must be in [0, 1], got {fraction}"),
                    ));
                }
                if nodes.is_empty() {
                    return Err(ConfigError::new(
                        format!("{path}.nodes"),
                        "must list at least one hot-spot node",
                    ));
                }
                if let Some(bad) = nodes.iter().find(|&&h| h as usize >= n) {
                    return Err(ConfigError::new(
                        format!("{path}.nodes"),
                        format!("node {bad} does not exist (nodes are 0..{})", n - 1),
                    ));
                }
                Pattern::HotSpot { nodes: n, fraction: *fraction, hot: nodes.clone() }
            }
            PatternConfig::Fixed { destination } => {
                if *destination as usize >= n {
                    return Err(ConfigError::new(
                        format!("{path}.destination"),
                        format!("node {destination} does not exist (nodes are 0..{})", n - 1),
                    ));
                }
                fixed(&|_| *destination as usize)
            }
            PatternConfig::Permutation { file } => {
                let fpath = format!("{path}.file");
                let read = files.read(&fpath, file)?;
                read_numbers(&read.text, &read.shown, &fpath)
                    .and_then(|rows| permutation(&rows, n, &fpath))
                    .map_err(|e| files.about_contents(e, &read.shown, "permutation file"))?
            }
            PatternConfig::RandomPermutation { seed } => {
                use rand::seq::SliceRandom;
                use rand::SeedableRng;
                // (its own stream: the permutation is the seed's alone)
                let mut perm: Vec<usize> = (0..n).collect();
                perm.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(*seed));
                fixed(&|s| perm[s])
            }
            PatternConfig::Matrix { file } => {
                let fpath = format!("{path}.file");
                let read = files.read(&fpath, file)?;
                read_numbers(&read.text, &read.shown, &fpath)
                    .and_then(|rows| matrix(&rows, n, &fpath))
                    .map_err(|e| files.about_contents(e, &read.shown, "traffic matrix file"))?
            }
            PatternConfig::Diagonal => Pattern::Matrix { rows: booksim::diagonal(n) },
            PatternConfig::Asymmetric => Pattern::Matrix { rows: booksim::asymmetric(n, &kind_path)? },
            PatternConfig::Taper64 => Pattern::Matrix { rows: booksim::taper64(n, &kind_path)? },
            PatternConfig::NextGroup => {
                Pattern::NextBlock { block: booksim::group_nodes(topo, &kind_path)?, nodes: n }
            }
            PatternConfig::UniformExcept { nodes } => {
                Pattern::Among { nodes: booksim::uniform_except(nodes, n, path)?, with_self: false }
            }
            PatternConfig::BadpermYarc => Pattern::RowToColumn { width: booksim::grid_width(n, &kind_path)? },
        })
    }

    /// The destination of the next message from `src`, or `None` if `src` is silent.
    #[inline]
    pub fn destination(&self, src: usize, rng: &mut Xoshiro256PlusPlus) -> Option<usize> {
        match self {
            Pattern::Uniform { nodes, with_self: false } => Some(uniform_other(*nodes, src, rng)),
            Pattern::Uniform { nodes, with_self: true } => Some(rng.gen_range(0..*nodes)),
            Pattern::Fixed(d) => d[src].map(|d| d as usize),
            Pattern::HotSpot { nodes, fraction, hot } => {
                if rng.gen::<f64>() < *fraction {
                    let h = hot[rng.gen_range(0..hot.len())] as usize;
                    if h != src {
                        return Some(h);
                    }
                }
                Some(uniform_other(*nodes, src, rng))
            }
            Pattern::Matrix { rows } => {
                let row = &rows[src];
                let &(_, total) = row.last()?;
                let x = rng.gen::<f64>() * total;
                Some(row[row.partition_point(|&(_, c)| c <= x).min(row.len() - 1)].0 as usize)
            }
            Pattern::Among { nodes, with_self } => {
                let mine = if *with_self { None } else { nodes.binary_search(&(src as u32)).ok() };
                match mine {
                    // (the others alike: skip the source's place)
                    Some(at) => {
                        let d = rng.gen_range(0..nodes.len() - 1);
                        Some(nodes[if d >= at { d + 1 } else { d }] as usize)
                    }
                    None => Some(nodes[rng.gen_range(0..nodes.len())] as usize),
                }
            }
            Pattern::NextBlock { block, nodes } => {
                Some(((src / block + 1) * block + rng.gen_range(0..*block)) % nodes)
            }
            Pattern::RowToColumn { width } => Some(rng.gen_range(0..*width) * width + src / width),
        }
    }

    /// The pattern with self traffic (a traffic entry's `self_traffic`, BookSim2's
    /// convention): uniform draws among all nodes, and a source a fixed pattern leaves
    /// silent (a permutation's fixed point, the fixed destination itself) sends to
    /// itself. Hot-spot and matrix patterns are as configured.
    pub fn with_self_traffic(self) -> Pattern {
        match self {
            Pattern::Uniform { nodes, .. } => Pattern::Uniform { nodes, with_self: true },
            Pattern::Among { nodes, .. } => Pattern::Among { nodes, with_self: true },
            Pattern::Fixed(d) => {
                Pattern::Fixed(d.into_iter().enumerate().map(|(s, d)| Some(d.unwrap_or(s as u32))).collect())
            }
            other => other,
        }
    }

    /// The one destination of every message from `src`, if the pattern fixes it.
    pub fn fixed_destination(&self, src: usize) -> Option<u32> {
        match self {
            Pattern::Fixed(d) => d[src],
            _ => None,
        }
    }

    /// Whether `src` ever sends.
    pub fn is_silent(&self, src: usize) -> bool {
        match self {
            Pattern::Fixed(d) => d[src].is_none(),
            Pattern::Matrix { rows } => rows[src].is_empty(),
            _ => false,
        }
    }
}

#[inline]
fn uniform_other(nodes: usize, src: usize, rng: &mut Xoshiro256PlusPlus) -> usize {
    let d = rng.gen_range(0..nodes - 1);
    if d >= src {
        d + 1
    } else {
        d
    }
}

/// The rows of numbers in a pattern file's `text` (`name` for messages).
fn read_numbers(text: &str, name: &str, path: &str) -> Result<Vec<Vec<f64>>, ConfigError> {
    let mut rows = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let row: Result<Vec<f64>, _> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|s| !s.is_empty())
            .map(str::parse::<f64>)
            .collect();
        let row = row.map_err(|_| {
            ConfigError::new(
                path,
                format!("{name} line {}: not a list of numbers: {:?}", i + 1, crate::error::clip(line)),
            )
        })?;
        if row.iter().any(|v| !v.is_finite() || *v < 0.0) {
            return Err(ConfigError::new(
                path,
                format!("{name} line {}: values must be finite and >= 0", i + 1),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

fn permutation(rows: &[Vec<f64>], n: usize, path: &str) -> Result<Pattern, ConfigError> {
    if rows.is_empty() {
        return Err(ConfigError::new(path, "the permutation file lists no destinations"));
    }
    let mut dest = vec![None; n];
    let as_node = |v: f64| -> Result<u32, ConfigError> {
        if v.fract() != 0.0 || v as usize >= n {
            return Err(ConfigError::new(path, format!("node {v} is not in 0..{}", n - 1)));
        }
        Ok(v as u32)
    };
    if rows.iter().all(|r| r.len() == 2) {
        for r in rows {
            let (s, d) = (as_node(r[0])?, as_node(r[1])?);
            dest[s as usize] = Some(d).filter(|&d| d != s);
        }
    } else if rows.len() == n && rows.iter().all(|r| r.len() == 1) {
        for (s, r) in rows.iter().enumerate() {
            dest[s] = Some(as_node(r[0])?).filter(|&d| d as usize != s);
        }
    } else {
        return Err(ConfigError::new(
            path,
            format!("expected {n} lines of one destination, or lines \"src dst\""),
        ));
    }
    Ok(Pattern::Fixed(dest))
}

fn matrix(rows: &[Vec<f64>], n: usize, path: &str) -> Result<Pattern, ConfigError> {
    if rows.len() != n || rows.iter().any(|r| r.len() != n) {
        return Err(ConfigError::new(path, format!("expected a {n}x{n} matrix of weights")));
    }
    // (a source's own weight is left out: a matrix sends to other nodes)
    let rows = rows
        .iter()
        .enumerate()
        .map(|(s, r)| {
            let mut acc = 0.0;
            r.iter()
                .enumerate()
                .filter(|&(d, &w)| d != s && w > 0.0)
                .map(|(d, &w)| {
                    acc += w;
                    (d as u32, acc)
                })
                .collect()
        })
        .collect();
    Ok(Pattern::Matrix { rows })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopologyConfig;
    use rand::SeedableRng;

    fn mesh(k: u32) -> Topology {
        Topology::build(&TopologyConfig::Mesh { k: Some(k), n: Some(2), dims: None }).unwrap()
    }

    fn dest(p: &Pattern, s: usize) -> Option<usize> {
        p.destination(s, &mut Xoshiro256PlusPlus::seed_from_u64(0))
    }

    /// Each destination's share of `draws` messages from `src`.
    fn drawn(p: &Pattern, src: usize, n: usize, draws: usize) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut count = vec![0usize; n];
        for _ in 0..draws {
            count[p.destination(src, &mut rng).unwrap()] += 1;
        }
        count.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn among_skips_the_source_unless_self_traffic_and_next_block_lands_in_the_next() {
        let p = Pattern::Among { nodes: vec![0, 1, 4, 5], with_self: false };
        let s = drawn(&p, 0, 6, 30_000);
        assert_eq!((s[0], s[2], s[3]), (0.0, 0.0, 0.0));
        assert!([1, 4, 5].iter().all(|&d| (s[d] - 1.0 / 3.0).abs() < 0.01), "{s:?}");
        let s = drawn(&p.with_self_traffic(), 0, 6, 30_000);
        assert!([0, 1, 4, 5].iter().all(|&d| (s[d] - 0.25).abs() < 0.01), "{s:?}");
        // blocks of 8 over 24 nodes: node 20 (the last block) to the first
        let s = drawn(&Pattern::NextBlock { block: 8, nodes: 24 }, 20, 24, 16_000);
        assert!(
            s[..8].iter().all(|&x| (x - 0.125).abs() < 0.015) && s[8..].iter().all(|&x| x == 0.0),
            "{s:?}"
        );
        // badperm_yarc on 16 nodes (a 4x4 grid of numbers): node 9 (row 2) to column 2,
        // nodes 2, 6, 10, 14 alike
        let s = drawn(&Pattern::RowToColumn { width: 4 }, 9, 16, 20_000);
        assert!((0..16).all(|d| if d % 4 == 2 { (s[d] - 0.25).abs() < 0.015 } else { s[d] == 0.0 }), "{s:?}");
        // a matrix row with the source in it (BookSim2's diagonal) keeps it
        let s = drawn(&Pattern::Matrix { rows: booksim::diagonal(4) }, 3, 4, 30_000);
        assert!((s[0] - 1.0 / 3.0).abs() < 0.01 && (s[3] - 2.0 / 3.0).abs() < 0.01, "{s:?}");
    }

    #[test]
    fn a_random_permutation_is_one_and_its_seed_alone_decides_it() {
        let t = mesh(4);
        let id = crate::config::Files::local(None);
        let b = |seed| {
            let p = Pattern::build(&PatternConfig::RandomPermutation { seed }, &t, &id, "p").unwrap();
            p.with_self_traffic()
        };
        let images = |p: &Pattern| (0..16).map(|s| dest(p, s).unwrap()).collect::<Vec<_>>();
        let (a, again, other) = (images(&b(7)), images(&b(7)), images(&b(8)));
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..16).collect::<Vec<_>>(), "every node the image of one source");
        assert_eq!(a, again);
        assert_ne!(a, other);
        // without self traffic a fixed point is silent
        let plain = Pattern::build(&PatternConfig::RandomPermutation { seed: 7 }, &t, &id, "p").unwrap();
        for (s, &image) in a.iter().enumerate() {
            assert_eq!(dest(&plain, s), Some(image).filter(|&d| d != s));
        }
    }

    #[test]
    fn bit_permutations_on_4x4() {
        let t = mesh(4);
        let id = crate::config::Files::local(None);
        let b = |c: PatternConfig| Pattern::build(&c, &t, &id, "traffic[0].pattern").unwrap();
        // node 1 = (x=1, y=0) -> transpose (0,1) = node 4
        assert_eq!(dest(&b(PatternConfig::Transpose), 1), Some(4));
        assert_eq!(dest(&b(PatternConfig::Transpose), 5), None); // diagonal is silent
        assert_eq!(dest(&b(PatternConfig::BitComplement), 1), Some(14));
        assert_eq!(dest(&b(PatternConfig::BitReversal), 1), Some(8));
        assert_eq!(dest(&b(PatternConfig::PerfectShuffle), 9), Some(3));
        assert_eq!(dest(&b(PatternConfig::Butterfly), 1), Some(8));
        assert_eq!(dest(&b(PatternConfig::Tornado), 0), Some(1 + 4));
        assert_eq!(dest(&b(PatternConfig::Neighbour), 3), Some(4));
    }

    /// On a concentrated mesh the patterns act on BookSim2's node numbers, the 8x8 node grid
    /// of a 4x4 cmesh (node row * 8 + col): its bit permutations on the index as on any
    /// topology, its tornado and neighbor on the grid's base-8 digits (xr * k, xr = 2).
    #[test]
    fn patterns_on_a_cmesh_step_its_node_grid() {
        let t = Topology::build(&TopologyConfig::Cmesh { k: 4, c: None, express_latency: None }).unwrap();
        let id = crate::config::Files::local(None);
        let b = |c: PatternConfig| Pattern::build(&c, &t, &id, "traffic[0].pattern").unwrap();
        // node 10 = (row 1, col 2): transposed (row 2, col 1) = 17; complemented 53 =
        // (row 6, col 5); tornado steps each coordinate by 8/2 - 1 = 3: (row 4, col 5) =
        // 37; neighbour by 1: (row 2, col 3) = 19
        assert_eq!(dest(&b(PatternConfig::Transpose), 10), Some(17));
        assert_eq!(dest(&b(PatternConfig::BitComplement), 10), Some(53));
        assert_eq!(dest(&b(PatternConfig::Tornado), 10), Some(37));
        assert_eq!(dest(&b(PatternConfig::Neighbour), 10), Some(19));
        // (node 63 = (row 7, col 7) wraps to (row 0, col 0))
        assert_eq!(dest(&b(PatternConfig::Neighbour), 63), Some(0));
    }

    #[test]
    fn power_of_two_required() {
        let t = mesh(6);
        let e = Pattern::build(
            &PatternConfig::BitComplement,
            &t,
            &crate::config::Files::local(None),
            "traffic[0].pattern",
        )
        .unwrap_err();
        assert_eq!(e.path, "traffic[0].pattern.kind");
        assert!(e.message.contains("36 nodes"));
    }

    #[test]
    fn uniform_never_self() {
        let p = Pattern::Uniform { nodes: 4, with_self: false };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut seen = [0; 4];
        for _ in 0..3000 {
            let d = p.destination(2, &mut rng).unwrap();
            seen[d] += 1;
        }
        assert_eq!(seen[2], 0);
        assert!(seen.iter().enumerate().all(|(i, &c)| i == 2 || c > 900));
    }

    /// `self_traffic` (BookSim2's convention): uniform draws the source too, one time in N;
    /// transpose's diagonal (a fixed point, silent without it) sends to itself; the other
    /// sources keep their destinations.
    #[test]
    fn self_traffic_includes_the_source() {
        let p = Pattern::Uniform { nodes: 4, with_self: false }.with_self_traffic();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut seen = [0; 4];
        for _ in 0..4000 {
            seen[p.destination(2, &mut rng).unwrap()] += 1;
        }
        assert!(seen.iter().all(|&c| (850..1150).contains(&c)), "{seen:?}");
        let t = mesh(4);
        let transpose =
            Pattern::build(&PatternConfig::Transpose, &t, &crate::config::Files::local(None), "p").unwrap();
        assert_eq!(transpose.fixed_destination(5), None);
        assert!(transpose.is_silent(5));
        let with_self = transpose.with_self_traffic();
        assert_eq!(with_self.fixed_destination(5), Some(5));
        assert!(!with_self.is_silent(5));
        assert_eq!(with_self.fixed_destination(1), Some(4));
    }
}

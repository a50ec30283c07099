//! BookSim2's synthetic patterns beyond the permutations (its `traffic` names `diagonal`,
//! `asymmetric`, `taper64`, `bad_dragon` and `background`), by their definitions, so that a
//! BookSim2 user's configuration means the same here. `diagonal`, `asymmetric` and
//! `taper64` send some messages to the source itself by definition, so they need a traffic
//! entry's `self_traffic` (`PatternConfig::sends_to_itself`).

use super::pattern::Pattern;
use crate::error::ConfigError;
use crate::topology::{Shape, Topology};

/// A row of destinations with their weights as `Pattern::Matrix` keeps it: cumulative.
fn row(weights: impl IntoIterator<Item = (usize, f64)>) -> Vec<(u32, f64)> {
    let mut acc = 0.0;
    weights
        .into_iter()
        .map(|(d, w)| {
            acc += w;
            (d as u32, acc)
        })
        .collect()
}

/// `diagonal`: to the next node (i + 1 mod N) one message in three, else to the source
/// itself (BookSim2 draws 0, 1 or 2 and takes the next node on 0).
pub(super) fn diagonal(n: usize) -> Pattern {
    Pattern::Matrix { rows: (0..n).map(|s| row([((s + 1) % n, 1.0), (s, 2.0)])).collect() }
}

/// `asymmetric`: node i to i mod N/2 or to i mod N/2 + N/2, alike (one of the two is i
/// itself): the lower half of the nodes receives from both halves.
pub(super) fn asymmetric(n: usize, path: &str) -> Result<Pattern, ConfigError> {
    if n % 2 != 0 {
        return Err(ConfigError::new(
            path,
            format!("pattern \"asymmetric\" pairs node i with i + N/2: an even node count, got {n}"),
        ));
    }
    let h = n / 2;
    Ok(Pattern::Matrix { rows: (0..n).map(|s| row([(s % h, 1.0), (s % h + h, 1.0)])).collect() })
}

/// `taper64` (64 nodes): half the messages to a node within one step of the source on the
/// 8x8 grid of node numbers (i + 8 dy + dx mod 64, dx and dy each -1, 0 or 1 alike, the
/// source itself among them), the other half to any of the 64 nodes alike.
pub(super) fn taper64(n: usize, path: &str) -> Result<Pattern, ConfigError> {
    if n != 64 {
        return Err(ConfigError::new(path, format!("pattern \"taper64\" needs exactly 64 nodes, got {n}")));
    }
    let rows = (0..64usize)
        .map(|s| {
            let near = (-1i64..=1)
                .flat_map(|dy| (-1i64..=1).map(move |dx| (64 + s as i64 + 8 * dy + dx) as usize % 64));
            row(near.map(|d| (d, 0.5 / 9.0)).chain((0..64).map(|d| (d, 0.5 / 64.0))))
        })
        .collect();
    Ok(Pattern::Matrix { rows })
}

/// A dragonfly's adversarial traffic (Kim, Dally, Scott & Abts 2008, the "worst case";
/// BookSim2's `bad_dragon`): every message from a node of group i to a node of group
/// i + 1 (mod the groups) drawn alike, so that all of a group's traffic crosses one global
/// channel under minimal routing.
pub(super) fn next_group(topo: &Topology, path: &str) -> Result<Pattern, ConfigError> {
    match &topo.shape {
        Shape::Dragonfly(d) => Ok(Pattern::NextBlock { block: (d.a * d.p) as usize, nodes: topo.nodes }),
        _ => Err(ConfigError::new(path, "pattern \"next_group\" needs a dragonfly topology (its groups)")),
    }
}

/// `background`: every node but `excluded` alike (the source itself unless `self_traffic`).
pub(super) fn uniform_except(excluded: &[u32], n: usize, path: &str) -> Result<Pattern, ConfigError> {
    if let Some(bad) = excluded.iter().find(|&&e| e as usize >= n) {
        return Err(ConfigError::new(
            format!("{path}.nodes"),
            format!("node {bad} does not exist (nodes are 0..{})", n - 1),
        ));
    }
    let nodes: Vec<u32> = (0..n as u32).filter(|d| !excluded.contains(d)).collect();
    if nodes.len() < 2 {
        return Err(ConfigError::new(
            format!("{path}.nodes"),
            format!("excludes {} of the {n} nodes: at least two must stay destinations", n - nodes.len()),
        ));
    }
    Ok(Pattern::Among { nodes, with_self: false })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Each destination's share of `draws` messages from `src`.
    fn shares(p: &Pattern, src: usize, n: usize, draws: usize) -> Vec<f64> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(9);
        let mut count = vec![0usize; n];
        for _ in 0..draws {
            count[p.destination(src, &mut rng).unwrap()] += 1;
        }
        count.iter().map(|&c| c as f64 / draws as f64).collect()
    }

    #[test]
    fn diagonal_sends_a_third_to_the_next_node_and_the_rest_to_itself() {
        let s = shares(&diagonal(8), 7, 8, 60_000);
        assert!((s[0] - 1.0 / 3.0).abs() < 0.01 && (s[7] - 2.0 / 3.0).abs() < 0.01, "{s:?}");
    }

    #[test]
    fn asymmetric_folds_both_halves_onto_the_lower() {
        // 8 nodes: node 5 to 1 or 5, node 1 to 1 or 5
        let p = asymmetric(8, "p").unwrap();
        for src in [1, 5] {
            let s = shares(&p, src, 8, 40_000);
            assert!((s[1] - 0.5).abs() < 0.01 && (s[5] - 0.5).abs() < 0.01, "{s:?}");
        }
        assert!(asymmetric(9, "p").unwrap_err().to_string().contains("even node count"));
    }

    #[test]
    fn taper64_is_half_near_half_uniform() {
        // node 0's near set wraps by node number: 55, 56, 57, 63, 0, 1, 7, 8, 9
        let p = taper64(64, "p").unwrap();
        let s = shares(&p, 0, 64, 200_000);
        let near = [55, 56, 57, 63, 0, 1, 7, 8, 9];
        for d in 0..64 {
            let expect = 0.5 / 64.0 + if near.contains(&d) { 0.5 / 9.0 } else { 0.0 };
            assert!((s[d] - expect).abs() < 0.004, "node {d}: {} against {expect}", s[d]);
        }
        assert!(taper64(16, "p").is_err());
    }

    #[test]
    fn next_group_lands_in_the_following_group_only() {
        // a = 4 routers of p = 2 nodes a group (8 nodes), h = 2: 9 groups, 72 nodes
        let t = Topology::build(&crate::config::TopologyConfig::Dragonfly {
            a: 4,
            p: 2,
            h: 2,
            global_latency: None,
        })
        .unwrap();
        let p = next_group(&t, "p").unwrap();
        let last = shares(&p, 70, 72, 16_000);
        assert!(last[..8].iter().all(|&x| (x - 1.0 / 8.0).abs() < 0.015), "group 8 to group 0: {last:?}");
        assert!(last[8..].iter().all(|&x| x == 0.0));
        let mesh =
            Topology::build(&crate::config::TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None })
                .unwrap();
        assert!(next_group(&mesh, "p").unwrap_err().to_string().contains("dragonfly"));
    }

    #[test]
    fn uniform_except_never_draws_the_excluded_nor_itself() {
        let p = uniform_except(&[2, 3], 8, "p").unwrap();
        let s = shares(&p, 0, 8, 30_000);
        assert_eq!((s[0], s[2], s[3]), (0.0, 0.0, 0.0));
        assert!(s[1..]
            .iter()
            .enumerate()
            .filter(|(i, _)| ![1, 2].contains(i))
            .all(|(_, &x)| (x - 0.2).abs() < 0.01));
        let with_self = p.with_self_traffic();
        assert!(shares(&with_self, 0, 8, 30_000)[0] > 0.15);
        assert!(uniform_except(&[0, 1, 2], 3, "p").is_err());
        assert!(uniform_except(&[9], 8, "p").unwrap_err().to_string().contains("node 9"));
    }
}

//! BookSim2's synthetic patterns beyond the permutations (its `traffic` names `diagonal`,
//! `asymmetric`, `taper64`, `bad_dragon`, `badperm_yarc` and `background`), by their
//! definitions, so that a BookSim2 user's configuration means the same here. `diagonal`,
//! `asymmetric`, `taper64` and `badperm_yarc` send some messages to the source itself by
//! definition, so they need a traffic entry's `self_traffic`
//! (`PatternConfig::sends_to_itself`).

use crate::error::ConfigError;
use crate::topology::{Shape, Topology};

/// Per source its destinations with the cumulative weight up to each, as
/// `Pattern::Matrix` keeps them.
pub(super) type Rows = Vec<Vec<(u32, f64)>>;

/// A row of destinations with their weights, made cumulative.
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
pub(super) fn diagonal(n: usize) -> Rows {
    (0..n).map(|s| row([((s + 1) % n, 1.0), (s, 2.0)])).collect()
}

/// `asymmetric`: node i to i mod N/2 or to i mod N/2 + N/2, alike (one of the two is i
/// itself): the lower half of the nodes receives from both halves.
pub(super) fn asymmetric(n: usize, path: &str) -> Result<Rows, ConfigError> {
    if n % 2 != 0 {
        return Err(ConfigError::new(
            path,
            format!("pattern \"asymmetric\" pairs node i with i + N/2: an even node count, got {n}"),
        ));
    }
    let h = n / 2;
    Ok((0..n).map(|s| row([(s % h, 1.0), (s % h + h, 1.0)])).collect())
}

/// `taper64` (64 nodes): half the messages to a node within one step of the source on the
/// 8x8 grid of node numbers (i + 8 dy + dx mod 64, dx and dy each -1, 0 or 1 alike, the
/// source itself among them), the other half to any of the 64 nodes alike.
pub(super) fn taper64(n: usize, path: &str) -> Result<Rows, ConfigError> {
    if n != 64 {
        return Err(ConfigError::new(path, format!("pattern \"taper64\" needs exactly 64 nodes, got {n}")));
    }
    Ok((0..64usize)
        .map(|s| {
            let near = (-1i64..=1)
                .flat_map(|dy| (-1i64..=1).map(move |dx| (64 + s as i64 + 8 * dy + dx) as usize % 64));
            row(near.map(|d| (d, 0.5 / 9.0)).chain((0..64).map(|d| (d, 0.5 / 64.0))))
        })
        .collect())
}

/// A dragonfly's adversarial traffic (Kim, Dally, Scott & Abts 2008, the "worst case";
/// BookSim2's `bad_dragon`): every message from a node of group i to a node of group
/// i + 1 (mod the groups) drawn alike, so that all of a group's traffic crosses one global
/// channel under minimal routing. The nodes of a group, consecutive: `Pattern::NextBlock`.
pub(super) fn group_nodes(topo: &Topology, path: &str) -> Result<usize, ConfigError> {
    match &topo.shape {
        Shape::Dragonfly(d) => Ok((d.a * d.p) as usize),
        _ => Err(ConfigError::new(path, "pattern \"next_group\" needs a dragonfly topology (its groups)")),
    }
}

/// `background`: every node but `excluded` alike (the source itself unless
/// `self_traffic`): the nodes left, sorted (`Pattern::Among`).
pub(super) fn uniform_except(excluded: &[u32], n: usize, path: &str) -> Result<Vec<u32>, ConfigError> {
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
    Ok(nodes)
}

/// `badperm_yarc`'s grid side w: the node count N must be w x w (BookSim2 takes w from
/// its k and xr and sends past the last node otherwise).
pub(super) fn grid_width(n: usize, path: &str) -> Result<usize, ConfigError> {
    let w = (n as f64).sqrt().round() as usize;
    if w * w != n {
        return Err(ConfigError::new(
            path,
            format!(
                "pattern \"badperm_yarc\" needs a square node count (a w-by-w grid of node numbers), got {n}"
            ),
        ));
    }
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each destination's probability in a cumulative row, over `n` nodes.
    fn shares(row: &[(u32, f64)], n: usize) -> Vec<f64> {
        let total = row.last().unwrap().1;
        let mut p = vec![0.0; n];
        let mut before = 0.0;
        for &(d, c) in row {
            p[d as usize] += (c - before) / total;
            before = c;
        }
        p
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn diagonal_sends_a_third_to_the_next_node_and_the_rest_to_itself() {
        let s = shares(&diagonal(8)[7], 8);
        assert!(close(s[0], 1.0 / 3.0) && close(s[7], 2.0 / 3.0), "{s:?}");
        assert!(close(s.iter().sum(), 1.0));
    }

    #[test]
    fn asymmetric_folds_both_halves_onto_the_lower() {
        // 8 nodes: node 5 to 1 or 5, node 1 to 1 or 5
        let rows = asymmetric(8, "p").unwrap();
        for src in [1, 5] {
            let s = shares(&rows[src], 8);
            assert!(close(s[1], 0.5) && close(s[5], 0.5), "{s:?}");
        }
        assert!(asymmetric(9, "p").unwrap_err().to_string().contains("even node count"));
    }

    #[test]
    fn taper64_is_half_near_half_uniform() {
        // node 0's near set wraps by node number: 55, 56, 57, 63, 0, 1, 7, 8, 9
        let s = shares(&taper64(64, "p").unwrap()[0], 64);
        let near = [55, 56, 57, 63, 0, 1, 7, 8, 9];
        for (d, &got) in s.iter().enumerate() {
            let expect = 0.5 / 64.0 + if near.contains(&d) { 0.5 / 9.0 } else { 0.0 };
            assert!(close(got, expect), "node {d}: {got} against {expect}");
        }
        assert!(taper64(16, "p").is_err());
    }

    #[test]
    fn a_dragonflys_group_is_its_routers_nodes() {
        // a = 4 routers of p = 2 nodes a group: 8
        let t = Topology::build(&crate::config::TopologyConfig::Dragonfly {
            a: 4,
            p: 2,
            h: 2,
            global_latency: None,
        })
        .unwrap();
        assert_eq!(group_nodes(&t, "p").unwrap(), 8);
        let mesh =
            Topology::build(&crate::config::TopologyConfig::Mesh { k: Some(4), n: Some(2), dims: None })
                .unwrap();
        assert!(group_nodes(&mesh, "p").unwrap_err().to_string().contains("dragonfly"));
    }

    #[test]
    fn uniform_except_leaves_the_others() {
        assert_eq!(uniform_except(&[2, 3], 6, "p").unwrap(), vec![0, 1, 4, 5]);
        assert!(uniform_except(&[0, 1, 2], 3, "p").is_err());
        assert!(uniform_except(&[9], 8, "p").unwrap_err().to_string().contains("node 9"));
    }
}

//! The engine crate's module graph has no cycle (issue: "Engine in components with seams";
//! ARCHITECTURE.md). A top-level module depends on another when its code names it
//! (`crate::other::...`, outside `#[cfg(test)]` items: tests may use the whole engine);
//! `config` is pure data at the bottom, `build` constructs everything above it, and the
//! components (`router`, `endpoint`, `traffic`) reach each other only through `net`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each top-level module of `src/` and the top-level modules its non-test code names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.clone()];
    while let Some(p) = files.pop() {
        if p.is_dir() {
            files.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        if p.extension().is_none_or(|e| e != "rs") || p == src.join("lib.rs") {
            continue;
        }
        let rel = p.strip_prefix(&src).unwrap();
        let module = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        // Test modules stand at the end of a file, from their `#[cfg(test)]` on.
        let code = text.split("#[cfg(test)]").next().unwrap();
        let deps = graph.entry(module.clone()).or_default();
        for (i, _) in code.match_indices("crate::") {
            let name: String =
                code[i + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != module {
                deps.insert(name);
            }
        }
    }
    graph
}

/// A cycle of the graph, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            return Some(path[i..].to_vec());
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|m| visit(m, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_engine_s_module_graph_is_acyclic() {
    let graph = module_graph();
    assert!(graph.len() > 15, "read the modules: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle: {} -> {}", cycle.join(" -> "), cycle[0]);
    }
}

#[test]
fn configuration_is_pure_data_at_the_bottom() {
    let graph = module_graph();
    let allowed: BTreeSet<String> = ["error", "units"].iter().map(|s| s.to_string()).collect();
    assert!(graph["config"].is_subset(&allowed), "config names {:?}", graph["config"]);
}

#[test]
fn components_meet_only_through_net() {
    // Routers never name endpoints or traffic; endpoints never name traffic; none of them
    // names the engine that owns them.
    let graph = module_graph();
    for (m, forbidden) in [
        ("router", &["endpoint", "traffic", "engine", "build"][..]),
        ("endpoint", &["traffic", "engine", "build"][..]),
        ("traffic", &["router", "endpoint", "engine", "build"][..]),
        ("net", &["router", "endpoint", "traffic", "engine"][..]),
    ] {
        for f in forbidden {
            assert!(!graph[m].contains(*f), "{m} names {f}: {:?}", graph[m]);
        }
    }
}

#[test]
fn a_cycle_is_found_when_there_is_one() {
    let g: BTreeMap<String, BTreeSet<String>> =
        [("a", &["b"][..]), ("b", &["c"][..]), ("c", &["a"][..]), ("d", &[][..])]
            .iter()
            .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
            .collect();
    assert_eq!(find_cycle(&g).map(|c| c.len()), Some(3));
}

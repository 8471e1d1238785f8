//! The edge's layout stays layered: no circle of imports between its
//! top-level modules (`api`, `lifecycle`, `timeline`, `store`, …), and no
//! module below the assembly (`server.rs`) imports it — only the command
//! line, which starts a server, does. Read from the sources: every
//! `crate::MODULE` a file names, in `use` lines and paths alike.

use std::collections::{BTreeMap, BTreeSet};

/// Top-level module -> the top-level modules its files name.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = crate_dir().join("src");
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = vec![src.clone()];
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(
                std::fs::read_dir(&path)
                    .unwrap()
                    .flatten()
                    .map(|e| e.path()),
            );
            continue;
        }
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let relative = path.strip_prefix(&src).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        if top == "lib" || top == "main" {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let named = graph.entry(top.clone()).or_default();
        for module in crate_paths(&text) {
            if module != top {
                named.insert(module);
            }
        }
    }
    graph
}

/// The first segment of every `crate::…` path in `text`, including those
/// inside `use crate::{a, b::c}` groups.
fn crate_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                out.push(first_segment(part.trim()));
            }
        } else {
            out.push(first_segment(rest));
        }
    }
    // Modules are lower case; a capital is an item of a nested group.
    out.retain(|m| m.starts_with(|c: char| c.is_ascii_lowercase()));
    out
}

fn first_segment(path: &str) -> String {
    path.chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// A cycle through `from`, if there is one.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> Option<Vec<String>> {
    let mut stack = vec![(from.to_string(), vec![from.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == from {
                let mut cycle = path.clone();
                cycle.push(next.clone());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

#[test]
fn the_edges_modules_import_each_other_without_a_cycle() {
    let graph = graph();
    assert!(graph.len() > 10, "{graph:?}");
    let cycles: Vec<String> = graph
        .keys()
        .filter_map(|m| cycle_from(&graph, m))
        .map(|c| c.join(" -> "))
        .collect();
    assert!(cycles.is_empty(), "import cycles:\n{}", cycles.join("\n"));
}

#[test]
fn nothing_below_the_assembly_imports_it() {
    let graph = graph();
    let importers: Vec<&String> = graph
        .iter()
        .filter(|(module, named)| *module != "cli" && named.contains("server"))
        .map(|(module, _)| module)
        .collect();
    assert!(importers.is_empty(), "{importers:?} import server.rs");
}

#[test]
fn the_path_reader_sees_groups_and_paths() {
    let text = "use crate::{a::X, b};\nlet x = crate::c::f();\nuse crate::d::{E, F};";
    assert_eq!(crate_paths(text), ["a", "b", "c", "d"]);
}

/// This crate's folder: where `cargo test` says it is now, not where this
/// binary was built (a shared build cache serves clones at other paths).
fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}

//! `ephemeral bench`: the operator's table is whole and true to what it
//! measured — every isolation has a row, an offered one has its figures at
//! each concurrency (ordered percentiles, sandboxes that all answered),
//! one not offered says why. Its numbers are for the README, not here.

use std::process::Command;

use serde_json::Value;

fn bench(args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ephemeral"))
        .arg("bench")
        .args(args)
        .env_remove("EPHEMERAL_DATABASE_URL")
        .output()
        .expect("ephemeral bench");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let table = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), table, format!("{stdout}\n{stderr}"))
}

#[test]
fn the_table_has_a_row_per_isolation_with_ordered_figures() {
    let (ok, table, said) = bench(&["--quick", "--json"]);
    assert!(ok, "{said}");
    let rows = table["isolations"].as_array().expect("rows");
    let names: Vec<&str> = rows
        .iter()
        .filter_map(|r| r["isolation"].as_str())
        .collect();
    assert_eq!(names, ["wasm", "jail+wasm", "kvm+wasm"], "{said}");
    for row in rows {
        if row["offered"] != true {
            let why = row["why_not"].as_str().unwrap_or("");
            assert!(!why.is_empty(), "a row not offered says why: {row}");
            continue;
        }
        let levels = row["levels"].as_array().expect("levels");
        let clients: Vec<u64> = levels
            .iter()
            .filter_map(|l| l["clients"].as_u64())
            .collect();
        assert_eq!(clients, [1, 4], "{row}");
        for level in levels {
            let f = &level["first_output_ms"];
            let (p50, p95, p99) = (f["p50"].as_f64(), f["p95"].as_f64(), f["p99"].as_f64());
            let (p50, p95, p99) = (p50.unwrap(), p95.unwrap(), p99.unwrap());
            assert!(0.0 < p50 && p50 <= p95 && p95 <= p99, "{level}");
            assert!(level["sandboxes"].as_u64().unwrap() >= level["clients"].as_u64().unwrap());
            assert!(
                level["sandboxes_per_second"].as_f64().unwrap() > 0.0,
                "{level}"
            );
        }
        assert!(row["idle_sandbox_kib"].as_u64().is_some(), "{row}");
    }
    // This host always offers the in-process sandbox and the jail.
    assert_eq!(rows[0]["offered"], true, "{said}");
    assert_eq!(rows[1]["offered"], true, "{said}");
}

#[test]
fn the_table_prints_for_a_person_and_names_a_bad_isolation() {
    let (ok, _, said) = bench(&["--quick", "--isolation", "wasm"]);
    assert!(ok, "{said}");
    assert!(
        said.contains("p50 ms") && said.contains("in 1 GiB"),
        "{said}"
    );
    // One table: every figure ends in its heading's column.
    let lines: Vec<&str> = said.lines().collect();
    let header = lines
        .iter()
        .position(|l| l.contains("p50 ms"))
        .expect("a header");
    let ends = |line: &str| -> Vec<usize> {
        let mut ends = Vec::new();
        let chars: Vec<char> = line.chars().collect();
        for (i, c) in chars.iter().enumerate() {
            let next_blank = chars.get(i + 1).is_none_or(|n| *n == ' ');
            if *c != ' ' && next_blank {
                ends.push(i);
            }
        }
        ends
    };
    // The heading's words end where its columns do ("p50 ms" is one).
    let heading = lines[header].replace(" ms", "_ms");
    let columns = ends(&heading)[1..].to_vec();
    let rows = &lines[header + 1..header + 3];
    for row in rows {
        assert_eq!(ends(row), columns, "aligned under the heading:\n{said}");
    }
    let (ok, _, said) = bench(&["--isolation", "vmware"]);
    assert!(!ok);
    assert!(said.contains("not an isolation level"), "{said}");
    assert_eq!(said.trim().lines().count(), 1, "one plain line: {said}");
}

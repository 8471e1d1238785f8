//! Parity with jq 1.6 as Debian 12 ships it (issue 13): `input`/`inputs`,
//! `-n`, `--arg`/`--argjson`/`--slurpfile`/`--rawfile`/`--args`, `$ENV`,
//! `env`, the output options, the `@` formats, and the error messages,
//! locations (`(at file:line)`) and exit statuses.
//!
//! The cases are in `jq_parity/cases.txt`; what jq did with them was
//! recorded by `tests/record_parity.py` into `jq_parity/recorded.rs`
//! (never edited by hand). Each runs through the interpreter natively in
//! a fresh temporary folder.

mod parity;

use parity::{Case, run_case};

include!("jq_parity/recorded.rs");

#[test]
fn jq_matches_jq_1_6() {
    assert!(!RECORDED.is_empty());
    let failures: Vec<String> = RECORDED.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from jq:\n{}",
        failures.len(),
        RECORDED.len(),
        failures.join("\n")
    );
}

//! Parity of the options agents use most (issue 13: `diff -r`, `tar
//! --strip-components`, `ls --time-style`, `find -printf`, `date -d`,
//! `grep -m` with context, `sort -V`, `cut --complement`, `cat -A`, `curl -w`)
//! with GNU bash 5.2.15 and the Debian 12 tools, recorded by
//! `tests/record_parity.py` from `options_parity/cases.txt` into
//! `options_parity/recorded.rs` (never edited by hand).

mod parity;

use parity::{Case, run_case};

include!("options_parity/recorded.rs");

#[test]
fn options_match_the_real_tools() {
    assert!(!RECORDED.is_empty());
    let failures: Vec<String> = RECORDED.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from the real tools:\n{}",
        failures.len(),
        RECORDED.len(),
        failures.join("\n")
    );
}

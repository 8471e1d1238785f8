//! Parity with GNU bash 5.2.15 (Debian 12) for the details of issue 13:
//! `set -a`, `$BASHPID`, `${x:?}`, `PATH=dir cmd` and programs found on
//! `PATH`, `globstar`, `BASH_REMATCH`, `set -x` of `[[ ]]`, arithmetic and
//! syntax error messages (and the commands before a syntax error running
//! first), traps, `getopts`, `set -euo pipefail`, `local`, `declare -A`,
//! `mapfile`, `read` loops, `<<-` and `printf -v`.
//!
//! The cases are in `bash_details_parity/cases.txt`; what bash did with
//! them was recorded by `tests/record_parity.py` into
//! `bash_details_parity/recorded.rs` (never edited by hand). Each runs
//! through the interpreter natively in a fresh temporary folder.

mod parity;

use parity::{Case, run_case};

include!("bash_details_parity/recorded.rs");

#[test]
fn bash_details_match_bash() {
    assert!(!RECORDED.is_empty());
    let failures: Vec<String> = RECORDED.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from bash:\n{}",
        failures.len(),
        RECORDED.len(),
        failures.join("\n")
    );
}

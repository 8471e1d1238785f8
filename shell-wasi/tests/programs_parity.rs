//! Parity of the programs added for everyday agent work (`join`, `split`,
//! `numfmt`, `bc`, `xxd`, the compressors, …) with the real tools on
//! Debian 12 (GNU coreutils 9.1, bc 1.07.1, vim's xxd, util-linux's
//! hexdump, bzip2 1.0.8, xz-utils 5.4) under GNU bash 5.2.15.
//!
//! The cases are in `programs_parity/cases.txt`; their expected stdout,
//! stderr and exit status were recorded from the real tools by
//! `tests/record_parity.py` into `programs_parity/recorded.rs` (never
//! edited by hand). Each runs through the interpreter natively in a fresh
//! temporary folder. Output that is random by design (`shuf`) is checked
//! by properties: sorted, counted, or compared with its input.

mod parity;

use parity::{Case, run_case};

include!("programs_parity/recorded.rs");

#[test]
fn programs_match_the_real_tools() {
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

/// `command -v`, `type` and `which` find exactly the programs the
/// sandbox has: every name of the shell's tables (what the sandbox's
/// `/usr/bin` is made of), and not a made-up one.
#[test]
fn lookups_answer_for_exactly_what_exists() {
    let names = ephemeral_shell::utility_names();
    assert!(names.len() > 140, "{} programs", names.len());
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let script = format!(
        "for n in {}; do command -v \"$n\" >/dev/null || echo \"command: $n\"; \
         type \"$n\" >/dev/null || echo \"type: $n\"; which \"$n\" >/dev/null || echo \"which: $n\"; done; \
         command -v no-such-program-xyz || echo absent; type no-such-program-xyz 2>/dev/null || echo absent; \
         which no-such-program-xyz || echo absent",
        quoted.join(" ")
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let ran = parity::run_script(dir.path(), &script);
    assert_eq!(ran.stdout, "absent\nabsent\nabsent\n", "{}", ran.stderr);
}

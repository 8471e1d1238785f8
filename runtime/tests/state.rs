//! Shell state carries over from one command to the next in a sandbox,
//! and nothing carries over to another sandbox.

mod common;

use common::{sandbox, sh};

#[test]
fn working_folder_and_exports_carry_over() {
    let mut sb = sandbox();
    let scratch = sb.scratch_dir().to_owned();
    assert_eq!(
        sh(&mut sb, "mkdir sub && cd sub && export X=1"),
        (String::new(), String::new(), 0)
    );
    let (out, _, code) = sh(&mut sb, "pwd; echo $X");
    assert_eq!(code, 0);
    assert_eq!(out, format!("{scratch}/sub\n1\n"));
    let mut other = sandbox();
    let (out, _, _) = sh(&mut other, "pwd; echo \"[$X]\"");
    assert_eq!(out, format!("{}\n[]\n", other.scratch_dir()));
}

#[test]
fn files_carry_over_between_commands() {
    let mut sb = sandbox();
    sh(&mut sb, "printf 'sandbox proof\\n' > /tmp/proof.txt");
    let (out, _, code) = sh(&mut sb, "cat /tmp/proof.txt");
    assert_eq!((out.as_str(), code), ("sandbox proof\n", 0));
}

#[test]
fn identity_and_home_are_the_sandboxes() {
    let mut sb = sandbox();
    let scratch = sb.scratch_dir().to_owned();
    assert!(regex_like_run_dir(&scratch), "{scratch}");
    let (out, _, _) = sh(&mut sb, "pwd; whoami; echo $HOME");
    assert_eq!(out, format!("{scratch}\nworker\n{scratch}\n"));
}

#[test]
fn files_put_before_the_first_command_are_there() {
    let mut sb = common::runtime()
        .sandbox()
        .file("data/input.txt", "hello\n")
        .file("/tmp/abs.txt", "abs\n")
        .build()
        .unwrap();
    let (out, _, _) = sh(&mut sb, "cat data/input.txt /tmp/abs.txt");
    assert_eq!(out, "hello\nabs\n");
}

/// `/tmp/ephemeral-run-XXXXXX/scratch` with six letters or digits.
fn regex_like_run_dir(path: &str) -> bool {
    let Some(rest) = path.strip_prefix("/tmp/ephemeral-run-") else {
        return false;
    };
    let Some(random) = rest.strip_suffix("/scratch") else {
        return false;
    };
    random.len() == 6 && random.chars().all(|c| c.is_ascii_alphanumeric())
}

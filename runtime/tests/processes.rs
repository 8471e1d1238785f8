//! Processes in the sandbox: background jobs (`&`, `$!`, `wait`, `jobs`,
//! `kill`), `timeout` stopping any program, and programs run from other
//! programs — each its own component instance started by the host, with
//! the sandbox's files, exit codes and output order.
//!
//! Concurrency is shown by what a job sees (a file the foreground makes
//! after starting it), never by timing.

mod common;

use std::time::Duration;

use common::{sandbox_with, sh};
use ephemeral_runtime::{LimitHit, Limits};

fn limits() -> Limits {
    Limits {
        command_timeout: Duration::from_secs(30),
        ..Limits::default()
    }
}

#[test]
fn a_background_job_runs_while_the_script_goes_on() {
    let mut sb = sandbox_with(limits());
    let (out, err, code) = sh(
        &mut sb,
        "(while [ ! -f go ]; do sleep 0.01; done; echo saw-go > seen) &\n\
         pid=$!\n\
         touch go\n\
         wait $pid; echo \"job $?\"; cat seen",
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("job 0\nsaw-go\n", "", 0)
    );
}

#[test]
fn wait_returns_the_jobs_status_and_jobs_lists_them() {
    let mut sb = sandbox_with(limits());
    let (out, _, code) = sh(
        &mut sb,
        "sleep 5 &\n(exit 3) &\nwait %2; echo \"second $?\"\njobs\nkill %1\nwait %1; echo \"first $?\"",
    );
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "second 3\n[1]+  Running                 sleep 5 &\nfirst 143\n"
    );
}

#[test]
fn kill_stops_a_sleeping_job_at_once() {
    let mut sb = sandbox_with(limits());
    let outcome = sb
        .exec("sleep 100 & kill $!; wait $!", |_, _: &[u8]| {})
        .expect("exec");
    // Had the kill not stopped it, the command would have met its deadline.
    assert_eq!((outcome.exit_code, outcome.limit), (143, None));
    let (out, _, _) = sh(
        &mut sb,
        "sleep 100 & pid=$!; kill -9 $pid; wait $pid; echo $?",
    );
    assert_eq!(out, "137\n");
}

#[test]
fn a_job_sees_the_shells_variables_functions_and_folder() {
    let mut sb = sandbox_with(limits());
    let (out, err, code) = sh(
        &mut sb,
        "mkdir sub && cd sub\n\
         greet() { echo \"hello $1 from $(basename \"$PWD\")\"; }\n\
         name=world; arr=(a b c); declare -A m=([k]=v)\n\
         set -- p1 p2\n\
         { greet \"$name\"; echo \"${arr[2]} ${m[k]} $2\"; } &\n\
         wait",
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("hello world from sub\nc v p2\n", "", 0)
    );
}

#[test]
fn output_of_jobs_and_the_foreground_keeps_its_order() {
    let mut sb = sandbox_with(limits());
    let (out, _, _) = sh(
        &mut sb,
        "echo first\n(while [ ! -f go ]; do sleep 0.01; done; echo from-job) &\necho second; touch go; wait; echo third",
    );
    assert_eq!(out, "first\nsecond\nfrom-job\nthird\n");
}

#[test]
fn the_command_waits_for_jobs_still_writing_to_its_output() {
    // As a reader of the pipe waits for its end: bash -c 'x &' returns at
    // once, but the job's output still reaches whoever reads it.
    let mut sb = sandbox_with(limits());
    let (out, _, code) = sh(&mut sb, "(sleep 0.2; echo late) & echo early");
    assert_eq!((out.as_str(), code), ("early\nlate\n", 0));
    // A job whose output goes elsewhere is stopped with the command.
    let (out, _, _) = sh(&mut sb, "sleep 100 > /dev/null 2>&1 & echo detached");
    assert_eq!(out, "detached\n");
}

#[test]
fn timeout_stops_any_program_with_124() {
    let mut sb = sandbox_with(limits());
    let (out, err, code) = sh(
        &mut sb,
        "timeout 0.2 sleep 10; echo \"sleep $?\"\n\
         timeout 0.2 yes > /dev/null; echo \"yes $?\"\n\
         timeout 0.2 bash -c 'while :; do :; done'; echo \"loop $?\"\n\
         timeout 5 echo quick; echo \"quick $?\"\n\
         timeout --preserve-status 0.2 sleep 10; echo \"preserve $?\"\n\
         timeout 1 nosuch; echo \"missing $?\"",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "sleep 124\nyes 124\nloop 124\nquick\nquick 0\npreserve 143\nmissing 127\n"
    );
    assert_eq!(
        err,
        "timeout: failed to run command ‘nosuch’: No such file or directory\n"
    );
}

#[test]
fn what_a_command_left_running_does_not_outlive_it() {
    let mut sb = sandbox_with(limits());
    let _ = sh(
        &mut sb,
        "(sleep 0.3; echo leaked > /tmp/leak) > /dev/null 2>&1 & echo started",
    );
    std::thread::sleep(Duration::from_millis(600));
    let (out, _, _) = sh(&mut sb, "cat /tmp/leak 2>&1; echo done");
    assert_eq!(out, "cat: /tmp/leak: No such file or directory\ndone\n");
}

#[test]
fn a_runaway_job_is_stopped_at_the_commands_deadline() {
    let mut sb = sandbox_with(Limits {
        command_timeout: Duration::from_millis(500),
        ..Limits::default()
    });
    let outcome = sb
        .exec("while :; do :; done & wait", |_, _: &[u8]| {})
        .expect("exec");
    assert_eq!(outcome.exit_code, 124);
    assert_eq!(outcome.limit, Some(LimitHit::CommandTimeout));
    // The sandbox is fine afterwards.
    let (out, _, code) = sh(&mut sb, "echo next");
    assert_eq!((out.as_str(), code), ("next\n", 0));
}

#[test]
fn other_argv_forms_run_as_exec_would() {
    // What another program's subprocess call sends: the host runs the
    // shell as a multi-call program (exercised through `timeout`, which
    // starts its command as its own process).
    let mut sb = sandbox_with(limits());
    let (out, err, code) = sh(
        &mut sb,
        "printf '#!/bin/bash\\necho \"script $1\"\\nexit 7\\n' > s.sh; chmod +x s.sh\n\
         timeout 5 ./s.sh arg; echo \"s $?\"\n\
         timeout 5 bash -e -c 'false; echo never'; echo \"e $?\"\n\
         timeout 5 ls /nope; echo \"ls $?\"",
    );
    assert_eq!(code, 0);
    assert_eq!(out, "script arg\ns 7\ne 1\nls 2\n");
    assert_eq!(
        err,
        "ls: cannot access '/nope': No such file or directory\n"
    );
}

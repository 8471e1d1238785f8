//! `sh -c 'COMMAND'` inside the sandbox (or natively, for debugging).

use std::rc::Rc;

/// `--ephemeral-utilities`: the host asks once which utilities exist.
const LIST_UTILITIES: &str = "--ephemeral-utilities";

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.get(1).map(String::as_str) == Some(LIST_UTILITIES) {
        println!("{}", ephemeral_shell::utility_names().join("\n"));
        ephemeral_shell::host::exit(0);
    }
    let env: Vec<(String, String)> = std::env::vars().collect();
    let status = ephemeral_shell::run_argv(
        &argv,
        env,
        host(),
        Box::new(std::io::stdout()),
        Box::new(std::io::stderr()),
    );
    ephemeral_shell::host::exit(status);
}

#[cfg(target_os = "wasi")]
fn host() -> Rc<dyn ephemeral_shell::Host> {
    Rc::new(ephemeral_shell::host::WasiHost::default())
}

#[cfg(not(target_os = "wasi"))]
fn host() -> Rc<dyn ephemeral_shell::Host> {
    Rc::new(ephemeral_shell::FakeHost::new())
}

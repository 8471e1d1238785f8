//! `sh -c 'COMMAND'` inside the sandbox (or natively, for debugging).

use std::rc::Rc;

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let env: Vec<(String, String)> = std::env::vars().collect();
    let invocation = match ephemeral_shell::Invocation::from_args(&argv, env) {
        Ok(inv) => inv,
        Err(err) => {
            eprintln!("{}", err.0);
            ephemeral_shell::host::exit(2);
        }
    };
    let status = ephemeral_shell::run(
        invocation,
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

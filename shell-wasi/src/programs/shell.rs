//! `bash` and `sh` as programs: `bash -c TEXT [NAME [ARGS]]`,
//! `bash FILE [ARGS]`, or a script on stdin. Each is a fresh shell that
//! inherits only the environment and the working folder.

use super::Process;
use crate::interp::Shell;

pub(crate) fn bash(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let invoked = argv
        .first()
        .map_or("bash", |s| s.rsplit('/').next().unwrap_or(s))
        .to_string();
    let args = argv.get(1..).unwrap_or_default();
    let mut opts = Vec::new();
    let mut command = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-c" => {
                i += 1;
                command = args.get(i).cloned();
                if command.is_none() {
                    p.io.err_line(&format!("{invoked}: -c: option requires an argument"));
                    return 2;
                }
            }
            "-o" => {
                i += 1;
                if let Some(name) = args.get(i) {
                    opts.push(format!("-o {name}"));
                }
            }
            "--" => {
                i += 1;
                break;
            }
            "-s" | "-l" | "-i" | "--login" | "--noprofile" | "--norc" | "--posix" => {}
            a if a.starts_with('-') && a.len() > 1 => {
                opts.extend(a.chars().skip(1).map(|c| format!("-{c}")))
            }
            _ => break,
        }
        i += 1;
    }
    let rest: Vec<String> = args.get(i..).unwrap_or_default().to_vec();
    let (text, arg0, params) = match command {
        Some(text) => {
            let arg0 = rest.first().cloned().unwrap_or_else(|| invoked.clone());
            (text, arg0, rest.get(1..).unwrap_or_default().to_vec())
        }
        None => match rest.first() {
            Some(file) => match std::fs::read(p.resolve(file)) {
                Ok(bytes) => (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    file.clone(),
                    rest.get(1..).unwrap_or_default().to_vec(),
                ),
                Err(e) => {
                    p.io.err_line(&format!(
                        "{invoked}: {file}: {}",
                        crate::errors::strerror(&e)
                    ));
                    return 127;
                }
            },
            None => {
                let bytes = p.io.stdin.borrow_mut().read_all();
                (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    invoked.clone(),
                    Vec::new(),
                )
            }
        },
    };
    if p.depth + 1 >= crate::interp::MAX_NESTING {
        p.io.err_line(&format!("{invoked}: maximum nesting level exceeded"));
        return 1;
    }
    let mut shell = Shell::spawn(p.host, p.env, p.cwd, arg0, params, p.depth + 1);
    shell.is_script = !rest.is_empty() && !args.iter().any(|a| a == "-c");
    for opt in &opts {
        shell.set_option_flag(opt);
    }
    shell.run_toplevel(&text, p.io)
}

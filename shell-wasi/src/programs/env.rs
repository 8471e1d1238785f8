//! `env [-i] [-u NAME] [NAME=VALUE]... [COMMAND [ARG]...]` and `printenv`.

use super::Process;

pub(crate) fn env(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut vars: Vec<(String, String)> = p.env.to_vec();
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        match arg.as_str() {
            "-i" | "--ignore-environment" | "-" => vars.clear(),
            "-u" | "--unset" => {
                i += 1;
                let Some(name) = args.get(i) else {
                    p.error("option requires an argument -- 'u'");
                    p.try_help("env");
                    return 125;
                };
                vars.retain(|(k, _)| k != name);
            }
            "--" => {
                i += 1;
                break;
            }
            a if a.contains('=') && !a.starts_with('=') => {
                let (k, v) = a.split_once('=').unwrap_or((a, ""));
                vars.retain(|(name, _)| name != k);
                vars.push((k.to_string(), v.to_string()));
            }
            _ => break,
        }
        i += 1;
    }
    let command = args.get(i..).unwrap_or_default();
    let Some(program) = command.first() else {
        let text: String = vars.iter().map(|(k, v)| format!("{k}={v}\n")).collect();
        p.out(text.as_bytes());
        return 0;
    };
    let Some(util) = super::find(p.host, program.rsplit('/').next().unwrap_or(program)) else {
        p.error(&format!("{}: No such file or directory", p.quote(program)));
        return 127;
    };
    let mut child = Process::new(program, p.cwd, &vars, p.host, p.io, p.depth);
    util(&mut child, command)
}

/// `printenv [-0] [NAME]...`: exit 1 when a name is not set, 2 on a bad
/// option, as GNU's.
pub(crate) fn printenv(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = super::coreutils::args::Spec {
        short: "0",
        long: &[("null", '0', super::coreutils::args::HasArg::No)],
    };
    let args = match super::coreutils::parse_args(p, &spec, argv, 2) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let end = if args.has('0') { '\0' } else { '\n' };
    if args.operands.is_empty() {
        let text: String = p.env.iter().map(|(k, v)| format!("{k}={v}{end}")).collect();
        p.out(text.as_bytes());
        return 0;
    }
    let mut status = 0;
    let mut text = String::new();
    for name in &args.operands {
        match p.var(name).filter(|_| !name.contains('=')) {
            Some(v) => text.push_str(&format!("{v}{end}")),
            None => status = 1,
        }
    }
    p.out(text.as_bytes());
    status
}

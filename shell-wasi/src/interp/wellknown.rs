//! The variables bash defines itself: fixed ones set at start
//! (`BASH_VERSION`, `OSTYPE`, `UID`, ...) and ones computed on each use
//! from the shell's state (`BASHOPTS`, `SHELLOPTS`, `BASH_SUBSHELL`).

use super::Shell;
use super::vars::{Value, Var, Vars};

/// What this shell answers to version questions: the bash it imitates.
const VERSINFO: [&str; 6] = ["5", "2", "15", "1", "release", "x86_64-pc-linux-gnu"];

/// Sets the variables bash has from the start.
pub(super) fn init(vars: &mut Vars, arg0: &str) {
    let plain = [
        ("BASH", "/usr/bin/bash"),
        ("BASH_VERSION", "5.2.15(1)-release"),
        ("MACHTYPE", VERSINFO[5]),
        ("HOSTTYPE", "x86_64"),
        ("OSTYPE", "linux-gnu"),
        ("OPTERR", "1"),
        ("PS4", "+ "),
        ("COMP_WORDBREAKS", " \t\n\"'@><=;|&(:"),
        ("_", arg0),
    ];
    for (name, value) in plain {
        if vars.get_raw(name).is_none() {
            let _ = vars.set(name, value.to_string());
        }
    }
    let uid = crate::programs::ident::UID.to_string();
    for name in ["UID", "EUID"] {
        let _ = vars.set(name, uid.clone());
        if let Some(var) = vars.attrs_mut(name) {
            var.integer = true;
            var.readonly = true;
        }
    }
    let versinfo = VERSINFO
        .iter()
        .enumerate()
        .map(|(i, v)| (i, v.to_string()))
        .collect();
    let _ = vars.set_value("BASH_VERSINFO", Value::Indexed(versinfo));
    if let Some(var) = vars.attrs_mut("BASH_VERSINFO") {
        var.readonly = true;
    }
    let level = vars
        .scalar("SHLVL")
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let _ = vars.set("SHLVL", (level + 1).to_string());
    vars.mark_exported("SHLVL");
    // Declared arrays, as bash has them before any function runs.
    if vars.get_raw("FUNCNAME").is_none()
        && let Some(var) = vars.attrs_mut("FUNCNAME")
    {
        *var = Var {
            value: Value::Indexed(Default::default()),
            valueless: true,
            ..Var::default()
        };
    }
}

impl Shell {
    /// The variables computed from the shell's state on each use.
    pub(super) fn computed_var(&self, name: &str) -> Option<String> {
        Some(match name {
            "BASHOPTS" => {
                let mut on: Vec<&str> = crate::builtins::shopt::NAMES
                    .iter()
                    .copied()
                    .filter(|n| crate::builtins::shopt::is_on(self, n))
                    .collect();
                on.sort_unstable();
                on.join(":")
            }
            "SHELLOPTS" => crate::builtins::vars::option_names()
                .iter()
                .copied()
                .filter(|n| crate::builtins::vars::option_on(self, n))
                .collect::<Vec<_>>()
                .join(":"),
            "BASH_SUBSHELL" => self.subshell_level.to_string(),
            "BASH_ARGV0" => self.arg0.clone(),
            _ => return None,
        })
    }
}

//! Who the sandbox user is, and the trivial programs: `whoami`, `id`,
//! `pwd`, `true`, `false`.

use super::Process;

/// The only user in the sandbox.
pub(crate) const USER: &str = "worker";
/// Its uid and gid.
pub(crate) const UID: u32 = 1000;

/// The name of user (or group) `uid`: the two the sandbox has, else the
/// number, as `ls` prints an unknown owner.
pub(crate) fn user_name(uid: u32) -> String {
    match uid {
        0 => "root".to_string(),
        UID => USER.to_string(),
        other => other.to_string(),
    }
}

pub(crate) fn whoami(p: &mut Process<'_>, argv: &[String]) -> i32 {
    if let Some(extra) = argv.get(1) {
        p.error(&format!("extra operand {}", p.quote(extra)));
        p.try_help("whoami");
        return 1;
    }
    p.out(format!("{USER}\n").as_bytes());
    0
}

pub(crate) fn id(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, operands) = super::parse_flags(argv.get(1..).unwrap_or_default());
    if let Some(user) = operands.first().filter(|u| u.as_str() != USER) {
        p.error(&format!("{}: no such user", p.quote(user)));
        return 1;
    }
    let names = flags.iter().any(|f| f == "n" || f == "--name");
    let single = flags.iter().any(|f| {
        matches!(
            f.as_str(),
            "u" | "g" | "G" | "--user" | "--group" | "--groups"
        )
    });
    let line = if single {
        if names {
            USER.to_string()
        } else {
            UID.to_string()
        }
    } else {
        format!("uid={UID}({USER}) gid={UID}({USER}) groups={UID}({USER})")
    };
    p.out(format!("{line}\n").as_bytes());
    0
}

pub(crate) fn pwd(p: &mut Process<'_>, _argv: &[String]) -> i32 {
    p.out(format!("{}\n", p.cwd).as_bytes());
    0
}

pub(crate) fn true_(_p: &mut Process<'_>, _argv: &[String]) -> i32 {
    0
}

pub(crate) fn false_(_p: &mut Process<'_>, _argv: &[String]) -> i32 {
    1
}

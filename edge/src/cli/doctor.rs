//! `ephemeral doctor`: what this host offers each isolation layer, in
//! plain words — KVM and its kind, namespaces, seccomp, cgroups, Landlock,
//! the guest kernel — and which isolation this build will use. Reads
//! `/proc`, `/sys` and `/dev` only; changes nothing.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::isolation::Isolation;

struct Finding {
    what: &'static str,
    ok: bool,
    detail: String,
}

pub fn run() -> anyhow::Result<ExitCode> {
    let findings = [
        kvm(),
        namespaces(),
        seccomp(),
        cgroups(),
        landlock(),
        jail(),
        guest_kernel(),
    ];
    let mut out = std::io::stdout().lock();
    for f in &findings {
        let status = if f.ok { "ok" } else { "no" };
        let _ = writeln!(out, "{status:<4} {:<12} {}", f.what, f.detail);
    }
    let jailed = findings.iter().any(|f| f.what == "jail" && f.ok);
    let (isolation, why) = if jailed {
        (
            Isolation::Jail,
            "a jailed worker process per run; the microVM layer is not built yet",
        )
    } else {
        (
            Isolation::Wasm,
            "the sandbox in the server process: this host cannot jail workers",
        )
    };
    let _ = writeln!(
        out,
        "\nisolation this build uses: {} ({why})",
        isolation.timeline_name()
    );
    Ok(ExitCode::SUCCESS)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

fn kvm() -> Finding {
    let present = Path::new("/dev/kvm").exists();
    let kind = if Path::new("/sys/module/kvm_pvm").exists() {
        "PVM (software nested virtualisation: small test guests run, Linux guests do not)"
    } else if Path::new("/sys/module/kvm_intel").exists() {
        "Intel VMX"
    } else if Path::new("/sys/module/kvm_amd").exists() {
        "AMD SVM"
    } else {
        "unknown kind"
    };
    let writable = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/kvm")
        .is_ok();
    Finding {
        what: "kvm",
        ok: present && writable,
        detail: match (present, writable) {
            (false, _) => "no /dev/kvm: microVMs are not possible here".into(),
            (true, false) => format!("/dev/kvm ({kind}) is not accessible to this user"),
            (true, true) => format!("/dev/kvm: {kind}"),
        },
    }
}

fn namespaces() -> Finding {
    let kinds = ["user", "mnt", "pid", "net", "ipc", "uts", "cgroup"];
    let missing: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !Path::new(&format!("/proc/self/ns/{k}")).exists())
        .collect();
    let max_user = read("/proc/sys/user/max_user_namespaces")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    Finding {
        what: "namespaces",
        ok: missing.is_empty() && max_user > 0,
        detail: if missing.is_empty() {
            format!(
                "user, mount, PID, network, IPC, UTS and cgroup namespaces; {max_user} user namespaces allowed"
            )
        } else {
            format!("missing: {}", missing.join(", "))
        },
    }
}

fn seccomp() -> Finding {
    let status = read("/proc/self/status").unwrap_or_default();
    let supported = status.lines().any(|l| l.starts_with("Seccomp:"));
    let actions = read("/proc/sys/kernel/seccomp/actions_avail").unwrap_or_default();
    Finding {
        what: "seccomp",
        ok: supported && actions.contains("errno"),
        detail: if supported {
            format!("filters available (actions: {actions})")
        } else {
            "not in this kernel".into()
        },
    }
}

fn cgroups() -> Finding {
    if let Some(controllers) = read("/sys/fs/cgroup/cgroup.controllers") {
        return Finding {
            what: "cgroups",
            ok: true,
            detail: format!("v2, controllers: {controllers}"),
        };
    }
    let v1: Vec<&str> = ["memory", "pids", "cpu"]
        .into_iter()
        .filter(|c| Path::new(&format!("/sys/fs/cgroup/{c}")).exists())
        .collect();
    Finding {
        what: "cgroups",
        ok: v1.len() == 3,
        detail: if v1.is_empty() {
            "no cgroup controllers mounted".into()
        } else {
            format!("v1, controllers: {}", v1.join(", "))
        },
    }
}

fn landlock() -> Finding {
    let lsm = read("/sys/kernel/security/lsm");
    let on = lsm
        .as_deref()
        .is_some_and(|l| l.split(',').any(|m| m == "landlock"));
    Finding {
        what: "landlock",
        ok: on,
        detail: match lsm {
            Some(l) if on => format!("enabled (LSMs: {l})"),
            Some(l) => format!("not enabled (LSMs: {l}); an extra layer only"),
            None => "cannot tell (no /sys/kernel/security/lsm); an extra layer only".into(),
        },
    }
}

/// What `jail+wasm` needs: root (uid maps, cgroups), user namespaces and
/// cgroups with memory and pids.
fn jail() -> Finding {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let cgroups = ephemeral_worker::host::cgroup::detect();
    let userns = Path::new("/proc/self/ns/user").exists();
    let detail = match (root, userns, cgroups) {
        (false, _, _) => "jailed workers need root (uid maps and cgroups)".to_string(),
        (_, false, _) => "no user namespaces".to_string(),
        (_, _, None) => "no usable cgroups for the workers' caps".to_string(),
        (true, true, Some(version)) => format!(
            "jailed workers: namespaces, tmpfs root, no capabilities, seccomp, cgroups {}",
            match version {
                ephemeral_worker::host::CgroupVersion::V1 => "v1",
                ephemeral_worker::host::CgroupVersion::V2 => "v2",
            }
        ),
    };
    Finding {
        what: "jail",
        ok: root && userns && cgroups.is_some(),
        detail,
    }
}

fn guest_kernel() -> Finding {
    Finding {
        what: "guest",
        ok: false,
        detail: "no guest kernel built (the microVM layer is not in this build)".into(),
    }
}

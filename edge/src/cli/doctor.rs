//! `ephemeral doctor`: what this host offers each isolation layer, in
//! plain words — KVM and its kind, namespaces, seccomp, cgroups, Landlock,
//! the guest kernel — and which isolation this build will use. Reads
//! `/proc`, `/sys` and `/dev` only; changes nothing.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::isolation::{Isolation, KvmUnavailable};

struct Finding {
    what: &'static str,
    ok: bool,
    detail: String,
}

pub fn run() -> anyhow::Result<ExitCode> {
    // Once: the finding and the isolation verdict both read it.
    let self_test = crate::isolation::kvm_self_test();
    let findings = [
        kvm(&self_test),
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
    let guest = findings.iter().any(|f| f.what == "guest" && f.ok);
    let kvm = self_test
        .as_ref()
        .map_err(Clone::clone)
        .and_then(crate::isolation::kvm_ready_from);
    let (isolation, why) = if jailed && guest && kvm.is_ok() {
        (
            Isolation::Kvm,
            "a microVM per run, restored from the template snapshot the server makes at start, \
             its VMM jailed like a worker",
        )
    } else if jailed {
        (Isolation::Jail, "a jailed worker process per run")
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
    if let Err(why) = kvm {
        let _ = writeln!(out, "kvm+wasm: not here: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// `/dev/kvm` and its kind, from its self-test.
fn kvm(self_test: &Result<ephemeral_vm::SelfTest, KvmUnavailable>) -> Finding {
    let Ok(report) = self_test else {
        return Finding {
            what: "kvm",
            ok: false,
            detail: "no /dev/kvm: microVMs are not possible here".into(),
        };
    };
    let linux = if report.kind == ephemeral_vm::KvmKind::Pvm {
        "; PVM runs small test guests but not Linux: microVMs need the lab (vm-fallback/lab) here"
    } else {
        ""
    };
    Finding {
        what: "kvm",
        ok: report.passed(),
        detail: format!("/dev/kvm self-test: {report}{linux}"),
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

/// Asks the kernel for its Landlock ABI version (the LSM list in
/// securityfs is often not mounted).
fn landlock() -> Finding {
    const CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute, size 0 and the VERSION flag the call
    // only returns a number.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    Finding {
        what: "landlock",
        ok: abi > 0,
        detail: if abi > 0 {
            format!("ABI version {abi}: workers add a read-only ruleset")
        } else {
            format!(
                "not available ({}); an extra layer only",
                std::io::Error::last_os_error()
            )
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

/// The microVM's guest kernel, built once per machine by
/// `vm-fallback/guest/build-kernel`.
fn guest_kernel() -> Finding {
    let dir = std::env::var_os("EPHEMERAL_GUEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/var/cache/ephemeral/guest".into());
    let vmlinux = dir.join("vmlinux");
    Finding {
        what: "guest",
        ok: vmlinux.is_file(),
        detail: if vmlinux.is_file() {
            format!(
                "guest kernel {} (the microVM's: the worker is its init)",
                vmlinux.display()
            )
        } else {
            "no guest kernel built (vm-fallback/guest/build-kernel builds it)".into()
        },
    }
}

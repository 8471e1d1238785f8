//! `ephemeral doctor`: what this host offers each isolation layer, in
//! plain words — KVM and its kind, namespaces, seccomp, cgroups, Landlock
//! — where each part of a sandbox was found (the release's layout, a
//! variable, or the build cache), whether this host can serve each
//! isolation and why not, and which one a server here uses. Reads `/proc`,
//! `/sys`, `/dev` and the parts' folders only; changes nothing.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use crate::install::{CACHE_ROOT, Layout, Part};
use crate::isolation::{Isolation, KvmUnavailable};
use crate::sandbox::beside_this_executable;

struct Finding {
    what: &'static str,
    ok: bool,
    detail: String,
}

pub fn run() -> anyhow::Result<ExitCode> {
    let layout = Layout::detect();
    // Once: the finding and the isolation verdict both read it.
    let self_test = crate::isolation::kvm_self_test();
    let findings = [
        kvm(&self_test),
        namespaces(),
        seccomp(),
        cgroups(),
        landlock(),
        jail(),
    ];
    let parts = parts(&layout);
    let mut out = std::io::stdout().lock();
    match layout.release() {
        Some(lib) => {
            let _ = writeln!(out, "release: parts under {}", lib.display());
        }
        None => {
            let _ = writeln!(
                out,
                "source build: parts from the build cache ({CACHE_ROOT}) unless a variable names them"
            );
        }
    }
    for f in findings.iter().chain(&parts) {
        let status = if f.ok { "ok" } else { "no" };
        let _ = writeln!(out, "{status:<4} {:<12} {}", f.what, f.detail);
    }
    let ok = |what: &str| {
        findings
            .iter()
            .chain(&parts)
            .any(|f| f.what == what && f.ok)
    };
    let kvm = self_test
        .as_ref()
        .map_err(Clone::clone)
        .and_then(crate::isolation::kvm_ready_from)
        .map_err(|e| e.to_string());
    let missing: Vec<&str> = ["vmm", "guest", "guest-init"]
        .into_iter()
        .filter(|what| !ok(what))
        .collect();
    let jail_verdict = if ok("jail") {
        Ok(())
    } else {
        Err(detail_of(&findings, "jail"))
    };
    let kvm_verdict = match (&jail_verdict, kvm) {
        (Err(why), _) => Err(format!("the VMM is jailed like a worker, and {why}")),
        (_, Err(why)) => Err(why),
        (Ok(()), Ok(_)) if !missing.is_empty() => {
            Err(format!("missing: {} (see above)", missing.join(", ")))
        }
        (Ok(()), Ok(_)) => Ok(()),
    };
    let _ = writeln!(out, "\nwhat this host can serve:");
    let verdicts = [
        (
            Isolation::Wasm,
            Ok(()),
            "sandboxes in the server process (development only)",
        ),
        (
            Isolation::Jail,
            jail_verdict.clone(),
            "a jailed worker process per run",
        ),
        (
            Isolation::Kvm,
            kvm_verdict.clone(),
            "a microVM per run, restored from the template snapshot the server makes at start, \
             its VMM jailed like a worker",
        ),
    ];
    for (isolation, verdict, what) in &verdicts {
        let name = isolation.timeline_name();
        let _ = match verdict {
            Ok(()) => writeln!(out, "yes  {name:<10} {what}"),
            Err(why) => writeln!(out, "no   {name:<10} {why}"),
        };
    }
    let (isolation, why) = verdicts
        .iter()
        .rev()
        .find(|(_, verdict, _)| verdict.is_ok())
        .map(|(isolation, _, what)| (*isolation, *what))
        .unwrap_or((Isolation::Wasm, verdicts[0].2));
    let _ = writeln!(
        out,
        "\nisolation this build uses: {} ({why})",
        isolation.timeline_name()
    );
    if let Err(why) = kvm_verdict {
        let _ = writeln!(out, "kvm+wasm: not here: {why}");
    }
    Ok(ExitCode::SUCCESS)
}

fn detail_of(findings: &[Finding], what: &str) -> String {
    findings
        .iter()
        .find(|f| f.what == what)
        .map(|f| f.detail.clone())
        .unwrap_or_default()
}

/// The parts a microVM and the sandboxes are made of, and where each was
/// found.
fn parts(layout: &Layout) -> Vec<Finding> {
    let file = |what: &'static str, part: Part, missing: &str| {
        let found = part.path.is_file();
        Finding {
            what,
            ok: found,
            detail: if found {
                format!("{} ({})", part.path.display(), part.origin)
            } else {
                format!(
                    "{}: not there ({}); {missing}",
                    part.path.display(),
                    part.origin
                )
            },
        }
    };
    let vmm = match beside_this_executable("EPHEMERAL_VMM_BIN", "ephemeral-vmm") {
        Ok(path) => Finding {
            what: "vmm",
            ok: path.is_file(),
            detail: format!("{} (the microVM monitor)", path.display()),
        },
        Err(why) => Finding {
            what: "vmm",
            ok: false,
            detail: why.to_string(),
        },
    };
    let programs = layout.programs_dir();
    let names = program_names(&programs.path);
    let components = match layout.precompiled_components() {
        Some(dir) => format!("; precompiled components in {}", dir.display()),
        None => String::new(),
    };
    vec![
        vmm,
        file(
            "guest",
            layout.guest_kernel(),
            "the microVM's kernel (vm-fallback/guest/build-kernel builds it)",
        ),
        file(
            "guest-init",
            layout.guest_worker(),
            "the microVM's static worker (./dev dist builds it)",
        ),
        Finding {
            what: "programs",
            ok: !names.is_empty(),
            detail: if names.is_empty() {
                format!(
                    "none in {} ({}): the shell runs, python3 and node do not",
                    programs.path.display(),
                    programs.origin
                )
            } else {
                format!(
                    "{} in {} ({}){components}",
                    names.join(", "),
                    programs.path.display(),
                    programs.origin
                )
            },
        },
    ]
}

/// The programs (`NAME.wasm`) a folder holds.
fn program_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_suffix(".wasm"))
                .map(str::to_owned)
        })
        .collect();
    names.sort();
    names
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

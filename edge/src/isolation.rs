//! Isolation levels, strongest last, as API.md names them.

use serde::{Deserialize, Serialize};

/// How a run's sandbox is kept from the host, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    /// The WASI sandbox in the server process: development only.
    Wasm,
    /// In a per-run jailed worker process.
    Jail,
    /// In a per-run KVM microVM.
    Kvm,
}

impl Isolation {
    /// The name on the timeline and in the run object.
    pub fn timeline_name(self) -> &'static str {
        match self {
            Isolation::Wasm => "wasm",
            Isolation::Jail => "jail+wasm",
            Isolation::Kvm => "kvm+wasm",
        }
    }

    /// The name on the command line (`--isolation kvm`).
    pub fn short_name(self) -> &'static str {
        match self {
            Isolation::Wasm => "wasm",
            Isolation::Jail => "jail",
            Isolation::Kvm => "kvm",
        }
    }

    /// The level named `s`, by either name (`jail` or `jail+wasm`).
    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "wasm" => Some(Isolation::Wasm),
            "jail" | "jail+wasm" => Some(Isolation::Jail),
            "kvm" | "kvm+wasm" => Some(Isolation::Kvm),
            _ => None,
        }
    }
}

/// Why this host's KVM cannot run the microVM, in one line each.
#[derive(Debug, Clone, thiserror::Error)]
pub enum KvmUnavailable {
    /// No `/dev/kvm`.
    #[error("there is no /dev/kvm on this host")]
    NoDevice,
    /// The self-test's guest did not run as it should.
    #[error("the KVM self-test failed: {0}")]
    SelfTestFailed(String),
    #[error(
        "/dev/kvm here is PVM, which runs small test guests but cannot boot the microVM's \
         Linux guest (vm-fallback/lab proves the microVM on an emulated AMD SVM)"
    )]
    /// The KVM is PVM, which cannot boot the microVM's Linux guest.
    Pvm,
}

/// `/dev/kvm`'s self-test: a tiny guest run for real, bounded (a KVM that
/// answers every query can still fail to run guest code; it never hangs).
pub fn kvm_self_test() -> Result<ephemeral_vm::SelfTest, KvmUnavailable> {
    if !std::path::Path::new("/dev/kvm").exists() {
        return Err(KvmUnavailable::NoDevice);
    }
    Ok(ephemeral_vm::self_test(std::time::Duration::from_secs(2)))
}

/// Whether a KVM whose self-test gave `report` can run the microVM: the
/// test passed and it is a hardware KVM, not PVM.
pub fn kvm_ready_from(
    report: &ephemeral_vm::SelfTest,
) -> Result<ephemeral_vm::KvmKind, KvmUnavailable> {
    if !report.passed() {
        return Err(KvmUnavailable::SelfTestFailed(report.to_string()));
    }
    if report.kind == ephemeral_vm::KvmKind::Pvm {
        return Err(KvmUnavailable::Pvm);
    }
    Ok(report.kind)
}

/// [`kvm_self_test`], then [`kvm_ready_from`].
pub fn kvm_ready() -> Result<ephemeral_vm::KvmKind, KvmUnavailable> {
    kvm_ready_from(&kvm_self_test()?)
}

/// Why this server cannot give runs `kvm+wasm`, in one line, or what
/// would serve them.
pub fn kvm_unavailable_reason() -> String {
    match kvm_ready() {
        Err(why) => why.to_string(),
        Ok(kind) => format!(
            "{kind}: runs can be served from microVMs (the server makes its template snapshot at start)"
        ),
    }
}

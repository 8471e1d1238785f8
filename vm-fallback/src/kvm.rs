//! Opening `/dev/kvm`: the API version, the extensions this crate needs, and
//! which KVM implementation answers.
//!
//! What it does: opens the device, refuses a KVM without the extensions every
//! VM here relies on, records the optional ones so later modules can skip what
//! the host lacks, and names the implementation (`kvm_pvm`, `kvm_amd`,
//! `kvm_intel`) from `/sys/module`.
//!
//! What it does not do: create VMs (`vm.rs`), or judge whether guests really
//! run; only `selftest.rs` knows that, since PVM answers capability queries
//! for things it then fails to run.

use std::fmt;
use std::path::Path;

use kvm_bindings::{CpuId, KVM_API_VERSION, KVM_MAX_CPUID_ENTRIES};
use kvm_ioctls::Cap;

/// Where the kernel lists loaded modules; each KVM flavour is its own module.
const SYS_MODULE_DIR: &str = "/sys/module";

/// Extensions without which no VM in this crate can run: guest RAM from our
/// own mappings, and `KVM_SET_CPUID2`.
const REQUIRED_CAPS: &[(Cap, &str)] = &[
    (Cap::UserMemory, "KVM_CAP_USER_MEMORY"),
    (Cap::ExtCpuid, "KVM_CAP_EXT_CPUID"),
];

/// Errors from opening and checking `/dev/kvm`.
#[derive(Debug, thiserror::Error)]
pub enum KvmError {
    /// The device could not be opened (absent, or no permission).
    #[error("cannot open /dev/kvm: {0}")]
    Open(#[source] vmm_sys_util::errno::Error),
    /// The kernel speaks another KVM API than the stable one (12).
    #[error("/dev/kvm speaks API version {found}, this VMM needs {KVM_API_VERSION}")]
    ApiVersion {
        /// The version the kernel reported.
        found: i32,
    },
    /// A required extension is missing.
    #[error("/dev/kvm lacks the {0} extension, which every VM here needs")]
    MissingCap(&'static str),
    /// `KVM_GET_SUPPORTED_CPUID` failed.
    #[error("cannot read the CPUID KVM supports: {0}")]
    SupportedCpuid(#[source] vmm_sys_util::errno::Error),
    /// `KVM_GET_MSR_INDEX_LIST` failed.
    #[error("cannot read the list of MSRs KVM saves: {0}")]
    MsrIndexList(#[source] vmm_sys_util::errno::Error),
}

/// Which kernel module implements `/dev/kvm`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvmKind {
    /// `kvm_pvm`: page-table based software virtualisation, usable inside a
    /// VM that has no nested hardware virtualisation.
    Pvm,
    /// `kvm_amd`: AMD-V (SVM) hardware virtualisation.
    AmdSvm,
    /// `kvm_intel`: Intel VT-x (VMX) hardware virtualisation.
    IntelVmx,
    /// `/dev/kvm` exists but none of the modules above is loaded.
    Unknown,
}

impl KvmKind {
    /// Detects the implementation from this host's `/sys/module`.
    pub fn detect() -> Self {
        Self::detect_in(Path::new(SYS_MODULE_DIR))
    }

    /// Detects the implementation from a `/sys/module`-like folder. PVM is
    /// checked first: it can be loaded next to `kvm_intel` or `kvm_amd`, and
    /// when it is, it is the one this process is most likely to get.
    pub fn detect_in(sys_module: &Path) -> Self {
        let loaded = |name: &str| sys_module.join(name).exists();
        if loaded("kvm_pvm") {
            KvmKind::Pvm
        } else if loaded("kvm_amd") {
            KvmKind::AmdSvm
        } else if loaded("kvm_intel") {
            KvmKind::IntelVmx
        } else {
            KvmKind::Unknown
        }
    }
}

impl fmt::Display for KvmKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KvmKind::Pvm => "PVM (software nested virtualisation)",
            KvmKind::AmdSvm => "AMD SVM (hardware virtualisation)",
            KvmKind::IntelVmx => "Intel VMX (hardware virtualisation)",
            KvmKind::Unknown => "an unknown KVM implementation",
        })
    }
}

/// Optional extensions; each `false` makes some later step skip a piece.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    /// `kvm_run.immediate_exit`: the watchdog's race-free kick.
    pub immediate_exit: bool,
    /// An in-kernel irqchip (and with it a local APIC to save).
    pub irqchip: bool,
    /// `KVM_GET/SET_XCRS`.
    pub xcrs: bool,
    /// `KVM_GET/SET_VCPU_EVENTS`.
    pub vcpu_events: bool,
    /// `KVM_GET/SET_MP_STATE`.
    pub mp_state: bool,
    /// `KVM_GET/SET_XSAVE`: the guest's AVX and other extended state.
    pub xsave: bool,
    /// The local APIC's TSC-deadline mode, which KVM emulates but leaves
    /// out of `KVM_GET_SUPPORTED_CPUID`: the VMM must advertise it.
    pub tsc_deadline_timer: bool,
}

/// An open, checked `/dev/kvm`.
#[derive(Debug)]
pub struct Kvm {
    fd: kvm_ioctls::Kvm,
    kind: KvmKind,
    caps: Capabilities,
}

impl Kvm {
    /// Opens `/dev/kvm` and checks the API version and required extensions.
    pub fn open() -> Result<Self, KvmError> {
        let fd = kvm_ioctls::Kvm::new().map_err(KvmError::Open)?;
        let found = fd.get_api_version();
        if found != KVM_API_VERSION as i32 {
            return Err(KvmError::ApiVersion { found });
        }
        for (cap, name) in REQUIRED_CAPS {
            if !fd.check_extension(*cap) {
                return Err(KvmError::MissingCap(name));
            }
        }
        let caps = Capabilities {
            immediate_exit: fd.check_extension(Cap::ImmediateExit),
            irqchip: fd.check_extension(Cap::Irqchip),
            xcrs: fd.check_extension(Cap::Xcrs),
            vcpu_events: fd.check_extension(Cap::VcpuEvents),
            mp_state: fd.check_extension(Cap::MpState),
            xsave: fd.check_extension(Cap::Xsave),
            tsc_deadline_timer: fd.check_extension(Cap::TscDeadlineTimer),
        };
        let kind = KvmKind::detect();
        tracing::debug!(%kind, ?caps, "opened /dev/kvm");
        Ok(Kvm { fd, kind, caps })
    }

    /// Which implementation answers.
    pub fn kind(&self) -> KvmKind {
        self.kind
    }

    /// The optional extensions present.
    pub fn capabilities(&self) -> Capabilities {
        self.caps
    }

    /// The CPUID entries KVM can give a guest (`KVM_GET_SUPPORTED_CPUID`).
    pub fn supported_cpuid(&self) -> Result<CpuId, KvmError> {
        self.fd
            .get_supported_cpuid(KVM_MAX_CPUID_ENTRIES)
            .map_err(KvmError::SupportedCpuid)
    }

    /// The MSR indices KVM can save and restore (`KVM_GET_MSR_INDEX_LIST`).
    pub fn msr_index_list(&self) -> Result<Vec<u32>, KvmError> {
        let list = self
            .fd
            .get_msr_index_list()
            .map_err(KvmError::MsrIndexList)?;
        Ok(list.as_slice().to_vec())
    }

    /// The raw handle, for ioctls this crate does not wrap.
    pub fn fd(&self) -> &kvm_ioctls::Kvm {
        &self.fd
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_sys_module(modules: &[&str]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "ephemeral-vm-kind-{}-{}",
            std::process::id(),
            modules.join("-")
        ));
        let _ = std::fs::remove_dir_all(&dir);
        for m in modules {
            std::fs::create_dir_all(dir.join(m)).unwrap();
        }
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn kind_detection_prefers_pvm_then_amd_then_intel() {
        let cases: &[(&[&str], KvmKind)] = &[
            (&["kvm", "kvm_pvm", "kvm_intel"], KvmKind::Pvm),
            (&["kvm", "kvm_amd"], KvmKind::AmdSvm),
            (&["kvm", "kvm_intel"], KvmKind::IntelVmx),
            (&["kvm"], KvmKind::Unknown),
        ];
        for (modules, want) in cases {
            let dir = fake_sys_module(modules);
            assert_eq!(KvmKind::detect_in(&dir), *want, "{modules:?}");
            std::fs::remove_dir_all(dir).unwrap();
        }
    }

    #[test]
    fn kind_names_read_as_plain_words() {
        assert_eq!(
            KvmKind::Pvm.to_string(),
            "PVM (software nested virtualisation)"
        );
        assert_eq!(
            KvmKind::IntelVmx.to_string(),
            "Intel VMX (hardware virtualisation)"
        );
    }
}

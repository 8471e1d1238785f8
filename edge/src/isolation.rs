//! Isolation levels, strongest last, as API.md names them.

use serde::{Deserialize, Serialize};

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

    pub fn parse(s: &str) -> Option<Isolation> {
        match s {
            "wasm" => Some(Isolation::Wasm),
            "jail" | "jail+wasm" => Some(Isolation::Jail),
            "kvm" | "kvm+wasm" => Some(Isolation::Kvm),
            _ => None,
        }
    }
}

//! Identifiers and secrets: run and sandbox ids, organisation ids, member
//! keys.
//!
//! Ids are random, never sequential, so they say nothing about volume or
//! other tenants. Member keys are shown once and stored as a BLAKE3 hash.

use rand::RngCore;

/// `run_` + 32 lowercase hex digits of randomness (API.md).
pub fn new_run_id() -> String {
    format!("run_{}", random_hex(16))
}

/// `sbx_` + 32 lowercase hex digits of randomness (API.md).
pub fn new_sandbox_id() -> String {
    format!("sbx_{}", random_hex(16))
}

/// What a record of the `runs` table is: a run (our agent's) or a
/// sandbox (driven by its caller). Its id's prefix says which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// A run of our agent (`run_…`).
    Run,
    /// A sandbox its caller drives (`sbx_…`).
    Sandbox,
}

impl RecordKind {
    /// Its ids' prefix: `run_` or `sbx_`.
    pub fn prefix(self) -> &'static str {
        match self {
            RecordKind::Run => "run_",
            RecordKind::Sandbox => "sbx_",
        }
    }

    /// The kind of a well-formed id.
    pub fn of(id: &str) -> Option<RecordKind> {
        [RecordKind::Run, RecordKind::Sandbox]
            .into_iter()
            .find(|kind| is_id(id, kind.prefix()))
    }
}

/// `smp_` + 24 lowercase hex digits: a published sample.
pub fn new_sample_id() -> String {
    format!("smp_{}", random_hex(12))
}

/// Whether `s` is a well-formed sample id.
pub fn is_sample_id(s: &str) -> bool {
    s.len() == 28
        && s.starts_with("smp_")
        && s[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `org_` + 24 lowercase hex digits of randomness.
pub fn new_org_id() -> String {
    format!("org_{}", random_hex(12))
}

/// A member key: `eph_` + 48 hex digits (192 bits).
pub fn new_member_key() -> String {
    format!("eph_{}", random_hex(24))
}

/// What the store keeps of a member key.
pub fn key_hash(key: &str) -> String {
    blake3::hash(key.as_bytes()).to_hex().to_string()
}

/// Whether `s` is a well-formed run id.
pub fn is_run_id(s: &str) -> bool {
    is_id(s, "run_")
}

/// Whether `s` is a well-formed sandbox id.
pub fn is_sandbox_id(s: &str) -> bool {
    is_id(s, "sbx_")
}

fn is_id(s: &str, prefix: &str) -> bool {
    s.len() == 36
        && s.starts_with(prefix)
        && s[4..]
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_have_the_documented_shape() {
        let id = new_run_id();
        assert!(is_run_id(&id), "{id}");
        assert_ne!(id, new_run_id());
        assert!(!is_run_id("run_DE9AF30EBAAA50AB76819BB536239C61"));
        assert!(!is_run_id("run_1"));
        let sbx = new_sandbox_id();
        assert!(is_sandbox_id(&sbx) && !is_run_id(&sbx));
        assert_eq!(RecordKind::of(&sbx), Some(RecordKind::Sandbox));
        assert_eq!(RecordKind::of(&id), Some(RecordKind::Run));
        assert_eq!(RecordKind::of("sbx_x"), None);
    }

    #[test]
    fn keys_hash_stably() {
        let k = new_member_key();
        assert_eq!(key_hash(&k), key_hash(&k));
        assert_ne!(key_hash(&k), key_hash(&new_member_key()));
    }
}

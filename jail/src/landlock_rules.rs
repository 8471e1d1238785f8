//! Landlock, an extra layer where the kernel has it: the whole (already
//! tiny, read-only) tree may be read, nothing may be written, created,
//! executed or re-linked anywhere. Applied before any thread exists, so
//! every thread of the worker inherits it.

use landlock::{
    ABI, Access, AccessFs, Ruleset, RulesetAttr, RulesetCreatedAttr, RulesetStatus,
    path_beneath_rules,
};

use super::{JailError, LandlockStatus};

pub(super) fn restrict_to_read_only() -> Result<LandlockStatus, JailError> {
    let abi = ABI::V5;
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let status = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], read)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| JailError::Landlock(e.to_string()))?;
    Ok(match status.ruleset {
        RulesetStatus::FullyEnforced => LandlockStatus::Enforced,
        RulesetStatus::PartiallyEnforced => LandlockStatus::Partial,
        RulesetStatus::NotEnforced => LandlockStatus::Unavailable,
    })
}

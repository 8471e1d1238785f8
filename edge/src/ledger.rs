//! The ledger: how money moves, in integer micros, written once.
//!
//! An organisation has a `balance` and a `held` amount (the sum of its
//! in-flight reservations). Reserve: `held += reserved` when
//! `balance - held >= reserved`. Settle: `held -= reserved`,
//! `balance -= charged`. So the balance moves by exactly `charged`, and
//! `charged + released = reserved` by construction.
//!
//! This module is the rule, pure, tested alone. The two transactions that
//! apply it — a run's creation with its reservation, and its settlement —
//! are written once in `store/transactions.rs`, over the steps each store
//! backend spells in its own SQL.

use serde::{Deserialize, Serialize};

/// What a run has used so far, by kind, in micros: persisted as it goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metered {
    /// Model calls.
    pub model_micros: i64,
    /// `web_fetch` calls.
    pub web_micros: i64,
    /// The sandbox: vCPU-seconds of its lifetime and GiB-seconds of its memory
    /// cap.
    pub compute_micros: i64,
}

impl Metered {
    /// All kinds together.
    pub fn total(&self) -> i64 {
        self.model_micros
            .saturating_add(self.web_micros)
            .saturating_add(self.compute_micros)
    }
}

/// The end of a run in money.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settlement {
    pub reserved: i64,
    pub charged: i64,
    pub released: i64,
    pub model: i64,
    pub web: i64,
    pub compute: i64,
}

/// Whether an organisation can reserve `amount`.
pub fn can_reserve(balance: i64, held: i64, amount: i64) -> bool {
    amount > 0 && balance.saturating_sub(held) >= amount
}

/// charged = min(used, reserved), split across kinds in the order model,
/// web, compute so that the parts add up to the charge exactly.
pub fn settle(reserved: i64, used: Metered) -> Settlement {
    let reserved = reserved.max(0);
    let mut left = reserved;
    let mut take = |amount: i64| {
        let part = amount.clamp(0, left);
        left -= part;
        part
    };
    let model = take(used.model_micros);
    let web = take(used.web_micros);
    let compute = take(used.compute_micros);
    let charged = model + web + compute;
    Settlement {
        reserved,
        charged,
        released: reserved - charged,
        model,
        web,
        compute,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(model: i64, web: i64, compute: i64) -> Metered {
        Metered {
            model_micros: model,
            web_micros: web,
            compute_micros: compute,
        }
    }

    #[test]
    fn charges_what_was_used_under_the_cap() {
        let s = settle(40_000, used(330, 0, 3_200));
        assert_eq!((s.charged, s.released), (3_530, 36_470));
        assert_eq!(s.model + s.web + s.compute, s.charged);
    }

    #[test]
    fn never_charges_more_than_reserved() {
        let s = settle(1_000, used(900, 50, 400));
        assert_eq!(
            (s.charged, s.released, s.model, s.web, s.compute),
            (1_000, 0, 900, 50, 50)
        );
    }

    #[test]
    fn invariants_hold_for_any_usage() {
        for reserved in [1, 7, 1_000, 40_000] {
            for m in [0, 3, 999, 50_000] {
                for c in [0, 1, 12_345] {
                    let s = settle(reserved, used(m, c / 2, c));
                    assert_eq!(s.charged + s.released, s.reserved);
                    assert_eq!(s.model + s.web + s.compute, s.charged);
                    assert!(s.charged <= reserved && s.charged >= 0);
                }
            }
        }
    }

    #[test]
    fn reservation_needs_enough_free_balance() {
        assert!(can_reserve(100, 60, 40));
        assert!(!can_reserve(100, 61, 40));
        assert!(!can_reserve(100, 0, 0));
    }
}

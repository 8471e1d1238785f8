//! The two transactions that move money, written once: [`create`] (the
//! idempotency claim, the organisation's runs in flight, the reservation,
//! the run and its first event) and [`finish`] (a run's end and its
//! settlement), with the ledger's rule (`ledger.rs`). Each runs over
//! [`LedgerTx`]: the steps a backend spells in its own SQL, inside one
//! transaction it opened and commits, so the invariants hold whatever
//! happens between two transactions, `kill -9` included.

use super::{Created, Finish, IdempotencyClaim, NewRun, Result, StoredEvent};
use crate::ledger::{Settlement, can_reserve, settle};
use crate::run::RunRecord;

/// A ledger entry: what moved, for whom, when.
pub struct Entry<'a> {
    pub org_id: &'a str,
    pub run_id: &'a str,
    /// `reserve` or `charge`.
    pub kind: &'static str,
    pub amount_micros: i64,
    pub at: i64,
}

/// The steps of the ledger's transactions, as one store backend spells
/// them, each inside the transaction the backend opened.
#[allow(async_fn_in_trait)]
pub(crate) trait LedgerTx {
    /// The organisation's balance and held amount, locked until the end
    /// of the transaction against every other reservation of it.
    async fn balance(&mut self, org_id: &str) -> Result<(i64, i64)>;
    /// A claim of the same key younger than the claim's `not_before`:
    /// `(fingerprint, run id, response)`.
    async fn previous_claim(
        &mut self,
        org_id: &str,
        claim: &IdempotencyClaim,
    ) -> Result<Option<(String, String, String)>>;
    /// The organisation's runs in flight.
    async fn in_flight(&mut self, org_id: &str) -> Result<i64>;
    async fn hold(&mut self, org_id: &str, amount: i64) -> Result<()>;
    async fn insert_run(&mut self, run: &RunRecord) -> Result<()>;
    async fn insert_event(&mut self, run_id: &str, event: &StoredEvent) -> Result<()>;
    /// Keeps the request body a run was created with.
    async fn keep_request(&mut self, run_id: &str, body: &str) -> Result<()>;
    async fn record_claim(&mut self, run: &RunRecord, claim: &IdempotencyClaim) -> Result<()>;
    async fn entry(&mut self, entry: Entry<'_>) -> Result<()>;
    /// A run's organisation and reservation if it is still in flight,
    /// locked until the end of the transaction.
    async fn reservation(&mut self, run_id: &str) -> Result<Option<(String, i64)>>;
    /// Writes a run's end: status, output or error, usage, settlement.
    async fn end_run(&mut self, run_id: &str, finish: &Finish, s: &Settlement) -> Result<()>;
    /// `held -= reserved`, `balance -= charged`.
    async fn settle_org(&mut self, org_id: &str, s: &Settlement) -> Result<()>;
}

/// Creates a run: the idempotency claim checked, the organisation's runs in
/// flight counted, the budget reserved, the run and its first event
/// stored, the claim recorded. Anything but [`Created::Created`] changes
/// nothing: the backend does not commit it.
pub(crate) async fn create(tx: &mut impl LedgerTx, new: &NewRun) -> Result<Created> {
    let run = &new.record;
    // The organisation's lock first: the claim, the count and the
    // reservation below see every earlier creation committed.
    let (balance, held) = tx.balance(&run.org_id).await?;
    if let Some(claim) = &new.idempotency
        && let Some((fingerprint, run_id, response)) = tx.previous_claim(&run.org_id, claim).await?
    {
        return Ok(if fingerprint == claim.fingerprint {
            Created::Replayed { run_id, response }
        } else {
            Created::KeyReused
        });
    }
    if tx.in_flight(&run.org_id).await? >= new.max_in_flight {
        return Ok(Created::TooManyInFlight);
    }
    if !can_reserve(balance, held, run.reserved_micros) {
        let available = (balance - held).max(0);
        return Ok(Created::InsufficientFunds { available });
    }
    tx.hold(&run.org_id, run.reserved_micros).await?;
    tx.insert_run(run).await?;
    tx.entry(Entry {
        org_id: &run.org_id,
        run_id: &run.id,
        kind: "reserve",
        amount_micros: run.reserved_micros,
        at: run.created_at,
    })
    .await?;
    if let Some(event) = &new.first_event {
        tx.insert_event(&run.id, event).await?;
    }
    if let Some(body) = &new.request {
        tx.keep_request(&run.id, body).await?;
    }
    if let Some(claim) = &new.idempotency {
        tx.record_claim(run, claim).await?;
    }
    Ok(Created::Created)
}

/// Ends and settles a run still in flight; `None` when it had already
/// ended (settling twice is impossible).
pub(crate) async fn finish(
    tx: &mut impl LedgerTx,
    run_id: &str,
    finish: &Finish,
) -> Result<Option<Settlement>> {
    let Some((org_id, reserved)) = tx.reservation(run_id).await? else {
        return Ok(None);
    };
    let s = settle(reserved, finish.metered);
    tx.end_run(run_id, finish, &s).await?;
    tx.settle_org(&org_id, &s).await?;
    tx.entry(Entry {
        org_id: &org_id,
        run_id,
        kind: "charge",
        amount_micros: s.charged,
        at: finish.ended_at,
    })
    .await?;
    Ok(Some(s))
}

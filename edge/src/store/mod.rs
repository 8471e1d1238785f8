//! The store: organisations and keys, runs and their timelines, the ledger
//! and idempotency records. SQLite (one file, the embedded default) or
//! PostgreSQL (several edge nodes sharing one state), behind one [`Store`]
//! trait with the same behaviour; the same tests run on both. Each backend
//! file holds its SQL only.
//!
//! Every operation that moves money is one transaction here, so the
//! ledger's invariants hold whatever happens between two calls, including
//! a `kill -9`.

mod postgres;
mod row;
mod schema;
mod sqlite;
mod transactions;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;

use crate::ids::RecordKind;
use crate::ledger::Settlement;
use crate::run::{Metered, RunError, RunRecord, RunStatus, Usage};

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// A SQLite call failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// A PostgreSQL call failed.
    #[error("database error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    /// The SQLite file's folder could not be made.
    #[error("cannot open the data folder {path}: {source}")]
    DataDir {
        /// The folder.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// A stored value this server cannot read.
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    /// The task running a query failed, or no connection could be had.
    #[error("database task failed: {0}")]
    Task(String),
    /// The database was migrated by a newer server.
    #[error("database schema version {found} is newer than this server knows ({known})")]
    SchemaTooNew {
        /// The database's schema version.
        found: i64,
        /// The newest this server knows.
        known: i64,
    },
}

/// A store operation's result.
pub type Result<T> = std::result::Result<T, StoreError>;

/// An organisation: its money and what its runs may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    /// `org_…`.
    pub id: String,
    /// Its unique name (`--org NAME`).
    pub name: String,
    /// What it has, in micros.
    pub balance_micros: i64,
    /// What its runs in flight hold of that.
    pub held_micros: i64,
    /// The largest budget one of its runs may have.
    pub per_run_cap_micros: i64,
    /// Every run of it keeps no content, whatever it asks.
    pub zero_data_retention: bool,
}

/// Changes `ephemeral orgs set` asks for; `None` leaves a field alone.
#[derive(Debug, Clone, Default)]
pub struct OrgUpdate {
    /// A new balance.
    pub balance_micros: Option<i64>,
    /// A new per-run cap.
    pub per_run_cap_micros: Option<i64>,
    /// Zero data retention forced on, or off.
    pub zero_data_retention: Option<bool>,
}

/// An `Idempotency-Key` claimed together with the run it creates.
#[derive(Debug, Clone)]
pub struct IdempotencyClaim {
    /// The `Idempotency-Key` header.
    pub key: String,
    /// BLAKE3 of the request body: the key with another body is refused.
    pub fingerprint: String,
    /// The response body to replay (the run object at creation).
    pub response: String,
    /// Claims older than this (ms since epoch) are forgotten.
    pub not_before: i64,
}

/// A run to create: its record (status `queued`) and reservation.
#[derive(Debug, Clone)]
pub struct NewRun {
    /// The run, status `queued`.
    pub record: RunRecord,
    /// The key's claim, if one was sent.
    pub idempotency: Option<IdempotencyClaim>,
    /// Runs in flight the organisation may have at most.
    pub max_in_flight: i64,
    /// The run's first event (`budget.reserved`), stored in the creating
    /// transaction: a run that was answered 201 always has it, even if the
    /// server dies right after (finding D4).
    pub first_event: Option<StoredEvent>,
    /// The request body as sent (JSON), kept with the run: `None` under
    /// zero data retention.
    pub request: Option<String>,
}

/// What `create_run` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    /// The run was created and its budget reserved.
    Created,
    /// The key was used before with the same request: its response.
    Replayed {
        /// The run the key created.
        run_id: String,
        /// The response to replay.
        response: String,
    },
    /// The key was used before with another request.
    KeyReused,
    /// The organisation's free balance is below the run's budget.
    InsufficientFunds {
        /// The balance less what its runs in flight hold.
        available: i64,
    },
    /// The organisation has as many runs in flight as it may.
    TooManyInFlight,
}

/// A timeline event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its place in the run's timeline, from 1.
    pub seq: i64,
    /// Its type (`budget.reserved`, ...).
    pub kind: String,
    /// JSON text.
    pub data: String,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Finish {
    /// The final status.
    pub status: RunStatus,
    /// The agent's final answer, if kept.
    pub output: Option<String>,
    /// Why it failed, if it did.
    pub error: Option<RunError>,
    /// When, in ms since the Unix epoch.
    pub ended_at: i64,
    /// What its model calls used in all.
    pub usage: Usage,
    /// What it used in all, by kind: what the settlement charges.
    pub metered: Metered,
}

/// A file a run's `outputs` collected, as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFile {
    /// As the sandbox saw it (absolute).
    pub path: String,
    /// In bytes.
    pub size: i64,
    /// Lowercase hex.
    pub sha256: String,
    /// Guessed from the file's name.
    pub content_type: String,
}

/// A finished run an operator published: readable by anyone, as it was
/// when published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    /// `smp_` + 24 hex digits.
    pub id: String,
    /// The run it was taken from.
    pub run_id: String,
    /// The organisation of that run.
    pub org_id: String,
    /// Its title (the run's prompt's first line unless given).
    pub title: String,
    /// When it was published, in ms since the Unix epoch.
    pub published_at: i64,
    /// The request body (JSON text).
    pub request: String,
    /// The run object with its timeline (JSON text).
    pub run: String,
}

/// Sums over all organisations, for `/metrics` and the conservation tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LedgerTotals {
    /// All organisations' balances.
    pub balance_micros: i64,
    /// All reservations of runs in flight.
    pub held_micros: i64,
    /// All charges in the ledger.
    pub charged_micros: i64,
    /// All reservations in the ledger.
    pub reserved_micros: i64,
}

/// The store, whichever backend holds it. Every method is one statement
/// or one transaction; the two that move money are written once over
/// both backends (`transactions.rs`).
#[async_trait]
pub trait Store: Send + Sync {
    /// `sqlite` or `postgres`.
    fn kind(&self) -> &'static str;

    /// Stores a member key for `org_name`, creating the organisation with
    /// `defaults` if it does not exist.
    async fn create_key(&self, org_name: &str, key_hash: &str, defaults: &Org) -> Result<Org>;
    /// The organisation whose member key hashes to `key_hash`.
    async fn org_for_key(&self, key_hash: &str) -> Result<Option<Org>>;
    /// The organisation `org_id`.
    async fn org(&self, org_id: &str) -> Result<Option<Org>>;
    /// Creates the organisation with `defaults` if missing, then applies `update`.
    async fn set_org(&self, name: &str, defaults: &Org, update: &OrgUpdate) -> Result<Org>;
    /// Idempotency check, concurrency check, reservation, the run row and
    /// its first event: one transaction.
    async fn create_run(&self, new: &NewRun) -> Result<Created>;
    /// Marks a queued run `running` on `isolation`, started at `at` (ms).
    async fn start_run(&self, run_id: &str, isolation: &str, at: i64) -> Result<()>;
    /// Stores one event of a run's timeline.
    async fn append_event(&self, run_id: &str, event: &StoredEvent) -> Result<()>;
    /// Persists what a run has used so far (absolute figures).
    async fn record_usage(&self, run_id: &str, usage: &Usage, metered: &Metered) -> Result<()>;
    /// Ends and settles a run in one transaction; `None` when it had
    /// already ended (settling twice is impossible).
    async fn finish_run(&self, run_id: &str, finish: &Finish) -> Result<Option<Settlement>>;
    /// The run (or sandbox) `run_id`.
    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>>;
    /// The organisation's runs (or sandboxes), newest first, strictly
    /// older than `before`.
    async fn list_runs(
        &self,
        org_id: &str,
        kind: RecordKind,
        limit: i64,
        before: Option<&str>,
    ) -> Result<Vec<RunRecord>>;
    /// Stores the files a run collected, all or none.
    async fn put_run_files(&self, run_id: &str, files: &[(RunFile, Vec<u8>)]) -> Result<()>;
    /// The files a run collected, by path.
    async fn run_files(&self, run_id: &str) -> Result<Vec<RunFile>>;
    /// One collected file and its bytes.
    async fn run_file(&self, run_id: &str, path: &str) -> Result<Option<(RunFile, Vec<u8>)>>;
    /// Every event after `after_seq`, in order.
    async fn events(&self, run_id: &str, after_seq: i64) -> Result<Vec<StoredEvent>>;
    /// At most `limit` events after `after_seq`, for readers that must not
    /// hold a whole timeline at once.
    async fn events_page(
        &self,
        run_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<StoredEvent>>;
    /// The `seq` of the run's last event; 0 when it has none.
    async fn last_seq(&self, run_id: &str) -> Result<i64>;
    /// Woken whenever `run_id` gets an event on any node, so readers of
    /// runs hosted elsewhere need not poll; `None` when the store cannot
    /// tell (SQLite: one node, whose own runs the hub reports).
    fn watch_run(&self, _run_id: &str) -> Option<tokio::sync::watch::Receiver<i64>> {
        None
    }
    /// Runs still queued or running whose node is `node_id`.
    async fn in_flight_on(&self, node_id: &str) -> Result<Vec<RunRecord>>;
    /// Records that `node_id` is alive; returns the nodes silent since `stale_before`.
    async fn heartbeat(&self, node_id: &str, now: i64, stale_before: i64) -> Result<Vec<String>>;
    /// Moves the in-flight runs of a dead node to `to`; returns how many.
    async fn adopt_runs(&self, from: &str, to: &str) -> Result<u64>;
    /// Marks `run_id` to be cancelled by the node that runs it.
    async fn request_cancel(&self, run_id: &str) -> Result<()>;
    /// Whether a cancel of `run_id` was asked for.
    async fn cancel_requested(&self, run_id: &str) -> Result<bool>;
    /// Deletes runs (and timelines) that expired before `now`, and
    /// idempotency records older than `idempotency_before`.
    async fn purge(&self, now: i64, idempotency_before: i64) -> Result<u64>;
    /// Sums over all organisations and runs.
    async fn ledger_totals(&self) -> Result<LedgerTotals>;
    /// The request body a run was created with, if it was kept.
    async fn run_request(&self, run_id: &str) -> Result<Option<String>>;
    /// Stores a sample.
    async fn publish_sample(&self, sample: &Sample) -> Result<()>;
    /// Removes the sample `id` (or every sample of run `id`); how many.
    async fn unpublish_sample(&self, id: &str) -> Result<u64>;
    /// Every sample, newest first, without its request and run.
    async fn samples(&self) -> Result<Vec<Sample>>;
    /// The sample `id`, whole.
    async fn sample(&self, id: &str) -> Result<Option<Sample>>;
    /// Runs and sandboxes stored, by status.
    async fn status_counts(&self) -> Result<BTreeMap<String, i64>>;
}

/// Opens (creating and migrating) the store: PostgreSQL when
/// `database_url` is given, else the SQLite file at `sqlite_path`.
pub async fn open(database_url: Option<&str>, sqlite_path: &Path) -> Result<Arc<dyn Store>> {
    Ok(match database_url {
        Some(url) => Arc::new(PgStore::connect(url).await?),
        None => Arc::new(SqliteStore::open(sqlite_path).await?),
    })
}

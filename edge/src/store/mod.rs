//! The store: organisations and keys, runs and their timelines, the ledger
//! and idempotency records. SQLite (one file, the embedded default) or
//! PostgreSQL (several edge nodes sharing one state), behind one `Store`
//! with the same behaviour; the same tests run on both.
//!
//! Every operation that moves money is one transaction here, so the
//! ledger's invariants hold whatever happens between two calls, including
//! a `kill -9`.

mod postgres;
mod row;
mod schema;
mod sqlite;

use std::collections::BTreeMap;
use std::path::Path;

use crate::ledger::Settlement;
use crate::run::{Metered, RunError, RunRecord, RunStatus, Usage};

pub use postgres::PgStore;
pub use sqlite::SqliteStore;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Postgres(#[from] tokio_postgres::Error),
    #[error("cannot open the data folder {path}: {source}")]
    DataDir {
        path: String,
        source: std::io::Error,
    },
    #[error("stored data is damaged: {0}")]
    Corrupt(String),
    #[error("database task failed: {0}")]
    Task(String),
    #[error("database schema version {found} is newer than this server knows ({known})")]
    SchemaTooNew { found: i64, known: i64 },
}

pub type Result<T> = std::result::Result<T, StoreError>;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org {
    pub id: String,
    pub name: String,
    pub balance_micros: i64,
    pub held_micros: i64,
    pub per_run_cap_micros: i64,
    pub zero_data_retention: bool,
}

/// Changes `ephemeral orgs set` asks for; `None` leaves a field alone.
#[derive(Debug, Clone, Default)]
pub struct OrgUpdate {
    pub balance_micros: Option<i64>,
    pub per_run_cap_micros: Option<i64>,
    pub zero_data_retention: Option<bool>,
}

/// An `Idempotency-Key` claimed together with the run it creates.
#[derive(Debug, Clone)]
pub struct IdempotencyClaim {
    pub key: String,
    pub fingerprint: String,
    /// The response body to replay (the run object at creation).
    pub response: String,
    /// Claims older than this (ms since epoch) are forgotten.
    pub not_before: i64,
}

/// A run to create: its record (status `queued`) and reservation.
#[derive(Debug, Clone)]
pub struct NewRun {
    pub record: RunRecord,
    pub idempotency: Option<IdempotencyClaim>,
    /// Runs in flight the organisation may have at most.
    pub max_in_flight: i64,
    /// The run's first event (`budget.reserved`), stored in the creating
    /// transaction: a run that was answered 201 always has it, even if the
    /// server dies right after (finding D4).
    pub first_event: Option<StoredEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Created {
    Created,
    /// The key was used before with the same request: its response.
    Replayed {
        run_id: String,
        response: String,
    },
    /// The key was used before with another request.
    KeyReused,
    InsufficientFunds {
        available: i64,
    },
    TooManyInFlight,
}

/// A timeline event as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub seq: i64,
    pub kind: String,
    /// JSON text.
    pub data: String,
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Finish {
    pub status: RunStatus,
    pub output: Option<String>,
    pub error: Option<RunError>,
    pub ended_at: i64,
    pub usage: Usage,
    pub metered: Metered,
}

/// Sums over all organisations, for `/metrics` and the conservation tests.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LedgerTotals {
    pub balance_micros: i64,
    pub held_micros: i64,
    pub charged_micros: i64,
    pub reserved_micros: i64,
}

/// The one store a server uses.
pub enum Store {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match $self {
            Store::Sqlite(s) => s.$method($($arg),*).await,
            Store::Postgres(s) => s.$method($($arg),*).await,
        }
    };
}

impl Store {
    /// Opens (creating and migrating) the store: PostgreSQL when
    /// `database_url` is given, else `data_dir/ephemeral.sqlite3`.
    pub async fn open(database_url: Option<&str>, sqlite_path: &Path) -> Result<Store> {
        match database_url {
            Some(url) => Ok(Store::Postgres(PgStore::connect(url).await?)),
            None => Ok(Store::Sqlite(SqliteStore::open(sqlite_path).await?)),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Store::Sqlite(_) => "sqlite",
            Store::Postgres(_) => "postgres",
        }
    }

    /// Stores a member key for `org_name`, creating the organisation with
    /// `defaults` if it does not exist.
    pub async fn create_key(&self, org_name: &str, key_hash: &str, defaults: &Org) -> Result<Org> {
        dispatch!(self.create_key(org_name, key_hash, defaults))
    }
    pub async fn org_for_key(&self, key_hash: &str) -> Result<Option<Org>> {
        dispatch!(self.org_for_key(key_hash))
    }
    pub async fn org(&self, org_id: &str) -> Result<Option<Org>> {
        dispatch!(self.org(org_id))
    }
    /// Creates the organisation with `defaults` if missing, then applies `update`.
    pub async fn set_org(&self, name: &str, defaults: &Org, update: &OrgUpdate) -> Result<Org> {
        dispatch!(self.set_org(name, defaults, update))
    }
    /// Idempotency check, concurrency check, reservation and the run row:
    /// one transaction.
    pub async fn create_run(&self, new: &NewRun) -> Result<Created> {
        dispatch!(self.create_run(new))
    }
    pub async fn start_run(&self, run_id: &str, isolation: &str, at: i64) -> Result<()> {
        dispatch!(self.start_run(run_id, isolation, at))
    }
    pub async fn append_event(&self, run_id: &str, event: &StoredEvent) -> Result<()> {
        dispatch!(self.append_event(run_id, event))
    }
    /// Persists what a run has used so far (absolute figures).
    pub async fn record_usage(&self, run_id: &str, usage: &Usage, metered: &Metered) -> Result<()> {
        dispatch!(self.record_usage(run_id, usage, metered))
    }
    /// Ends and settles a run in one transaction; `None` when it had
    /// already ended (settling twice is impossible).
    pub async fn finish_run(&self, run_id: &str, finish: &Finish) -> Result<Option<Settlement>> {
        dispatch!(self.finish_run(run_id, finish))
    }
    pub async fn run(&self, run_id: &str) -> Result<Option<RunRecord>> {
        dispatch!(self.run(run_id))
    }
    /// The organisation's runs, newest first, strictly older than `before`.
    pub async fn list_runs(
        &self,
        org_id: &str,
        limit: i64,
        before: Option<&str>,
    ) -> Result<Vec<RunRecord>> {
        dispatch!(self.list_runs(org_id, limit, before))
    }
    pub async fn events(&self, run_id: &str, after_seq: i64) -> Result<Vec<StoredEvent>> {
        dispatch!(self.events(run_id, after_seq))
    }
    /// At most `limit` events after `after_seq`, for readers that must not
    /// hold a whole timeline at once.
    pub async fn events_page(
        &self,
        run_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<StoredEvent>> {
        dispatch!(self.events_page(run_id, after_seq, limit))
    }
    pub async fn last_seq(&self, run_id: &str) -> Result<i64> {
        dispatch!(self.last_seq(run_id))
    }
    /// Woken whenever `run_id` gets an event on any node, so readers of
    /// runs hosted elsewhere need not poll; `None` when the store cannot
    /// tell (SQLite: one node, whose own runs the hub reports).
    pub fn watch_run(&self, run_id: &str) -> Option<tokio::sync::watch::Receiver<i64>> {
        match self {
            Store::Sqlite(_) => None,
            Store::Postgres(s) => s.watch_run(run_id),
        }
    }
    /// Runs still queued or running whose node is `node_id`.
    pub async fn in_flight_on(&self, node_id: &str) -> Result<Vec<RunRecord>> {
        dispatch!(self.in_flight_on(node_id))
    }
    /// Records that `node_id` is alive; returns the nodes silent since `stale_before`.
    pub async fn heartbeat(
        &self,
        node_id: &str,
        now: i64,
        stale_before: i64,
    ) -> Result<Vec<String>> {
        dispatch!(self.heartbeat(node_id, now, stale_before))
    }
    /// Moves the in-flight runs of a dead node to `to`; returns how many.
    pub async fn adopt_runs(&self, from: &str, to: &str) -> Result<u64> {
        dispatch!(self.adopt_runs(from, to))
    }
    pub async fn request_cancel(&self, run_id: &str) -> Result<()> {
        dispatch!(self.request_cancel(run_id))
    }
    pub async fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        dispatch!(self.cancel_requested(run_id))
    }
    /// Deletes runs (and timelines) that expired before `now`, and
    /// idempotency records older than `idempotency_before`.
    pub async fn purge(&self, now: i64, idempotency_before: i64) -> Result<u64> {
        dispatch!(self.purge(now, idempotency_before))
    }
    pub async fn ledger_totals(&self) -> Result<LedgerTotals> {
        dispatch!(self.ledger_totals())
    }
    pub async fn status_counts(&self) -> Result<BTreeMap<String, i64>> {
        dispatch!(self.status_counts())
    }
}

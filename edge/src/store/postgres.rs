//! The shared store: PostgreSQL, for several edge nodes on one state. The
//! same behaviour as the SQLite store, method for method, on a small pool
//! of connections (`deadpool-postgres`).
//!
//! Concurrency between nodes rests on row locks at READ COMMITTED:
//! `create_run` locks the organisation row first, so the idempotency
//! check, the in-flight count and the reservation of one organisation are
//! serialised across nodes; `finish_run` locks the run row while it is
//! still in flight, so a run is settled at most once. Migrations run under
//! a transaction-scoped advisory lock so nodes starting together agree.
//!
//! `append_event` notifies `ephemeral_events` in the same statement; the
//! `listener` module turns that into wake-ups for this node's readers.

mod listener;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use async_trait::async_trait;
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use tokio::sync::watch;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row, Transaction};

use self::listener::{CHANNEL, Watchers};
use super::row::{RunRow, file_content, json_columns, stored_content, to_json};
use super::schema::{IN_FLIGHT, MIGRATIONS, RUN_COLUMNS};
use super::transactions::{self, Entry, LedgerTx};
use super::{
    Created, Finish, IdempotencyClaim, LedgerTotals, NewRun, Org, OrgUpdate, Result, RunFile,
    Sample, Store, StoreError, StoredEvent,
};
use crate::ids::{RecordKind, new_org_id};
use crate::ledger::Settlement;
use crate::run::{Metered, RunRecord, Usage};
use crate::timestamp::now_ms;

/// Connections per node: transactions are short, and `create_run`s of one
/// organisation queue on its row lock anyway.
const POOL_SIZE: usize = 8;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The advisory lock migrations hold (any constant unique to this schema).
const MIGRATION_LOCK: i64 = 0x6570_6865_6d65_7261; // "ephemera"

type Params<'a> = [&'a (dyn ToSql + Sync)];

/// The PostgreSQL backend: a pool of connections, and a listener that wakes
/// readers of runs on other nodes.
pub struct PgStore {
    pool: Pool,
    /// For the listener's own connection (boxed: it is large).
    config: Box<tokio_postgres::Config>,
    watchers: Arc<Watchers>,
    /// The notification listener, started by the first reader.
    listener: OnceLock<AbortOnDrop>,
}

/// Stops the listener task with the store.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn pool_error(e: PoolError) -> StoreError {
    match e {
        PoolError::Backend(e) => StoreError::Postgres(e),
        other => StoreError::Task(format!("connection pool: {other}")),
    }
}

impl PgStore {
    /// Connects to `url` (a `postgresql://` URL or `key=value` string) and
    /// applies the migrations this server knows.
    pub async fn connect(url: &str) -> Result<PgStore> {
        let mut config: tokio_postgres::Config = url.parse()?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("ephemeral-edge");
        }
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|e| StoreError::Task(format!("connection pool: {e}")))?;
        let store = PgStore {
            pool,
            config: Box::new(config),
            watchers: Arc::default(),
            listener: OnceLock::new(),
        };
        store.migrate().await?;
        Ok(store)
    }

    async fn client(&self) -> Result<Object> {
        self.pool.get().await.map_err(pool_error)
    }

    async fn migrate(&self) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        // Held until commit: a second node starting now waits, then finds
        // the migrations recorded.
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
        )
        .await?;
        let current: i64 = tx
            .query_one(
                "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
                &[],
            )
            .await?
            .try_get(0)?;
        let known = MIGRATIONS.last().map_or(0, |m| m.0);
        if current > known {
            return Err(StoreError::SchemaTooNew {
                found: current,
                known,
            });
        }
        for (version, script) in MIGRATIONS.iter().filter(|m| m.0 > current) {
            tx.batch_execute(script).await?;
            tx.execute(
                "INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)",
                &[version, &now_ms()],
            )
            .await?;
            tracing::info!(version, "applied migration");
        }
        tx.commit().await?;
        Ok(())
    }

    /// Starts the listener on first use, so CLI commands never open it.
    fn start_listener(&self) -> Option<()> {
        if self.listener.get().is_none() {
            let handle = tokio::runtime::Handle::try_current().ok()?;
            let (config, watchers) = (*self.config.clone(), self.watchers.clone());
            // Losing a race here just starts (and aborts) one extra task.
            let task = AbortOnDrop(handle.spawn(listener::listen(config, watchers)));
            let _ = self.listener.set(task);
        }
        Some(())
    }

    async fn execute(&self, sql: &str, params: &Params<'_>) -> Result<u64> {
        Ok(self.client().await?.execute(sql, params).await?)
    }

    async fn query(&self, sql: &str, params: &Params<'_>) -> Result<Vec<Row>> {
        Ok(self.client().await?.query(sql, params).await?)
    }
}

#[async_trait]
impl Store for PgStore {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    /// A receiver woken when `run_id` gets an event, from any node.
    fn watch_run(&self, run_id: &str) -> Option<watch::Receiver<i64>> {
        self.start_listener()?;
        Some(self.watchers.watch(run_id))
    }

    async fn create_key(&self, org_name: &str, key_hash: &str, defaults: &Org) -> Result<Org> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let org = ensure_org(&tx, org_name, defaults).await?;
        tx.execute(
            "INSERT INTO api_keys (key_hash, org_id, created_at) VALUES ($1, $2, $3)",
            &[&key_hash, &org.id, &now_ms()],
        )
        .await?;
        tx.commit().await?;
        Ok(org)
    }

    async fn org_for_key(&self, key_hash: &str) -> Result<Option<Org>> {
        let sql = format!(
            "SELECT {ORG_COLUMNS} FROM orgs WHERE id = (SELECT org_id FROM api_keys WHERE key_hash = $1)"
        );
        let row = self.client().await?.query_opt(&sql, &[&key_hash]).await?;
        row.as_ref().map(org_from_row).transpose()
    }

    async fn org(&self, org_id: &str) -> Result<Option<Org>> {
        let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE id = $1");
        let row = self.client().await?.query_opt(&sql, &[&org_id]).await?;
        row.as_ref().map(org_from_row).transpose()
    }

    async fn set_org(&self, name: &str, defaults: &Org, update: &OrgUpdate) -> Result<Org> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let org = ensure_org(&tx, name, defaults).await?;
        if let Some(balance) = update.balance_micros {
            tx.execute(
                "UPDATE orgs SET balance_micros = $1 WHERE id = $2",
                &[&balance, &org.id],
            )
            .await?;
            let delta = balance - org.balance_micros;
            tx.execute(
                "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES ($1, '', 'adjust', $2, $3)",
                &[&org.id, &delta, &now_ms()],
            )
            .await?;
        }
        if let Some(cap) = update.per_run_cap_micros {
            tx.execute(
                "UPDATE orgs SET per_run_cap_micros = $1 WHERE id = $2",
                &[&cap, &org.id],
            )
            .await?;
        }
        if let Some(zdr) = update.zero_data_retention {
            tx.execute(
                "UPDATE orgs SET zero_data_retention = $1 WHERE id = $2",
                &[&(zdr as i32), &org.id],
            )
            .await?;
        }
        let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE id = $1");
        let org = org_from_row(&tx.query_one(&sql, &[&org.id]).await?)?;
        tx.commit().await?;
        Ok(org)
    }

    async fn create_run(&self, new: &NewRun) -> Result<Created> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let created = transactions::create(&mut PgTx(&tx), new).await?;
        if created == Created::Created {
            tx.commit().await?;
        }
        Ok(created)
    }

    async fn start_run(&self, run_id: &str, isolation: &str, at: i64) -> Result<()> {
        self.execute(
            "UPDATE runs SET status = 'running', isolation = $2, started_at = $3 WHERE id = $1 AND status = 'queued'",
            &[&run_id, &isolation, &at],
        )
        .await?;
        Ok(())
    }

    async fn append_event(&self, run_id: &str, event: &StoredEvent) -> Result<()> {
        // One statement, so one transaction: the notification goes out
        // exactly when the event is committed.
        let sql = format!(
            "WITH stored AS (INSERT INTO events (run_id, seq, type, data) VALUES ($1, $2, $3, $4))
             SELECT pg_notify('{CHANNEL}', $5)"
        );
        let payload = format!("{run_id}:{}", event.seq);
        self.execute(
            &sql,
            &[&run_id, &event.seq, &event.kind, &event.data, &payload],
        )
        .await?;
        Ok(())
    }

    async fn record_usage(&self, run_id: &str, usage: &Usage, metered: &Metered) -> Result<()> {
        let sql = format!(
            "UPDATE runs SET model_micros = $2, web_micros = $3, compute_micros = $4,
             model_calls = $5, input_tokens = $6, output_tokens = $7
             WHERE id = $1 AND status IN {IN_FLIGHT}"
        );
        let (u, m) = (usage, metered);
        self.execute(
            &sql,
            &[
                &run_id,
                &m.model_micros,
                &m.web_micros,
                &m.compute_micros,
                &u.model_calls,
                &u.input_tokens,
                &u.output_tokens,
            ],
        )
        .await?;
        Ok(())
    }

    async fn finish_run(&self, run_id: &str, finish: &Finish) -> Result<Option<Settlement>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let settled = transactions::finish(&mut PgTx(&tx), run_id, finish).await?;
        if settled.is_some() {
            tx.commit().await?;
        }
        Ok(settled)
    }

    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1");
        let row = self.client().await?.query_opt(&sql, &[&run_id]).await?;
        row.as_ref().map(run_record).transpose()
    }

    async fn list_runs(
        &self,
        org_id: &str,
        kind: RecordKind,
        limit: i64,
        before: Option<&str>,
    ) -> Result<Vec<RunRecord>> {
        let prefix = kind.prefix();
        let rows = match before {
            Some(before) => {
                let sql = format!(
                    "SELECT {RUN_COLUMNS} FROM runs WHERE org_id = $1 AND substr(id, 1, 4) = $4
                     AND (created_at, id) < (SELECT created_at, id FROM runs WHERE id = $2 AND org_id = $1)
                     ORDER BY created_at DESC, id DESC LIMIT $3"
                );
                self.query(&sql, &[&org_id, &before, &limit, &prefix])
                    .await?
            }
            None => {
                let sql = format!(
                    "SELECT {RUN_COLUMNS} FROM runs WHERE org_id = $1 AND substr(id, 1, 4) = $3
                     ORDER BY created_at DESC, id DESC LIMIT $2"
                );
                self.query(&sql, &[&org_id, &limit, &prefix]).await?
            }
        };
        rows.iter().map(run_record).collect()
    }

    async fn put_run_files(&self, run_id: &str, files: &[(RunFile, Vec<u8>)]) -> Result<()> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        for (f, bytes) in files {
            tx.execute(
                "INSERT INTO run_files (run_id, path, size, sha256, content_type, content)
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &run_id,
                    &f.path,
                    &f.size,
                    &f.sha256,
                    &f.content_type,
                    &stored_content(bytes),
                ],
            )
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn run_files(&self, run_id: &str) -> Result<Vec<RunFile>> {
        let rows = self
            .query(
                "SELECT path, size, sha256, content_type FROM run_files WHERE run_id = $1 ORDER BY path",
                &[&run_id],
            )
            .await?;
        rows.iter().map(run_file).collect()
    }

    async fn run_file(&self, run_id: &str, path: &str) -> Result<Option<(RunFile, Vec<u8>)>> {
        let rows = self
            .query(
                "SELECT path, size, sha256, content_type, content FROM run_files
                 WHERE run_id = $1 AND path = $2",
                &[&run_id, &path],
            )
            .await?;
        let Some(row) = rows.first() else {
            return Ok(None);
        };
        let content: String = row.try_get(4)?;
        Ok(Some((run_file(row)?, file_content(&content)?)))
    }

    async fn events(&self, run_id: &str, after_seq: i64) -> Result<Vec<StoredEvent>> {
        self.events_page(run_id, after_seq, i64::MAX).await
    }

    async fn events_page(
        &self,
        run_id: &str,
        after_seq: i64,
        limit: i64,
    ) -> Result<Vec<StoredEvent>> {
        let rows = self
            .query(
                "SELECT seq, type, data FROM events WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&run_id, &after_seq, &limit],
            )
            .await?;
        let event = |r: &Row| -> Result<StoredEvent> {
            Ok(StoredEvent {
                seq: r.try_get(0)?,
                kind: r.try_get(1)?,
                data: r.try_get(2)?,
            })
        };
        rows.iter().map(event).collect()
    }

    async fn last_seq(&self, run_id: &str) -> Result<i64> {
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = $1",
                &[&run_id],
            )
            .await?;
        Ok(row.try_get(0)?)
    }

    async fn in_flight_on(&self, node_id: &str) -> Result<Vec<RunRecord>> {
        let sql =
            format!("SELECT {RUN_COLUMNS} FROM runs WHERE node_id = $1 AND status IN {IN_FLIGHT}");
        let rows = self.query(&sql, &[&node_id]).await?;
        rows.iter().map(run_record).collect()
    }

    async fn heartbeat(&self, node_id: &str, now: i64, stale_before: i64) -> Result<Vec<String>> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO nodes (id, heartbeat_at) VALUES ($1, $2)
                 ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
                &[&node_id, &now],
            )
            .await?;
        let rows = client
            .query(
                "SELECT id FROM nodes WHERE heartbeat_at < $1 AND id <> $2",
                &[&stale_before, &node_id],
            )
            .await?;
        Ok(rows
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?)
    }

    async fn adopt_runs(&self, from: &str, to: &str) -> Result<u64> {
        let mut client = self.client().await?;
        // One transaction: the dead node is forgotten only with its runs
        // moved. Two adopters race safely: the loser's UPDATE re-checks
        // `node_id` after the winner commits and moves nothing.
        let tx = client.transaction().await?;
        let sql =
            format!("UPDATE runs SET node_id = $2 WHERE node_id = $1 AND status IN {IN_FLIGHT}");
        let n = tx.execute(&sql, &[&from, &to]).await?;
        tx.execute("DELETE FROM nodes WHERE id = $1", &[&from])
            .await?;
        tx.commit().await?;
        Ok(n)
    }

    async fn request_cancel(&self, run_id: &str) -> Result<()> {
        self.execute(
            "UPDATE runs SET cancel_requested = 1 WHERE id = $1",
            &[&run_id],
        )
        .await?;
        Ok(())
    }

    async fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT cancel_requested FROM runs WHERE id = $1",
                &[&run_id],
            )
            .await?;
        let flag: Option<i32> = row.map(|r| r.try_get(0)).transpose()?;
        Ok(flag == Some(1))
    }

    async fn purge(&self, now: i64, idempotency_before: i64) -> Result<u64> {
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let expired =
            format!("SELECT id FROM runs WHERE expires_at < $1 AND status NOT IN {IN_FLIGHT}");
        tx.execute(
            &format!("DELETE FROM events WHERE run_id IN ({expired})"),
            &[&now],
        )
        .await?;
        tx.execute(
            &format!("DELETE FROM idempotency_keys WHERE run_id IN ({expired})"),
            &[&now],
        )
        .await?;
        tx.execute(
            &format!("DELETE FROM run_files WHERE run_id IN ({expired})"),
            &[&now],
        )
        .await?;
        let n = tx
            .execute(
                &format!("DELETE FROM runs WHERE id IN ({expired})"),
                &[&now],
            )
            .await?;
        tx.execute(
            "DELETE FROM idempotency_keys WHERE created_at < $1",
            &[&idempotency_before],
        )
        .await?;
        tx.commit().await?;
        Ok(n)
    }

    async fn ledger_totals(&self) -> Result<LedgerTotals> {
        let client = self.client().await?;
        // SUM over BIGINT is NUMERIC in PostgreSQL: cast back.
        let orgs = client
            .query_one(
                "SELECT COALESCE(SUM(balance_micros), 0)::BIGINT, COALESCE(SUM(held_micros), 0)::BIGINT FROM orgs",
                &[],
            )
            .await?;
        let ledger = client
            .query_one(
                "SELECT COALESCE(SUM(CASE WHEN kind = 'charge' THEN amount_micros END), 0)::BIGINT,
                        COALESCE(SUM(CASE WHEN kind = 'reserve' THEN amount_micros END), 0)::BIGINT
                 FROM ledger_entries",
                &[],
            )
            .await?;
        Ok(LedgerTotals {
            balance_micros: orgs.try_get(0)?,
            held_micros: orgs.try_get(1)?,
            charged_micros: ledger.try_get(0)?,
            reserved_micros: ledger.try_get(1)?,
        })
    }

    async fn run_request(&self, run_id: &str) -> Result<Option<String>> {
        let rows = self
            .query("SELECT request FROM runs WHERE id = $1", &[&run_id])
            .await?;
        match rows.first() {
            Some(row) => Ok(row.try_get(0)?),
            None => Ok(None),
        }
    }

    async fn publish_sample(&self, s: &Sample) -> Result<()> {
        self.client()
            .await?
            .execute(
                "INSERT INTO samples (id, run_id, org_id, title, published_at, request, run)
                 VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &s.id,
                    &s.run_id,
                    &s.org_id,
                    &s.title,
                    &s.published_at,
                    &s.request,
                    &s.run,
                ],
            )
            .await?;
        Ok(())
    }

    async fn unpublish_sample(&self, id: &str) -> Result<u64> {
        Ok(self
            .client()
            .await?
            .execute("DELETE FROM samples WHERE id = $1 OR run_id = $1", &[&id])
            .await?)
    }

    async fn samples(&self) -> Result<Vec<Sample>> {
        let rows = self
            .query(
                "SELECT id, run_id, org_id, title, published_at FROM samples
                 ORDER BY published_at DESC, id DESC",
                &[],
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok(Sample {
                    id: r.try_get(0)?,
                    run_id: r.try_get(1)?,
                    org_id: r.try_get(2)?,
                    title: r.try_get(3)?,
                    published_at: r.try_get(4)?,
                    request: String::new(),
                    run: String::new(),
                })
            })
            .collect()
    }

    async fn sample(&self, id: &str) -> Result<Option<Sample>> {
        let rows = self
            .query(
                "SELECT id, run_id, org_id, title, published_at, request, run FROM samples WHERE id = $1",
                &[&id],
            )
            .await?;
        let Some(r) = rows.first() else {
            return Ok(None);
        };
        Ok(Some(Sample {
            id: r.try_get(0)?,
            run_id: r.try_get(1)?,
            org_id: r.try_get(2)?,
            title: r.try_get(3)?,
            published_at: r.try_get(4)?,
            request: r.try_get(5)?,
            run: r.try_get(6)?,
        }))
    }

    async fn status_counts(&self) -> Result<BTreeMap<String, i64>> {
        let rows = self
            .query("SELECT status, COUNT(*) FROM runs GROUP BY status", &[])
            .await?;
        let count = |r: &Row| -> Result<(String, i64)> { Ok((r.try_get(0)?, r.try_get(1)?)) };
        rows.iter().map(count).collect()
    }
}

const ORG_COLUMNS: &str =
    "id, name, balance_micros, held_micros, per_run_cap_micros, zero_data_retention";

fn org_from_row(r: &Row) -> Result<Org> {
    Ok(Org {
        id: r.try_get(0)?,
        name: r.try_get(1)?,
        balance_micros: r.try_get(2)?,
        held_micros: r.try_get(3)?,
        per_run_cap_micros: r.try_get(4)?,
        zero_data_retention: r.try_get::<_, i32>(5)? != 0,
    })
}

/// The organisation named `name`, created with `defaults` if missing, and
/// locked for the rest of the transaction.
async fn ensure_org(tx: &Transaction<'_>, name: &str, defaults: &Org) -> Result<Org> {
    let now = now_ms();
    let id = new_org_id();
    // DO NOTHING rather than read-then-insert: two nodes creating the same
    // organisation at once must not fail on the unique name.
    let inserted = tx
        .execute(
            "INSERT INTO orgs (id, name, balance_micros, held_micros, per_run_cap_micros, zero_data_retention, created_at)
             VALUES ($1, $2, $3, 0, $4, $5, $6) ON CONFLICT (name) DO NOTHING",
            &[
                &id,
                &name,
                &defaults.balance_micros,
                &defaults.per_run_cap_micros,
                &(defaults.zero_data_retention as i32),
                &now,
            ],
        )
        .await?;
    if inserted == 1 {
        tx.execute(
            "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES ($1, '', 'adjust', $2, $3)",
            &[&id, &defaults.balance_micros, &now],
        )
        .await?;
    }
    let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE name = $1 FOR UPDATE");
    org_from_row(&tx.query_one(&sql, &[&name]).await?)
}

/// The ledger's steps in PostgreSQL's SQL at READ COMMITTED: the
/// organisation's row and the run's are locked (`FOR UPDATE`) where a
/// concurrent transaction on another node must wait.
struct PgTx<'a, 'c>(&'a Transaction<'c>);

impl LedgerTx for PgTx<'_, '_> {
    async fn balance(&mut self, org_id: &str) -> Result<(i64, i64)> {
        let org = self
            .0
            .query_one(
                "SELECT balance_micros, held_micros FROM orgs WHERE id = $1 FOR UPDATE",
                &[&org_id],
            )
            .await?;
        Ok((org.try_get(0)?, org.try_get(1)?))
    }

    async fn previous_claim(
        &mut self,
        org_id: &str,
        claim: &IdempotencyClaim,
    ) -> Result<Option<(String, String, String)>> {
        let previous = self
            .0
            .query_opt(
                "SELECT fingerprint, run_id, response FROM idempotency_keys
                 WHERE org_id = $1 AND key = $2 AND created_at >= $3",
                &[&org_id, &claim.key, &claim.not_before],
            )
            .await?;
        let Some(row) = previous else {
            return Ok(None);
        };
        Ok(Some((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
    }

    async fn in_flight(&mut self, org_id: &str) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) FROM runs WHERE org_id = $1 AND status IN {IN_FLIGHT}");
        Ok(self.0.query_one(&sql, &[&org_id]).await?.try_get(0)?)
    }

    async fn hold(&mut self, org_id: &str, amount: i64) -> Result<()> {
        self.0
            .execute(
                "UPDATE orgs SET held_micros = held_micros + $1 WHERE id = $2",
                &[&amount, &org_id],
            )
            .await?;
        Ok(())
    }

    async fn insert_run(&mut self, run: &RunRecord) -> Result<()> {
        let (permissions, metadata) = json_columns(run);
        self.0
            .execute(
                "INSERT INTO runs (id, org_id, status, created_at, expires_at, model, permissions, metadata,
                                   prompt, reserved_micros, node_id)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                &[
                    &run.id,
                    &run.org_id,
                    &run.status.as_str(),
                    &run.created_at,
                    &run.expires_at,
                    &run.model,
                    &permissions,
                    &metadata,
                    &run.prompt,
                    &run.reserved_micros,
                    &run.node_id,
                ],
            )
            .await?;
        Ok(())
    }

    async fn keep_request(&mut self, run_id: &str, body: &str) -> Result<()> {
        self.0
            .execute(
                "UPDATE runs SET request = $2 WHERE id = $1",
                &[&run_id, &body],
            )
            .await?;
        Ok(())
    }

    async fn insert_event(&mut self, run_id: &str, event: &StoredEvent) -> Result<()> {
        self.0
            .execute(
                "INSERT INTO events (run_id, seq, type, data) VALUES ($1, $2, $3, $4)",
                &[&run_id, &event.seq, &event.kind, &event.data],
            )
            .await?;
        Ok(())
    }

    async fn record_claim(&mut self, run: &RunRecord, claim: &IdempotencyClaim) -> Result<()> {
        self.0
            .execute(
                "INSERT INTO idempotency_keys (org_id, key, fingerprint, run_id, response, created_at)
                 VALUES ($1, $2, $3, $4, $5, $6)
                 ON CONFLICT (org_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
                   run_id = excluded.run_id, response = excluded.response, created_at = excluded.created_at",
                &[&run.org_id, &claim.key, &claim.fingerprint, &run.id, &claim.response, &run.created_at],
            )
            .await?;
        Ok(())
    }

    async fn entry(&mut self, e: Entry<'_>) -> Result<()> {
        self.0
            .execute(
                "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES ($1, $2, $3, $4, $5)",
                &[&e.org_id, &e.run_id, &e.kind, &e.amount_micros, &e.at],
            )
            .await?;
        Ok(())
    }

    async fn reservation(&mut self, run_id: &str) -> Result<Option<(String, i64)>> {
        // A node racing us waits on this lock, then finds the run ended
        // (READ COMMITTED re-checks the status) and settles nothing.
        let sql = format!(
            "SELECT org_id, reserved_micros FROM runs WHERE id = $1 AND status IN {IN_FLIGHT} FOR UPDATE"
        );
        let Some(row) = self.0.query_opt(&sql, &[&run_id]).await? else {
            return Ok(None);
        };
        Ok(Some((row.try_get(0)?, row.try_get(1)?)))
    }

    async fn end_run(&mut self, run_id: &str, finish: &Finish, s: &Settlement) -> Result<()> {
        let (u, m) = (finish.usage, finish.metered);
        self.0
            .execute(
                "UPDATE runs SET status = $2, output = $3, error = $4, ended_at = $5, settlement = $6,
                 model_micros = $7, web_micros = $8, compute_micros = $9,
                 model_calls = $10, input_tokens = $11, output_tokens = $12
                 WHERE id = $1",
                &[
                    &run_id,
                    &finish.status.as_str(),
                    &finish.output,
                    &finish.error.as_ref().map(to_json),
                    &finish.ended_at,
                    &to_json(s),
                    &m.model_micros,
                    &m.web_micros,
                    &m.compute_micros,
                    &u.model_calls,
                    &u.input_tokens,
                    &u.output_tokens,
                ],
            )
            .await?;
        Ok(())
    }

    async fn settle_org(&mut self, org_id: &str, s: &Settlement) -> Result<()> {
        self.0
            .execute(
                "UPDATE orgs SET held_micros = held_micros - $1, balance_micros = balance_micros - $2 WHERE id = $3",
                &[&s.reserved, &s.charged, &org_id],
            )
            .await?;
        Ok(())
    }
}

fn run_file(r: &Row) -> Result<RunFile> {
    Ok(RunFile {
        path: r.try_get(0)?,
        size: r.try_get(1)?,
        sha256: r.try_get(2)?,
        content_type: r.try_get(3)?,
    })
}

fn run_record(r: &Row) -> Result<RunRecord> {
    RunRow {
        id: r.try_get(0)?,
        org_id: r.try_get(1)?,
        status: r.try_get(2)?,
        created_at: r.try_get(3)?,
        started_at: r.try_get(4)?,
        ended_at: r.try_get(5)?,
        expires_at: r.try_get(6)?,
        model: r.try_get(7)?,
        isolation: r.try_get(8)?,
        permissions: r.try_get(9)?,
        metadata: r.try_get(10)?,
        prompt: r.try_get(11)?,
        output: r.try_get(12)?,
        error: r.try_get(13)?,
        reserved_micros: r.try_get(14)?,
        metered: [r.try_get(15)?, r.try_get(16)?, r.try_get(17)?],
        usage: [r.try_get(18)?, r.try_get(19)?, r.try_get(20)?],
        settlement: r.try_get(21)?,
        node_id: r.try_get(22)?,
    }
    .into_record()
}

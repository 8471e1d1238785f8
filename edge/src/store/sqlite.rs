//! The embedded store: one SQLite file in WAL mode. One connection behind
//! a mutex, used from blocking threads: SQLite serialises writers anyway,
//! and `BEGIN IMMEDIATE` takes the write lock up front so two transactions
//! never deadlock upgrading from read to write.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, Transaction, TransactionBehavior, params};

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

/// Statements kept prepared: more than the store has.
const STATEMENT_CACHE: usize = 128;

/// The SQLite backend: one connection to one file, behind a lock.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

impl SqliteStore {
    /// Opens the file at `path` (made, with its folder, if missing) and
    /// migrates its schema.
    pub async fn open(path: &Path) -> Result<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::DataDir {
                path: dir.display().to_string(),
                source,
            })?;
        }
        let path = path.to_path_buf();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection> {
            let mut conn = Connection::open(&path)?;
            conn.busy_timeout(Duration::from_secs(10))?;
            // Every statement is prepared once and kept: parsing them again
            // was nearly a tenth of the server's CPU under 400 runs.
            conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
            // WAL with synchronous=NORMAL survives a killed process (not
            // a power cut, which FULL would); fine for an edge node.
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")?;
            migrate(&mut conn)?;
            Ok(conn)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))??;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut guard)
        })
        .await
        .map_err(|e| StoreError::Task(e.to_string()))?
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn kind(&self) -> &'static str {
        "sqlite"
    }

    async fn create_key(&self, org_name: &str, key_hash: &str, defaults: &Org) -> Result<Org> {
        let (name, hash, defaults) = (org_name.to_string(), key_hash.to_string(), defaults.clone());
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let org = ensure_org(&tx, &name, &defaults)?;
            execute(
                &tx,
                "INSERT INTO api_keys (key_hash, org_id, created_at) VALUES (?1, ?2, ?3)",
                params![hash, org.id, now_ms()],
            )?;
            tx.commit()?;
            Ok(org)
        })
        .await
    }

    async fn org_for_key(&self, key_hash: &str) -> Result<Option<Org>> {
        let hash = key_hash.to_string();
        self.call(move |conn| {
            let sql = format!(
                "SELECT {ORG_COLUMNS} FROM orgs WHERE id = (SELECT org_id FROM api_keys WHERE key_hash = ?1)"
            );
            Ok(query_row(conn, &sql, [hash], org_from_row).optional()?)
        })
        .await
    }

    async fn org(&self, org_id: &str) -> Result<Option<Org>> {
        let id = org_id.to_string();
        self.call(move |conn| {
            let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE id = ?1");
            Ok(query_row(conn, &sql, [id], org_from_row).optional()?)
        })
        .await
    }

    async fn set_org(&self, name: &str, defaults: &Org, update: &OrgUpdate) -> Result<Org> {
        let (name, defaults, update) = (name.to_string(), defaults.clone(), update.clone());
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let org = ensure_org(&tx, &name, &defaults)?;
            if let Some(balance) = update.balance_micros {
                execute(&tx, "UPDATE orgs SET balance_micros = ?1 WHERE id = ?2", params![balance, org.id])?;
                let delta = balance - org.balance_micros;
                execute(&tx,
                    "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES (?1, '', 'adjust', ?2, ?3)",
                    params![org.id, delta, now_ms()],
                )?;
            }
            if let Some(cap) = update.per_run_cap_micros {
                execute(&tx, "UPDATE orgs SET per_run_cap_micros = ?1 WHERE id = ?2", params![cap, org.id])?;
            }
            if let Some(zdr) = update.zero_data_retention {
                execute(&tx, "UPDATE orgs SET zero_data_retention = ?1 WHERE id = ?2", params![zdr as i64, org.id])?;
            }
            let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE id = ?1");
            let org = query_row(&tx, &sql, [&org.id], org_from_row)?;
            tx.commit()?;
            Ok(org)
        })
        .await
    }

    async fn create_run(&self, new: &NewRun) -> Result<Created> {
        let new = new.clone();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let created = at_once(transactions::create(&mut SqliteTx(&tx), &new))??;
            if created == Created::Created {
                tx.commit()?;
            }
            Ok(created)
        })
        .await
    }

    async fn start_run(&self, run_id: &str, isolation: &str, at: i64) -> Result<()> {
        let (id, isolation) = (run_id.to_string(), isolation.to_string());
        self.call(move |conn| {
            execute(conn,
                "UPDATE runs SET status = 'running', isolation = ?2, started_at = ?3 WHERE id = ?1 AND status = 'queued'",
                params![id, isolation, at],
            )?;
            Ok(())
        })
        .await
    }

    async fn append_event(&self, run_id: &str, event: &StoredEvent) -> Result<()> {
        let (id, event) = (run_id.to_string(), event.clone());
        self.call(move |conn| {
            execute(
                conn,
                "INSERT INTO events (run_id, seq, type, data) VALUES (?1, ?2, ?3, ?4)",
                params![id, event.seq, event.kind, event.data],
            )?;
            Ok(())
        })
        .await
    }

    async fn record_usage(&self, run_id: &str, usage: &Usage, metered: &Metered) -> Result<()> {
        let (id, u, m) = (run_id.to_string(), *usage, *metered);
        self.call(move |conn| {
            execute(
                conn,
                &format!(
                    "UPDATE runs SET model_micros = ?2, web_micros = ?3, compute_micros = ?4,
                     model_calls = ?5, input_tokens = ?6, output_tokens = ?7
                     WHERE id = ?1 AND status IN {IN_FLIGHT}"
                ),
                params![
                    id,
                    m.model_micros,
                    m.web_micros,
                    m.compute_micros,
                    u.model_calls,
                    u.input_tokens,
                    u.output_tokens
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn finish_run(&self, run_id: &str, finish: &Finish) -> Result<Option<Settlement>> {
        let (id, finish) = (run_id.to_string(), finish.clone());
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let settled = at_once(transactions::finish(&mut SqliteTx(&tx), &id, &finish))??;
            if settled.is_some() {
                tx.commit()?;
            }
            Ok(settled)
        })
        .await
    }

    async fn run(&self, run_id: &str) -> Result<Option<RunRecord>> {
        let id = run_id.to_string();
        self.call(move |conn| {
            let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1");
            let row = query_row(conn, &sql, [id], run_row).optional()?;
            row.map(RunRow::into_record).transpose()
        })
        .await
    }

    async fn list_runs(
        &self,
        org_id: &str,
        kind: RecordKind,
        limit: i64,
        before: Option<&str>,
    ) -> Result<Vec<RunRecord>> {
        let (org, before) = (org_id.to_string(), before.map(str::to_string));
        let prefix = kind.prefix();
        self.call(move |conn| {
            let rows = match before {
                Some(before) => {
                    let sql = format!(
                        "SELECT {RUN_COLUMNS} FROM runs WHERE org_id = ?1 AND substr(id, 1, 4) = ?4
                         AND (created_at, id) < (SELECT created_at, id FROM runs WHERE id = ?2 AND org_id = ?1)
                         ORDER BY created_at DESC, id DESC LIMIT ?3"
                    );
                    let mut stmt = conn.prepare_cached(&sql)?;
                    stmt.query_map(params![org, before, limit, prefix], run_row)?.collect::<rusqlite::Result<Vec<_>>>()?
                }
                None => {
                    let sql = format!(
                        "SELECT {RUN_COLUMNS} FROM runs WHERE org_id = ?1 AND substr(id, 1, 4) = ?3
                         ORDER BY created_at DESC, id DESC LIMIT ?2"
                    );
                    let mut stmt = conn.prepare_cached(&sql)?;
                    stmt.query_map(params![org, limit, prefix], run_row)?.collect::<rusqlite::Result<Vec<_>>>()?
                }
            };
            rows.into_iter().map(RunRow::into_record).collect()
        })
        .await
    }

    async fn put_run_files(&self, run_id: &str, files: &[(RunFile, Vec<u8>)]) -> Result<()> {
        let id = run_id.to_string();
        let files: Vec<(RunFile, String)> = files
            .iter()
            .map(|(f, bytes)| (f.clone(), stored_content(bytes)))
            .collect();
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            for (f, content) in &files {
                execute(
                    &tx,
                    "INSERT INTO run_files (run_id, path, size, sha256, content_type, content)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![id, f.path, f.size, f.sha256, f.content_type, content],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn run_files(&self, run_id: &str) -> Result<Vec<RunFile>> {
        let id = run_id.to_string();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT path, size, sha256, content_type FROM run_files WHERE run_id = ?1 ORDER BY path",
            )?;
            let files = stmt
                .query_map([id], run_file_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(files)
        })
        .await
    }

    async fn run_file(&self, run_id: &str, path: &str) -> Result<Option<(RunFile, Vec<u8>)>> {
        let (id, path) = (run_id.to_string(), path.to_string());
        self.call(move |conn| {
            let row = query_row(
                conn,
                "SELECT path, size, sha256, content_type, content FROM run_files
                 WHERE run_id = ?1 AND path = ?2",
                params![id, path],
                |r| Ok((run_file_row(r)?, r.get::<_, String>(4)?)),
            )
            .optional()?;
            row.map(|(file, text)| Ok((file, file_content(&text)?)))
                .transpose()
        })
        .await
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
        let id = run_id.to_string();
        self.call(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT seq, type, data FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
            )?;
            let events = stmt
                .query_map(params![id, after_seq, limit], |r| {
                    Ok(StoredEvent {
                        seq: r.get(0)?,
                        kind: r.get(1)?,
                        data: r.get(2)?,
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(events)
        })
        .await
    }

    async fn last_seq(&self, run_id: &str) -> Result<i64> {
        let id = run_id.to_string();
        self.call(move |conn| {
            Ok(query_row(
                conn,
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE run_id = ?1",
                [id],
                |r| r.get(0),
            )?)
        })
        .await
    }

    async fn in_flight_on(&self, node_id: &str) -> Result<Vec<RunRecord>> {
        let node = node_id.to_string();
        self.call(move |conn| {
            let sql = format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE node_id = ?1 AND status IN {IN_FLIGHT}"
            );
            let mut stmt = conn.prepare_cached(&sql)?;
            let rows = stmt
                .query_map([node], run_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(RunRow::into_record).collect()
        })
        .await
    }

    async fn heartbeat(&self, node_id: &str, now: i64, stale_before: i64) -> Result<Vec<String>> {
        let node = node_id.to_string();
        self.call(move |conn| {
            execute(
                conn,
                "INSERT INTO nodes (id, heartbeat_at) VALUES (?1, ?2)
                 ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
                params![node, now],
            )?;
            let mut stmt =
                conn.prepare_cached("SELECT id FROM nodes WHERE heartbeat_at < ?1 AND id <> ?2")?;
            let stale = stmt
                .query_map(params![stale_before, node], |r| r.get(0))?
                .collect::<rusqlite::Result<Vec<String>>>()?;
            Ok(stale)
        })
        .await
    }

    async fn adopt_runs(&self, from: &str, to: &str) -> Result<u64> {
        let (from, to) = (from.to_string(), to.to_string());
        self.call(move |conn| {
            let n = execute(
                conn,
                &format!(
                    "UPDATE runs SET node_id = ?2 WHERE node_id = ?1 AND status IN {IN_FLIGHT}"
                ),
                params![from, to],
            )?;
            execute(conn, "DELETE FROM nodes WHERE id = ?1", [from])?;
            Ok(n as u64)
        })
        .await
    }

    async fn request_cancel(&self, run_id: &str) -> Result<()> {
        let id = run_id.to_string();
        self.call(move |conn| {
            execute(
                conn,
                "UPDATE runs SET cancel_requested = 1 WHERE id = ?1",
                [id],
            )?;
            Ok(())
        })
        .await
    }

    async fn cancel_requested(&self, run_id: &str) -> Result<bool> {
        let id = run_id.to_string();
        self.call(move |conn| {
            let flag: Option<i64> = conn
                .query_row(
                    "SELECT cancel_requested FROM runs WHERE id = ?1",
                    [id],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(flag == Some(1))
        })
        .await
    }

    async fn purge(&self, now: i64, idempotency_before: i64) -> Result<u64> {
        self.call(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let expired =
                format!("SELECT id FROM runs WHERE expires_at < ?1 AND status NOT IN {IN_FLIGHT}");
            execute(
                &tx,
                &format!("DELETE FROM events WHERE run_id IN ({expired})"),
                [now],
            )?;
            execute(
                &tx,
                &format!("DELETE FROM idempotency_keys WHERE run_id IN ({expired})"),
                [now],
            )?;
            execute(
                &tx,
                &format!("DELETE FROM run_files WHERE run_id IN ({expired})"),
                [now],
            )?;
            let n = execute(
                &tx,
                &format!("DELETE FROM runs WHERE id IN ({expired})"),
                [now],
            )?;
            execute(
                &tx,
                "DELETE FROM idempotency_keys WHERE created_at < ?1",
                [idempotency_before],
            )?;
            tx.commit()?;
            Ok(n as u64)
        })
        .await
    }

    async fn ledger_totals(&self) -> Result<LedgerTotals> {
        self.call(|conn| {
            let (balance, held) = query_row(
                conn,
                "SELECT COALESCE(SUM(balance_micros), 0), COALESCE(SUM(held_micros), 0) FROM orgs",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            let (charged, reserved) = query_row(
                conn,
                "SELECT COALESCE(SUM(CASE WHEN kind = 'charge' THEN amount_micros END), 0),
                        COALESCE(SUM(CASE WHEN kind = 'reserve' THEN amount_micros END), 0)
                 FROM ledger_entries",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            Ok(LedgerTotals {
                balance_micros: balance,
                held_micros: held,
                charged_micros: charged,
                reserved_micros: reserved,
            })
        })
        .await
    }

    async fn run_request(&self, run_id: &str) -> Result<Option<String>> {
        let id = run_id.to_string();
        self.call(move |conn| {
            let body: Option<Option<String>> =
                query_row(conn, "SELECT request FROM runs WHERE id = ?1", [id], |r| {
                    r.get(0)
                })
                .optional()?;
            Ok(body.flatten())
        })
        .await
    }

    async fn publish_sample(&self, sample: &Sample) -> Result<()> {
        let s = sample.clone();
        self.call(move |conn| {
            execute(
                conn,
                "INSERT INTO samples (id, run_id, org_id, title, published_at, request, run)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    s.id,
                    s.run_id,
                    s.org_id,
                    s.title,
                    s.published_at,
                    s.request,
                    s.run
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn unpublish_sample(&self, id: &str) -> Result<u64> {
        let id = id.to_string();
        self.call(move |conn| {
            let n = execute(
                conn,
                "DELETE FROM samples WHERE id = ?1 OR run_id = ?1",
                [id],
            )?;
            Ok(n as u64)
        })
        .await
    }

    async fn samples(&self) -> Result<Vec<Sample>> {
        self.call(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT id, run_id, org_id, title, published_at FROM samples
                 ORDER BY published_at DESC, id DESC",
            )?;
            let samples = stmt
                .query_map([], |r| {
                    Ok(Sample {
                        id: r.get(0)?,
                        run_id: r.get(1)?,
                        org_id: r.get(2)?,
                        title: r.get(3)?,
                        published_at: r.get(4)?,
                        request: String::new(),
                        run: String::new(),
                    })
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(samples)
        })
        .await
    }

    async fn sample(&self, id: &str) -> Result<Option<Sample>> {
        let id = id.to_string();
        self.call(move |conn| {
            Ok(query_row(
                conn,
                "SELECT id, run_id, org_id, title, published_at, request, run FROM samples WHERE id = ?1",
                [id],
                |r| {
                    Ok(Sample {
                        id: r.get(0)?,
                        run_id: r.get(1)?,
                        org_id: r.get(2)?,
                        title: r.get(3)?,
                        published_at: r.get(4)?,
                        request: r.get(5)?,
                        run: r.get(6)?,
                    })
                },
            )
            .optional()?)
        })
        .await
    }

    async fn status_counts(&self) -> Result<BTreeMap<String, i64>> {
        self.call(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT status, COUNT(*) FROM runs GROUP BY status")?;
            let counts = stmt
                .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?
                .collect::<rusqlite::Result<BTreeMap<_, _>>>()?;
            Ok(counts)
        })
        .await
    }
}

const ORG_COLUMNS: &str =
    "id, name, balance_micros, held_micros, per_run_cap_micros, zero_data_retention";

fn org_from_row(r: &Row<'_>) -> rusqlite::Result<Org> {
    Ok(Org {
        id: r.get(0)?,
        name: r.get(1)?,
        balance_micros: r.get(2)?,
        held_micros: r.get(3)?,
        per_run_cap_micros: r.get(4)?,
        zero_data_retention: r.get::<_, i64>(5)? != 0,
    })
}

fn ensure_org(tx: &rusqlite::Transaction<'_>, name: &str, defaults: &Org) -> Result<Org> {
    let sql = format!("SELECT {ORG_COLUMNS} FROM orgs WHERE name = ?1");
    if let Some(org) = query_row(tx, &sql, [name], org_from_row).optional()? {
        return Ok(org);
    }
    let org = Org {
        id: new_org_id(),
        name: name.to_string(),
        held_micros: 0,
        ..defaults.clone()
    };
    execute(tx,
        "INSERT INTO orgs (id, name, balance_micros, held_micros, per_run_cap_micros, zero_data_retention, created_at)
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6)",
        params![org.id, org.name, org.balance_micros, org.per_run_cap_micros, org.zero_data_retention as i64, now_ms()],
    )?;
    execute(
        tx,
        "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES (?1, '', 'adjust', ?2, ?3)",
        params![org.id, org.balance_micros, now_ms()],
    )?;
    Ok(org)
}

fn run_file_row(r: &Row<'_>) -> rusqlite::Result<RunFile> {
    Ok(RunFile {
        path: r.get(0)?,
        size: r.get(1)?,
        sha256: r.get(2)?,
        content_type: r.get(3)?,
    })
}

fn run_row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        id: r.get(0)?,
        org_id: r.get(1)?,
        status: r.get(2)?,
        created_at: r.get(3)?,
        started_at: r.get(4)?,
        ended_at: r.get(5)?,
        expires_at: r.get(6)?,
        model: r.get(7)?,
        isolation: r.get(8)?,
        permissions: r.get(9)?,
        metadata: r.get(10)?,
        prompt: r.get(11)?,
        output: r.get(12)?,
        error: r.get(13)?,
        reserved_micros: r.get(14)?,
        metered: [r.get(15)?, r.get(16)?, r.get(17)?],
        usage: [r.get(18)?, r.get(19)?, r.get(20)?],
        settlement: r.get(21)?,
        node_id: r.get(22)?,
    })
}

fn migrate(conn: &mut Connection) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)",
    )?;
    let current: i64 = query_row(
        conn,
        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    let known = MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::SchemaTooNew {
            found: current,
            known,
        });
    }
    for (version, script) in MIGRATIONS.iter().filter(|m| m.0 > current) {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Exclusive)?;
        tx.execute_batch(script)?;
        execute(
            &tx,
            "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, ?2)",
            params![version, now_ms()],
        )?;
        tx.commit()?;
        tracing::info!(version, "applied migration");
    }
    Ok(())
}

/// The ledger's steps in SQLite's SQL, inside an immediate transaction
/// (which holds the file's write lock: no other transaction runs
/// meanwhile, so nothing needs locking row by row).
struct SqliteTx<'a, 'c>(&'a Transaction<'c>);

impl LedgerTx for SqliteTx<'_, '_> {
    async fn balance(&mut self, org_id: &str) -> Result<(i64, i64)> {
        Ok(query_row(
            self.0,
            "SELECT balance_micros, held_micros FROM orgs WHERE id = ?1",
            [org_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?)
    }

    async fn previous_claim(
        &mut self,
        org_id: &str,
        claim: &IdempotencyClaim,
    ) -> Result<Option<(String, String, String)>> {
        Ok(query_row(
            self.0,
            "SELECT fingerprint, run_id, response FROM idempotency_keys
             WHERE org_id = ?1 AND key = ?2 AND created_at >= ?3",
            params![org_id, claim.key, claim.not_before],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?)
    }

    async fn in_flight(&mut self, org_id: &str) -> Result<i64> {
        let sql = format!("SELECT COUNT(*) FROM runs WHERE org_id = ?1 AND status IN {IN_FLIGHT}");
        Ok(query_row(self.0, &sql, [org_id], |r| r.get(0))?)
    }

    async fn hold(&mut self, org_id: &str, amount: i64) -> Result<()> {
        execute(
            self.0,
            "UPDATE orgs SET held_micros = held_micros + ?1 WHERE id = ?2",
            params![amount, org_id],
        )?;
        Ok(())
    }

    async fn insert_run(&mut self, run: &RunRecord) -> Result<()> {
        let (permissions, metadata) = json_columns(run);
        execute(self.0,
            "INSERT INTO runs (id, org_id, status, created_at, expires_at, model, permissions, metadata,
                               prompt, reserved_micros, node_id)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                run.id,
                run.org_id,
                run.status.as_str(),
                run.created_at,
                run.expires_at,
                run.model,
                permissions,
                metadata,
                run.prompt,
                run.reserved_micros,
                run.node_id
            ],
        )?;
        Ok(())
    }

    async fn insert_event(&mut self, run_id: &str, event: &StoredEvent) -> Result<()> {
        execute(
            self.0,
            "INSERT INTO events (run_id, seq, type, data) VALUES (?1, ?2, ?3, ?4)",
            params![run_id, event.seq, event.kind, event.data],
        )?;
        Ok(())
    }

    async fn keep_request(&mut self, run_id: &str, body: &str) -> Result<()> {
        execute(
            self.0,
            "UPDATE runs SET request = ?2 WHERE id = ?1",
            params![run_id, body],
        )?;
        Ok(())
    }

    async fn record_claim(&mut self, run: &RunRecord, claim: &IdempotencyClaim) -> Result<()> {
        execute(self.0,
            "INSERT INTO idempotency_keys (org_id, key, fingerprint, run_id, response, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (org_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
               run_id = excluded.run_id, response = excluded.response, created_at = excluded.created_at",
            params![run.org_id, claim.key, claim.fingerprint, run.id, claim.response, run.created_at],
        )?;
        Ok(())
    }

    async fn entry(&mut self, e: Entry<'_>) -> Result<()> {
        execute(
            self.0,
            "INSERT INTO ledger_entries (org_id, run_id, kind, amount_micros, at) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![e.org_id, e.run_id, e.kind, e.amount_micros, e.at],
        )?;
        Ok(())
    }

    async fn reservation(&mut self, run_id: &str) -> Result<Option<(String, i64)>> {
        let sql = format!(
            "SELECT org_id, reserved_micros FROM runs WHERE id = ?1 AND status IN {IN_FLIGHT}"
        );
        Ok(query_row(self.0, &sql, [run_id], |r| Ok((r.get(0)?, r.get(1)?))).optional()?)
    }

    async fn end_run(&mut self, run_id: &str, finish: &Finish, s: &Settlement) -> Result<()> {
        let (u, m) = (finish.usage, finish.metered);
        execute(
            self.0,
            "UPDATE runs SET status = ?2, output = ?3, error = ?4, ended_at = ?5, settlement = ?6,
             model_micros = ?7, web_micros = ?8, compute_micros = ?9,
             model_calls = ?10, input_tokens = ?11, output_tokens = ?12
             WHERE id = ?1",
            params![
                run_id,
                finish.status.as_str(),
                finish.output,
                finish.error.as_ref().map(to_json),
                finish.ended_at,
                to_json(s),
                m.model_micros,
                m.web_micros,
                m.compute_micros,
                u.model_calls,
                u.input_tokens,
                u.output_tokens
            ],
        )?;
        Ok(())
    }

    async fn settle_org(&mut self, org_id: &str, s: &Settlement) -> Result<()> {
        execute(
            self.0,
            "UPDATE orgs SET held_micros = held_micros - ?1, balance_micros = balance_micros - ?2 WHERE id = ?3",
            params![s.reserved, s.charged, org_id],
        )?;
        Ok(())
    }
}

/// The output of a future that never waits: the ledger's steps are
/// synchronous in SQLite, run on the store's blocking thread.
fn at_once<T>(future: impl std::future::Future<Output = T>) -> Result<T> {
    use std::task::{Context, Poll, Waker};
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => Ok(value),
        Poll::Pending => Err(StoreError::Task(
            "a SQLite step waited, which none should".into(),
        )),
    }
}

/// `Connection::execute` on a statement kept prepared.
fn execute(conn: &Connection, sql: &str, params: impl rusqlite::Params) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute(params)
}

/// `Connection::query_row` on a statement kept prepared.
fn query_row<T>(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    f: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    conn.prepare_cached(sql)?.query_row(params, f)
}

//! The versioned schema, shared by both backends: each migration is one
//! SQL script, applied in order at start and recorded in
//! `schema_migrations`. Types are the common subset of SQLite and
//! PostgreSQL (`BIGINT`, `TEXT`, `INTEGER` 0/1 for flags).

/// `(version, script)`, in order. Never edit a released migration; add one.
pub const MIGRATIONS: &[(i64, &str)] = &[
    (
        1,
        "
CREATE TABLE orgs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    balance_micros BIGINT NOT NULL,
    held_micros BIGINT NOT NULL DEFAULT 0,
    per_run_cap_micros BIGINT NOT NULL,
    zero_data_retention INTEGER NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE TABLE api_keys (
    key_hash TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    created_at BIGINT NOT NULL
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    org_id TEXT NOT NULL REFERENCES orgs(id),
    status TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    ended_at BIGINT,
    expires_at BIGINT NOT NULL,
    model TEXT NOT NULL,
    isolation TEXT,
    permissions TEXT NOT NULL,
    metadata TEXT NOT NULL,
    prompt TEXT,
    output TEXT,
    error TEXT,
    reserved_micros BIGINT NOT NULL,
    model_micros BIGINT NOT NULL DEFAULT 0,
    web_micros BIGINT NOT NULL DEFAULT 0,
    compute_micros BIGINT NOT NULL DEFAULT 0,
    model_calls BIGINT NOT NULL DEFAULT 0,
    input_tokens BIGINT NOT NULL DEFAULT 0,
    output_tokens BIGINT NOT NULL DEFAULT 0,
    settlement TEXT,
    node_id TEXT NOT NULL,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_org ON runs (org_id, created_at, id);
CREATE INDEX runs_by_status ON runs (status, node_id);
CREATE INDEX runs_by_expiry ON runs (expires_at);
CREATE TABLE events (
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE idempotency_keys (
    org_id TEXT NOT NULL,
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    run_id TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, key)
);
CREATE TABLE ledger_entries (
    org_id TEXT NOT NULL,
    run_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    amount_micros BIGINT NOT NULL,
    at BIGINT NOT NULL
);
CREATE INDEX ledger_by_org ON ledger_entries (org_id, at);
CREATE TABLE nodes (
    id TEXT PRIMARY KEY,
    heartbeat_at BIGINT NOT NULL
);
",
    ),
    // The files a run's `outputs` collected, kept as long as its record.
    // Content as base64 text: the one byte type both backends spell alike.
    (
        2,
        "
CREATE TABLE run_files (
    run_id TEXT NOT NULL,
    path TEXT NOT NULL,
    size BIGINT NOT NULL,
    sha256 TEXT NOT NULL,
    content_type TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
);
",
    ),
    // The request body a run was created with (kept unless zero data
    // retention), and samples: finished runs an operator published,
    // snapshotted so they outlive the run's retention.
    (
        3,
        "
ALTER TABLE runs ADD COLUMN request TEXT;
CREATE TABLE samples (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    org_id TEXT NOT NULL,
    title TEXT NOT NULL,
    published_at BIGINT NOT NULL,
    request TEXT NOT NULL,
    run TEXT NOT NULL
);
CREATE INDEX samples_by_time ON samples (published_at, id);
",
    ),
];

/// Columns of `runs` in the order `RunRow` reads them.
pub const RUN_COLUMNS: &str = "id, org_id, status, created_at, started_at, ended_at, expires_at, \
     model, isolation, permissions, metadata, prompt, output, error, reserved_micros, \
     model_micros, web_micros, compute_micros, model_calls, input_tokens, output_tokens, \
     settlement, node_id";

/// The statuses of runs still in flight, as an SQL list.
pub const IN_FLIGHT: &str = "('queued', 'running')";

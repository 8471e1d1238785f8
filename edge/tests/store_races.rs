//! Two store handles on one database racing each other, as two edge nodes
//! do (for SQLite, two connections to one file): one run per idempotency
//! key, one settlement per run, one organisation per name, and on
//! PostgreSQL one migration however many nodes start together.

mod support;

use std::collections::BTreeMap;

use ephemeral_edge::ids::{key_hash, new_run_id};
use ephemeral_edge::run::{Metered, Permissions, RunRecord, RunStatus, Usage};
use std::sync::Arc;

use ephemeral_edge::store::{self, Created, Finish, IdempotencyClaim, NewRun, Org, Store};
use ephemeral_edge::timestamp::now_ms;
use futures_util::future::join_all;
use support::Backend;

on_both_stores!(
    racing_creates_with_one_key_make_one_run,
    racing_finishes_settle_once,
    racing_first_keys_make_one_org,
);

/// Two handles on one fresh database (the folder keeps SQLite's file).
async fn two_stores(backend: Backend) -> (Arc<dyn Store>, Arc<dyn Store>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ephemeral.sqlite3");
    let url = match backend {
        Backend::Sqlite => None,
        Backend::Postgres => Some(support::postgres::fresh_database().await),
    };
    let a = store::open(url.as_deref(), &path).await.unwrap();
    let b = store::open(url.as_deref(), &path).await.unwrap();
    (a, b, dir)
}

async fn org(store: &dyn Store, balance: i64) -> Org {
    let key = support::org_key(store, "acme", balance).await;
    store.org_for_key(&key_hash(&key)).await.unwrap().unwrap()
}

fn new_run(org_id: &str, reserved: i64, key: Option<&str>) -> NewRun {
    let id = new_run_id();
    let now = now_ms();
    let record = RunRecord {
        id: id.clone(),
        org_id: org_id.to_string(),
        status: RunStatus::Queued,
        created_at: now,
        started_at: None,
        ended_at: None,
        expires_at: now + 86_400_000,
        model: "ephemeral/script".into(),
        isolation: None,
        permissions: Permissions {
            shell: true,
            web: false,
            connections: Vec::new(),
            files: Vec::new(),
            timeout_seconds: 30,
            max_cost_micros: reserved,
            zero_data_retention: false,
            idle_timeout_seconds: None,
            outputs: Vec::new(),
        },
        usage: Usage::default(),
        reserved_micros: reserved,
        metered: Metered::default(),
        settlement: None,
        output: None,
        error: None,
        metadata: BTreeMap::new(),
        prompt: Some("echo".into()),
        node_id: "node".into(),
    };
    NewRun {
        record,
        idempotency: key.map(|key| IdempotencyClaim {
            key: key.to_string(),
            fingerprint: "same body".into(),
            response: id,
            not_before: now - 1_000,
        }),
        max_in_flight: 100,
        first_event: None,
        request: None,
    }
}

async fn racing_creates_with_one_key_make_one_run(backend: Backend) {
    let (a, b, _dir) = two_stores(backend).await;
    let org = org(a.as_ref(), 1_000_000).await;
    let news: Vec<NewRun> = (0..50)
        .map(|_| new_run(&org.id, 30_000, Some("k")))
        .collect();
    let creates = news.iter().enumerate().map(|(i, new)| {
        let store = if i % 2 == 0 { &a } else { &b };
        store.create_run(new)
    });
    let results: Vec<Created> = join_all(creates)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let created: Vec<&NewRun> = news
        .iter()
        .zip(&results)
        .filter(|(_, r)| **r == Created::Created)
        .map(|(n, _)| n)
        .collect();
    assert_eq!(created.len(), 1, "{results:?}");
    let winner = &created[0].record.id;
    for result in &results {
        match result {
            Created::Created => {}
            Created::Replayed { run_id, response } => {
                assert_eq!(run_id, winner);
                assert_eq!(response, winner);
            }
            other => panic!("{other:?}"),
        }
    }
    let org = b.org(&org.id).await.unwrap().unwrap();
    assert_eq!(org.held_micros, 30_000);
    assert_eq!(b.ledger_totals().await.unwrap().reserved_micros, 30_000);
    assert_eq!(
        a.list_runs(&org.id, ephemeral_edge::ids::RecordKind::Run, 100, None)
            .await
            .unwrap()
            .len(),
        1
    );
}

async fn racing_finishes_settle_once(backend: Backend) {
    let (a, b, _dir) = two_stores(backend).await;
    let org = org(a.as_ref(), 1_000_000).await;
    let new = new_run(&org.id, 40_000, None);
    assert_eq!(a.create_run(&new).await.unwrap(), Created::Created);
    let id = &new.record.id;
    let finish = Finish {
        status: RunStatus::Failed,
        output: None,
        error: None,
        ended_at: now_ms(),
        usage: Usage::default(),
        metered: Metered {
            model_micros: 0,
            web_micros: 0,
            compute_micros: 12_345,
        },
    };
    let finishes = (0..20).map(|i| {
        let store = if i % 2 == 0 { &a } else { &b };
        store.finish_run(id, &finish)
    });
    let settled: Vec<_> = join_all(finishes)
        .await
        .into_iter()
        .filter_map(Result::unwrap)
        .collect();
    assert_eq!(settled.len(), 1, "{settled:?}");
    assert_eq!(settled[0].charged, 12_345);
    let org = b.org(&org.id).await.unwrap().unwrap();
    assert_eq!(org.held_micros, 0);
    assert_eq!(org.balance_micros, 1_000_000 - 12_345);
    let totals = a.ledger_totals().await.unwrap();
    assert_eq!(totals.charged_micros, 12_345);
}

async fn racing_first_keys_make_one_org(backend: Backend) {
    let (a, b, _dir) = two_stores(backend).await;
    let defaults = Org {
        id: String::new(),
        name: String::new(),
        balance_micros: 5_000,
        held_micros: 0,
        per_run_cap_micros: 1_000,
        zero_data_retention: false,
    };
    let hashes: Vec<String> = (0..20).map(|i| key_hash(&format!("key {i}"))).collect();
    let creates = hashes.iter().enumerate().map(|(i, hash)| {
        let store = if i % 2 == 0 { &a } else { &b };
        store.create_key("newco", hash, &defaults)
    });
    let orgs: Vec<Org> = join_all(creates)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert!(orgs.iter().all(|o| o.id == orgs[0].id), "{orgs:?}");
    for hash in &hashes {
        let org = b.org_for_key(hash).await.unwrap().unwrap();
        assert_eq!(org.id, orgs[0].id);
    }
    assert_eq!(a.ledger_totals().await.unwrap().balance_micros, 5_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_starting_together_migrate_once() {
    let url = support::postgres::fresh_database().await;
    let dir = tempfile::tempdir().unwrap();
    let opens = (0..4).map(|_| store::open(Some(&url), dir.path()));
    for store in join_all(opens).await {
        assert_eq!(store.unwrap().kind(), "postgres");
    }
    let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations",
            &[],
        )
        .await
        .unwrap();
    let (rows, versions): (i64, i64) = (row.get(0), row.get(1));
    assert!(versions >= 1);
    assert_eq!(rows, versions, "each migration recorded once");
}

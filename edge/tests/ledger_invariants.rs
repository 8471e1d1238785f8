//! The ledger under load: 200 concurrent runs across 20 organisations,
//! some cancelled at random moments, some over budget, some timing out.
//! Afterwards every run is settled with charged + released = reserved,
//! model + web + compute = charged, charged <= max_cost_micros, nothing is
//! held, and balances + charges equal what the organisations started with.

mod support;

use std::time::Duration;

use rand::Rng;
use serde_json::json;
use support::{Backend, TestServer, client, post_run, wait_run};

on_both_stores!(two_hundred_runs_with_random_cancels_conserve_money);

const ORGS: usize = 20;
const RUNS_PER_ORG: usize = 10;
const START_BALANCE: i64 = 2_000_000;

async fn two_hundred_runs_with_random_cancels_conserve_money(backend: Backend) {
    let server = TestServer::start_with(backend, |c| {
        c.limits.concurrent_runs = 100;
        c.limits.runs_per_minute = 10_000;
        // A price high enough that compute shows in the figures.
        c.prices.compute_micros_per_second = 20_000;
    })
    .await;
    let mut keys = Vec::new();
    for i in 0..ORGS {
        keys.push(server.org(&format!("org-{i}"), START_BALANCE).await);
    }
    let mut tasks = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        for j in 0..RUNS_PER_ORG {
            let (base, key) = (server.base.clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                one_run(&base, &key, i * RUNS_PER_ORG + j).await
            }));
        }
    }
    let mut charged_total = 0;
    let mut statuses = std::collections::BTreeMap::new();
    for task in tasks {
        let (status, charged) = task.await.unwrap();
        *statuses.entry(status).or_insert(0) += 1;
        charged_total += charged;
    }
    eprintln!("statuses: {statuses:?}");
    let totals = server.edge.store.ledger_totals().await.unwrap();
    assert_eq!(totals.held_micros, 0, "nothing held once every run ended");
    assert_eq!(totals.charged_micros, charged_total);
    assert_eq!(
        totals.balance_micros + charged_total,
        START_BALANCE * ORGS as i64,
        "money is conserved"
    );
    assert!(
        statuses.len() >= 3,
        "the mix produced several outcomes: {statuses:?}"
    );
    server.stop().await;
}

/// Posts one run of a varied kind, maybe cancels it, and checks its
/// settlement; `(status, charged)`.
async fn one_run(base: &str, key: &str, n: usize) -> (String, i64) {
    let (prompt, budget, timeout) = match n % 4 {
        0 => ("echo quick", 30_000, 30),
        1 => ("sleep 1\necho slept", 60_000, 30),
        // 20,000 micros a second: over this budget within the first second.
        2 => ("sleep 5", 15_000, 30),
        _ => ("sleep 10", 60_000, 1),
    };
    let body = json!({"prompt": prompt, "model": "ephemeral/script", "max_cost_micros": budget, "timeout_seconds": timeout});
    let (status, _, run) = post_run(base, key, &body, Some(&format!("run-{n}"))).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    let cancel_after = rand::rng().random_range(0..1500);
    if n.is_multiple_of(3) {
        tokio::time::sleep(Duration::from_millis(cancel_after)).await;
        let response = client()
            .post(format!("{base}/v1/runs/{id}/cancel"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert!([202, 409].contains(&response.status().as_u16()));
    }
    let run = wait_run(base, key, &id).await;
    // Every outcome of the mix is a settled one; `failed` is the runtime
    // giving way under the load (a worker not ready in time).
    assert_ne!(run["status"], "failed", "{run}");
    let cost = &run["cost"];
    let get = |k: &str| cost[k].as_i64().unwrap();
    assert_eq!(get("reserved_micros"), budget);
    assert_eq!(
        get("charged_micros") + get("released_micros"),
        budget,
        "{run}"
    );
    assert_eq!(
        get("model_micros") + get("web_micros") + get("compute_micros"),
        get("charged_micros")
    );
    assert!(get("charged_micros") <= budget);
    (
        run["status"].as_str().unwrap().to_string(),
        get("charged_micros"),
    )
}

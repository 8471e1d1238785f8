//! Two edge nodes on one PostgreSQL database: one run per Idempotency-Key
//! whichever node gets the requests, the ledger conserved across nodes, a
//! reader on one node following a run hosted by the other live (and
//! resuming with `Last-Event-ID`), and the runs of a node killed with
//! `kill -9` settled by the survivor within the dead-node window.

mod support;

use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ephemeral_edge::ids::key_hash;
use ephemeral_edge::store::{LedgerTotals, Org};
use futures_util::future::join_all;
use serde_json::Value;
use support::{Backend, SseEvent, TestServer, client, get_json, parse_sse, post_run, script};

/// Nodes A and B, in this process, on one fresh database.
async fn two_nodes() -> (TestServer, TestServer) {
    let a = TestServer::start_with(Backend::Postgres, |c| c.node_id = Some("node-a".into())).await;
    let data = tempfile::tempdir().unwrap();
    let b = TestServer::start_on(Backend::Postgres, data, a.database_url.clone(), |c| {
        c.node_id = Some("node-b".into())
    })
    .await;
    (a, b)
}

async fn org_of(server: &TestServer, key: &str) -> Org {
    let store = &server.edge.store;
    store.org_for_key(&key_hash(key)).await.unwrap().unwrap()
}

async fn totals(server: &TestServer) -> LedgerTotals {
    server.edge.store.ledger_totals().await.unwrap()
}

/// Waits until run `id` has ended and its timeline is complete.
async fn ended(base: &str, key: &str, id: &str) -> Value {
    support::wait_run(base, key, id).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_idempotency_key_on_both_nodes_makes_one_run() {
    let (a, b) = two_nodes().await;
    let key = a.org("acme", 1_000_000).await;
    let body = script("echo once\nsleep 1", 20_000);
    let posts = (0..50).map(|i| {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        post_run(base, &key, &body, Some("one-key"))
    });
    let answers = join_all(posts).await;
    let mut ids: Vec<&str> = answers
        .iter()
        .map(|(status, _, run)| {
            assert_eq!(*status, 201, "{run}");
            run["id"].as_str().unwrap()
        })
        .collect();
    let replayed = answers
        .iter()
        .filter(|(_, headers, _)| headers.get("idempotent-replayed").is_some())
        .count();
    ids.dedup();
    assert_eq!(ids.len(), 1, "one run for one key: {ids:?}");
    assert_eq!(replayed, 49);

    // One reservation while it runs, seen by both nodes.
    let org = org_of(&b, &key).await;
    assert!(org.held_micros == 20_000 || org.held_micros == 0, "{org:?}");
    for node in [&a, &b] {
        let (status, list) = get_json(&node.base, &key, "/v1/runs").await;
        assert_eq!(status, 200);
        assert_eq!(list["data"].as_array().unwrap().len(), 1, "{list}");
    }
    let run = ended(&b.base, &key, ids[0]).await;
    assert_eq!(run["status"], "succeeded", "{run}");
    let org = org_of(&a, &key).await;
    let t = totals(&a).await;
    assert_eq!(t.reserved_micros, 20_000, "one reservation: {t:?}");
    assert_eq!(org.held_micros, 0);
    assert_eq!(org.balance_micros + t.charged_micros, 1_000_000);
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_ledger_is_conserved_across_nodes() {
    let (a, b) = two_nodes().await;
    let keys = [a.org("acme", 300_000).await, b.org("globex", 200_000).await];
    let before = totals(&a).await;
    assert_eq!(before.balance_micros, 500_000);
    let posts = (0..16i64).map(|i| {
        let base = if i % 2 == 0 { &a.base } else { &b.base };
        let key = &keys[(i as usize / 2) % 2];
        let body = script(&format!("echo run {i}\ncat /dev/null"), 10_000 + i * 1_000);
        async move {
            let (status, _, run) = post_run(base, key, &body, None).await;
            assert_eq!(status, 201, "{run}");
            (base, key, run["id"].as_str().unwrap().to_string())
        }
    });
    let runs = join_all(posts).await;
    for (base, key, id) in &runs {
        let run = ended(base, key, id).await;
        let cost = &run["cost"];
        assert_eq!(
            cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
            cost["reserved_micros"].as_i64().unwrap(),
            "{run}"
        );
    }
    for node in [&a, &b] {
        let after = totals(node).await;
        assert_eq!(after.held_micros, 0, "{after:?}");
        assert_eq!(
            after.balance_micros + after.charged_micros,
            before.balance_micros + before.charged_micros,
            "{after:?}"
        );
    }
    a.stop().await;
    b.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_event_stored_on_one_node_wakes_the_other_s_readers() {
    let (a, b) = two_nodes().await;
    let mut woken = b
        .edge
        .store
        .watch_run("run_elsewhere")
        .expect("postgres notifies");
    // The first wake-up says B's listener is connected (nothing before
    // that can be relied on), so from here no notification is lost.
    let listening = tokio::time::timeout(Duration::from_secs(10), woken.changed()).await;
    assert!(matches!(listening, Ok(Ok(()))), "B never listened");
    for seq in 1..=3 {
        let event = ephemeral_edge::store::StoredEvent {
            seq,
            kind: "shell.output".into(),
            data: "{}".into(),
        };
        a.edge
            .store
            .append_event("run_elsewhere", &event)
            .await
            .unwrap();
        let notified = tokio::time::timeout(Duration::from_secs(1), woken.changed()).await;
        assert!(matches!(notified, Ok(Ok(()))), "no wake-up for seq {seq}");
        assert_eq!(*woken.borrow_and_update(), seq);
    }
    a.stop().await;
    b.stop().await;
}

/// Follows `url`'s SSE stream to its end: each event with its arrival time.
async fn follow(url: String, key: String, last_event_id: Option<i64>) -> Vec<(SseEvent, Instant)> {
    let mut request = client().get(url).bearer_auth(key);
    if let Some(id) = last_event_id {
        request = request.header("last-event-id", id.to_string());
    }
    let mut response = request.send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let (mut text, mut events) = (String::new(), Vec::new());
    while let Some(chunk) = response.chunk().await.unwrap() {
        text.push_str(&String::from_utf8_lossy(&chunk));
        // Only whole blocks are parsed; the rest waits for more bytes.
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            let now = Instant::now();
            events.extend(parse_sse(&block).into_iter().map(|e| (e, now)));
        }
    }
    events
}

fn assert_complete_from(events: &[(SseEvent, Instant)], first: i64) {
    let ids: Vec<i64> = events.iter().map(|(e, _)| e.id).collect();
    let expected: Vec<i64> = (first..first + ids.len() as i64).collect();
    assert_eq!(ids, expected, "every event, in order");
    assert_eq!(events.last().unwrap().0.kind, "worker.destroyed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reader_on_one_node_follows_a_run_on_the_other_live() {
    let (a, b) = two_nodes().await;
    let key = a.org("acme", 1_000_000).await;
    let body = script("echo one\nsleep 1\necho two\nsleep 1\necho three", 50_000);
    let (status, _, run) = post_run(&a.base, &key, &body, None).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    let path = format!("/v1/runs/{id}/events");
    // The same run read on its host (from memory) and on B (from the
    // store, woken by notifications).
    let on_a = tokio::spawn(follow(format!("{}{path}", a.base), key.clone(), None));
    let on_b = tokio::spawn(follow(format!("{}{path}", b.base), key.clone(), None));
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let resumed = tokio::spawn(follow(format!("{}{path}", b.base), key.clone(), Some(3)));
    let (on_a, on_b, resumed) = (
        on_a.await.unwrap(),
        on_b.await.unwrap(),
        resumed.await.unwrap(),
    );

    assert_complete_from(&on_b, 1);
    assert_eq!(on_b.len(), on_a.len());
    let output: String = on_b
        .iter()
        .filter(|(e, _)| e.kind == "shell.output")
        .map(|(e, _)| e.data["data"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(output, "one\ntwo\nthree\n");
    // Live: B got each event soon after A, not at the next slow poll.
    let lag = on_a
        .iter()
        .zip(&on_b)
        .map(|((_, at_a), (_, at_b))| at_b.saturating_duration_since(*at_a))
        .max()
        .unwrap();
    assert!(lag < Duration::from_millis(1500), "B lagged {lag:?}");
    let spread = on_b.last().unwrap().1 - on_b.first().unwrap().1;
    assert!(spread > Duration::from_millis(1500), "not live: {spread:?}");

    assert_complete_from(&resumed, 4);
    a.stop().await;
    b.stop().await;
}

/// A child process killed (SIGKILL) when dropped, so a failing test
/// leaves no server behind.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `ephemeral serve` as a child on `database_url`; its base URL.
fn serve_child(database_url: &str, data: &std::path::Path) -> (Killed, String) {
    // setpriv's parent-death signal: killed with this test's thread even
    // when the test process itself is killed -9.
    let mut child = Command::new("setpriv")
        .args(["--pdeathsig", "KILL", "--"])
        .arg(support::binary())
        .args(["serve", "--listen", "127.0.0.1:0", "--data"])
        .arg(data)
        .env("EPHEMERAL_DATABASE_URL", database_url)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ephemeral serve starts");
    let stderr = child.stderr.take().unwrap();
    let child = Killed(child);
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads its log to the end, so the pipe never fills.
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(addr) = line.strip_prefix("ephemeral: listening on ") {
                let _ = tx.send(addr.trim().to_string());
            }
        }
    });
    match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(base) => (child, base),
        Err(_) => panic!("ephemeral serve did not say where it listens"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_node_s_runs_are_settled_by_the_other() {
    let b = TestServer::start_with(Backend::Postgres, |c| c.node_id = Some("node-b".into())).await;
    let url = b.database_url.clone().unwrap();
    let data = tempfile::tempdir().unwrap();
    let (a, a_base) = serve_child(&url, data.path());
    let key = b.org("acme", 1_000_000).await;
    let before = totals(&b).await;

    let (status, _, run) = post_run(
        &a_base,
        &key,
        &script("echo started\nsleep 60", 50_000),
        None,
    )
    .await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (_, run) = get_json(&b.base, &key, &format!("/v1/runs/{id}")).await;
        if run["status"] == "running" {
            break;
        }
        assert!(Instant::now() < deadline, "the run never started: {run}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(org_of(&b, &key).await.held_micros, 50_000);

    drop(a); // SIGKILL: no shutdown, no settling
    let killed = Instant::now();
    let run = ended(&b.base, &key, &id).await;
    let took = killed.elapsed();
    // Dead after 10 s of silence, noticed at B's next 2 s heartbeat.
    assert!(took < Duration::from_secs(16), "settled after {took:?}");
    assert_eq!(run["status"], "failed", "{run}");
    assert_eq!(run["error"]["code"], "interrupted", "{run}");
    let cost = &run["cost"];
    assert_eq!(
        cost["charged_micros"].as_i64().unwrap() + cost["released_micros"].as_i64().unwrap(),
        50_000
    );
    let after = totals(&b).await;
    assert_eq!(after.held_micros, 0, "{after:?}");
    assert_eq!(
        after.balance_micros + after.charged_micros,
        before.balance_micros + before.charged_micros
    );
    b.stop().await;
}

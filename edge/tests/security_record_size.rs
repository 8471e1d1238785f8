//! A run cannot make its record, or a read of it, grow without bound
//! (finding G3), and a reader that stops reading gives back what it holds
//! (finding D2): the output is capped and kept once, `GET /v1/runs/{id}`
//! streams its timeline, and a connection whose client reads nothing is
//! closed after `limits.write_stall_seconds`.

mod support;

use std::time::Duration;

use ephemeral_edge::lifecycle::MAX_RUN_OUTPUT_BYTES;
use support::{Backend, TestServer, client, post_run, read_sse, script, wait_run};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

on_both_stores!(an_output_over_its_cap_is_cut_and_kept_once);

/// Three commands of 1 MB each: the script model's answer would be 3 MB.
const THREE_MEGABYTES: &str = "yes | head -c 1000000\nyes | head -c 1000000\nyes | head -c 1000000";

async fn an_output_over_its_cap_is_cut_and_kept_once(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", 1_000_000).await;
    let (status, _, run) =
        post_run(&server.base, &key, &script(THREE_MEGABYTES, 100_000), None).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    // Read back through the streamed GET: one JSON document.
    let run = wait_run(&server.base, &key, &id).await;
    assert_eq!(run["status"], "succeeded", "{}", run["error"]);
    let output = run["output"].as_str().unwrap();
    assert!(output.len() <= MAX_RUN_OUTPUT_BYTES, "{}", output.len());
    assert!(output.len() > MAX_RUN_OUTPUT_BYTES - 4, "{}", output.len());
    let timeline = run["timeline"].as_array().unwrap();
    let outcome = timeline
        .iter()
        .find(|e| e["type"] == "run.succeeded")
        .unwrap();
    assert_eq!(
        outcome["data"]["output"], run["output"],
        "shown with the output"
    );
    assert_eq!(outcome["data"]["output_truncated"], MAX_RUN_OUTPUT_BYTES);
    let seqs: Vec<i64> = timeline
        .iter()
        .map(|e| e["seq"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as i64).collect::<Vec<_>>());
    // Stored once: the record has it, the stored event does not.
    let stored = server.edge.store.events(&id, 0).await.unwrap();
    let stored_outcome = stored.iter().find(|e| e.kind == "run.succeeded").unwrap();
    assert!(
        stored_outcome.data.len() < 1024,
        "{}",
        stored_outcome.data.len()
    );
    // A replay from the store shows it as the live stream did.
    let replay = client()
        .get(format!("{}/v1/runs/{id}/events", server.base))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let events = read_sse(replay).await;
    assert_eq!(events.len(), timeline.len());
    let replayed = events.iter().find(|e| e.kind == "run.succeeded").unwrap();
    assert_eq!(replayed.data["output"], run["output"]);
    server.stop().await;
}

/// A client that asks for a big timeline and reads none of it: once the
/// socket is full the server waits `write_stall_seconds`, then closes the
/// connection and drops the reader.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reader_that_reads_nothing_is_let_go() {
    let server =
        TestServer::start_with(Backend::Sqlite, |c| c.limits.write_stall_seconds = 1).await;
    let key = server.org("acme", 1_000_000).await;
    // About 12 MB of events: far more than the sockets' buffers hold.
    let commands = ["yes | head -c 1000000"; 12].join("\n");
    let (status, _, run) = post_run(&server.base, &key, &script(&commands, 200_000), None).await;
    assert_eq!(status, 201, "{run}");
    let id = run["id"].as_str().unwrap().to_string();
    wait_run(&server.base, &key, &id).await;
    let mut stalled = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let request = format!(
        "GET /v1/runs/{id}/events HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\r\n"
    );
    stalled.write_all(request.as_bytes()).await.unwrap();
    // The reader exists, then is let go while its client still reads nothing.
    let gone = async {
        let mut opened = false;
        loop {
            let readers = server.edge.metrics.readers();
            opened |= readers > 0;
            if opened && readers == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), gone)
        .await
        .expect("the stalled reader is dropped");
    // What the socket had taken in is there, then the end: the server
    // closed it, well before the whole timeline was sent.
    let mut received = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), stalled.read_to_end(&mut received));
    match read.await.expect("the connection was closed") {
        Ok(_) => {}
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
    assert!(received.len() < 12_000_000, "{} bytes", received.len());
    // The server still answers.
    let (status, _) = support::get_json(&server.base, &key, &format!("/v1/runs/{id}")).await;
    assert_eq!(status, 200);
    server.stop().await;
}

//! Files in and out of a sandbox over HTTP: put (streamed, the quota
//! enforced as bytes arrive, nothing half-written left), get, list,
//! delete; paths outside the sandbox refused naming the path; a missing
//! file is a 404.

mod support;

use serde_json::{Value, json};
use support::{Backend, TestServer, client, create_sandbox, get_json, sandbox_command};

on_both_stores!(
    files_go_in_and_come_out_byte_for_byte,
    an_upload_over_the_quota_is_refused_and_leaves_nothing,
    paths_outside_the_sandbox_are_refused
);

const BALANCE: i64 = 5_000_000;

async fn sandbox(server: &TestServer, key: &str) -> String {
    let (status, sbx) =
        create_sandbox(&server.base, key, &json!({"max_cost_micros": 100_000})).await;
    assert_eq!(status, 201, "{sbx}");
    sbx["id"].as_str().unwrap().to_string()
}

async fn files_go_in_and_come_out_byte_for_byte(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let id = sandbox(&server, &key).await;
    let base = &server.base;
    let files_url = format!("{base}/v1/sandboxes/{id}/files");
    // Every byte value, and more than one chunk of the transfer.
    let bytes: Vec<u8> = (0..(3 << 20) + 7).map(|i: u32| (i % 251) as u8).collect();
    let response = client()
        .put(format!("{files_url}/data/blob.bin"))
        .bearer_auth(&key)
        .body(bytes.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    let written: Value = response.json().await.unwrap();
    assert_eq!(written["size"], bytes.len());
    assert_eq!(written["sha256"], sha256_hex(&bytes), "{written}");
    let path = written["path"].as_str().unwrap().to_string();
    assert!(
        path.starts_with("/tmp/ephemeral-run-") && path.ends_with("/scratch/data/blob.bin"),
        "{path}"
    );

    // The sandbox sees it.
    let (_, out) = sandbox_command(
        base,
        &key,
        &id,
        &json!({"command": "wc -c < data/blob.bin"}),
    )
    .await;
    assert_eq!(
        out["stdout"].as_str().map(str::trim),
        Some(bytes.len().to_string().as_str()),
        "{out}"
    );

    // Out again, by relative and by absolute path.
    for url in [
        format!("{files_url}/data/blob.bin"),
        format!("{files_url}/{}", path.replace('/', "%2F")),
    ] {
        let response = client().get(&url).bearer_auth(&key).send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        assert_eq!(
            response.headers()["content-length"],
            bytes.len().to_string().as_str()
        );
        assert_eq!(response.bytes().await.unwrap().as_ref(), bytes.as_slice());
    }

    // A text file written by a command comes out with its type.
    sandbox_command(
        base,
        &key,
        &id,
        &json!({"command": "echo '# Report' > report.md"}),
    )
    .await;
    let response = client()
        .get(format!("{files_url}/report.md"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/markdown");
    assert_eq!(response.text().await.unwrap(), "# Report\n");

    // Listed, then deleted.
    let (status, list) = get_json(base, &key, &format!("/v1/sandboxes/{id}/files")).await;
    assert_eq!(status, 200, "{list}");
    let names: Vec<(String, String)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["path"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap()
                    .to_string(),
                e["type"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert!(names.contains(&("data".into(), "dir".into())), "{list}");
    assert!(
        names.contains(&("report.md".into(), "file".into())),
        "{list}"
    );
    let (_, inner) = get_json(base, &key, &format!("/v1/sandboxes/{id}/files?dir=data")).await;
    assert_eq!(inner["data"][0]["size"], bytes.len(), "{inner}");
    assert_eq!(
        inner["data"][0]["mode"].as_str().map(str::len),
        Some(4),
        "{inner}"
    );
    let response = client()
        .delete(format!("{files_url}/report.md"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let response = client()
        .get(format!("{files_url}/report.md"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let response = client()
        .delete(format!("{files_url}/report.md"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);

    // The timeline says what was put.
    let response = client()
        .get(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    client()
        .delete(format!("{base}/v1/sandboxes/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    let events = support::read_sse(
        client()
            .get(format!("{base}/v1/sandboxes/{id}/events"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let written = events
        .iter()
        .find(|e| e.kind == "file.written")
        .expect("a file.written event");
    assert_eq!(written.data["sha256"], sha256_hex(&bytes));
    server.stop().await;
}

async fn an_upload_over_the_quota_is_refused_and_leaves_nothing(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let id = sandbox(&server, &key).await;
    let files_url = format!("{}/v1/sandboxes/{id}/files", server.base);
    let path = format!("/v1/sandboxes/{id}/files/big.bin");
    let limit = 64usize << 20;
    // Announced: refused on the header alone, before a byte is sent.
    let head = format!("content-length: {}\r\n", limit + 1);
    let (status, _) = raw_put(&server, &key, &path, &head, &[]).await;
    assert_eq!(status, 413);
    // Streamed with no length: refused at the chunk that crosses.
    let chunk = vec![b'x'; 1 << 20];
    let mut chunks: Vec<Vec<u8>> = (0..64).map(|_| framed(&chunk)).collect();
    chunks.push(framed(b"x"));
    chunks.push(b"0\r\n\r\n".to_vec());
    let (status, body) = raw_put(
        &server,
        &key,
        &path,
        "transfer-encoding: chunked\r\n",
        &chunks,
    )
    .await;
    assert_eq!(status, 413);
    let problem: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(problem["type"], "/problems/payload-too-large", "{problem}");
    let response = client()
        .get(format!("{files_url}/big.bin"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404, "nothing half-written remains");
    // The sandbox is fine, and a file that fits goes in.
    let response = client()
        .put(format!("{files_url}/small.bin"))
        .bearer_auth(&key)
        .body(vec![1u8; 1024])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 201);
    server.stop().await;
}

/// One chunk of a chunked body, framed.
fn framed(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// A PUT over a bare socket that reads the answer even when the server
/// answered early and stopped reading: an HTTP client library reports
/// the broken pipe of its unfinished body instead (a race under load).
async fn raw_put(
    server: &TestServer,
    key: &str,
    path: &str,
    framing: &str,
    body: &[Vec<u8>],
) -> (u16, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "PUT {path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {key}\r\n\
         connection: close\r\n{framing}\r\n"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    for piece in body {
        // The server may refuse and close before the body's end.
        if socket.write_all(piece).await.is_err() {
            break;
        }
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        socket.read_to_end(&mut answer),
    );
    // A reset after the answer arrived still leaves the answer read.
    let _ = read.await.expect("the server answers");
    parse_answer(&answer)
}

/// Status and body (de-chunked if need be) of a whole HTTP/1.1 answer.
fn parse_answer(answer: &[u8]) -> (u16, Vec<u8>) {
    let text = String::from_utf8_lossy(answer);
    let status: u16 = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status line in {text:?}"));
    let split = text.find("\r\n\r\n").expect("the end of the headers") + 4;
    let head = text[..split].to_ascii_lowercase();
    let mut body = answer[split..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        let mut plain = Vec::new();
        let mut rest = &body[..];
        while let Some(eol) = rest.windows(2).position(|w| w == b"\r\n") {
            let size =
                usize::from_str_radix(std::str::from_utf8(&rest[..eol]).unwrap(), 16).unwrap_or(0);
            if size == 0 {
                break;
            }
            plain.extend_from_slice(&rest[eol + 2..eol + 2 + size]);
            rest = &rest[eol + 4 + size..];
        }
        body = plain;
    }
    (status, body)
}

async fn paths_outside_the_sandbox_are_refused(backend: Backend) {
    let server = TestServer::start(backend).await;
    let key = server.org("acme", BALANCE).await;
    let id = sandbox(&server, &key).await;
    let files_url = format!("{}/v1/sandboxes/{id}/files", server.base);
    for path in [
        "%2Fetc%2Fpasswd",
        "a%2F..%2F..%2Fetc%2Fpasswd",
        "x%00y",
        "%2Fproc%2Fself%2Fenviron",
    ] {
        for request in [
            client().put(format!("{files_url}/{path}")).body("x"),
            client().get(format!("{files_url}/{path}")),
            client().delete(format!("{files_url}/{path}")),
        ] {
            let response = request.bearer_auth(&key).send().await.unwrap();
            assert_eq!(response.status(), 400, "{path}");
            let problem: Value = response.json().await.unwrap();
            assert_eq!(problem["errors"][0]["field"], "path", "{problem}");
        }
    }
    let response = client()
        .get(format!("{files_url}?dir=%2Fetc"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let response = client()
        .get(format!("{files_url}/missing.txt"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    server.stop().await;
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

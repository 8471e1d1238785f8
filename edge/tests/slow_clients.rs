//! Clients that hold connections without finishing a request (idle,
//! half-sent headers, half-sent bodies) are closed after the configured
//! timeouts, connections over the caps are refused at once, and the server
//! keeps answering everyone else meanwhile (finding D1: 20,500 such sockets
//! exhausted its file descriptors).

mod support;

use std::time::Duration;

use support::{Backend, TestServer, client};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Reads until the server closes the connection (returns true) or `limit`
/// passes (false).
async fn closed_within(socket: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let read_all = async {
        loop {
            match socket.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    };
    tokio::time::timeout(limit, read_all).await.is_ok()
}

async fn health(base: &str) -> u16 {
    client()
        .get(format!("{base}/v1/health"))
        .send()
        .await
        .map_or(0, |r| r.status().as_u16())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_and_half_sent_connections_are_closed() {
    let server = TestServer::start_with(Backend::Sqlite, |c| {
        c.limits.header_read_timeout_seconds = 1;
        c.limits.body_read_timeout_seconds = 1;
    })
    .await;
    let key = server.org("acme", 1_000_000).await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    let mut half_headers = TcpStream::connect(&addr).await.unwrap();
    half_headers
        .write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let mut half_body = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"prompt\""
    );
    half_body.write_all(head.as_bytes()).await.unwrap();
    // The server answers others meanwhile.
    assert_eq!(health(&server.base).await, 200);
    // Generous bounds: the timeouts are 1 s; before the fix these stayed
    // open for good.
    let limit = Duration::from_secs(15);
    assert!(closed_within(&mut idle, limit).await, "an idle connection");
    assert!(
        closed_within(&mut half_headers, limit).await,
        "half-sent headers"
    );
    assert!(
        closed_within(&mut half_body, limit).await,
        "a half-sent body"
    );
    assert_eq!(health(&server.base).await, 200);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_over_the_cap_are_refused_and_others_still_served() {
    let server = TestServer::start_with(Backend::Sqlite, |c| {
        c.limits.connections_per_peer = 20;
    })
    .await;
    let addr = server.base.trim_start_matches("http://").to_owned();
    let mut held = Vec::new();
    for _ in 0..20 {
        held.push(TcpStream::connect(&addr).await.unwrap());
    }
    // One more from the same address is closed at once.
    let mut over = TcpStream::connect(&addr).await.unwrap();
    assert!(closed_within(&mut over, Duration::from_secs(10)).await);
    // Freeing places lets new clients in.
    held.truncate(10);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut status = 0;
    for _ in 0..50 {
        status = health(&server.base).await;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(status, 200);
    drop(held);
    server.stop().await;
}

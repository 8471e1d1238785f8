//! One MCP session over a byte stream, as `ephemeral mcp` serves it on stdio.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::fake::{FakeFactory, about};
use common::{LineClient, eventually, is_error, text, within};
use ephemeral_mcp::{SandboxFactory, serve_io};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// Serves a session over a duplex pipe; the client gets the other end.
fn start(
    factory: Arc<FakeFactory>,
    idle: Duration,
) -> (LineClient, JoinHandle<std::io::Result<()>>) {
    let (client, server) = tokio::io::duplex(64 * 1024);
    let (reader, writer) = tokio::io::split(server);
    let factory: Arc<dyn SandboxFactory> = factory;
    let task = tokio::spawn(serve_io(factory, about(), idle, reader, writer));
    (LineClient::new(client), task)
}

const LONG: Duration = Duration::from_secs(3600);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handshake_negotiates_a_version_and_describes_the_sandbox() {
    let factory = FakeFactory::new(&[]);
    let (mut client, task) = start(factory.clone(), LONG);
    let response = client.handshake("2025-06-18").await;
    let result = &response["result"];
    assert_eq!(result["protocolVersion"], json!("2025-06-18"), "{response}");
    assert_eq!(result["serverInfo"]["name"], json!("ephemeral"));
    assert!(result["capabilities"]["tools"].is_object(), "{response}");
    let instructions = result["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("no network access"), "{instructions}");
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");
    client.close().await;
    within("the server to stop", task)
        .await
        .expect("join")
        .expect("serve");
    // Nothing was called, so no sandbox was made.
    assert_eq!(factory.stats.created(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn older_and_unknown_versions() {
    for (asked, answered) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-11-25", "2025-11-25"),
        ("1999-01-01", "2025-06-18"),
    ] {
        let (mut client, _task) = start(FakeFactory::new(&[]), LONG);
        let response = client.handshake(asked).await;
        assert_eq!(
            response["result"]["protocolVersion"],
            json!(answered),
            "{asked}: {response}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_has_five_tools_with_schemas_and_costs_no_sandbox() {
    let factory = FakeFactory::new(&[]);
    let (mut client, _task) = start(factory.clone(), LONG);
    client.handshake("2025-06-18").await;
    let response = client.request("tools/list", json!({})).await;
    let tools = response["result"]["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "run_shell",
            "run_python",
            "write_file",
            "read_file",
            "list_files"
        ]
    );
    for tool in &tools {
        assert_eq!(tool["inputSchema"]["type"], json!("object"), "{tool}");
        let description = tool["description"].as_str().unwrap_or_default();
        assert!(description.contains("no network access"), "{description}");
        assert!(description.contains("WebAssembly"), "{description}");
    }
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["command"]));
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["timeout_seconds"]["maximum"],
        json!(600)
    );
    assert_eq!(
        tools[2]["inputSchema"]["required"],
        json!(["path", "content"])
    );
    assert!(
        tools[0]["description"]
            .as_str()
            .unwrap_or_default()
            .contains("fake 1.0")
    );
    assert_eq!(factory.stats.created(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_tool_works_in_one_sandbox() {
    let factory = FakeFactory::new(&[]);
    let (mut client, task) = start(factory.clone(), LONG);
    client.handshake("2025-06-18").await;

    let echo = client
        .call("run_shell", json!({"command": "echo hi"}))
        .await;
    assert!(!is_error(&echo), "{echo}");
    assert!(text(&echo).starts_with("hi\n"), "{echo}");
    assert!(text(&echo).contains("[exit code 0"), "{echo}");
    assert_eq!(echo["structuredContent"]["stdout"], json!("hi\n"));
    assert_eq!(echo["structuredContent"]["exit_code"], json!(0));

    let stdin = client
        .call(
            "run_shell",
            json!({"command": "cat", "stdin": "fed", "timeout_seconds": 5}),
        )
        .await;
    assert!(text(&stdin).starts_with("fed"), "{stdin}");

    // A non-zero exit is a result, not a tool error.
    let failed = client.call("run_shell", json!({"command": "exit 3"})).await;
    assert!(!is_error(&failed), "{failed}");
    assert!(text(&failed).contains("[exit code 3"), "{failed}");
    let missing = client.call("run_shell", json!({"command": "nosuch"})).await;
    assert!(
        text(&missing).contains("[stderr]\nsh: nosuch: not found"),
        "{missing}"
    );

    let python = client
        .call("run_python", json!({"code": "print(2+2)"}))
        .await;
    assert!(!is_error(&python), "{python}");
    assert!(text(&python).starts_with("4\n"), "{python}");

    let written = client
        .call(
            "write_file",
            json!({"path": "notes/a.txt", "content": "hello"}),
        )
        .await;
    assert_eq!(text(&written), "Wrote 5 bytes to /work/notes/a.txt");
    assert_eq!(
        written["structuredContent"]["path"],
        json!("/work/notes/a.txt")
    );
    let read = client
        .call("read_file", json!({"path": "notes/a.txt"}))
        .await;
    assert_eq!(text(&read), "hello");
    let cat = client
        .call("run_shell", json!({"command": "cat notes/a.txt"}))
        .await;
    assert!(text(&cat).starts_with("hello"), "{cat}");

    client
        .call(
            "write_file",
            json!({"path": "/work/b.bin", "content": "/wAB", "encoding": "base64"}),
        )
        .await;
    let binary = client
        .call("read_file", json!({"path": "/work/b.bin"}))
        .await;
    assert!(text(&binary).contains("not UTF-8"), "{binary}");
    assert_eq!(binary["structuredContent"]["content"], json!("/wAB"));
    assert_eq!(binary["structuredContent"]["encoding"], json!("base64"));

    let listing = client.call("list_files", json!({})).await;
    assert!(!is_error(&listing), "{listing}");
    let entries = listing["structuredContent"]["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let paths: Vec<&str> = entries.iter().filter_map(|e| e["path"].as_str()).collect();
    assert_eq!(paths, ["/work/b.bin", "/work/notes"], "{listing}");
    assert!(text(&listing).contains("dir"), "{listing}");

    // One session, one sandbox, made on the first call with no caller.
    assert_eq!(factory.stats.created(), 1);
    assert_eq!(factory.stats.callers(), vec![None]);
    assert_eq!(factory.stats.ended(), 0);

    // The client leaves: the session's sandbox ends.
    client.close().await;
    within("the server to stop", task)
        .await
        .expect("join")
        .expect("serve");
    assert_eq!(factory.stats.ended(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_before_2025_06_18_have_no_structured_content() {
    let (mut client, _task) = start(FakeFactory::new(&[]), LONG);
    client.handshake("2025-03-26").await;
    let echo = client
        .call("run_shell", json!({"command": "echo hi"}))
        .await;
    assert!(text(&echo).starts_with("hi"), "{echo}");
    assert_eq!(echo.get("structuredContent"), None, "{echo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_tool_errors_and_the_session_goes_on() {
    let factory = FakeFactory::new(&[]);
    let (mut client, _task) = start(factory.clone(), LONG);
    client.handshake("2025-06-18").await;

    for (tool, arguments) in [
        ("run_shell", json!({})),
        ("run_shell", json!({"command": "ls", "timeout_seconds": 0})),
        (
            "run_shell",
            json!({"command": "ls", "timeout_seconds": 601}),
        ),
        (
            "write_file",
            json!({"path": "a", "content": "%%", "encoding": "base64"}),
        ),
        ("read_file", json!({"path": 7})),
    ] {
        let result = client.call(tool, arguments.clone()).await;
        assert!(is_error(&result), "{tool} {arguments}: {result}");
    }
    // Bad arguments make no sandbox.
    assert_eq!(factory.stats.created(), 0);

    let missing = client.call("read_file", json!({"path": "nope.txt"})).await;
    assert!(is_error(&missing), "{missing}");
    assert_eq!(text(&missing), "no such file: /work/nope.txt");

    // A panic inside the sandbox is a tool error too.
    let panicked = client.call("run_shell", json!({"command": "panic"})).await;
    assert!(is_error(&panicked), "{panicked}");
    assert!(
        text(&panicked).contains("failed unexpectedly"),
        "{panicked}"
    );

    // An unknown tool is a protocol error (as the spec has it).
    let unknown = client
        .request("tools/call", json!({"name": "rm_rf", "arguments": {}}))
        .await;
    assert_eq!(unknown["error"]["code"], json!(-32602), "{unknown}");

    // A line that is not JSON does not end the session.
    client.send_raw("this is not json").await;
    let echo = client
        .call("run_shell", json!({"command": "echo still here"}))
        .await;
    assert!(text(&echo).starts_with("still here"), "{echo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_that_cannot_start_is_a_tool_error() {
    let factory = Arc::new(FakeFactory {
        fail_create: Some("no capacity".into()),
        ..Arc::try_unwrap(FakeFactory::new(&[])).unwrap_or_else(|_| unreachable!())
    });
    let (mut client, _task) = start(factory, LONG);
    client.handshake("2025-06-18").await;
    let result = client
        .call("run_shell", json!({"command": "echo hi"}))
        .await;
    assert!(is_error(&result), "{result}");
    assert_eq!(text(&result), "could not start the sandbox: no capacity");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_sandbox_ends_and_the_next_call_gets_a_new_one() {
    let factory = FakeFactory::new(&[]);
    let (mut client, _task) = start(factory.clone(), Duration::from_millis(200));
    client.handshake("2025-06-18").await;
    client
        .call("write_file", json!({"path": "a.txt", "content": "x"}))
        .await;
    let stats = factory.stats.clone();
    eventually("the idle sandbox to end", || stats.ended() == 1).await;

    let read = client.call("read_file", json!({"path": "a.txt"})).await;
    assert!(is_error(&read), "{read}");
    assert!(text(&read).starts_with("[a new sandbox"), "{read}");
    assert!(text(&read).ends_with("no such file: /work/a.txt"), "{read}");
    let echo = client
        .call("run_shell", json!({"command": "echo again"}))
        .await;
    assert!(text(&echo).starts_with("again"), "{echo}");
    assert_eq!(factory.stats.created(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_call_is_not_idleness() {
    let factory = FakeFactory::new(&[]);
    let (mut client, _task) = start(factory.clone(), Duration::from_millis(500));
    client.handshake("2025-06-18").await;
    // The fake's sleep fails if its sandbox ended while it slept.
    let slow = client
        .call("run_shell", json!({"command": "sleep 1.5"}))
        .await;
    assert!(!is_error(&slow), "{slow}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_sandbox_after_idleness_says_so() {
    let factory = FakeFactory::new(&[]);
    let (mut client, _task) = start(factory.clone(), Duration::from_millis(100));
    client.handshake("2025-06-18").await;
    client.call("run_shell", json!({"command": "echo 1"})).await;
    let stats = factory.stats.clone();
    eventually("the idle sandbox to end", || stats.ended() == 1).await;
    let echo: Value = client.call("run_shell", json!({"command": "echo 2"})).await;
    assert!(text(&echo).starts_with("[a new sandbox"), "{echo}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eof_before_initialize_is_a_clean_end() {
    let factory = FakeFactory::new(&[]);
    let (client, task) = start(factory.clone(), LONG);
    client.close().await;
    within("the server to stop", task)
        .await
        .expect("join")
        .expect("serve");
    assert_eq!(factory.stats.created(), 0);
}

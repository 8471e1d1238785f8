//! A throwaway harness: the MCP server over the tests' fake sandboxes, with
//! the command line of the real one, so the Python client's tests can run
//! against it (`mcp/run-tests.sh --fake`).
//!
//! - `fake_server mcp [--isolation X] [--idle-timeout-seconds N]`: stdio.
//! - `fake_server serve ADDR KEY`: streamable HTTP at `http://ADDR/mcp`
//!   accepting `Authorization: Bearer KEY`; prints `listening on http://…`
//!   once it listens (ADDR may have port 0).

#[path = "../tests/common/fake.rs"]
mod fake;

use std::sync::Arc;
use std::time::Duration;

use ephemeral_mcp::SandboxFactory;

fn usage() -> ! {
    eprintln!(
        "usage: fake_server mcp [--isolation X] [--idle-timeout-seconds N]\n       fake_server serve ADDR KEY"
    );
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("mcp") => {
            let mut idle = Duration::from_secs(900);
            let mut rest = args[1..].iter();
            while let Some(flag) = rest.next() {
                match (flag.as_str(), rest.next()) {
                    ("--isolation", Some(_)) => {}
                    ("--idle-timeout-seconds", Some(n)) => {
                        idle = Duration::from_secs(n.parse().unwrap_or_else(|_| usage()));
                    }
                    _ => usage(),
                }
            }
            let factory: Arc<dyn SandboxFactory> = fake::FakeFactory::new(&[]);
            ephemeral_mcp::serve_stdio(factory, fake::about(), idle).await
        }
        Some("serve") if args.len() == 3 => {
            let fake = fake::FakeFactory::new(&[args[2].as_str()]);
            // Say on stderr how many sandboxes were made and ended.
            let stats = fake.stats.clone();
            tokio::spawn(async move {
                let mut last = (0, 0);
                loop {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let now = (stats.created(), stats.ended());
                    if now != last {
                        eprintln!("sandboxes: {} created, {} ended", now.0, now.1);
                        last = now;
                    }
                }
            });
            let factory: Arc<dyn SandboxFactory> = fake;
            let router =
                ephemeral_mcp::http_router(factory, fake::about(), Duration::from_secs(900));
            let listener = tokio::net::TcpListener::bind(&args[1]).await?;
            println!("listening on http://{}", listener.local_addr()?);
            axum::serve(listener, router).await
        }
        _ => usage(),
    }
}

//! `ephemeral bench [--config FILE] [--isolation LEVEL] [--quick] [--json]`:
//! how fast this host serves sandboxes, as installed. For each isolation
//! the host offers, a real server in this process (its own temporary
//! SQLite store, loopback HTTP, this binary as the worker) is driven the
//! way agents drive it: `POST /v1/sandboxes` → `echo hi` → `DELETE`, by 1,
//! 10, 20 and 50 clients at once. One table: create → first output
//! p50/p95/p99 at each concurrency, sandboxes per second, and the memory
//! an idle sandbox costs (the proportional memory of the server and its
//! workers). An isolation the host cannot serve is a row that says why.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use serde_json::{Value, json};

use super::serve::DataArgs;
use crate::config::{Config, LimitsConfig};
use crate::ids::{key_hash, new_member_key};
use crate::isolation::Isolation;
use crate::server::Server;
use crate::store::Org;

#[derive(Args)]
pub struct BenchArgs {
    /// Only this isolation (wasm, jail or kvm); default: each one.
    #[arg(long, value_name = "LEVEL", value_parser = parse_isolation)]
    isolation: Option<Isolation>,
    /// A short pass (a few sandboxes each): checks the host, not its speed.
    #[arg(long)]
    quick: bool,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
    /// The server's TOML configuration (pool sizes, worker binary); its
    /// store and address are not used.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

fn parse_isolation(s: &str) -> Result<Isolation, String> {
    Isolation::parse(s).ok_or_else(|| format!("{s:?} is not an isolation level (wasm, jail, kvm)"))
}

/// Clients at once.
const CONCURRENCY: &[usize] = &[1, 10, 20, 50];
/// A quick pass's clients at once.
const QUICK_CONCURRENCY: &[usize] = &[1, 4];
/// Idle sandboxes held to weigh one.
const HELD: usize = 20;

struct Plan {
    concurrency: &'static [usize],
    /// Sandboxes per concurrency level (at least one per client).
    per_level: usize,
    held: usize,
}

pub fn run(args: BenchArgs) -> anyhow::Result<ExitCode> {
    let plan = if args.quick {
        Plan {
            concurrency: QUICK_CONCURRENCY,
            per_level: 4,
            held: 2,
        }
    } else {
        Plan {
            concurrency: CONCURRENCY,
            per_level: 200,
            held: HELD,
        }
    };
    let base = DataArgs {
        data: None,
        config: args.config.clone(),
    }
    .load()?;
    let levels = match args.isolation {
        Some(one) => vec![one],
        None => vec![Isolation::Wasm, Isolation::Jail, Isolation::Kvm],
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let mut rows = Vec::new();
    for isolation in levels {
        if !args.json {
            eprintln!("ephemeral bench: {} …", isolation.timeline_name());
        }
        let row = runtime.block_on(measure(&base, isolation, &plan));
        if !args.json {
            print_row(&row);
        }
        rows.push(row);
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({"isolations": rows}))?
        );
    }
    let served = rows.iter().filter(|r| r["offered"] == true).count();
    Ok(if served > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// One isolation's row: its figures, or why this host does not offer it.
async fn measure(base: &Config, isolation: Isolation, plan: &Plan) -> Value {
    let name = isolation.timeline_name();
    match measure_served(base, isolation, plan).await {
        Ok(mut row) => {
            row["isolation"] = json!(name);
            row["offered"] = json!(true);
            row
        }
        Err(e) => json!({"isolation": name, "offered": false, "why_not": format!("{e:#}")}),
    }
}

async fn measure_served(base: &Config, isolation: Isolation, plan: &Plan) -> anyhow::Result<Value> {
    let data = tempfile::tempdir().context("cannot make a temporary folder")?;
    let mut config = base.clone();
    config.listen = "127.0.0.1:0".parse()?;
    config.data_dir = data.path().to_path_buf();
    config.database_url = None;
    config.isolation = Some(isolation);
    config.limits = LimitsConfig {
        runs_per_minute: 1_000_000,
        concurrent_runs: 100_000,
        ..config.limits.clone()
    };
    let server = Server::start(config).await?;
    let key = new_member_key();
    let edge = server.edge();
    let org = Org {
        id: String::new(),
        name: String::new(),
        balance_micros: i64::MAX / 4,
        held_micros: 0,
        per_run_cap_micros: 1_000_000,
        zero_data_retention: false,
    };
    edge.store
        .create_key("bench", &key_hash(&key), &org)
        .await?;
    let client = Client {
        base: format!("http://{}", server.local_addr()),
        key,
        http: reqwest::Client::new(),
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(async move {
        let _ = stopped.await;
    }));
    // A server has its pool full long before its first sandbox.
    client.round().await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mut levels = Vec::new();
    for &clients in plan.concurrency {
        levels.push(client.level(clients, plan.per_level.max(clients)).await?);
    }
    let idle_kib = client.idle_cost(plan.held).await?;
    let _ = stop.send(());
    let _ = serving.await;
    Ok(json!({
        "levels": levels,
        "idle_sandbox_kib": idle_kib,
        "idle_sandboxes_per_gib": (1u64 << 20) / idle_kib.max(1),
    }))
}

struct Client {
    base: String,
    key: String,
    http: reqwest::Client,
}

impl Client {
    /// Create, `echo hi`, delete: the time to the first output.
    async fn round(&self) -> anyhow::Result<Duration> {
        let started = Instant::now();
        let id = self.create().await?;
        let out = self.echo(&id).await;
        let first_output = started.elapsed();
        self.delete(&id).await?;
        let out = out?;
        if out["stdout"] != "hi\n" || out["exit_code"] != 0 {
            bail!("`echo hi` answered {out}");
        }
        Ok(first_output)
    }

    /// `total` rounds by `clients` clients at once.
    async fn level(self: &Client, clients: usize, total: usize) -> anyhow::Result<Value> {
        let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..clients {
            let next = next.clone();
            let me = Client {
                base: self.base.clone(),
                key: self.key.clone(),
                http: self.http.clone(),
            };
            tasks.spawn(async move {
                let mut times = Vec::new();
                while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < total {
                    times.push(me.round().await?);
                }
                anyhow::Ok(times)
            });
        }
        let mut times = Vec::with_capacity(total);
        while let Some(done) = tasks.join_next().await {
            times.extend(done??);
        }
        let wall = started.elapsed();
        times.sort();
        let ms = |q: f64| {
            let at = ((times.len() as f64 - 1.0) * q).round() as usize;
            times.get(at).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
        };
        Ok(json!({
            "clients": clients,
            "sandboxes": times.len(),
            "first_output_ms": {"p50": round2(ms(0.50)), "p95": round2(ms(0.95)), "p99": round2(ms(0.99))},
            "sandboxes_per_second": round2(times.len() as f64 / wall.as_secs_f64()),
        }))
    }

    /// Proportional memory one idle sandbox costs, in KiB.
    async fn idle_cost(&self, held: usize) -> anyhow::Result<u64> {
        let before = memory::pss_of_tree();
        let mut ids = Vec::with_capacity(held);
        for _ in 0..held {
            let id = self.create().await?;
            self.echo(&id).await?;
            ids.push(id);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let after = memory::pss_of_tree();
        for id in &ids {
            self.delete(id).await?;
        }
        Ok(after.saturating_sub(before) / held.max(1) as u64)
    }

    async fn create(&self) -> anyhow::Result<String> {
        let response = self
            .http
            .post(format!("{}/v1/sandboxes", self.base))
            .bearer_auth(&self.key)
            .json(&json!({"max_cost_micros": 100_000}))
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        if status.as_u16() != 201 {
            bail!("POST /v1/sandboxes answered {status}: {body}");
        }
        body["id"]
            .as_str()
            .map(str::to_string)
            .context("a sandbox without an id")
    }

    async fn echo(&self, id: &str) -> anyhow::Result<Value> {
        let response = self
            .http
            .post(format!("{}/v1/sandboxes/{id}/commands", self.base))
            .bearer_auth(&self.key)
            .json(&json!({"command": "echo hi"}))
            .send()
            .await?;
        let status = response.status();
        let body: Value = response.json().await?;
        if !status.is_success() {
            bail!("a command answered {status}: {body}");
        }
        Ok(body)
    }

    async fn delete(&self, id: &str) -> anyhow::Result<()> {
        let response = self
            .http
            .delete(format!("{}/v1/sandboxes/{id}", self.base))
            .bearer_auth(&self.key)
            .send()
            .await?;
        if !response.status().is_success() {
            bail!("DELETE answered {}", response.status());
        }
        Ok(())
    }
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn print_row(row: &Value) {
    let name = row["isolation"].as_str().unwrap_or("?");
    if row["offered"] != true {
        println!(
            "{name:<10} not offered here: {}",
            row["why_not"].as_str().unwrap_or("")
        );
        return;
    }
    println!(
        "{name:<10} {:>7} {:>9} {:>9} {:>9} {:>12}",
        "clients", "p50 ms", "p95 ms", "p99 ms", "sandboxes/s"
    );
    // JSON values ignore width and alignment: pad their text instead.
    let cell = |v: &Value| v.to_string();
    for level in row["levels"].as_array().into_iter().flatten() {
        let f = &level["first_output_ms"];
        println!(
            "{:<10} {:>7} {:>9} {:>9} {:>9} {:>12}",
            "",
            cell(&level["clients"]),
            cell(&f["p50"]),
            cell(&f["p95"]),
            cell(&f["p99"]),
            cell(&level["sandboxes_per_second"])
        );
    }
    println!(
        "{:<10} idle sandbox: {} KiB → {} in 1 GiB",
        "", row["idle_sandbox_kib"], row["idle_sandboxes_per_gib"]
    );
}

/// Proportional memory (PSS) of this process and the processes it started.
pub mod memory {
    /// PSS in KiB of this process and its descendants.
    pub fn pss_of_tree() -> u64 {
        let me = std::process::id();
        let mut total = pss(me);
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let pid = entry
                .file_name()
                .to_str()
                .and_then(|p| p.parse::<u32>().ok());
            if let Some(pid) = pid.filter(|&p| p != me && descends_from(p, me)) {
                total += pss(pid);
            }
        }
        total
    }

    fn pss(pid: u32) -> u64 {
        let text = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).unwrap_or_default();
        text.lines()
            .find(|l| l.starts_with("Pss:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    fn descends_from(mut pid: u32, ancestor: u32) -> bool {
        for _ in 0..8 {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // The parent is the 4th field, after a `(comm)` that may hold spaces.
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            match parent {
                Some(p) if p == ancestor => return true,
                Some(p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    }
}

//! Following a run from the command line: post it with
//! `Accept: text/event-stream`, print each event in the lanes of SEED.md
//! as it arrives, and resume with `Last-Event-ID` if the stream breaks.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, bail};
use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::Value;

use crate::timeline::EventKind;

/// Reconnects after a broken stream before giving up.
const MAX_RESUMES: u32 = 5;

pub struct Follow {
    pub base: String,
    pub key: String,
    /// JSON lines instead of the lanes.
    pub json: bool,
    pub connect_timeout: Duration,
}

/// A run followed to its end.
pub struct Followed {
    pub run_id: String,
    pub succeeded: bool,
    /// Files sent on the live stream (`file.content`, zero data
    /// retention): `(path, bytes)`, each checked against its sha256.
    pub live_files: Vec<(String, Vec<u8>)>,
}

/// Posts `body` and follows the run to its end.
pub async fn follow_run(follow: &Follow, body: String) -> anyhow::Result<Followed> {
    let client = reqwest::Client::builder()
        .connect_timeout(follow.connect_timeout)
        .build()?;
    let idempotency_key = format!("cli-{}", crate::ids::new_run_id());
    let response = client
        .post(format!("{}/v1/runs", follow.base))
        .bearer_auth(&follow.key)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("idempotency-key", &idempotency_key)
        .body(body)
        .send()
        .await
        .with_context(|| format!("cannot reach {}", follow.base))?;
    if response.status().as_u16() != 201 {
        bail!("{}", problem_line(response).await);
    }
    let run_id = response
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .and_then(|l| l.rsplit('/').next())
        .unwrap_or_default()
        .to_string();
    let mut view = View {
        json: follow.json,
        partial: Default::default(),
        spinner: spinner(follow.json),
        outcome: None,
        last: 0,
        live_files: Vec::new(),
        vm: Vm::default(),
    };
    if follow.json {
        // stdout is the events alone; the id is on stderr for scripts.
        eprintln!("run {run_id}");
    } else {
        out(&format!("run {run_id}"));
    }
    view.read(response).await;
    let mut resumes = 0;
    while !view.finished() {
        resumes += 1;
        if resumes > MAX_RESUMES {
            bail!(
                "the timeline stream of {run_id} broke {MAX_RESUMES} times; see GET /v1/runs/{run_id}"
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let response = client
            .get(format!("{}/v1/runs/{run_id}/events", follow.base))
            .bearer_auth(&follow.key)
            .header("last-event-id", view.last.to_string())
            .send()
            .await;
        match response {
            Ok(r) if r.status().is_success() => view.read(r).await,
            Ok(r) => bail!("{}", problem_line(r).await),
            Err(_) => continue,
        }
    }
    Ok(Followed {
        succeeded: view.outcome == Some(EventKind::RunSucceeded),
        run_id,
        live_files: view.live_files,
    })
}

async fn problem_line(response: reqwest::Response) -> String {
    let status = response.status();
    let body: Value = response.json().await.unwrap_or(Value::Null);
    match body.get("detail").and_then(Value::as_str) {
        Some(detail) => format!(
            "{} ({}): {detail}",
            body["title"].as_str().unwrap_or("error"),
            status.as_u16()
        ),
        None => format!("the server answered {status}"),
    }
}

struct View {
    json: bool,
    /// On stderr, only when it is a terminal: what the run is waiting on.
    spinner: indicatif::ProgressBar,
    partial: [String; 2],
    /// The run's outcome event, once seen.
    outcome: Option<EventKind>,
    last: i64,
    live_files: Vec<(String, Vec<u8>)>,
    /// The sandbox's lane: "MicroVM" for a microVM (as on the seed page),
    /// "Sandbox" for any other isolation, named on `vm.ready`.
    vm: Vm,
}

/// How the sandbox's lane and lines are named.
#[derive(Clone, Copy, Default)]
struct Vm {
    micro: bool,
}

impl Vm {
    fn of(isolation: &str) -> Vm {
        Vm {
            micro: isolation.starts_with("kvm"),
        }
    }

    fn lane(self) -> &'static str {
        if self.micro { "MicroVM" } else { "Sandbox" }
    }

    fn noun(self) -> &'static str {
        if self.micro { "microVM" } else { "sandbox" }
    }
}

impl View {
    async fn read(&mut self, response: reqwest::Response) {
        let mut events = response.bytes_stream().eventsource();
        while let Some(Ok(event)) = events.next().await {
            if event.data.is_empty() {
                continue;
            }
            if let Ok(id) = event.id.parse::<i64>() {
                if id <= self.last {
                    continue;
                }
                self.last = id;
            }
            let data: Value = serde_json::from_str(&event.data).unwrap_or(Value::Null);
            // A newer server's event this one does not know is shown as is.
            let kind = EventKind::parse(&event.event);
            if kind.is_some_and(EventKind::is_outcome) {
                self.outcome = kind;
            }
            if kind == Some(EventKind::VmReady) {
                self.vm = Vm::of(data["isolation"].as_str().unwrap_or(""));
            }
            if kind == Some(EventKind::FileContent)
                && let Some(file) = live_file(&data)
            {
                self.live_files.push(file);
            }
            if self.json {
                out(
                    &serde_json::json!({"id": self.last, "type": event.event, "data": data})
                        .to_string(),
                );
            } else {
                let (partial, vm) = (&mut self.partial, self.vm);
                self.spinner
                    .suspend(|| print_event(&event.event, kind, &data, partial, vm));
                self.spinner.set_message(waiting_for(kind, &data));
            }
            let _ = std::io::stdout().flush();
            if kind.is_some_and(EventKind::is_last) {
                self.spinner.finish_and_clear();
                self.outcome.get_or_insert(EventKind::RunFailed);
                return;
            }
        }
    }

    fn finished(&self) -> bool {
        self.outcome.is_some()
    }
}

fn spinner(json: bool) -> indicatif::ProgressBar {
    if json {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    bar
}

/// The spinner's text after `kind`: what comes next.
fn waiting_for(kind: Option<EventKind>, d: &Value) -> String {
    match kind {
        Some(EventKind::ShellCommand) => {
            let command: String = d["command"]
                .as_str()
                .unwrap_or("")
                .chars()
                .take(60)
                .collect();
            format!("running $ {command}")
        }
        Some(EventKind::WorkerStarted | EventKind::ShellExit | EventKind::WebResponse) => {
            "waiting for the model".into()
        }
        Some(EventKind::ModelCall) => "running the model's tool calls".into(),
        _ => "working".into(),
    }
}

/// Micros as dollars, as the page shows them: `$0.04`, `$0.00353`.
pub fn dollars(micros: i64) -> String {
    let sign = if micros < 0 { "-" } else { "" };
    let m = micros.unsigned_abs();
    let text = format!("{}.{:06}", m / 1_000_000, m % 1_000_000);
    let text = text.trim_end_matches('0');
    let text = if text.ends_with('.') {
        format!("{text}00")
    } else {
        text.to_string()
    };
    let text = match text.split_once('.') {
        Some((whole, frac)) if frac.len() == 1 => format!("{whole}.{frac}0"),
        _ => text,
    };
    format!("{sign}${text}")
}

/// Prints the complete lines of each stream's pending output (all of it
/// when `all`), stdout marked `|` and stderr `!`.
fn flush_lines(partial: &mut [String; 2], all: bool) {
    for (i, marker) in ["|", "!"].into_iter().enumerate() {
        let pending = &mut partial[i];
        let complete = if all {
            pending.len()
        } else {
            pending.rfind('\n').map_or(0, |i| i + 1)
        };
        let text: String = pending.drain(..complete).collect();
        for line in text.lines() {
            out(&format!("{marker:>28} {line}"));
        }
    }
}

/// One line on stdout; a closed stdout (`| head`) is not an error.
/// Everything here may come from a sandbox, so control characters are
/// shown, never sent to the operator's terminal (finding G8: OSC 52 sets
/// the clipboard, OSC 0 the window title).
fn out(line: &str) {
    let _ = writeln!(std::io::stdout().lock(), "{}", visible(line));
}

/// `line` with its control characters in caret notation (`^[` for ESC, as
/// `cat -v`), C1 controls as `\u{9b}`; tabs stay.
fn visible(line: &str) -> std::borrow::Cow<'_, str> {
    if !line.chars().any(|c| c.is_control() && c != '\t') {
        return line.into();
    }
    let mut shown = String::with_capacity(line.len() + 8);
    for c in line.chars() {
        match c {
            '\t' => shown.push(c),
            '\x7f' => shown.push_str("^?"),
            c if (c as u32) < 0x20 => {
                shown.push('^');
                shown.push(char::from(b'@' + c as u8));
            }
            c if c.is_control() => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => shown.push(c),
        }
    }
    shown.into()
}

/// `partial` holds shell output not yet printed: lines are printed whole,
/// however the chunks were cut.
/// A `file.content` event's file, if its bytes match its sha256.
fn live_file(d: &Value) -> Option<(String, Vec<u8>)> {
    use base64::Engine;
    use sha2::Digest;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(d["content_base64"].as_str()?)
        .ok()?;
    let sha256 = hex::encode(sha2::Sha256::digest(&bytes));
    (Some(sha256.as_str()) == d["sha256"].as_str())
        .then(|| (d["path"].as_str().unwrap_or("").to_string(), bytes))
}

fn print_event(name: &str, kind: Option<EventKind>, d: &Value, partial: &mut [String; 2], vm: Vm) {
    if kind == Some(EventKind::ShellExit) {
        flush_lines(partial, true);
    }
    let t = d["t_ms"].as_i64().unwrap_or(0);
    let at = format!("{:>4}.{:03}s", t / 1000, t % 1000);
    let lane = |lane: &str, text: String| out(&format!("{at}  {lane:<14} {text}"));
    match kind {
        Some(EventKind::BudgetReserved) => lane(
            "Waiting",
            format!(
                "reserve budget {}",
                dollars(d["reserved_micros"].as_i64().unwrap_or(0))
            ),
        ),
        Some(EventKind::VmReady) => lane(
            vm.lane(),
            format!(
                "{} ready · isolation {} · {} ms",
                vm.noun(),
                d["isolation"].as_str().unwrap_or("?"),
                d["ready_ms"]
            ),
        ),
        Some(EventKind::WorkerStarted) => lane(
            vm.lane(),
            format!(
                "worker started · shell {} · web {}",
                on_off(&d["shell"]),
                on_off(&d["web"])
            ),
        ),
        Some(EventKind::ModelCall) => lane(
            "Model",
            format!(
                "call {} · {} in / {} out tokens · {} · {} ms",
                d["n"],
                d["input_tokens"],
                d["output_tokens"],
                dollars(d["cost_micros"].as_i64().unwrap_or(0)),
                d["duration_ms"]
            ),
        ),
        Some(EventKind::ShellCommand) => lane(
            "Shell",
            format!("$ {}", d["command"].as_str().unwrap_or("")),
        ),
        Some(EventKind::ShellOutput) => {
            let i = usize::from(d["stream"] == "stderr");
            partial[i].push_str(d["data"].as_str().unwrap_or(""));
            flush_lines(partial, false);
        }
        Some(EventKind::ShellExit) => {
            let code = d["exit_code"].as_i64().unwrap_or(-1);
            if code != 0 || d["truncated"] == Value::Bool(true) {
                let limit = d["limit"]
                    .as_str()
                    .map(|l| format!(" · limit {l}"))
                    .unwrap_or_default();
                out(&format!("{:28}(exit {code}{limit})", ""));
            }
        }
        Some(EventKind::WebRequest | EventKind::WebResponse) => lane(
            "Web",
            format!("{} {}", d["url"].as_str().unwrap_or(""), d["status"]),
        ),
        Some(EventKind::FilesCollected) => {
            let files = d["files"].as_array().map_or(0, Vec::len);
            let bytes: i64 = d["files"]
                .as_array()
                .map_or(0, |f| f.iter().filter_map(|f| f["size"].as_i64()).sum());
            lane(
                "Files",
                format!("collected {files} files · {} bytes", thousands(bytes)),
            );
            for skipped in d["skipped"].as_array().into_iter().flatten() {
                out(&format!(
                    "{:28}skipped {} ({})",
                    "",
                    skipped["path"].as_str().unwrap_or("?"),
                    skipped["reason"].as_str().unwrap_or("?")
                ));
            }
        }
        Some(EventKind::FileContent | EventKind::FileWritten) => lane(
            "Files",
            format!(
                "{} · {} bytes",
                d["path"].as_str().unwrap_or("?"),
                thousands(d["size"].as_i64().unwrap_or(0))
            ),
        ),
        Some(EventKind::SandboxEnded) => {
            lane("Ended", d["end_reason"].as_str().unwrap_or("?").to_string())
        }
        Some(EventKind::VmDestroyed) => lane(
            vm.lane(),
            format!("{} destroyed after {} ms", vm.noun(), d["lifetime_ms"]),
        ),
        Some(EventKind::WorkerDestroyed) => {
            let micros = |v: &Value| dollars(v.as_i64().unwrap_or(0));
            lane(
                "Destroy worker",
                format!(
                    "charged {}, released {}",
                    micros(&d["charged_micros"]),
                    micros(&d["released_micros"])
                ),
            );
            let c = &d["cost"];
            out(&format!(
                "{:28}cost: model {} · web {} · compute {}",
                "",
                micros(&c["model"]),
                micros(&c["web"]),
                micros(&c["compute"])
            ));
        }
        Some(k) if k.is_outcome() => {
            let status = match k {
                EventKind::RunSucceeded => "Success",
                EventKind::RunTimedOut => "Timed out",
                EventKind::RunBudgetExceeded => "Budget exceeded",
                EventKind::RunCancelled => "Cancelled",
                _ => "Failed",
            };
            lane(
                status,
                format!(
                    "{} model calls, {} tokens",
                    d["model_calls"],
                    thousands(d["total_tokens"].as_i64().unwrap_or(0))
                ),
            );
            if let Some(error) = d.get("error").filter(|e| !e.is_null()) {
                out(&format!(
                    "{:28}error {}: {}",
                    "",
                    error["code"].as_str().unwrap_or(""),
                    error["message"].as_str().unwrap_or("")
                ));
            }
            for line in d["output"].as_str().unwrap_or("").lines() {
                out(&format!("{:28}{line}", ""));
            }
        }
        _ => lane("Event", format!("{name} {d}")),
    }
}

/// `5214` as `5,214`.
fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn on_off(v: &Value) -> &'static str {
    if v.as_bool() == Some(true) {
        "on"
    } else {
        "off"
    }
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn terminal_escapes_are_shown_not_sent() {
        let hostile = "visible\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\x1b[31mred\u{9b}1m\tend\x7f";
        let shown = visible(hostile);
        assert!(
            !shown.chars().any(|c| c.is_control() && c != '\t'),
            "{shown}"
        );
        assert_eq!(
            shown,
            "visible^[]52;c;cm0gLXJmIH4=^G^[[2J^[[31mred\\u{9b}1m\tend^?"
        );
        assert_eq!(visible("plain line"), "plain line");
    }

    #[test]
    fn dollars_read_like_the_page() {
        assert_eq!(super::dollars(40_000), "$0.04");
        assert_eq!(super::dollars(3_530), "$0.00353");
        assert_eq!(super::dollars(0), "$0.00");
        assert_eq!(super::dollars(1_500_000), "$1.50");
        assert_eq!(super::thousands(5_214), "5,214");
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_000_000), "1,000,000");
    }
}

//! `GET /v1/runtime`: what a sandbox of this server offers, so an agent
//! (or its author) knows before the first command that numpy is there and
//! the network is not.
//!
//! Built once per process: the programs' versions come from running them
//! (`python3 -V`, `node --version`) in a probe sandbox, the scientific
//! python's packages from its build's MANIFEST.

use std::sync::Arc;

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::auth::organisation;
use super::problem::Problem;
use crate::state::Edge;
use ephemeral_runtime::{Limits, Runtime};

pub async fn get(State(edge): State<Arc<Edge>>, headers: HeaderMap) -> Response {
    if let Err(problem) = organisation(&edge, &headers).await {
        return problem.into_response();
    }
    let runtime = edge.runtime.clone();
    let described = edge
        .runtime_description
        .get_or_try_init(|| async move {
            tokio::task::spawn_blocking(move || describe(&runtime))
                .await
                .map_err(|e| e.to_string())
        })
        .await;
    match described {
        Ok(programs) => {
            let mut body = programs.clone();
            let isolation = edge.isolation().timeline_name();
            body["isolation"] = json!(isolation);
            // One a node: every sandbox of this server has it.
            body["isolations"] = json!([isolation]);
            axum::Json(body).into_response()
        }
        Err(e) => Problem::internal(&e).into_response(),
    }
}

/// Everything but the isolation (which is the server's, not the runtime's).
fn describe(runtime: &Arc<Runtime>) -> Value {
    let limits = Limits::default();
    let programs = runtime.program_names();
    let has = |name: &str| programs.iter().any(|p| p == name);
    let python = has("python3").then(|| python(runtime, has("python3-sci")));
    let node = has("node").then(
        || json!({ "version": version_of(runtime, "node --version").trim_start_matches('v') }),
    );
    json!({
        "network": false,
        "user": ephemeral_runtime::USER,
        "limits": {
            "command_timeout_seconds": limits.command_timeout.as_secs(),
            "memory_bytes": limits.memory_bytes,
            "output_bytes": limits.output_bytes,
            "disk_bytes": limits.disk_bytes,
            "disk_files": limits.disk_files,
        },
        "shell": { "utilities": runtime.utilities(), "programs": programs },
        "python": python,
        "node": node,
    })
}

fn python(runtime: &Arc<Runtime>, scientific: bool) -> Value {
    let version = version_of(runtime, "python3 -V");
    let mut python = json!({
        "version": version.trim_start_matches("Python ").trim(),
        "pip": "offline: installs pure-Python wheel files brought with the request",
        "packages": [],
    });
    if scientific {
        let manifest = runtime.program_manifest("python3-sci").unwrap_or_default();
        let (sci_version, packages) = parse_manifest(&manifest);
        python["scientific"] = json!({
            "program": "python3-sci",
            "version": sci_version,
            "used_when": "python3 hands a command line whose code imports one of `packages` to python3-sci",
        });
        python["packages"] = json!(packages);
    }
    python
}

/// (python's version, [{name, version}]) from the MANIFEST's
/// `python V` and `package NAME V` lines.
fn parse_manifest(text: &str) -> (Option<String>, Vec<Value>) {
    let mut version = None;
    let mut packages = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("python"), Some(v), None) => version = Some(v.to_owned()),
            (Some("package"), Some(name), Some(v)) => {
                packages.push(json!({ "name": name, "version": v }));
            }
            _ => {}
        }
    }
    (version, packages)
}

/// What `command` prints in a fresh sandbox (first line), or "" if it fails.
fn version_of(runtime: &Arc<Runtime>, command: &str) -> String {
    let Ok(mut sandbox) = runtime.sandbox().build() else {
        return String::new();
    };
    match sandbox.exec_captured(command) {
        Ok(out) if out.outcome.exit_code == 0 => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_manifest_gives_the_version_and_the_packages() {
        let (version, packages) =
            parse_manifest("python 3.15.0\npackage numpy 2.5.2\npackage pandas 3.0.6\nnoise\n");
        assert_eq!(version.as_deref(), Some("3.15.0"));
        assert_eq!(
            packages,
            vec![
                json!({"name": "numpy", "version": "2.5.2"}),
                json!({"name": "pandas", "version": "3.0.6"})
            ]
        );
    }
}

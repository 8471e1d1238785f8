//! Calls to an organisation's connections: the run's model asks for a
//! method and a path; the broker checks them against the connection's
//! allow-list, attaches the credential (read from the server's
//! environment) and makes the call. Refusals and calls are on the
//! timeline (`web.request`/`web.response` with the connection's name);
//! the credential never is.

use std::time::Duration;

use serde_json::json;

use super::{Broker, HttpResult, respond};
use crate::agent::transcript::ToolOutput;
use crate::config::ConnectionConfig;
use crate::executor::RunContext;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BYTES: usize = 1 << 20;

/// What the model asked a connection for.
pub struct ConnectionCall<'a> {
    pub name: &'a str,
    pub method: &'a str,
    pub path: &'a str,
    pub body: Option<&'a str>,
}

impl Broker {
    pub async fn call_connection(
        &self,
        run: &RunContext,
        call_id: &str,
        conn: &ConnectionConfig,
        call: ConnectionCall<'_>,
    ) -> ToolOutput {
        let method = call.method.to_ascii_uppercase();
        run.events
            .emit("web.request", json!({"call_id": call_id, "connection": call.name, "method": method, "url": call.path}))
            .await;
        let result = match allowed(conn, &method, call.path) {
            Ok(()) => self.send(conn, &method, call.path, call.body).await,
            Err(reason) => Err(reason),
        };
        run.meter.web(self.web_price_micros());
        let event = json!({"call_id": call_id, "connection": call.name, "url": call.path});
        respond(run, event, result).await
    }

    async fn send(
        &self,
        conn: &ConnectionConfig,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> HttpResult {
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| format!("{method} is not an HTTP method"))?;
        let url = format!("{}{path}", conn.base_url.trim_end_matches('/'));
        let mut request = self.http.request(method, &url).timeout(TIMEOUT);
        if let Some(var) = &conn.credential_env {
            let credential = std::env::var(var).map_err(|_| {
                "the connection's credential is not configured on the server".to_string()
            })?;
            let value = if conn.auth_header.eq_ignore_ascii_case("authorization") {
                format!("Bearer {credential}")
            } else {
                credential
            };
            request = request.header(conn.auth_header.as_str(), value);
        }
        if let Some(body) = body {
            request = request
                .header("content-type", "application/json")
                .body(body.to_string());
        }
        let response = request
            .send()
            .await
            .map_err(|_| "the connection could not be reached".to_string())?;
        let status = response.status().as_u16();
        let bytes = response
            .bytes()
            .await
            .map_err(|_| "the connection's answer broke off".to_string())?;
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_BYTES)]).into_owned();
        Ok((status, text))
    }
}

/// Whether the connection's allow-list lets `method` `path` through.
pub fn allowed(conn: &ConnectionConfig, method: &str, path: &str) -> Result<(), String> {
    if !conn.methods.iter().any(|m| m.eq_ignore_ascii_case(method)) {
        return Err(format!(
            "refused: {method} is not allowed on this connection (allowed: {})",
            conn.methods.join(", ")
        ));
    }
    let bare = path.split(['?', '#']).next().unwrap_or("");
    let lower = bare.to_ascii_lowercase();
    if !bare.starts_with('/')
        || bare.contains("//")
        || bare.contains('\\')
        || lower.contains("%2e")
        || lower.contains("%2f")
        || bare.split('/').any(|s| s == ".." || s == ".")
    {
        return Err(format!("refused: {path} is not a plain absolute path"));
    }
    if conn.paths.iter().any(|pattern| path_matches(pattern, bare)) {
        Ok(())
    } else {
        Err(format!(
            "refused: {path} is outside the connection's allowed paths"
        ))
    }
}

/// `*` matches one non-empty segment; a final `**` matches the rest.
fn path_matches(pattern: &str, path: &str) -> bool {
    let pat: Vec<&str> = pattern.trim_start_matches('/').split('/').collect();
    let got: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    for (i, p) in pat.iter().enumerate() {
        if *p == "**" && i == pat.len() - 1 {
            return got.len() > i;
        }
        match got.get(i) {
            Some(g) if *p == "*" && !g.is_empty() => {}
            Some(g) if p == g => {}
            _ => return false,
        }
    }
    pat.len() == got.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn github() -> ConnectionConfig {
        ConnectionConfig {
            orgs: vec!["acme".into()],
            base_url: "https://api.github.com".into(),
            credential_env: Some("GITHUB_TOKEN".into()),
            auth_header: "Authorization".into(),
            methods: vec!["GET".into()],
            paths: vec![
                "/repos/*/*/issues".into(),
                "/user".into(),
                "/gists/**".into(),
            ],
        }
    }

    #[test]
    fn only_listed_methods_and_paths_pass() {
        let c = github();
        assert!(allowed(&c, "GET", "/repos/acme/app/issues").is_ok());
        assert!(allowed(&c, "GET", "/repos/acme/app/issues?state=open").is_ok());
        assert!(allowed(&c, "GET", "/user").is_ok());
        assert!(allowed(&c, "GET", "/gists/abc/files").is_ok());
        for (method, path) in [
            ("POST", "/user"),
            ("DELETE", "/repos/acme/app/issues"),
            ("GET", "/repos/acme/app/pulls"),
            ("GET", "/repos/acme/issues"),
            ("GET", "/user/../admin"),
            ("GET", "/repos/acme/app/%2e%2e/issues"),
            ("GET", "//evil.example/user"),
            ("GET", "user"),
            ("GET", "/gists"),
        ] {
            assert!(allowed(&c, method, path).is_err(), "{method} {path}");
        }
    }
}

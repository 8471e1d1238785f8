//! Calls to an organisation's connections: the run's model asks for a
//! method and a path; the broker checks them against the connection's
//! allow-list, attaches the credential (read from the server's
//! environment) and makes the call. What comes back is scrubbed of every
//! secret before anyone sees it; the credential is never shown.

use std::time::Duration;

use reqwest::Url;

use super::{Broker, HttpResult};
use crate::config::ConnectionConfig;

const TIMEOUT: Duration = Duration::from_secs(30);
const MAX_BYTES: usize = 1 << 20;

/// What the model asked a connection for.
pub struct ConnectionCall<'a> {
    /// The connection's name in the configuration.
    pub name: &'a str,
    /// The HTTP method, in any case.
    pub method: &'a str,
    /// The path under the connection's `base_url`, checked against its `paths`.
    pub path: &'a str,
    /// The request body, if any.
    pub body: Option<&'a str>,
}

impl Broker {
    /// Makes the call if the connection's allow-list lets it through; its
    /// answer (or why not), scrubbed.
    pub async fn call_connection(
        &self,
        conn: &ConnectionConfig,
        call: &ConnectionCall<'_>,
    ) -> HttpResult {
        let method = call.method.to_ascii_uppercase();
        let result = match checked_url(conn, &method, call.path) {
            Ok(url) => self.send(conn, &method, url, call.body).await,
            Err(reason) => Err(reason),
        };
        self.scrubbed(result)
    }

    /// Sends exactly the URL that was checked. A redirect is not
    /// followed: the 3xx and its `Location` go back to the model.
    async fn send(
        &self,
        conn: &ConnectionConfig,
        method: &str,
        url: Url,
        body: Option<&str>,
    ) -> HttpResult {
        let method = reqwest::Method::from_bytes(method.as_bytes())
            .map_err(|_| format!("{method} is not an HTTP method"))?;
        let mut request = self.connections.request(method, url).timeout(TIMEOUT);
        if let Some(var) = &conn.credential_env {
            let credential = self.secret(var).ok_or_else(|| {
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
        let status = response.status();
        let location = match response.headers().get(reqwest::header::LOCATION) {
            Some(v) if status.is_redirection() => {
                Some(String::from_utf8_lossy(v.as_bytes()).into_owned())
            }
            _ => None,
        };
        // Read a little past the cap, so a secret cut by it is still
        // whole when the scrubber looks, then cut.
        let bytes = read_capped(response, MAX_BYTES + self.scrubber.longest()).await?;
        let text = self.scrubber.scrub(&String::from_utf8_lossy(&bytes));
        let mut text = cut(text, MAX_BYTES);
        if let Some(location) = location {
            text = format!("(redirect not followed; Location: {location})\n{text}");
        }
        Ok((status.as_u16(), text))
    }
}

async fn read_capped(response: reqwest::Response, cap: usize) -> Result<Vec<u8>, String> {
    use futures_util::StreamExt;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|_| "the connection's answer broke off".to_string())?;
        let room = cap - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= cap {
            break;
        }
    }
    Ok(body)
}

/// `text` cut to at most `max` bytes, at a character boundary.
fn cut(mut text: String, max: usize) -> String {
    if text.len() > max {
        let end = (0..=max)
            .rev()
            .find(|&i| text.is_char_boundary(i))
            .unwrap_or(0);
        text.truncate(end);
    }
    text
}

/// Whether the connection's allow-list lets `method` `path` through.
pub fn allowed(conn: &ConnectionConfig, method: &str, path: &str) -> Result<(), String> {
    checked_url(conn, method, path).map(|_| ())
}

/// The URL to call for `method` `path`, if the allow-list lets it through.
///
/// The checks are made on the URL as parsed (what is sent), not only on
/// the string the model gave: a URL parser drops TAB, CR and LF and
/// collapses dot segments, so `/gists/.\t./x` would be `/x`. The path
/// must have no control character at all, no dot segment, encoded dot or
/// slash, backslash or empty segment; the parsed URL must keep the base
/// URL's scheme, host and port, stay under its path, and what follows the
/// base path must match an allowed pattern.
pub fn checked_url(conn: &ConnectionConfig, method: &str, path: &str) -> Result<Url, String> {
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!("refused: {method:?} is not an HTTP method"));
    }
    if !conn.methods.iter().any(|m| m.eq_ignore_ascii_case(method)) {
        return Err(format!(
            "refused: {method} is not allowed on this connection (allowed: {})",
            conn.methods.join(", ")
        ));
    }
    if path.chars().any(char::is_control) {
        return Err(format!("refused: {path:?} contains a control character"));
    }
    let plain = |p: &str| {
        let lower = p.to_ascii_lowercase();
        p.starts_with('/')
            && !p.contains("//")
            && !p.contains('\\')
            && !lower.contains("%2e")
            && !lower.contains("%2f")
            && !lower.contains("%5c")
            && !p.split('/').any(|s| s == ".." || s == ".")
    };
    let bare = path.split(['?', '#']).next().unwrap_or("");
    if !plain(bare) {
        return Err(format!("refused: {path} is not a plain absolute path"));
    }
    let base = Url::parse(&conn.base_url)
        .map_err(|_| "the connection's base_url is not a URL".to_string())?;
    let url = Url::parse(&format!("{}{path}", conn.base_url.trim_end_matches('/')))
        .map_err(|_| format!("refused: {path} does not make a URL"))?;
    if url.origin() != base.origin() || url.username() != base.username() {
        return Err(format!("refused: {path} leaves the connection's host"));
    }
    let base_path = base.path().trim_end_matches('/');
    let rest = match url.path().strip_prefix(base_path) {
        Some(rest) if rest.starts_with('/') => rest,
        _ => {
            return Err(format!(
                "refused: {path} is outside the connection's base path"
            ));
        }
    };
    if !plain(rest) {
        return Err(format!("refused: {path} is not a plain absolute path"));
    }
    if conn.paths.iter().any(|pattern| path_matches(pattern, rest)) {
        Ok(url)
    } else {
        Err(format!(
            "refused: {path} is outside the connection's allowed paths"
        ))
    }
}

/// `*` matches one non-empty segment; a final `**` matches the rest.
pub fn path_matches(pattern: &str, path: &str) -> bool {
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

    fn echo() -> ConnectionConfig {
        ConnectionConfig {
            orgs: vec!["acme".into()],
            base_url: "http://127.0.0.1:7200/api".into(),
            credential_env: None,
            auth_header: "Authorization".into(),
            methods: vec!["GET".into()],
            paths: vec![
                "/issues/*".into(),
                "/projects/*/issues".into(),
                "/gists/**".into(),
            ],
        }
    }

    #[test]
    fn control_characters_and_dot_tricks_are_refused() {
        let c = echo();
        for path in [
            "/gists/.\t./.\t./.\t./SECRET-ADMIN",
            "/gists/.\r./.\r./beta/x",
            "/gists/.\n./x",
            "/issues/.\t.",
            "/projects/.\t./issues",
            "/issues/1\u{7f}",
            "/issues/1\u{85}",
            "/issues/1?q=\n",
            "/gists/%2E%2e/x",
            "/gists/x%5c..%5cy",
            "/gists/x\\..\\y",
        ] {
            assert!(checked_url(&c, "GET", path).is_err(), "{path:?}");
        }
        for method in ["GET\t", "G\rET", "", "GET /x HTTP/1.1\r\n"] {
            assert!(checked_url(&c, method, "/issues/1").is_err(), "{method:?}");
        }
        let url = checked_url(&c, "GET", "/issues/1?state=open").unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:7200/api/issues/1?state=open"
        );
    }

    /// A bounded property test: whatever path is made of dots, slashes,
    /// control characters, encodings and names, if it is accepted then the
    /// URL sent is on the base host, under the base path, free of dot
    /// segments, and what follows the base path is on the allow-list.
    #[test]
    fn every_accepted_path_stays_under_the_base_path_and_on_the_list() {
        use rand::{Rng, SeedableRng};
        let c = echo();
        let tricks = [
            ".", "..", "\t", "\r", "\n", "%2e", "%2E", "%2f", "\\", "?", "#", "@", ":", "%", " ",
            "\u{0}", ";", "/", "",
        ];
        let names = ["issues", "projects", "gists", "x", "1", "api", "beta"];
        let mut rng = rand::rngs::StdRng::seed_from_u64(19);
        let mut accepted = 0;
        for _ in 0..200_000 {
            let segments = rng.random_range(1..6);
            let mut path = String::new();
            for _ in 0..segments {
                path.push('/');
                for _ in 0..rng.random_range(1..3) {
                    if rng.random_bool(0.3) {
                        path.push_str(tricks[rng.random_range(0..tricks.len())]);
                    } else {
                        path.push_str(names[rng.random_range(0..names.len())]);
                    }
                }
            }
            let Ok(url) = checked_url(&c, "GET", &path) else {
                continue;
            };
            accepted += 1;
            assert_eq!(url.host_str(), Some("127.0.0.1"), "{path:?}");
            assert_eq!(url.port(), Some(7200), "{path:?}");
            let rest = url
                .path()
                .strip_prefix("/api/")
                .unwrap_or_else(|| panic!("{path:?} -> {url}"));
            assert!(
                !rest.split('/').any(|s| s == "." || s == ".."),
                "{path:?} -> {url}"
            );
            let rest = format!("/{rest}");
            assert!(
                c.paths.iter().any(|p| path_matches(p, &rest)),
                "{path:?} -> {url}"
            );
        }
        assert!(
            accepted > 100,
            "the generator reaches accepted paths ({accepted})"
        );
    }
}

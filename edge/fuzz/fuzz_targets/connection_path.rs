//! Any method and path a model may send to a connection: whatever the
//! broker accepts, the URL it would call keeps the base URL's origin,
//! stays under its path, has no dot segment, and what follows the base
//! path is on the allow-list (finding B2).
//!
//! cargo install cargo-fuzz
//! cd edge/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run connection_path -- -max_total_time=60

#![no_main]

use ephemeral_edge::broker::{checked_url, connection_path_matches};
use ephemeral_edge::config::ConnectionConfig;
use libfuzzer_sys::fuzz_target;

fn connection() -> ConnectionConfig {
    ConnectionConfig {
        orgs: vec!["acme".into()],
        base_url: "http://127.0.0.1:7200/api".into(),
        credential_env: None,
        auth_header: "Authorization".into(),
        methods: vec!["GET".into(), "POST".into()],
        paths: vec![
            "/issues/*".into(),
            "/projects/*/issues".into(),
            "/gists/**".into(),
        ],
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The first line is the method, the rest the path.
    let (method, path) = text.split_once('\n').unwrap_or(("GET", text));
    let conn = connection();
    let Ok(url) = checked_url(&conn, method, path) else {
        return;
    };
    assert_eq!(url.scheme(), "http", "{method:?} {path:?} -> {url}");
    assert_eq!(url.host_str(), Some("127.0.0.1"), "{method:?} {path:?} -> {url}");
    assert_eq!(url.port(), Some(7200), "{method:?} {path:?} -> {url}");
    assert!(url.username().is_empty() && url.password().is_none(), "{url}");
    let rest = url
        .path()
        .strip_prefix("/api/")
        .unwrap_or_else(|| panic!("{path:?} left the base path: {url}"));
    assert!(
        !rest.split('/').any(|s| s == "." || s == ".."),
        "{path:?} -> {url}"
    );
    let rest = format!("/{rest}");
    assert!(
        conn.paths.iter().any(|p| connection_path_matches(p, &rest)),
        "{path:?} -> {url} is not on the list"
    );
});

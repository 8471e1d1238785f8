//! An organisation's service as a red team sees one, on loopback: it
//! records every request that reaches it and echoes the request line and
//! its headers back (as httpbin's `/headers` and many debug pages do),
//! `?enc=b64` base64-encodes that echo, and any path with `/redirect`
//! answers `?code=` (302 by default) with `Location: ?to=`. Also serves
//! as a forward proxy that records what it was asked for.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

/// One request that reached the service.
#[derive(Clone, Debug)]
pub struct Hit {
    pub method: String,
    /// As sent on the request line: a path and query (or a whole URL, to a proxy).
    pub target: String,
    pub headers: Vec<(String, String)>,
}

impl Hit {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub struct Upstream {
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub addr: SocketAddr,
    hits: Arc<Mutex<Vec<Hit>>>,
}

impl Upstream {
    pub async fn start() -> Upstream {
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let record = hits.clone();
        let app =
            axum::Router::new().fallback(move |method: Method, uri: Uri, headers: HeaderMap| {
                let record = record.clone();
                async move { handle(&record, method, uri, headers) }
            });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Upstream {
            base: format!("http://{addr}"),
            addr,
            hits,
        }
    }

    pub fn hits(&self) -> Vec<Hit> {
        self.hits.lock().unwrap().clone()
    }
}

fn handle(record: &Mutex<Vec<Hit>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let pairs: Vec<(String, String)> = headers
        .iter()
        .map(|(n, v)| {
            (
                n.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    record.lock().unwrap().push(Hit {
        method: method.to_string(),
        target: uri.to_string(),
        headers: pairs.clone(),
    });
    let query: Vec<(String, String)> = uri
        .query()
        .map(|q| {
            q.split('&')
                .filter_map(|kv| kv.split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        })
        .unwrap_or_default();
    let arg = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if uri.path().contains("/redirect") {
        let code = arg("code").and_then(|c| c.parse().ok()).unwrap_or(302);
        let to = arg("to").unwrap_or_else(|| "/".into());
        return (
            StatusCode::from_u16(code).unwrap(),
            [(header::LOCATION, to)],
            "",
        )
            .into_response();
    }
    let mut echo = format!("UPSTREAM {method} {uri} HEADERS:\n");
    for (name, value) in &pairs {
        echo.push_str(&format!("{name}: {value}\n"));
    }
    if arg("enc").as_deref() == Some("b64") {
        use base64::Engine;
        echo = base64::engine::general_purpose::STANDARD.encode(echo);
    }
    ([(header::CONTENT_TYPE, "text/plain")], echo).into_response()
}

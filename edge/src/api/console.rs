//! The console: the pages a person opens (`/runs`, `/runs/{id}`,
//! `/playground`, `/samples/{id}`), one single-page app built from
//! `console/` and embedded in the binary (`console/dist`, checked in, so
//! no machine that builds the server needs node). Every page answer
//! carries a strict Content-Security-Policy: scripts and styles from this
//! origin only, no inline code, no frames; what a run produced is text.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::{Path, RawQuery};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

#[derive(rust_embed::Embed)]
#[folder = "../console/dist"]
#[allow_missing = true]
struct Assets;

/// The console's policy: this origin only, nothing inline, no framing.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; \
     frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/// Any page of the app: the same document, which routes on its path.
pub(crate) async fn page(asked: HeaderMap) -> Response {
    match Assets::get("index.html") {
        Some(file) => served(&asked, "index.html", file.data, Kind::Page),
        None => served(
            &asked,
            "index.html",
            Cow::Borrowed(MISSING.as_bytes()),
            Kind::Page,
        ),
    }
}

const MISSING: &str = "<!doctype html><title>Ephemeral</title><p>The console is not built into this binary (console/dist is missing).</p>";

/// `/assets/{file}`: the app's scripts, styles and images. The page names
/// them with a hash of their content (`?v=…`): such an address never
/// changes meaning, so browsers may keep it for good.
pub(crate) async fn asset(
    asked: HeaderMap,
    Path(file): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let path = format!("assets/{file}");
    match Assets::get(&path) {
        Some(found) => {
            let versioned = query.is_some_and(|q| q.starts_with("v="));
            let kind = if versioned {
                Kind::Immutable
            } else {
                Kind::Asset
            };
            served(&asked, &path, found.data, kind)
        }
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A page: the security policy, always revalidated.
    Page,
    /// An asset by its bare name: revalidated.
    Asset,
    /// An asset by its content's address: kept.
    Immutable,
}

/// `body` with its type, compressed where the browser takes gzip, and the
/// console's security headers. What is revalidated carries an ETag, so a
/// browser that has it gets `304 Not Modified`.
fn served(asked: &HeaderMap, path: &str, body: Cow<'static, [u8]>, kind: Kind) -> Response {
    let gzip = accepts_gzip(asked);
    let etag = format!(
        "\"{}{}\"",
        &blake3::hash(&body).to_hex()[..32],
        if gzip { "-gz" } else { "" }
    );
    let unchanged = asked
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else if gzip {
        compressed(path, &body).to_vec().into_response()
    } else {
        body.into_owned().into_response()
    };
    let content_type = if path.ends_with(".html") {
        "text/html; charset=utf-8".to_string()
    } else {
        mime_guess::from_path(path)
            .first_or_octet_stream()
            .essence_str()
            .to_string()
    };
    let h = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            h.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, &content_type);
    set(header::VARY, "Accept-Encoding");
    if gzip {
        set(header::CONTENT_ENCODING, "gzip");
    }
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::REFERRER_POLICY, "no-referrer");
    match kind {
        Kind::Immutable => set(header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
        Kind::Page | Kind::Asset => {
            set(header::CACHE_CONTROL, "no-cache");
            set(header::ETAG, &etag);
        }
    }
    if kind == Kind::Page {
        set(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
        set(header::X_FRAME_OPTIONS, "DENY");
    }
    response
}

fn accepts_gzip(asked: &HeaderMap) -> bool {
    asked
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let refused = parts.any(|p| p.replace(' ', "") == "q=0");
            name.eq_ignore_ascii_case("gzip") && !refused
        })
}

/// The gzip of an embedded file, made once per process.
fn compressed(path: &str, body: &[u8]) -> Arc<Vec<u8>> {
    static MADE: OnceLock<Mutex<HashMap<String, Arc<Vec<u8>>>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    let mut made = made.lock().unwrap_or_else(|p| p.into_inner());
    made.entry(path.to_string())
        .or_insert_with(|| {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
            // Writing to a Vec cannot fail.
            let _ = encoder.write_all(body);
            Arc::new(encoder.finish().unwrap_or_default())
        })
        .clone()
}

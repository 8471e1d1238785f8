//! The console: the pages a person opens (`/runs`, `/runs/{id}`,
//! `/playground`, `/samples/{id}`), one single-page app built from
//! `console/` and embedded in the binary (`console/dist`, checked in, so
//! no machine that builds the server needs node). Every page answer
//! carries a strict Content-Security-Policy: scripts and styles from this
//! origin only, no inline code, no frames; what a run produced is text.

use axum::extract::Path;
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
        Some(file) => secured(&asked, file.data.into_owned(), "text/html; charset=utf-8", true),
        None => secured(
            &asked,
            b"<!doctype html><title>Ephemeral</title><p>The console is not built into this binary (console/dist is missing).</p>".to_vec(),
            "text/html; charset=utf-8",
            true,
        ),
    }
}

/// `/assets/{file}`: the app's scripts, styles and images.
pub(crate) async fn asset(asked: HeaderMap, Path(file): Path<String>) -> Response {
    match Assets::get(&format!("assets/{file}")) {
        Some(found) => {
            let kind = mime_guess::from_path(&file).first_or_octet_stream();
            secured(&asked, found.data.into_owned(), kind.essence_str(), false)
        }
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

/// `body` with its type and the console's security headers. Pages are
/// always revalidated; assets too (their names are not hashed), which an
/// ETag keeps cheap: a browser that has them gets `304 Not Modified`.
fn secured(asked: &HeaderMap, body: Vec<u8>, content_type: &str, page: bool) -> Response {
    let etag = format!("\"{}\"", &blake3::hash(&body).to_hex()[..32]);
    let unchanged = asked
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|tag| tag.trim() == etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        body.into_response()
    };
    let h = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = HeaderValue::from_str(value) {
            h.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, content_type);
    set(header::CACHE_CONTROL, "no-cache");
    set(header::ETAG, &etag);
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::REFERRER_POLICY, "no-referrer");
    if page {
        set(header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY);
        set(header::X_FRAME_OPTIONS, "DENY");
    }
    response
}

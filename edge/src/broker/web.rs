//! `web_fetch`: GET a public URL for the model, outside the sandbox. Each
//! hop (the URL and every redirect) is resolved, every address checked
//! public, and the connection pinned to a checked address, so DNS cannot
//! swap in a private one between check and use. Size and time are capped;
//! the request and response are on the timeline and priced.

use std::net::SocketAddr;
use std::time::Duration;

use super::{Broker, HttpResult, html, ssrf};

const MAX_REDIRECTS: usize = 5;
const MAX_BYTES: usize = 1 << 20;
const TIMEOUT: Duration = Duration::from_secs(15);

impl Broker {
    /// GETs `url` (see the module docs); its answer or why not, scrubbed.
    pub async fn web_fetch(&self, url: &str) -> HttpResult {
        self.scrubbed(fetch(url).await)
    }
}

/// Follows up to `MAX_REDIRECTS` redirects, checking each hop.
async fn fetch(url: &str) -> HttpResult {
    fetch_checked(url, |url| Box::pin(checked_address(url))).await
}

type Check = for<'a> fn(
    &'a reqwest::Url,
) -> std::pin::Pin<
    Box<dyn Future<Output = Result<SocketAddr, String>> + Send + 'a>,
>;

/// `fetch` with the address check as a parameter, so a test can let its
/// own first hop through and see that redirects are checked again.
async fn fetch_checked(url: &str, check: Check) -> HttpResult {
    let mut url = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    for _ in 0..=MAX_REDIRECTS {
        let addr = check(&url).await?;
        let host = url.host_str().unwrap_or_default().to_string();
        let client = super::http_client()
            .redirect(reqwest::redirect::Policy::none())
            .resolve(&host, addr)
            .timeout(TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build a client: {e}"))?;
        let response = client
            .get(url.clone())
            .send()
            .await
            .map_err(|e| format!("fetch failed: {e}"))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            url = url
                .join(location)
                .map_err(|e| format!("bad redirect: {e}"))?;
            continue;
        }
        let is_html = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|t| t.contains("html"));
        let body = read_capped(response).await?;
        let text = if is_html { html::to_text(&body) } else { body };
        return Ok((status.as_u16(), text));
    }
    Err(format!("more than {MAX_REDIRECTS} redirects"))
}

/// The address to connect to, if every address the host resolves to is public.
pub(super) async fn checked_address(url: &reqwest::Url) -> Result<SocketAddr, String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "only http and https URLs can be fetched, not {}:",
            url.scheme()
        ));
    }
    let host = url.host_str().ok_or("the URL has no host")?;
    let port = url.port_or_known_default().unwrap_or(443);
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => tokio::net::lookup_host((bare, port))
            .await
            .map_err(|_| format!("could not resolve host: {host}"))?
            .collect(),
    };
    if addrs.is_empty() {
        return Err(format!("could not resolve host: {host}"));
    }
    if let Some(bad) = addrs.iter().find(|a| !ssrf::is_public(a.ip())) {
        return Err(format!(
            "refused: {host} resolves to {}, which is not a public address",
            bad.ip()
        ));
    }
    Ok(addrs[0])
}

async fn read_capped(response: reqwest::Response) -> Result<String, String> {
    use futures_util::StreamExt;
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("the download broke: {e}"))?;
        let room = MAX_BYTES - body.len();
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= MAX_BYTES {
            break;
        }
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lets a test server's own port through, checks everything else.
    fn first_hop_allowed(
        url: &reqwest::Url,
    ) -> std::pin::Pin<Box<dyn Future<Output = Result<SocketAddr, String>> + Send + '_>> {
        Box::pin(async move {
            let port = TEST_PORT.load(std::sync::atomic::Ordering::SeqCst);
            if url.host_str() == Some("127.0.0.1") && url.port() == Some(port) {
                return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
            }
            checked_address(url).await
        })
    }

    static TEST_PORT: std::sync::atomic::AtomicU16 = std::sync::atomic::AtomicU16::new(0);

    #[tokio::test]
    async fn a_redirect_to_a_private_address_is_refused() {
        let app = axum::Router::new()
            .route(
                "/to-metadata",
                axum::routing::get(|| async {
                    axum::response::Redirect::temporary("http://169.254.169.254/latest/meta-data/")
                }),
            )
            .route(
                "/to-loopback",
                axum::routing::get(|| async {
                    axum::response::Redirect::temporary("http://127.0.0.1:1/admin")
                }),
            )
            .route("/page", axum::routing::get(|| async { "plain text" }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        TEST_PORT.store(port, std::sync::atomic::Ordering::SeqCst);
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        let base = format!("http://127.0.0.1:{port}");
        let ok = fetch_checked(&format!("{base}/page"), first_hop_allowed)
            .await
            .unwrap();
        assert_eq!(ok, (200, "plain text".to_string()));
        for hop in ["/to-metadata", "/to-loopback"] {
            let err = fetch_checked(&format!("{base}{hop}"), first_hop_allowed)
                .await
                .unwrap_err();
            assert!(err.contains("refused"), "{hop}: {err}");
        }
    }

    #[tokio::test]
    async fn private_targets_are_refused_after_resolution() {
        for url in [
            "http://127.0.0.1/",
            "http://10.0.0.1/admin",
            "http://169.254.169.254/latest/meta-data/",
            "http://localhost:8080/",
            "http://[::1]/",
            "http://0x7f000001/",
            "file:///etc/passwd",
            "ftp://example.com/",
        ] {
            let parsed = reqwest::Url::parse(url).unwrap();
            let err = checked_address(&parsed).await.unwrap_err();
            assert!(
                err.contains("refused") || err.contains("only http"),
                "{url}: {err}"
            );
        }
    }
}

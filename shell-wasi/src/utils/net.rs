//! `curl` and `wget` without a network.
//!
//! The sandbox has no sockets at all, so every request fails the way the
//! real tools fail when name resolution is impossible: curl exit 6
//! "Could not resolve host", wget exit 4 "unable to resolve host
//! address". Literal IP addresses fail at connect instead (curl 7).

use super::Process;

/// curl's CURLE_COULDNT_RESOLVE_HOST.
const CURL_RESOLVE: i32 = 6;
/// curl's CURLE_COULDNT_CONNECT.
const CURL_CONNECT: i32 = 7;
/// curl's "no URL specified" usage error.
const CURL_USAGE: i32 = 2;
/// wget's "network failure" status.
const WGET_NETWORK: i32 = 4;

/// curl options that take a value (the next argument).
const CURL_VALUE_OPTIONS: &[&str] = &[
    "-m",
    "--max-time",
    "-o",
    "--output",
    "-X",
    "--request",
    "-H",
    "--header",
    "-d",
    "--data",
    "--data-raw",
    "--data-binary",
    "--data-urlencode",
    "-A",
    "--user-agent",
    "-u",
    "--user",
    "-w",
    "--write-out",
    "-e",
    "--referer",
    "-T",
    "--upload-file",
    "-F",
    "--form",
    "-x",
    "--proxy",
    "--connect-timeout",
    "--retry",
    "-b",
    "--cookie",
    "-c",
    "--cookie-jar",
    "-r",
    "--range",
    "--resolve",
    "--cacert",
    "-E",
    "--cert",
    "-K",
    "--config",
    "--retry-delay",
    "--retry-max-time",
    "-y",
    "-Y",
    "-z",
    "--url",
];

/// The progress meter curl prints on stderr when neither -s nor a
/// terminal is involved, frozen at its first (and only) line.
const CURL_METER: &str = "  % Total    % Received % Xferd  Average Speed   Time    Time     Time  Current\n                                 Dload  Upload   Total   Spent    Left  Speed\n\r  0     0    0     0    0     0      0      0 --:--:-- --:--:-- --:--:--     0";

pub(crate) fn curl(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let mut silent = false;
    let mut show_error = false;
    let mut url = None;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if CURL_VALUE_OPTIONS.contains(&arg.as_str()) {
            if arg == "--url" {
                url = args.get(i).cloned();
            }
            i += 1;
            continue;
        }
        if arg.starts_with("--") {
            match arg.as_str() {
                "--silent" => silent = true,
                "--show-error" => show_error = true,
                _ => {}
            }
            continue;
        }
        if let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) {
            silent |= letters.contains('s');
            show_error |= letters.contains('S');
            // `-sSm 8`: a trailing value-taking letter consumes the next argument.
            if letters.len() > 1
                && letters.ends_with(['m', 'o', 'X', 'H', 'd', 'A', 'u', 'w', 'e', 'x'])
            {
                i += 1;
            }
            continue;
        }
        url.get_or_insert_with(|| arg.clone());
    }
    let Some(url) = url else {
        p.io.err_line("curl: no URL specified!");
        p.io.err_line("curl: try 'curl --help' or 'curl --manual' for more information");
        return CURL_USAGE;
    };
    let (host, port) = host_and_port(&url);
    let (code, message) = if is_ip_literal(&host) || host == "localhost" {
        (
            CURL_CONNECT,
            format!(
                "curl: (7) Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"
            ),
        )
    } else {
        (
            CURL_RESOLVE,
            format!("curl: (6) Could not resolve host: {host}"),
        )
    };
    if !silent {
        p.io.err(CURL_METER.as_bytes());
    }
    if !silent || show_error {
        p.io.err_line(&message);
    }
    code
}

pub(crate) fn wget(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = argv.get(1..).unwrap_or_default();
    let mut quiet = false;
    let mut urls = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        match arg.as_str() {
            "-q" | "--quiet" | "-nv" | "--no-verbose" => {
                quiet = arg.starts_with("-q") || arg == "--quiet"
            }
            "-O" | "-o" | "-P" | "-T" | "-t" | "-U" | "--header" | "--user-agent" | "--timeout"
            | "--tries" => i += 1,
            a if a.starts_with('-') => {
                quiet |=
                    a.starts_with("-q") || (a.len() > 1 && !a.starts_with("--") && a.contains('q'))
            }
            a => urls.push(a.to_string()),
        }
    }
    if urls.is_empty() {
        p.io.err_line("wget: missing URL");
        p.io.err_line("Usage: wget [OPTION]... [URL]...");
        p.io.err_line("");
        p.io.err_line("Try `wget --help' for more options.");
        return 1;
    }
    let now =
        super::timefmt::civil_from_secs(super::timefmt::epoch_secs(std::time::SystemTime::now()));
    for url in &urls {
        let full = normalize_url(url);
        let (host, port) = host_and_port(&full);
        if quiet {
            continue;
        }
        p.io.err_line(&format!(
            "--{:04}-{:02}-{:02} {:02}:{:02}:{:02}--  {full}",
            now.year, now.month, now.day, now.hour, now.minute, now.second
        ));
        if is_ip_literal(&host) {
            p.io.err_line(&format!(
                "Connecting to {host}:{port}... failed: Connection refused."
            ));
        } else {
            p.io.err_line(&format!(
                "Resolving {host} ({host})... failed: Temporary failure in name resolution."
            ));
            p.io.err_line(&format!(
                "wget: unable to resolve host address {}",
                p.quote(&host)
            ));
        }
    }
    WGET_NETWORK
}

/// wget shows URLs with a scheme and at least `/` as path.
fn normalize_url(url: &str) -> String {
    let with_scheme = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    let after_scheme = with_scheme.split_once("://").map_or("", |(_, rest)| rest);
    if after_scheme.contains('/') {
        with_scheme
    } else {
        format!("{with_scheme}/")
    }
}

/// The host and port a URL names (default ports by scheme).
fn host_and_port(url: &str) -> (String, u16) {
    let (scheme, rest) = url.split_once("://").unwrap_or(("http", url));
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => 443,
        "ftp" => 21,
        _ => 80,
    };
    if let Some(v6) = authority.strip_prefix('[') {
        let (host, after) = v6.split_once(']').unwrap_or((v6, ""));
        let port = after
            .strip_prefix(':')
            .and_then(|p| p.parse().ok())
            .unwrap_or(default_port);
        return (host.to_string(), port);
    }
    match authority.rsplit_once(':') {
        Some((host, port)) if port.chars().all(|c| c.is_ascii_digit()) && !port.is_empty() => {
            (host.to_string(), port.parse().unwrap_or(default_port))
        }
        _ => (authority.to_string(), default_port),
    }
}

fn is_ip_literal(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hosts() {
        assert_eq!(
            host_and_port("https://example.com/x"),
            ("example.com".into(), 443)
        );
        assert_eq!(host_and_port("http://u:p@h:8080/"), ("h".into(), 8080));
        assert_eq!(host_and_port("example.com"), ("example.com".into(), 80));
        assert_eq!(normalize_url("example.com"), "http://example.com/");
        assert_eq!(normalize_url("https://example.com"), "https://example.com/");
    }
}

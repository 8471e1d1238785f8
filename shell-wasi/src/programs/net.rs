//! `curl` and `wget` without a network.
//!
//! The sandbox has no sockets at all, so every request fails the way the
//! real tools fail when name resolution is impossible: curl exit 6
//! "Could not resolve host", wget exit 4 "unable to resolve host
//! address". Literal IP addresses fail at connect instead (curl 7).
//! `curl -w` reports what real curl reports for such a transfer
//! (`%{http_code}` is `000`, sizes and times 0).

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
    let mut verbose = false;
    let mut retries: u32 = 0;
    let mut retry_delay: u64 = 0;
    let mut write_out: Option<String> = None;
    let mut output: Option<String> = None;
    let mut urls = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        if arg.starts_with("--") && arg.contains('=') {
            // curl has no `--option=value` form.
            p.io.err_line(&format!("curl: option {arg}: is unknown"));
            p.io.err_line("curl: try 'curl --help' or 'curl --manual' for more information");
            return CURL_USAGE;
        }
        if CURL_VALUE_OPTIONS.contains(&arg.as_str()) {
            i += 1;
            let value = args.get(i - 1).cloned();
            match arg.as_str() {
                "--url" => urls.extend(value),
                "-w" | "--write-out" => write_out = value,
                "-o" | "--output" => output = value,
                "--retry" => retries = value.and_then(|v| v.parse().ok()).unwrap_or(0).min(100),
                "--retry-delay" => retry_delay = value.and_then(|v| v.parse().ok()).unwrap_or(0),
                _ => {}
            }
            continue;
        }
        if arg.starts_with("--") {
            match arg.as_str() {
                "--silent" => silent = true,
                "--show-error" => show_error = true,
                "--verbose" => verbose = true,
                _ => {}
            }
            continue;
        }
        if let Some(letters) = arg.strip_prefix('-').filter(|l| !l.is_empty()) {
            // `-sSw '%{http_code}'`: the first value-taking letter takes
            // the rest of the word, or else the next argument.
            for (at, letter) in letters.char_indices() {
                if "moXHdAuwexTFbcrEKyYz".contains(letter) {
                    let rest = letters.get(at + letter.len_utf8()..).unwrap_or("");
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(rest.to_string())
                    };
                    match letter {
                        'w' => write_out = value,
                        'o' => output = value,
                        _ => {}
                    }
                    break;
                }
                silent |= letter == 's';
                show_error |= letter == 'S';
                verbose |= letter == 'v';
            }
            continue;
        }
        urls.push(arg.clone());
    }
    if urls.is_empty() {
        p.io.err_line("curl: try 'curl --help' or 'curl --manual' for more information");
        return CURL_USAGE;
    }
    let format = match write_out.as_deref() {
        Some("@-") => {
            Some(String::from_utf8_lossy(&p.io.stdin.borrow_mut().read_all()).into_owned())
        }
        Some(f) if f.starts_with('@') => Some(
            std::fs::read(p.resolve(f.get(1..).unwrap_or_default()))
                .map(|d| String::from_utf8_lossy(&d).into_owned())
                .unwrap_or_default(),
        ),
        other => other.map(str::to_string),
    };
    let mut status = 0;
    // curl numbers its connections across attempts and URLs.
    let mut connection = 0;
    for (num, url) in urls.iter().enumerate() {
        let (host, port) = host_and_port(url);
        let connect = is_ip_literal(&host) || host == "localhost";
        let (code, message) = if connect {
            (
                CURL_CONNECT,
                format!(
                    "Failed to connect to {host} port {port} after 0 ms: Couldn't connect to server"
                ),
            )
        } else {
            (CURL_RESOLVE, format!("Could not resolve host: {host}"))
        };
        for attempt in 0..=retries {
            if !silent {
                let meter = if attempt == 0 {
                    CURL_METER
                } else {
                    CURL_METER.rsplit('\n').next().unwrap_or("")
                };
                p.io.err(meter.as_bytes());
            }
            if verbose {
                if connect {
                    p.io.err_line(&format!("*   Trying {host}:{port}..."));
                    p.io.err_line(&format!(
                        "* connect to {host} port {port} failed: Connection refused"
                    ));
                    p.io.err_line(&format!("* {message}"));
                    if !silent {
                        let line = CURL_METER.rsplit('\n').next().unwrap_or("");
                        p.io.err_line(line);
                    }
                } else {
                    p.io.err_line(&format!("* {message}"));
                }
                p.io.err_line(&format!("* Closing connection {connection}"));
            }
            connection += 1;
            if !silent || show_error {
                p.io.err_line(&format!("curl: ({code}) {message}"));
            }
            if attempt < retries && !silent {
                let left = retries - attempt;
                let delay = if retry_delay > 0 {
                    retry_delay
                } else {
                    1u64 << attempt.min(9)
                };
                p.io.err_line(&format!(
                    "Warning: Problem : timeout. Will retry in {delay} seconds. {left} retries left."
                ));
            }
        }
        if let Some(format) = &format {
            let failed = Failed {
                url,
                effective: effective_url(url),
                num,
                code,
                message: &message,
                output: output.as_deref().unwrap_or(""),
            };
            write_out_report(p, format, &failed);
        }
        status = code;
    }
    status
}

/// One failed transfer, as `--write-out` describes it.
struct Failed<'a> {
    url: &'a str,
    effective: String,
    num: usize,
    code: i32,
    message: &'a str,
    output: &'a str,
}

/// curl's `url_effective`: a scheme and at least `/` as path.
fn effective_url(url: &str) -> String {
    let with_scheme = if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    };
    let (scheme, rest) = with_scheme.split_once("://").unwrap_or(("http", ""));
    let cut = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(cut);
    let tail = if tail.starts_with('/') {
        tail.to_string()
    } else {
        format!("/{tail}")
    };
    format!("{}://{authority}{tail}", scheme.to_ascii_lowercase())
}

/// The value of one `%{name}` for a transfer that never connected.
fn write_out_value(name: &str, f: &Failed<'_>) -> Option<String> {
    Some(match name {
        "http_code" | "response_code" | "http_connect" => "000".to_string(),
        "url_effective" => f.effective.clone(),
        "url" => f.url.to_string(),
        "urlnum" => f.num.to_string(),
        "exitcode" => f.code.to_string(),
        "errormsg" => f.message.to_string(),
        "filename_effective" => f.output.to_string(),
        "method" => "GET".to_string(),
        "http_version" => "0".to_string(),
        "content_type" | "remote_ip" | "local_ip" | "redirect_url" | "scheme" | "referer"
        | "ftp_entry_path" | "certs" => String::new(),
        "size_download"
        | "size_upload"
        | "size_header"
        | "size_request"
        | "num_redirects"
        | "remote_port"
        | "local_port"
        | "speed_download"
        | "speed_upload"
        | "ssl_verify_result"
        | "proxy_ssl_verify_result"
        | "num_connects"
        | "num_headers"
        | "num_certs" => "0".to_string(),
        "time_total" | "time_namelookup" | "time_connect" | "time_appconnect"
        | "time_pretransfer" | "time_redirect" | "time_starttransfer" => "0.000000".to_string(),
        _ => return None,
    })
}

/// Writes a `--write-out` format: `%{var}`, `%%`, `\n`/`\t`/`\r`/`\\`,
/// `%{stderr}`/`%{stdout}` to switch streams, `%{onerror}`.
fn write_out_report(p: &mut Process<'_>, format: &str, f: &Failed<'_>) {
    let mut to_err = false;
    let mut buf = String::new();
    let flush = |p: &mut Process<'_>, buf: &mut String, to_err: bool| {
        if to_err {
            p.io.err(buf.as_bytes());
        } else {
            p.out(buf.as_bytes());
        }
        buf.clear();
    };
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' if chars.peek() == Some(&'%') => {
                chars.next();
                buf.push('%');
            }
            '%' if chars.peek() == Some(&'{') => {
                chars.next();
                let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
                match name.as_str() {
                    "stderr" | "stdout" => {
                        flush(p, &mut buf, to_err);
                        to_err = name == "stderr";
                    }
                    "onerror" => {}
                    "json" => buf.push_str(&write_out_json(f)),
                    _ => match write_out_value(&name, f) {
                        Some(v) => buf.push_str(&v),
                        None => {
                            p.io.err_line(&format!("curl: unknown --write-out variable: '{name}'"))
                        }
                    },
                }
            }
            '\\' => match chars.peek() {
                Some('n') => {
                    chars.next();
                    buf.push('\n');
                }
                Some('t') => {
                    chars.next();
                    buf.push('\t');
                }
                Some('r') => {
                    chars.next();
                    buf.push('\r');
                }
                Some('\\') => {
                    chars.next();
                    buf.push('\\');
                }
                _ => buf.push('\\'),
            },
            _ => buf.push(c),
        }
    }
    flush(p, &mut buf, to_err);
}

/// `%{json}`: the variables curl reports for a failed transfer.
fn write_out_json(f: &Failed<'_>) -> String {
    let s = |v: &str| serde_json::Value::String(v.to_string()).to_string();
    format!(
        "{{\"certs\":\"\",\"content_type\":null,\"errormsg\":{},\"exitcode\":{},\"filename_effective\":{},\"ftp_entry_path\":null,\"http_code\":0,\"http_connect\":0,\"http_version\":\"0\",\"local_ip\":\"\",\"local_port\":0,\"method\":\"GET\",\"num_certs\":0,\"num_connects\":0,\"num_headers\":0,\"num_redirects\":0,\"proxy_ssl_verify_result\":0,\"redirect_url\":null,\"referer\":null,\"remote_ip\":\"\",\"remote_port\":0,\"response_code\":0,\"scheme\":null,\"size_download\":0,\"size_header\":0,\"size_request\":0,\"size_upload\":0,\"speed_download\":0,\"speed_upload\":0,\"ssl_verify_result\":0,\"time_appconnect\":0.000000,\"time_connect\":0.000000,\"time_namelookup\":0.000000,\"time_pretransfer\":0.000000,\"time_redirect\":0.000000,\"time_starttransfer\":0.000000,\"time_total\":0.000000,\"url\":{},\"url_effective\":{},\"urlnum\":{}}}",
        s(f.message),
        f.code,
        if f.output.is_empty() {
            "null".to_string()
        } else {
            s(f.output)
        },
        s(f.url),
        s(&f.effective),
        f.num
    )
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

//! `file [-b] [-i] FILE...`: a few heuristics, not libmagic — empty,
//! directory, symbolic link, ELF, common archive and image signatures,
//! `#!` scripts, and ASCII/UTF-8 text with its line terminators.

use super::Process;

/// A description and its MIME type.
fn classify(data: &[u8]) -> (String, &'static str) {
    if data.is_empty() {
        return ("empty".to_string(), "inode/x-empty; charset=binary");
    }
    let signatures: [(&[u8], &str, &'static str); 9] = [
        (
            b"\x7fELF",
            "ELF 64-bit LSB executable, x86-64, version 1 (SYSV)",
            "application/x-executable; charset=binary",
        ),
        (
            b"\x89PNG\r\n\x1a\n",
            "PNG image data",
            "image/png; charset=binary",
        ),
        (
            b"\xff\xd8\xff",
            "JPEG image data",
            "image/jpeg; charset=binary",
        ),
        (b"GIF8", "GIF image data", "image/gif; charset=binary"),
        (b"%PDF-", "PDF document", "application/pdf; charset=binary"),
        (
            b"PK\x03\x04",
            "Zip archive data, at least v2.0 to extract",
            "application/zip; charset=binary",
        ),
        (
            b"\x1f\x8b",
            "gzip compressed data",
            "application/gzip; charset=binary",
        ),
        (
            b"\0asm",
            "WebAssembly (wasm) binary module version 0x1 (MVP)",
            "application/wasm; charset=binary",
        ),
        (
            b"BZh",
            "bzip2 compressed data",
            "application/x-bzip2; charset=binary",
        ),
    ];
    for (magic, desc, mime) in signatures {
        if data.starts_with(magic) {
            return (desc.to_string(), mime);
        }
    }
    if data.get(257..262) == Some(b"ustar") {
        return (
            "POSIX tar archive (GNU)".to_string(),
            "application/x-tar; charset=binary",
        );
    }
    if data.len() == 1 {
        return (
            "very short file (no magic)".to_string(),
            "application/octet-stream; charset=binary",
        );
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return (
            "data".to_string(),
            "application/octet-stream; charset=binary",
        );
    };
    if text
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r' | '\x0c' | '\x08' | '\x1b'))
    {
        return (
            "data".to_string(),
            "application/octet-stream; charset=binary",
        );
    }
    let charset = if text.is_ascii() {
        "ASCII"
    } else {
        "Unicode text, UTF-8"
    };
    let mut kind = if text.is_ascii() {
        "ASCII text".to_string()
    } else {
        "Unicode text, UTF-8 text".to_string()
    };
    let mut mime = "text/plain";
    if let Some(first) = text.lines().next().filter(|l| l.starts_with("#!")) {
        let interp = first.trim_start_matches("#!").trim();
        let mut words = interp.split_whitespace();
        let prog = words.next().unwrap_or("");
        let prog = if prog.ends_with("/env") {
            words.find(|w| !w.starts_with('-')).unwrap_or("")
        } else {
            prog.rsplit('/').next().unwrap_or(prog)
        };
        let (name, m) = match prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.') {
            "python" => ("Python script", "text/x-script.python"),
            "sh" | "dash" => ("POSIX shell script", "text/x-shellscript"),
            "bash" => ("Bourne-Again shell script", "text/x-shellscript"),
            "perl" => ("Perl script", "text/x-perl"),
            "node" => ("Node.js script", "application/javascript"),
            "ruby" => ("Ruby script", "text/x-ruby"),
            _ => {
                kind = format!("a {interp} script, {charset} text executable");
                return (kind, "text/plain");
            }
        };
        kind = format!("{name}, {charset} text executable");
        mime = m;
    } else if text.trim_start().starts_with("<?xml") {
        kind = format!("XML 1.0 document, {charset} text");
        mime = "text/xml";
    } else if text
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("<!doctype html")
        || text.trim_start().to_ascii_lowercase().starts_with("<html")
    {
        kind = format!("HTML document, {charset} text");
        mime = "text/html";
    } else if (text.trim_start().starts_with('{') || text.trim_start().starts_with('['))
        && looks_like_json(text)
    {
        kind = "JSON text data".to_string();
        mime = "application/json";
    }
    if text.contains("\r\n") {
        kind.push_str(", with CRLF line terminators");
    }
    if !text.ends_with('\n') && !text.ends_with("\r\n") && !kind.ends_with("data") {
        kind.push_str(", with no line terminators");
    }
    let mime_full = match (mime, text.is_ascii()) {
        ("text/plain", true) => "text/plain; charset=us-ascii",
        ("text/plain", false) => "text/plain; charset=utf-8",
        ("text/x-script.python", _) => "text/x-script.python; charset=us-ascii",
        ("text/x-shellscript", _) => "text/x-shellscript; charset=us-ascii",
        ("application/json", _) => "application/json; charset=us-ascii",
        ("text/html", _) => "text/html; charset=us-ascii",
        ("text/xml", _) => "text/xml; charset=us-ascii",
        _ => "text/plain; charset=us-ascii",
    };
    (kind, mime_full)
}

fn looks_like_json(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with('{') && t.ends_with('}')) || (t.starts_with('[') && t.ends_with(']'))
}

pub(crate) fn file(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let (flags, operands) = crate::programs::parse_flags(argv.get(1..).unwrap_or_default());
    let brief = flags.iter().any(|f| f == "b" || f == "--brief");
    let mime = flags
        .iter()
        .any(|f| f == "i" || f == "--mime" || f == "--mime-type");
    if operands.is_empty() {
        p.io.err_line("Usage: file [-bchikLlNnprsSvzZ0] [--apple] [--extension] [--mime-encoding]\n            [--mime-type] [-e <testname>] [-F <separator>]  [-f <namefile>]\n            [-m <magicfiles>] [-P <parameter=value>] [--exclude-quiet]\n            <file> ...\n       file -C [-m <magicfiles>]\n       file [--help]");
        return 1;
    }
    let mut out = String::new();
    for name in &operands {
        let path = p.resolve(name);
        let (desc, mime_type) = match std::fs::symlink_metadata(&path) {
            Err(e) => (
                format!("cannot open `{name}' ({})", crate::errors::strerror(&e)),
                "cannot open",
            ),
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&path)
                    .map(|t| t.to_string_lossy().into_owned())
                    .unwrap_or_default();
                (
                    format!("symbolic link to {target}"),
                    "inode/symlink; charset=binary",
                )
            }
            Ok(m) if m.is_dir() => ("directory".to_string(), "inode/directory; charset=binary"),
            Ok(_) => match std::fs::read(&path) {
                Ok(data) => classify(&data),
                Err(e) => (
                    format!("cannot open `{name}' ({})", crate::errors::strerror(&e)),
                    "cannot open",
                ),
            },
        };
        let shown = if mime && mime_type != "cannot open" {
            mime_type.to_string()
        } else {
            desc
        };
        if brief {
            out.push_str(&format!("{shown}\n"));
        } else {
            out.push_str(&format!("{name}: {shown}\n"));
        }
    }
    p.out(out.as_bytes());
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_common_files() {
        assert_eq!(classify(b"hello\n").0, "ASCII text");
        assert_eq!(
            classify(b"#!/usr/bin/env python3\nprint(1)\n").0,
            "Python script, ASCII text executable"
        );
        assert_eq!(
            classify(b"#!/bin/bash\necho\n").0,
            "Bourne-Again shell script, ASCII text executable"
        );
        assert_eq!(classify(b"").0, "empty");
        assert_eq!(classify(b"xy").0, "ASCII text, with no line terminators");
    }
}

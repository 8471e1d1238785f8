//! `xz -l`: the streams, blocks, sizes and check of .xz files, read from
//! their stream headers, indexes and footers as xz-utils 5.4 prints them.

use super::{Process, read_operand};

/// What one file holds.
#[derive(Default)]
struct Summary {
    streams: u64,
    blocks: u64,
    compressed: u64,
    uncompressed: u64,
    check: u8,
}

fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v: u64 = 0;
    for shift in (0..63).step_by(7) {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Walks the streams from the end, as xz does.
fn summarize(data: &[u8]) -> Option<Summary> {
    let mut s = Summary {
        compressed: data.len() as u64,
        ..Summary::default()
    };
    let mut end = data.len();
    while end > 0 {
        while end >= 4 && data.get(end - 4..end) == Some(&[0, 0, 0, 0]) {
            end -= 4;
        }
        let footer = data.get(end.checked_sub(12)?..end)?;
        if &footer[10..12] != b"YZ" {
            return None;
        }
        let backward = u32::from_le_bytes([footer[4], footer[5], footer[6], footer[7]]);
        let index_size = (usize::try_from(backward).ok()? + 1) * 4;
        let index_start = end.checked_sub(12 + index_size)?;
        let index = data.get(index_start..end - 12)?;
        if index.first() != Some(&0) {
            return None;
        }
        let mut pos = 1;
        let records = varint(index, &mut pos)?;
        let mut unpadded_total = 0u64;
        for _ in 0..records {
            let unpadded = varint(index, &mut pos)?;
            s.uncompressed += varint(index, &mut pos)?;
            unpadded_total += unpadded.div_ceil(4) * 4;
        }
        s.blocks += records;
        s.streams += 1;
        s.check = footer[9] & 0x0f;
        let stream_start = index_start.checked_sub(usize::try_from(unpadded_total).ok()? + 12)?;
        if data.get(stream_start..stream_start + 6) != Some(&[0xfd, b'7', b'z', b'X', b'Z', 0][..])
        {
            return None;
        }
        end = stream_start;
    }
    Some(s)
}

fn check_name(id: u8) -> &'static str {
    match id {
        0 => "None",
        1 => "CRC32",
        4 => "CRC64",
        10 => "SHA-256",
        _ => "Unknown-11",
    }
}

fn size(n: u64) -> String {
    if n < 1024 {
        return format!("{n} B");
    }
    let units = ["KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < units.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.1} {}", units[unit])
}

fn ratio(c: u64, u: u64) -> String {
    if u == 0 {
        return "---".into();
    }
    let r = c as f64 / u as f64;
    if r > 9.999 {
        "---".into()
    } else {
        format!("{r:.3}")
    }
}

fn row(s: &Summary, name: &str) -> String {
    format!(
        "{:>5} {:>7} {:>12} {:>12}  {:>5}  {:<7} {name}",
        s.streams,
        s.blocks,
        size(s.compressed),
        size(s.uncompressed),
        ratio(s.compressed, s.uncompressed),
        check_name(s.check)
    )
}

pub(crate) fn list(p: &Process<'_>, files: &[String]) -> i32 {
    let mut out =
        String::from("Strms  Blocks   Compressed Uncompressed  Ratio  Check   Filename\n");
    let mut status = 0;
    let mut total = Summary::default();
    let mut listed = 0;
    for f in files {
        let data = match read_operand(p, f) {
            Ok(d) => d,
            Err(super::OperandError::Directory) => {
                p.error(&format!("{f}: Is a directory, skipping"));
                status = 1;
                continue;
            }
            Err(super::OperandError::Io(e)) => {
                p.error(&format!("{f}: {e}"));
                status = 1;
                continue;
            }
        };
        match summarize(&data) {
            Some(s) => {
                out.push_str(&row(&s, f));
                out.push('\n');
                total.streams += s.streams;
                total.blocks += s.blocks;
                total.compressed += s.compressed;
                total.uncompressed += s.uncompressed;
                total.check = s.check;
                listed += 1;
            }
            None => {
                p.error(&format!("{f}: File format not recognized"));
                status = 1;
            }
        }
    }
    if listed == 0 {
        return status;
    }
    if listed > 1 {
        out.push_str(
            "-------------------------------------------------------------------------------\n",
        );
        let line = row(&total, &format!("{listed} files"));
        out.push_str(&line);
        out.push('\n');
    }
    crate::programs::coreutils::write_all(p, out.as_bytes());
    status
}

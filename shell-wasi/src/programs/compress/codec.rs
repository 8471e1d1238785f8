//! The compressed formats the sandbox reads and writes: gzip (through
//! `coreutils/gzip.rs`), bzip2 (`bzip2` with its pure-Rust libbz2 port,
//! so output is bzip2 1.0.8's byte for byte) and xz/lzma (`lzma-rust2`, a
//! port of XZ for Java: any xz file decodes; what it writes is valid xz
//! but not byte-identical to xz-utils'). Decoded output is capped at the
//! pipe budget so a bomb cannot exhaust memory.

use std::io::{Read, Write};

use crate::streams::MAX_PIPE_BYTES;

/// A format, as told by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Gzip,
    Bzip2,
    Xz,
    Lzma,
}

/// What went wrong decoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecodeError {
    /// Not this format at all.
    NotRecognized,
    /// It ends too early.
    Truncated,
    /// It is damaged.
    Corrupt(String),
    /// It decodes to more than the sandbox can hold.
    TooLarge,
}

pub(crate) fn detect(data: &[u8]) -> Option<Format> {
    if data.starts_with(&[0x1f, 0x8b]) {
        Some(Format::Gzip)
    } else if data.len() >= 4 && data.starts_with(b"BZh") && (b'1'..=b'9').contains(&data[3]) {
        Some(Format::Bzip2)
    } else if data.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some(Format::Xz)
    } else if looks_like_lzma(data) {
        Some(Format::Lzma)
    } else {
        None
    }
}

/// The .lzma ("LZMA alone") header check xz-utils uses: valid properties
/// and a plausible dictionary size.
fn looks_like_lzma(data: &[u8]) -> bool {
    if data.len() < 13 || data[0] > (4 * 5 + 4) * 9 + 8 {
        return false;
    }
    let dict = u32::from_le_bytes([data[1], data[2], data[3], data[4]]);
    let size = u64::from_le_bytes([
        data[5], data[6], data[7], data[8], data[9], data[10], data[11], data[12],
    ]);
    let power_of_two_ish = dict == u32::MAX || {
        let mut d = dict.saturating_sub(1);
        d |= d >> 2;
        d |= d >> 3;
        d |= d >> 4;
        d |= d >> 8;
        d |= d >> 16;
        d = d.wrapping_add(1);
        d == dict
    };
    power_of_two_ish && (size == u64::MAX || size < (1 << 38))
}

/// Reads a decoder to its end, within the pipe budget.
fn drain(mut reader: impl Read) -> Result<Vec<u8>, std::io::Error> {
    let mut out = Vec::new();
    let limit = u64::try_from(MAX_PIPE_BYTES).unwrap_or(u64::MAX) + 1;
    (&mut reader).take(limit).read_to_end(&mut out)?;
    Ok(out)
}

fn classify(e: &std::io::Error) -> DecodeError {
    match e.kind() {
        std::io::ErrorKind::UnexpectedEof => DecodeError::Truncated,
        _ => DecodeError::Corrupt(e.to_string()),
    }
}

pub(crate) fn decode(format: Format, data: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let out = match format {
        Format::Gzip => {
            use crate::programs::coreutils::gzip::{GzError, decompress_all};
            match decompress_all(data) {
                Ok(d) => d.data,
                Err(GzError::NotGzip) => return Err(DecodeError::NotRecognized),
                Err(GzError::Eof) => return Err(DecodeError::Truncated),
                Err(GzError::TooLarge) => return Err(DecodeError::TooLarge),
                Err(e) => return Err(DecodeError::Corrupt(e.message().to_string())),
            }
        }
        Format::Bzip2 => {
            if detect(data) != Some(Format::Bzip2) {
                return Err(DecodeError::NotRecognized);
            }
            drain(bzip2::read::MultiBzDecoder::new(data)).map_err(|e| classify(&e))?
        }
        Format::Xz => {
            if detect(data) != Some(Format::Xz) {
                return Err(DecodeError::NotRecognized);
            }
            drain(lzma_rust2::XzReader::new(data, true)).map_err(|e| classify(&e))?
        }
        Format::Lzma => {
            if !looks_like_lzma(data) {
                return Err(DecodeError::NotRecognized);
            }
            let reader = lzma_rust2::LzmaReader::new_mem_limit(data, u32::MAX, None)
                .map_err(|e| classify(&e))?;
            drain(reader).map_err(|e| classify(&e))?
        }
    };
    if out.len() > MAX_PIPE_BYTES {
        return Err(DecodeError::TooLarge);
    }
    Ok(out)
}

/// Whatever `data` is compressed with, decoded; plain data as it is
/// (what `zcat -f`, `zgrep` and `tar` need).
pub(crate) fn decode_any(data: &[u8]) -> Result<Vec<u8>, DecodeError> {
    match detect(data) {
        Some(f) => decode(f, data),
        None => Ok(data.to_vec()),
    }
}

pub(crate) fn encode(format: Format, data: &[u8], level: u32) -> Vec<u8> {
    match format {
        Format::Gzip => {
            crate::programs::coreutils::gzip::compress(data, level.clamp(1, 9), None, 0)
        }
        Format::Bzip2 => {
            let mut enc = bzip2::write::BzEncoder::new(
                Vec::new(),
                bzip2::Compression::new(level.clamp(1, 9)),
            );
            let _ = enc.write_all(data);
            enc.finish().unwrap_or_default()
        }
        Format::Xz => {
            let options = lzma_rust2::XzOptions::with_preset(level.min(9));
            match lzma_rust2::XzWriter::new(Vec::new(), options) {
                Ok(mut w) => {
                    let _ = w.write_all(data);
                    w.finish().unwrap_or_default()
                }
                Err(_) => Vec::new(),
            }
        }
        Format::Lzma => {
            let options = lzma_rust2::LzmaOptions::with_preset(level.min(9));
            match lzma_rust2::LzmaWriter::new_use_header(Vec::new(), &options, None) {
                Ok(mut w) => {
                    let _ = w.write_all(data);
                    w.finish().unwrap_or_default()
                }
                Err(_) => Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_round_trips() {
        let data = b"hello hello hello hello\n".repeat(50);
        for f in [Format::Gzip, Format::Bzip2, Format::Xz, Format::Lzma] {
            let packed = encode(f, &data, 6);
            assert_eq!(detect(&packed), Some(f), "{f:?}");
            assert_eq!(decode(f, &packed).as_deref(), Ok(&data[..]), "{f:?}");
        }
        assert_eq!(decode(Format::Xz, b"junk"), Err(DecodeError::NotRecognized));
    }

    #[test]
    fn bzip2_output_is_libbz2s() {
        // `printf 'hello\n' | bzip2 | od -An -tx1` on Debian 12.
        let want = [
            0x42, 0x5a, 0x68, 0x39, 0x31, 0x41, 0x59, 0x26, 0x53, 0x59, 0xc1, 0xc0, 0x80, 0xe2,
            0x00, 0x00, 0x01, 0x41, 0x00, 0x00, 0x10, 0x02, 0x44, 0xa0, 0x00, 0x30, 0xcd, 0x00,
            0xc3, 0x46, 0x29, 0x97, 0x17, 0x72, 0x45, 0x38, 0x50, 0x90, 0xc1, 0xc0, 0x80, 0xe2,
        ];
        assert_eq!(encode(Format::Bzip2, b"hello\n", 9), want);
    }
}

//! `cksum [-a ALGO] [-l BITS] [--tag|--untagged] [-c] [FILE...]` (GNU
//! coreutils 9.1: the POSIX CRC by default, `sysv`, `bsd`, or any digest
//! of `digest.rs`) and `sum [-r|-s]`, the old BSD and System V sums.

use super::Process;
use super::args::{HasArg, Spec};
use super::digest::{
    Algo, blake2_length, check_files, digest_files, meaningful_only_when_checking,
};

const CKSUM_SPEC: Spec<'static> = Spec {
    short: "a:l:cwz",
    long: &[
        ("algorithm", 'a', HasArg::Yes),
        ("length", 'l', HasArg::Yes),
        ("check", 'c', HasArg::No),
        ("ignore-missing", 'i', HasArg::No),
        ("quiet", 'q', HasArg::No),
        ("status", 's', HasArg::No),
        ("warn", 'w', HasArg::No),
        ("strict", 'S', HasArg::No),
        ("tag", 'T', HasArg::No),
        ("untagged", 'U', HasArg::No),
        ("zero", 'z', HasArg::No),
        ("debug", 'D', HasArg::No),
    ],
};

/// The POSIX `cksum` CRC: polynomial 0x04C11DB7 over the data and then
/// its length, least significant byte first.
fn crc(data: &[u8]) -> u32 {
    fn feed(mut crc: u32, byte: u8) -> u32 {
        crc ^= u32::from(byte) << 24;
        for _ in 0..8 {
            crc = if crc & 0x8000_0000 != 0 {
                (crc << 1) ^ 0x04C1_1DB7
            } else {
                crc << 1
            };
        }
        crc
    }
    let mut c = data.iter().fold(0u32, |c, &b| feed(c, b));
    let mut len = data.len() as u64;
    while len > 0 {
        c = feed(c, (len & 0xff) as u8);
        len >>= 8;
    }
    !c
}

/// System V sum: (checksum, 512-byte blocks).
fn sysv(data: &[u8]) -> (u32, u64) {
    let s: u64 = data.iter().map(|&b| u64::from(b)).sum();
    let s = s & 0xffff_ffff;
    let r = (s & 0xffff) + (s >> 16);
    let sum = (r & 0xffff) + (r >> 16);
    (
        u32::try_from(sum).unwrap_or(0),
        (data.len() as u64).div_ceil(512),
    )
}

/// BSD sum: (checksum, 1024-byte blocks).
fn bsd(data: &[u8]) -> (u32, u64) {
    let mut ck: u32 = 0;
    for &b in data {
        ck = (ck >> 1) + ((ck & 1) << 15);
        ck = (ck + u32::from(b)) & 0xffff;
    }
    (ck, (data.len() as u64).div_ceil(1024))
}

/// The old checksums, one line a file.
#[derive(Clone, Copy)]
enum Old {
    Crc,
    Sysv,
    Bsd,
}

fn old_sums(p: &Process<'_>, operands: &[String], kind: Old) -> i32 {
    let names: Vec<String> = if operands.is_empty() {
        vec!["-".to_string()]
    } else {
        operands.to_vec()
    };
    let mut out = String::new();
    let mut status = 0;
    for name in &names {
        let data = match super::read_input(p, name) {
            Ok(d) => d,
            Err(e) => {
                super::write_all(p, std::mem::take(&mut out).as_bytes());
                super::file_error(p, name, &e);
                status = 1;
                continue;
            }
        };
        let line = match kind {
            Old::Crc => format!("{} {}", crc(&data), data.len()),
            Old::Sysv => {
                let (s, blocks) = sysv(&data);
                format!("{s} {blocks}")
            }
            Old::Bsd => {
                let (s, blocks) = bsd(&data);
                format!("{s:05} {blocks:5}")
            }
        };
        if operands.is_empty() {
            out.push_str(&format!("{line}\n"));
        } else {
            out.push_str(&format!("{line} {name}\n"));
        }
    }
    super::write_all(p, out.as_bytes());
    status
}

const ALGORITHMS: &[&str] = &[
    "bsd", "sysv", "crc", "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "blake2b", "sm3",
];

pub(crate) fn cksum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &CKSUM_SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let mut choice = 2;
    for v in args.values('a') {
        match super::argmatch_exact(p, "--algorithm", v, ALGORITHMS) {
            Ok(i) => choice = i,
            Err(status) => return status,
        }
    }
    let specified = args.has('a');
    let mut blake_len = 64;
    if let Some(l) = args.value('l') {
        match blake2_length(p, l) {
            Ok(len) => blake_len = len,
            Err(status) => return status,
        }
        let bits = l.trim().parse::<u64>().unwrap_or(0);
        if bits != 0 && ALGORITHMS[choice] != "blake2b" {
            p.error("--length is only supported with --algorithm=blake2b");
            return 1;
        }
    }
    if args.has('D') {
        p.error("using generic hardware support");
    }
    let digest = match ALGORITHMS[choice] {
        "md5" => Some(Algo::Md5),
        "sha1" => Some(Algo::Sha1),
        "sha224" => Some(Algo::Sha224),
        "sha256" => Some(Algo::Sha256),
        "sha384" => Some(Algo::Sha384),
        "sha512" => Some(Algo::Sha512),
        "blake2b" => Some(Algo::Blake2b(blake_len)),
        "sm3" => Some(Algo::Sm3),
        _ => None,
    };
    if args.has('c') {
        if digest.is_none() && specified {
            p.error("--check is not supported with --algorithm={bsd,sysv,crc}");
            return 1;
        }
        if args.has('z') {
            return super::usage(
                p,
                "the --zero option is not supported when verifying checksums",
                1,
            );
        }
        return check_files(p, &args, digest);
    }
    if let Err(status) = meaningful_only_when_checking(p, &args) {
        return status;
    }
    match digest {
        Some(algo) => {
            let untagged = args
                .opts
                .iter()
                .rev()
                .find(|o| o.key == 'T' || o.key == 'U')
                .is_some_and(|o| o.key == 'U');
            digest_files(p, &args, algo, !untagged)
        }
        None => {
            let kind = match ALGORITHMS[choice] {
                "bsd" => Old::Bsd,
                "sysv" => Old::Sysv,
                _ => Old::Crc,
            };
            old_sums(p, &args.operands, kind)
        }
    }
}

pub(crate) fn sum(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "rs",
        long: &[("sysv", 's', HasArg::No)],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    let sysv_wins = args
        .opts
        .iter()
        .rev()
        .find(|o| o.key == 'r' || o.key == 's')
        .is_some_and(|o| o.key == 's');
    let kind = if sysv_wins { Old::Sysv } else { Old::Bsd };
    old_sums(p, &args.operands, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_checksums_match_gnu() {
        assert_eq!(crc(b"hello\n"), 3_015_617_425);
        assert_eq!(crc(b""), 4_294_967_295);
        assert_eq!(sysv(b"hello\n"), (542, 1));
        assert_eq!(bsd(b"hello\n"), (36979, 1));
    }
}

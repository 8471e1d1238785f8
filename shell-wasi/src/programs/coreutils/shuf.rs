//! `shuf [-e ARG...|-i LO-HI|FILE] [-n COUNT] [-r] [-z] [-o FILE]
//! [--random-source=FILE]`: a random permutation of lines. The choices
//! are gnulib's randint/randperm, so with `--random-source` the output is
//! byte for byte GNU's; without it the bytes come from the sandbox's
//! random generator.

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};

use super::Process;
use super::args::{HasArg, Spec};
use crate::errors::strerror;
use crate::programs::quoting::quote_if_needed;

const SPEC: Spec<'static> = Spec {
    short: "ei:n:o:rz",
    long: &[
        ("echo", 'e', HasArg::No),
        ("input-range", 'i', HasArg::Yes),
        ("head-count", 'n', HasArg::Yes),
        ("output", 'o', HasArg::Yes),
        ("random-source", 'R', HasArg::Yes),
        ("repeat", 'r', HasArg::No),
        ("zero-terminated", 'z', HasArg::No),
    ],
};

/// Where random bytes come from.
enum Bytes {
    /// `--random-source`: the file's bytes in order.
    File {
        name: String,
        data: Vec<u8>,
        pos: usize,
    },
    /// The sandbox's generator (keyed SipHash over a counter).
    System {
        state: std::collections::hash_map::RandomState,
        counter: u64,
    },
}

/// The random source ran dry: `shuf: FILE: end of file`.
struct EndOfFile(String);

/// gnulib's randint_source.
struct RandInt {
    bytes: Bytes,
    randnum: u64,
    randmax: u64,
}

impl RandInt {
    fn read(&mut self, buf: &mut [u8]) -> Result<(), EndOfFile> {
        match &mut self.bytes {
            Bytes::File { name, data, pos } => {
                let end = *pos + buf.len();
                let Some(chunk) = data.get(*pos..end) else {
                    return Err(EndOfFile(name.clone()));
                };
                buf.copy_from_slice(chunk);
                *pos = end;
            }
            Bytes::System { state, counter } => {
                for b in buf.iter_mut() {
                    let mut h = state.build_hasher();
                    h.write_u64(*counter);
                    *counter += 1;
                    *b = h.finish().to_le_bytes()[0];
                }
            }
        }
        Ok(())
    }

    /// A uniform number in 0..=genmax (gnulib's randint_genmax).
    fn genmax(&mut self, genmax: u64) -> Result<u64, EndOfFile> {
        let (mut randnum, mut randmax) = (self.randnum, self.randmax);
        let choices = genmax.wrapping_add(1);
        loop {
            if randmax < genmax {
                let mut rmax = randmax;
                let mut n = 0;
                loop {
                    rmax = (rmax << 8) + 0xff;
                    n += 1;
                    if rmax >= genmax {
                        break;
                    }
                }
                let mut buf = [0u8; 8];
                self.read(&mut buf[..n])?;
                for &b in &buf[..n] {
                    randnum = (randnum << 8) + u64::from(b);
                    randmax = (randmax << 8) + 0xff;
                }
            }
            if randmax == genmax {
                self.randnum = 0;
                self.randmax = 0;
                return Ok(randnum);
            }
            let excess = randmax - genmax;
            let unusable = excess % choices;
            let last_usable = randmax - unusable;
            let reduced = randnum % choices;
            if randnum <= last_usable {
                self.randnum = randnum / choices;
                self.randmax = excess / choices;
                return Ok(reduced);
            }
            randnum = reduced;
            randmax = unusable - 1;
        }
    }

    fn choose(&mut self, n: u64) -> Result<u64, EndOfFile> {
        self.genmax(n - 1)
    }

    /// The first `h` of a random permutation of 0..n (gnulib's
    /// randperm_new, sparse storage for large `n`).
    fn permutation(&mut self, h: u64, n: u64) -> Result<Vec<u64>, EndOfFile> {
        match h {
            0 => Ok(Vec::new()),
            1 => Ok(vec![self.choose(n)?]),
            _ => {
                let mut swapped: HashMap<u64, u64> = HashMap::new();
                let mut out = Vec::new();
                for i in 0..h {
                    let j = i + self.choose(n - i)?;
                    let vi = swapped.get(&i).copied().unwrap_or(i);
                    let vj = swapped.get(&j).copied().unwrap_or(j);
                    swapped.insert(i, vj);
                    swapped.insert(j, vi);
                    out.push(vj);
                }
                Ok(out)
            }
        }
    }
}

/// `-i LO-HI`, or GNU's message.
fn parse_range(p: &Process<'_>, text: &str) -> Result<(u64, u64), i32> {
    let (lo, hi) = match text.split_once('-') {
        Some((lo, hi)) => (
            super::size_operand(p, lo, "", (0, u64::MAX), "invalid input range")?,
            super::size_operand(p, hi, "", (0, u64::MAX), "invalid input range")?,
        ),
        None => {
            super::size_operand(p, text, "", (0, u64::MAX), "invalid input range")?;
            p.error(&format!("invalid input range: {}", p.quote(text)));
            return Err(1);
        }
    };
    let count = hi.wrapping_sub(lo).wrapping_add(1);
    if (lo <= hi) == (count == 0) {
        p.error(&format!("invalid input range: {}", p.quote(text)));
        return Err(1);
    }
    Ok((lo, hi))
}

pub(crate) fn shuf(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let args = match super::parse_args(p, &SPEC, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    match run(p, &args) {
        Ok(()) => 0,
        Err(status) => status,
    }
}

fn run(p: &Process<'_>, args: &super::args::Parsed) -> Result<(), i32> {
    let eol = if args.has('z') { 0u8 } else { b'\n' };
    let mut range = None;
    let mut head = u64::MAX;
    for opt in &args.opts {
        let v = opt.value.as_deref().unwrap_or_default();
        match opt.key {
            'i' => {
                if range.is_some() {
                    p.error("multiple -i options specified");
                    return Err(1);
                }
                range = Some(parse_range(p, v)?);
            }
            'n' => match crate::programs::size::parse_size(v, "") {
                Ok(n) => head = head.min(n),
                Err(crate::programs::size::SizeError::Overflow) => {}
                Err(_) => {
                    p.error(&format!("invalid line count: {}", p.quote(v)));
                    return Err(1);
                }
            },
            _ => {}
        }
    }
    for key in ['o', 'R'] {
        let values = args.values(key);
        if values.windows(2).any(|w| w[0] != w[1]) {
            let what = if key == 'o' {
                "multiple output files specified"
            } else {
                "multiple random sources specified"
            };
            p.error(what);
            return Err(1);
        }
    }
    let echo = args.has('e');
    let repeat = args.has('r');
    if echo && range.is_some() {
        return Err(super::usage(p, "cannot combine -e and -i options", 1));
    }
    let extra = if range.is_some() {
        args.operands.first()
    } else if !echo {
        args.operands.get(1)
    } else {
        None
    };
    if let Some(extra) = extra {
        return Err(super::usage(
            p,
            &format!("extra operand {}", p.quote(extra)),
            1,
        ));
    }
    // The input lines, each with its terminator.
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut reservoir = false;
    if head != 0 && echo {
        lines = args
            .operands
            .iter()
            .map(|a| {
                let mut l = a.as_bytes().to_vec();
                l.push(eol);
                l
            })
            .collect();
    } else if head != 0 && range.is_none() {
        let name = args.operands.first().map_or("-", String::as_str);
        let mut data = super::read_input(p, name).map_err(|e| {
            p.error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
            1
        })?;
        if data.last().is_some_and(|&b| b != eol) {
            data.push(eol);
        }
        lines = data
            .split_inclusive(|&b| b == eol)
            .map(<[u8]>::to_vec)
            .collect();
        // GNU samples a reservoir from a pipe (it cannot know its size),
        // which draws different random numbers.
        reservoir = name == "-" && !repeat && head != u64::MAX;
    }
    let mut rand = RandInt {
        bytes: match args.value('R') {
            Some(name) => Bytes::File {
                name: name.to_string(),
                data: super::read_input(p, name).map_err(|e| {
                    p.error(&format!("{}: {}", quote_if_needed(name), strerror(&e)));
                    1
                })?,
                pos: 0,
            },
            None => Bytes::System {
                state: std::collections::hash_map::RandomState::new(),
                counter: 0,
            },
        },
        randnum: 0,
        randmax: 0,
    };
    let out = generate(&mut rand, &lines, range, head, repeat, reservoir, eol).map_err(
        |EndOfFile(name)| {
            p.error(&format!("{}: end of file", p.quote(&name)));
            1
        },
    )?;
    let out = match out {
        Some(o) => o,
        None => {
            p.error("no lines to repeat");
            return Err(1);
        }
    };
    match args.value('o') {
        Some(file) => std::fs::write(p.resolve(file), out).map_err(|e| {
            p.error(&format!("{}: {}", quote_if_needed(file), strerror(&e)));
            1
        }),
        None => {
            super::write_all(p, &out);
            Ok(())
        }
    }
}

/// The output bytes; `None` when `-r` has nothing to repeat.
fn generate(
    rand: &mut RandInt,
    lines: &[Vec<u8>],
    range: Option<(u64, u64)>,
    head: u64,
    repeat: bool,
    reservoir: bool,
    eol: u8,
) -> Result<Option<Vec<u8>>, EndOfFile> {
    let mut out = Vec::new();
    let count = match range {
        Some((lo, hi)) => hi.wrapping_sub(lo).wrapping_add(1),
        None => lines.len() as u64,
    };
    let number = |i: u64, out: &mut Vec<u8>| {
        let (lo, _) = range.unwrap_or((0, 0));
        out.extend(format!("{}", lo + i).bytes());
        out.push(eol);
    };
    if repeat {
        if head == 0 {
            return Ok(Some(out));
        }
        if count == 0 {
            return Ok(None);
        }
        let mut emitted = 0u64;
        while emitted < head {
            let j = rand.choose(count)?;
            if range.is_some() {
                number(j, &mut out);
            } else if let Some(l) = lines.get(usize::try_from(j).unwrap_or(usize::MAX)) {
                out.extend_from_slice(l);
            }
            emitted += 1;
            if out.len() > crate::streams::MAX_PIPE_BYTES || super::deadline_passed() {
                break;
            }
        }
        return Ok(Some(out));
    }
    if reservoir {
        let k = usize::try_from(head).unwrap_or(usize::MAX);
        let mut kept: Vec<&Vec<u8>> = lines.iter().take(k).collect();
        if lines.len() >= k {
            let mut n = kept.len() as u64;
            let mut rest = lines.iter().skip(k);
            loop {
                let j = rand.choose(n + 1)?;
                let Some(line) = rest.next() else { break };
                if let Some(slot) = kept.get_mut(usize::try_from(j).unwrap_or(usize::MAX)) {
                    *slot = line;
                }
                n += 1;
            }
        }
        let n = kept.len() as u64;
        for i in rand.permutation(n, n)? {
            if let Some(l) = kept.get(usize::try_from(i).unwrap_or(usize::MAX)) {
                out.extend_from_slice(l);
            }
        }
        return Ok(Some(out));
    }
    let ahead = head.min(count);
    for i in rand.permutation(ahead, count)? {
        if range.is_some() {
            number(i, &mut out);
        } else if let Some(l) = lines.get(usize::try_from(i).unwrap_or(usize::MAX)) {
            out.extend_from_slice(l);
        }
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(data: &[u8]) -> RandInt {
        RandInt {
            bytes: Bytes::File {
                name: "r".into(),
                data: data.to_vec(),
                pos: 0,
            },
            randnum: 0,
            randmax: 0,
        }
    }

    #[test]
    fn permutations_are_permutations() {
        let mut r = from(&[7; 64]);
        let mut v = r.permutation(10, 10).ok().expect("enough bytes");
        v.sort_unstable();
        assert_eq!(v, (0..10).collect::<Vec<u64>>());
    }

    #[test]
    fn a_dry_source_ends() {
        let mut r = from(&[]);
        assert!(r.choose(5).is_err());
    }
}

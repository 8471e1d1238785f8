//! GNU getopt_long for the coreutils here: short options clustered
//! (`-nc`), values attached or separate (`-n5`, `-n 5`, `--lines=5`),
//! unambiguous long prefixes (`--lin`), options after operands, and `--`.
//! Messages are getopt's own.

/// Whether a long option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HasArg {
    No,
    Yes,
    Optional,
}

/// One parsed option: its key (the short letter, or the character a long
/// option maps to) and its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Opt {
    pub(crate) key: char,
    pub(crate) value: Option<String>,
}

/// What a command line is made of.
#[derive(Debug, Clone, Default)]
pub(crate) struct Parsed {
    pub(crate) opts: Vec<Opt>,
    pub(crate) operands: Vec<String>,
}

impl Parsed {
    pub(crate) fn has(&self, key: char) -> bool {
        self.opts.iter().any(|o| o.key == key)
    }

    /// Every value given for `key`, in order (`od -t x1 -t c`).
    pub(crate) fn values(&self, key: char) -> Vec<&str> {
        self.opts
            .iter()
            .filter(|o| o.key == key)
            .filter_map(|o| o.value.as_deref())
            .collect()
    }

    /// The last value given for `key`.
    pub(crate) fn value(&self, key: char) -> Option<&str> {
        self.opts
            .iter()
            .rev()
            .find(|o| o.key == key)
            .and_then(|o| o.value.as_deref())
    }
}

/// The options a utility accepts. `short` is getopt's string: a letter
/// followed by `:` takes a value.
pub(crate) struct Spec<'a> {
    pub(crate) short: &'a str,
    pub(crate) long: &'a [(&'a str, char, HasArg)],
}

impl Spec<'_> {
    fn short_arg(&self, c: char) -> Option<bool> {
        let mut chars = self.short.chars().peekable();
        while let Some(s) = chars.next() {
            let takes = chars.peek() == Some(&':');
            if takes {
                chars.next();
            }
            if s == c && s != ':' {
                return Some(takes);
            }
        }
        None
    }

    /// Parses `args` (without argv[0]). On error, returns getopt's message.
    pub(crate) fn parse(&self, args: &[String]) -> Result<Parsed, String> {
        let mut parsed = Parsed::default();
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            i += 1;
            if arg == "--" {
                parsed
                    .operands
                    .extend(args.get(i..).unwrap_or_default().iter().cloned());
                break;
            }
            if let Some(body) = arg.strip_prefix("--") {
                let (name, inline) = match body.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (body, None),
                };
                let exact = self.long.iter().find(|(l, _, _)| *l == name);
                let candidates: Vec<&(&str, char, HasArg)> = match exact {
                    Some(e) => vec![e],
                    None => self
                        .long
                        .iter()
                        .filter(|(l, _, _)| l.starts_with(name))
                        .collect(),
                };
                let distinct = {
                    let mut keys: Vec<char> = candidates.iter().map(|c| c.1).collect();
                    keys.dedup();
                    keys.len()
                };
                let Some(&&(long, key, has)) = candidates.first() else {
                    return Err(format!("unrecognized option '--{name}'"));
                };
                if distinct > 1 {
                    let names: Vec<String> =
                        candidates.iter().map(|c| format!("'--{}'", c.0)).collect();
                    return Err(format!(
                        "option '--{name}' is ambiguous; possibilities: {}",
                        names.join(" ")
                    ));
                }
                let value = match (has, inline) {
                    (HasArg::No, Some(_)) => {
                        return Err(format!("option '--{long}' doesn't allow an argument"));
                    }
                    (HasArg::No, None) | (HasArg::Optional, None) => None,
                    (_, Some(v)) => Some(v),
                    (HasArg::Yes, None) => {
                        let Some(v) = args.get(i) else {
                            return Err(format!("option '--{long}' requires an argument"));
                        };
                        i += 1;
                        Some(v.clone())
                    }
                };
                parsed.opts.push(Opt { key, value });
                continue;
            }
            if arg == "-" || !arg.starts_with('-') {
                parsed.operands.push(arg.clone());
                continue;
            }
            let body: Vec<char> = arg.chars().skip(1).collect();
            let mut j = 0;
            while let Some(&c) = body.get(j) {
                j += 1;
                match self.short_arg(c) {
                    None => return Err(format!("invalid option -- '{c}'")),
                    Some(false) => parsed.opts.push(Opt {
                        key: c,
                        value: None,
                    }),
                    Some(true) => {
                        let rest: String = body.get(j..).unwrap_or_default().iter().collect();
                        let value = if rest.is_empty() {
                            let Some(v) = args.get(i) else {
                                return Err(format!("option requires an argument -- '{c}'"));
                            };
                            i += 1;
                            v.clone()
                        } else {
                            rest
                        };
                        parsed.opts.push(Opt {
                            key: c,
                            value: Some(value),
                        });
                        break;
                    }
                }
            }
        }
        Ok(parsed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    const SPEC: Spec<'static> = Spec {
        short: "n:qv",
        long: &[
            ("lines", 'n', HasArg::Yes),
            ("quiet", 'q', HasArg::No),
            ("silent", 'q', HasArg::No),
        ],
    };

    #[test]
    fn values_attached_or_separate() {
        let p = SPEC
            .parse(&strings(&["-n5", "f", "-qn", "3", "--lin=7"]))
            .unwrap();
        assert_eq!(p.value('n'), Some("7"));
        assert!(p.has('q'));
        assert_eq!(p.operands, vec!["f"]);
    }

    #[test]
    fn getopt_messages() {
        assert_eq!(
            SPEC.parse(&strings(&["-x"])).unwrap_err(),
            "invalid option -- 'x'"
        );
        assert_eq!(
            SPEC.parse(&strings(&["-n"])).unwrap_err(),
            "option requires an argument -- 'n'"
        );
        assert_eq!(
            SPEC.parse(&strings(&["--nope"])).unwrap_err(),
            "unrecognized option '--nope'"
        );
        assert_eq!(
            SPEC.parse(&strings(&["--", "-q"])).unwrap().operands,
            vec!["-q"]
        );
    }
}

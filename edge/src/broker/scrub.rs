//! The scrubber: every secret the broker attaches (provider keys,
//! connection credentials) is registered here, and its value is cut out of
//! everything that comes back before the model, the timeline, the store or
//! the sandbox see it: upstream bodies, provider errors and answers, and
//! (as a last line) every event a run writes and its stored output and
//! error. Besides the raw value it finds the common encodings an echoing
//! upstream produces: JSON-escaped, URL-encoded (either hex case),
//! hexadecimal, and base64 (standard and URL-safe, at each of the three
//! alignments the value can have inside a longer encoded text, such as a
//! `Basic` header or `Bearer <key>` encoded whole).

use std::collections::BTreeSet;
use std::sync::RwLock;

use base64::Engine;
use serde_json::Value;

/// What a secret is replaced with.
pub const REDACTED: &str = "[redacted]";
/// Shorter values are not scrubbed at all (they would cut ordinary text
/// apart, and are no secret).
const MIN_SECRET: usize = 4;
/// Encoded forms are looked for only for values at least this long, and
/// only kept when at least `MIN_NEEDLE` characters are left of them.
const MIN_ENCODED_SECRET: usize = 8;
const MIN_NEEDLE: usize = 6;

/// The set of secrets, shared by every run of the server.
#[derive(Default)]
pub struct Scrubber {
    inner: RwLock<Needles>,
}

#[derive(Default)]
struct Needles {
    secrets: BTreeSet<String>,
    /// Every form of every secret, longest first.
    needles: Vec<String>,
}

impl Scrubber {
    /// A scrubber that knows no secrets yet.
    pub fn new() -> Scrubber {
        Scrubber::default()
    }

    /// Registers a secret (idempotent); values shorter than 4 bytes are ignored.
    pub fn add(&self, secret: &str) {
        let secret = secret.trim();
        if secret.len() < MIN_SECRET {
            return;
        }
        if self.read().secrets.contains(secret) {
            return;
        }
        let mut inner = self.inner.write().unwrap_or_else(|p| p.into_inner());
        if !inner.secrets.insert(secret.to_string()) {
            return;
        }
        let mut all: BTreeSet<String> = inner.needles.drain(..).collect();
        all.extend(forms(secret));
        let mut needles: Vec<String> = all.into_iter().collect();
        needles.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        inner.needles = needles;
    }

    /// The longest form of any secret, in bytes (0 with none registered).
    pub fn longest(&self) -> usize {
        self.read().needles.first().map_or(0, String::len)
    }

    /// `text` with every form of every secret replaced by `[redacted]`.
    pub fn scrub(&self, text: &str) -> String {
        let inner = self.read();
        let mut out: Option<String> = None;
        for needle in &inner.needles {
            let current = out.as_deref().unwrap_or(text);
            if current.contains(needle.as_str()) {
                out = Some(current.replace(needle.as_str(), REDACTED));
            }
        }
        out.unwrap_or_else(|| text.to_string())
    }

    /// Scrubs every string (and object key) inside a JSON value.
    pub fn scrub_json(&self, value: &mut Value) {
        if self.read().needles.is_empty() {
            return;
        }
        match value {
            Value::String(s) => *s = self.scrub(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.scrub_json(v)),
            Value::Object(map) => {
                let dirty: Vec<String> = map
                    .keys()
                    .filter(|k| self.scrub(k) != **k)
                    .cloned()
                    .collect();
                for key in dirty {
                    if let Some(v) = map.remove(&key) {
                        map.insert(self.scrub(&key), v);
                    }
                }
                map.values_mut().for_each(|v| self.scrub_json(v));
            }
            _ => {}
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Needles> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }
}

/// The forms of one secret looked for.
fn forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_string()];
    if secret.len() < MIN_ENCODED_SECRET {
        return forms;
    }
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json.trim_matches('"').to_string());
    }
    forms.push(url_encoded(secret, false, false));
    forms.push(url_encoded(secret, true, false));
    forms.push(url_encoded(secret, false, true));
    forms.push(url_encoded(secret, true, true));
    forms.push(hex::encode(secret));
    forms.push(hex::encode_upper(secret));
    for engine in [
        &base64::engine::general_purpose::STANDARD,
        &base64::engine::general_purpose::URL_SAFE,
    ] {
        forms.extend(base64_cores(engine, secret.as_bytes()));
    }
    forms.retain(|f| f.len() >= MIN_NEEDLE.min(secret.len()));
    forms.sort();
    forms.dedup();
    forms
}

/// Percent-encoding of everything but RFC 3986's unreserved characters
/// (`lower`: lower-case hex digits; `plus`: a space as `+`, as forms do).
fn url_encoded(secret: &str, lower: bool, plus: bool) -> String {
    let mut out = String::with_capacity(secret.len() * 3);
    for b in secret.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(char::from(b));
            }
            b' ' if plus => out.push('+'),
            _ if lower => out.push_str(&format!("%{b:02x}")),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The part of the base64 text of `secret` that does not depend on what
/// surrounds it, for each of the three offsets it can start at.
fn base64_cores(engine: &base64::engine::GeneralPurpose, secret: &[u8]) -> Vec<String> {
    let mut cores = Vec::new();
    for offset in 0..3usize {
        let mut bytes = vec![0u8; offset];
        bytes.extend_from_slice(secret);
        let encoded = engine.encode(&bytes);
        // Character i carries bits [6i, 6i + 6) of the input.
        let start = (8 * offset).div_ceil(6);
        let end = (8 * (offset + secret.len())) / 6;
        if let Some(core) = encoded.get(start..end) {
            cores.push(core.to_string());
        }
    }
    cores
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};

    const KEY: &str = "tok-ECHO-SECRET-2222";

    fn scrubber() -> Scrubber {
        let s = Scrubber::new();
        s.add(KEY);
        s
    }

    #[test]
    fn raw_and_bearer_forms_are_cut() {
        let s = scrubber();
        let text = format!("authorization: Bearer {KEY}\nx-api-key: {KEY}\n");
        let clean = s.scrub(&text);
        assert!(!clean.contains(KEY), "{clean}");
        assert_eq!(
            clean,
            "authorization: Bearer [redacted]\nx-api-key: [redacted]\n"
        );
    }

    #[test]
    fn base64_at_every_alignment_is_cut() {
        let s = scrubber();
        for prefix in ["", "a", "ab", "Bearer ", "user:", "xyz"] {
            for suffix in ["", "!", "\n--", "ok"] {
                let whole = format!("{prefix}{KEY}{suffix}");
                for encoded in [STANDARD.encode(&whole), URL_SAFE_NO_PAD.encode(&whole)] {
                    let clean = s.scrub(&format!("data: {encoded} end"));
                    assert!(clean.contains(REDACTED), "{whole:?}: {clean}");
                    let decoded_tail = clean.replace(REDACTED, "");
                    assert!(!decoded_tail.contains(&encoded), "{whole:?}");
                }
            }
        }
    }

    #[test]
    fn url_json_and_hex_forms_are_cut() {
        let s = Scrubber::new();
        let key = "p@ss w/rd\"+é-12345";
        s.add(key);
        for text in [
            url_encoded(key, false, false),
            url_encoded(key, true, false),
            url_encoded(key, true, true),
            serde_json::to_string(key).unwrap(),
            hex::encode(key),
        ] {
            let clean = s.scrub(&format!("q={text}&x=1"));
            assert!(clean.contains(REDACTED), "{text}: {clean}");
        }
    }

    /// A bounded property test (the fuzz target `edge/fuzz` goes further):
    /// random secrets in random text, sent in each form an echoing
    /// upstream produces; what comes out never holds the form sent, and a
    /// base64 text decoded again never holds the secret.
    #[test]
    fn no_form_of_a_secret_survives_random_text() {
        use rand::{Rng, SeedableRng};
        // Secrets are tokens (no white space, which `add` trims); the text
        // around them is anything.
        let token: Vec<char> = "abcXYZ019-_+/=:;@%.\"\\é€".chars().collect();
        let text: Vec<char> = "abcXYZ019-_+/=:;@%. \"\\\n\té€".chars().collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(3);
        let text_of =
            |rng: &mut rand::rngs::StdRng, chars: &[char], range: std::ops::Range<usize>| {
                let len = rng.random_range(range);
                (0..len)
                    .map(|_| chars[rng.random_range(0..chars.len())])
                    .collect::<String>()
            };
        for _ in 0..3_000 {
            let secret = text_of(&mut rng, &token, MIN_ENCODED_SECRET..40);
            let s = Scrubber::new();
            s.add(&secret);
            let before = text_of(&mut rng, &text, 0..20);
            let after = text_of(&mut rng, &text, 0..20);
            let whole = format!("{before}{secret}{after}");
            let forms = [
                (whole.clone(), secret.clone()),
                (
                    format!("{before}{}{after}", url_encoded(&secret, false, false)),
                    url_encoded(&secret, false, false),
                ),
                (
                    serde_json::to_string(&whole).unwrap(),
                    serde_json::to_string(&secret)
                        .unwrap()
                        .trim_matches('"')
                        .to_string(),
                ),
                (
                    format!("{before}{}{after}", hex::encode(&secret)),
                    hex::encode(&secret),
                ),
            ];
            for (sent, form) in forms {
                let clean = s.scrub(&sent);
                assert!(!clean.contains(&form), "{secret:?} in {sent:?}: {clean:?}");
            }
            for encoded in [STANDARD.encode(&whole), URL_SAFE_NO_PAD.encode(&whole)] {
                let clean = s.scrub(&encoded);
                assert!(
                    clean.contains(REDACTED),
                    "{secret:?} in {whole:?}: {clean:?}"
                );
            }
        }
    }

    #[test]
    fn json_values_are_scrubbed_everywhere_and_short_values_ignored() {
        let s = scrubber();
        s.add("abc");
        s.add("");
        let mut v =
            serde_json::json!({"a": [KEY, {"b": format!("x{KEY}y")}], KEY: 1, "n": 3, "c": "abc"});
        s.scrub_json(&mut v);
        let text = v.to_string();
        assert!(!text.contains(KEY), "{text}");
        assert!(text.contains("\"c\":\"abc\""), "{text}");
        assert_eq!(s.scrub("plain text"), "plain text");
    }
}

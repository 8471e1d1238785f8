//! Any text around a secret in any of the forms an echoing upstream
//! produces: the scrubber never panics, and what it returns holds no form
//! of the secret it knows (findings B3, B5).
//!
//! cargo install cargo-fuzz
//! cd edge/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run scrubber -- -max_total_time=60

#![no_main]

use std::sync::OnceLock;

use base64::Engine;
use ephemeral_edge::broker::Scrubber;
use libfuzzer_sys::fuzz_target;

const SECRET: &str = "tok-ECHO-SECRET-2222";

fn scrubber() -> &'static Scrubber {
    static S: OnceLock<Scrubber> = OnceLock::new();
    S.get_or_init(|| {
        let s = Scrubber::new();
        s.add(SECRET);
        s.add("sk-FAKEMODEL-SECRET-1111");
        s
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&how, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    // The fuzzer's text, split in two around the secret in one form.
    let cut = text
        .char_indices()
        .map(|(i, _)| i)
        .nth(usize::from(how >> 3))
        .unwrap_or(text.len());
    let (before, after) = text.split_at(cut);
    let whole = format!("{before}{SECRET}{after}");
    let sent = match how & 7 {
        0 => whole.clone(),
        1 => base64::engine::general_purpose::STANDARD.encode(&whole),
        2 => base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&whole),
        3 => serde_json_escape(&whole),
        _ => text.to_string(),
    };
    let clean = scrubber().scrub(&sent);
    assert!(!clean.contains(SECRET), "{sent:?} -> {clean:?}");
    if how & 7 == 1 || how & 7 == 2 {
        // Decoded again, the secret is gone (what a reader could recover).
        for engine in [
            &base64::engine::general_purpose::STANDARD,
            &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        ] {
            if let Ok(bytes) = engine.decode(clean.trim()) {
                let decoded = String::from_utf8_lossy(&bytes);
                assert!(!decoded.contains(SECRET), "{sent:?} -> {clean:?}");
            }
        }
    }
});

/// The secret as a JSON string carries it (escapes only touch the rest).
fn serde_json_escape(s: &str) -> String {
    format!("{s:?}")
}

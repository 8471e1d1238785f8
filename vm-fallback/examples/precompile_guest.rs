//! Precompiles the shell and the programs for the microVM's worker (musl,
//! portable CPU baseline) into a cache folder the guest's initramfs takes:
//! `precompile_guest CACHE_DIR [PROGRAMS_DIR]`.

use ephemeral_runtime::{RuntimeConfig, precompile_for_target};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cache) = args.first() else {
        eprintln!("usage: precompile_guest CACHE_DIR [PROGRAMS_DIR]");
        std::process::exit(2);
    };
    let config = RuntimeConfig {
        cache_dir: Some(cache.into()),
        programs_dir: args.get(1).map(Into::into),
        portable_target: Some("x86_64-unknown-linux-musl".into()),
        ..RuntimeConfig::default()
    };
    match precompile_for_target(&config, false) {
        Ok(entries) => {
            for e in entries {
                println!("{}", e.display());
            }
        }
        Err(e) => {
            eprintln!("precompile_guest: {e}");
            std::process::exit(1);
        }
    }
}

//! Tries every way out of the sandbox's filesystem it is given in argv and
//! prints one line per path: `PATH: ok <first bytes>` or `PATH: err <error>`.
//! With `--write PATH BYTES` it instead fills PATH with that many bytes.
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--write") {
        let (path, len) = (&args[1], args[2].parse::<usize>().unwrap_or(0));
        let result = std::fs::File::create(path).and_then(|mut f| {
            let chunk = vec![b'x'; 64 << 10];
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk.len());
                f.write_all(&chunk[..n])?;
                left -= n;
            }
            Ok(())
        });
        match result {
            Ok(()) => println!("wrote {len}"),
            Err(e) => println!("write error: {e}"),
        }
        return;
    }
    for path in &args {
        match std::fs::read(path) {
            Ok(bytes) => println!(
                "{path}: ok {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(40)])
            ),
            Err(e) => match std::fs::read_dir(path) {
                Ok(entries) => {
                    let names: Vec<String> = entries
                        .flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect();
                    println!("{path}: dir {}", names.join(","))
                }
                Err(_) => println!("{path}: err {e}"),
            },
        }
    }
}

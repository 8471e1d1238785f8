//! Exercises the filesystem the way ordinary programs do (std::fs over
//! wasi-libc) and prints one line per step, so a test can compare the whole
//! transcript with what Linux gives.
use std::fs::{self, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};

fn step(name: &str, result: std::io::Result<String>) {
    match result {
        Ok(v) => println!("{name}: {v}"),
        // strerror text without the number, which differs between WASI
        // and Linux numbering.
        Err(e) => {
            let text = e.to_string();
            let text = text.split(" (os error").next().unwrap_or_default();
            println!("{name}: error {text}")
        }
    }
}

/// Rust's std has no `chdir` on WASI, but wasi-libc (linked into every
/// wasm32-wasip2 program) keeps a working folder that relative paths
/// resolve against; natively this is plain `chdir(2)`.
fn change_dir(path: &str) {
    #[cfg(target_os = "wasi")]
    {
        unsafe extern "C" {
            fn chdir(path: *const std::ffi::c_char) -> i32;
        }
        let c = std::ffi::CString::new(path).expect("no NUL");
        // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
        assert_eq!(unsafe { chdir(c.as_ptr()) }, 0, "chdir {path}");
    }
    #[cfg(not(target_os = "wasi"))]
    std::env::set_current_dir(path).expect("chdir");
}

fn main() {
    let base = std::env::args().nth(1).unwrap_or_else(|| ".".into());
    change_dir(&base);
    step("mkdir -p", fs::create_dir_all("a/b/c").map(|_| "ok".into()));
    step(
        "write",
        fs::write("a/f.txt", "hello\n").map(|_| "ok".into()),
    );
    step(
        "append",
        (|| {
            let mut f = OpenOptions::new().append(true).open("a/f.txt")?;
            f.write_all(b"world\n")?;
            Ok("ok".into())
        })(),
    );
    step("read", fs::read_to_string("a/f.txt"));
    step(
        "seek+overwrite",
        (|| {
            let mut f = OpenOptions::new().read(true).write(true).open("a/f.txt")?;
            f.seek(SeekFrom::Start(1))?;
            f.write_all(b"E")?;
            f.seek(SeekFrom::Start(0))?;
            let mut s = String::new();
            f.read_to_string(&mut s)?;
            Ok(s.replace('\n', "|"))
        })(),
    );
    step(
        "set_len",
        (|| {
            let f = OpenOptions::new().write(true).open("a/f.txt")?;
            f.set_len(3)?;
            Ok(fs::metadata("a/f.txt")?.len().to_string())
        })(),
    );
    step(
        "rename",
        fs::rename("a/f.txt", "a/b/g.txt").map(|_| "ok".into()),
    );
    step(
        "old gone",
        fs::metadata("a/f.txt").map(|_| "still there".into()),
    );
    step(
        "readdir",
        (|| {
            let mut names: Vec<String> = fs::read_dir("a/b")?
                .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect::<Result<_, _>>()?;
            names.sort();
            Ok(names.join(","))
        })(),
    );
    step(
        "is_dir",
        fs::metadata("a/b/c").map(|m| format!("{} {}", m.is_dir(), m.is_file())),
    );
    step(
        "mtime recent",
        fs::metadata("a/b/g.txt")
            .and_then(|m| m.modified())
            .map(|t| {
                let age = std::time::SystemTime::now()
                    .duration_since(t)
                    .unwrap_or_default();
                (age.as_secs() < 60).to_string()
            }),
    );
    step(
        "hard link",
        fs::hard_link("a/b/g.txt", "a/h.txt").map(|_| "ok".into()),
    );
    step("read link", fs::read_to_string("a/h.txt"));
    step(
        "rmdir non-empty",
        fs::remove_dir("a/b").map(|_| "removed".into()),
    );
    step(
        "remove file",
        fs::remove_file("a/h.txt").map(|_| "ok".into()),
    );
    step(
        "remove_dir_all",
        fs::remove_dir_all("a").map(|_| "ok".into()),
    );
    step("gone", fs::metadata("a").map(|_| "still there".into()));
    step(
        "create_new twice",
        (|| {
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open("once")?;
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .open("once")?;
            Ok("both".into())
        })(),
    );
    step(
        "dev null",
        fs::write("/dev/null", "discarded").map(|_| "ok".into()),
    );
    step(
        "tmp writable",
        (|| {
            let path = "/tmp/fs-ops-probe";
            fs::write(path, "x")?;
            fs::remove_file(path)?;
            Ok("ok".into())
        })(),
    );
    step(
        "cwd",
        std::env::current_dir().map(|p| p.display().to_string().replace(&base, "BASE")),
    );
}

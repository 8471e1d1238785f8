//! A real PostgreSQL server for the tests: Debian's package (the newest
//! `/usr/lib/postgresql/*/bin`), one cluster per test process in a
//! temporary folder, a fresh database per test.
//!
//! The cluster listens on a unix socket in its own folder only, so test
//! binaries running in parallel never compete for a port. It runs as the
//! `postgres` user when the tests run as root (PostgreSQL refuses root),
//! under a small `sh` watchdog whose stdin is a pipe from this process:
//! when the process ends, however it ends, the pipe closes and the
//! watchdog stops the server and deletes the folder.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Socket file name suffix; any number will do, the folder is ours alone.
const PORT: u16 = 5432;
const READY_WITHIN: Duration = Duration::from_secs(60);

/// The watchdog: PostgreSQL in the background, and a reader of our pipe
/// that, on EOF, stops it and deletes the folder. `sh` itself exits with
/// PostgreSQL, which is how a failed start is noticed (log kept till EOF).
const WATCHDOG: &str = r#"
bin="$1"; root="$2"; shift 2
exec 3<&0
"$@" "$bin/postgres" -D "$root/data" -k "$root" -p 5432 \
    -c listen_addresses= -c fsync=off -c synchronous_commit=off \
    -c full_page_writes=off -c max_connections=400 -c shared_buffers=32MB \
    >"$root/postgres.log" 2>&1 &
pg=$!
(
    read -r _
    kill -INT "$pg" 2>/dev/null
    while kill -0 "$pg" 2>/dev/null; do sleep 0.1; done
    rm -rf "$root"
) <&3 &
wait "$pg"
"#;

struct Cluster {
    root: PathBuf,
    /// Never waited on: it must outlive every test of the process.
    _watchdog: Child,
}

static CLUSTER: OnceLock<Cluster> = OnceLock::new();
static DATABASES: AtomicU32 = AtomicU32::new(0);

/// A new, empty database on this process's cluster (started on first
/// use); its connection URL.
pub async fn fresh_database() -> String {
    let root = tokio::task::spawn_blocking(|| CLUSTER.get_or_init(Cluster::start).root.clone())
        .await
        .expect("the PostgreSQL test cluster starts");
    let name = format!(
        "test_{}_{}",
        std::process::id(),
        DATABASES.fetch_add(1, Ordering::SeqCst)
    );
    let (client, connection) =
        tokio_postgres::connect(&url(&root, "postgres"), tokio_postgres::NoTls)
            .await
            .expect("connect to the PostgreSQL test cluster");
    let driver = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    drop(client);
    let _ = driver.await;
    url(&root, &name)
}

/// `postgresql://` URL of `database` over the socket in `root`.
pub fn url(root: &Path, database: &str) -> String {
    let mut host = String::new();
    for byte in root.to_string_lossy().bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => host.push(byte as char),
            other => host.push_str(&format!("%{other:02X}")),
        }
    }
    format!("postgresql://postgres@{host}:{PORT}/{database}")
}

impl Cluster {
    fn start() -> Cluster {
        let bin = postgres_bin();
        // /tmp rather than $TMPDIR: the `postgres` user must reach it, and
        // a unix socket path must stay short.
        let root = Path::new("/tmp").join(format!(
            "ephemeral-pg-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&root).expect("create the cluster folder");
        let run_as = run_as(&root);
        let initdb = Command::new(run_as.first().map_or("env", String::as_str))
            .args(run_as.iter().skip(1))
            .arg(bin.join("initdb"))
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"])
            .args(["--no-sync", "--no-instructions", "-D"])
            .arg(root.join("data"))
            .current_dir(&root)
            .output()
            .expect("run initdb");
        assert!(
            initdb.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&initdb.stderr)
        );
        let mut watchdog = Command::new("sh")
            .args(["-c", WATCHDOG, "watchdog"])
            .arg(&bin)
            .arg(&root)
            .args(&run_as)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the PostgreSQL watchdog");
        wait_ready(&bin, &root, &mut watchdog);
        Cluster {
            root,
            _watchdog: watchdog,
        }
    }
}

/// The newest installed PostgreSQL's `bin` folder; fails the test (never
/// skips it) when there is none.
fn postgres_bin() -> PathBuf {
    let newest = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .max();
    match newest {
        Some((_, bin)) => bin,
        None => panic!(
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb): \
             run `./dev test` once, or `apt-get install postgresql`"
        ),
    }
}

/// The command prefix that drops root for PostgreSQL (empty when not
/// root), after giving the folder to that user.
fn run_as(root: &Path) -> Vec<String> {
    let me = std::fs::metadata("/proc/self")
        .map(|m| m.uid())
        .unwrap_or(0);
    if me != 0 {
        return Vec::new();
    }
    let (uid, gid) = postgres_user().expect(
        "the tests run as root and there is no `postgres` user to run PostgreSQL as \
         (Debian's postgresql package creates it)",
    );
    std::os::unix::fs::chown(root, Some(uid), Some(gid)).expect("chown the cluster folder");
    [
        "setpriv",
        "--reuid=postgres",
        "--regid=postgres",
        "--clear-groups",
        "--",
    ]
    .map(String::from)
    .to_vec()
}

/// `(uid, gid)` of the `postgres` user, from /etc/passwd.
fn postgres_user() -> Option<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    let line = passwd.lines().find(|l| l.starts_with("postgres:"))?;
    let mut fields = line.split(':').skip(2);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

fn wait_ready(bin: &Path, root: &Path, watchdog: &mut Child) {
    let started = Instant::now();
    loop {
        let ready = Command::new(bin.join("pg_isready"))
            .arg("-h")
            .arg(root)
            .args(["-p", &PORT.to_string(), "-t", "1", "-q"])
            .status()
            .is_ok_and(|s| s.success());
        if ready {
            return;
        }
        let exited = watchdog.try_wait().ok().flatten().is_some();
        if exited || started.elapsed() > READY_WITHIN {
            let mut log = String::new();
            let _ = std::fs::File::open(root.join("postgres.log"))
                .and_then(|mut f| f.read_to_string(&mut log));
            panic!("the PostgreSQL test cluster did not start:\n{log}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

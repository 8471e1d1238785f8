//! The release, as an operator runs it on a hardware-KVM host: inside the
//! lab (a real AMD SVM KVM under QEMU's TCG) the tarball `./dev dist` made
//! is unpacked and `ephemeral serve --min-isolation kvm` started from it,
//! with no variable set. From a client in the lab (`ephemeral run`):
//! - the seed request: `vm.ready` says `kvm+wasm`, every lane of the seed
//!   is there with the seed's real outputs, the run succeeds and is settled;
//! - ten more runs, each a microVM the pool restored ahead of demand;
//! - a VMM `kill -9`'d mid-run fails only its run (`sandbox_failed`, named)
//!   and the next run works;
//! - the server's own `kill -9` mid-run: at restart the run is settled
//!   (`failed`, `interrupted`) and no VMM of the old server is left.
//!
//! The tarball is `$EPHEMERAL_DIST_TARBALL` (`./dev test` builds it
//! first), else `./dev dist` is run for it.

mod support;

use std::path::PathBuf;
use std::process::Command;

use support::{file, lab_for, section};

fn tarball() -> PathBuf {
    if let Some(path) = std::env::var_os("EPHEMERAL_DIST_TARBALL") {
        return path.into();
    }
    let repo = support::crate_dir().join("..");
    let out = Command::new(repo.join("dev"))
        .arg("dist")
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MAKEFLAGS")
        .output()
        .expect("cannot run ./dev dist");
    assert!(
        out.status.success(),
        "./dev dist failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(
        stdout
            .lines()
            .last()
            .expect("./dev dist prints the tarball")
            .trim(),
    )
}

/// Moves the lab into a tmpfs root (the jail's `pivot_root` refuses the
/// initramfs, as a server's root is a real filesystem), unpacks the
/// release there, and runs the steps.
const SETUP: &str = r#"
echo "==> unpack"
mkdir -p /jr && mount -t tmpfs -o size=5g jr /jr && cd /jr &&
mkdir -p proc sys dev tmp bin etc opt var/lib/ephemeral &&
cp /bin/busybox bin/ && for a in $(busybox --list); do [ "$a" = busybox ] || ln -sf busybox bin/$a; done &&
t0=$(cut -d' ' -f1 /proc/uptime) &&
tar -xzf /lab/release.tar.gz -C opt && rm /lab/release.tar.gz &&
echo "unpacked in $(awk -v t0=$t0 '{print $1 - t0}' /proc/uptime) s" &&
cp /lab/steps.sh /lab/lab.toml /lab/hi.toml /lab/sleep.toml /lab/*.json etc/ &&
mount -t proc proc proc && mount -t sysfs sys sys && mount -t cgroup2 none sys/fs/cgroup &&
mount -t devtmpfs dev dev
echo "<== unpack: exit $?"
mount -o move /jr / && exec chroot . /bin/sh /etc/steps.sh
"#;

/// What the client and the operator do, in the release's root.
const STEPS: &str = r#"
export PATH=/bin
R=$(echo /opt/ephemeral-*)
E=$R/bin/ephemeral
ip link set lo up
CONF="--config /etc/lab.toml --data /var/lib/ephemeral"

echo "==> doctor"
$E doctor 2>&1
echo "<== doctor: exit $?"

KEY=$($E keys create --org lab $CONF 2>/dev/null)
$E orgs set --org lab --balance-micros 100000000 $CONF >/dev/null 2>&1
export EPHEMERAL_URL=http://127.0.0.1:8080 EPHEMERAL_API_KEY=$KEY

now() { cut -d' ' -f1 /proc/uptime; }
serve() {
    : >/tmp/serve.log
    $E serve --min-isolation kvm $CONF >/tmp/serve.log 2>&1 &
    SERVER=$!
    n=0
    while ! grep -q "listening on" /tmp/serve.log; do
        kill -0 $SERVER 2>/dev/null || { cat /tmp/serve.log; return 1; }
        n=$((n + 1)); [ $n -gt 1500 ] && { cat /tmp/serve.log; return 1; }
        sleep 1
    done
}
# The pool's VMM processes, oldest first.
vmms() { ps -o pid,args | grep '[e]phemeral-vmm serve' | awk '{print $1}' | sort -n; }
alive() { [ -e /proc/$1/status ] && ! grep -q '^State:.*Z' /proc/$1/status; }
# Waits until FILE shows the command's first output (a marker its own
# command line does not contain).
wait_for_output() {
    n=0
    until grep -q 'asleep-now' "$1"; do
        n=$((n + 1)); [ $n -gt 600 ] && return 1
        sleep 1
    done
}

echo "==> serve"
t0=$(now)
serve
echo "serve exit $?: listening after $(awk -v t0=$t0 '{print $1 - t0}' /proc/uptime) s"
cat /tmp/serve.log
echo "pool: $(vmms | wc -l) VMM processes restored ahead"
echo "<== serve: exit 0"

echo "==> seed"
$E run --json /etc/seed.json
echo "<== seed: exit $?"

echo "==> pooled"
i=1
while [ $i -le 10 ]; do
    sleep 2
    $E run --json /etc/hi.json >/tmp/run.$i 2>&1
    echo "run $i: exit $? $(grep '"vm.ready"' /tmp/run.$i) $(grep -c '"hi from the pool"' /tmp/run.$i)"
    i=$((i + 1))
done
echo "<== pooled: exit 0"

echo "==> vmm-kill"
$E run --json /etc/sleep.json >/tmp/k.out 2>/tmp/k.err &
RUN=$!
wait_for_output /tmp/k.out
BUSY=$(vmms | head -1)
echo "killing VMM $BUSY of $(vmms | wc -l)"
kill -9 $BUSY
wait $RUN
echo "killed run: exit $?"
grep -E '"run\.(failed|succeeded)"' /tmp/k.out
$E run --json /etc/hi.json >/tmp/after 2>&1
echo "next run: exit $? $(grep -c '"hi from the pool"' /tmp/after)"
echo "<== vmm-kill: exit 0"

echo "==> server-kill"
$E run --json /etc/sleep.json >/tmp/s.out 2>/tmp/s.err &
RUN=$!
wait_for_output /tmp/s.out
ID=$(sed -n 's/^run //p' /tmp/s.err)
OLD=$(vmms)
echo "killing the server with $(echo $OLD | wc -w) VMMs, run $ID in flight"
kill -9 $SERVER
wait $RUN
sleep 5
serve
echo "restarted: exit $?"
for p in $OLD; do alive $p && echo "left: VMM $p"; done
# (busybox nc quits when its input ends: the input waits for the answer)
{ printf 'GET /v1/runs/%s HTTP/1.0\r\nAuthorization: Bearer %s\r\n\r\n' "$ID" "$KEY"; sleep 5; } |
    nc 127.0.0.1 8080 | tail -1
echo
$E run --json /etc/hi.json >/tmp/after2 2>&1
echo "next run: exit $? $(grep -c '"hi from the pool"' /tmp/after2)"
echo "<== server-kill: exit 0"
kill $SERVER
wait $SERVER
"#;

const LAB_CONFIG: &str = r#"
listen = "127.0.0.1:8080"
default_model = "scripted/seed"
min_isolation = "kvm"

[workers]
pool_size = 1

[models."scripted/hi"]
provider = "scripted"
upstream = "/etc/hi.toml"

[models."scripted/sleep"]
provider = "scripted"
upstream = "/etc/sleep.toml"
"#;

const HI_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "shell"
command = "echo hi from the pool"

[[turn]]
answer = "{{call_1.stdout}}"
"#;

const SLEEP_SCRIPT: &str = r#"
[[turn]]
[[turn.call]]
tool = "shell"
command = "echo asleep''-now; sleep 120; echo woke"

[[turn]]
answer = "{{call_1.stdout}}"
"#;

/// The request of SEED.md, as the page sends it.
const SEED_REQUEST: &str = r#"{
  "prompt": "This is a sandbox test. Do these steps with the shell and report the real output, never what you expect. 1) Write a small script that prints the first 15 prime numbers, run it and show the output. 2) Run `whoami` and `pwd`. 3) Try to reach the internet with `curl -sS -m 8 https://example.com` (and, if curl is missing, python3 with urllib) and report the exact error. 4) Write a file named /tmp/proof.txt and list it. Reply in Markdown, at most 120 words: one line per step with the result, then one sentence saying whether the network call succeeded.",
  "web": false,
  "shell": true,
  "timeout_seconds": 120,
  "max_cost_micros": 40000
}"#;

fn request(model: &str) -> String {
    format!(
        r#"{{"prompt": "lab", "model": "{model}", "shell": true, "web": false, "timeout_seconds": 300, "max_cost_micros": 40000}}"#
    )
}

#[test]
fn the_release_serves_runs_from_microvms_in_the_lab() {
    let tarball = tarball();
    let dir = tempfile::tempdir().unwrap();
    let put = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        file(&path, &format!("/lab/{name}"))
    };
    let seed = SEED_REQUEST.replace("\"timeout_seconds\": 120", "\"timeout_seconds\": 600");
    let files = vec![
        file(&tarball, "/lab/release.tar.gz"),
        put("steps.sh", STEPS),
        put("lab.toml", LAB_CONFIG),
        put("hi.toml", HI_SCRIPT),
        put("sleep.toml", SLEEP_SCRIPT),
        put("seed.json", &seed),
        put("hi.json", &request("scripted/hi")),
        put("sleep.json", &request("scripted/sleep")),
    ];
    // Unpacking and the template's boot under TCG take minutes.
    let out = lab_for(&files, SETUP, 2400);
    let stdout = String::from_utf8_lossy(&out.stdout);

    let unpack = section(&stdout, "unpack");
    assert_eq!(unpack.last(), Some(&"<== unpack: exit 0"), "{unpack:?}");

    // Every part found by the release's layout; the host can serve kvm+wasm.
    let doctor = section(&stdout, "doctor").join("\n");
    assert!(
        doctor.contains("release: parts under /opt/ephemeral-"),
        "{doctor}"
    );
    for part in ["vmm", "guest", "guest-init", "programs"] {
        assert!(
            doctor
                .lines()
                .any(|l| l.starts_with("ok ") && l.split_whitespace().nth(1) == Some(part)),
            "{part} not found:\n{doctor}"
        );
    }
    assert!(doctor.contains("yes  kvm+wasm"), "{doctor}");
    assert!(
        doctor.contains("isolation this build uses: kvm+wasm"),
        "{doctor}"
    );

    let serve = section(&stdout, "serve").join("\n");
    assert!(serve.contains("serve exit 0"), "{serve}");
    assert!(
        serve.contains("pool: 1 VMM processes restored ahead"),
        "{serve}"
    );

    // The seed: kvm+wasm, its four steps' real outputs, succeeded, settled.
    let seed = section(&stdout, "seed");
    let events: Vec<serde_json::Value> = seed
        .iter()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        events.iter().filter(|e| e["type"] == kind).collect()
    };
    assert_eq!(seed.last(), Some(&"<== seed: exit 0"), "{seed:#?}");
    let ready = of("vm.ready");
    assert_eq!(ready.len(), 1, "{seed:#?}");
    assert_eq!(ready[0]["data"]["isolation"], "kvm+wasm", "{seed:#?}");
    // Every lane of the seed's timeline.
    for kind in [
        "budget.reserved",
        "vm.ready",
        "worker.started",
        "model.call",
        "shell.command",
        "shell.output",
        "shell.exit",
        "vm.destroyed",
        "run.succeeded",
        "worker.destroyed",
    ] {
        assert!(!of(kind).is_empty(), "no {kind} in {seed:#?}");
    }
    let all = seed.join("\n");
    for output in [
        "2 3 5 7 11 13 17 19 23 29 31 37 41 43 47",
        "/tmp/proof.txt",
        "sandbox",
    ] {
        assert!(
            all.contains(output),
            "{output} missing from the seed:\n{all}"
        );
    }
    // Settled: charged and released make up what was reserved.
    let settled = &of("worker.destroyed")[0]["data"];
    let charged = settled["charged_micros"].as_i64().unwrap_or(-1);
    let released = settled["released_micros"].as_i64().unwrap_or(-1);
    assert!(charged > 0 && released >= 0, "{settled}");
    assert_eq!(charged + released, 40_000, "{settled}");

    // Ten runs from the pool, each from a restored microVM.
    let pooled = section(&stdout, "pooled");
    let runs: Vec<&&str> = pooled.iter().filter(|l| l.starts_with("run ")).collect();
    assert_eq!(runs.len(), 10, "{pooled:#?}");
    for run in &runs {
        assert!(
            run.contains(": exit 0 ") && run.contains("kvm+wasm") && run.ends_with(" 1"),
            "{run}"
        );
    }

    // A VMM killed under its run: that run fails, named; the next works.
    let killed = section(&stdout, "vmm-kill").join("\n");
    assert!(killed.contains("killed run: exit 1"), "{killed}");
    assert!(
        killed.contains("\"run.failed\"") && killed.contains("sandbox_failed"),
        "{killed}"
    );
    assert!(killed.contains("next run: exit 0 1"), "{killed}");

    // The server killed under a run: settled at restart, no VMM left.
    let crashed = section(&stdout, "server-kill").join("\n");
    assert!(crashed.contains("restarted: exit 0"), "{crashed}");
    assert!(!crashed.contains("left: VMM"), "{crashed}");
    let record: serde_json::Value = crashed
        .lines()
        .filter(|l| l.starts_with('{'))
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no run record in:\n{crashed}"));
    assert_eq!(record["status"], "failed", "{record}");
    assert_eq!(record["error"]["code"], "interrupted", "{record}");
    assert!(crashed.contains("next run: exit 0 1"), "{crashed}");
}

//! A bounded fuzz run of the protocol decoder, in every CI run: valid
//! frames of every message, mutated (bytes flipped, inserted, removed,
//! lengths forged, frames cut) and pure noise, decoded in both directions.
//! Each is a message or an error, never a panic; whatever decodes
//! re-encodes to the same message. (`worker/fuzz` runs the same target
//! under libFuzzer for longer.)

use std::time::{Duration, Instant};

use ephemeral_worker::protocol::{
    FromWorker, GuestIdentity, MAX_FRAME_BYTES, Probe, ToWorker, WireExit, WireLimit, WireLimits,
    WireStream, WireUsage, decode, encode,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Wall time of the run: long enough for ~10⁵ cases, short enough for CI.
const BUDGET: Duration = Duration::from_secs(3);

fn seeds() -> Vec<Vec<u8>> {
    let limits = WireLimits {
        command_timeout_ms: 1000,
        sandbox_timeout_ms: 2000,
        memory_bytes: 1 << 20,
        output_bytes: 1 << 10,
        disk_bytes: 1 << 20,
        disk_files: 10,
    };
    let to = [
        ToWorker::Start {
            limits,
            guest: Some(GuestIdentity {
                run_id: "run_1".into(),
                unix_time_ns: 1,
                entropy: vec![7; 32],
            }),
        },
        ToWorker::PutFile {
            path: "/tmp/f".into(),
            contents: vec![1; 40],
        },
        ToWorker::Exec {
            id: 3,
            command: "echo hi".into(),
            timeout_ms: 5,
            stdin: b"in".to_vec(),
            env: vec![("K".into(), "v".into())],
        },
        ToWorker::File {
            op: ephemeral_worker::protocol::FileOp::Read {
                path: "a".into(),
                offset: 0,
                len: 9,
            },
        },
        ToWorker::Usage,
        ToWorker::Destroy,
        ToWorker::Probe {
            probe: Probe::OpenHostPath { path: "/x".into() },
        },
    ];
    let from = [
        FromWorker::Ready { version: 1, pid: 9 },
        FromWorker::Output {
            id: 1,
            stream: WireStream::Stdout,
            data: b"hello".to_vec(),
        },
        FromWorker::Exit {
            id: 1,
            exit: WireExit {
                exit_code: 1,
                duration_us: 5,
                limit: Some(WireLimit::Output),
                truncated: true,
                error: Some("e".into()),
            },
        },
        FromWorker::Destroyed {
            usage: WireUsage::default(),
        },
        FromWorker::ProbeResult {
            probe: Probe::Fork,
            refused: true,
            detail: "d".into(),
        },
    ];
    let mut seeds: Vec<Vec<u8>> = to.iter().map(|m| encode(m).unwrap()).collect();
    seeds.extend(from.iter().map(|m| encode(m).unwrap()));
    seeds
}

fn mutate(rng: &mut StdRng, frame: &mut Vec<u8>) {
    for _ in 0..rng.random_range(1..4) {
        match rng.random_range(0..6) {
            0 if !frame.is_empty() => {
                let i = rng.random_range(0..frame.len());
                frame[i] ^= 1 << rng.random_range(0..8);
            }
            1 => {
                let i = rng.random_range(0..=frame.len());
                frame.insert(i, rng.random());
            }
            2 if !frame.is_empty() => {
                let i = rng.random_range(0..frame.len());
                frame.remove(i);
            }
            3 if frame.len() >= 4 => {
                let forged: u32 = match rng.random_range(0..3) {
                    0 => rng.random(),
                    1 => u32::MAX,
                    _ => (MAX_FRAME_BYTES as u32).wrapping_add(rng.random_range(0..3)),
                };
                frame[..4].copy_from_slice(&forged.to_le_bytes());
            }
            4 => frame.truncate(rng.random_range(0..=frame.len())),
            _ => {
                // A varint length inside the body claiming a huge vector.
                frame.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
            }
        }
    }
}

fn check(bytes: &[u8]) {
    if let Ok(Some((m, used))) = decode::<ToWorker>(bytes) {
        assert!(used <= bytes.len());
        assert_eq!(
            decode::<ToWorker>(&encode(&m).unwrap()).unwrap().unwrap().0,
            m
        );
    }
    if let Ok(Some((m, used))) = decode::<FromWorker>(bytes) {
        assert!(used <= bytes.len());
        assert_eq!(
            decode::<FromWorker>(&encode(&m).unwrap())
                .unwrap()
                .unwrap()
                .0,
            m
        );
    }
}

#[test]
fn mangled_frames_never_panic() {
    let seeds = seeds();
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let started = Instant::now();
    let mut cases = 0u64;
    while started.elapsed() < BUDGET {
        let mut frame = seeds[rng.random_range(0..seeds.len())].clone();
        mutate(&mut rng, &mut frame);
        check(&frame);
        let noise: Vec<u8> = (0..rng.random_range(0..64)).map(|_| rng.random()).collect();
        check(&noise);
        cases += 2;
    }
    assert!(cases > 1_000, "only {cases} cases ran");
}

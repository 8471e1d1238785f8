//! A hostile host: garbage, forged lengths and other versions sent to a
//! real worker process end it with an error — not a panic, not a hang, not
//! an allocation of what the frame claims.

mod support;

use std::io::{Read, Write};
use std::time::Duration;

use ephemeral_worker::protocol::VERSION;

fn ends_cleanly(bytes: &[u8]) {
    let (mut child, mut stream) = support::start_unjailed();
    stream.write_all(bytes).unwrap();
    // A frame the worker waits to complete is ended by closing the stream.
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "worker hung on {bytes:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_ne!(status.code(), Some(101), "panic exit: {stderr}");
}

#[test]
fn hostile_frames_end_the_worker_without_a_panic() {
    let huge = u32::MAX.to_le_bytes();
    let cases: Vec<Vec<u8>> = vec![
        huge.to_vec(),
        [&5u32.to_le_bytes()[..], &[VERSION + 1, 0, 0, 0, 0]].concat(),
        [&4u32.to_le_bytes()[..], &[VERSION, 0xff, 0xff, 0xff]].concat(),
        // An Exec whose command claims 4 GiB.
        [
            &8u32.to_le_bytes()[..],
            &[VERSION, 2, 1, 0xff, 0xff, 0xff, 0xff, 0x0f],
        ]
        .concat(),
        vec![0, 0, 0, 0],
        b"GET / HTTP/1.1\r\n\r\n".to_vec(),
        vec![3, 0],
    ];
    for case in cases {
        ends_cleanly(&case);
    }
}

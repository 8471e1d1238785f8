//! `cargo fuzz run protocol_decode`: any bytes, decoded as frames in both
//! directions, are a message or an error — never a panic, never more
//! memory than the frame.

#![no_main]

use ephemeral_worker::protocol::{FromWorker, ToWorker, decode, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((message, used))) = decode::<ToWorker>(data) {
        assert!(used <= data.len());
        let again = encode(&message).expect("a decoded message re-encodes");
        assert_eq!(decode::<ToWorker>(&again).unwrap().unwrap().0, message);
    }
    if let Ok(Some((message, used))) = decode::<FromWorker>(data) {
        assert!(used <= data.len());
        let again = encode(&message).expect("a decoded message re-encodes");
        assert_eq!(decode::<FromWorker>(&again).unwrap().unwrap().0, message);
    }
});

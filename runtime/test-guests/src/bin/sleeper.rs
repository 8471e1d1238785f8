//! Sleeps far longer than any deadline, inside a host call rather than in
//! wasm code; the deadline must still stop it on time.
fn main() {
    std::thread::sleep(std::time::Duration::from_secs(3600));
    println!("woke up");
}

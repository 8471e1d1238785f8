//! Allocates without end; the sandbox's memory cap must stop it.
fn main() {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![1u8; 16 << 20]);
        println!("{} MiB", hoard.len() * 16);
    }
}

//! Never ends; the sandbox's deadline must stop it.
fn main() {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

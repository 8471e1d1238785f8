//! Prints its environment, arguments and working folder, so tests can check
//! that nothing of the host leaks in.
fn main() {
    for (k, v) in std::env::vars() {
        println!("{k}={v}");
    }
    println!("args={:?}", std::env::args().collect::<Vec<_>>());
    println!(
        "cwd={:?}",
        std::env::current_dir().map(|p| p.display().to_string())
    );
}

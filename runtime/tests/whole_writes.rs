//! A program's single large write reaches its reader whole (finding G5:
//! CPython's stdout is unbuffered, and a short write was dropped silently).

mod common;

use common::{sandbox, sh};

#[test]
fn one_large_print_reaches_a_pipe_whole() {
    let (out, err, code) = sh(
        &mut sandbox(),
        r#"python3 -c "print('x' * 200000)" | wc -c"#,
    );
    assert_eq!((out.trim(), code), ("200001", 0), "{err}");
}

#[test]
fn one_large_print_reaches_a_file_whole() {
    let (out, err, code) = sh(
        &mut sandbox(),
        r#"python3 -c "print('y' * 3000000)" > big.txt; wc -c < big.txt"#,
    );
    assert_eq!((out.trim(), code), ("3000001", 0), "{err}");
}

#[test]
fn one_large_print_reaches_the_caller_whole() {
    let (out, err, code) = sh(&mut sandbox(), r#"python3 -c "print('z' * 500000)""#);
    assert_eq!((out.len(), code), (500001, 0), "{err}");
}

//! `bc [-lqswi] [FILE...]`: GNU bc 1.07.1, the arbitrary-precision
//! calculator. Programs are compiled as GNU's grammar compiles them
//! (`compile.rs`) and run line by line (`vm.rs`) on exact decimals
//! (`number.rs`); `-l` loads GNU's own math library (`libmath.b`:
//! `s c a l e j`, scale 20). Output, warnings and errors (`(standard_in)
//! 2: syntax error`, `Runtime error (func=(main), adr=3): Divide by
//! zero`) are GNU's, output lines wrapped at 70 columns unless
//! `BC_LINE_LENGTH` says otherwise.

mod compile;
mod lexer;
mod number;
mod vm;

use super::{Process, Table};
use compile::{Compiler, Item, Symbols};
use vm::{Machine, Stop};

/// This family's programs.
pub(crate) const TABLE: Table = &[("bc", bc)];

const LIBMATH: &str = include_str!("libmath.b");

const VERSION: &str = "bc 1.07.1
Copyright 1991-1994, 1997, 1998, 2000, 2004, 2006, 2008, 2012-2017 Free Software Foundation, Inc.
";

const HELP: &str = "usage: bc [options] [file ...]
  -h  --help         print this usage and exit
  -i  --interactive  force interactive mode
  -l  --mathlib      use the predefined math routines
  -q  --quiet        don't print initial banner
  -s  --standard     non-standard bc constructs are errors
  -w  --warn         warn about non-standard bc constructs
  -v  --version      print version information and exit
";

/// Why the run ended.
enum End {
    /// Read everything.
    Done,
    /// `quit` or `halt`.
    Exit,
}

struct Session<'p, 'a> {
    p: &'p Process<'a>,
    syms: Symbols,
    vm: Machine,
}

impl Session<'_, '_> {
    fn flush(&mut self) {
        let out = std::mem::take(&mut self.vm.out.bytes);
        super::coreutils::write_all(self.p, &out);
        for e in std::mem::take(&mut self.vm.errors) {
            self.p.io.err_line(&e);
        }
    }

    /// Compiles and runs one source, item by item.
    fn run(&mut self, name: &str, text: &str) -> End {
        let mut syms = std::mem::take(&mut self.syms);
        let mut compiler = Compiler::new(text, &mut syms);
        let end = loop {
            let item = compiler.item();
            // Messages found while reading come before the item runs.
            for d in compiler.diagnostics.drain(..) {
                let out = std::mem::take(&mut self.vm.out.bytes);
                super::coreutils::write_all(self.p, &out);
                self.p
                    .io
                    .err_line(&format!("{name} {}: {}", d.line, d.message));
            }
            match item {
                Item::End => break End::Done,
                Item::Quit => break End::Exit,
                Item::Defined => {}
                Item::Run(code) => {
                    let r = self.vm.run_main(compiler.symbols(), &code);
                    // Runtime errors go out as they happen; so does what
                    // was printed before them.
                    self.flush_errors_in_order();
                    if let Err(Stop::Halt) = r {
                        break End::Exit;
                    }
                }
            }
        };
        drop(compiler);
        self.syms = syms;
        end
    }

    fn flush_errors_in_order(&mut self) {
        for e in std::mem::take(&mut self.vm.errors) {
            self.p.io.err_line(&e);
        }
    }
}

pub(crate) fn bc(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut mathlib = false;
    let mut files = Vec::new();
    let mut options_done = false;
    for arg in argv.iter().skip(1) {
        if options_done || !arg.starts_with('-') || arg == "-" {
            files.push(arg.clone());
            continue;
        }
        match arg.as_str() {
            "--" => options_done = true,
            "--mathlib" => mathlib = true,
            "--quiet" | "--standard" | "--warn" | "--interactive" => {}
            "--help" => {
                p.out(HELP.as_bytes());
                return 0;
            }
            "--version" => {
                p.out(VERSION.as_bytes());
                return 0;
            }
            a if a.starts_with("--") => {
                p.error(&format!("unrecognized option '{a}'"));
                p.io.err(HELP.as_bytes());
                return 1;
            }
            a => {
                for c in a.chars().skip(1) {
                    match c {
                        'l' => mathlib = true,
                        'q' | 's' | 'w' | 'i' | 'c' => {}
                        'h' => {
                            p.out(HELP.as_bytes());
                            return 0;
                        }
                        'v' => {
                            p.out(VERSION.as_bytes());
                            return 0;
                        }
                        other => {
                            p.error(&format!("invalid option -- '{other}'"));
                            p.io.err(HELP.as_bytes());
                            return 1;
                        }
                    }
                }
            }
        }
    }
    let line_len = p
        .var("BC_LINE_LENGTH")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .map_or(70, |n| {
            if (0..3).contains(&n) && n != 0 || n < 0 {
                70
            } else {
                n as usize
            }
        });
    let mut s = Session {
        p,
        syms: Symbols::new(),
        vm: Machine::new(line_len),
    };
    if mathlib {
        s.run("(libmath)", LIBMATH);
        s.vm.set_scale(20);
    }
    for f in &files {
        let text = match super::coreutils::read_input(p, f) {
            Ok(d) => String::from_utf8_lossy(&d).into_owned(),
            Err(_) => {
                s.flush();
                p.io.err_line(&format!("File {f} is unavailable."));
                return 1;
            }
        };
        if let End::Exit = s.run(f, &text) {
            s.flush();
            return 0;
        }
    }
    let stdin = p.io.stdin.borrow_mut().read_all();
    let text = String::from_utf8_lossy(&stdin).into_owned();
    if files.is_empty() {
        s.run("(standard_in)", &text);
    } else {
        // With program files, stdin is still a program (and read()'s).
        s.vm.input = text.lines().map(str::to_string).collect();
        s.run("(standard_in)", &text);
    }
    s.flush();
    0
}

//! `sed`: GNU sed 4.9's script language as agents use it. The script is
//! parsed into a program (`script.rs`) and run over the input lines
//! (`exec.rs`). `-i` rewrites each file after its run; `e` (run a shell
//! command) and `--posix` are not supported.

mod exec;
mod script;

use super::read_source;
use crate::programs::Process;
use exec::{Line, Runner};

const USAGE: &str = "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...";

/// What GNU sed 4.9 prints after the usage line when run without a script.
const HELP: &str = "
  -n, --quiet, --silent
                 suppress automatic printing of pattern space
      --debug
                 annotate program execution
  -e script, --expression=script
                 add the script to the commands to be executed
  -f script-file, --file=script-file
                 add the contents of script-file to the commands to be executed
  --follow-symlinks
                 follow symlinks when processing in place
  -i[SUFFIX], --in-place[=SUFFIX]
                 edit files in place (makes backup if SUFFIX supplied)
  -l N, --line-length=N
                 specify the desired line-wrap length for the `l' command
  --posix
                 disable all GNU extensions.
  -E, -r, --regexp-extended
                 use extended regular expressions in the script
                 (for portability use POSIX -E).
  -s, --separate
                 consider files as separate rather than as a single,
                 continuous long stream.
      --sandbox
                 operate in sandbox mode (disable e/r/w commands).
  -u, --unbuffered
                 load minimal amounts of data from the input files and flush
                 the output buffers more often
  -z, --null-data
                 separate lines by NUL characters
      --help     display this help and exit
      --version  output version information and exit

If no -e, --expression, -f, or --file option is given, then the first
non-option argument is taken as the sed script to interpret.  All
remaining arguments are names of input files; if no input files are
specified, then the standard input is read.

GNU sed home page: <https://www.gnu.org/software/sed/>.
General help using GNU software: <https://www.gnu.org/gethelp/>.
";

#[derive(Default)]
struct Options {
    quiet: bool,
    extended: bool,
    in_place: Option<String>,
    separate: bool,
    null_data: bool,
    scripts: Vec<String>,
}

pub(crate) fn sed(p: &mut Process<'_>, argv: &[String]) -> i32 {
    p.prefix = "sed".to_string();
    let mut o = Options::default();
    let mut operands = Vec::new();
    let args = argv.get(1..).unwrap_or_default();
    let mut i = 0;
    let mut only_operands = false;
    while let Some(arg) = args.get(i) {
        i += 1;
        if only_operands || arg == "-" || !arg.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        if arg == "--" {
            only_operands = true;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (key, value) = match long.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (long, None),
            };
            match key {
                "quiet" | "silent" => o.quiet = true,
                "regexp-extended" => o.extended = true,
                "separate" => o.separate = true,
                "null-data" => o.null_data = true,
                "in-place" => o.in_place = Some(value.unwrap_or_default()),
                "posix" | "debug" | "unbuffered" | "sandbox" | "follow-symlinks" => {}
                "expression" | "file" => {
                    let v = match value {
                        Some(v) => v,
                        None => {
                            let Some(v) = args.get(i) else {
                                p.error(&format!("option '--{key}' requires an argument"));
                                p.io.err_line(USAGE);
                                return 1;
                            };
                            i += 1;
                            v.clone()
                        }
                    };
                    if key == "file" {
                        match script_file(p, &v) {
                            Ok(s) => o.scripts.push(s),
                            Err(status) => return status,
                        }
                    } else {
                        o.scripts.push(v);
                    }
                }
                _ => {
                    p.error(&format!("unknown option -- '{key}'"));
                    p.io.err_line(USAGE);
                    return 1;
                }
            }
            continue;
        }
        let chars: Vec<char> = arg.chars().skip(1).collect();
        let mut k = 0;
        while let Some(&c) = chars.get(k) {
            k += 1;
            match c {
                'n' => o.quiet = true,
                'E' | 'r' => o.extended = true,
                's' => o.separate = true,
                'z' => o.null_data = true,
                'u' => {}
                'i' => {
                    let suffix: String = chars.get(k..).unwrap_or_default().iter().collect();
                    o.in_place = Some(suffix);
                    break;
                }
                'e' | 'f' | 'l' => {
                    let rest: String = chars.get(k..).unwrap_or_default().iter().collect();
                    let value = if !rest.is_empty() {
                        rest
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        v.clone()
                    } else {
                        p.error(&format!("option requires an argument -- '{c}'"));
                        p.io.err_line(USAGE);
                        return 1;
                    };
                    match c {
                        'e' => o.scripts.push(value),
                        'f' => match script_file(p, &value) {
                            Ok(s) => o.scripts.push(s),
                            Err(status) => return status,
                        },
                        _ => {}
                    }
                    break;
                }
                _ => {
                    p.error(&format!("invalid option -- '{c}'"));
                    p.io.err_line(USAGE);
                    return 1;
                }
            }
        }
    }
    if o.scripts.is_empty() {
        if operands.is_empty() {
            p.io.err_line(USAGE);
            p.io.err(HELP.as_bytes());
            return 1;
        }
        o.scripts.push(operands.remove(0));
    }
    let program = match script::parse(&o.scripts, o.extended) {
        Ok(prog) => prog,
        Err(e) => {
            p.error(&e.0);
            return if e.0.starts_with("can't find label") {
                4
            } else {
                1
            };
        }
    };
    if o.in_place.is_some() && operands.is_empty() {
        p.error("no input files");
        return 1;
    }
    if operands.is_empty() {
        operands.push("-".to_string());
    }
    let read_file = |name: &str| -> Option<Vec<u8>> {
        if name == "/dev/stdin" {
            return Some(p.io.stdin.borrow_mut().read_all());
        }
        std::fs::read(p.resolve(name)).ok()
    };
    let mut runner = Runner::new(&program, o.quiet, &read_file);
    let sep = if o.null_data { 0u8 } else { b'\n' };
    let mut status = 0;
    let separate = o.separate || o.in_place.is_some();

    // Each input's lines, read up front; unreadable files are reported
    // where GNU reports them (before the lines that follow).
    let mut inputs: Vec<(String, Vec<Line>)> = Vec::new();
    for name in &operands {
        match read_source(p, name) {
            Ok(data) => inputs.push((name.clone(), split(&data, sep))),
            Err(msg) => {
                if msg == "Is a directory" && o.in_place.is_some() {
                    p.error(&format!("couldn't edit {name}: not a regular file"));
                } else {
                    p.error(&format!("can't read {name}: {msg}"));
                }
                status = 2;
            }
        }
    }
    let mut out = Vec::new();
    if separate {
        let mut line_no = 0;
        for (name, lines) in &inputs {
            let mut file_out = Vec::new();
            let first = if o.in_place.is_some() { 0 } else { line_no };
            let (outcome, last) = runner.run(lines, name, first, &mut file_out);
            line_no = last;
            if let Some(suffix) = &o.in_place {
                let path = p.resolve(name);
                if !suffix.is_empty() {
                    let backup = if suffix.contains('*') {
                        let base = name.rsplit('/').next().unwrap_or(name);
                        suffix.replace('*', base)
                    } else {
                        format!("{name}{suffix}")
                    };
                    let _ = std::fs::copy(&path, p.resolve(&backup));
                }
                if let Err(e) = std::fs::write(&path, &file_out) {
                    p.error(&format!(
                        "couldn't open temporary file {name}: {}",
                        crate::errors::strerror(&e)
                    ));
                    status = 4;
                }
                // Output other than the file's (`w /dev/stdout`) is none here.
            } else {
                out.extend_from_slice(&file_out);
            }
            if let Some(code) = outcome.quit {
                status = code;
                break;
            }
        }
    } else {
        let mut all = Vec::new();
        let mut name = "-".to_string();
        for (n, lines) in inputs {
            name = n;
            all.extend(lines);
        }
        let (outcome, _) = runner.run(&all, &name, 0, &mut out);
        if let Some(code) = outcome.quit {
            status = code;
        }
    }
    if !out.is_empty() {
        p.out(&out);
    }
    for (name, bytes) in &runner.wfiles {
        if let Err(e) = std::fs::write(p.resolve(name), bytes) {
            p.error(&format!(
                "couldn't open file {name}: {}",
                crate::errors::strerror(&e)
            ));
            status = 4;
        }
    }
    status
}

fn script_file(p: &Process<'_>, name: &str) -> Result<String, i32> {
    match read_source(p, name) {
        Ok(data) => {
            let text = String::from_utf8_lossy(&data).into_owned();
            Ok(text.strip_suffix('\n').map(String::from).unwrap_or(text))
        }
        Err(msg) => {
            p.error(&format!("couldn't open file {name}: {msg}"));
            Err(1)
        }
    }
}

/// Lines of `data` split at `sep`, each remembering its terminator.
fn split(data: &[u8], sep: u8) -> Vec<Line> {
    let mut lines = Vec::new();
    for chunk in data.split_inclusive(|&b| b == sep) {
        match chunk.strip_suffix(&[sep]) {
            Some(text) => lines.push(Line {
                text: text.to_vec(),
                newline: true,
            }),
            None => lines.push(Line {
                text: chunk.to_vec(),
                newline: false,
            }),
        }
    }
    lines
}

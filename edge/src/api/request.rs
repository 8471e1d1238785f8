//! `POST /v1/runs` and `POST /v1/sandboxes` bodies: parsed field by field
//! so every error names its field. Types and unknown fields are 400 (`invalid-request`); values out
//! of range or naming something that does not exist are 422
//! (`validation-failed`). All problems of a body are reported at once.

use std::collections::BTreeMap;

use base64::Engine;
use serde_json::{Map, Value};

use super::problem::{FieldError, Problem};
use crate::run::RunRequest;
use crate::session::SandboxRequest;

/// Largest request body, `files` included (API.md: 12 MiB in all).
pub const MAX_BODY_BYTES: usize = 12 << 20;
/// Largest request body besides `files` (API.md: 1 MiB).
pub const MAX_BODY_BYTES_BESIDES_FILES: usize = 1 << 20;
pub const MAX_PROMPT_CHARS: usize = 100_000;
/// All files of a request together, decoded.
pub const MAX_FILES_BYTES: usize = 10 << 20;
pub const MAX_FILES: usize = 1_000;
pub const MAX_PATH_BYTES: usize = 1_024;
pub const MAX_METADATA_KEYS: usize = 16;
pub const MAX_METADATA_KEY_CHARS: usize = 40;
pub const MAX_METADATA_VALUE_CHARS: usize = 500;
pub const MAX_CONNECTIONS: usize = 32;
/// `outputs`: glob patterns (API.md).
pub const MAX_OUTPUT_PATTERNS: usize = 32;
/// A sandbox's lifetime and idle timeout by default (API.md).
pub const DEFAULT_SANDBOX_TIMEOUT_SECONDS: u64 = 300;
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: u64 = 120;

const FIELDS: &[&str] = &[
    "prompt",
    "shell",
    "web",
    "timeout_seconds",
    "max_cost_micros",
    "model",
    "connections",
    "files",
    "outputs",
    "zero_data_retention",
    "metadata",
];

const SANDBOX_FIELDS: &[&str] = &[
    "max_cost_micros",
    "timeout_seconds",
    "idle_timeout_seconds",
    "files",
    "zero_data_retention",
    "metadata",
];

/// What a request is checked against.
pub struct Rules<'a> {
    pub max_timeout_seconds: u64,
    pub default_timeout_seconds: u64,
    pub per_run_cap_micros: i64,
    pub default_model: &'a str,
    pub is_model: &'a dyn Fn(&str) -> bool,
    pub is_connection: &'a dyn Fn(&str) -> bool,
}

/// Parses a body into a JSON object, or the problem with it.
pub fn parse_object(body: &[u8]) -> Result<Map<String, Value>, Problem> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Problem::new("invalid-json", format!("the body is not valid JSON ({e})")))?;
    let Value::Object(map) = value else {
        return Err(Problem::new(
            "invalid-json",
            "the body must be a JSON object",
        ));
    };
    let files = map
        .get("files")
        .and_then(|f| serde_json::to_vec(f).ok())
        .map_or(0, |f| f.len());
    if body.len().saturating_sub(files) > MAX_BODY_BYTES_BESIDES_FILES {
        return Err(Problem::new(
            "payload-too-large",
            format!("the body besides `files` is over {MAX_BODY_BYTES_BESIDES_FILES} bytes"),
        ));
    }
    Ok(map)
}

pub fn validate(body: &Map<String, Value>, rules: &Rules<'_>) -> Result<RunRequest, Problem> {
    let mut c = Checker::default();
    c.known_fields(body, FIELDS);
    let prompt = c.string(body, "prompt", true).unwrap_or_default();
    let chars = prompt.chars().count();
    if body.contains_key("prompt") && c.ok("prompt") && !(1..=MAX_PROMPT_CHARS).contains(&chars) {
        c.range(
            "prompt",
            format!("must be 1 to {MAX_PROMPT_CHARS} characters (got {chars})"),
        );
    }
    let shell = c.boolean(body, "shell").unwrap_or(true);
    let web = c.boolean(body, "web").unwrap_or(false);
    let zero_data_retention = c.boolean(body, "zero_data_retention").unwrap_or(false);
    let timeout_seconds = timeout(&mut c, body, rules, rules.default_timeout_seconds);
    let max_cost_micros = max_cost(&mut c, body, rules);
    let model = c
        .string(body, "model", false)
        .unwrap_or_else(|| rules.default_model.to_string());
    if c.ok("model") && model.starts_with("scripted:") {
        c.range(
            "model",
            "a request cannot name a script file (scripted:PATH): scripted models are \
             configured by the server's operator in the model catalogue; name one by its id",
        );
    } else if c.ok("model") && !(rules.is_model)(&model) {
        c.range(
            "model",
            format!("unknown model {model:?}: not in this server's catalogue"),
        );
    }
    let connections = connections(&mut c, body, rules);
    let files = files(&mut c, body);
    let outputs = outputs(&mut c, body);
    let metadata = metadata(&mut c, body);
    c.finish()?;
    Ok(RunRequest {
        prompt,
        shell,
        web,
        timeout_seconds,
        max_cost_micros,
        model,
        connections,
        files,
        outputs,
        zero_data_retention,
        metadata,
    })
}

/// A `POST /v1/sandboxes` body, checked against the same rules as a run's.
pub fn validate_sandbox(
    body: &Map<String, Value>,
    rules: &Rules<'_>,
) -> Result<SandboxRequest, Problem> {
    let mut c = Checker::default();
    c.known_fields(body, SANDBOX_FIELDS);
    let default = DEFAULT_SANDBOX_TIMEOUT_SECONDS.min(rules.max_timeout_seconds);
    let timeout_seconds = timeout(&mut c, body, rules, default);
    let idle_timeout_seconds = c
        .integer(body, "idle_timeout_seconds", false)
        .unwrap_or(DEFAULT_IDLE_TIMEOUT_SECONDS.min(timeout_seconds) as i64);
    if c.ok("idle_timeout_seconds") && !(1..=timeout_seconds as i64).contains(&idle_timeout_seconds)
    {
        c.range(
            "idle_timeout_seconds",
            format!("must be 1 to timeout_seconds ({timeout_seconds})"),
        );
    }
    let max_cost_micros = max_cost(&mut c, body, rules);
    let zero_data_retention = c.boolean(body, "zero_data_retention").unwrap_or(false);
    let files = files(&mut c, body);
    let metadata = metadata(&mut c, body);
    c.finish()?;
    Ok(SandboxRequest {
        max_cost_micros,
        timeout_seconds,
        idle_timeout_seconds: idle_timeout_seconds as u64,
        files,
        zero_data_retention,
        metadata,
    })
}

/// `timeout_seconds`: 1 to the server's maximum, `default` when absent.
fn timeout(c: &mut Checker, body: &Map<String, Value>, rules: &Rules<'_>, default: u64) -> u64 {
    let seconds = c
        .integer(body, "timeout_seconds", false)
        .unwrap_or(default as i64);
    if c.ok("timeout_seconds") && !(1..=rules.max_timeout_seconds as i64).contains(&seconds) {
        c.range(
            "timeout_seconds",
            format!("must be 1 to {}", rules.max_timeout_seconds),
        );
        return default;
    }
    seconds.max(1) as u64
}

/// `max_cost_micros`: required, 1 to the organisation's cap.
fn max_cost(c: &mut Checker, body: &Map<String, Value>, rules: &Rules<'_>) -> i64 {
    let micros = c.integer(body, "max_cost_micros", true).unwrap_or(0);
    if body.contains_key("max_cost_micros")
        && c.ok("max_cost_micros")
        && !(1..=rules.per_run_cap_micros).contains(&micros)
    {
        c.range(
            "max_cost_micros",
            format!(
                "must be 1 to the organisation's per-run cap of {} micros",
                rules.per_run_cap_micros
            ),
        );
    }
    micros
}

/// `outputs`: at most 32 glob patterns, relative to the scratch folder or
/// under `/tmp`.
fn outputs(c: &mut Checker, body: &Map<String, Value>) -> Vec<String> {
    let Some(value) = body.get("outputs") else {
        return Vec::new();
    };
    let Some(items) = value.as_array() else {
        c.type_error("outputs", "must be an array of glob patterns");
        return Vec::new();
    };
    if items.len() > MAX_OUTPUT_PATTERNS {
        c.range("outputs", format!("at most {MAX_OUTPUT_PATTERNS} patterns"));
    }
    let mut patterns = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("outputs[{i}]");
        match item.as_str() {
            None => c.type_error(&field, "must be a string"),
            Some(pattern) => match check_path(pattern) {
                Ok(()) => patterns.push(pattern.to_string()),
                Err(why) => c.range(&field, why),
            },
        }
    }
    patterns
}

fn connections(c: &mut Checker, body: &Map<String, Value>, rules: &Rules<'_>) -> Vec<String> {
    let Some(value) = body.get("connections") else {
        return Vec::new();
    };
    let Some(items) = value.as_array() else {
        c.type_error("connections", "must be an array of connection names");
        return Vec::new();
    };
    if items.len() > MAX_CONNECTIONS {
        c.range(
            "connections",
            format!("at most {MAX_CONNECTIONS} connections"),
        );
    }
    let mut names = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let field = format!("connections[{i}]");
        match item.as_str() {
            None => c.type_error(&field, "must be a string"),
            Some(name) if !(rules.is_connection)(name) => c.range(
                &field,
                format!("no connection named {name:?} is configured for this organisation"),
            ),
            Some(name) if names.iter().any(|n| n == name) => c.range(&field, "listed twice"),
            Some(name) => names.push(name.to_string()),
        }
    }
    names
}

fn files(c: &mut Checker, body: &Map<String, Value>) -> Vec<(String, Vec<u8>)> {
    let Some(value) = body.get("files") else {
        return Vec::new();
    };
    let Some(items) = value.as_array() else {
        c.type_error(
            "files",
            "must be an array of {path, content} or {path, content_base64}",
        );
        return Vec::new();
    };
    if items.len() > MAX_FILES {
        c.range("files", format!("at most {MAX_FILES} files"));
        return Vec::new();
    }
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut total = 0usize;
    for (i, item) in items.iter().enumerate() {
        let Some(file) = file(c, i, item) else {
            continue;
        };
        if files.iter().any(|(p, _)| *p == file.0) {
            c.range(&format!("files[{i}].path"), "listed twice");
            continue;
        }
        total += file.1.len();
        files.push(file);
    }
    if total > MAX_FILES_BYTES {
        c.range(
            "files",
            format!("{total} bytes in all; at most {MAX_FILES_BYTES}"),
        );
    }
    files
}

fn file(c: &mut Checker, i: usize, item: &Value) -> Option<(String, Vec<u8>)> {
    let field = format!("files[{i}]");
    let Some(obj) = item.as_object() else {
        c.type_error(
            &field,
            "must be an object {path, content} or {path, content_base64}",
        );
        return None;
    };
    for key in obj.keys() {
        if !["path", "content", "content_base64"].contains(&key.as_str()) {
            c.type_error(&format!("{field}.{key}"), "unknown field");
        }
    }
    let path = match obj.get("path").map(Value::as_str) {
        Some(Some(p)) => p.to_string(),
        Some(None) => {
            c.type_error(&format!("{field}.path"), "must be a string");
            return None;
        }
        None => {
            c.type_error(&format!("{field}.path"), "is required");
            return None;
        }
    };
    if let Err(why) = check_path(&path) {
        c.range(&format!("{field}.path"), why);
    }
    let contents = match (obj.get("content"), obj.get("content_base64")) {
        (Some(Value::String(text)), None) => text.as_bytes().to_vec(),
        (None, Some(Value::String(b64))) => {
            match base64::engine::general_purpose::STANDARD.decode(b64) {
                Ok(bytes) => bytes,
                Err(_) => {
                    c.range(&format!("{field}.content_base64"), "is not valid base64");
                    return None;
                }
            }
        }
        (Some(_), Some(_)) => {
            c.type_error(&field, "give content or content_base64, not both");
            return None;
        }
        (None, None) => {
            c.type_error(
                &format!("{field}.content"),
                "is required (or content_base64)",
            );
            return None;
        }
        (Some(_), None) => {
            c.type_error(&format!("{field}.content"), "must be a string");
            return None;
        }
        (None, Some(_)) => {
            c.type_error(&format!("{field}.content_base64"), "must be a string");
            return None;
        }
    };
    Some((path, contents))
}

/// Files go in the scratch folder (relative paths) or under `/tmp`.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() || path.len() > MAX_PATH_BYTES {
        return Err(format!("must be 1 to {MAX_PATH_BYTES} bytes"));
    }
    if path.contains('\0')
        || path.ends_with('/')
        || path.split('/').any(|part| part == ".." || part == ".")
    {
        return Err("must be a plain file path (no `..`, `.`, NUL or trailing `/`)".into());
    }
    if path.starts_with('/') && !path.starts_with("/tmp/") {
        return Err("must be relative to the scratch folder, or under /tmp/".into());
    }
    Ok(())
}

fn metadata(c: &mut Checker, body: &Map<String, Value>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Some(value) = body.get("metadata") else {
        return out;
    };
    let Some(map) = value.as_object() else {
        c.type_error("metadata", "must be an object of strings");
        return out;
    };
    if map.len() > MAX_METADATA_KEYS {
        c.range("metadata", format!("at most {MAX_METADATA_KEYS} keys"));
    }
    for (key, value) in map {
        let field = format!("metadata.{key}");
        if key.is_empty() || key.chars().count() > MAX_METADATA_KEY_CHARS {
            c.range(
                &field,
                format!("keys are 1 to {MAX_METADATA_KEY_CHARS} characters"),
            );
        }
        match value.as_str() {
            Some(v) if v.chars().count() > MAX_METADATA_VALUE_CHARS => c.range(
                &field,
                format!("values are at most {MAX_METADATA_VALUE_CHARS} characters"),
            ),
            Some(v) => {
                out.insert(key.clone(), v.to_string());
            }
            None => c.type_error(&field, "must be a string"),
        }
    }
    out
}

/// Collects field errors: type errors make the answer a 400, range errors alone a 422.
#[derive(Default)]
struct Checker {
    type_errors: Vec<FieldError>,
    range_errors: Vec<FieldError>,
}

impl Checker {
    fn type_error(&mut self, field: &str, message: impl Into<String>) {
        self.type_errors.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    fn range(&mut self, field: &str, message: impl Into<String>) {
        self.range_errors.push(FieldError {
            field: field.into(),
            message: message.into(),
        });
    }

    fn known_fields(&mut self, body: &Map<String, Value>, known: &[&str]) {
        for key in body.keys() {
            if !known.contains(&key.as_str()) {
                self.type_error(key, "unknown field");
            }
        }
    }

    fn ok(&self, field: &str) -> bool {
        !self.type_errors.iter().any(|e| e.field == field)
    }

    fn string(&mut self, body: &Map<String, Value>, field: &str, required: bool) -> Option<String> {
        match body.get(field) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                self.type_error(field, "must be a string");
                None
            }
            None if required => {
                self.type_error(field, "is required");
                None
            }
            None => None,
        }
    }

    fn boolean(&mut self, body: &Map<String, Value>, field: &str) -> Option<bool> {
        match body.get(field) {
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                self.type_error(field, "must be true or false");
                None
            }
            None => None,
        }
    }

    fn integer(&mut self, body: &Map<String, Value>, field: &str, required: bool) -> Option<i64> {
        match body.get(field) {
            Some(v) => match v.as_i64() {
                Some(n) => Some(n),
                None if v.is_u64() => Some(i64::MAX),
                None => {
                    self.type_error(field, "must be an integer");
                    None
                }
            },
            None if required => {
                self.type_error(field, "is required");
                None
            }
            None => None,
        }
    }

    fn finish(self) -> Result<(), Problem> {
        if !self.type_errors.is_empty() {
            let mut all = self.type_errors;
            all.extend(self.range_errors);
            return Err(Problem::fields("invalid-request", all));
        }
        if !self.range_errors.is_empty() {
            return Err(Problem::fields("validation-failed", self.range_errors));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rules() -> Rules<'static> {
        Rules {
            max_timeout_seconds: 900,
            default_timeout_seconds: 120,
            per_run_cap_micros: 1_000_000,
            default_model: "openai/gpt-6-luna",
            is_model: &|m| m == "openai/gpt-6-luna" || m == "ephemeral/script",
            is_connection: &|_| false,
        }
    }

    fn check(body: Value) -> Result<RunRequest, Problem> {
        validate(body.as_object().unwrap(), &rules())
    }

    #[test]
    fn the_seed_request_is_valid_with_defaults() {
        let r = check(json!({"prompt": "hi", "web": false, "shell": true, "timeout_seconds": 120, "max_cost_micros": 40000})).unwrap();
        assert_eq!(
            (r.model.as_str(), r.timeout_seconds, r.shell, r.web),
            ("openai/gpt-6-luna", 120, true, false)
        );
    }

    #[test]
    fn unknown_fields_and_types_are_400_naming_the_field() {
        let p = check(json!({"prompt": "x", "max_cost_micros": 5, "promt": "y"})).unwrap_err();
        assert_eq!((p.status().as_u16(), p.slug()), (400, "invalid-request"));
        let p = check(json!({"prompt": 3, "max_cost_micros": "5"})).unwrap_err();
        assert_eq!(p.status().as_u16(), 400);
    }

    #[test]
    fn ranges_are_422() {
        for body in [
            json!({"prompt": "", "max_cost_micros": 5}),
            json!({"prompt": "x", "max_cost_micros": 0}),
            json!({"prompt": "x", "max_cost_micros": 2_000_000}),
            json!({"prompt": "x", "max_cost_micros": 5, "timeout_seconds": 901}),
            json!({"prompt": "x", "max_cost_micros": 5, "model": "nope/x"}),
            json!({"prompt": "x", "max_cost_micros": 5, "model": "scripted:/dev/zero"}),
            json!({"prompt": "x", "max_cost_micros": 5, "connections": ["github"]}),
            json!({"prompt": "x", "max_cost_micros": 5, "files": [{"path": "../x", "content": ""}]}),
            json!({"prompt": "x", "max_cost_micros": 5, "files": [{"path": "/etc/passwd", "content": ""}]}),
        ] {
            let p = check(body.clone()).unwrap_err();
            assert_eq!(p.status().as_u16(), 422, "{body}");
        }
    }

    #[test]
    fn outputs_are_patterns_inside_the_sandbox() {
        let r = check(json!({"prompt": "x", "max_cost_micros": 5,
            "outputs": ["*.png", "out/**", "/tmp/report.md"]}))
        .unwrap();
        assert_eq!(r.outputs, ["*.png", "out/**", "/tmp/report.md"]);
        for bad in [json!(["../x"]), json!(["/etc/*"]), json!([""])] {
            let p =
                check(json!({"prompt": "x", "max_cost_micros": 5, "outputs": bad})).unwrap_err();
            assert_eq!(p.status().as_u16(), 422);
        }
        let p =
            check(json!({"prompt": "x", "max_cost_micros": 5, "outputs": "*.png"})).unwrap_err();
        assert_eq!(p.status().as_u16(), 400);
    }

    #[test]
    fn sandboxes_default_their_timeouts_and_check_the_idle_one() {
        let r =
            validate_sandbox(json!({"max_cost_micros": 5}).as_object().unwrap(), &rules()).unwrap();
        assert_eq!((r.timeout_seconds, r.idle_timeout_seconds), (300, 120));
        let r = validate_sandbox(
            json!({"max_cost_micros": 5, "timeout_seconds": 60})
                .as_object()
                .unwrap(),
            &rules(),
        )
        .unwrap();
        assert_eq!((r.timeout_seconds, r.idle_timeout_seconds), (60, 60));
        let p = validate_sandbox(
            json!({"max_cost_micros": 5, "timeout_seconds": 60, "idle_timeout_seconds": 61})
                .as_object()
                .unwrap(),
            &rules(),
        )
        .unwrap_err();
        assert_eq!(p.status().as_u16(), 422);
        let p = validate_sandbox(
            json!({"prompt": "x", "max_cost_micros": 5})
                .as_object()
                .unwrap(),
            &rules(),
        )
        .unwrap_err();
        assert_eq!(p.status().as_u16(), 400);
    }

    #[test]
    fn files_decode_both_forms() {
        let r = check(json!({"prompt": "x", "max_cost_micros": 5, "files": [
            {"path": "a.txt", "content": "hi"}, {"path": "/tmp/b", "content_base64": "AAE="}]}))
        .unwrap();
        assert_eq!(
            r.files,
            vec![
                ("a.txt".into(), b"hi".to_vec()),
                ("/tmp/b".into(), vec![0, 1])
            ]
        );
    }

    #[test]
    fn a_model_naming_a_file_is_refused_without_touching_it() {
        // Even if the catalogue check would say yes: the prefix is refused first.
        let rules = Rules {
            is_model: &|_| true,
            ..rules()
        };
        let body = json!({"prompt": "x", "max_cost_micros": 5, "model": "scripted:/dev/ptmx"});
        let p = validate(body.as_object().unwrap(), &rules).unwrap_err();
        assert_eq!(p.status().as_u16(), 422);
    }
}

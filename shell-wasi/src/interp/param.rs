//! Parameter expansion: `$x`, `${x:-d}`, `${#x}`, `${x%pat}`, `${x/a/b}`,
//! `${x:1:2}`, `$@`, arrays and the special parameters.

use brush_parser::word::{
    Parameter, ParameterExpr, ParameterTestType, SpecialParameter, SubstringMatchKind,
};

use super::Shell;
use super::expand::{Part, join_parts};
use super::glob::pattern_matches;
use super::vars::Value;
use crate::errors::ShellError;
use crate::streams::Io;

/// The value of a parameter before any operator applies.
#[derive(Debug, Clone)]
pub(super) enum ParamValue {
    Unset,
    Scalar(String),
    /// `$@`, `$*`, `${a[@]}`, `${a[*]}`; `joined` is the `*` form.
    List {
        items: Vec<String>,
        joined: bool,
    },
}

impl ParamValue {
    fn is_unset(&self) -> bool {
        matches!(self, Self::Unset)
    }

    fn is_null(&self) -> bool {
        match self {
            Self::Unset => true,
            Self::Scalar(s) => s.is_empty(),
            Self::List { items, .. } => items.iter().all(String::is_empty),
        }
    }

    /// Applies `f` to the value or to each element.
    pub(super) fn map(self, f: impl Fn(&str) -> String) -> Self {
        match self {
            Self::Unset => Self::Unset,
            Self::Scalar(s) => Self::Scalar(f(&s)),
            Self::List { items, joined } => Self::List {
                items: items.iter().map(|s| f(s)).collect(),
                joined,
            },
        }
    }
}

impl Shell {
    pub(crate) fn expand_parameter(
        &mut self,
        expr: &ParameterExpr,
        quoted: bool,
        io: &Io,
        out: &mut Vec<Part>,
    ) -> Result<(), ShellError> {
        use ParameterExpr as E;
        let value = match expr {
            E::Parameter {
                parameter,
                indirect,
            } => self.param_value(parameter, *indirect)?,
            E::UseDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let value = self.param_value_or_unset(parameter, *indirect)?;
                if !is_missing(&value, test_type) {
                    value
                } else {
                    let text = default_value.as_deref().unwrap_or("");
                    out.extend(self.nested_parts(text, quoted, io)?);
                    return Ok(());
                }
            }
            E::AssignDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let value = self.param_value_or_unset(parameter, *indirect)?;
                if !is_missing(&value, test_type) {
                    value
                } else {
                    let text = default_value.as_deref().unwrap_or("");
                    let parts = self.nested_parts(text, true, io)?;
                    let assigned = join_parts(&parts);
                    if let Parameter::Named(name) = parameter {
                        self.vars.set(name, assigned.clone())?;
                    }
                    ParamValue::Scalar(assigned)
                }
            }
            E::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                test_type,
                error_message,
            } => {
                let value = self.param_value_or_unset(parameter, *indirect)?;
                if !is_missing(&value, test_type) {
                    value
                } else {
                    let message = match error_message {
                        Some(text) if !text.is_empty() => {
                            join_parts(&self.nested_parts(text, true, io)?)
                        }
                        _ if matches!(test_type, ParameterTestType::Unset) => {
                            "parameter not set".to_string()
                        }
                        _ => "parameter null or not set".to_string(),
                    };
                    return Err(ShellError::ParameterUnset {
                        name: param_name(parameter),
                        message,
                    });
                }
            }
            E::UseAlternativeValue {
                parameter,
                indirect,
                test_type,
                alternative_value,
            } => {
                let value = self.param_value_or_unset(parameter, *indirect)?;
                if !is_missing(&value, test_type) {
                    let text = alternative_value.as_deref().unwrap_or("");
                    out.extend(self.nested_parts(text, quoted, io)?);
                }
                return Ok(());
            }
            E::ParameterLength {
                parameter,
                indirect,
            } => {
                // bash looks a subscripted nameref up by its literal
                // name here, which no variable has.
                let by_name =
                    matches!(parameter, Parameter::Named(n) if self.vars.refers_to_element(n));
                let len = match self.param_value(parameter, *indirect)? {
                    _ if by_name => 0,
                    ParamValue::Unset => 0,
                    ParamValue::Scalar(s) => s.chars().count(),
                    ParamValue::List { items, .. } => items.len(),
                };
                ParamValue::Scalar(len.to_string())
            }
            E::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | E::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | E::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern,
            }
            | E::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern,
            } => {
                let value = self.param_value(parameter, *indirect)?;
                let pat = self.pattern_from_text(pattern.as_deref().unwrap_or(""), io)?;
                let (suffix, largest) = match expr {
                    E::RemoveSmallestSuffixPattern { .. } => (true, false),
                    E::RemoveLargestSuffixPattern { .. } => (true, true),
                    E::RemoveSmallestPrefixPattern { .. } => (false, false),
                    _ => (false, true),
                };
                value.map(|s| remove_affix(s, &pat, suffix, largest))
            }
            E::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => {
                let mut value = self.param_value(parameter, *indirect)?;
                let mut start = self.arith_expand_eval(&offset.value, io)?;
                let len = match length {
                    Some(l) => Some(self.arith_expand_eval(&l.value, io)?),
                    None => None,
                };
                // `${@:N}` counts from `$0`: offset 1 is `$1`, offset 0
                // brings `$0` in.
                if let Parameter::Special(SpecialParameter::AllPositionalParameters { .. }) =
                    parameter
                    && let ParamValue::List { items, .. } = &mut value
                {
                    if start == 0 {
                        items.insert(0, self.arg0.clone());
                    } else if start > 0 {
                        start -= 1;
                    }
                }
                substring(value, start, len, &param_name(parameter))?
            }
            E::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                match_kind,
            } => {
                let value = self.param_value(parameter, *indirect)?;
                let pat = self.pattern_from_text(pattern, io)?;
                let rep = match replacement {
                    Some(r) => join_parts(&self.nested_parts(r, true, io)?),
                    None => String::new(),
                };
                value.map(|s| replace(s, &pat, &rep, match_kind))
            }
            E::UppercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | E::LowercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | E::UppercasePattern {
                parameter,
                indirect,
                pattern,
            }
            | E::LowercasePattern {
                parameter,
                indirect,
                pattern,
            } => {
                let upper = matches!(
                    expr,
                    E::UppercaseFirstChar { .. } | E::UppercasePattern { .. }
                );
                let all = matches!(
                    expr,
                    E::UppercasePattern { .. } | E::LowercasePattern { .. }
                );
                let pat = match pattern.as_deref().filter(|p| !p.is_empty()) {
                    Some(p) => Some(self.pattern_from_text(p, io)?),
                    None => None,
                };
                self.param_value(parameter, *indirect)?
                    .map(|s| change_case(s, upper, all, pat.as_deref()))
            }
            E::Transform {
                parameter,
                indirect,
                op,
            } => {
                if let Some(value) = self.transform_with_vars(parameter, *indirect, op, io)? {
                    self.push_value(value, quoted, out);
                    return Ok(());
                }
                let value = self.param_value(parameter, *indirect)?;
                transform(value, op).ok_or_else(|| {
                    ShellError::BadSubstitution(format!("${{{}@}}", param_name(parameter)))
                })?
            }
            E::VariableNames {
                prefix,
                concatenate,
            } => {
                let names = self
                    .vars
                    .names()
                    .into_iter()
                    .filter(|n| n.starts_with(prefix.as_str()))
                    .collect();
                ParamValue::List {
                    items: names,
                    joined: *concatenate,
                }
            }
            E::MemberKeys {
                variable_name,
                concatenate,
            } => {
                let keys = self
                    .vars
                    .value(variable_name)
                    .map(Value::keys)
                    .unwrap_or_default();
                ParamValue::List {
                    items: keys,
                    joined: *concatenate,
                }
            }
        };
        self.push_value(value, quoted, out);
        Ok(())
    }

    fn push_value(&self, value: ParamValue, quoted: bool, out: &mut Vec<Part>) {
        match value {
            ParamValue::Unset => {}
            ParamValue::Scalar(s) => out.push(Part::expanded(s, quoted)),
            ParamValue::List {
                items,
                joined: true,
            } if quoted => {
                let sep = self
                    .ifs()
                    .chars()
                    .next()
                    .map(String::from)
                    .unwrap_or_default();
                out.push(Part::quoted(items.join(&sep)));
            }
            ParamValue::List { items, joined } => {
                let join = if joined {
                    self.ifs()
                        .chars()
                        .next()
                        .map(String::from)
                        .unwrap_or_default()
                } else {
                    " ".to_string()
                };
                for (i, item) in items.into_iter().enumerate() {
                    if i > 0 {
                        out.push(Part::Break(join.clone()));
                    }
                    out.push(Part::expanded(item, quoted));
                }
            }
        }
    }

    pub(super) fn param_value(
        &self,
        parameter: &Parameter,
        indirect: bool,
    ) -> Result<ParamValue, ShellError> {
        self.param_value_with(parameter, indirect, self.opts.nounset)
    }

    /// A parameter's value for the operators that handle unset ones
    /// themselves (`${x:-d}`, `${x:=d}`, `${x:?m}`, `${x:+a}`), where
    /// `set -u` does not apply.
    fn param_value_or_unset(
        &self,
        parameter: &Parameter,
        indirect: bool,
    ) -> Result<ParamValue, ShellError> {
        self.param_value_with(parameter, indirect, false)
    }

    fn param_value_with(
        &self,
        parameter: &Parameter,
        indirect: bool,
        nounset: bool,
    ) -> Result<ParamValue, ShellError> {
        // `${!ref}` of a nameref is the name it refers to.
        if indirect
            && let Parameter::Named(name) = parameter
            && let Some(var) = self
                .vars
                .get_raw(name)
                .filter(|v| v.nameref && !v.valueless)
        {
            return Ok(var
                .value
                .as_scalar()
                .map_or(ParamValue::Unset, |s| ParamValue::Scalar(s.to_string())));
        }
        let value = self.direct_value(parameter, nounset)?;
        if !indirect {
            return Ok(value);
        }
        // `${!x}`: the value of the variable named by $x.
        match value {
            ParamValue::Scalar(name) if super::vars::is_name(&name) => {
                self.direct_value(&Parameter::Named(name), nounset)
            }
            ParamValue::Scalar(name) if name.is_empty() => Ok(ParamValue::Unset),
            // `${!ref}` with ref=2 (a positional parameter) or ref='a[1]'.
            ParamValue::Scalar(name) if name.bytes().all(|b| b.is_ascii_digit()) => {
                let n = name.parse().unwrap_or(u32::MAX);
                self.direct_value(&Parameter::Positional(n), nounset)
            }
            ParamValue::Scalar(name) => {
                match name.strip_suffix(']').and_then(|n| n.split_once('[')) {
                    Some((array, index)) if super::vars::is_name(array) => {
                        self.element_value(array, index)
                    }
                    _ => Err(ShellError::BadSubstitution(name)),
                }
            }
            other => Ok(other),
        }
    }

    fn direct_value(&self, parameter: &Parameter, nounset: bool) -> Result<ParamValue, ShellError> {
        let value = match parameter {
            Parameter::Positional(0) => ParamValue::Scalar(self.arg0.clone()),
            Parameter::Positional(n) => {
                let index = usize::try_from(*n).unwrap_or(usize::MAX).saturating_sub(1);
                self.positional
                    .get(index)
                    .map_or(ParamValue::Unset, |s| ParamValue::Scalar(s.clone()))
            }
            Parameter::Special(special) => self.special_value(special),
            Parameter::Named(name) => self.named_value(name)?,
            Parameter::NamedWithIndex { name, index } => self.element_value(name, index)?,
            Parameter::NamedWithAllIndices { name, concatenate } => {
                let items = self
                    .vars
                    .value(name)
                    .map(Value::elements)
                    .unwrap_or_default();
                ParamValue::List {
                    items,
                    joined: *concatenate,
                }
            }
        };
        if nounset
            && value.is_unset()
            && let Parameter::Named(_) | Parameter::Positional(_) | Parameter::NamedWithIndex { .. } =
                parameter
        {
            return Err(ShellError::UnboundVariable(param_name(parameter)));
        }
        Ok(value)
    }

    fn element_value(&self, name: &str, index: &str) -> Result<ParamValue, ShellError> {
        if self.vars.is_assoc(name) {
            let key = super::arith::subscript_key(&self.vars, index);
            let value = self.vars.get_key(name, &key).map(str::to_string);
            return Ok(value.map_or(ParamValue::Unset, ParamValue::Scalar));
        }
        let index = super::arith::eval_index(self, index)?;
        let value = match self.vars.value(name) {
            Some(Value::Indexed(map)) => {
                let len = map.keys().next_back().map_or(0, |k| k + 1);
                let key = if index < 0 {
                    usize::try_from(i64::try_from(len).unwrap_or(0) + index).ok()
                } else {
                    usize::try_from(index).ok()
                };
                key.and_then(|k| map.get(&k)).cloned()
            }
            Some(Value::Scalar(s)) if index == 0 => Some(s.clone()),
            _ => None,
        };
        Ok(value.map_or(ParamValue::Unset, ParamValue::Scalar))
    }

    /// `$name`: a variable, through namerefs (to an element, `a[@]`,
    /// or a variable bash computes).
    fn named_value(&self, name: &str) -> Result<ParamValue, ShellError> {
        let Some(target) = self.vars.try_resolve(name) else {
            return Ok(ParamValue::Unset);
        };
        if let Some((base, sub)) = super::vars::split_subscript(&target) {
            if sub == "@" || sub == "*" {
                let items = self
                    .vars
                    .value(base)
                    .map(Value::elements)
                    .unwrap_or_default();
                return Ok(ParamValue::Scalar(items.join(" ")));
            }
            return self.element_value(base, sub);
        }
        if self.vars.get_raw(&target).is_none()
            && let Some(value) = self.dynamic(&target)
        {
            return Ok(ParamValue::Scalar(value));
        }
        Ok(match self.vars.value(&target) {
            Some(value) => value
                .as_scalar()
                .map_or(ParamValue::Unset, |s| ParamValue::Scalar(s.to_string())),
            None => ParamValue::Unset,
        })
    }

    /// Variables bash computes on each use, unless the script set them.
    fn dynamic(&self, name: &str) -> Option<String> {
        let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        if let Some(value) = self.computed_var(name) {
            return Some(value);
        }
        Some(match name {
            "LINENO" => (self.location.base + self.location.line).to_string(),
            "RANDOM" => (random_u64() % 32768).to_string(),
            "SRANDOM" => (random_u64() as u32).to_string(),
            "SECONDS" => self.started.elapsed().as_secs().to_string(),
            "EPOCHSECONDS" => now().map(|d| d.as_secs()).unwrap_or(0).to_string(),
            "EPOCHREALTIME" => {
                let d = now().unwrap_or_default();
                format!("{}.{:06}", d.as_secs(), d.subsec_micros())
            }
            "BASHPID" => self.bashpid.to_string(),
            _ => return None,
        })
    }

    fn special_value(&self, special: &SpecialParameter) -> ParamValue {
        match special {
            SpecialParameter::AllPositionalParameters { concatenate } => ParamValue::List {
                items: self.positional.clone(),
                joined: *concatenate,
            },
            SpecialParameter::PositionalParameterCount => {
                ParamValue::Scalar(self.positional.len().to_string())
            }
            SpecialParameter::LastExitStatus => ParamValue::Scalar(self.status.to_string()),
            SpecialParameter::CurrentOptionFlags => ParamValue::Scalar(self.option_flags()),
            SpecialParameter::ProcessId => ParamValue::Scalar(crate::interp::SHELL_PID.to_string()),
            SpecialParameter::LastBackgroundProcessId => match self.last_bg_pid {
                Some(pid) => ParamValue::Scalar(pid.to_string()),
                None => ParamValue::Unset,
            },
            SpecialParameter::ShellName => ParamValue::Scalar(self.arg0.clone()),
        }
    }

    /// `$-`: the single-letter options in effect (`h` and `B` are always on
    /// in bash, `c` for `-c`).
    fn option_flags(&self) -> String {
        let mut flags = String::new();
        if self.vars.allexport {
            flags.push('a');
        }
        if self.opts.errexit {
            flags.push('e');
        }
        if self.opts.noglob {
            flags.push('f');
        }
        flags.push('h');
        if self.opts.nounset {
            flags.push('u');
        }
        if self.opts.xtrace {
            flags.push('x');
        }
        flags.push('B');
        if self.opts.errtrace {
            flags.push('E');
        }
        if self.opts.functrace {
            flags.push('T');
        }
        flags.push('c');
        flags
    }
}

fn is_missing(value: &ParamValue, test: &ParameterTestType) -> bool {
    match test {
        ParameterTestType::UnsetOrNull => value.is_null(),
        // An array without elements counts as unset: `${a[@]-d}`.
        ParameterTestType::Unset => {
            value.is_unset() || matches!(value, ParamValue::List { items, .. } if items.is_empty())
        }
    }
}

fn param_name(parameter: &Parameter) -> String {
    match parameter {
        Parameter::Positional(n) => n.to_string(),
        Parameter::Special(s) => s.to_string(),
        Parameter::Named(name) => name.clone(),
        Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
        Parameter::NamedWithAllIndices { name, concatenate } => {
            format!("{name}[{}]", if *concatenate { '*' } else { '@' })
        }
    }
}

/// Byte offsets of every char boundary of `s`, including the end.
fn boundaries(s: &str) -> Vec<usize> {
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .collect()
}

/// A pattern with no glob operators or escapes matches only itself: such
/// patterns (most of them: `${x//-/_}`, `${f%.txt}`) take the linear path.
fn literal(pattern: &str) -> Option<&str> {
    (!pattern.contains(['*', '?', '[', '\\'])).then_some(pattern)
}

fn remove_affix(s: &str, pattern: &str, suffix: bool, largest: bool) -> String {
    if let Some(lit) = literal(pattern) {
        let cut = if suffix {
            s.strip_suffix(lit)
        } else {
            s.strip_prefix(lit)
        };
        return cut.unwrap_or(s).to_string();
    }
    let cuts = boundaries(s);
    let candidates: Box<dyn Iterator<Item = &usize>> = match (suffix, largest) {
        (false, false) => Box::new(cuts.iter()),
        (false, true) => Box::new(cuts.iter().rev()),
        (true, false) => Box::new(cuts.iter().rev()),
        (true, true) => Box::new(cuts.iter()),
    };
    for &cut in candidates {
        let (head, tail) = s.split_at(cut);
        if suffix && pattern_matches(pattern, tail) {
            return head.to_string();
        }
        if !suffix && pattern_matches(pattern, head) {
            return tail.to_string();
        }
    }
    s.to_string()
}

/// Longest match of `pattern` starting at byte `start`, as an end offset.
fn longest_match_at(s: &str, cuts: &[usize], start: usize, pattern: &str) -> Option<usize> {
    cuts.iter()
        .rev()
        .filter(|&&end| end >= start)
        .find(|&&end| {
            s.get(start..end)
                .is_some_and(|m| pattern_matches(pattern, m))
        })
        .copied()
}

fn replace(s: &str, pattern: &str, rep: &str, kind: &SubstringMatchKind) -> String {
    if pattern.is_empty() {
        return s.to_string();
    }
    if let Some(lit) = literal(pattern) {
        return match kind {
            SubstringMatchKind::Prefix => match s.strip_prefix(lit) {
                Some(rest) => format!("{rep}{rest}"),
                None => s.to_string(),
            },
            SubstringMatchKind::Suffix => match s.strip_suffix(lit) {
                Some(rest) => format!("{rest}{rep}"),
                None => s.to_string(),
            },
            SubstringMatchKind::FirstOccurrence => s.replacen(lit, rep, 1),
            SubstringMatchKind::Anywhere => s.replace(lit, rep),
        };
    }
    let cuts = boundaries(s);
    match kind {
        SubstringMatchKind::Prefix => match longest_match_at(s, &cuts, 0, pattern) {
            Some(end) => format!("{rep}{}", s.get(end..).unwrap_or("")),
            None => s.to_string(),
        },
        SubstringMatchKind::Suffix => {
            for &start in &cuts {
                if s.get(start..).is_some_and(|m| pattern_matches(pattern, m)) {
                    return format!("{}{rep}", s.get(..start).unwrap_or(""));
                }
            }
            s.to_string()
        }
        SubstringMatchKind::FirstOccurrence | SubstringMatchKind::Anywhere => {
            let all = matches!(kind, SubstringMatchKind::Anywhere);
            let mut out = String::new();
            let mut i = 0;
            let mut replaced = false;
            while i < cuts.len() {
                let start = cuts[i];
                let found = if replaced && !all {
                    None
                } else {
                    longest_match_at(s, &cuts, start, pattern)
                };
                match found {
                    Some(end) if end > start => {
                        out.push_str(rep);
                        replaced = true;
                        i = cuts.iter().position(|&c| c == end).unwrap_or(cuts.len());
                    }
                    _ => {
                        if let Some(ch) = s.get(start..).and_then(|r| r.chars().next()) {
                            out.push(ch);
                        }
                        i += 1;
                    }
                }
            }
            out
        }
    }
}

fn substring(
    value: ParamValue,
    start: i64,
    len: Option<i64>,
    name: &str,
) -> Result<ParamValue, ShellError> {
    let slice = |items: &[String]| -> Result<Vec<String>, ShellError> {
        let total = i64::try_from(items.len()).unwrap_or(i64::MAX);
        let from = if start < 0 {
            (total + start).max(0)
        } else {
            start.min(total)
        };
        let to = match len {
            None => total,
            Some(l) if l < 0 => total + l,
            Some(l) => from.saturating_add(l).min(total),
        };
        if to < from {
            return Err(ShellError::Arithmetic {
                expr: format!("{}", len.unwrap_or(0)),
                detail: "substring expression < 0".into(),
            });
        }
        let (from, to) = (
            usize::try_from(from).unwrap_or(0),
            usize::try_from(to).unwrap_or(0),
        );
        Ok(items
            .get(from..to)
            .map(<[String]>::to_vec)
            .unwrap_or_default())
    };
    let _ = name;
    Ok(match value {
        ParamValue::Unset => ParamValue::Unset,
        ParamValue::Scalar(s) => {
            let chars: Vec<String> = s.chars().map(String::from).collect();
            ParamValue::Scalar(slice(&chars)?.concat())
        }
        ParamValue::List { items, joined } => ParamValue::List {
            items: slice(&items)?,
            joined,
        },
    })
}

/// `${x^}`, `${x^^}`, `${x,}`, `${x,,}`: the first or every character
/// that matches the pattern (any, without one) changes case.
fn change_case(s: &str, upper: bool, all: bool, pattern: Option<&str>) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        let wanted = (all || i == 0)
            && pattern.is_none_or(|p| pattern_matches(p, c.encode_utf8(&mut [0; 4])));
        match (wanted, upper) {
            (true, true) => out.extend(c.to_uppercase()),
            (true, false) => out.extend(c.to_lowercase()),
            (false, _) => out.push(c),
        }
    }
    out
}

fn change_first(s: &str, upper: bool) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if upper => c.to_uppercase().chain(chars).collect(),
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn transform(
    value: ParamValue,
    op: &brush_parser::word::ParameterTransformOp,
) -> Option<ParamValue> {
    use brush_parser::word::ParameterTransformOp as T;
    Some(match op {
        T::ToUpperCase => value.map(str::to_uppercase),
        T::ToLowerCase => value.map(str::to_lowercase),
        T::CapitalizeInitial => value.map(|s| change_first(s, true)),
        T::Quoted => value.map(crate::programs::quoting::single_quote),
        T::ExpandEscapeSequences => value.map(crate::programs::escapes::decode_ansi_c),
        _ => return None,
    })
}

/// A random number from the host's entropy (std's hasher keys come from
/// `wasi:random`), so `$RANDOM` differs in every run.
fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_affixes() {
        assert_eq!(remove_affix("a.tar.gz", "*.", false, false), "tar.gz");
        assert_eq!(remove_affix("a.tar.gz", "*.", false, true), "gz");
        assert_eq!(remove_affix("a.tar.gz", ".*", true, false), "a.tar");
        assert_eq!(remove_affix("a.tar.gz", ".*", true, true), "a");
    }

    #[test]
    fn replaces() {
        assert_eq!(
            replace("hello", "l", "L", &SubstringMatchKind::FirstOccurrence),
            "heLlo"
        );
        assert_eq!(
            replace("hello", "l", "L", &SubstringMatchKind::Anywhere),
            "heLLo"
        );
        assert_eq!(
            replace("hello", "h", "J", &SubstringMatchKind::Prefix),
            "Jello"
        );
        assert_eq!(
            replace("hello", "o", "!", &SubstringMatchKind::Suffix),
            "hell!"
        );
    }

    #[test]
    fn substrings() {
        let v = substring(ParamValue::Scalar("abcdef".into()), 1, Some(3), "x").expect("ok");
        assert!(matches!(v, ParamValue::Scalar(s) if s == "bcd"));
        let v = substring(ParamValue::Scalar("abcdef".into()), -2, None, "x").expect("ok");
        assert!(matches!(v, ParamValue::Scalar(s) if s == "ef"));
    }
}

//! Assignments: `name=value`, `name+=value`, `name[i]=value`,
//! `name=(a b)`, as commands write them and as `declare` receives them in
//! text (`declare 'a[1]=x'`, `declare -a 'a=(x y)'`), honouring the
//! variable's attributes (`-i` evaluates, `-u`/`-l`/`-c` change case).

use std::collections::BTreeMap;

use brush_parser::ast;

use super::Shell;
use super::vars::Value;
use crate::errors::{ShellError, Unwind};
use crate::streams::Io;

/// The items of a compound value `(...)`.
type Items = Vec<(Option<ast::Word>, ast::Word)>;

impl Shell {
    /// `name=value`, `name+=value`, `name=(a b)`, `name[i]=value`.
    pub(crate) fn assign(&mut self, a: &ast::Assignment, io: &Io) -> Result<(), Unwind> {
        let result = match (&a.name, &a.value) {
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Scalar(w)) => {
                let w = self.with_colon_tildes(w);
                self.expand_string(&w, io)
                    .and_then(|v| self.assign_scalar_text(name, v, a.append, io))
            }
            (ast::AssignmentName::VariableName(name), ast::AssignmentValue::Array(items)) => {
                self.assign_array(name, items, a.append, io)
            }
            (
                ast::AssignmentName::ArrayElementName(name, index),
                ast::AssignmentValue::Scalar(w),
            ) => self
                .expand_string(w, io)
                .and_then(|v| self.assign_element_text(name, index, &v, a.append, io)),
            (ast::AssignmentName::ArrayElementName(name, _), ast::AssignmentValue::Array(_)) => {
                Err(ShellError::BadSubstitution(name.clone()))
            }
        };
        result.map_err(|err| self.fail(io, &err))
    }

    /// An assignment value with `~` after unquoted colons expanded
    /// (`PATH=/bin:~/bin`), as bash does in assignments only.
    fn with_colon_tildes(&self, w: &ast::Word) -> ast::Word {
        let home = self.vars.scalar("HOME").unwrap_or_default();
        let value = expand_colon_tildes(&w.value, home);
        ast::Word {
            value,
            loc: w.loc.clone(),
        }
    }

    /// The value to store: arithmetic for `declare -i`, appended for `+=`.
    fn stored_value(
        &mut self,
        name: &str,
        old: Option<String>,
        value: String,
        append: bool,
        io: &Io,
    ) -> Result<String, ShellError> {
        let Some(var) = self.vars.get(name) else {
            return Ok(value);
        };
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        if !var.integer {
            return Ok(if append {
                old.unwrap_or_default() + &value
            } else {
                value
            });
        }
        let n = self.arith_expand_eval(&value, io)?;
        let base = match old {
            Some(old) if append => super::parse_number(old.trim()).unwrap_or(0),
            _ => 0,
        };
        Ok(base.wrapping_add(n).to_string())
    }

    /// `name=value` with the value already expanded.
    pub(crate) fn assign_scalar_text(
        &mut self,
        name: &str,
        value: String,
        append: bool,
        io: &Io,
    ) -> Result<(), ShellError> {
        let old = self.vars.scalar(name).map(str::to_string);
        let value = self.stored_value(name, old, value, append, io)?;
        self.vars.set(name, value)
    }

    /// `name[index]=value`: the subscript is a string for associative
    /// arrays, else full arithmetic (`a[i++]`, `a[${x[0]}]`) where
    /// negative counts back from the end.
    pub(crate) fn assign_element_text(
        &mut self,
        name: &str,
        index: &str,
        value: &str,
        append: bool,
        io: &Io,
    ) -> Result<(), ShellError> {
        if self.vars.is_assoc(name) {
            let key = self.assoc_key(index, io)?;
            let old = self.vars.get_key(name, &key).map(str::to_string);
            let value = self.stored_value(name, old, value.to_string(), append, io)?;
            return self.vars.set_key(name, key, value);
        }
        let i = self.arith_expand_eval(index, io)?;
        let len = match self.vars.value(name) {
            Some(Value::Indexed(m)) => m.keys().next_back().map_or(0, |k| k + 1),
            Some(_) => 1,
            None => 0,
        };
        let i = if i < 0 {
            i + i64::try_from(len).unwrap_or(0)
        } else {
            i
        };
        let i =
            usize::try_from(i).map_err(|_| ShellError::BadSubscript(format!("{name}[{index}]")))?;
        let old = match self.vars.value(name) {
            Some(Value::Indexed(m)) => m.get(&i).cloned(),
            Some(Value::Scalar(s)) if i == 0 => Some(s.clone()),
            _ => None,
        };
        let value = self.stored_value(name, old, value.to_string(), append, io)?;
        self.vars.set_element(name, i, value)
    }

    /// `declare -a 'name=(...)'`: the text is parsed as a compound value
    /// and expanded now; text that is not one is a single element.
    pub(crate) fn assign_compound_text(
        &mut self,
        name: &str,
        text: &str,
        append: bool,
        io: &Io,
    ) -> Result<(), ShellError> {
        match parse_compound(text) {
            Some(items) => self.assign_array(name, &items, append, io),
            None if self.vars.is_assoc(name) => self.vars.set_key(name, "0".into(), text.into()),
            None => self.vars.set_value(
                name,
                Value::Indexed(BTreeMap::from([(0, text.to_string())])),
            ),
        }
    }

    /// `m=([k]=v ...)` (or `+=`) for an associative array.
    fn assign_assoc(
        &mut self,
        name: &str,
        items: &[(Option<ast::Word>, ast::Word)],
        append: bool,
        io: &Io,
    ) -> Result<(), ShellError> {
        let mut pairs = Vec::new();
        for (key, value) in items {
            if let Some(k) = key {
                let key = self.assoc_key(&k.value, io)?;
                let value = self.expand_string(value, io)?;
                pairs.push((key, self.stored_value(name, None, value, false, io)?));
            }
        }
        if !append {
            self.vars.set_value(name, Value::Assoc(BTreeMap::new()))?;
        }
        for (key, value) in pairs {
            self.vars.set_key(name, key, value)?;
        }
        Ok(())
    }

    /// An associative array's subscript: expanded as a string, not
    /// evaluated as arithmetic.
    pub(crate) fn assoc_key(&mut self, index: &str, io: &Io) -> Result<String, ShellError> {
        let parts = self.word_parts(index, io)?;
        Ok(super::expand::join_parts(&parts))
    }

    pub(crate) fn assign_array(
        &mut self,
        name: &str,
        items: &[(Option<ast::Word>, ast::Word)],
        append: bool,
        io: &Io,
    ) -> Result<(), ShellError> {
        if self.vars.is_assoc(name) {
            return self.assign_assoc(name, items, append, io);
        }
        // Expand everything first: the words may read the array itself.
        let mut elements: Vec<(Option<usize>, String)> = Vec::new();
        for (key, value) in items {
            match key {
                Some(k) => {
                    let i = super::arith::eval_index(self, &k.value)?;
                    let i = usize::try_from(i).unwrap_or(0);
                    let value = self.expand_string(value, io)?;
                    elements.push((Some(i), self.stored_value(name, None, value, false, io)?));
                }
                None => {
                    for field in self.expand_words(std::slice::from_ref(value), io)? {
                        elements.push((None, self.stored_value(name, None, field, false, io)?));
                    }
                }
            }
        }
        let mut next = match (append, self.vars.value(name)) {
            (true, Some(Value::Indexed(m))) => m.keys().next_back().map_or(0, |k| k + 1),
            (true, Some(Value::Scalar(_))) => 1,
            _ => {
                self.vars.set_value(name, Value::Indexed(BTreeMap::new()))?;
                0
            }
        };
        // `a+=(x)` adds in place: appending in a loop stays linear.
        for (index, value) in elements {
            next = index.unwrap_or(next);
            self.vars.set_element(name, next, value)?;
            next += 1;
        }
        Ok(())
    }
}

/// The items of `(...)` text, if it is exactly one compound value.
fn parse_compound(text: &str) -> Option<Items> {
    let program = super::parse_program(&format!("_={text}")).ok()?;
    let [list] = program.complete_commands.as_slice() else {
        return None;
    };
    let [item] = list.0.as_slice() else {
        return None;
    };
    if !item.0.additional.is_empty() {
        return None;
    }
    let [ast::Command::Simple(cmd)] = item.0.first.seq.as_slice() else {
        return None;
    };
    if cmd.word_or_name.is_some() || cmd.suffix.is_some() {
        return None;
    }
    let prefix = cmd.prefix.as_ref()?;
    let [ast::CommandPrefixOrSuffixItem::AssignmentWord(a, _)] = prefix.0.as_slice() else {
        return None;
    };
    match &a.value {
        ast::AssignmentValue::Array(items) => Some(items.clone()),
        ast::AssignmentValue::Scalar(_) => None,
    }
}

/// `:~` and `:~/` outside quotes and `${ }`, with `~` replaced by `home`
/// (single-quoted, so nothing in it expands again).
fn expand_colon_tildes(text: &str, home: &str) -> String {
    if !text.contains(":~") {
        return text.to_string();
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let (mut quote, mut escaped, mut braces) = (None, false, 0usize);
    for (i, &c) in chars.iter().enumerate() {
        let tilde_here = c == '~'
            && quote.is_none()
            && !escaped
            && braces == 0
            && i > 0
            && chars.get(i - 1) == Some(&':')
            && matches!(chars.get(i + 1), None | Some('/' | ':'));
        if tilde_here {
            out.push_str(&crate::programs::quoting::single_quote(home));
            continue;
        }
        out.push(c);
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (None | Some('"'), '\\') => escaped = true,
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '{') if i > 0 && chars.get(i - 1) == Some(&'$') => braces += 1,
            (None, '}') if braces > 0 => braces -= 1,
            _ => {}
        }
    }
    out
}

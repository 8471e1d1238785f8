//! Shell variables: scalars, indexed and associative arrays, export and readonly flags,
//! and the dynamic scopes `local` creates inside functions.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::errors::ShellError;

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Value {
    Scalar(String),
    /// Bash arrays are sparse: `a[5]=x` leaves 0..4 unset.
    Indexed(BTreeMap<usize, String>),
    /// `declare -A`: string keys. Bash lists them in hash order, which is
    /// unspecified; ours is sorted, so output is at least stable.
    Assoc(BTreeMap<String, String>),
}

impl Value {
    /// What `$name` means: the scalar, or element 0 of an array.
    pub(crate) fn as_scalar(&self) -> Option<&str> {
        match self {
            Self::Scalar(s) => Some(s),
            Self::Indexed(map) => map.get(&0).map(String::as_str),
            Self::Assoc(map) => map.get("0").map(String::as_str),
        }
    }

    /// What `${name[@]}` means.
    pub(crate) fn elements(&self) -> Vec<String> {
        match self {
            Self::Scalar(s) => vec![s.clone()],
            Self::Indexed(map) => map.values().cloned().collect(),
            Self::Assoc(map) => map.values().cloned().collect(),
        }
    }

    /// What `${!name[@]}` means.
    pub(crate) fn keys(&self) -> Vec<String> {
        match self {
            Self::Scalar(_) => vec!["0".to_string()],
            Self::Indexed(map) => map.keys().map(ToString::to_string).collect(),
            Self::Assoc(map) => map.keys().cloned().collect(),
        }
    }
}

/// `declare -u`, `-l`, `-c`: how assigned values change case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Case {
    #[default]
    Keep,
    Upper,
    Lower,
    /// First letter upper, the rest lower.
    Capitalize,
}

impl Case {
    fn apply(self, value: String) -> String {
        match self {
            Case::Keep => value,
            Case::Upper => value.to_uppercase(),
            Case::Lower => value.to_lowercase(),
            Case::Capitalize => {
                let lower = value.to_lowercase();
                let mut chars = lower.chars();
                match chars.next() {
                    Some(c) => c.to_uppercase().chain(chars).collect(),
                    None => lower,
                }
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Var {
    pub(crate) value: Value,
    pub(crate) exported: bool,
    pub(crate) readonly: bool,
    /// `declare -n`: the value is the name of the variable this one
    /// stands for.
    pub(crate) nameref: bool,
    /// `declare -i`: assignments are evaluated as arithmetic.
    pub(crate) integer: bool,
    pub(crate) case: Case,
    /// `declare -t`.
    pub(crate) trace: bool,
    /// Declared (`declare x`, `local x`) but never assigned: it has
    /// attributes, yet expansions see it unset.
    pub(crate) valueless: bool,
}

impl Default for Var {
    fn default() -> Self {
        Self {
            value: Value::Scalar(String::new()),
            exported: false,
            readonly: false,
            nameref: false,
            integer: false,
            case: Case::Keep,
            trace: false,
            valueless: false,
        }
    }
}

impl Var {
    /// The attribute letters bash shows (`declare -p`, `${x@a}`), in its
    /// order.
    pub(crate) fn flags(&self) -> String {
        let mut flags = String::new();
        match self.value {
            Value::Indexed(_) => flags.push('a'),
            Value::Assoc(_) => flags.push('A'),
            Value::Scalar(_) => {}
        }
        for (on, c) in [
            (self.integer, 'i'),
            (self.nameref, 'n'),
            (self.readonly, 'r'),
            (self.trace, 't'),
            (self.exported, 'x'),
            (self.case == Case::Capitalize, 'c'),
            (self.case == Case::Lower, 'l'),
            (self.case == Case::Upper, 'u'),
        ] {
            if on {
                flags.push(c);
            }
        }
        flags
    }
}

/// How many namerefs a name may go through (bash's NAMEREF_MAX); a longer
/// chain names nothing.
const MAX_NAMEREF_HOPS: usize = 8;

/// `name[sub]` split into its parts; `None` for a plain name.
pub(crate) fn split_subscript(target: &str) -> Option<(&str, &str)> {
    let (base, rest) = target.split_once('[')?;
    let sub = rest.strip_suffix(']')?;
    (is_name(base) && !sub.is_empty()).then_some((base, sub))
}

/// All variables of one shell. Function scopes record what `local`
/// shadowed so that returning restores it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vars {
    table: HashMap<String, Var>,
    /// `export X` before X has a value: exported once assigned.
    pending_exports: HashSet<String>,
    scopes: Vec<Vec<(String, Option<Var>)>>,
    /// Warnings found while reading (circular namerefs), for the shell to
    /// print: reads do not have the error stream at hand.
    warnings: std::cell::RefCell<Vec<String>>,
    /// `set -a`: every variable assigned is exported.
    pub(crate) allexport: bool,
}

impl Vars {
    /// Variables from the environment the host gives, all exported.
    pub(crate) fn from_env(env: &[(String, String)]) -> Self {
        let mut vars = Self::default();
        for (name, value) in env {
            let var = Var {
                value: Value::Scalar(value.clone()),
                exported: true,
                ..Var::default()
            };
            vars.table.insert(name.clone(), var);
        }
        vars
    }

    /// The warnings gathered since the last call.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut *self.warnings.borrow_mut())
    }

    /// The variable `name` stands for: itself, or what its namerefs name
    /// (possibly `array[subscript]`). `None` for a circular or too long
    /// chain, which names nothing.
    pub(crate) fn try_resolve(&self, name: &str) -> Option<String> {
        let mut current = name.to_string();
        for _ in 0..=MAX_NAMEREF_HOPS {
            match self.table.get(&current) {
                Some(Var {
                    nameref: true,
                    valueless: false,
                    value: Value::Scalar(target),
                    ..
                }) if !target.is_empty() => {
                    if target == name || target == &current {
                        self.warnings
                            .borrow_mut()
                            .push(format!("warning: {name}: circular name reference"));
                        return None;
                    }
                    current = target.clone();
                }
                _ => return Some(current),
            }
        }
        None
    }

    /// `try_resolve`, with an empty name (which no variable has) for a
    /// chain that names nothing.
    pub(crate) fn resolve(&self, name: &str) -> String {
        self.try_resolve(name).unwrap_or_default()
    }

    /// The variable `name` stands for, unset or not (attributes).
    pub(crate) fn get(&self, name: &str) -> Option<&Var> {
        let target = self.resolve(name);
        let base = split_subscript(&target).map_or(target.as_str(), |(b, _)| b);
        self.table.get(base)
    }

    /// The value of the variable `name` stands for, if it has one. A
    /// nameref to an element stands for no whole variable.
    pub(crate) fn value(&self, name: &str) -> Option<&Value> {
        let target = self.try_resolve(name)?;
        self.table
            .get(&target)
            .filter(|v| !v.valueless)
            .map(|v| &v.value)
    }

    /// Whether `name` is a nameref to an array element (`ref='a[1]'`).
    pub(crate) fn refers_to_element(&self, name: &str) -> bool {
        self.get_raw(name).is_some_and(|v| v.nameref)
            && self
                .try_resolve(name)
                .is_some_and(|t| split_subscript(&t).is_some())
    }

    /// `[[ -v name ]]`: set, with a value (element 0 for an array); `name`
    /// may be `array[subscript]`. A nameref to an element counts as unset,
    /// as bash looks for a variable with that literal name.
    pub(crate) fn is_set(&self, name: &str) -> bool {
        if let Some((base, sub)) = split_subscript(name) {
            if sub == "@" || sub == "*" {
                return self.value(base).is_some_and(|v| !v.elements().is_empty());
            }
            return self.element(&self.resolve(base), sub).is_some();
        }
        let Some(target) = self.try_resolve(name) else {
            return false;
        };
        self.table
            .get(&target)
            .filter(|v| !v.valueless)
            .is_some_and(|v| v.value.as_scalar().is_some())
    }

    /// The variable `name` itself, not what a nameref names.
    pub(crate) fn get_raw(&self, name: &str) -> Option<&Var> {
        self.table.get(name)
    }

    /// The scalar value of `$name`, if set (an element for a nameref to
    /// `array[subscript]`).
    pub(crate) fn scalar(&self, name: &str) -> Option<&str> {
        let target = self.try_resolve(name)?;
        match split_subscript(&target) {
            Some((base, sub)) => self.element(base, sub),
            None => self
                .table
                .get(&target)
                .filter(|v| !v.valueless)
                .and_then(|v| v.value.as_scalar()),
        }
    }

    /// `${base[sub]}` for a literal subscript: a number (negative counts
    /// from the end) or an associative key.
    pub(crate) fn element(&self, base: &str, sub: &str) -> Option<&str> {
        let var = self.table.get(base).filter(|v| !v.valueless)?;
        match &var.value {
            Value::Assoc(map) => map.get(sub).map(String::as_str),
            Value::Indexed(map) => {
                let i = literal_index(sub, map)?;
                map.get(&i).map(String::as_str)
            }
            Value::Scalar(s) => (sub.trim() == "0").then_some(s.as_str()),
        }
    }

    /// `declare -n name=target`, or `declare -n name` keeping the value.
    pub(crate) fn set_nameref(&mut self, name: &str, target: Option<&str>) -> Result<(), String> {
        let current = self.table.get(name);
        let explicit = target.is_some();
        let target = match target {
            Some(t) => t.to_string(),
            None => current
                .filter(|v| !v.valueless)
                .and_then(|v| v.value.as_scalar())
                .unwrap_or("")
                .to_string(),
        };
        let valid = target.is_empty() || is_name(&target) || split_subscript(&target).is_some();
        if !valid {
            return Err(format!(
                "`{target}': invalid variable name for name reference"
            ));
        }
        if explicit && target == name {
            return Err(format!(
                "{name}: nameref variable self references not allowed"
            ));
        }
        let var = self.table.entry(name.to_string()).or_default();
        if var.readonly && var.nameref {
            return Err(format!("{name}: readonly variable"));
        }
        var.valueless = target.is_empty();
        var.value = Value::Scalar(target);
        var.nameref = true;
        Ok(())
    }

    /// Changes the attributes of the variable `name` stands for, creating
    /// it (valueless) if needed.
    pub(crate) fn attrs_mut(&mut self, name: &str) -> Option<&mut Var> {
        let target = self.try_resolve(name)?;
        let base = split_subscript(&target).map_or(target.as_str(), |(b, _)| b);
        let exported = self.pending_exports.remove(base);
        Some(self.table.entry(base.to_string()).or_insert_with(|| Var {
            exported,
            valueless: true,
            ..Var::default()
        }))
    }

    /// The variable `name` itself, created valueless if needed (`-n`).
    pub(crate) fn raw_mut(&mut self, name: &str) -> &mut Var {
        self.table.entry(name.to_string()).or_insert_with(|| Var {
            valueless: true,
            ..Var::default()
        })
    }

    /// `unset -n name`: the nameref itself, not its target.
    pub(crate) fn unset_raw(&mut self, name: &str) -> Result<(), ShellError> {
        if self.table.get(name).is_some_and(|v| v.readonly) {
            return Err(ShellError::Readonly(name.to_string()));
        }
        self.table.remove(name);
        Ok(())
    }

    /// Where a write to `name` goes: a plain variable or an element.
    fn write_target(&self, name: &str) -> Result<String, ShellError> {
        self.try_resolve(name).ok_or_else(|| {
            // The error says it; the warning must not print twice.
            self.warnings.borrow_mut().pop();
            ShellError::CircularRef(name.to_string())
        })
    }

    /// Sets a scalar, keeping the export flag. Assigning to an array
    /// variable by plain name sets element 0, as bash does.
    pub(crate) fn set(&mut self, name: &str, value: String) -> Result<(), ShellError> {
        let target = self.write_target(name)?;
        if let Some((base, sub)) = split_subscript(&target) {
            return self.set_literal_element(base, sub, value);
        }
        let name = target.as_str();
        let var = self.entry(name, Value::Scalar(String::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        let value = var.case.apply(value);
        match &mut var.value {
            Value::Indexed(map) => {
                map.insert(0, value);
            }
            Value::Assoc(map) => {
                map.insert("0".to_string(), value);
            }
            Value::Scalar(s) => *s = value,
        }
        var.valueless = false;
        Ok(())
    }

    /// A write through a nameref to `base[sub]`.
    fn set_literal_element(
        &mut self,
        base: &str,
        sub: &str,
        value: String,
    ) -> Result<(), ShellError> {
        if sub == "@" || sub == "*" {
            return Err(ShellError::BadSubscript(format!("{base}[{sub}]")));
        }
        if self.is_assoc(base) {
            return self.set_key(base, sub.to_string(), value);
        }
        let index = match self.value(base) {
            Some(Value::Indexed(map)) => literal_index(sub, map),
            _ => sub.trim().parse::<usize>().ok(),
        };
        let index = index.ok_or_else(|| ShellError::BadSubscript(format!("{base}[{sub}]")))?;
        self.set_element(base, index, value)
    }

    /// Whether `name` is an associative array (`declare -A`).
    pub(crate) fn is_assoc(&self, name: &str) -> bool {
        matches!(self.get(name).map(|v| &v.value), Some(Value::Assoc(_)))
    }

    /// `name[key]=value` for an associative array.
    pub(crate) fn set_key(
        &mut self,
        name: &str,
        key: String,
        value: String,
    ) -> Result<(), ShellError> {
        let name = &self.write_target(name)?;
        let var = self.entry(name, Value::Assoc(BTreeMap::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        let value = var.case.apply(value);
        if let Value::Assoc(map) = &mut var.value {
            map.insert(key, value);
        }
        var.valueless = false;
        Ok(())
    }

    /// `${name[key]}` of an associative array.
    pub(crate) fn get_key(&self, name: &str, key: &str) -> Option<&str> {
        match self.value(name) {
            Some(Value::Assoc(map)) => map.get(key).map(String::as_str),
            _ => None,
        }
    }

    /// `unset 'name[sub]'`: removes one element of an array.
    pub(crate) fn unset_element(&mut self, name: &str, sub: &str) -> Result<(), ShellError> {
        let name = &self.resolve(name);
        let Some(var) = self.table.get_mut(name) else {
            return Ok(());
        };
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        match &mut var.value {
            Value::Assoc(map) => {
                map.remove(sub);
            }
            Value::Indexed(map) => {
                if let Some(i) = literal_index(sub, map) {
                    map.remove(&i);
                }
            }
            Value::Scalar(_) if sub.trim() == "0" => {
                self.table.remove(name);
            }
            Value::Scalar(_) => {}
        }
        Ok(())
    }

    pub(crate) fn set_value(&mut self, name: &str, value: Value) -> Result<(), ShellError> {
        let name = &self.write_target(name)?;
        if split_subscript(name).is_some() {
            return Err(ShellError::BadSubscript(name.to_string()));
        }
        let var = self.entry(name, Value::Scalar(String::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        let case = var.case;
        var.value = match value {
            Value::Scalar(s) => Value::Scalar(case.apply(s)),
            Value::Indexed(map) => {
                Value::Indexed(map.into_iter().map(|(k, v)| (k, case.apply(v))).collect())
            }
            Value::Assoc(map) => {
                Value::Assoc(map.into_iter().map(|(k, v)| (k, case.apply(v))).collect())
            }
        };
        var.valueless = false;
        Ok(())
    }

    /// `name[index]=value`.
    pub(crate) fn set_element(
        &mut self,
        name: &str,
        index: usize,
        value: String,
    ) -> Result<(), ShellError> {
        let name = &self.write_target(name)?;
        let var = self.entry(name, Value::Indexed(BTreeMap::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        if let Value::Scalar(s) = &var.value {
            var.value = Value::Indexed(BTreeMap::from([(0, s.clone())]));
        }
        let value = var.case.apply(value);
        match &mut var.value {
            Value::Indexed(map) => {
                map.insert(index, value);
            }
            Value::Assoc(map) => {
                map.insert(index.to_string(), value);
            }
            Value::Scalar(_) => {}
        }
        var.valueless = false;
        Ok(())
    }

    /// Puts back what `get_raw(name).cloned()` returned earlier (temporary
    /// assignments like `X=1 cmd`).
    pub(crate) fn restore(&mut self, name: &str, saved: Option<Var>) {
        match saved {
            Some(var) => {
                self.table.insert(name.to_string(), var);
            }
            None => {
                self.table.remove(name);
            }
        }
    }

    /// Declares a name exported without giving it a value (`export X`).
    pub(crate) fn mark_exported(&mut self, name: &str) {
        if let Some(var) = self.attrs_mut(name) {
            var.exported = true;
        }
    }

    /// The entry for `name`, created on first assignment; a valueless
    /// scalar takes the shape of the first value it gets.
    fn entry(&mut self, name: &str, empty: Value) -> &mut Var {
        let exported = self.pending_exports.remove(name) || self.allexport;
        let allexport = self.allexport;
        let var = self.table.entry(name.to_string()).or_insert(Var {
            value: empty.clone(),
            exported,
            ..Var::default()
        });
        var.exported |= allexport;
        if var.valueless && matches!(var.value, Value::Scalar(_)) {
            var.value = empty;
        }
        var
    }

    pub(crate) fn unset(&mut self, name: &str) -> Result<(), ShellError> {
        let Some(target) = self.try_resolve(name) else {
            return Ok(());
        };
        if let Some((base, sub)) = split_subscript(&target) {
            return self.unset_element(base, sub);
        }
        let name = &target;
        if self.table.get(name).is_some_and(|v| v.readonly) {
            return Err(ShellError::Readonly(name.to_string()));
        }
        self.pending_exports.remove(name);
        self.unset_scoped(name);
        Ok(())
    }

    /// Unsets the visible `name`: a local of the running function stays
    /// declared (and local) without a value; a local of a calling function
    /// goes, revealing what it shadowed.
    fn unset_scoped(&mut self, name: &str) {
        let owner = self
            .scopes
            .iter()
            .rposition(|scope| scope.iter().any(|(n, _)| n == name));
        let Some(owner) = owner else {
            self.table.remove(name);
            return;
        };
        if owner + 1 == self.scopes.len() {
            self.table.insert(
                name.to_string(),
                Var {
                    valueless: true,
                    ..Var::default()
                },
            );
            return;
        }
        let saved = self.scopes.get_mut(owner).and_then(|scope| {
            let pos = scope.iter().position(|(n, _)| n == name)?;
            Some(scope.remove(pos).1)
        });
        match saved.flatten() {
            Some(var) => {
                self.table.insert(name.to_string(), var);
            }
            None => {
                self.table.remove(name);
            }
        }
    }

    /// Every exported variable with a scalar value, sorted by name: the
    /// environment of a child program.
    pub(crate) fn exported(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .table
            .iter()
            .filter(|(_, v)| v.exported && !v.valueless)
            .filter_map(|(k, v)| match &v.value {
                Value::Scalar(s) => Some((k.clone(), s.clone())),
                Value::Indexed(_) | Value::Assoc(_) => None,
            })
            .collect();
        env.sort();
        env
    }

    /// All names, sorted (for `set` and `declare -p`).
    pub(crate) fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.table.keys().cloned().collect();
        names.sort();
        names
    }

    /// The names `local` made in the innermost function, in order.
    pub(crate) fn local_names(&self) -> Vec<String> {
        let Some(scope) = self.scopes.last() else {
            return Vec::new();
        };
        scope
            .iter()
            .map(|(n, _)| n.clone())
            .filter(|n| self.table.contains_key(n))
            .collect()
    }

    /// Enters a function: a new scope for `local`.
    pub(crate) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    /// Leaves a function, restoring what its locals shadowed.
    pub(crate) fn pop_scope(&mut self) {
        let Some(scope) = self.scopes.pop() else {
            return;
        };
        for (name, saved) in scope.into_iter().rev() {
            match saved {
                Some(var) => {
                    self.table.insert(name, var);
                }
                None => {
                    self.table.remove(&name);
                }
            }
        }
    }

    /// `local name`: remembers the current variable for `pop_scope` and
    /// starts a new, valueless one. Returns false outside a function.
    pub(crate) fn make_local(&mut self, name: &str) -> bool {
        let saved = self.table.get(name).cloned();
        let Some(scope) = self.scopes.last_mut() else {
            return false;
        };
        if scope.iter().any(|(n, _)| n == name) {
            return true;
        }
        scope.push((name.to_string(), saved));
        self.table.insert(
            name.to_string(),
            Var {
                valueless: true,
                ..Var::default()
            },
        );
        true
    }

    /// Runs `f` on the global (outermost) variable `name`, as
    /// `declare -g` sees it from inside a function.
    pub(crate) fn with_global<T>(&mut self, name: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let shadowed = self.global_shadow(name);
        let Some(idx) = shadowed else {
            return f(self);
        };
        // Swap the global in, work on it, swap the local back.
        let (scope, pos) = idx;
        let global = self
            .scopes
            .get_mut(scope)
            .and_then(|s| s.get_mut(pos))
            .and_then(|(_, saved)| saved.take());
        let local = match global {
            Some(var) => self.table.insert(name.to_string(), var),
            None => self.table.remove(name),
        };
        let out = f(self);
        let global = self.table.remove(name);
        if let Some(slot) = self.scopes.get_mut(scope).and_then(|s| s.get_mut(pos)) {
            slot.1 = global;
        }
        if let Some(var) = local {
            self.table.insert(name.to_string(), var);
        }
        out
    }

    /// Where the outermost saved copy of `name` is, if a local shadows it.
    fn global_shadow(&self, name: &str) -> Option<(usize, usize)> {
        self.scopes.iter().enumerate().find_map(|(i, scope)| {
            scope
                .iter()
                .position(|(n, _)| n == name)
                .map(|pos| (i, pos))
        })
    }
}

/// The index a literal subscript names in an indexed array: a number,
/// negative counting back from the end.
fn literal_index(sub: &str, map: &BTreeMap<usize, String>) -> Option<usize> {
    let n: i64 = sub.trim().parse().ok()?;
    if n >= 0 {
        return usize::try_from(n).ok();
    }
    let len = map.keys().next_back().map_or(0, |k| k + 1);
    usize::try_from(i64::try_from(len).ok()? + n).ok()
}

/// True if `name` is a valid shell identifier.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locals_restore_on_pop() {
        let mut vars = Vars::default();
        vars.set("x", "outer".into()).expect("set");
        vars.push_scope();
        assert!(vars.make_local("x"));
        vars.set("x", "inner".into()).expect("set");
        assert_eq!(vars.scalar("x"), Some("inner"));
        vars.pop_scope();
        assert_eq!(vars.scalar("x"), Some("outer"));
    }

    #[test]
    fn readonly_refuses_assignment() {
        let mut vars = Vars::default();
        vars.set("r", "1".into()).expect("set");
        if let Some(var) = vars.attrs_mut("r") {
            var.readonly = true;
        }
        assert!(vars.set("r", "2".into()).is_err());
    }

    #[test]
    fn names_are_checked() {
        assert!(is_name("_a1"));
        assert!(!is_name("1a"));
        assert!(!is_name(""));
    }
}

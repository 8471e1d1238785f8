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
}

/// How many namerefs a name may go through before it is taken as is
/// (bash warns about circular references; we stop quietly).
const MAX_NAMEREF_HOPS: usize = 10;

/// All variables of one shell. Function scopes record what `local`
/// shadowed so that returning restores it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Vars {
    table: HashMap<String, Var>,
    /// `export X` before X has a value: exported once assigned.
    pending_exports: HashSet<String>,
    scopes: Vec<Vec<(String, Option<Var>)>>,
}

impl Vars {
    /// Variables from the environment the host gives, all exported.
    pub(crate) fn from_env(env: &[(String, String)]) -> Self {
        let mut vars = Self::default();
        for (name, value) in env {
            let var = Var {
                value: Value::Scalar(value.clone()),
                exported: true,
                readonly: false,
                nameref: false,
                integer: false,
            };
            vars.table.insert(name.clone(), var);
        }
        vars
    }

    /// The variable `name` stands for: itself, or what its namerefs name.
    pub(crate) fn resolve(&self, name: &str) -> String {
        let mut current = name.to_string();
        for _ in 0..MAX_NAMEREF_HOPS {
            match self.table.get(&current) {
                Some(Var {
                    nameref: true,
                    value: Value::Scalar(target),
                    ..
                }) if !target.is_empty() && target != &current => current = target.clone(),
                _ => break,
            }
        }
        current
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Var> {
        self.table.get(&self.resolve(name))
    }

    /// The variable `name` itself, not what a nameref names.
    pub(crate) fn get_raw(&self, name: &str) -> Option<&Var> {
        self.table.get(name)
    }

    /// The scalar value of `$name`, if set.
    pub(crate) fn scalar(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| v.value.as_scalar())
    }

    /// `declare -n name=target`.
    pub(crate) fn set_nameref(&mut self, name: &str, target: &str) -> Result<(), ShellError> {
        let var = self.entry(name, Value::Scalar(String::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        var.value = Value::Scalar(target.to_string());
        var.nameref = true;
        Ok(())
    }

    /// Whether assignments to `name` are arithmetic (`declare -i`).
    pub(crate) fn is_integer(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| v.integer)
    }

    /// `declare -i name` / `declare +i name`.
    pub(crate) fn set_integer(&mut self, name: &str, on: bool) {
        let name = self.resolve(name);
        if let Some(var) = self.table.get_mut(&name) {
            var.integer = on;
        }
    }

    /// `unset -n name`: the nameref itself, not its target.
    pub(crate) fn unset_raw(&mut self, name: &str) {
        self.table.remove(name);
    }

    /// Sets a scalar, keeping the export flag. Assigning to an array
    /// variable by plain name sets element 0, as bash does.
    pub(crate) fn set(&mut self, name: &str, value: String) -> Result<(), ShellError> {
        let name = &self.resolve(name);
        let var = self.entry(name, Value::Scalar(String::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        match &mut var.value {
            Value::Indexed(map) => {
                map.insert(0, value);
            }
            Value::Assoc(map) => {
                map.insert("0".to_string(), value);
            }
            Value::Scalar(s) => *s = value,
        }
        Ok(())
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
        let name = &self.resolve(name);
        let var = self.entry(name, Value::Assoc(BTreeMap::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        if let Value::Assoc(map) = &mut var.value {
            map.insert(key, value);
        }
        Ok(())
    }

    /// `${name[key]}` of an associative array.
    pub(crate) fn get_key(&self, name: &str, key: &str) -> Option<&str> {
        match self.get(name).map(|v| &v.value) {
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
                if let Ok(i) = sub.trim().parse::<usize>() {
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
        let name = &self.resolve(name);
        let var = self.entry(name, Value::Scalar(String::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        var.value = value;
        Ok(())
    }

    /// `name[index]=value`.
    pub(crate) fn set_element(
        &mut self,
        name: &str,
        index: usize,
        value: String,
    ) -> Result<(), ShellError> {
        let name = &self.resolve(name);
        let var = self.entry(name, Value::Indexed(BTreeMap::new()));
        if var.readonly {
            return Err(ShellError::Readonly(name.to_string()));
        }
        if let Value::Scalar(s) = &var.value {
            var.value = Value::Indexed(BTreeMap::from([(0, s.clone())]));
        }
        match &mut var.value {
            Value::Indexed(map) => {
                map.insert(index, value);
            }
            Value::Assoc(map) => {
                map.insert(index.to_string(), value);
            }
            Value::Scalar(_) => {}
        }
        Ok(())
    }

    /// Puts back what `get(name).cloned()` returned earlier (temporary
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

    /// Clears the export flag (`export -n`).
    pub(crate) fn unexport(&mut self, name: &str) {
        self.pending_exports.remove(name);
        if let Some(var) = self.table.get_mut(name) {
            var.exported = false;
        }
    }

    /// Declares a name exported without giving it a value (`export X`).
    pub(crate) fn mark_exported(&mut self, name: &str) {
        if let Some(var) = self.table.get_mut(name) {
            var.exported = true;
        } else {
            self.pending_exports.insert(name.to_string());
        }
    }

    /// The entry for `name`, created unset-like on first assignment.
    fn entry(&mut self, name: &str, empty: Value) -> &mut Var {
        let exported = self.pending_exports.remove(name);
        self.table.entry(name.to_string()).or_insert(Var {
            value: empty,
            exported,
            readonly: false,
            nameref: false,
            integer: false,
        })
    }

    pub(crate) fn set_readonly(&mut self, name: &str) {
        if let Some(var) = self.table.get_mut(name) {
            var.readonly = true;
        }
    }

    pub(crate) fn unset(&mut self, name: &str) -> Result<(), ShellError> {
        let name = &self.resolve(name);
        if self.table.get(name).is_some_and(|v| v.readonly) {
            return Err(ShellError::Readonly(name.to_string()));
        }
        self.table.remove(name);
        self.pending_exports.remove(name);
        Ok(())
    }

    /// Every exported variable with a scalar value, sorted by name: the
    /// environment of a child program.
    pub(crate) fn exported(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = self
            .table
            .iter()
            .filter(|(_, v)| v.exported)
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

    /// `local name`: remembers the current value for `pop_scope`. Returns
    /// false outside a function.
    pub(crate) fn make_local(&mut self, name: &str) -> bool {
        let saved = self.table.get(name).cloned();
        let Some(scope) = self.scopes.last_mut() else {
            return false;
        };
        if !scope.iter().any(|(n, _)| n == name) {
            scope.push((name.to_string(), saved));
        }
        true
    }
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
        vars.set_readonly("r");
        assert!(vars.set("r", "2".into()).is_err());
    }

    #[test]
    fn names_are_checked() {
        assert!(is_name("_a1"));
        assert!(!is_name("1a"));
        assert!(!is_name(""));
    }
}

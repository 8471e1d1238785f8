//! `${x@op}` transformations that need more than the value: `@a`
//! (attributes), `@A` (an assignment that recreates the variable), `@K`
//! and `@k` (keys with values) and `@P` (prompt expansion).

use brush_parser::word::{Parameter, ParameterTransformOp};

use super::Shell;
use super::param::ParamValue;
use super::vars::Value;
use crate::errors::ShellError;
use crate::programs::quoting::{declare_quote, single_quote};
use crate::streams::Io;

impl Shell {
    /// `${parameter@op}`, or `None` for the operators `param` handles.
    pub(super) fn transform_with_vars(
        &mut self,
        parameter: &Parameter,
        indirect: bool,
        op: &ParameterTransformOp,
        io: &Io,
    ) -> Result<Option<ParamValue>, ShellError> {
        use ParameterTransformOp as T;
        let all = matches!(parameter, Parameter::NamedWithAllIndices { .. });
        Ok(Some(match op {
            T::ToAttributeFlags => {
                let flags = self
                    .var_name(parameter, indirect)?
                    .and_then(|n| self.vars.get(&n))
                    .map(super::vars::Var::flags)
                    .unwrap_or_default();
                let value = self.param_value(parameter, indirect)?;
                value.map(|_| flags.clone())
            }
            T::ToAssignmentLogic => self.assignment_form(parameter, indirect)?,
            T::PossiblyQuoteWithArraysExpanded { separate_words } if all => {
                self.keys_and_values(parameter, *separate_words)
            }
            T::PossiblyQuoteWithArraysExpanded { .. } => {
                self.param_value(parameter, indirect)?.map(single_quote)
            }
            T::PromptExpand => match self.param_value(parameter, indirect)? {
                ParamValue::Unset => ParamValue::Unset,
                ParamValue::Scalar(s) => ParamValue::Scalar(self.expand_prompt(&s, io)?),
                ParamValue::List { items, joined } => {
                    let mut out = Vec::new();
                    for item in items {
                        out.push(self.expand_prompt(&item, io)?);
                    }
                    ParamValue::List { items: out, joined }
                }
            },
            _ => return Ok(None),
        }))
    }

    /// The variable a parameter names, following `${!ref...}`.
    fn var_name(
        &self,
        parameter: &Parameter,
        indirect: bool,
    ) -> Result<Option<String>, ShellError> {
        let name = match parameter {
            Parameter::Named(n)
            | Parameter::NamedWithIndex { name: n, .. }
            | Parameter::NamedWithAllIndices { name: n, .. } => n.clone(),
            _ => return Ok(None),
        };
        if !indirect {
            return Ok(Some(self.vars.resolve(&name)));
        }
        Ok(match self.param_value(&Parameter::Named(name), false)? {
            ParamValue::Scalar(target) => Some(self.vars.resolve(&target)),
            _ => None,
        })
    }

    /// `${x@A}`: `x='v'`, or a `declare` command when attributes matter.
    fn assignment_form(
        &self,
        parameter: &Parameter,
        indirect: bool,
    ) -> Result<ParamValue, ShellError> {
        let Some(name) = self.var_name(parameter, indirect)? else {
            return Ok(ParamValue::Unset);
        };
        let Some(var) = self.vars.get(&name).filter(|v| !v.valueless) else {
            return Ok(ParamValue::Unset);
        };
        if matches!(parameter, Parameter::NamedWithAllIndices { .. }) {
            let text = crate::builtins::declaration(&name, var);
            return Ok(ParamValue::Scalar(text.trim_end().to_string()));
        }
        let flags = var.flags();
        let prefix = if flags.is_empty() {
            String::new()
        } else {
            format!("declare -{flags} ")
        };
        Ok(match self.param_value(parameter, indirect)? {
            ParamValue::Scalar(v) => {
                ParamValue::Scalar(format!("{prefix}{name}={}", single_quote(&v)))
            }
            _ if !flags.is_empty() => ParamValue::Scalar(format!("declare -{flags} {name}")),
            _ => ParamValue::Unset,
        })
    }

    /// `${a[@]@K}`: `key "value"` pairs; `@k` makes each its own word.
    fn keys_and_values(&self, parameter: &Parameter, separate: bool) -> ParamValue {
        let Parameter::NamedWithAllIndices { name, .. } = parameter else {
            return ParamValue::Unset;
        };
        let pairs: Vec<(String, String)> = match self.vars.value(name) {
            Some(Value::Indexed(map)) => map
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            Some(Value::Assoc(map)) => map.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            Some(Value::Scalar(s)) => vec![("0".to_string(), s.clone())],
            None => return ParamValue::Unset,
        };
        if separate {
            let items = pairs
                .into_iter()
                .flat_map(|(k, v)| [k, declare_quote(&v)])
                .collect();
            return ParamValue::List {
                items,
                joined: false,
            };
        }
        let words: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{k} {}", declare_quote(v)))
            .collect();
        let mut text = words.join(" ");
        // bash ends an associative array's list with a space.
        if self.vars.is_assoc(name) {
            text.push(' ');
        }
        ParamValue::Scalar(text)
    }
}

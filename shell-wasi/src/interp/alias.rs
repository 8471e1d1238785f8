//! Alias expansion. bash substitutes aliases while reading; this shell
//! parses first, so a simple command whose name is an alias is rewritten
//! as text (the alias value in place of the name) and run again. An alias
//! ending in a blank makes the next word a candidate too; an alias is not
//! expanded inside its own expansion.

use brush_parser::ast;

use super::Shell;
use crate::errors::Unwind;
use crate::streams::Io;

impl Shell {
    /// Runs `cmd` through its alias, or `None` if it names none.
    pub(crate) fn run_alias(
        &mut self,
        cmd: &ast::SimpleCommand,
        io: &Io,
    ) -> Option<Result<i32, Unwind>> {
        if self.aliases.is_empty() || !self.shopt_on("expand_aliases") {
            return None;
        }
        let mut rewritten = cmd.clone();
        let mut expanded = Vec::new();
        let word = rewritten.word_or_name.as_mut()?;
        let value = self.alias_for(&word.value)?;
        expanded.push(std::mem::replace(&mut word.value, value.clone()));
        if ends_in_blank(&value) {
            self.expand_next_words(&mut rewritten, &mut expanded);
        }
        let text = rewritten.to_string();
        Some(self.run_expanded(&text, expanded, io))
    }

    /// The value of alias `name`, unless it is being expanded already.
    fn alias_for(&self, name: &str) -> Option<String> {
        if self.expanding_aliases.iter().any(|n| n == name) {
            return None;
        }
        self.aliases.get(name).cloned()
    }

    /// After an alias ending in a blank: the following arguments, while
    /// they are aliases whose values end in a blank too.
    fn expand_next_words(&self, cmd: &mut ast::SimpleCommand, expanded: &mut Vec<String>) {
        let Some(suffix) = cmd.suffix.as_mut() else {
            return;
        };
        for item in &mut suffix.0 {
            let ast::CommandPrefixOrSuffixItem::Word(word) = item else {
                return;
            };
            let Some(value) = self.alias_for(&word.value) else {
                return;
            };
            let more = ends_in_blank(&value);
            expanded.push(std::mem::replace(&mut word.value, value));
            if !more {
                return;
            }
        }
    }

    fn run_expanded(&mut self, text: &str, names: Vec<String>, io: &Io) -> Result<i32, Unwind> {
        let depth = self.expanding_aliases.len();
        self.expanding_aliases.extend(names);
        let saved = self.location.clone();
        self.location.base += self.location.line.saturating_sub(1);
        self.location.line = 1;
        let result = self.run_text(text, io);
        self.location = saved;
        self.expanding_aliases.truncate(depth);
        result
    }
}

fn ends_in_blank(value: &str) -> bool {
    value.ends_with([' ', '\t'])
}

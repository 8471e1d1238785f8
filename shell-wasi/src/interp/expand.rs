//! Word expansion: braces, tilde, parameters, command substitution,
//! arithmetic, field splitting, pathname expansion, quote removal.
//!
//! A word is first turned into `Part`s that remember whether each piece
//! of text was quoted (so it is neither split nor globbed) and whether it
//! came from an expansion (only those are split on `$IFS`). Splitting then
//! yields fields of `Frag`s, and globbing turns each field into strings.

use brush_parser::ast;
use brush_parser::word::{
    self, BraceExpressionMember, BraceExpressionOrText, WordPiece, WordPieceWithSource,
};

use super::{Shell, parser_options};
use crate::errors::{ShellError, Unwind};
use crate::streams::{Io, Sink};

/// Most fields one brace expansion may produce.
const MAX_BRACE_FIELDS: usize = 100_000;
/// Most bytes one expanded word may hold.
pub(crate) const MAX_WORD_BYTES: usize = 16 * 1024 * 1024;

/// A piece of an expanded word.
#[derive(Debug, Clone)]
pub(crate) enum Part {
    Text {
        text: String,
        quoted: bool,
        split: bool,
    },
    /// The boundary between two elements of `"$@"` or `"${a[@]}"`, and
    /// what joins them where no splitting happens (a space, or for `$*`
    /// the first character of `IFS`).
    Break(String),
}

impl Part {
    pub(crate) fn quoted(text: String) -> Self {
        Self::Text {
            text,
            quoted: true,
            split: false,
        }
    }

    /// Text from an expansion: split and globbed unless quoted.
    pub(crate) fn expanded(text: String, quoted: bool) -> Self {
        Self::Text {
            text,
            quoted,
            split: !quoted,
        }
    }
}

/// A field after splitting: runs of text with their quotedness.
type Field = Vec<(String, bool)>;

impl Shell {
    /// Full expansion of command words into argument strings.
    pub(crate) fn expand_words(
        &mut self,
        words: &[ast::Word],
        io: &Io,
    ) -> Result<Vec<String>, ShellError> {
        let mut out = Vec::new();
        for w in words {
            for text in brace_expand(&w.value)? {
                let parts = self.word_parts(&text, io)?;
                for field in split_fields(parts, &self.ifs()) {
                    self.glob_field(field, &mut out)?;
                }
            }
        }
        Ok(out)
    }

    /// `compgen -W` text: expanded, then split at `IFS` characters, not
    /// globbed.
    pub(crate) fn split_word_list(
        &mut self,
        text: &str,
        io: &Io,
    ) -> Result<Vec<String>, ShellError> {
        let parts = self.word_parts(text, io)?;
        let joined = join_parts(&parts);
        let ifs = self.ifs();
        Ok(joined
            .split(|c| ifs.contains(c))
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect())
    }

    /// Expansion to one string without splitting or globbing (assignment
    /// values, `case` subjects, here-strings, `[[ ]]` operands).
    pub(crate) fn expand_string(&mut self, w: &ast::Word, io: &Io) -> Result<String, ShellError> {
        let parts = self.word_parts(&w.value, io)?;
        Ok(join_parts(&parts))
    }

    /// Expansion to a glob pattern: quoted characters are escaped so they
    /// match only themselves.
    pub(crate) fn expand_pattern(&mut self, w: &ast::Word, io: &Io) -> Result<String, ShellError> {
        self.pattern_from_text(&w.value, io)
    }

    /// A pattern word, and how `set -x` shows it: every quoted character
    /// behind a backslash, as bash prints it inside `[[ ]]`.
    pub(crate) fn pattern_and_trace(
        &mut self,
        w: &ast::Word,
        io: &Io,
    ) -> Result<(String, String), ShellError> {
        let parts = self.word_parts(&w.value, io)?;
        let (mut pattern, mut trace) = (String::new(), String::new());
        for part in parts {
            if let Part::Text { text, quoted, .. } = part {
                if quoted {
                    super::glob::escape_into(&text, &mut pattern);
                    for c in text.chars() {
                        trace.push('\\');
                        trace.push(c);
                    }
                } else {
                    pattern.push_str(&text);
                    trace.push_str(&text);
                }
            }
        }
        Ok((pattern, trace))
    }

    pub(crate) fn pattern_from_text(&mut self, text: &str, io: &Io) -> Result<String, ShellError> {
        let parts = self.word_parts(text, io)?;
        let mut pattern = String::new();
        for part in parts {
            if let Part::Text { text, quoted, .. } = part {
                if quoted {
                    super::glob::escape_into(&text, &mut pattern);
                } else {
                    pattern.push_str(&text);
                }
            }
        }
        Ok(pattern)
    }

    /// A here-document body: expansions, but quotes stay literal.
    pub(crate) fn expand_heredoc(&mut self, text: &str, io: &Io) -> Result<String, ShellError> {
        let pieces = word::parse_heredoc(text, &parser_options())
            .map_err(|_| ShellError::BadSubstitution(text.trim_end().to_string()))?;
        let mut parts = Vec::new();
        self.pieces_to_parts(&pieces, true, io, &mut parts)?;
        Ok(join_parts(&parts))
    }

    /// Parses and expands the text of a word into parts.
    pub(crate) fn word_parts(&mut self, text: &str, io: &Io) -> Result<Vec<Part>, ShellError> {
        let pieces = word::parse(text, &parser_options()).map_err(|_| bad_substitution(text))?;
        let mut parts = Vec::new();
        self.pieces_to_parts(&pieces, false, io, &mut parts)?;
        Ok(parts)
    }

    /// Expands `text` (e.g. the `d` of `${x:-d}`) inside a context that is
    /// quoted or not.
    pub(crate) fn nested_parts(
        &mut self,
        text: &str,
        quoted: bool,
        io: &Io,
    ) -> Result<Vec<Part>, ShellError> {
        // Inside double quotes a leading `~` is not expanded.
        let escaped;
        let text = if quoted && text.starts_with('~') {
            escaped = format!("\\{text}");
            &escaped
        } else {
            text
        };
        let mut parts = self.word_parts(text, io)?;
        for part in &mut parts {
            if let Part::Text {
                quoted: part_quoted,
                split,
                ..
            } = part
            {
                if quoted {
                    *part_quoted = true;
                    *split = false;
                } else {
                    // The result of an unquoted expansion is split, its
                    // literal text included (`${x:-a b}` is two words).
                    *split = !*part_quoted;
                }
            }
        }
        Ok(parts)
    }

    fn pieces_to_parts(
        &mut self,
        pieces: &[WordPieceWithSource],
        quoted: bool,
        io: &Io,
        out: &mut Vec<Part>,
    ) -> Result<(), ShellError> {
        for (i, piece) in pieces.iter().enumerate() {
            // brush-parser splits a `${...}` it cannot parse into `$` and
            // `{...}` texts; bash calls that a bad substitution.
            if let (WordPiece::Text(dollar), Some(WordPiece::Text(rest))) =
                (&piece.piece, pieces.get(i + 1).map(|p| &p.piece))
                && dollar.ends_with('$')
                && rest.starts_with('{')
            {
                return Err(bad_substitution(&format!("${rest}")));
            }
            self.piece_to_parts(&piece.piece, quoted, io, out)?;
            let size: usize = out
                .iter()
                .map(|p| {
                    if let Part::Text { text, .. } = p {
                        text.len()
                    } else {
                        0
                    }
                })
                .sum();
            if size > MAX_WORD_BYTES {
                return Err(ShellError::ExpansionTooLarge);
            }
        }
        Ok(())
    }

    fn piece_to_parts(
        &mut self,
        piece: &WordPiece,
        quoted: bool,
        io: &Io,
        out: &mut Vec<Part>,
    ) -> Result<(), ShellError> {
        match piece {
            WordPiece::Text(text) => out.push(Part::Text {
                text: text.clone(),
                quoted,
                split: false,
            }),
            WordPiece::SingleQuotedText(text) => out.push(Part::quoted(text.clone())),
            WordPiece::AnsiCQuotedText(text) => {
                let decoded = crate::programs::escapes::decode_ansi_c(text);
                out.push(Part::quoted(decoded));
            }
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                let before = out.len();
                self.pieces_to_parts(inner, true, io, out)?;
                if out.len() == before && !has_all_elements(inner) {
                    out.push(Part::quoted(String::new()));
                }
            }
            WordPiece::TildeExpansion(tilde) => out.push(Part::quoted(self.tilde(tilde))),
            WordPiece::ParameterExpansion(expr) => self.expand_parameter(expr, quoted, io, out)?,
            WordPiece::CommandSubstitution(text) => {
                let output = self.command_substitution(text, io)?;
                out.push(Part::expanded(output, quoted));
            }
            WordPiece::BackquotedCommandSubstitution(text) => {
                let output = self.command_substitution(&unescape_backquoted(text), io)?;
                out.push(Part::expanded(output, quoted));
            }
            WordPiece::EscapeSequence(seq) => out.push(Part::quoted(escape_text(seq, quoted))),
            WordPiece::ArithmeticExpression(expr) => {
                let value = self.arith_expand_eval(&expr.value, io)?;
                out.push(Part::expanded(value.to_string(), quoted));
            }
        }
        Ok(())
    }

    fn tilde(&self, tilde: &word::TildeExpr) -> String {
        self.tilde_value(tilde)
            .unwrap_or_else(|| format!("~{}", tilde_text(tilde)))
    }

    /// What a tilde prefix names, or `None` to leave it as written.
    fn tilde_value(&self, tilde: &word::TildeExpr) -> Option<String> {
        let var = |name: &str| self.vars.scalar(name).map(str::to_string);
        // `dirs` order: the working folder, then the stack, newest first.
        let stack = || {
            let mut dirs = vec![self.cwd.clone()];
            dirs.extend(self.dir_stack.iter().rev().cloned());
            dirs
        };
        match tilde {
            word::TildeExpr::Home => Some(var("HOME").unwrap_or_default()),
            word::TildeExpr::UserHome(user) if Some(user.as_str()) == self.vars.scalar("USER") => {
                var("HOME")
            }
            word::TildeExpr::UserHome(user) if user == "root" => Some("/root".to_string()),
            word::TildeExpr::UserHome(_) => None,
            word::TildeExpr::WorkingDir => Some(self.cwd.clone()),
            word::TildeExpr::OldWorkingDir => var("OLDPWD"),
            word::TildeExpr::NthDirFromTopOfDirStack { n, .. } => stack().get(*n).cloned(),
            word::TildeExpr::NthDirFromBottomOfDirStack { n } => {
                stack().iter().rev().nth(*n).cloned()
            }
        }
    }

    /// `$(...)`: runs the text in a subshell and returns its output minus
    /// trailing newlines; `$?` becomes its status.
    pub(crate) fn command_substitution(
        &mut self,
        text: &str,
        io: &Io,
    ) -> Result<String, ShellError> {
        if let Some(file) = only_input_redirection(text) {
            return self.file_substitution(file, io);
        }
        self.enter()?;
        let mut child = self.subshell();
        // bash does not carry `set -e` into `$( )` (without
        // `shopt -s inherit_errexit`).
        child.opts.errexit = false;
        child.location.base += self.location.line.saturating_sub(1);
        child.location.line = 1;
        child.trace_level += 1;
        // What is cut at the pipe's size is over the word limit too, and
        // reported as `expansion too large`: no second message.
        let out = Sink::pipe();
        let sub_io = Io {
            stdin: io.stdin.clone(),
            stdout: out.clone(),
            stderr: io.stderr.clone(),
            extra: io.extra.clone(),
        };
        let status = match child.run_text(text, &sub_io) {
            Ok(s) => s,
            Err(Unwind::Exit(s) | Unwind::Abort(s) | Unwind::Return(s)) => s,
            Err(Unwind::Break(_) | Unwind::Continue(_)) => child.status,
        };
        let status = child.finish_subshell(status, &sub_io);
        self.rejoin(&child);
        self.depth -= 1;
        self.status = status;
        self.subst_status = Some(status);
        let bytes = out.borrow_mut().take();
        Ok(self.substitution_text(bytes, io))
    }

    /// `$(<file)`: the file's contents, like `$(cat file)` without cat.
    fn file_substitution(&mut self, word: &str, io: &Io) -> Result<String, ShellError> {
        let parts = self.word_parts(word, io)?;
        let name = join_parts(&parts);
        let (status, bytes) = match std::fs::read(self.resolve(&name)) {
            Ok(bytes) => (0, bytes),
            Err(err) => {
                self.report(io, &format!("{name}: {}", crate::errors::strerror(&err)));
                (1, Vec::new())
            }
        };
        self.status = status;
        self.subst_status = Some(status);
        Ok(self.substitution_text(bytes, io))
    }

    /// The text a substitution's output becomes: trailing newlines and
    /// NUL bytes dropped (bash warns about the latter).
    fn substitution_text(&self, mut bytes: Vec<u8>, io: &Io) -> String {
        while bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        if bytes.contains(&0) {
            self.report(
                io,
                "warning: command substitution: ignored null byte in input",
            );
            bytes.retain(|b| *b != 0);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    /// `$IFS`, defaulting to space, tab, newline when unset.
    pub(crate) fn ifs(&self) -> String {
        self.vars
            .scalar("IFS")
            .map_or_else(|| " \t\n".to_string(), str::to_string)
    }

    /// Pathname expansion of one field; a pattern matching nothing stays
    /// as written (bash without `nullglob`).
    fn glob_field(&self, field: Field, out: &mut Vec<String>) -> Result<(), ShellError> {
        let literal: String = field.iter().map(|(t, _)| t.as_str()).collect();
        let has_glob = field.iter().any(|(t, quoted)| {
            !quoted
                && (t.contains(['*', '?', '[']) || ["@(", "!(", "+("].iter().any(|x| t.contains(x)))
        });
        if !has_glob || self.opts.noglob {
            out.push(literal);
            return Ok(());
        }
        let mut pattern = String::new();
        for (text, quoted) in &field {
            if *quoted {
                super::glob::escape_into(text, &mut pattern);
            } else {
                pattern.push_str(text);
            }
        }
        let ignore = self.vars.scalar("GLOBIGNORE").filter(|g| !g.is_empty());
        // A set `GLOBIGNORE` also lets `*` match dot files (not `.`/`..`).
        let dotglob = self.opts.dotglob || ignore.is_some();
        let globstar = self.shopt_on("globstar");
        let mut matches = super::glob::expand_path_with(&self.cwd, &pattern, dotglob, globstar);
        if let Some(ignore) = ignore {
            matches.retain(|m| {
                let base = m.rsplit('/').find(|c| !c.is_empty()).unwrap_or(m);
                base != "."
                    && base != ".."
                    && !ignore.split(':').any(|p| super::pattern_matches(p, m))
            });
        }
        if !matches.is_empty() {
            out.extend(matches);
        } else if self.opts.failglob {
            return Err(ShellError::NoMatch(literal));
        } else if !self.opts.nullglob {
            out.push(literal);
        }
        Ok(())
    }
}

/// A tilde prefix as written, without the `~`.
fn tilde_text(tilde: &word::TildeExpr) -> String {
    match tilde {
        word::TildeExpr::Home => String::new(),
        word::TildeExpr::UserHome(user) => user.clone(),
        word::TildeExpr::WorkingDir => "+".to_string(),
        word::TildeExpr::OldWorkingDir => "-".to_string(),
        word::TildeExpr::NthDirFromTopOfDirStack { n, plus_used } => {
            format!("{}{n}", if *plus_used { "+" } else { "" })
        }
        word::TildeExpr::NthDirFromBottomOfDirStack { n } => format!("-{n}"),
    }
}

/// True if the pieces contain `$@` or `${a[@]}`, whose empty expansion
/// inside quotes yields no word at all.
fn has_all_elements(pieces: &[WordPieceWithSource]) -> bool {
    use word::{Parameter, SpecialParameter};
    pieces.iter().any(|p| match &p.piece {
        WordPiece::ParameterExpansion(expr) => matches!(
            list_parameter(expr),
            Some(
                Parameter::Special(SpecialParameter::AllPositionalParameters {
                    concatenate: false
                }) | Parameter::NamedWithAllIndices {
                    concatenate: false,
                    ..
                }
            )
        ),
        _ => false,
    })
}

/// The parameter of an expansion that maps a list element by element
/// (`${a[@]}`, `${a[@]:1}`, `${a[@]#x}`, `${a[@]/x/y}`, `${a[@]^^}`).
fn list_parameter(expr: &word::ParameterExpr) -> Option<&word::Parameter> {
    use word::ParameterExpr as E;
    match expr {
        E::Parameter { parameter, .. }
        | E::RemoveSmallestSuffixPattern { parameter, .. }
        | E::RemoveLargestSuffixPattern { parameter, .. }
        | E::RemoveSmallestPrefixPattern { parameter, .. }
        | E::RemoveLargestPrefixPattern { parameter, .. }
        | E::Substring { parameter, .. }
        | E::Transform { parameter, .. }
        | E::UppercaseFirstChar { parameter, .. }
        | E::UppercasePattern { parameter, .. }
        | E::LowercaseFirstChar { parameter, .. }
        | E::LowercasePattern { parameter, .. }
        | E::ReplaceSubstring { parameter, .. } => Some(parameter),
        _ => None,
    }
}

/// `$( )` text of a backquoted substitution: `\$`, `` \` `` and `\\`
/// lose their backslash.
fn unescape_backquoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next) = chars.peek()
            && matches!(next, '$' | '`' | '\\')
        {
            out.push(next);
            chars.next();
            continue;
        }
        out.push(c);
    }
    out
}

/// The text of a backslash escape. Inside double quotes only `$`, `` ` ``,
/// `"`, `\` and newline are special; elsewhere any character is.
fn escape_text(seq: &str, in_double_quotes: bool) -> String {
    let escaped = seq.strip_prefix('\\').unwrap_or(seq);
    if escaped == "\n" {
        return String::new();
    }
    if in_double_quotes && !matches!(escaped, "$" | "`" | "\"" | "\\") {
        return seq.to_string();
    }
    escaped.to_string()
}

/// `${a b}` and friends: bash names the `${...}` part.
fn bad_substitution(text: &str) -> ShellError {
    let shown = text
        .find("${")
        .and_then(|start| {
            let rest = text.get(start..)?;
            let end = rest.find('}')?;
            rest.get(..=end)
        })
        .unwrap_or(text);
    ShellError::BadSubstitution(shown.to_string())
}

/// Concatenation of parts; element breaks become spaces.
pub(crate) fn join_parts(parts: &[Part]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            Part::Text { text, .. } => out.push_str(text),
            Part::Break(join) => out.push_str(join),
        }
    }
    out
}

/// Field splitting on `$IFS` of the parts that came from unquoted
/// expansions (POSIX 2.6.5).
pub(crate) fn split_fields(parts: Vec<Part>, ifs: &str) -> Vec<Field> {
    let mut splitter = Splitter {
        ifs,
        fields: Vec::new(),
        current: Vec::new(),
        started: false,
        after_space: false,
    };
    for part in parts {
        match part {
            Part::Break(_) => splitter.finish(),
            Part::Text {
                text,
                quoted,
                split,
            } if split && !quoted => splitter.split(&text),
            Part::Text { text, quoted, .. } => splitter.push_text(text, quoted),
        }
    }
    splitter.finish();
    splitter.fields
}

struct Splitter<'a> {
    ifs: &'a str,
    fields: Vec<Field>,
    current: Field,
    /// The current field exists even if empty (it had quoted text).
    started: bool,
    /// The last delimiter was IFS white space that ended a field.
    after_space: bool,
}

impl Splitter<'_> {
    fn finish(&mut self) {
        if self.started {
            self.fields.push(std::mem::take(&mut self.current));
        }
        self.current.clear();
        self.started = false;
    }

    fn push_text(&mut self, text: String, quoted: bool) {
        self.started |= quoted || !text.is_empty();
        self.after_space = false;
        match self.current.last_mut() {
            Some((last, q)) if *q == quoted => last.push_str(&text),
            _ => self.current.push((text, quoted)),
        }
    }

    fn split(&mut self, text: &str) {
        for c in text.chars() {
            if !self.ifs.contains(c) {
                let mut buf = [0u8; 4];
                self.push_text(c.encode_utf8(&mut buf).to_string(), false);
            } else if matches!(c, ' ' | '\t' | '\n') {
                if self.started {
                    self.finish();
                    self.after_space = true;
                }
            } else {
                if self.started || !self.after_space {
                    self.started = true;
                    self.finish();
                }
                self.after_space = false;
            }
        }
    }
}

/// Brace expansion of a raw word: `a{b,c}` → `ab ac`, `{1..3}`.
pub(crate) fn brace_expand(text: &str) -> Result<Vec<String>, ShellError> {
    if !text.contains('{') {
        return Ok(vec![text.to_string()]);
    }
    let parsed = match word::parse_brace_expansions(text, &parser_options()) {
        Ok(Some(p)) => p,
        _ => return Ok(vec![text.to_string()]),
    };
    let pads = zero_padded_sequences(text);
    let mut results = vec![String::new()];
    append_brace_items(&parsed, &pads, &mut results)?;
    Ok(results)
}

/// A `{START..END}` written with a leading zero (`{01..10}`) and the width
/// every number of it is padded to, as bash does. The parser keeps only
/// the numbers, so the widths are read from the raw text.
type Padding = (i64, i64, usize);

fn zero_padded_sequences(text: &str) -> Vec<Padding> {
    let mut pads = Vec::new();
    for (open, _) in text.match_indices('{') {
        let rest = text.get(open + 1..).unwrap_or_default();
        let Some(close) = rest.find('}') else {
            continue;
        };
        let inner = rest.get(..close).unwrap_or_default();
        let mut parts = inner.split("..");
        let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
            continue;
        };
        let leading_zero = |s: &str| {
            let digits = s.strip_prefix('-').unwrap_or(s);
            digits.len() > 1 && digits.starts_with('0')
        };
        if let (Ok(start), Ok(end)) = (a.parse::<i64>(), b.parse::<i64>())
            && (leading_zero(a) || leading_zero(b))
        {
            pads.push((start, end, a.len().max(b.len())));
        }
    }
    pads
}

fn append_brace_items(
    items: &[BraceExpressionOrText],
    pads: &[Padding],
    results: &mut Vec<String>,
) -> Result<(), ShellError> {
    for item in items {
        let alternatives = match item {
            BraceExpressionOrText::Text(t) => vec![t.clone()],
            BraceExpressionOrText::Expr(members) => brace_alternatives(members, pads)?,
        };
        if results.len().saturating_mul(alternatives.len()) > MAX_BRACE_FIELDS {
            return Err(ShellError::ExpansionTooLarge);
        }
        *results = results
            .iter()
            .flat_map(|prefix| alternatives.iter().map(move |alt| format!("{prefix}{alt}")))
            .collect();
    }
    Ok(())
}

fn brace_alternatives(
    members: &[BraceExpressionMember],
    pads: &[Padding],
) -> Result<Vec<String>, ShellError> {
    let mut out = Vec::new();
    for member in members {
        match member {
            BraceExpressionMember::Child(items) => {
                let mut sub = vec![String::new()];
                append_brace_items(items, pads, &mut sub)?;
                out.extend(sub);
            }
            BraceExpressionMember::NumberSequence {
                start,
                end,
                increment,
            } => {
                let width = pads
                    .iter()
                    .find(|(s, e, _)| s == start && e == end)
                    .map_or(0, |(_, _, w)| *w);
                out.extend(
                    sequence(*start, *end, *increment)?
                        .into_iter()
                        .map(|n| format!("{n:0width$}")),
                );
            }
            BraceExpressionMember::CharSequence {
                start,
                end,
                increment,
            } => {
                let seq = sequence(
                    i64::from(u32::from(*start)),
                    i64::from(u32::from(*end)),
                    *increment,
                )?;
                out.extend(
                    seq.into_iter()
                        .filter_map(|n| u32::try_from(n).ok().and_then(char::from_u32))
                        .map(String::from),
                );
            }
        }
        if out.len() > MAX_BRACE_FIELDS {
            return Err(ShellError::ExpansionTooLarge);
        }
    }
    Ok(out)
}

/// `{start..end..step}`: bash counts toward `end` whatever the step's sign.
fn sequence(start: i64, end: i64, increment: i64) -> Result<Vec<i64>, ShellError> {
    let step = increment.checked_abs().unwrap_or(1).max(1);
    let count = start.abs_diff(end) / step.unsigned_abs() + 1;
    if count > MAX_BRACE_FIELDS as u64 {
        return Err(ShellError::ExpansionTooLarge);
    }
    let mut out = Vec::new();
    let mut n = start;
    for _ in 0..count {
        out.push(n);
        n = if start <= end {
            n.saturating_add(step)
        } else {
            n.saturating_sub(step)
        };
    }
    Ok(out)
}

/// The file of a `$(< file)` substitution: text that is one input
/// redirection and nothing else.
fn only_input_redirection(text: &str) -> Option<&str> {
    let rest = text.trim().strip_prefix('<')?;
    if rest.starts_with(['<', '(', '&']) {
        return None;
    }
    let word = rest.trim();
    let simple =
        !word.is_empty() && !word.contains(|c: char| c.is_whitespace() || ";|&<>()`".contains(c));
    simple.then_some(word)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(fields: Vec<Field>) -> Vec<String> {
        fields
            .into_iter()
            .map(|f| f.into_iter().map(|(t, _)| t).collect())
            .collect()
    }

    #[test]
    fn splits_only_expansions() {
        let parts = vec![
            Part::Text {
                text: "x".into(),
                quoted: false,
                split: false,
            },
            Part::expanded(" a  b ".into(), false),
        ];
        assert_eq!(texts(split_fields(parts, " \t\n")), vec!["x", "a", "b"]);
    }

    #[test]
    fn non_white_ifs_keeps_empty_fields() {
        let parts = vec![Part::expanded("a,,b".into(), false)];
        assert_eq!(texts(split_fields(parts, ",")), vec!["a", "", "b"]);
    }

    #[test]
    fn quoted_empty_is_a_field() {
        assert_eq!(
            texts(split_fields(vec![Part::quoted(String::new())], " ")),
            vec![""]
        );
        assert!(split_fields(vec![Part::expanded(String::new(), false)], " ").is_empty());
    }

    #[test]
    fn braces_expand() {
        assert_eq!(brace_expand("a{b,c}d").expect("ok"), vec!["abd", "acd"]);
        assert_eq!(brace_expand("{3..1}").expect("ok"), vec!["3", "2", "1"]);
        assert_eq!(
            brace_expand("f{01..03}").expect("ok"),
            vec!["f01", "f02", "f03"]
        );
        assert_eq!(
            brace_expand("{8..010}").expect("ok"),
            vec!["008", "009", "010"]
        );
        assert!(brace_expand("{1..10000000}").is_err());
    }
}

//! Scenario errors that name the key, the line and what was expected.

use std::fmt;
use std::ops::Range;
use toml_edit::{ImDocument, Item, Value};

/// One problem found in a scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Dotted path of the offending key, e.g. `flows.0.app.rate` (empty for the whole file).
    pub path: String,
    /// 1-based line of the key in the file (0 if unknown).
    pub line: usize,
    /// 1-based column (0 if unknown).
    pub column: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// A scenario that could not be read or is not valid; every problem found is listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Name of the source (file path or `<string>`).
    pub source: String,
    /// The problems, in file order.
    pub diagnostics: Vec<Diagnostic>,
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.diagnostics.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            let key = if d.path.is_empty() {
                String::new()
            } else {
                format!("key `{}`: ", escape_controls(&d.path))
            };
            write!(
                f,
                "{}:{}:{}: {}{}",
                escape_controls(&self.source),
                d.line,
                d.column,
                key,
                escape_controls(&d.message)
            )?;
        }
        Ok(())
    }
}

/// `s` with control characters other than tab escaped (`\n`, `\u{1b}`), so that text quoted
/// from a scenario (a key or a string with a newline) keeps each diagnostic on one line.
fn escape_controls(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() && c != '\t') {
        return s.into();
    }
    s.chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect::<String>()
        .into()
}

/// A TOML parser message on one line: its lines (e.g. "invalid table header" and "expected
/// `.`, `]`") joined with "; ".
pub fn one_line(message: &str) -> String {
    message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

impl std::error::Error for ScenarioError {}

/// One step of a key path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Formats a path as `a.b.0.c`: the key syntax of `--set` and sweep keys, so that a key an
/// error names can be given back as it is written.
pub fn path_string(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        if !s.is_empty() {
            s.push('.');
        }
        match seg {
            Seg::Key(k) => s.push_str(k),
            Seg::Index(i) => s.push_str(&i.to_string()),
        }
    }
    s
}

/// Line and column (1-based) of a byte offset.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text.as_bytes()[..offset];
    let line = before.iter().filter(|&&c| c == b'\n').count() + 1;
    let col = before
        .iter()
        .rposition(|&c| c == b'\n')
        .map(|p| offset - p)
        .unwrap_or(offset + 1);
    (line, col)
}

/// Maps key paths to places in the source text.
pub struct Locator<'a> {
    text: &'a str,
    /// The text's document, parsed at the first lookup: a valid scenario needs no lookup, and
    /// parsing a large one (10⁵ flows) costs as much as reading it.
    doc: std::cell::OnceCell<Option<ImDocument<&'a str>>>,
    /// Byte offset of the start of each line, so that placing a diagnostic does not scan the
    /// text before it (a file with many errors took time quadratic in its length).
    line_starts: Vec<usize>,
}

#[derive(Clone, Copy)]
enum Node<'d> {
    Table(&'d toml_edit::Table),
    Item(&'d Item),
    Value(&'d Value),
}

impl<'a> Locator<'a> {
    /// A locator for `text` (if the text is not valid TOML, every lookup gives line 1).
    pub fn new(text: &'a str) -> Self {
        Locator {
            text,
            doc: std::cell::OnceCell::new(),
            line_starts: std::iter::once(0)
                .chain(text.match_indices('\n').map(|(i, _)| i + 1))
                .collect(),
        }
    }

    fn doc(&self) -> Option<&ImDocument<&'a str>> {
        self.doc.get_or_init(|| ImDocument::parse(self.text).ok()).as_ref()
    }

    /// Line and column (1-based) of a byte offset, as [`line_col`].
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        (line, offset - self.line_starts[line - 1] + 1)
    }

    /// The span of the deepest existing prefix of `path` (the key itself where it exists, its
    /// table otherwise).
    pub fn span_of(&self, path: &[Seg]) -> Option<Range<usize>> {
        let doc = self.doc()?;
        let mut node = Node::Table(doc.as_table());
        let mut best: Option<Range<usize>> = None;
        for seg in path {
            if let Node::Item(Item::Table(t)) = node {
                node = Node::Table(t);
            }
            if let Node::Item(Item::Value(v)) = node {
                node = Node::Value(v);
            }
            let next: Option<(Node, Option<Range<usize>>)> = match (node, seg) {
                (Node::Table(t), Seg::Key(k)) => {
                    let key_span = t.key(k).and_then(|k| k.span());
                    t.get(k).map(|it| (Node::Item(it), key_span.or_else(|| it.span())))
                }
                (Node::Item(Item::ArrayOfTables(a)), Seg::Index(i)) => a.get(*i).map(|t| (Node::Table(t), t.span())),
                (Node::Value(Value::InlineTable(t)), Seg::Key(k)) => {
                    let key_span = t.key(k).and_then(|k| k.span());
                    t.get(k).map(|v| (Node::Value(v), key_span.or_else(|| v.span())))
                }
                (Node::Value(Value::Array(a)), Seg::Index(i)) => a.get(*i).map(|v| (Node::Value(v), v.span())),
                _ => None,
            };
            match next {
                Some((n, span)) => {
                    if span.is_some() {
                        best = span;
                    }
                    node = n;
                }
                None => break,
            }
        }
        best
    }

    /// A diagnostic at `path`.
    pub fn diag(&self, path: &[Seg], message: impl Into<String>) -> Diagnostic {
        let (line, column) = match self.span_of(path) {
            Some(r) => self.line_col(r.start),
            None => (1, 1),
        };
        Diagnostic {
            path: path_string(path),
            line,
            column,
            message: message.into(),
        }
    }

    /// The path of the deepest key whose value contains byte `offset`.
    pub fn path_at(&self, offset: usize) -> Vec<Seg> {
        let mut out = Vec::new();
        if let Some(doc) = self.doc() {
            walk_item(doc.as_item(), offset, &mut out);
        }
        out
    }
}

fn contains(span: Option<Range<usize>>, offset: usize) -> bool {
    span.map(|r| r.start <= offset && offset < r.end.max(r.start + 1))
        .unwrap_or(false)
}

fn walk_table(t: &toml_edit::Table, offset: usize, out: &mut Vec<Seg>) -> bool {
    for (k, it) in t.iter() {
        let key_span = t.key(k).and_then(|k| k.span());
        if contains(key_span.clone(), offset) {
            out.push(Seg::Key(k.to_string()));
            return true;
        }
        out.push(Seg::Key(k.to_string()));
        if walk_item(it, offset, out) {
            return true;
        }
        out.pop();
    }
    false
}

fn walk_item(it: &Item, offset: usize, out: &mut Vec<Seg>) -> bool {
    match it {
        Item::Table(t) => {
            if walk_table(t, offset, out) {
                return true;
            }
            contains(t.span(), offset)
        }
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                out.push(Seg::Index(i));
                if walk_table(t, offset, out) || contains(t.span(), offset) {
                    return true;
                }
                out.pop();
            }
            false
        }
        Item::Value(v) => walk_value(v, offset, out),
        Item::None => false,
    }
}

fn walk_value(v: &Value, offset: usize, out: &mut Vec<Seg>) -> bool {
    match v {
        Value::InlineTable(t) => {
            for (k, v) in t.iter() {
                let key_span = t.key(k).and_then(|k| k.span());
                out.push(Seg::Key(k.to_string()));
                if contains(key_span, offset) || walk_value(v, offset, out) {
                    return true;
                }
                out.pop();
            }
            contains(v.span(), offset)
        }
        Value::Array(a) => {
            for (i, e) in a.iter().enumerate() {
                out.push(Seg::Index(i));
                if walk_value(e, offset, out) {
                    return true;
                }
                out.pop();
            }
            contains(v.span(), offset)
        }
        _ => contains(v.span(), offset),
    }
}

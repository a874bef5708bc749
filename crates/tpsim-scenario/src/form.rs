//! Every form error of a scenario at once: unknown keys, wrong types and units.
//!
//! serde stops at the first error. To report them all in one pass, each error is mended in a
//! copy of the document and the copy read again, until it reads or an error cannot be
//! mended: an unknown key close to a valid one is renamed to it (so a misspelt required key
//! is not also reported missing), any other unknown key or bad value is taken out. A bad value
//! of a required key ends the pass (taking it out would only make the key missing). Each
//! diagnostic is placed on the original text; unknown keys and names get the closest valid
//! one when it is within edit distance 2.

use toml_edit::{DocumentMut, Item, TableLike};

use crate::error::{line_col, Diagnostic, Locator, Seg};
use crate::Scenario;

/// At most this many errors are reported (a file of a different format would give one per
/// key).
const MAX_ERRORS: usize = 20;

/// The diagnostics of `text`, whose first form error serde reported as `first`; sorted by
/// line and column.
pub(crate) fn every_error(text: &str, first: toml::de::Error) -> Vec<Diagnostic> {
    let original = Locator::new(text);
    let mut doc: Option<DocumentMut> = text.parse().ok();
    let mut current = text.to_string();
    let mut err = first;
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut taken_out: Vec<Vec<Seg>> = Vec::new();
    loop {
        let (message, suggestion) = with_suggestion(err.message().trim());
        let mut path = err
            .span()
            .map(|r| Locator::new(&current).path_at(r.start))
            .unwrap_or_default();
        // A table read through a tagged enum (`aqm = { kind = ... }`) is buffered first, so
        // serde places an unknown key of it on the whole table: name the key itself.
        if let Some(name) = unknown_field(&message) {
            if !path.is_empty() && path.last() != Some(&Seg::Key(name.to_string())) {
                path.push(Seg::Key(name.to_string()));
            }
        }
        // After a bad value was taken out, a missing required key is that one, reported already.
        if message.starts_with("missing field") && !taken_out.is_empty() {
            break;
        }
        let unknown_key = message.starts_with("unknown field");
        out.push(match err.span() {
            Some(r) if path.is_empty() => {
                let (line, column) = line_col(&current, r.start);
                Diagnostic {
                    path: String::new(),
                    line,
                    column,
                    message,
                }
            }
            _ => original.diag(&path, message),
        });
        let Some(d) = doc.as_mut() else { break };
        if out.len() >= MAX_ERRORS || path.is_empty() || taken_out.contains(&path) {
            break;
        }
        let mended = match (&suggestion, unknown_key) {
            (Some(name), true) => rename(d.as_item_mut(), &path, name),
            _ => false,
        } || take_out(d.as_item_mut(), &path);
        if !mended {
            break;
        }
        taken_out.push(path);
        current = d.to_string();
        match toml::from_str::<Scenario>(&current) {
            Ok(_) => break,
            Err(e) => err = e,
        }
    }
    out.sort_by_key(|d| (d.line, d.column));
    out
}

/// The key of serde's "unknown field `x`, expected ..." message.
fn unknown_field(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// Renames the last key of `path` to `name`, keeping its value.
fn rename(root: &mut Item, path: &[Seg], name: &str) -> bool {
    let Some((Seg::Key(old), parent)) = path.split_last() else {
        return false;
    };
    let Some(t) = table_at(root, parent).filter(|t| !t.contains_key(name)) else {
        return false;
    };
    match t.remove(old) {
        Some(v) => {
            t.insert(name, v);
            true
        }
        None => false,
    }
}

/// Removes the key at `path` (not an array element: that would renumber its siblings).
fn take_out(root: &mut Item, path: &[Seg]) -> bool {
    let Some((Seg::Key(k), parent)) = path.split_last() else {
        return false;
    };
    table_at(root, parent).is_some_and(|t| t.remove(k).is_some())
}

/// The table at `path`: a `[table]`, an element of an array of tables or an inline table.
fn table_at<'a>(root: &'a mut Item, path: &[Seg]) -> Option<&'a mut dyn TableLike> {
    let mut t = root.as_table_like_mut()?;
    let mut segs = path.iter().peekable();
    while let Some(seg) = segs.next() {
        let Seg::Key(k) = seg else { return None };
        t = match (t.get_mut(k)?, segs.peek()) {
            (Item::ArrayOfTables(a), Some(Seg::Index(i))) => {
                segs.next();
                a.get_mut(*i)?
            }
            (item, _) => item.as_table_like_mut()?,
        };
    }
    Some(t)
}

/// serde's "unknown field `x`, expected one of `a`, `b`" (or "unknown variant") with the
/// closest expected name appended when it is within edit distance 2, and that name.
fn with_suggestion(message: &str) -> (String, Option<String>) {
    let unknown = ["unknown field `", "unknown variant `"]
        .iter()
        .find_map(|p| message.strip_prefix(p));
    let Some(rest) = unknown else {
        return (message.to_string(), None);
    };
    let Some((name, expected)) = rest.split_once('`') else {
        return (message.to_string(), None);
    };
    let best = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|cand| (strsim::damerau_levenshtein(name, cand), cand))
        .filter(|&(d, _)| d <= 2)
        .min();
    match best {
        Some((_, cand)) => (format!("{message}; did you mean `{cand}`?"), Some(cand.to_string())),
        None => (message.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "[simulation]\nduration = \"10s\"\n[nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"10ms\"\n";

    fn errors(text: &str) -> Vec<Diagnostic> {
        match crate::parse(text, "t.toml") {
            Ok(_) => Vec::new(),
            Err(e) => e.diagnostics,
        }
    }

    #[test]
    fn three_typos_give_three_errors_each_with_its_line_and_a_suggestion() {
        let text = BASE
            .replace("duration = ", "duratoin = ")
            .replace("count = 2", "cuont = 2")
            .replace("delay = ", "dealy = ");
        let d = errors(&text);
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(
            d.iter().map(|d| (d.line, d.path.as_str())).collect::<Vec<_>>(),
            [(2, "simulation.duratoin"), (4, "nodes.cuont"), (8, "links.0.dealy")]
        );
        for (d, want) in d.iter().zip(["duration", "count", "delay"]) {
            assert!(d.message.ends_with(&format!("did you mean `{want}`?")), "{}", d.message);
        }
    }

    #[test]
    fn a_bad_value_and_a_typo_are_both_reported_without_a_spurious_missing_key() {
        let text = BASE
            .replace("duration = \"10s\"", "duration = \"10s\"\ndrain = \"5 parsecs\"")
            .replace("rate = ", "rtae = ");
        let d = errors(&text);
        assert_eq!(d.len(), 2, "{d:?}");
        assert_eq!(d[0].path, "simulation.drain");
        assert_eq!(d[1].path, "links.0.rtae");
        assert!(d[1].message.contains("did you mean `rate`?"), "{}", d[1].message);
    }

    /// A key of a table read through its `kind` (a link's `aqm`) is named itself, with a
    /// suggestion, and the mend does not rename the table.
    #[test]
    fn a_typo_inside_an_aqm_table_names_the_key_and_nothing_else() {
        let text = BASE.replace("delay = ", "aqm = { kind = \"codel\", targt = \"5ms\" }\ndelay = ");
        let d = errors(&text);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].path, "links.0.aqm.targt");
        assert!(d[0].message.contains("did you mean `target`?"), "{}", d[0].message);
    }

    #[test]
    fn a_name_far_from_every_valid_one_gets_no_suggestion() {
        let d = errors(&BASE.replace("count = 2", "zzzzzzzz = 2"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert!(!d[0].message.contains("did you mean"), "{}", d[0].message);
    }
}

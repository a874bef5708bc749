//! Counting a scenario's flows from its tokens, before it is parsed. Parsing a file of a
//! million `[[flows]]` takes seconds and gigabytes, lexing it a fraction of a second: the
//! count lets a run that could never fit be refused before the parse (see the engine's
//! `memory::estimate_memory_floor`).

use toml_parser::lexer::TokenKind as K;
use toml_parser::Source;

/// The flows `text` declares: its `[[flows]]` table headers plus the inline tables of a
/// top-level `flows = [...]` array. Counted from TOML tokens (a header inside a string or a
/// comment is not counted), without parsing or validating: for malformed TOML the count is
/// a guess, and the parse that follows reports the error.
pub fn count_flows(text: &str) -> u64 {
    let is_flows = |start: usize, end: usize, kind: K| {
        let raw = &text[start..end];
        match kind {
            K::Atom => raw == "flows",
            K::BasicString | K::LiteralString => raw.len() == 7 && &raw[1..6] == "flows",
            _ => false,
        }
    };
    // A header line's significant tokens: `[`, `[`, the key `flows`, `]`, `]`.
    let flows_header = |l: &[(K, usize, usize)]| {
        l.len() == 5
            && l[0].0 == K::LeftSquareBracket
            && l[1].0 == K::LeftSquareBracket
            && is_flows(l[2].1, l[2].2, l[2].0)
            && l[3].0 == K::RightSquareBracket
            && l[4].0 == K::RightSquareBracket
    };
    let mut n = 0u64;
    let mut line_start = true;
    // Brackets and braces open inside a value (headers do not count).
    let mut depth = 0u32;
    let mut in_root = true;
    // The significant tokens of a line that starts with `[` or a key at depth 0, up to 6.
    let mut line = [(K::Eof, 0usize, 0usize); 6];
    let mut len = 0usize;
    let mut header = false;
    // The depth just inside the root `flows = [` array, while in it.
    let mut flows_array: Option<u32> = None;
    for tok in Source::new(text).lex() {
        let kind = tok.kind();
        let (start, end) = (tok.span().start(), tok.span().end());
        match kind {
            K::Whitespace | K::Comment | K::Eof => continue,
            K::Newline => {
                if header && flows_header(&line[..len.min(6)]) {
                    n += 1;
                }
                line_start = true;
                header = false;
                len = 0;
                continue;
            }
            _ => {}
        }
        let first = std::mem::replace(&mut line_start, false);
        if depth == 0 && first && kind == K::LeftSquareBracket {
            header = true;
            in_root = false;
        }
        if header {
            if len < line.len() {
                line[len] = (kind, start, end);
            }
            len += 1;
            continue;
        }
        if depth == 0 && len < line.len() {
            line[len] = (kind, start, end);
            len += 1;
        }
        match kind {
            K::LeftSquareBracket | K::LeftCurlyBracket => {
                if kind == K::LeftCurlyBracket && flows_array == Some(depth) {
                    n += 1;
                }
                if depth == 0
                    && in_root
                    && kind == K::LeftSquareBracket
                    && len == 3
                    && line[1].0 == K::Equals
                    && is_flows(line[0].1, line[0].2, line[0].0)
                {
                    flows_array = Some(1);
                }
                depth += 1;
            }
            K::RightSquareBracket | K::RightCurlyBracket => {
                depth = depth.saturating_sub(1);
                if flows_array.is_some_and(|d| depth < d) {
                    flows_array = None;
                }
            }
            _ => {}
        }
    }
    if header && flows_header(&line[..len.min(6)]) {
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::count_flows;

    const FLOW: &str = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"100B\", interval = \"1s\" }\n";

    #[test]
    fn counts_array_table_headers() {
        let text = format!("[nodes]\ncount = 2\n{}{}{}", FLOW, FLOW, FLOW);
        assert_eq!(count_flows(&text), 3);
        // The last header without a newline, spaces and a comment around it, a quoted key.
        assert_eq!(count_flows("[[ flows ]] # one\n[[\"flows\"]]"), 2);
    }

    #[test]
    fn counts_the_inline_tables_of_a_root_flows_array() {
        let text = "flows = [\n  { src = 0, dst = 1, app = { kind = \"cbr\" } },\n  { src = 1, dst = 0 },\n]\n[nodes]\ncount = 2\n";
        assert_eq!(count_flows(text), 2);
    }

    #[test]
    fn ignores_other_tables_strings_and_comments() {
        let text = concat!(
            "name = \"\"\"\n[[flows]]\n\"\"\"\n",
            "# [[flows]]\n",
            "[[flows.x]]\n[flows]\n[[links]]\n",
            "[simulation]\nflows = [{ a = 1 }]\n",
            "[background]\nflows = 1000\n",
        );
        assert_eq!(count_flows(text), 0);
    }

    #[test]
    fn agrees_with_the_parse_on_the_shipped_scenarios() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("the scenarios directory") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&path).expect("a scenario file");
                let doc: toml::Table = toml::from_str(&text).expect("a shipped scenario is TOML");
                let flows = doc.get("flows").and_then(|f| f.as_array()).map_or(0, |a| a.len());
                assert_eq!(count_flows(&text), flows as u64, "{}", path.display());
                seen += 1;
            }
        }
        assert!(seen >= 5);
    }
}

//! `apply_overrides` (the `--set` and sweep values): a key of a table the file does not have
//! creates the table; the result is then validated like any file.

use tpsim_scenario::{apply_overrides, load};

const BASE: &str = "[simulation]\nduration = \"5s\"\n[nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";

fn set(path: &str, value: serde_json::Value) -> Result<String, tpsim_scenario::ScenarioError> {
    apply_overrides(BASE, "<base>", &[(path.to_string(), value)], true)
}

#[test]
fn a_key_of_a_missing_table_creates_the_table() {
    let text = set("output.positions", serde_json::json!(true)).unwrap();
    let sc = load(&text, "<set>").unwrap();
    assert!(sc.output.positions);
    // The other lines keep their numbers: the table goes at the end.
    assert!(text.starts_with(BASE.trim_end()), "{text}");
}

#[test]
fn a_missing_table_that_is_not_part_of_the_format_is_reported_by_validation() {
    let text = set("outptu.positions", serde_json::json!(true)).unwrap();
    let e = load(&text, "<set>").unwrap_err().to_string();
    assert!(e.contains("outptu"), "{e}");
}

#[test]
fn an_index_past_the_end_is_still_an_unknown_key() {
    let e = set("links.3.rate", serde_json::json!("2Mbps")).unwrap_err().to_string();
    assert!(e.contains("unknown key"), "{e}");
}

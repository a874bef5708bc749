//! Helpers shared by the engine's scenario-level tests.

use tpsim_engine::{run, RunOptions, RunResult};
use tpsim_scenario::load;

/// Validates `text` (panicking with the scenario error) and runs replication 0 with `seed`.
pub fn sim(text: &str, seed: u64) -> RunResult {
    let sc = load(text, "<test>").unwrap_or_else(|e| panic!("{e}"));
    run(
        &sc,
        &RunOptions {
            seed,
            run: 0,
            pcap_dir: None,
        },
    )
    .unwrap()
}

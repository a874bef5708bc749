//! Regression fingerprint: the SHA-256 of the canonical CSV tables (flows, network, time
//! series; columns sorted by name) of a fixed set of scenarios that together reach every part
//! of the engine. A refactoring must leave every hash unchanged. A change that alters results
//! on purpose updates `fingerprint.txt` in the same commit and says why in its message:
//!
//! ```text
//! TPSIM_UPDATE_FINGERPRINT=1 cargo test -p tpsim-engine --test fingerprint
//! ```

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use tpsim_engine::{run, DropReason, RunOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A shipped scenario file with `overrides` (dotted path, JSON value) applied.
fn file(name: &str, overrides: &[(&str, serde_json::Value)]) -> String {
    override_file(&root().join("scenarios").join(name), name, overrides)
}

/// A scenario of `tests/fingerprint/` with `overrides` applied.
fn own_with(name: &str, overrides: &[(&str, serde_json::Value)]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fingerprint")
        .join(format!("{name}.toml"));
    override_file(&path, name, overrides)
}

fn override_file(path: &Path, name: &str, overrides: &[(&str, serde_json::Value)]) -> String {
    let text = std::fs::read_to_string(path).expect("scenario file");
    let pairs: Vec<(String, serde_json::Value)> = overrides.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    tpsim_scenario::apply_overrides(&text, name, &pairs, true).expect("overrides apply")
}

/// A scenario of `tests/fingerprint/`.
fn own(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fingerprint")
        .join(format!("{name}.toml"));
    std::fs::read_to_string(path).expect("fingerprint scenario file")
}

/// The scenarios, by name: shipped scenario files at a point of their sweep, and the files
/// of `tests/fingerprint/`.
fn scenarios() -> Vec<(&'static str, String)> {
    use serde_json::json;
    vec![
        ("wired-udp", own("wired-voip")),
        (
            "wired-tcp",
            own_with("wired-voip", &[("flows.0.transport", json!("tcp"))]),
        ),
        ("wired-mesh", own("wired-mesh")),
        (
            "wifi-chain",
            file(
                "example-wifi-chain.toml",
                &[
                    ("flows.0.dst", json!(4)),
                    ("flows.0.transport", json!("tcp")),
                    ("simulation.duration", json!("20s")),
                ],
            ),
        ),
        (
            "study-a-point",
            file(
                "study-a-sensor-interval.toml",
                &[
                    ("sensors.interval", json!("5s")),
                    ("sensors.transport", json!("tcp")),
                    ("simulation.duration", json!("30s")),
                    ("simulation.stack", json!("modern")),
                ],
            ),
        ),
        (
            "study-c-point",
            file(
                "study-c-manet-speed.toml",
                &[
                    ("nodes.mobility.speed", json!(["20m/s", "20m/s"])),
                    ("background.flows", json!(8)),
                    ("flows.0.transport", json!("tcp")),
                    ("simulation.duration", json!("60s")),
                    ("simulation.stack", json!("modern")),
                ],
            ),
        ),
        ("olsr-manet", own("olsr-manet")),
        ("arp-aodv", own("arp-aodv")),
        ("energy-death", own("energy-death")),
        ("faults-wired", own("faults-wired")),
        ("faults-radio", own("faults-radio")),
        (
            "wired-mesh-sctp",
            own_with(
                "wired-mesh",
                &[
                    ("flows.0.transport", json!("sctp")),
                    ("flows.1.transport", json!("sctp")),
                ],
            ),
        ),
        (
            "wired-mesh-rate-based",
            own_with(
                "wired-mesh",
                &[
                    ("flows.0.transport", json!("tfrc")),
                    ("flows.1.transport", json!("dccp-ccid3")),
                    ("flows.3.transport", json!("dccp-ccid2")),
                ],
            ),
        ),
        ("sctp-dual-homed", file("sctp-dual-homed-failover.toml", &[])),
        ("sctp-two-channels", file("sctp-dual-homed-wireless.toml", &[])),
    ]
}

/// Runs scenario `name` and returns the hash of its tables, after checking that it reaches
/// the part of the engine it is named for (a hash guards nothing if its scenario silently
/// stops exercising that part).
fn fingerprint(text: &str, name: &str) -> String {
    let sc = tpsim_scenario::load(text, name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let opts = RunOptions {
        seed: sc.simulation.seed,
        run: 0,
        pcap_dir: None,
    };
    let r = run(&sc, &opts).expect("run");
    let n = &r.network;
    assert!(
        r.flows.iter().map(|f| f.rx_packets).sum::<u64>() > 0,
        "{name}: nothing delivered"
    );
    let exercised = match name {
        "wired-mesh" => n.drops.iter().sum::<u64>() > 0 && r.flows.iter().any(|f| f.retransmissions > 0),
        "study-c-point" | "olsr-manet" => n.routing_packets > 0 && n.mac_frames > 0,
        "arp-aodv" => n.arp_requests > 0 && n.routing_packets > 0,
        "energy-death" => n.dead_nodes > 0,
        "faults-wired" => [DropReason::LinkDown, DropReason::InterfaceDown, DropReason::NodeDown]
            .iter()
            .all(|&d| n.drops[d as usize] > 0),
        "faults-radio" => {
            n.routing_packets > 0
                && n.drops[DropReason::InterfaceDown as usize] + n.drops[DropReason::NodeDown as usize] > 0
        }
        "study-a-point" => n.energy_consumed_j_total.is_some(),
        "wired-mesh-sctp" => r
            .flows
            .iter()
            .any(|f| f.key.transport == "sctp" && f.retransmissions > 0),
        "wired-mesh-rate-based" => ["tfrc", "dccp-ccid3", "dccp-ccid2"]
            .iter()
            .all(|t| r.flows.iter().any(|f| f.key.transport == *t && f.rx_packets > 0)),
        "sctp-dual-homed" | "sctp-two-channels" => r.flows[0]
            .extra
            .iter()
            .any(|(k, v)| *k == "failovers" && *v == Some(1.0)),
        _ => true,
    };
    assert!(exercised, "{name} no longer exercises what it is named for: {n:?}");
    let mut h = Sha256::new();
    for t in [r.flows_table(), r.network_table(), r.series_table()] {
        h.update(t.canonical_csv().as_bytes());
        h.update(b"--\n");
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn results_match_the_committed_fingerprint() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fingerprint.txt");
    let got: Vec<(String, String)> = scenarios()
        .into_iter()
        .map(|(name, text)| (name.to_string(), fingerprint(&text, name)))
        .collect();
    let text: String = got.iter().map(|(n, h)| format!("{n} {h}\n")).collect();
    if std::env::var_os("TPSIM_UPDATE_FINGERPRINT").is_some() {
        std::fs::write(&path, &text).expect("write fingerprint.txt");
        return;
    }
    let want =
        std::fs::read_to_string(&path).expect("tests/fingerprint.txt (create it with TPSIM_UPDATE_FINGERPRINT=1)");
    let changed: Vec<&str> = got
        .iter()
        .filter(|(n, h)| !want.lines().any(|l| l == format!("{n} {h}")))
        .map(|(n, _)| n.as_str())
        .collect();
    assert!(
        changed.is_empty(),
        "results changed for {changed:?}; if on purpose, update with TPSIM_UPDATE_FINGERPRINT=1 and say why in the commit"
    );
    assert_eq!(want.lines().count(), got.len(), "fingerprint.txt lists other scenarios");
}

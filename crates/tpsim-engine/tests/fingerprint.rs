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
use tpsim_engine::{run, RunOptions};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A shipped scenario file with `overrides` (dotted path, JSON value) applied.
fn file(name: &str, overrides: &[(&str, serde_json::Value)]) -> String {
    let path = root().join("scenarios").join(name);
    let text = std::fs::read_to_string(&path).expect("scenario file");
    let pairs: Vec<(String, serde_json::Value)> = overrides.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    tpsim_scenario::apply_overrides(&text, name, &pairs, true).expect("overrides apply")
}

fn chain(n: usize, spacing_m: u32) -> String {
    let pos: Vec<String> = (0..n)
        .map(|i| format!("[\"{}m\", \"0m\"]", i * spacing_m as usize))
        .collect();
    format!(
        "[nodes]\ncount = {n}\nplacement = {{ kind = \"explicit\", positions = [{}] }}\n",
        pos.join(", ")
    )
}

/// The scenarios, by name.
fn scenarios() -> Vec<(&'static str, String)> {
    use serde_json::json;
    vec![
        ("wired-udp", file("study-d-wired-voip.toml", &[])),
        ("wired-tcp", file("study-d-wired-voip.toml", &[("flows.0.transport", json!("tcp"))])),
        (
            // Four links with cycles, Bernoulli and explicit-list loss, a small queue, TCP
            // variants and Poisson UDP: routes, error models, DropTail and recovery.
            "wired-mesh",
            r#"
[simulation]
duration = "8s"
drain = "500ms"
[output]
timeseries = true
bin = "500ms"
[nodes]
count = 4
[[links]]
nodes = [0, 1]
rate = "2Mbps"
delay = "10ms"
queue = 8
loss = 0.02
[[links]]
nodes = [1, 2]
rate = "1Mbps"
delay = "5ms"
drop_forward = [3, 17, 18, 40]
[[links]]
nodes = [2, 3]
rate = "500kbps"
delay = "20ms"
[[links]]
nodes = [3, 0]
rate = "300kbps"
delay = "30ms"
queue = 5
[[flows]]
src = 0
dst = 2
transport = "tcp-reno"
app = { kind = "bulk", size = "1000B", bytes = "200kB", start = "0.2s" }
[[flows]]
src = 3
dst = 1
transport = "tcp-tahoe"
app = { kind = "bulk", size = "600B" }
[[flows]]
src = 1
dst = 3
transport = "udp"
app = { kind = "cbr", size = "300B", interval = "7ms", arrivals = "poisson" }
[[flows]]
src = 2
dst = 0
transport = "tcp"
app = { kind = "voip", size = "160B", interval = "20ms", start = "1s" }
tcp = { timestamps = true, delayed_ack_segments = 2 }
"#
            .to_string(),
        ),
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
                ],
            ),
        ),
        (
            "olsr-manet",
            r#"
[simulation]
duration = "30s"
drain = "1s"
[output]
timeseries = true
bin = "2s"
positions = true
[nodes]
count = 20
placement = { kind = "uniform", area = ["800m", "800m"] }
mobility = { model = "random-waypoint", speed = ["1m/s", "5m/s"], pause = "2s", area = ["800m", "800m"] }
[radio]
standard = "802.11b"
data_rate = "2Mbps"
[routing]
protocol = "olsr"
[[flows]]
src = 0
dst = 19
transport = "udp"
app = { kind = "cbr", size = "512B", interval = "100ms", start = "8s" }
[[flows]]
src = 5
dst = 12
transport = "tcp-newreno"
app = { kind = "bulk", size = "512B", start = "10s" }
"#
            .to_string(),
        ),
        (
            "arp-aodv",
            format!(
                "[simulation]\nduration = \"20s\"\ndrain = \"5s\"\nsizes = \"ns2\"\n{}[radio]\n[arp]\npreset = \"ns3\"\n\
                 [routing]\nprotocol = \"aodv\"\n\
                 [[flows]]\nsrc = 0\ndst = 3\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"512B\", interval = \"50ms\", start = \"1s\" }}\n\
                 [[flows]]\nsrc = 3\ndst = 1\ntransport = \"tcp\"\napp = {{ kind = \"bulk\", size = \"512B\", bytes = \"60kB\", start = \"2s\" }}\n",
                chain(4, 200)
            ),
        ),
        (
            // Nodes run out of energy during the run: node death cuts frames, drops queues.
            "energy-death",
            format!(
                "[simulation]\nduration = \"30s\"\ndrain = \"2s\"\nsizes = \"ns2\"\n[output]\ntimeseries = true\nbin = \"1s\"\n{}\
                 [radio]\n[routing]\nprotocol = \"aodv\"\n\
                 [energy]\ninitial = \"4J\"\ntx = \"1.2W\"\nrx = \"0.8W\"\nidle = \"0.05W\"\ndeath = true\n\
                 [[flows]]\nsrc = 0\ndst = 4\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"512B\", interval = \"40ms\", start = \"1s\" }}\n\
                 [[flows]]\nsrc = 4\ndst = 1\ntransport = \"tcp\"\napp = {{ kind = \"bulk\", size = \"512B\", start = \"1s\" }}\n",
                chain(5, 200)
            ),
        ),
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
        "study-a-point" => n.energy_consumed_j_total.is_some(),
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

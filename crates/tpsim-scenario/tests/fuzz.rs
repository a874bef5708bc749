//! Fuzz tests of the scenario loader and the ns-2 readers: no input may make them panic, hang
//! or allocate without bound; bad input must always come back as a clean error.
//!
//! Entry points: [`tpsim_scenario::parse`], [`tpsim_scenario::load`],
//! [`tpsim_scenario::apply_overrides`], [`tpsim_scenario::import::embed_files`],
//! [`tpsim_scenario::ns2::parse_movement`], [`tpsim_scenario::ns2::parse_traffic`] and
//! [`tpsim_scenario::import::ns2_to_toml`] (whose output, when it returns one, is loaded too).
//!
//! The properties (one `#[test]` each):
//!
//! * `bytes_into_scenario`, `bytes_into_overrides`, `bytes_into_movement`,
//!   `bytes_into_traffic`, `bytes_into_import`: arbitrary bytes (decoded lossily as UTF-8,
//!   biased towards TOML and Tcl punctuation) into each entry point;
//! * `mutated_scenarios_load`: the shipped scenarios (`scenarios/*.toml`,
//!   `crates/tpsim-engine/tests/fingerprint/*.toml`, read at test time) and the scenarios written
//!   below (ns-2 text inline, sensors, background, grid, waypoints), mutated: bytes flipped,
//!   inserted, deleted; a number replaced by an extreme (0, -1, 1e300, NaN, inf, 2^64, 4e9, ...);
//!   lines duplicated, dropped, swapped or inserted from a dictionary (`count = 4000000000`,
//!   `[sensors]`, ...); keys swapped or renamed to another key of the JSON Schema; strings and
//!   values replaced by enum values of the schema or extreme values with units;
//! * `mutated_scenario_values`: the same scenarios with numbers replaced by extremes of their
//!   TOML type (and a few line operations), so that about half still parse and reach `resolve`
//!   and `validate`;
//! * `mutated_scenarios_overrides`: `apply_overrides` on the scenarios' own key paths (as a
//!   sweep sets them), changed or not, with extreme JSON values, then `load` of the result;
//! * `mutated_movement`, `mutated_traffic`, `mutated_import`: small ns-2 movement and traffic
//!   files written below, mutated (numbers, lines, words, bytes); `ns2_to_toml`'s output is
//!   loaded and, without a `duration_s` from the user, must load without error (`tpsim
//!   import-ns2` reports an invalid conversion as a bug);
//! * `locator_line_col_matches`: the locator's line table against `error::line_col`.
//!
//! A case fails if a call panics (caught with `catch_unwind`, reported with the input and the
//! panic message), takes longer than 1 s (10 s in a debug build), makes a single allocation
//! above 512 MiB (the allocator below prints the input and aborts: a huge allocation is a
//! crash on a real machine), or returns an error that is not one line per diagnostic. The
//! regression tests at the end hold the inputs found so far, and long inputs (megabytes) that
//! once took time quadratic in their length.
//!
//! # Fuzzing
//!
//! The test suite runs 256 cases per property (about a second in a debug build). For a long
//! run, set proptest's standard `PROPTEST_CASES` and build in release mode, all properties or
//! one at a time (a name filter):
//!
//! ```text
//! PROPTEST_CASES=1000000 cargo test -q --release -p tpsim-scenario --test fuzz -- --test-threads=1
//! PROPTEST_CASES=1000000 cargo test -q --release -p tpsim-scenario --test fuzz -- --test-threads=1 --exact mutated_scenario_values
//! ```
//!
//! In release mode 10^6 cases take about 4 to 5 minutes for each `bytes_into_*` property and
//! less for the others; cases are drawn from a new random seed on each run. A failure prints
//! the (shrunk) input; add it to the regression tests at the end of this file.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::Value as J;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use tpsim_scenario::{import, ns2};

// ---------------------------------------------------------------------------------------------
// Harness: allocation guard, panic capture, time limit.

/// The largest single allocation a case may make.
const ALLOC_LIMIT: usize = 512 << 20;

thread_local! {
    /// The input of the call under test (pointer, length), printed if it allocates too much.
    static INPUT: Cell<(*const u8, usize)> = const { Cell::new((std::ptr::null(), 0)) };
    /// Whether a call under test runs (its panics are caught and reported with the input).
    static IN_CALL: Cell<bool> = const { Cell::new(false) };
    /// The message and place of the last panic on this thread.
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

struct Guard;

#[global_allocator]
static ALLOC: Guard = Guard;

fn too_big(size: usize) -> ! {
    use std::io::Write;
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let mut e = std::io::stderr();
    let _ = e.write_all(b"\nfuzz: an allocation of ");
    let _ = e.write_all(&digits[i..]);
    let _ = e.write_all(b" bytes (above the 512 MiB limit) on input:\n");
    let (p, n) = INPUT.try_with(|c| c.get()).unwrap_or((std::ptr::null(), 0));
    if !p.is_null() {
        // SAFETY: set by `call` from a live `&str` for the duration of the call.
        let _ = e.write_all(unsafe { std::slice::from_raw_parts(p, n) });
    }
    let _ = e.write_all(b"\n");
    std::process::abort()
}

// SAFETY: forwards to the system allocator; only refuses (by aborting) oversized requests.
unsafe impl GlobalAlloc for Guard {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if l.size() > ALLOC_LIMIT {
            too_big(l.size());
        }
        System.alloc(l)
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if l.size() > ALLOC_LIMIT {
            too_big(l.size());
        }
        System.alloc_zeroed(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        if new_size > ALLOC_LIMIT {
            too_big(new_size);
        }
        System.realloc(p, l, new_size)
    }
}

fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !IN_CALL.with(|c| c.get()) {
                return default(info);
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let at = info
                .location()
                .map(|l| format!(" at {}:{}", l.file(), l.line()))
                .unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg}{at}"));
        }))
    });
}

fn slow() -> Duration {
    if cfg!(debug_assertions) {
        Duration::from_secs(10)
    } else {
        Duration::from_secs(1)
    }
}

/// Runs `f` on `input` (a description of all the call's arguments, for reports): fails the
/// case if it panics or is slow.
fn call<T>(what: &str, input: &str, f: impl FnOnce() -> T) -> Result<T, TestCaseError> {
    quiet_panics();
    INPUT.with(|c| c.set((input.as_ptr(), input.len())));
    IN_CALL.with(|c| c.set(true));
    let t0 = Instant::now();
    let r = catch_unwind(AssertUnwindSafe(f));
    let took = t0.elapsed();
    IN_CALL.with(|c| c.set(false));
    INPUT.with(|c| c.set((std::ptr::null(), 0)));
    match r {
        Err(_) => {
            let msg = LAST_PANIC.with(|p| p.borrow().clone());
            Err(TestCaseError::fail(format!("{what} panicked: {msg}\ninput: {input}")))
        }
        Ok(_) if took > slow() => Err(TestCaseError::fail(format!("{what} took {took:?}\ninput: {input}"))),
        Ok(v) => Ok(v),
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(256)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    }
}

/// A scenario error must list at least one diagnostic, one line each, and no panic text.
fn check_scenario_error(what: &str, input: &str, e: &tpsim_scenario::ScenarioError) -> Result<(), TestCaseError> {
    let shown = e.to_string();
    let ok = !e.diagnostics.is_empty() && shown.lines().count() == e.diagnostics.len() && !shown.contains("panicked");
    if ok {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!(
            "{what}: error is not one line per diagnostic ({} diagnostics):\n{shown}\ninput: {input}",
            e.diagnostics.len()
        )))
    }
}

fn check_line(what: &str, input: &str, msg: &str) -> Result<(), TestCaseError> {
    if msg.lines().count() == 1 && !msg.contains("panicked") {
        Ok(())
    } else {
        Err(TestCaseError::fail(format!(
            "{what}: error is not one line:\n{msg}\ninput: {input}"
        )))
    }
}

// ---------------------------------------------------------------------------------------------
// The calls under test.

/// parse, load and embed_files of `text`.
fn run_scenario(text: &str) -> Result<(), TestCaseError> {
    let input = format!("{text:?}");
    if let Err(e) = call("parse", &input, || tpsim_scenario::parse(text, "<fuzz>"))? {
        check_scenario_error("parse", &input, &e)?;
    }
    if let Err(e) = call("load", &input, || tpsim_scenario::load(text, "<fuzz>"))? {
        check_scenario_error("load", &input, &e)?;
    }
    // `file = "..."` would read files from the disk: only the TOML handling is wanted here.
    if !text.contains("file") {
        if let Err(e) = call("embed_files", &input, || import::embed_files(text, "<fuzz>"))? {
            check_scenario_error("embed_files", &input, &e)?;
        }
    }
    Ok(())
}

/// apply_overrides, then loading its output.
fn run_overrides(text: &str, pairs: &[(String, J)], drop_sweep: bool) -> Result<(), TestCaseError> {
    let input = format!("{text:?} with overrides {pairs:?} drop_sweep {drop_sweep}");
    match call("apply_overrides", &input, || {
        tpsim_scenario::apply_overrides(text, "<fuzz>", pairs, drop_sweep)
    })? {
        Err(e) => check_scenario_error("apply_overrides", &input, &e),
        Ok(out) if !out.contains("file") => run_scenario(&out),
        Ok(_) => Ok(()),
    }
}

fn run_movement(text: &str) -> Result<(), TestCaseError> {
    let input = format!("{text:?}");
    match call("parse_movement", &input, || ns2::parse_movement(text))? {
        Err(e) => check_line("parse_movement", &input, &e.to_string()),
        Ok(m) => {
            let _ = call("Movement::first_id/last_id", &input, || (m.first_id(), m.last_id()))?;
            Ok(())
        }
    }
}

fn run_traffic(text: &str) -> Result<(), TestCaseError> {
    let input = format!("{text:?}");
    match call("parse_traffic", &input, || ns2::parse_traffic(text))? {
        Err(e) => check_line("parse_traffic", &input, &e.to_string()),
        Ok(flows) => {
            for f in &flows {
                let _ = call("flow_of", &input, || import::flow_of(f, 0, 1))?;
            }
            Ok(())
        }
    }
}

/// ns2_to_toml, then loading the scenario it writes.
fn run_import(
    movement: &str,
    traffic: Option<&str>,
    first_id: Option<u32>,
    duration_s: Option<f64>,
) -> Result<(), TestCaseError> {
    let input = format!("movement {movement:?} traffic {traffic:?} first_id {first_id:?} duration_s {duration_s:?}");
    let out = call("ns2_to_toml", &input, || {
        import::ns2_to_toml(
            movement,
            traffic,
            ("movement", traffic.map(|_| "traffic")),
            first_id,
            duration_s,
        )
    })?;
    match out {
        Err(msg) => check_line("ns2_to_toml", &input, &msg),
        Ok(toml) => {
            let input = format!("{input}\nconverted: {toml:?}");
            if let Err(e) = call("load (of ns2_to_toml's output)", &input, || {
                tpsim_scenario::load(&toml, "<import>")
            })? {
                check_scenario_error("load (of ns2_to_toml's output)", &input, &e)?;
                // `tpsim import-ns2` reports an invalid conversion as a bug; only a duration
                // given by the user may make it invalid (flows starting after its end).
                if duration_s.is_none() {
                    return Err(TestCaseError::fail(format!(
                        "ns2_to_toml wrote a scenario that does not load:\n{e}\n{input}"
                    )));
                }
            }
            Ok(())
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Seeds.

const MOVEMENT: &[&str] = &[
    "set god_ [God instance]\n\
     $node_(0) set X_ 150.0\n$node_(0) set Y_ 93.98\n$node_(0) set Z_ 0.0\n\
     $node_(1) set X_ 10.5\n$node_(1) set Y_ 200.25\n$node_(1) set Z_ 0.0\n\
     $node_(2) set X_ 400.0\n$node_(2) set Y_ 10.0\n$node_(2) set Z_ 0.0\n\
     $god_ set-dist 0 1 1\n$god_ set-dist 0 2 16777215\n$god_ set-dist 1 2 2\n\
     $ns_ at 2.5 \"$node_(0) setdest 300.0 100.0 5.0\"\n\
     $ns_ at 10.0 \"$node_(2) setdest 0.0 0.0 20.5\"\n\
     $ns_ at 4.0 \"$god_ set-dist 0 2 2\"\n\
     $ns_ at 1.0 \"$node_(1) setdest 10.5 200.25 0.0\"\n",
    "# ids from 1, backwards in time\n\
     $ns_ at 90.0 \"$node_(2) setdest 5 5 1\"\n\
     $ns_ at 30.0 \"$node_(1) setdest 600 600 12.25\"\n\
     $node_(2) set Y_ 1.0\n$node_(2) set X_ 2.0\n\
     $node_(1) set Y_ 3.0\n$node_(1) set X_ 4.0\n",
    "$node_(0) set X_ 0\n$node_(0) set Y_ 0\n",
];

const TRAFFIC: &[&str] = &[
    "#\n# 0 connecting to 2 at time 12.5\n#\n\
     set udp_(0) [new Agent/UDP]\n$ns_ attach-agent $node_(0) $udp_(0)\n\
     set null_(0) [new Agent/Null]\n$ns_ attach-agent $node_(2) $null_(0)\n\
     set cbr_(0) [new Application/Traffic/CBR]\n$cbr_(0) set packetSize_ 512\n\
     $cbr_(0) set interval_ 0.25\n$cbr_(0) set random_ 1\n$cbr_(0) set maxpkts_ 10000\n\
     $cbr_(0) attach-agent $udp_(0)\n$ns_ connect $udp_(0) $null_(0)\n\
     $ns_ at 12.5 \"$cbr_(0) start\"\n$ns_ at 80 \"$cbr_(0) stop\"\n",
    "set tcp_(1) [$ns_ create-connection TCP $node_(1) TCPSink $node_(2) 0]\n\
     $tcp_(1) set window_ 32\n$tcp_(1) set packetSize_ 512\n\
     set ftp_(1) [$tcp_(1) attach-source FTP]\n$ns_ at 5.5 \"$ftp_(1) start\"\n",
    "set tcp [new Agent/TCP/Reno]\n$tcp set class_ 2\nset sink [new Agent/TCPSink]\n\
     $ns_ attach-agent $node_(1) $tcp\n$ns_ attach-agent $node_(0) $sink\n$ns_ connect $tcp $sink\n\
     set ftp [new Application/FTP]\n$ftp attach-agent $tcp\n$ns_ at 7.0 \"$ftp start\"\n\
     set u [new Agent/UDP]\n$ns_ attach-agent $node_(2) $u\nset n [new Agent/Null]\n\
     $ns_ attach-agent $node_(1) $n\n$ns_ connect $u $n\n\
     set c [$u attach-app Traffic/CBR]\n$c set rate_ 64000\n$ns_ at 1 \"$c start\"\n",
];

/// Scenarios written here to reach what the shipped ones do not (ns-2 text, grids, background,
/// beacons, waypoints, random walk).
const SCENARIOS: &[&str] = &[
    r#"[simulation]
duration = "100s"
sizes = "ns2"
[nodes]
count = 3
[nodes.mobility]
model = "ns2"
text = """
$node_(0) set X_ 150.0
$node_(0) set Y_ 93.98
$node_(1) set X_ 10.5
$node_(1) set Y_ 200.25
$node_(2) set X_ 400.0
$node_(2) set Y_ 10.0
$ns_ at 2.5 "$node_(0) setdest 300.0 100.0 5.0"
$ns_ at 10.0 "$node_(2) setdest 0.0 0.0 20.5"
"""
[radio]
standard = "802.11b"
[ns2_traffic]
text = """
set udp_(0) [new Agent/UDP]
$ns_ attach-agent $node_(0) $udp_(0)
set null_(0) [new Agent/Null]
$ns_ attach-agent $node_(2) $null_(0)
set cbr_(0) [new Application/Traffic/CBR]
$cbr_(0) set packetSize_ 512
$cbr_(0) set interval_ 0.25
$cbr_(0) attach-agent $udp_(0)
$ns_ connect $udp_(0) $null_(0)
$ns_ at 12.5 "$cbr_(0) start"
set tcp_(1) [$ns_ create-connection TCP $node_(1) TCPSink $node_(2) 0]
$tcp_(1) set window_ 32
set ftp_(1) [$tcp_(1) attach-source FTP]
$ns_ at 5.5 "$ftp_(1) start"
"""
"#,
    r#"[simulation]
duration = "30s"
runs = 2
[nodes]
count = 9
placement = { kind = "grid", columns = 3, spacing = "100m" }
[nodes.mobility]
model = "random-walk"
speed = ["1m/s", "3m/s"]
area = ["300m", "300m"]
interval = "2s"
max_turn = "90deg"
[radio]
standard = "802.11a"
data_rate = "6Mbps"
propagation = "log-distance"
exponent = 3.0
range = "150m"
cs_range = "250m"
[routing]
protocol = "olsr"
hello_interval = "2s"
[beacons]
interval = "1s"
size = "100B"
nodes = [0, 4, 8]
[background]
flows = 3
size = "200B"
rate = "16kbps"
start = ["0s", "5s"]
exclude = [4]
[sensors]
sink = 4
nodes = [0, 2, 6, 8]
transport = "tcp"
size = "64B"
interval = "5s"
start = "1s"
stop = "20s"
tcp = { mss = "536B" }
[[flows]]
src = 0
dst = 8
transport = "udp"
app = { kind = "cbr", size = "512B", rate = "64kbps", jitter = 0.5, count = 100, start = "1s", stop = "29s" }
"#,
    r#"[simulation]
duration = "10s"
[output]
timeseries = true
bin = "100ms"
positions = true
[nodes]
count = 2
placement = { kind = "uniform", area = ["500m", "500m"] }
[nodes.mobility]
model = "waypoints"
waypoints = [
  { node = 0, at = "1s", to = ["10m", "10m"], speed = "2m/s" },
  { node = 1, at = "0s", to = ["400m", "0m"], speed = "0m/s" },
]
[radio]
tx_power = "24.5dBm"
rx_threshold = "-64.37dBm"
reception = "sinr"
error_model = "ber"
[energy]
initial = "1kJ"
[arp]
preset = "ns3"
pending_queue = 3
[[flows]]
src = 1
dst = 0
transport = "tcp-newreno"
app = { kind = "bulk", size = "1000B", bytes = "1MB" }
tcp = { receive_window = "64KiB", initial_window = 2, syn_attempts = 3, syn_rto = "1s" }
"#,
];

struct Seeds {
    /// Scenario texts: the shipped files, then [`SCENARIOS`].
    scenarios: Vec<String>,
    /// Dotted key paths of each scenario (for overrides).
    paths: Vec<Vec<String>>,
    /// Every key name of the JSON Schema.
    keys: Vec<String>,
    /// Every enum value of the JSON Schema, and extreme values with units.
    strings: Vec<String>,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toml_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display())))
        .collect()
}

fn key_paths(v: &toml::Value, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                let p = join(k);
                out.push(p.clone());
                key_paths(v, &p, out);
            }
        }
        toml::Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                let p = join(&i.to_string());
                out.push(p.clone());
                key_paths(v, &p, out);
            }
        }
        _ => {}
    }
}

fn schema_words(v: &J, keys: &mut Vec<String>, strings: &mut Vec<String>) {
    match v {
        J::Object(o) => {
            if let Some(J::Object(props)) = o.get("properties") {
                keys.extend(props.keys().cloned());
            }
            if let Some(J::Array(e)) = o.get("enum") {
                strings.extend(e.iter().filter_map(|s| s.as_str().map(str::to_string)));
            }
            for v in o.values() {
                schema_words(v, keys, strings);
            }
        }
        J::Array(a) => a.iter().for_each(|v| schema_words(v, keys, strings)),
        _ => {}
    }
}

/// Values with units at the edges of each unit type, and odd strings.
#[rustfmt::skip]
const UNIT_STRINGS: &[&str] = &[
    "0s", "1ns", "18446744073709551615ns", "18446744073709551616ns", "18446744073s", "18446744074s", "1e300s", "-1s",
    "NaNs", "infs", "1e-300s", "99999999999h", "0B", "4294967295B", "4294967296B", "18446744073709551615B", "1e300B",
    "0bps", "1bps", "1e300Gbps", "0m", "-1m", "1e308km", "-1e308m", "1e-320m", "0m/s", "-5m/s", "1e308m/s", "0W",
    "-1e300dBm", "1e300dBm", "0Hz", "0J", "-0J", "0deg", "1e300deg", "0rad", "", " ", "s", "1", "1 parsecs", "\u{0}",
    "é", "1e", "--1s", "+1s", ".5s", "1.s", "0x10s",
];

fn seeds() -> &'static Seeds {
    static S: OnceLock<Seeds> = OnceLock::new();
    S.get_or_init(|| {
        // `[[cases]]` belong to the Python front end, which takes them out before the engine
        // reads a file: the seeds keep what comes before them (the study files list them last).
        let mut scenarios: Vec<String> = toml_files(&root().join("scenarios"))
            .into_iter()
            .map(|s| match s.find("\n[[cases]]") {
                Some(i) => s[..i + 1].to_string(),
                None => s,
            })
            .collect();
        scenarios.extend(toml_files(&root().join("crates/tpsim-engine/tests/fingerprint")));
        scenarios.extend(SCENARIOS.iter().map(|s| s.to_string()));
        let paths = scenarios
            .iter()
            .map(|s| {
                let mut out = Vec::new();
                key_paths(&toml::from_str(s).expect("seed scenarios are TOML"), "", &mut out);
                out
            })
            .collect();
        let schema: J = serde_json::from_str(&tpsim_scenario::json_schema()).expect("the schema is JSON");
        let (mut keys, mut strings) = (Vec::new(), Vec::new());
        schema_words(&schema, &mut keys, &mut strings);
        keys.sort();
        keys.dedup();
        strings.extend(UNIT_STRINGS.iter().map(|s| s.to_string()));
        strings.sort();
        strings.dedup();
        Seeds {
            scenarios,
            paths,
            keys,
            strings,
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Mutations.

/// Extreme numbers to put in place of a number.
#[rustfmt::skip]
const NUMBERS: &[&str] = &[
    "0", "-1", "1", "1e300", "-1e300", "NaN", "nan", "inf", "-inf", "+inf", "18446744073709551616",
    "18446744073709551615", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "4294967295",
    "4294967296", "4000000000", "16777215", "65535", "65536", "1e-320", "5e-324", "0.0", "-0.0", "-0", "1e20",
    "1.7976931348623157e308", "0.5", "1e9", "2147483648", "00", "1_000", "0x10", "1e", ".", "-",
];

/// Extreme TOML integers.
#[rustfmt::skip]
const INTS: &[&str] = &[
    "0", "1", "-1", "2", "4294967295", "4294967294", "4294967296", "2147483648", "65535", "65536", "16777215",
    "1000000", "1000001", "9223372036854775807", "-9223372036854775808",
];

/// Extreme TOML floats.
#[rustfmt::skip]
const FLOATS: &[&str] = &[
    "0.0", "-0.0", "1.0", "0.5", "0.999999", "1e300", "-1e300", "nan", "inf", "-inf", "5e-324",
];

/// Lines to insert in a scenario.
#[rustfmt::skip]
const TOML_LINES: &[&str] = &[
    "[sensors]", "sink = 0", "transport = \"udp\"", "[[flows]]", "src = 0", "dst = 4294967295", "count = 4000000000",
    "count = 4294967295", "count = 0", "[nodes.mobility]", "model = \"ns2\"", "first_id = 4294967295",
    "first_id = 4294967294", "[ns2_traffic]", "text = \"$node_(0) set X_ 1\\n$node_(0) set Y_ 1\"",
    "text = \"$node_(4294967295) set X_ 1\\n$node_(4294967295) set Y_ 1\"", "[background]", "flows = 4294967295",
    "exclude = [0, 1, 2]", "[sweep]", "\"nodes.count\" = [0, 4294967295]", "[[links]]", "nodes = [0, 4294967295]",
    "nodes = [0, 1]", "placement = { kind = \"grid\", spacing = \"1m\" }",
    "placement = { kind = \"grid\", spacing = \"1m\", columns = 4294967295 }", "[radio]", "[beacons]", "[energy]",
    "[arp]", "[routing]", "protocol = \"aodv\"", "start = \"18446744073s\"", "interval = \"1ns\"",
    "area = [\"1m\", \"1m\"]", "speed = [\"0m/s\", \"1m/s\"]", "model = \"random-waypoint\"",
    "model = \"random-walk\"",
    "waypoints = [{ node = 4294967295, at = \"0s\", to = [\"0m\", \"0m\"], speed = \"1m/s\" }]", "[output]",
    "bin = \"1ns\"", "duration = \"18446744073s\"", "drain = \"18446744073s\"", "runs = 4294967295",
    "positions = [[\"0m\", \"0m\"]]", "columns = 4294967295",
    "node_ranges = [{ nodes = [4294967295], range = \"1m\" }]", "drop_forward = [18446744073709551615]",
    "tcp = { receive_window = \"4GiB\", mss = \"65495B\" }",
    "app = { kind = \"cbr\", size = \"1B\", interval = \"1ns\", start = \"0s\" }", "rate = \"1bps\"", "[simulation]",
    "[nodes]", "[nodes.placement]", "kind = \"explicit\"", "\"a.b\" = 1", "a.b.c = 1", "x = 1979-05-27T07:32:00Z",
    "[[sweep]]", "[flows]", "flows = []", "nodes = 1", "", "#", "[", "]", "= 1", "\"\"\"", "'''",
];

/// Lines to insert in ns-2 files.
#[rustfmt::skip]
const NS2_LINES: &[&str] = &[
    "$node_(4294967295) set X_ 1", "$node_(4294967295) set Y_ 1", "$node_(4294967294) set X_ 1",
    "$node_(4294967294) set Y_ 1", "$node_(0) set X_ 1e308", "$node_(0) set W_ 1",
    "$ns_ at 1e300 \"$node_(0) setdest 1e308 -1e308 1e300\"", "$ns_ at 1 \"$node_(4294967295) setdest 1 1 1\"",
    "$god_ set-dist 4294967295 0 16777215", "$ns_ at 1 \"$god_ set-dist 1e300 -1 1e20\"",
    "$ns_ at 1 \"$node_(0) setdest 1 2 3 4\"", "set god_ [God instance]",
    "set tcp_(9) [$ns_ create-connection TCP $node_(4294967295) TCPSink $node_(0) 0]",
    "set tcp_(9) [$ns_ create-connection TCP/Newreno $node_(0) TCPSink $node_(1) 0]", "$tcp_(9) set window_ 1e300",
    "$tcp_(9) set packetSize_ 1e300", "$tcp_(9) set window_ 18446744073709551615",
    "set ftp_(9) [$tcp_(9) attach-source FTP]", "$ns_ at 1 \"$ftp_(9) start\"", "$ns_ at 1e300 \"$ftp_(9) stop\"",
    "$cbr_(0) set rate_ 0", "$cbr_(0) set rate_ 1e-300", "$cbr_(0) set packetSize_ 1e300",
    "$cbr_(0) set interval_ 1e-300", "$cbr_(0) set interval_ 1e300", "$cbr_(0) set maxpkts_ 1e300",
    "$cbr_(0) set random_ -1", "$ns_ connect $udp_(0) $udp_(0)", "$cbr_(0) attach-agent $cbr_(0)",
    "set x [new Application/Traffic/CBR]", "set x [new Agent/UDP]", "$ns_ attach-agent $node_(0) $x",
    "$x attach-agent $x", "$ns_ at 0 \"$x start\"", "set $ [new Agent/UDP]", "set  [new ]", "$ns_ at", "$ns_ at 1 \"",
    "\"", "#", "", "$", "$ns_", "set", "[new",
];

/// Words to put in ns-2 lines.
#[rustfmt::skip]
const NS2_WORDS: &[&str] = &[
    "$node_(0)", "$node_(1)", "$node_(4294967295)", "$node_(4294967296)", "$node_(-1)", "$node_()", "$node_(",
    "node_(2)", "set", "X_", "Y_", "Z_", "setdest", "$ns_", "at", "$god_", "god_", "set-dist", "start", "stop",
    "attach-agent", "connect", "create-connection", "[new", "Agent/UDP]", "Agent/TCP]", "Agent/TCP/Reno]",
    "Agent/Null]", "Application/Traffic/CBR]", "Application/FTP]", "attach-source", "attach-app", "FTP]",
    "Traffic/CBR]", "packetSize_", "interval_", "rate_", "maxpkts_", "window_", "random_", "$udp_(0)", "$cbr_(0)",
    "$null_(0)", "$tcp", "$sink", "$ftp", "[$tcp", "[$ns_", "$", "\"", "[", "]", "TCP", "TCPSink",
];

#[derive(Clone, Debug)]
enum Op {
    FlipBit(usize, u8),
    InsertByte(usize, u8),
    DeleteByte(usize),
    /// Replace the i-th number by NUMBERS[k].
    Number(usize, usize),
    DuplicateLine(usize),
    DropLine(usize),
    SwapLines(usize, usize),
    /// Insert dictionary line k before line i.
    InsertLine(usize, usize),
    /// Swap the i-th and j-th keys (`key =`), or in ns-2 text two words of a line.
    SwapKeys(usize, usize),
    /// Replace the i-th key (TOML) or word (ns-2) by dictionary word k.
    RenameKey(usize, usize),
    /// Replace the i-th quoted string by dictionary string k.
    String(usize, usize),
    /// Replace the value of the i-th key (TOML) by an extreme number or string k.
    SetValue(usize, usize),
    /// Replace the i-th number by an extreme of its TOML type: an integer by an integer, a
    /// float by a float, a number inside a string (`"20ms"`) by any of NUMBERS.
    TypedNumber(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    let n = 1usize << 20;
    prop_oneof![
        1 => (0..n, 0..8u8).prop_map(|(i, b)| Op::FlipBit(i, b)),
        1 => (0..n, any::<u8>()).prop_map(|(i, b)| Op::InsertByte(i, b)),
        1 => (0..n).prop_map(Op::DeleteByte),
        3 => (0..n, 0..n).prop_map(|(i, k)| Op::Number(i, k)),
        1 => (0..n).prop_map(Op::DuplicateLine),
        1 => (0..n).prop_map(Op::DropLine),
        1 => (0..n, 0..n).prop_map(|(i, j)| Op::SwapLines(i, j)),
        2 => (0..n, 0..n).prop_map(|(i, k)| Op::InsertLine(i, k)),
        1 => (0..n, 0..n).prop_map(|(i, j)| Op::SwapKeys(i, j)),
        2 => (0..n, 0..n).prop_map(|(i, k)| Op::RenameKey(i, k)),
        2 => (0..n, 0..n).prop_map(|(i, k)| Op::String(i, k)),
        3 => (0..n, 0..n).prop_map(|(i, k)| Op::SetValue(i, k)),
    ]
}

/// Mutations that mostly keep the scenario well-formed TOML of the right types, so that the
/// input gets past the parser into `resolve` and `validate`.
fn value_ops() -> impl Strategy<Value = Vec<Op>> {
    let n = 1usize << 20;
    let op = prop_oneof![
        12 => (0..n, 0..n).prop_map(|(i, k)| Op::TypedNumber(i, k)),
        1 => (0..n).prop_map(Op::DuplicateLine),
        1 => (0..n).prop_map(Op::DropLine),
        1 => (0..n, 0..n).prop_map(|(i, j)| Op::SwapLines(i, j)),
        1 => (0..n, 0..n).prop_map(|(i, k)| Op::InsertLine(i, k)),
    ];
    proptest::collection::vec(op, 1..4)
}

/// Mutations of ns-2 files: mostly numbers and whole lines, so that most files still parse.
fn ns2_op() -> impl Strategy<Value = Op> {
    let n = 1usize << 20;
    prop_oneof![
        1 => (0..n, 0..8u8).prop_map(|(i, b)| Op::FlipBit(i, b)),
        1 => (0..n, any::<u8>()).prop_map(|(i, b)| Op::InsertByte(i, b)),
        1 => (0..n).prop_map(Op::DeleteByte),
        8 => (0..n, 0..n).prop_map(|(i, k)| Op::Number(i, k)),
        2 => (0..n).prop_map(Op::DuplicateLine),
        2 => (0..n).prop_map(Op::DropLine),
        1 => (0..n, 0..n).prop_map(|(i, j)| Op::SwapLines(i, j)),
        3 => (0..n, 0..n).prop_map(|(i, k)| Op::InsertLine(i, k)),
        1 => (0..n, 0..n).prop_map(|(i, j)| Op::SwapKeys(i, j)),
        1 => (0..n, 0..n).prop_map(|(i, k)| Op::RenameKey(i, k)),
    ]
}

fn ns2_ops(max: usize) -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(ns2_op(), 0..max)
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(op(), 1..8)
}

/// Spans of numbers: digits with a sign, a point and an exponent.
fn number_spans(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit() && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let s = if i > 0 && b[i - 1] == b'-' { i - 1 } else { i };
        let mut e = i;
        while e < b.len()
            && (b[e].is_ascii_digit()
                || b[e] == b'.'
                || ((b[e] == b'e' || b[e] == b'E')
                    && e + 1 < b.len()
                    && (b[e + 1].is_ascii_digit() || b[e + 1] == b'-' || b[e + 1] == b'+'))
                || ((b[e] == b'-' || b[e] == b'+') && (b[e - 1] == b'e' || b[e - 1] == b'E')))
        {
            e += 1;
        }
        out.push((s, e));
        i = e.max(i + 1);
    }
    out
}

/// Spans of TOML keys (`name =`, also inside inline tables and quoted).
fn key_spans(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.';
        let boundary = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'{' | b',');
        if boundary && (ident(b[i]) || b[i] == b'"') {
            let mut e = i + 1;
            if b[i] == b'"' {
                while e < b.len() && b[e] != b'"' && b[e] != b'\n' {
                    e += 1;
                }
                e = (e + 1).min(b.len());
            } else {
                while e < b.len() && ident(b[e]) {
                    e += 1;
                }
            }
            let mut j = e;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if j < b.len() && b[j] == b'=' && b.get(j + 1) != Some(&b'=') {
                out.push((i, e));
            }
            i = e;
        } else {
            i += 1;
        }
    }
    out
}

/// The span of the value that starts at or after `at` (after `=` and spaces): a basic string,
/// an array or inline table (to its matching bracket), or a bare word.
fn value_span(t: &str, at: usize) -> Option<(usize, usize)> {
    let b = t.as_bytes();
    let mut s = at;
    while s < b.len() && b[s] != b'=' {
        s += 1;
    }
    s += 1;
    while s < b.len() && b[s] == b' ' {
        s += 1;
    }
    if s >= b.len() {
        return None;
    }
    let mut e = s + 1;
    match b[s] {
        b'"' => {
            while e < b.len() && b[e] != b'"' && b[e] != b'\n' {
                e += 1;
            }
            e = (e + 1).min(b.len());
        }
        b'[' | b'{' => {
            let mut depth = 1;
            let mut in_str = false;
            while e < b.len() && depth > 0 {
                match b[e] {
                    b'"' => in_str = !in_str,
                    b'[' | b'{' if !in_str => depth += 1,
                    b']' | b'}' if !in_str => depth -= 1,
                    _ => {}
                }
                e += 1;
            }
        }
        _ => {
            while e < b.len() && !matches!(b[e], b',' | b'}' | b']' | b'\n' | b'#' | b' ') {
                e += 1;
            }
        }
    }
    Some((s, e))
}

/// Spans of one-line basic strings, quotes excluded.
fn string_spans(t: &str) -> Vec<(usize, usize)> {
    let b = t.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' {
            let mut e = i + 1;
            while e < b.len() && b[e] != b'"' && b[e] != b'\n' && b[e] != b'\\' {
                e += 1;
            }
            if e < b.len() && b[e] == b'"' {
                out.push((i + 1, e));
                i = e + 1;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn replace_span(t: &str, (s, e): (usize, usize), with: &str) -> String {
    let mut b = t.as_bytes()[..s].to_vec();
    b.extend_from_slice(with.as_bytes());
    b.extend_from_slice(&t.as_bytes()[e..]);
    String::from_utf8_lossy(&b).into_owned()
}

fn lines_op(t: &str, f: impl FnOnce(&mut Vec<String>)) -> String {
    let mut lines: Vec<String> = t.split('\n').map(str::to_string).collect();
    f(&mut lines);
    lines.join("\n")
}

/// Applies `ops` to `text`; `toml` selects the TOML or the ns-2 flavour of the key, string
/// and line operations.
fn mutate(text: &str, ops: &[Op], toml: bool) -> String {
    let s = seeds();
    let mut t = text.to_string();
    for op in ops {
        t = match *op {
            Op::FlipBit(i, bit) if !t.is_empty() => {
                let mut b = t.into_bytes();
                let n = b.len();
                b[i % n] ^= 1 << bit;
                String::from_utf8_lossy(&b).into_owned()
            }
            Op::InsertByte(i, v) => {
                let mut b = t.into_bytes();
                let at = i % (b.len() + 1);
                b.insert(at, v);
                String::from_utf8_lossy(&b).into_owned()
            }
            Op::DeleteByte(i) if !t.is_empty() => {
                let mut b = t.into_bytes();
                let n = b.len();
                b.remove(i % n);
                String::from_utf8_lossy(&b).into_owned()
            }
            Op::TypedNumber(i, k) => {
                let spans = number_spans(&t);
                if spans.is_empty() {
                    t
                } else {
                    let (a, e) = spans[i % spans.len()];
                    let line_start = t[..a].rfind('\n').map_or(0, |p| p + 1);
                    let in_string = t[line_start..a].matches('"').count() % 2 == 1;
                    let token = &t[a..e];
                    let pick = |list: &[&'static str]| list[k % list.len()];
                    let with = if in_string {
                        pick(NUMBERS)
                    } else if token.contains(['.', 'e', 'E']) {
                        pick(FLOATS)
                    } else {
                        pick(INTS)
                    };
                    replace_span(&t, (a, e), with)
                }
            }
            Op::Number(i, k) => {
                let spans = number_spans(&t);
                if spans.is_empty() {
                    t
                } else {
                    replace_span(&t, spans[i % spans.len()], NUMBERS[k % NUMBERS.len()])
                }
            }
            Op::DuplicateLine(i) => lines_op(&t, |l| {
                let i = i % l.len();
                l.insert(i, l[i].clone());
            }),
            Op::DropLine(i) => lines_op(&t, |l| {
                let n = l.len();
                l.remove(i % n);
            }),
            Op::SwapLines(i, j) => lines_op(&t, |l| {
                let n = l.len();
                l.swap(i % n, j % n);
            }),
            Op::InsertLine(i, k) => lines_op(&t, |l| {
                let line = if toml {
                    TOML_LINES[k % TOML_LINES.len()]
                } else {
                    NS2_LINES[k % NS2_LINES.len()]
                };
                let n = l.len();
                l.insert(i % (n + 1), line.to_string());
            }),
            Op::SwapKeys(i, j) if toml => {
                let spans = key_spans(&t);
                if spans.len() < 2 {
                    t
                } else {
                    let (a, b) = (spans[i % spans.len()], spans[j % spans.len()]);
                    let (a, b) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                    if a == b {
                        t
                    } else {
                        let ka = t[a.0..a.1].to_string();
                        let kb = t[b.0..b.1].to_string();
                        let t2 = replace_span(&t, b, &ka);
                        replace_span(&t2, a, &kb)
                    }
                }
            }
            Op::SwapKeys(i, j) => lines_op(&t, |l| {
                let n = l.len();
                let line = &mut l[i % n];
                let mut w: Vec<&str> = line.split(' ').collect();
                let m = w.len();
                w.swap(j % m, (j / m) % m);
                *line = w.join(" ");
            }),
            Op::RenameKey(i, k) if toml => {
                let spans = key_spans(&t);
                if spans.is_empty() {
                    t
                } else {
                    replace_span(&t, spans[i % spans.len()], &s.keys[k % s.keys.len()])
                }
            }
            Op::RenameKey(i, k) => lines_op(&t, |l| {
                let n = l.len();
                let line = &mut l[i % n];
                let mut w: Vec<&str> = line.split(' ').collect();
                let m = w.len();
                w[(i / n) % m] = NS2_WORDS[k % NS2_WORDS.len()];
                *line = w.join(" ");
            }),
            Op::SetValue(i, k) if toml => {
                let keys = key_spans(&t);
                match keys.get(i % keys.len().max(1)).and_then(|&(_, e)| value_span(&t, e)) {
                    None => t,
                    Some(span) => {
                        let n = NUMBERS.len() + s.strings.len();
                        let with = match k % n {
                            j if j < NUMBERS.len() => NUMBERS[j].to_string(),
                            j => format!("\"{}\"", s.strings[j - NUMBERS.len()]),
                        };
                        replace_span(&t, span, &with)
                    }
                }
            }
            Op::String(i, k) => {
                let spans = string_spans(&t);
                if spans.is_empty() {
                    t
                } else {
                    let with = if toml {
                        s.strings[k % s.strings.len()].as_str()
                    } else {
                        NS2_WORDS[k % NS2_WORDS.len()]
                    };
                    replace_span(&t, spans[i % spans.len()], with)
                }
            }
            _ => t,
        };
    }
    t
}

// ---------------------------------------------------------------------------------------------
// Strategies.

/// Bytes biased towards the punctuation of TOML and Tcl, decoded lossily.
fn text(max: usize) -> impl Strategy<Value = String> {
    const ALPHABET: &[u8] = b"[]{}=\"'.,\n\n\t #0123456789abcdefgilmnorstuxyz_-+$()\\:";
    let byte = prop_oneof![any::<u8>(), proptest::sample::select(ALPHABET)];
    proptest::collection::vec(byte, 0..max).prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// JSON values for overrides: extremes of each type and small nested ones.
fn json_value() -> impl Strategy<Value = J> {
    let leaf = prop_oneof![
        Just(J::Null),
        any::<bool>().prop_map(J::Bool),
        proptest::sample::select(vec![
            0i64,
            -1,
            1,
            i64::MAX,
            i64::MIN,
            4_294_967_295,
            4_294_967_296,
            4_000_000_000
        ])
        .prop_map(J::from),
        Just(J::from(u64::MAX)),
        proptest::sample::select(vec![0.5f64, -0.0, 1e300, -1e300, 5e-324, f64::MAX]).prop_map(J::from),
        (0..UNIT_STRINGS.len()).prop_map(|k| J::from(UNIT_STRINGS[k])),
        (0usize..1000).prop_map(|k| {
            let s = seeds();
            J::from(s.strings[k % s.strings.len()].clone())
        }),
        ".{0,12}".prop_map(J::from),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(J::Array),
            proptest::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| J::Object(m.into_iter().collect())),
        ]
    })
}

/// A key path: one of the seed's, one of the seed's with a segment changed or appended, or
/// arbitrary.
fn override_path(seed: usize) -> impl Strategy<Value = String> {
    (0usize..1 << 20, 0usize..6, 0usize..1 << 20, "[a-z0-9_.]{0,16}").prop_map(move |(i, how, k, any)| {
        let s = seeds();
        let paths = &s.paths[seed];
        let p = paths[i % paths.len()].clone();
        match how {
            0 | 1 => p,
            2 => format!("{p}.{}", s.keys[k % s.keys.len()]),
            3 => format!("{p}.{}", k % 5),
            4 => match p.rsplit_once('.') {
                Some((head, _)) => format!("{head}.{}", s.keys[k % s.keys.len()]),
                None => s.keys[k % s.keys.len()].clone(),
            },
            _ => any,
        }
    })
}

fn scenario_seed() -> impl Strategy<Value = usize> {
    0..seeds().scenarios.len()
}

fn opt_first_id() -> impl Strategy<Value = Option<u32>> {
    prop_oneof![
        Just(None),
        proptest::sample::select(vec![0u32, 1, 2, 3, u32::MAX, u32::MAX - 1]).prop_map(Some)
    ]
}

fn opt_duration() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        Just(None),
        proptest::sample::select(vec![0.0f64, -1.0, 100.0, 1e300, f64::NAN, f64::INFINITY, 1e-300]).prop_map(Some)
    ]
}

// ---------------------------------------------------------------------------------------------
// Properties.

proptest! {
    #![proptest_config(config())]

    /// Arbitrary text into parse, load and embed_files.
    #[test]
    fn bytes_into_scenario(t in text(2048)) {
        run_scenario(&t)?;
    }

    /// Arbitrary text and overrides into apply_overrides (and its output into load).
    #[test]
    fn bytes_into_overrides(
        t in text(1024),
        pairs in proptest::collection::vec(("[a-z0-9_.]{0,16}", json_value()), 0..3),
        drop_sweep in any::<bool>(),
    ) {
        run_overrides(&t, &pairs, drop_sweep)?;
    }

    /// Arbitrary text into the movement reader.
    #[test]
    fn bytes_into_movement(t in text(2048)) {
        run_movement(&t)?;
    }

    /// Arbitrary text into the traffic reader.
    #[test]
    fn bytes_into_traffic(t in text(2048)) {
        run_traffic(&t)?;
    }

    /// Arbitrary texts into the ns-2 converter.
    #[test]
    fn bytes_into_import(
        m in text(1024),
        tr in proptest::option::of(text(1024)),
        first_id in opt_first_id(),
        duration_s in opt_duration(),
    ) {
        run_import(&m, tr.as_deref(), first_id, duration_s)?;
    }

    /// Mutated real scenarios into parse, load and embed_files.
    #[test]
    fn mutated_scenarios_load(seed in scenario_seed(), ops in ops()) {
        let t = mutate(&seeds().scenarios[seed], &ops, true);
        run_scenario(&t)?;
    }

    /// Real scenarios with values changed to extremes of their type (and lines dropped,
    /// duplicated, swapped or inserted): mostly well-formed, so they reach resolve and validate.
    #[test]
    fn mutated_scenario_values(seed in scenario_seed(), ops in value_ops()) {
        let t = mutate(&seeds().scenarios[seed], &ops, true);
        run_scenario(&t)?;
    }

    /// Real scenarios (mutated or not) with overrides of their own keys (as a sweep sets them),
    /// then loaded.
    #[test]
    fn mutated_scenarios_overrides(
        (seed, pairs) in scenario_seed().prop_flat_map(|s| {
            (Just(s), proptest::collection::vec((override_path(s), json_value()), 1..4))
        }),
        ops in proptest::collection::vec(op(), 0..3),
        drop_sweep in any::<bool>(),
    ) {
        let t = mutate(&seeds().scenarios[seed], &ops, true);
        run_overrides(&t, &pairs, drop_sweep)?;
    }

    /// Mutated movement files.
    #[test]
    fn mutated_movement(seed in 0..MOVEMENT.len(), ops in ns2_ops(5)) {
        run_movement(&mutate(MOVEMENT[seed], &ops, false))?;
    }

    /// Mutated traffic files.
    #[test]
    fn mutated_traffic(seed in 0..TRAFFIC.len(), ops in ns2_ops(5)) {
        run_traffic(&mutate(TRAFFIC[seed], &ops, false))?;
    }

    /// Mutated movement and traffic files into the converter, its output into load.
    #[test]
    fn mutated_import(
        ms in 0..MOVEMENT.len(),
        mops in ns2_ops(3),
        ts in proptest::option::of(0..TRAFFIC.len()),
        tops in ns2_ops(3),
        first_id in opt_first_id(),
        duration_s in opt_duration(),
    ) {
        let m = mutate(MOVEMENT[ms], &mops, false);
        let t = ts.map(|k| mutate(TRAFFIC[k], &tops, false));
        run_import(&m, t.as_deref(), first_id, duration_s)?;
    }
}

// ---------------------------------------------------------------------------------------------
// Seeds are valid, so that mutations start from inputs that get past the parser.

#[test]
fn seeds_are_valid() {
    for (i, s) in seeds().scenarios.iter().enumerate() {
        if let Err(e) = tpsim_scenario::load(s, "<seed>") {
            panic!("seed scenario {i} does not load:\n{e}\n{s}");
        }
    }
    for m in MOVEMENT {
        ns2::parse_movement(m).unwrap_or_else(|e| panic!("{e}\n{m}"));
    }
    for t in TRAFFIC {
        ns2::parse_traffic(t).unwrap_or_else(|e| panic!("{e}\n{t}"));
    }
    for m in MOVEMENT {
        for t in [None, Some(TRAFFIC[0])] {
            if let Ok(out) = import::ns2_to_toml(m, t, ("m", Some("t")), None, None) {
                tpsim_scenario::load(&out, "<import>").unwrap_or_else(|e| panic!("{e}\n{out}"));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Regression cases: inputs the fuzzer found (see the module doc). Each must give an error (or
// Ok), quickly and without a panic.

/// Runs every scenario entry point on `text` under the fuzz checks, then returns `load`'s
/// result as text.
fn load_checked(text: &str) -> Result<(), String> {
    run_scenario(text).unwrap_or_else(|e| panic!("{e}"));
    tpsim_scenario::load(text, "<regression>")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn import_checked(
    movement: &str,
    traffic: Option<&str>,
    first_id: Option<u32>,
    duration_s: Option<f64>,
) -> Result<String, String> {
    run_import(movement, traffic, first_id, duration_s).unwrap_or_else(|e| panic!("{e}"));
    import::ns2_to_toml(
        movement,
        traffic,
        ("m.tcl", traffic.map(|_| "t.tcl")),
        first_id,
        duration_s,
    )
}

const HEAD: &str = "[simulation]\nduration = \"1s\"\n[nodes]\n";

#[test]
fn toml_syntax_errors_are_one_line() {
    // toml_edit's message is "invalid table header\nexpected `.`, `]`".
    let e = load_checked("[0").unwrap_err();
    assert_eq!(
        e,
        "<regression>:1:3: malformed TOML: invalid table header; expected `.`, `]`"
    );
    let e = tpsim_scenario::apply_overrides("0=:", "<o>", &[], false)
        .unwrap_err()
        .to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
    let e = import::embed_files("0=:", "<o>").unwrap_err().to_string();
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn quoted_newlines_stay_escaped() {
    let e = load_checked("[simulation]\nduration = \"5 m\\ns\"\n[nodes]\ncount = 1\n").unwrap_err();
    assert!(e.contains(r#"unknown unit "m\ns""#), "{e}");
    let e = load_checked(&format!("{HEAD}count = 1\n\"a\\nb\" = 2\n")).unwrap_err();
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn huge_node_count_without_radio_does_not_allocate_per_node() {
    // The wired route tables indexed every node: 16 GiB for 2^32 - 1 nodes.
    load_checked(&format!("{HEAD}count = 4294967295\n")).unwrap();
    let wired = format!(
        "{HEAD}count = 4294967295\n[[links]]\nnodes = [0, 4294967294]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n\
         [[flows]]\nsrc = 4294967294\ndst = 0\ntransport = \"udp\"\napp = {{ kind = \"cbr\", size = \"1B\", interval = \"1s\" }}\n"
    );
    load_checked(&wired).unwrap();
    let unreachable = wired.replace("src = 4294967294", "src = 7");
    let e = load_checked(&unreachable).unwrap_err();
    assert!(e.contains("node 0 is unreachable from node 7"), "{e}");
}

#[test]
fn huge_node_count_with_ns2_movement() {
    // Positions were allocated for every node before reading the file: 64 GiB.
    let e = load_checked(&format!(
        "{HEAD}count = 4294967295\n[nodes.mobility]\nmodel = \"ns2\"\ntext = \"$node_(0) set X_ 1\\n$node_(0) set Y_ 1\"\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("key `nodes.count`: node 1 (file id 1) has no initial position"),
        "{e}"
    );
    // first_id + node index overflowed.
    let e = load_checked(&format!(
        "{HEAD}count = 2\n[nodes.mobility]\nmodel = \"ns2\"\nfirst_id = 4294967295\ntext = \"$node_(4294967295) set X_ 1\\n$node_(4294967295) set Y_ 1\"\n"
    ))
    .unwrap_err();
    assert!(e.contains("node 1 (file id 4294967296) has no initial position"), "{e}");
}

#[test]
fn huge_node_count_with_sensors() {
    // Every node but the sink became a sensor flow: 2^32 - 2 of them.
    let e = load_checked(&format!(
        "{HEAD}count = 4294967295\n[radio]\n[sensors]\nsink = 0\ntransport = \"udp\"\nsize = \"1B\"\ninterval = \"1s\"\n"
    ))
    .unwrap_err();
    assert!(
        e.contains("key `sensors`: 4294967294 sensors") && e.contains("at most 1000000"),
        "{e}"
    );
    // The start offsets overflowed.
    let e = load_checked(&format!(
        "{HEAD}count = 3\n[sensors]\nsink = 0\ntransport = \"udp\"\nsize = \"1B\"\ninterval = \"1000s\"\nstart = \"18446744073s\"\n"
    ))
    .unwrap_err();
    assert!(e.contains("not before the end of the simulation"), "{e}");
}

#[test]
fn huge_node_count_with_background() {
    // Counting the usable nodes visited each of 2^32 - 1 nodes times each excluded one.
    load_checked(&format!(
        "{HEAD}count = 4294967295\n[radio]\n[background]\nflows = 1\nsize = \"1B\"\nrate = \"1bps\"\nexclude = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
    ))
    .unwrap_err();
    let e = load_checked(&format!(
        "{HEAD}count = 3\n[background]\nflows = 1\nsize = \"1B\"\nrate = \"1bps\"\nexclude = [1, 2, 2, 7]\n"
    ))
    .unwrap_err();
    assert!(e.contains("at least two nodes that are not excluded"), "{e}");
}

#[test]
fn grid_with_no_nodes() {
    // `n.min(columns) - 1` underflowed with nodes.count = 0.
    let e = load_checked(&format!(
        "{HEAD}count = 0\nplacement = {{ kind = \"grid\", spacing = \"1m\" }}\n[nodes.mobility]\nmodel = \"random-walk\"\n\
         speed = [\"1m/s\", \"2m/s\"]\narea = [\"10m\", \"10m\"]\ninterval = \"1s\"\n"
    ))
    .unwrap_err();
    assert!(e.contains("key `nodes.count`: expected at least 1 node"), "{e}");
}

const TCP_FLOW: &str = "set tcp_(1) [$ns_ create-connection TCP $node_(1) TCPSink $node_(2) 0]\n\
     $tcp_(1) set window_ 32\n$tcp_(1) set packetSize_ 512\n\
     set ftp_(1) [$tcp_(1) attach-source FTP]\n$ns_ at 5.5 \"$ftp_(1) start\"\n";

#[test]
fn tcp_window_overflow() {
    // window_ × packetSize_ overflowed (u64) in the receive window.
    let t = TCP_FLOW.replace("window_ 32", "window_ 18446744073709551616");
    let f = ns2::parse_traffic(&t).unwrap();
    let flow = import::flow_of(&f[0], 0, 1);
    assert_eq!(flow.tcp.unwrap().receive_window.unwrap().0, 65535);
    run_traffic(&t).unwrap();
    // A window or segment size the scenario cannot hold is the traffic file's error.
    let e = ns2::parse_traffic(&TCP_FLOW.replace("window_ 32", "window_ 1e-320")).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("window_ must be at least 1"), "{e}");
    let e = ns2::parse_traffic(&TCP_FLOW.replace("packetSize_ 512", "packetSize_ 65496")).unwrap_err();
    assert_eq!(e.line, 3);
}

#[test]
fn import_first_id_above_an_id() {
    // `node - first` underflowed when --first-id is above an id of the file.
    let m = "$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$node_(1) set X_ 1\n$node_(1) set Y_ 1\n\
             $ns_ at 1 \"$node_(0) setdest 2 2 1\"\n";
    let e = import_checked(m, None, Some(1), None).unwrap_err();
    assert_eq!(
        e,
        "m.tcl: node id 0 is below the first id 1 (the id that becomes node 0)"
    );
    import_checked(m, None, Some(0), None).unwrap();
    // The last id + 1 overflowed; with ids 0 and 2^32 - 1 every id between would be needed.
    let m = "$node_(4294967295) set X_ 1\n$node_(4294967295) set Y_ 1\n$node_(0) set X_ 1\n$node_(0) set Y_ 1\n";
    let e = import_checked(m, None, None, None).unwrap_err();
    assert!(e.contains("node 1 has no initial position"), "{e}");
    let m = "$node_(4294967295) set X_ 1\n$node_(4294967295) set Y_ 1\n";
    let out = import_checked(m, None, None, None).unwrap();
    assert!(out.contains("count = 1\n"), "{out}");
}

#[test]
fn import_durations_and_times() {
    let m = MOVEMENT[2];
    for d in [f64::NAN, f64::INFINITY, 0.0, -1.0, 1e300] {
        let e = import_checked(m, None, None, Some(d)).unwrap_err();
        assert!(e.starts_with("expected a duration greater than 0 s"), "{e}");
    }
    // Times beyond 2^64 ns are the file's error, not a scenario that does not load.
    let e = ns2::parse_movement(&format!("{m}$ns_ at 1e20 \"$node_(0) setdest 1 1 1\"\n")).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("expected a time between 0 and"), "{e}");
    // A stop after the last event sets the default duration too.
    let t = TRAFFIC[0].replace("at 80", "at 4000000000");
    let out = import_checked(MOVEMENT[0], Some(&t), None, None).unwrap();
    assert!(out.contains("duration = \"4000000100s\""), "{out}");
    tpsim_scenario::load(&out, "<import>").unwrap();
    let e = ns2::parse_traffic(&TRAFFIC[0].replace("at 80", "at 12.5")).unwrap_err();
    assert!(e.message.contains("not after it starts"), "{e}");
    // maxpkts_ is written as a TOML integer (at most 2^63 - 1).
    let t = TRAFFIC[0].replace("maxpkts_ 10000", "maxpkts_ 1e300");
    let out = import_checked(MOVEMENT[0], Some(&t), None, None).unwrap();
    assert!(out.contains("count = 9223372036854775807"), "{out}");
    tpsim_scenario::load(&out, "<import>").unwrap();
    let e = ns2::parse_traffic(&TRAFFIC[0].replace("maxpkts_ 10000", "maxpkts_ 0")).unwrap_err();
    assert_eq!(e.line, 12);
}

#[test]
fn import_flows_the_scenario_refuses() {
    // ns2_to_toml wrote flows that `load` refuses, reported by `tpsim import-ns2` as a bug.
    let self_flow = TCP_FLOW.replace("TCPSink $node_(2)", "TCPSink $node_(1)");
    let e = import_checked(MOVEMENT[0], Some(&self_flow), None, None).unwrap_err();
    assert_eq!(
        e,
        "t.tcl, line 4: flow 1 -> 1: the source and the destination are the same node"
    );
    let e = ns2::parse_traffic(&TRAFFIC[0].replace("interval_ 0.25", "interval_ 1e-300")).unwrap_err();
    assert!(e.message.contains("shorter than 1 ns"), "{e}");
}

#[test]
fn many_errors_in_a_long_file() {
    // Placing each diagnostic scanned the text before it: 40,000 bad flows (4 MB) took 43 s.
    let mut t = String::from("[simulation]\nduration = \"1s\"\n[nodes]\ncount = 2\n");
    for _ in 0..20_000 {
        t.push_str("[[flows]]\nsrc = 1\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"1B\", interval = \"1s\" }\n");
    }
    let t0 = Instant::now();
    let e = tpsim_scenario::load(&t, "<long>").unwrap_err();
    let took = t0.elapsed();
    assert_eq!(e.diagnostics.len(), 20_000);
    let last = e.diagnostics.last().unwrap();
    assert_eq!((last.line, last.column), (5 * 20_000 + 2, 1), "{last:?}"); // flows[19999].dst
    if !cfg!(debug_assertions) {
        assert!(took < Duration::from_secs(3), "{took:?}");
    }
    // A long number in a value: trying every prefix took time quadratic in its length.
    let long = format!(
        "[simulation]\nduration = \"{}{}s\"\n[nodes]\ncount = 1\n",
        "1".repeat(100_000),
        "e+".repeat(100_000)
    );
    let t0 = Instant::now();
    let e = load_checked(&long).unwrap_err();
    assert!(e.contains("unknown unit \"e+e+"), "{}", &e[..200]);
    if !cfg!(debug_assertions) {
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
    }
}

proptest! {
    #![proptest_config(config())]

    /// The locator's line table gives the same places as `line_col`.
    #[test]
    fn locator_line_col_matches(t in text(256), offset in 0usize..300) {
        let loc = tpsim_scenario::Locator::new(&t);
        prop_assert_eq!(loc.line_col(offset), tpsim_scenario::error::line_col(&t, offset));
    }
}

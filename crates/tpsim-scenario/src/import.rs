//! Resolution of the files a scenario refers to: ns-2 movement files (`nodes.mobility` with
//! `model = "ns2"`) and ns-2 traffic files (`[ns2_traffic]`).
//!
//! [`resolve`] reads each file (or its inlined `text`), maps the file's node ids so that its
//! first id is node 0, and rewrites the scenario into tpsim's own terms: an explicit placement
//! plus scripted `waypoints` for movement, and `[[flows]]` for traffic. The resolved scenario,
//! and so the hash that keys stored runs, therefore covers the files' content.
//!
//! [`embed_files`] replaces each `file = "..."` by `text = "<content>"` in the scenario's TOML,
//! so that a planned sweep can run on machines that do not have the files.

use crate::error::{Diagnostic, Locator, ScenarioError, Seg};
use crate::ns2::{self, Ns2Agent, Ns2App, MAX_SECONDS};
use crate::{
    App, AppKind, Arrivals, Bytes, Duration, Flow, Meters, MobilityModel, Placement, PlacementKind, Scenario, Speed,
    TcpOptions, Transport, Waypoint,
};
use std::path::{Path, PathBuf};

fn k(s: &str) -> Seg {
    Seg::Key(s.to_string())
}

/// Where a file named in a scenario read from `source` lives: relative paths are taken from
/// the scenario file's directory (from the working directory for a scenario given as a
/// string).
pub fn file_path(source: &str, file: &str) -> PathBuf {
    let f = Path::new(file);
    if f.is_absolute() || source.starts_with('<') {
        return f.to_path_buf();
    }
    match Path::new(source).parent() {
        Some(dir) => dir.join(f),
        None => f.to_path_buf(),
    }
}

/// The content of a `file`/`text` pair with its name for messages and the key it came from,
/// or a message for the key at fault.
fn content(
    file: &Option<String>,
    text: &Option<String>,
    source: &str,
    what: &str,
) -> Result<(String, String, &'static str), (&'static str, String)> {
    match (file, text) {
        (Some(_), Some(_)) => Err(("text", format!("give the {what} as `file` or as `text`, not both"))),
        (None, None) => Err(("file", format!("expected `file`, the path of the {what}"))),
        (None, Some(t)) => Ok((t.clone(), format!("{what} (inline text)"), "text")),
        (Some(f), None) => {
            let p = file_path(source, f);
            read_file(&p)
                .map(|t| (t, format!("{what} {}", p.display()), "file"))
                .map_err(|e| ("file", format!("cannot read the {what} {}: {e}", p.display())))
        }
    }
}

/// The largest file a scenario may refer to, bytes (an ns-2 file of 10⁶ lines is 60 MB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The text of a file a scenario refers to: a regular file of at most [`MAX_FILE_BYTES`] in
/// UTF-8 (a device such as /dev/zero, a directory or a huge file is refused before reading).
///
/// # Errors
/// A message saying why, without the file's content.
pub fn read_file(p: &std::path::Path) -> Result<String, String> {
    let meta = std::fs::metadata(p).map_err(|e| e.to_string())?;
    if meta.is_dir() {
        return Err("it is a directory".into());
    }
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "{} bytes, larger than the {} MiB allowed",
            meta.len(),
            MAX_FILE_BYTES >> 20
        ));
    }
    let bytes = std::fs::read(p).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&c| c == b'\n').count() + 1;
        format!("not a UTF-8 text file (line {line})")
    })
}

/// The most sensors a `[sensors]` table without `nodes` may imply (one report flow each).
pub const MAX_SENSORS: u64 = 1_000_000;

fn secs(s: f64) -> Duration {
    Duration((s * 1e9).round() as u64)
}

/// Reads the ns-2 files `sc` refers to and rewrites it in tpsim's terms (see the module doc).
/// Returns the problems found, each naming the key (and the file's line for a bad line).
pub fn resolve(sc: &mut Scenario, source: &str, loc: &Locator) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut err = |path: Vec<Seg>, msg: String| diags.push(loc.diag(&path, msg));
    let movement_first_id = resolve_movement(sc, source, &mut err);
    resolve_sensors(sc, &mut err);
    resolve_traffic(sc, source, movement_first_id, &mut err);
    diags
}

/// Replaces an ns-2 movement file (`nodes.mobility` with `model = "ns2"`) by an explicit
/// placement and scripted waypoints. Returns the file's first node id if it was read.
fn resolve_movement(sc: &mut Scenario, source: &str, err: &mut impl FnMut(Vec<Seg>, String)) -> Option<u32> {
    let n = sc.nodes.count;
    let nodes = &mut sc.nodes;
    let m = nodes.mobility.as_mut().filter(|m| m.model == MobilityModel::Ns2)?;
    let key = |f: &str| vec![k("nodes"), k("mobility"), k(f)];
    for (name, set) in [
        ("speed", m.speed.is_some()),
        ("pause", m.pause.is_some()),
        ("waypoints", m.waypoints.is_some()),
        ("velocity", m.velocity.is_some()),
        ("area", m.area.is_some()),
    ] {
        if set {
            err(key(name), format!("`{name}` does not apply to mobility model \"ns2\""));
        }
    }
    match content(&m.file, &m.text, source, "ns-2 movement file") {
        Err((at, msg)) => {
            err(key(at), msg);
            None
        }
        Ok((text, name, from)) => match ns2::parse_movement(&text) {
            Err(e) => {
                err(key(from), format!("{name}, line {}: {}", e.line, e.message));
                None
            }
            Ok(mv) => Some(apply_movement(m, &mut nodes.placement, &mv, &name, n, err)),
        },
    }
}

/// Checks movement `mv` (read from the file called `name`) against `n` nodes and, if it
/// fits, makes it `m`'s waypoints and `placement`'s positions. Returns the file's id of
/// node 0.
fn apply_movement(
    m: &mut crate::Mobility,
    placement: &mut Option<Placement>,
    mv: &ns2::Movement,
    name: &str,
    n: u32,
    err: &mut impl FnMut(Vec<Seg>, String),
) -> u32 {
    let first = m.first_id.or(mv.first_id()).unwrap_or(0);
    let map = |id: u32| id.checked_sub(first).filter(|&i| i < n);
    // At most one position per line of the file, whatever `nodes.count` says.
    let mut positions = Vec::with_capacity(mv.initial.len().min(n as usize));
    let mut ok = true;
    for i in 0..n {
        match i.checked_add(first).and_then(|id| mv.initial.get(&id)) {
            Some(&(x, y)) => positions.push([Meters(x), Meters(y)]),
            None => {
                ok = false;
                err(
                    vec![k("nodes"), k("count")],
                    format!(
                        "node {i} (file id {}) has no initial position in the {name}",
                        u64::from(i) + u64::from(first)
                    ),
                );
                break;
            }
        }
    }
    if let Some(id) = mv
        .initial
        .keys()
        .copied()
        .chain(mv.moves.iter().map(|d| d.node))
        .find(|&id| map(id).is_none())
    {
        ok = false;
        err(
            vec![k("nodes"), k("count")],
            format!(
                "the {name} has node id {id}, outside nodes 0..{} with its first id {first} as node 0",
                n.saturating_sub(1)
            ),
        );
    }
    if placement.is_some() {
        ok = false;
        err(
            vec![k("nodes"), k("placement")],
            "the ns-2 movement file sets the initial positions: remove `nodes.placement`".into(),
        );
    }
    if ok {
        let waypoints = mv
            .moves
            .iter()
            .map(|d| Waypoint {
                node: d.node - first,
                at: secs(d.at_s),
                to: [Meters(d.x), Meters(d.y)],
                speed: Speed(d.speed),
            })
            .collect();
        *placement = Some(Placement {
            kind: PlacementKind::Explicit,
            positions: Some(positions),
            columns: None,
            spacing: None,
            area: None,
        });
        m.model = MobilityModel::Waypoints;
        m.waypoints = Some(waypoints);
        m.file = None;
        m.text = None;
        m.first_id = None;
    }
    first
}

/// Adds the report flows of a `[sensors]` table.
fn resolve_sensors(sc: &mut Scenario, err: &mut impl FnMut(Vec<Seg>, String)) {
    let n = sc.nodes.count;
    let Some(sn) = &sc.sensors else {
        return;
    };
    let key = |f: &str| vec![k("sensors"), k(f)];
    let mut ok = true;
    // Every node but the sink by default: one flow each, so bounded (`nodes.count` may be
    // up to 2^32 - 1).
    let implied = u64::from(n) - u64::from(sn.sink < n);
    if sn.nodes.is_none() && implied > MAX_SENSORS {
        ok = false;
        err(
            vec![k("sensors")],
            format!(
                "{implied} sensors (every node but the sink, nodes.count = {n}): expected at most {MAX_SENSORS} report flows; list the sensors in `nodes`"
            ),
        );
    }
    let nodes: Vec<u32> = match &sn.nodes {
        Some(v) => v.clone(),
        None if ok => (0..n).filter(|&i| i != sn.sink).collect(),
        None => Vec::new(),
    };
    if sn.sink >= n {
        ok = false;
        err(
            key("sink"),
            format!(
                "node index {} out of range: expected 0..{}",
                sn.sink,
                n.saturating_sub(1)
            ),
        );
    }
    if let Some(&bad) = nodes.iter().find(|&&v| v >= n || v == sn.sink) {
        ok = false;
        err(key("nodes"), format!("sensor {bad} is not a node other than the sink"));
    }
    if sn.interval.0 == 0 {
        ok = false;
        err(key("interval"), "expected an interval greater than 0".into());
    }
    if ok {
        let count = nodes.len().max(1) as u64;
        for (i, &src) in nodes.iter().enumerate() {
            let offset = sn.interval.0 / count * i as u64;
            let app = App {
                kind: AppKind::Cbr,
                size: Some(sn.size),
                interval: Some(sn.interval),
                rate: None,
                arrivals: Arrivals::Periodic,
                jitter: None,
                count: None,
                bytes: None,
                start: Duration(sn.start.0.saturating_add(offset)),
                start_jitter: None,
                stop: sn.stop,
                streams: None,
                on: None,
                off: None,
                distribution: None,
                shape: None,
            };
            let mut flow = Flow::new(src, sn.sink, sn.transport, app);
            flow.tcp = sn.tcp.clone().filter(|_| sn.transport.is_tcp());
            flow.sctp = sn.sctp.clone().filter(|_| sn.transport == Transport::Sctp);
            sc.flows.push(flow);
        }
    }
}

/// Adds the flows of an ns-2 traffic file (`[ns2_traffic]`), its node ids mapped with its
/// `first_id`, else the movement file's (`movement_first_id`), else 0.
fn resolve_traffic(
    sc: &mut Scenario,
    source: &str,
    movement_first_id: Option<u32>,
    err: &mut impl FnMut(Vec<Seg>, String),
) {
    let n = sc.nodes.count;
    let Some(t) = sc.ns2_traffic.take() else {
        return;
    };
    let key = |f: &str| vec![k("ns2_traffic"), k(f)];
    match content(&t.file, &t.text, source, "ns-2 traffic file") {
        Err((at, msg)) => err(key(at), msg),
        Ok((text, name, from)) => match ns2::parse_traffic(&text) {
            Err(e) => err(key(from), format!("{name}, line {}: {}", e.line, e.message)),
            Ok(flows) => {
                let first = t.first_id.or(movement_first_id).unwrap_or(0);
                for f in flows {
                    let (Some(src), Some(dst)) = (
                        f.src.checked_sub(first).filter(|&i| i < n),
                        f.dst.checked_sub(first).filter(|&i| i < n),
                    ) else {
                        err(
                            key(from),
                            format!(
                                "{name}, line {}: flow {} -> {} is outside nodes 0..{} with file id {first} as node 0",
                                f.line,
                                f.src,
                                f.dst,
                                n.saturating_sub(1)
                            ),
                        );
                        continue;
                    };
                    if src == dst {
                        err(
                            key(from),
                            format!(
                                "{name}, line {}: flow {} -> {}: the source and the destination are the same node",
                                f.line, f.src, f.dst
                            ),
                        );
                        continue;
                    }
                    sc.flows.push(flow_of(&f, src, dst));
                }
            }
        },
    }
}

/// tpsim's flow for an ns-2 flow (see [`crate::Ns2Traffic`] for the mapping).
pub fn flow_of(f: &ns2::Ns2Flow, src: u32, dst: u32) -> Flow {
    let transport = match f.agent {
        Ns2Agent::Udp => Transport::Udp,
        Ns2Agent::TcpTahoe => Transport::TcpTahoe,
        Ns2Agent::TcpReno => Transport::TcpReno,
        Ns2Agent::TcpNewReno => Transport::TcpNewreno,
    };
    let base = App {
        kind: AppKind::Bulk,
        size: None,
        interval: None,
        rate: None,
        arrivals: Arrivals::Periodic,
        jitter: None,
        count: None,
        bytes: None,
        start: secs(f.start_s),
        start_jitter: None,
        stop: f.stop_s.map(secs),
        streams: None,
        on: None,
        off: None,
        distribution: None,
        shape: None,
    };
    match f.app {
        Ns2App::Cbr {
            size,
            interval_s,
            random,
            max_packets,
        } => Flow::new(
            src,
            dst,
            transport,
            App {
                kind: AppKind::Cbr,
                size: Some(Bytes(size)),
                interval: Some(secs(interval_s)),
                jitter: random.then_some(0.5),
                count: Some(max_packets),
                ..base
            },
        ),
        Ns2App::Ftp => {
            let app = App {
                size: Some(Bytes(f.tcp_packet_size)),
                ..base
            };
            let mut flow = Flow::new(src, dst, transport, app);
            flow.tcp = Some(TcpOptions {
                mss: Some(Bytes(f.tcp_packet_size)),
                receive_window: Some(Bytes(f.tcp_window.saturating_mul(f.tcp_packet_size).min(65535))),
                ..TcpOptions::default()
            });
            flow
        }
    }
}

/// `s` as a one-line TOML basic string (TOML 1.0 §String escapes).
fn basic_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `text` with every ns-2 `file = "..."` reference replaced by `text = "<content>"`.
///
/// # Errors
/// A [`ScenarioError`] naming the key when the TOML is malformed or a file cannot be read.
pub fn embed_files(text: &str, source: &str) -> Result<String, ScenarioError> {
    let mut doc: toml_edit::DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| ScenarioError {
        source: source.to_string(),
        diagnostics: vec![Diagnostic {
            path: String::new(),
            line: 0,
            column: 0,
            message: format!("malformed TOML: {}", crate::error::one_line(e.message())),
        }],
    })?;
    let loc = Locator::new(text);
    let embed = |item: Option<&mut toml_edit::Item>, path: Vec<Seg>| -> Result<(), ScenarioError> {
        let Some(tbl) = item.and_then(|i| i.as_table_like_mut()) else {
            return Ok(());
        };
        let Some(file) = tbl.get("file").and_then(|f| f.as_str()).map(str::to_string) else {
            return Ok(());
        };
        let p = file_path(source, &file);
        let content = read_file(&p).map_err(|e| ScenarioError {
            source: source.to_string(),
            diagnostics: vec![loc.diag(&path, format!("cannot read {}: {e}", p.display()))],
        })?;
        // One line, so that the lines of the rest of the file keep their numbers.
        let quoted: toml_edit::Value = basic_string(&content).parse().expect("a valid TOML basic string");
        tbl.remove("file");
        tbl.insert("text", toml_edit::Item::Value(quoted));
        Ok(())
    };
    let mobility = doc
        .get_mut("nodes")
        .and_then(|n| n.as_table_like_mut())
        .and_then(|n| n.get_mut("mobility"));
    embed(mobility, vec![k("nodes"), k("mobility"), k("file")])?;
    embed(doc.get_mut("ns2_traffic"), vec![k("ns2_traffic"), k("file")])?;
    Ok(doc.to_string())
}

/// A self-contained scenario (TOML) converted from an ns-2 movement file and optionally a
/// traffic file: explicit placement, scripted `waypoints` (ns-2 `setdest` semantics), the
/// traffic's `[[flows]]`, `sizes = "ns2"`, an ns-2-like `[radio]` (RTS/CTS for every unicast, as
/// ns-2.35's `RTSThreshold_ 0`) and AODV with the `ns2` preset. Numbers are written in
/// their shortest exact form, so positions and times survive the conversion exactly.
///
/// `names` are the files' names for the header comment; `first_id` maps the file's ids (default:
/// the movement file's smallest id); `duration_s` defaults to the last event rounded up to
/// 100 s.
///
/// # Errors
/// The file and line of the first malformed line, or a node id outside the nodes found.
pub fn ns2_to_toml(
    movement: &str,
    traffic: Option<&str>,
    names: (&str, Option<&str>),
    first_id: Option<u32>,
    duration_s: Option<f64>,
) -> Result<String, String> {
    let mv = ns2::parse_movement(movement).map_err(|e| format!("{}, line {}: {}", names.0, e.line, e.message))?;
    let flows = match traffic {
        Some(t) => ns2::parse_traffic(t)
            .map_err(|e| format!("{}, line {}: {}", names.1.unwrap_or("traffic file"), e.line, e.message))?,
        None => Vec::new(),
    };
    if let Some(d) = duration_s.filter(|&d| !(d > 0.0 && d <= MAX_SECONDS)) {
        return Err(format!(
            "expected a duration greater than 0 s and at most {MAX_SECONDS} s, found {d} s"
        ));
    }
    let first = first_id.or(mv.first_id()).unwrap_or(0);
    if let Some(low) = mv.first_id().filter(|&low| low < first) {
        return Err(format!(
            "{}: node id {low} is below the first id {first} (the id that becomes node 0)",
            names.0
        ));
    }
    let last = mv.last_id().unwrap_or(first);
    // Every id from `first` to `last` needs its own lines, so `positions` grows with the
    // file, not with the ids (which may be up to 2^32 - 1).
    let n = u64::from(last - first) + 1;
    let mut positions = Vec::new();
    for id in first..=last {
        let Some(&(x, y)) = mv.initial.get(&id) else {
            return Err(format!(
                "{}: node {id} has no initial position ($node_({id}) set X_/Y_)",
                names.0
            ));
        };
        positions.push(format!("[\"{x}m\", \"{y}m\"]"));
    }
    let last_event = mv
        .moves
        .iter()
        .map(|m| m.at_s)
        .chain(flows.iter().flat_map(|f| [Some(f.start_s), f.stop_s]).flatten())
        .fold(0.0f64, f64::max);
    let duration = duration_s.unwrap_or((((last_event / 100.0).floor() + 1.0) * 100.0).min(MAX_SECONDS));
    let mut o = String::new();
    write_nodes(&mut o, names, (first, last, n), duration, &positions, &mv);
    write_radio_and_routing(&mut o);
    for f in &flows {
        write_flow(&mut o, f, first, n, names)?;
    }
    Ok(o)
}

/// The header comment, `[simulation]`, `[nodes]` (ns-2 ids `first..=last` as nodes 0..`n`)
/// and `[nodes.mobility]` of a converted scenario.
fn write_nodes(
    o: &mut String,
    names: (&str, Option<&str>),
    (first, last, n): (u32, u32, u64),
    duration: f64,
    positions: &[String],
    mv: &ns2::Movement,
) {
    use std::fmt::Write;
    let _ = writeln!(
        o,
        "# Converted by `tpsim import-ns2` from {}{}.",
        names.0,
        names.1.map(|t| format!(" and {t}")).unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "# ns-2 node ids {first}..{last} are tpsim nodes 0..{}; moves follow ns-2 `setdest`",
        n - 1
    );
    let _ = writeln!(o, "# semantics (head for the target at the speed, stop there).");
    let _ = writeln!(
        o,
        "\n[simulation]\nname = \"ns2-import\"\nduration = \"{duration}s\"\nsizes = \"ns2\"\nseed = 1\nruns = 1"
    );
    let _ = writeln!(
        o,
        "\n[nodes]\ncount = {n}\nplacement = {{ kind = \"explicit\", positions = ["
    );
    for p in positions {
        let _ = writeln!(o, "  {p},");
    }
    let _ = writeln!(o, "] }}");
    if !mv.moves.is_empty() {
        let _ = writeln!(o, "\n[nodes.mobility]\nmodel = \"waypoints\"\nwaypoints = [");
        for m in &mv.moves {
            let _ = writeln!(
                o,
                "  {{ node = {}, at = \"{}s\", to = [\"{}m\", \"{}m\"], speed = \"{}m/s\" }},",
                m.node - first,
                m.at_s,
                m.x,
                m.y,
                m.speed
            );
        }
        let _ = writeln!(o, "]");
    }
}

/// The `[radio]` and `[routing]` of a converted scenario: ns-2.35's wireless defaults.
fn write_radio_and_routing(o: &mut String) {
    use std::fmt::Write;
    let _ = writeln!(
        o,
        "\n# ns-2.35 defaults: 802.11b at 1 Mbit/s, Two-Ray Ground, 250 m / 550 m (the radio's defaults),\n\
         # RTS/CTS before every unicast frame (ns-2's Mac/802_11 RTSThreshold_ 0), and a backoff\n\
         # even for a frame that finds the medium idle (ns-2's bugFix_timer_).\n\
         [radio]\nstandard = \"802.11b\"\nrts_threshold = \"0B\"\nidle_backoff = true"
    );
    let _ = writeln!(
        o,
        "\n# Ad hoc routing as ns-2's wireless scripts use it: AODV with ns-2.35's constants (the \"ns2\"\n\
         # preset: breaks detected from MAC feedback, no HELLO). Moving nodes need a routing protocol:\n\
         # static routes are computed once, at t = 0. Change `protocol` for OLSR or the oracle.\n\
         [routing]\nprotocol = \"aodv\"\npreset = \"ns2\""
    );
}

/// Exact decimal seconds of the integer nanoseconds ("176.708986534s", "4s"), quoted.
fn toml_secs(d: Duration) -> String {
    let frac = format!("{:09}", d.0 % 1_000_000_000);
    let frac = frac.trim_end_matches('0');
    let dot = if frac.is_empty() { "" } else { "." };
    format!("\"{}{dot}{frac}s\"", d.0 / 1_000_000_000)
}

/// One `[[flows]]` table of a converted scenario: ns-2 flow `f`, its ids mapped so that
/// `first` is node 0 of `n`.
///
/// # Errors
/// The traffic file's line for a flow outside the nodes or from a node to itself.
fn write_flow(o: &mut String, f: &ns2::Ns2Flow, first: u32, n: u64, names: (&str, Option<&str>)) -> Result<(), String> {
    use std::fmt::Write;
    let (Some(src), Some(dst)) = (f.src.checked_sub(first), f.dst.checked_sub(first)) else {
        return Err(format!(
            "{}, line {}: node id below the first id {first}",
            names.1.unwrap_or("traffic file"),
            f.line
        ));
    };
    if src == dst {
        return Err(format!(
            "{}, line {}: flow {} -> {}: the source and the destination are the same node",
            names.1.unwrap_or("traffic file"),
            f.line,
            f.src,
            f.dst
        ));
    }
    if u64::from(src) >= n || u64::from(dst) >= n {
        return Err(format!(
            "{}, line {}: flow {} -> {} names a node the movement file does not have",
            names.1.unwrap_or("traffic file"),
            f.line,
            f.src,
            f.dst
        ));
    }
    // The same mapping as a referenced traffic file ([`flow_of`]), written as TOML.
    let flow = flow_of(f, src, dst);
    let a = &flow.app;
    let mut app = format!("kind = \"{}\"", if a.kind == AppKind::Cbr { "cbr" } else { "bulk" });
    if let Some(size) = a.size {
        let _ = write!(app, ", size = \"{size}\"");
    }
    if let Some(i) = a.interval {
        let _ = write!(app, ", interval = {}", toml_secs(i));
    }
    if let Some(j) = a.jitter {
        let _ = write!(app, ", jitter = {j}");
    }
    if let Some(c) = a.count {
        let _ = write!(app, ", count = {c}");
    }
    let _ = write!(app, ", start = {}", toml_secs(a.start));
    if let Some(stop) = a.stop {
        let _ = write!(app, ", stop = {}", toml_secs(stop));
    }
    let _ = writeln!(
        o,
        "\n[[flows]]  # {} line {}\nsrc = {src}\ndst = {dst}\ntransport = \"{}\"\napp = {{ {app} }}",
        names.1.unwrap_or(""),
        f.line,
        flow.transport.name()
    );
    if let Some(t) = &flow.tcp {
        let opt = |b: Option<Bytes>| b.map(|b| b.to_string()).unwrap_or_default();
        let _ = writeln!(
            o,
            "tcp = {{ mss = \"{}\", receive_window = \"{}\" }}",
            opt(t.mss),
            opt(t.receive_window)
        );
    }
    Ok(())
}

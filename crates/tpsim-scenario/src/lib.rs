//! tpsim-scenario: the scenario format.
//!
//! Scenarios are TOML with explicit units, read strictly: an unknown key, a missing unit or a
//! value of the wrong kind is an error that names the key, its line and what was expected.
//! Reading happens in two passes, as in Shadow's configuration: [`parse`] checks *form* (serde
//! with `deny_unknown_fields`), then [`validate`](validate::validate) checks *meaning* (node
//! indices in range, reachable destinations, messages that fit the MTU ...) and reports every
//! problem at once. [`json_schema`] exports the format for editors; the Rust types here are
//! its single source of truth.
//!
//! Every field documents its unit and default. Defaults follow ns-2 where the reference
//! studies used it (queue limit 50 packets) and the standards otherwise (MTU 1500 bytes).

mod aqm;
pub mod count;
pub mod error;
pub mod events;
mod flows;
mod form;
pub mod import;
mod links;
mod nodes;
pub mod ns2;
mod pair;
mod radio;
mod simulation;
pub mod topology;
mod transports;
pub mod units;
pub mod validate;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub use aqm::*;
pub use error::{Diagnostic, Locator, ScenarioError, Seg};
pub use events::{FaultEvent, FaultKind};
pub use flows::*;
pub use links::*;
pub use nodes::*;
pub use radio::*;
pub use simulation::*;
pub use transports::*;
pub use units::{Angle, Bytes, Duration, Hertz, Joules, Meters, Rate, Speed, Watts};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Run control: duration, seed, replications, packet-size convention.
    pub simulation: Simulation,
    /// What to record besides the result tables.
    #[serde(default)]
    pub output: Output,
    /// The nodes.
    pub nodes: Nodes,
    /// Full-duplex point-to-point links.
    #[serde(default)]
    pub links: Vec<Link>,
    /// One IEEE 802.11 ad hoc radio on every node (omit for a wired-only scenario).
    #[serde(default)]
    pub radio: Option<Radio>,
    /// Radio energy model of every node (needs a radio).
    #[serde(default)]
    pub energy: Option<Energy>,
    /// Address resolution (ARP, RFC 826) on every radio (needs a radio). Absent: none, a
    /// next hop's MAC address is known at once.
    #[serde(default)]
    pub arp: Option<Arp>,
    /// How radio nodes find routes. Default: static shortest paths at t = 0.
    #[serde(default)]
    pub routing: Option<Routing>,
    /// Sensor reporting: every sensor sends to the sink periodically (one flow per sensor,
    /// added after `flows`).
    #[serde(default)]
    pub sensors: Option<Sensors>,
    /// Background CBR flows between random pairs of nodes, drawn per replication.
    #[serde(default)]
    pub background: Option<Background>,
    /// Periodic one-hop broadcasts (beacons) from radio nodes.
    #[serde(default)]
    pub beacons: Option<Beacons>,
    /// Flows read from an ns-2 traffic file (cbrgen), added after `flows`.
    #[serde(default)]
    pub ns2_traffic: Option<Ns2Traffic>,
    /// Traffic: each flow is one transport association between two nodes.
    #[serde(default)]
    pub flows: Vec<Flow>,
    /// Timed fault events: links, interfaces or nodes going down and up, link changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<FaultEvent>,
    /// Parameter sweep: each key is the dotted path of a scenario key (array elements by
    /// index, e.g. `"flows.0.app.interval"`), each value the list of values it takes; a
    /// linked key `"a + b"` gives each value to both keys (one dimension). The
    /// sweep runs every combination (a grid), `simulation.runs` replications each. Expanded
    /// by the Python front end ([`apply_overrides`] per point); the engine never sees it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<std::collections::BTreeMap<String, Vec<serde_json::Value>>>")]
    pub sweep: Option<toml::Table>,
    /// What the report draws (read by the Python front end; the engine never sees it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
}

/// The `[report]` table: which sweep points and flows the report's figures show.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Report {
    /// The sweep points whose time series are compared, one figure per series: each key a
    /// swept key (as written in `[sweep]`), each value the one it must have, e.g.
    /// `{ "simulation.stack" = "ns2" }`; every point that matches, run 0, one line per point
    /// and flow direction. Default: the points that differ from the first only in the keys
    /// the headline figures draw as lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<std::collections::BTreeMap<String, serde_json::Value>>")]
    pub timeseries_at: Option<toml::Table>,
    /// The flows whose time series are drawn, by their index in the flows table (each copy of
    /// a flow with `copies` has its own). Default: every flow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeseries_flows: Option<Vec<u32>>,
    /// Metrics drawn against the swept keys besides the headline ones: columns of the flows
    /// or network table (docs/metrics.md), e.g. `["rtt_mean_s", "ack_overhead"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<Vec<String>>,
    /// Flow metrics shown in a table at the time series' compared points, one row per point,
    /// every flow direction together (counts summed; packet sizes: smallest, largest, mean
    /// per packet), e.g. study D's Table 2. Default: no such table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<Vec<String>>,
    /// What the headline figures put on the x axis, in bars or lines (`hue`) and in panels
    /// (`facet`): each a swept key as written in `[sweep]`, or `"case"`, e.g.
    /// `{ x = "flows.0.transport", hue = "flows.0.copies", facet = "case" }`. Default: the
    /// first numeric swept key on x, the others as lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layout: Option<ReportLayout>,
}

/// `[report] layout`: the headline figures' axes (each key optional).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReportLayout {
    /// The key on the x axis.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<String>,
    /// The key telling bars or lines apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hue: Option<String>,
    /// The key whose values get a panel each.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facet: Option<String>,
}

impl Scenario {
    /// `ns2` if the scenario's stack is ns-2's, else `modern`: the model of a flow that does
    /// not choose its own (the `inet` stack differs from `modern` only in TCP).
    pub(crate) fn by_stack<T>(&self, modern: T, ns2: T) -> T {
        match self.simulation.stack.unwrap_or_default() {
            Stack::Modern | Stack::Inet => modern,
            Stack::Ns2 => ns2,
        }
    }
}

/// Reads a scenario's form: TOML syntax, known keys, value types and units. Does not check
/// meaning; see [`load`].
///
/// # Errors
/// A [`ScenarioError`] whose diagnostic names the key and line.
pub fn parse(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
    let e = match toml::from_str::<Scenario>(text) {
        Ok(sc) => return Ok(sc),
        Err(e) => e,
    };
    // Which error: the TOML syntax (reported as such) or a key's value.
    if let Err(e) = toml_edit::ImDocument::parse(text) {
        let (line, column) = e.span().map(|r| error::line_col(text, r.start)).unwrap_or((0, 0));
        let msg = error::one_line(e.message());
        return Err(ScenarioError {
            source: source.to_string(),
            diagnostics: vec![Diagnostic {
                path: String::new(),
                line,
                column,
                message: format!("malformed TOML: {msg}"),
            }],
        });
    }
    Err(ScenarioError {
        source: source.to_string(),
        diagnostics: form::every_error(text, e),
    })
}

/// Reads and validates a scenario; a flow with `copies` comes back as that many flows
/// ([`expand_copies`]).
///
/// # Errors
/// A [`ScenarioError`] listing every problem found, each with its key and line.
pub fn load(text: &str, source: &str) -> Result<Scenario, ScenarioError> {
    let mut sc = parse(text, source)?;
    let loc = Locator::new(text);
    let mut diags = import::resolve(&mut sc, source, &loc);
    if diags.is_empty() {
        diags = validate::validate(&sc, &loc);
    }
    if diags.is_empty() {
        // After validation, whose messages name the flows as the file numbers them; the
        // generated flows (sensors, ns-2 traffic) are last and stay last.
        expand_copies(&mut sc.flows);
        Ok(sc)
    } else {
        Err(ScenarioError {
            source: source.to_string(),
            diagnostics: diags,
        })
    }
}

/// Parses a dotted key path (`flows.0.app.interval`) into segments; numbers are array
/// indices.
pub fn parse_path(path: &str) -> Vec<Seg> {
    path.split('.')
        .map(|p| match p.parse::<usize>() {
            Ok(i) => Seg::Index(i),
            Err(_) => Seg::Key(p.to_string()),
        })
        .collect()
}

/// Returns `text` with each `(path, value)` of `overrides` set (inserting keys that are
/// absent, e.g. an optional `app.stop`), and without its `[sweep]` table if `drop_sweep`.
/// Formatting and comments elsewhere are preserved, so line numbers of untouched keys stay.
///
/// # Errors
/// A [`ScenarioError`] if the text is not TOML, or a path does not lead to a table or array
/// element of the file (`unknown key`), or a value cannot be represented in TOML.
pub fn apply_overrides(
    text: &str,
    source: &str,
    overrides: &[(String, serde_json::Value)],
    drop_sweep: bool,
) -> Result<String, ScenarioError> {
    let fail = |path: &str, message: String| ScenarioError {
        source: source.to_string(),
        diagnostics: vec![Diagnostic {
            path: path.to_string(),
            line: 0,
            column: 0,
            message,
        }],
    };
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| fail("", format!("malformed TOML: {}", error::one_line(e.message()))))?;
    if drop_sweep {
        doc.as_table_mut().remove("sweep");
    }
    for (path, value) in overrides {
        let segs = parse_path(path);
        let v = json_to_toml(value).ok_or_else(|| fail(path, format!("value {value} cannot be written in TOML")))?;
        set_path(doc.as_item_mut(), &segs, v).map_err(|m| fail(path, m))?;
    }
    Ok(doc.to_string())
}

fn json_to_toml(v: &serde_json::Value) -> Option<toml_edit::Value> {
    use serde_json::Value as J;
    Some(match v {
        J::Bool(b) => (*b).into(),
        J::Number(n) => match n.as_i64() {
            Some(i) => i.into(),
            None => n.as_f64()?.into(),
        },
        J::String(s) => s.as_str().into(),
        J::Array(a) => {
            let mut arr = toml_edit::Array::new();
            for e in a {
                arr.push(json_to_toml(e)?);
            }
            toml_edit::Value::Array(arr)
        }
        J::Object(o) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, e) in o {
                t.insert(k, json_to_toml(e)?);
            }
            toml_edit::Value::InlineTable(t)
        }
        J::Null => return None,
    })
}

fn set_path(item: &mut toml_edit::Item, segs: &[Seg], v: toml_edit::Value) -> Result<(), String> {
    use toml_edit::Item;
    let Some((first, rest)) = segs.split_first() else {
        return Err("empty key path".into());
    };
    let missing = || {
        format!(
            "unknown key: no `{}` here",
            error::path_string(std::slice::from_ref(first))
        )
    };
    match (item, first) {
        (Item::Table(t), Seg::Key(k)) => {
            if rest.is_empty() {
                let decor = t.get(k).and_then(|i| i.as_value()).map(|old| old.decor().clone());
                let mut v = v;
                if let Some(d) = decor {
                    *v.decor_mut() = d;
                }
                t.insert(k, Item::Value(v));
                Ok(())
            } else {
                if t.get(k).is_none() && matches!(rest.first(), Some(Seg::Key(_))) {
                    // A table the file does not have (`output.positions` without `[output]`):
                    // created, at the end of the file so that other lines keep their numbers;
                    // validation then checks that it is one of the format's tables.
                    t.insert(k, Item::Table(toml_edit::Table::new()));
                }
                set_path(t.get_mut(k).ok_or_else(missing)?, rest, v)
            }
        }
        (Item::ArrayOfTables(a), Seg::Index(i)) => {
            let t = a.get_mut(*i).ok_or_else(missing)?;
            if rest.is_empty() {
                return Err("cannot replace a whole table".into());
            }
            let mut item = Item::Table(std::mem::take(t));
            let r = set_path(&mut item, rest, v);
            if let Item::Table(back) = item {
                *t = back;
            }
            r
        }
        (Item::Value(val), _) => set_value(val, segs, v),
        _ => Err(missing()),
    }
}

fn set_value(val: &mut toml_edit::Value, segs: &[Seg], v: toml_edit::Value) -> Result<(), String> {
    use toml_edit::Value;
    let Some((first, rest)) = segs.split_first() else {
        return Err("empty key path".into());
    };
    let missing = || {
        format!(
            "unknown key: no `{}` here",
            error::path_string(std::slice::from_ref(first))
        )
    };
    let slot: &mut Value = match (val, first) {
        (Value::InlineTable(t), Seg::Key(k)) => {
            if rest.is_empty() {
                t.insert(k, v);
                return Ok(());
            }
            t.get_mut(k).ok_or_else(missing)?
        }
        (Value::Array(a), Seg::Index(i)) => {
            if rest.is_empty() {
                if *i >= a.len() {
                    return Err(missing());
                }
                a.replace(*i, v);
                return Ok(());
            }
            a.get_mut(*i).ok_or_else(missing)?
        }
        _ => return Err(missing()),
    };
    set_value(slot, rest, v)
}

/// The JSON Schema (draft 7) of the scenario format, pretty-printed.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    serde_json::to_string_pretty(&schema).expect("schema serializes")
}

impl Scenario {
    /// The scenario with every default filled in, as JSON (units in canonical form: ns, bps,
    /// B). Used for reports and for the content hash of stored runs.
    pub fn resolved_json(&self) -> String {
        serde_json::to_string(self).expect("scenario serializes")
    }
}

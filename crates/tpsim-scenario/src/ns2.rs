//! Readers for ns-2's scenario files: node movement (`setdest`, BonnMotion's ns-2 export) and
//! traffic (`cbrgen.tcl`).
//!
//! # The formats (the command: `tpsim import-ns2`, docs/scenarios.md)
//!
//! Movement files are Tcl statements, one per line:
//!
//! * `$node_(i) set X_ 250.15` (also `Y_`, `Z_`; one attribute a line, any order): the
//!   initial position, m.
//! * `$ns_ at 50.0 "$node_(i) setdest x y speed"`: at t = 50 s the node heads in a straight
//!   line for (x, y) at `speed` m/s and stops there (a later `setdest` turns it from wherever
//!   it is).
//! * `$god_ set-dist i j hops` and `$ns_ at t "$god_ set-dist i j hops"`: ns-2's oracle hop
//!   counts (16777215 = unreachable), kept for reference.
//! * `set god_ [God instance]`, comments (`#`) and blank lines.
//!
//! Real files differ: events are not always in time order and node ids may start at 0 or 1.
//! The reader keeps the file's ids; [`Movement::first_id`] tells the caller where they start.
//!
//! Traffic files create agents and applications and start them; the reader interprets the
//! few Tcl commands `cbrgen.tcl` (and hand-written variants such as `cbr-3-test`) use:
//! `set v [new Class]`, `set v [$ns_ create-connection TCP $node_(s) TCPSink $node_(d) fid]`,
//! `set v [$agent attach-source FTP]`, `set v [$agent attach-app Traffic/CBR]`,
//! `$ns_ attach-agent $node_(i) $agent`, `$app attach-agent $agent`, `$ns_ connect $a $b`,
//! `$obj set attr value` and `$ns_ at t "$app start|stop"`. Anything else is an error naming
//! its line.
//!
//! ns-2 defaults used when a file does not set an attribute (ns-2.35 `ns-default.tcl`):
//! CBR `packetSize_` 210 B, `rate_` 448 kbit/s, `random_` 0, `maxpkts_` 2^28; TCP
//! `packetSize_` 1000 B, `window_` 20 packets.

use std::collections::HashMap;
use std::fmt;

/// A malformed or unsupported line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ns2Error {
    /// 1-based line number in the file.
    pub line: usize,
    /// What was wrong and what was expected.
    pub message: String,
}

impl fmt::Display for Ns2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for Ns2Error {}

/// One `setdest` command: at `at_s` the node heads for (`x`, `y`) at `speed` m/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SetDest {
    /// Node id as written in the file.
    pub node: u32,
    /// Time of the command, s.
    pub at_s: f64,
    /// Target, m.
    pub x: f64,
    /// Target, m.
    pub y: f64,
    /// Speed, m/s (≥ 0).
    pub speed: f64,
    /// Line of the command in the file.
    pub line: usize,
}

/// A movement file's content.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Movement {
    /// Initial position of each node id: (x, y), m. Z is read and ignored (tpsim is 2-D).
    pub initial: std::collections::BTreeMap<u32, (f64, f64)>,
    /// `setdest` commands, sorted by time (stable: file order for equal times).
    pub moves: Vec<SetDest>,
    /// `set-dist` entries (time s, i, j, hops), time 0 for untimed ones.
    pub god: Vec<(f64, u32, u32, u32)>,
}

impl Movement {
    /// The smallest node id in the file (0 or 1 in practice), `None` for an empty file.
    pub fn first_id(&self) -> Option<u32> {
        let a = self.initial.keys().next().copied();
        let b = self.moves.iter().map(|m| m.node).min();
        match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    /// The largest node id in the file.
    pub fn last_id(&self) -> Option<u32> {
        let a = self.initial.keys().next_back().copied();
        let b = self.moves.iter().map(|m| m.node).max();
        a.max(b)
    }
}

/// Splits a line into words, dropping double quotes (the Tcl quoting of `$ns_ at` commands).
fn words(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || c == '"')
        .filter(|w| !w.is_empty())
        .collect()
}

/// The statements of an ns-2 Tcl file: (line number from 1, the trimmed line, its words),
/// blank lines and `#` comments skipped.
fn statements(text: &str) -> impl Iterator<Item = (usize, &str, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, raw)| {
        let t = raw.trim();
        (!t.is_empty() && !t.starts_with('#')).then(|| (i + 1, t, words(t)))
    })
}

fn num(w: Option<&&str>, line: usize, what: &str) -> Result<f64, Ns2Error> {
    let w = w.ok_or_else(|| Ns2Error {
        line,
        message: format!("missing {what}"),
    })?;
    match w.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(Ns2Error {
            line,
            message: format!("expected a number for {what}, found \"{w}\""),
        }),
    }
}

/// The id in `$node_(12)` (or `$node_(12)` without the `$`).
fn node_ref(w: Option<&&str>, line: usize) -> Result<u32, Ns2Error> {
    let w = w.copied().unwrap_or("");
    let inner = w
        .trim_start_matches('$')
        .strip_prefix("node_(")
        .and_then(|r| r.strip_suffix(')'));
    inner.and_then(|i| i.parse::<u32>().ok()).ok_or_else(|| Ns2Error {
        line,
        message: format!("expected a node reference like $node_(3), found \"{w}\""),
    })
}

/// The latest event time tpsim can represent, s (2^64 - 1 ns, in whole seconds).
pub const MAX_SECONDS: f64 = 18_446_744_073.0;

/// The time of an `$ns_ at` command: a number in [0, [`MAX_SECONDS`]].
fn time(w: Option<&&str>, line: usize) -> Result<f64, Ns2Error> {
    let t = num(w, line, "the time")?;
    if (0.0..=MAX_SECONDS).contains(&t) {
        Ok(t)
    } else {
        Err(Ns2Error {
            line,
            message: format!("expected a time between 0 and {MAX_SECONDS} s, found {t}"),
        })
    }
}

/// A line that is no statement of the format. Its text is not quoted: the file may be any
/// file a scenario names (`file = "../../etc/passwd"`), and an error must not show its content.
fn unrecognised(line: usize, _text: &str) -> Ns2Error {
    Ns2Error {
        line,
        message: "not a statement of this ns-2 format".into(),
    }
}

/// Reads an ns-2 movement file.
///
/// # Errors
/// The first malformed line: a bad number, a negative speed, a time outside 0 to
/// [`MAX_SECONDS`], an unknown statement, or a node given a `setdest` before any initial
/// position (its line number in the message).
pub fn parse_movement(text: &str) -> Result<Movement, Ns2Error> {
    let mut m = Movement::default();
    let mut partial: HashMap<u32, (Option<f64>, Option<f64>, usize)> = HashMap::new();
    for (line, t, w) in statements(text) {
        match w.as_slice() {
            ["set", "god_", ..] => {}
            [n, "set", attr, _] if n.starts_with("$node_(") => {
                let id = node_ref(w.first(), line)?;
                let v = num(w.get(3), line, attr)?;
                let e = partial.entry(id).or_insert((None, None, line));
                match *attr {
                    "X_" => e.0 = Some(v),
                    "Y_" => e.1 = Some(v),
                    "Z_" => {}
                    _ => {
                        return Err(Ns2Error {
                            line,
                            message: format!("expected X_, Y_ or Z_, found \"{attr}\""),
                        })
                    }
                }
            }
            ["$ns_", "at", _, n, "setdest", ..] if n.starts_with("$node_(") => {
                let at_s = time(w.get(2), line)?;
                let node = node_ref(w.get(3), line)?;
                let x = num(w.get(5), line, "the target x")?;
                let y = num(w.get(6), line, "the target y")?;
                let speed = num(w.get(7), line, "the speed")?;
                if w.len() > 8 {
                    return Err(unrecognised(line, t));
                }
                if at_s < 0.0 || speed < 0.0 {
                    return Err(Ns2Error {
                        line,
                        message: "time and speed must not be negative".into(),
                    });
                }
                m.moves.push(SetDest {
                    node,
                    at_s,
                    x,
                    y,
                    speed,
                    line,
                });
            }
            ["$god_", "set-dist", ..] | ["$ns_", "at", _, "$god_", "set-dist", ..] => {
                let (at_s, k) = if w[0] == "$ns_" {
                    (time(w.get(2), line)?, 5)
                } else {
                    (0.0, 2)
                };
                let a = num(w.get(k), line, "a node id")?;
                let b = num(w.get(k + 1), line, "a node id")?;
                let h = num(w.get(k + 2), line, "a hop count")?;
                m.god.push((at_s, a as u32, b as u32, h as u32));
            }
            _ => return Err(unrecognised(line, t)),
        }
    }
    for (&id, &(x, y, line)) in &partial {
        match (x, y) {
            (Some(x), Some(y)) => {
                m.initial.insert(id, (x, y));
            }
            _ => {
                return Err(Ns2Error {
                    line,
                    message: format!("node {id} has an X_ or a Y_ but not both"),
                })
            }
        }
    }
    if let Some(mv) = m.moves.iter().find(|mv| !m.initial.contains_key(&mv.node)) {
        return Err(Ns2Error {
            line: mv.line,
            message: format!(
                "node {} moves but has no initial position ($node_({}) set X_/Y_)",
                mv.node, mv.node
            ),
        });
    }
    // Real files are not always in time order (scen-3-test runs backwards).
    m.moves.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    m.god.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(m)
}

/// A transport agent class that tpsim models.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ns2Agent {
    /// `Agent/UDP`.
    Udp,
    /// `Agent/TCP` (ns-2's one-way TCP is Tahoe).
    TcpTahoe,
    /// `Agent/TCP/Reno`.
    TcpReno,
    /// `Agent/TCP/Newreno`.
    TcpNewReno,
}

impl Ns2Agent {
    /// tpsim's transport name.
    pub fn transport(self) -> &'static str {
        match self {
            Ns2Agent::Udp => "udp",
            Ns2Agent::TcpTahoe => "tcp-tahoe",
            Ns2Agent::TcpReno => "tcp-reno",
            Ns2Agent::TcpNewReno => "tcp-newreno",
        }
    }
}

/// The application of an ns-2 flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ns2App {
    /// `Application/Traffic/CBR`: `size` bytes (ns-2's packetSize_, the IP packet) every
    /// `interval_s`; with `random` each interval is drawn uniformly in ±50 % of it (ns-2's
    /// `random_ 1`); at most `max_packets`.
    Cbr {
        size: u64,
        interval_s: f64,
        random: bool,
        max_packets: u64,
    },
    /// `Application/FTP`: unlimited bulk transfer.
    Ftp,
}

/// One flow of a traffic file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ns2Flow {
    /// Sending node id as in the file.
    pub src: u32,
    /// Receiving node id as in the file.
    pub dst: u32,
    /// Transport agent.
    pub agent: Ns2Agent,
    /// Application.
    pub app: Ns2App,
    /// TCP `packetSize_` (the segment payload, B) and `window_` (packets).
    pub tcp_packet_size: u64,
    /// TCP `window_`, packets.
    pub tcp_window: u64,
    /// `$ns_ at t "$app start"`, s.
    pub start_s: f64,
    /// `$ns_ at t "$app stop"`, s, if any.
    pub stop_s: Option<f64>,
    /// Line where the application was created.
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
struct Obj {
    class: String,
    node: Option<u32>,
    agent: Option<String>,
    peer: Option<String>,
    attrs: HashMap<String, (f64, usize)>,
    start: Option<f64>,
    stop: Option<f64>,
    line: usize,
}

fn var(w: &str) -> Option<&str> {
    w.strip_prefix('$').filter(|v| !v.is_empty())
}

/// Reads an ns-2 traffic file (cbrgen's CBR/UDP and TCP/FTP flows).
///
/// # Errors
/// The first malformed line (an unknown statement, an undefined variable, an unsupported
/// agent or application class, a bad number, a time outside 0 to [`MAX_SECONDS`]), or a flow
/// tpsim cannot run: its agent not attached to a node or not connected, stopped before it
/// starts, a CBR interval under 1 ns or `maxpkts_` below 1, a TCP
/// `packetSize_` outside 1 to 65495 B or `window_` below 1.
pub fn parse_traffic(text: &str) -> Result<Vec<Ns2Flow>, Ns2Error> {
    let mut tr = Traffic::default();
    for (line, t, w) in statements(text) {
        match w.as_slice() {
            ["set", name, "[new", class] => tr.new_object(name, class, line),
            ["set", name, "[$ns_", "create-connection", src_class, src, dst_class, dst, _fid] => {
                tr.create_connection(name, src_class, src, dst_class, dst, line)?;
            }
            ["set", name, agent, "attach-source" | "attach-app", class] if agent.starts_with("[$") => {
                tr.attach_app(name, &agent[1..], class, line)?;
            }
            ["$ns_", "attach-agent", node, agent] => {
                let n = node_ref(Some(node), line)?;
                let a = tr.name(agent, line)?;
                tr.objs.get_mut(&a).expect("checked").node = Some(n);
            }
            [app, "attach-agent", agent] => {
                let p = tr.name(app, line)?;
                let a = tr.name(agent, line)?;
                tr.objs.get_mut(&p).expect("checked").agent = Some(a);
            }
            ["$ns_", "connect", a, b] => tr.connect(a, b, line)?,
            ["$ns_", "at", at, obj, action @ ("start" | "stop")] => tr.at(at, obj, action, line)?,
            [obj, "set", attr, value] => tr.set(obj, attr, value, line)?,
            _ => return Err(unrecognised(line, t)),
        }
    }
    tr.apps.iter().map(|name| tr.flow(name)).collect()
}

/// The objects a traffic file creates, by variable name, and its applications in the order
/// created.
#[derive(Default)]
struct Traffic {
    objs: HashMap<String, Obj>,
    apps: Vec<String>,
    /// Sinks made by `create-connection` so far (their names, " sink1" ..., cannot clash
    /// with a variable's).
    anon: usize,
}

impl Traffic {
    /// The object that variable reference `w` ("$udp_(0)") names.
    fn name(&self, w: &str, line: usize) -> Result<String, Ns2Error> {
        let name = var(w).ok_or_else(|| Ns2Error {
            line,
            message: format!("expected a variable like $udp_(0), found \"{w}\""),
        })?;
        if self.objs.contains_key(name) {
            Ok(name.to_string())
        } else {
            Err(Ns2Error {
                line,
                message: format!("\"{w}\" is used before it is created"),
            })
        }
    }

    /// `set name [new Class]`.
    fn new_object(&mut self, name: &str, class: &str, line: usize) {
        let class = class.trim_end_matches(']').to_string();
        if class.starts_with("Application") {
            self.apps.push(name.to_string());
        }
        self.objs.insert(
            name.to_string(),
            Obj {
                class,
                line,
                ..Obj::default()
            },
        );
    }

    /// `set name [$ns_ create-connection SrcClass src DstClass dst fid]`: an agent on `src`
    /// connected to a new sink on `dst`.
    fn create_connection(
        &mut self,
        name: &str,
        src_class: &str,
        src: &&str,
        dst_class: &str,
        dst: &&str,
        line: usize,
    ) -> Result<(), Ns2Error> {
        let s = node_ref(Some(src), line)?;
        let d = node_ref(Some(dst), line)?;
        self.anon += 1;
        let sink = format!(" sink{}", self.anon);
        self.objs.insert(
            sink.clone(),
            Obj {
                class: format!("Agent/{dst_class}"),
                node: Some(d),
                line,
                ..Obj::default()
            },
        );
        self.objs.insert(
            name.to_string(),
            Obj {
                class: format!("Agent/{src_class}"),
                node: Some(s),
                peer: Some(sink),
                line,
                ..Obj::default()
            },
        );
        Ok(())
    }

    /// `set name [$agent attach-source Class]` (or `attach-app`).
    fn attach_app(&mut self, name: &str, agent: &str, class: &str, line: usize) -> Result<(), Ns2Error> {
        let a = self.name(agent, line)?;
        let class = class.trim_end_matches(']');
        let class = match class {
            "FTP" => "Application/FTP".to_string(),
            c if c.starts_with("Application/") => c.to_string(),
            c => format!("Application/{c}"),
        };
        self.apps.push(name.to_string());
        self.objs.insert(
            name.to_string(),
            Obj {
                class,
                agent: Some(a),
                line,
                ..Obj::default()
            },
        );
        Ok(())
    }

    /// `$ns_ connect $a $b`.
    fn connect(&mut self, a: &str, b: &str, line: usize) -> Result<(), Ns2Error> {
        let a = self.name(a, line)?;
        let b = self.name(b, line)?;
        self.objs.get_mut(&a).expect("checked").peer = Some(b.clone());
        self.objs.get_mut(&b).expect("checked").peer = Some(a);
        Ok(())
    }

    /// `$ns_ at t "$obj start"` (or `stop`).
    fn at(&mut self, at: &&str, obj: &str, action: &str, line: usize) -> Result<(), Ns2Error> {
        let at = time(Some(at), line)?;
        let o = self.name(obj, line)?;
        let o = self.objs.get_mut(&o).expect("checked");
        if action == "start" {
            o.start = Some(at);
        } else {
            o.stop = Some(at);
        }
        Ok(())
    }

    /// `$obj set attr_ value`.
    fn set(&mut self, obj: &str, attr: &&str, value: &&str, line: usize) -> Result<(), Ns2Error> {
        let o = self.name(obj, line)?;
        let v = num(Some(value), line, attr)?;
        self.objs
            .get_mut(&o)
            .expect("checked")
            .attrs
            .insert(attr.to_string(), (v, line));
        Ok(())
    }

    /// The flow of application `name`, once the whole file is read.
    fn flow(&self, name: &String) -> Result<Ns2Flow, Ns2Error> {
        let objs = &self.objs;
        let app = &objs[name];
        let err = |message: String| Ns2Error {
            line: app.line,
            message,
        };
        let Some(agent_name) = &app.agent else {
            return Err(err(format!("application {name} is not attached to an agent")));
        };
        let agent = &objs[agent_name];
        let kind = agent_kind(agent)?;
        let (Some(src), Some(peer)) = (agent.node, &agent.peer) else {
            return Err(err(format!(
                "the agent of {name} is not attached to a node and connected"
            )));
        };
        let Some(dst) = objs[peer].node else {
            return Err(err(format!("the peer of {name}'s agent is not attached to a node")));
        };
        let app_kind = match app.class.as_str() {
            "Application/Traffic/CBR" => cbr(name, app)?,
            "Application/FTP" => Ns2App::Ftp,
            c => {
                return Err(err(format!(
                    "application class {c} is not supported (Traffic/CBR, FTP)"
                )))
            }
        };
        if matches!(app_kind, Ns2App::Cbr { .. }) != (kind == Ns2Agent::Udp) {
            return Err(err(format!("{name}: tpsim imports CBR over UDP and FTP over TCP")));
        }
        let Some(start_s) = app.start else {
            return Err(err(format!("{name} is never started ($ns_ at t \"${name} start\")")));
        };
        if let Some(stop_s) = app.stop.filter(|&t| t <= start_s) {
            return Err(err(format!(
                "{name} stops at {stop_s} s, not after it starts ({start_s} s)"
            )));
        }
        let tcp_packet_size = attr(agent, "packetSize_", 1000.0);
        let tcp_window = attr(agent, "window_", 20.0);
        if kind != Ns2Agent::Udp {
            check_tcp(agent, tcp_packet_size, tcp_window)?;
        }
        Ok(Ns2Flow {
            src,
            dst,
            agent: kind,
            app: app_kind,
            tcp_packet_size: tcp_packet_size as u64,
            tcp_window: tcp_window as u64,
            start_s,
            stop_s: app.stop,
            line: app.line,
        })
    }
}

/// Attribute `k` of `o`, else `default`.
fn attr(o: &Obj, k: &str, default: f64) -> f64 {
    o.attrs.get(k).map(|a| a.0).unwrap_or(default)
}

/// The transport of an agent object.
fn agent_kind(agent: &Obj) -> Result<Ns2Agent, Ns2Error> {
    Ok(match agent.class.as_str() {
        "Agent/UDP" => Ns2Agent::Udp,
        "Agent/TCP" => Ns2Agent::TcpTahoe,
        "Agent/TCP/Reno" => Ns2Agent::TcpReno,
        "Agent/TCP/Newreno" => Ns2Agent::TcpNewReno,
        c => {
            return Err(Ns2Error {
                line: agent.line,
                message: format!(
                    "agent class {c} is not supported (Agent/UDP, Agent/TCP, Agent/TCP/Reno, Agent/TCP/Newreno)"
                ),
            })
        }
    })
}

/// A CBR application's packets (ns-2's defaults: 210 B at 448 kbit/s, 2^28 packets).
fn cbr(name: &str, app: &Obj) -> Result<Ns2App, Ns2Error> {
    let err = |message: String| Ns2Error {
        line: app.line,
        message,
    };
    let size = attr(app, "packetSize_", 210.0);
    let interval_s = match app.attrs.get("interval_") {
        Some(&(v, _)) => v,
        None => size * 8.0 / attr(app, "rate_", 448_000.0),
    };
    if size < 1.0 || interval_s <= 0.0 {
        return Err(err(format!("{name}: packetSize_ and interval_ must be positive")));
    }
    if (interval_s * 1e9).round() < 1.0 {
        return Err(err(format!(
            "{name}: the interval ({interval_s} s) is shorter than 1 ns"
        )));
    }
    let max_packets = attr(app, "maxpkts_", 268_435_456.0);
    if max_packets < 1.0 {
        return Err(Ns2Error {
            line: app.attrs.get("maxpkts_").map(|a| a.1).unwrap_or(app.line),
            message: format!("{name}: maxpkts_ must be at least 1, found {max_packets}"),
        });
    }
    Ok(Ns2App::Cbr {
        size: size as u64,
        interval_s,
        random: attr(app, "random_", 0.0) != 0.0,
        // At most 2^63 - 1 (a TOML integer) for `tpsim import-ns2`'s `count`.
        max_packets: (max_packets as u64).min(i64::MAX as u64),
    })
}

/// A TCP agent's `packetSize_` (1 to 65495 B) and `window_` (at least 1 packet); an error
/// names the line that set the attribute, else the agent's.
fn check_tcp(agent: &Obj, tcp_packet_size: f64, tcp_window: f64) -> Result<(), Ns2Error> {
    let at = |k: &str| agent.attrs.get(k).map(|a| a.1).unwrap_or(agent.line);
    if !(1.0..=65495.0).contains(&tcp_packet_size) {
        return Err(Ns2Error {
            line: at("packetSize_"),
            message: format!("a TCP agent's packetSize_ must be between 1 and 65495 bytes, found {tcp_packet_size}"),
        });
    }
    if tcp_window < 1.0 {
        return Err(Ns2Error {
            line: at("window_"),
            message: format!("a TCP agent's window_ must be at least 1 packet, found {tcp_window}"),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_movement_in_any_order() {
        let text = "set god_ [God instance]\n\
            $ns_ at 50.0 \"$node_(2) setdest 369.5 170.5 3.5\"\n\
            $ns_ at 33.0 \"$node_(1) setdest 89.5 283.5 19.0\"\n\
            $god_ set-dist 1 2 2\n\
            $node_(2) set Z_ 0.0\n$node_(2) set Y_ 199.25\n$node_(2) set X_ 591.0\n\
            $node_(1) set X_ 1.0\n$node_(1) set Y_ 2.0\n";
        let m = parse_movement(text).unwrap();
        assert_eq!(m.first_id(), Some(1));
        assert_eq!(m.initial[&2], (591.0, 199.25));
        assert_eq!(m.moves[0].node, 1);
        assert_eq!(m.moves[0].at_s, 33.0);
        assert_eq!(m.moves[1].line, 2);
        assert_eq!(m.god, vec![(0.0, 1, 2, 2)]);
    }

    #[test]
    fn names_the_bad_line() {
        let e = parse_movement("$node_(0) set X_ 1\n$node_(0) set Y_ abc\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("expected a number"), "{e}");
        let e =
            parse_movement("$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$ns_ at 1 \"$node_(0) fly 1 2 3\"\n").unwrap_err();
        assert_eq!(e.line, 3);
        let e = parse_movement("$ns_ at 1 \"$node_(4) setdest 1 2 3\"\n").unwrap_err();
        assert!(e.message.contains("no initial position"), "{e}");
        let e = parse_movement("$node_(0) set X_ 1\n$node_(0) set Y_ 1\n$ns_ at 1 \"$node_(0) setdest 1 2 -3\"\n")
            .unwrap_err();
        assert!(e.message.contains("negative"), "{e}");
    }

    #[test]
    fn reads_cbrgen_blocks_and_mixed_tcp() {
        let text = "set udp_(0) [new Agent/UDP]\n$ns_ attach-agent $node_(1) $udp_(0)\n\
            set null_(0) [new Agent/Null]\n$ns_ attach-agent $node_(2) $null_(0)\n\
            set cbr_(0) [new Application/Traffic/CBR]\n$cbr_(0) set packetSize_ 512\n\
            $cbr_(0) set interval_ 4.0\n$cbr_(0) set random_ 1\n$cbr_(0) set maxpkts_ 10000\n\
            $cbr_(0) attach-agent $udp_(0)\n$ns_ connect $udp_(0) $null_(0)\n\
            $ns_ at 176.70898653413587 \"$cbr_(0) start\"\n\
            set tcp_(1) [$ns_ create-connection TCP $node_(3) TCPSink $node_(4) 0]\n\
            $tcp_(1) set window_ 32\n$tcp_(1) set packetSize_ 512\n\
            set ftp_(1) [$tcp_(1) attach-source FTP]\n$ns_ at 5.5 \"$ftp_(1) start\"\n";
        let f = parse_traffic(text).unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!((f[0].src, f[0].dst, f[0].agent), (1, 2, Ns2Agent::Udp));
        assert_eq!(
            f[0].app,
            Ns2App::Cbr {
                size: 512,
                interval_s: 4.0,
                random: true,
                max_packets: 10000
            }
        );
        assert_eq!(f[0].start_s, 176.70898653413587);
        assert_eq!(
            (f[1].src, f[1].dst, f[1].agent, f[1].app),
            (3, 4, Ns2Agent::TcpTahoe, Ns2App::Ftp)
        );
        assert_eq!((f[1].tcp_window, f[1].tcp_packet_size, f[1].start_s), (32, 512, 5.5));
    }

    #[test]
    fn traffic_errors_name_the_line() {
        let e = parse_traffic("set a [new Agent/UDP]\n$b set packetSize_ 5\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("before it is created"), "{e}");
        let e = parse_traffic("set a [new Agent/SCTP]\n$ns_ attach-agent $node_(1) $a\nset n [new Agent/Null]\n$ns_ attach-agent $node_(2) $n\n$ns_ connect $a $n\nset c [new Application/Traffic/CBR]\n$c attach-agent $a\n$ns_ at 1 \"$c start\"\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(e.message.contains("not supported"), "{e}");
        let e = parse_traffic("puts hello\n").unwrap_err();
        assert_eq!(e.line, 1);
    }
}

//! Timed fault events (`[[events]]`): links, interfaces and nodes that go down and come back
//! up, and links whose rate, delay or loss change during the run. The engine's meaning of
//! each kind is in docs/scenarios.md ("Fault events").

// `!(x > 0.0)` is meant: it also rejects NaN, which `x <= 0.0` would let through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use crate::error::Seg;
use crate::units::{Duration, Rate};
use crate::Scenario;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a fault event does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FaultKind {
    /// Point-to-point link `link` fails, both directions.
    LinkDown,
    /// Link `link` works again.
    LinkUp,
    /// One interface of node `node` fails: its end of link `link`, or its radio (`radio = true`).
    InterfaceDown,
    /// That interface works again.
    InterfaceUp,
    /// Every interface of node `node` fails (the node keeps its state, cut off).
    NodeDown,
    /// Node `node`'s interfaces work again.
    NodeUp,
    /// Link `link`'s `rate`, `delay` and/or `loss` (both directions) change.
    LinkChange,
}

impl FaultKind {
    /// The scenario spelling.
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::LinkDown => "link_down",
            FaultKind::LinkUp => "link_up",
            FaultKind::InterfaceDown => "interface_down",
            FaultKind::InterfaceUp => "interface_up",
            FaultKind::NodeDown => "node_down",
            FaultKind::NodeUp => "node_up",
            FaultKind::LinkChange => "link_change",
        }
    }
}

/// One timed fault event. Which keys apply depends on `kind`: `link` (link events,
/// `link_change`, and an interface event on a link end), `node` (interface and node events),
/// `radio` (an interface event on the node's radio), `rate`/`delay`/`loss` (`link_change`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FaultEvent {
    /// When it happens, from the start of the run (the warm-up included), e.g. "20s".
    pub at: Duration,
    /// What happens: "link_down", "link_up", "interface_down", "interface_up", "node_down",
    /// "node_up" or "link_change".
    pub kind: FaultKind,
    /// The link (index in `links`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<u32>,
    /// The node (index).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<u32>,
    /// Interface events: the node's radio rather than a link end (`radio = true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radio: Option<bool>,
    /// Interface events on a node with radios on several channels (`[radio] channels`): the
    /// channel of the radio (required there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u32>,
    /// `link_change`: the new rate of both directions, for packets that start serialization
    /// at or after `at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// `link_change`: the new propagation delay of both directions, for packets that start
    /// propagating at or after `at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    /// `link_change`: the new Bernoulli loss probability of both directions, in [0, 1] (it
    /// replaces `loss`, `loss_forward` and `loss_reverse`), for packets drawn at or after `at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
}

fn k(s: &str) -> Seg {
    Seg::Key(s.to_string())
}

/// `[[events]]`: indices in range, the keys of each kind and only those, times within the
/// run.
pub fn validate_events(sc: &Scenario, err: &mut impl FnMut(Vec<Seg>, String)) {
    let n = sc.nodes.count;
    let nl = sc.links.len() as u32;
    let end = sc.simulation.duration.0.saturating_add(sc.simulation.drain.0);
    for (i, e) in sc.events.iter().enumerate() {
        let p = |f: &str| vec![k("events"), Seg::Index(i), k(f)];
        let kind = e.kind.name();
        if e.at.0 >= end {
            err(
                p("at"),
                format!(
                    "expected a time before the end of the run (duration + drain = {}), found {}",
                    Duration(end).human(),
                    e.at.human()
                ),
            );
        }
        let (wants_link, wants_node) = match e.kind {
            FaultKind::LinkDown | FaultKind::LinkUp | FaultKind::LinkChange => (true, false),
            FaultKind::NodeDown | FaultKind::NodeUp => (false, true),
            // Either a link end or the radio: checked below.
            FaultKind::InterfaceDown | FaultKind::InterfaceUp => (e.radio != Some(true), true),
        };
        let iface = matches!(e.kind, FaultKind::InterfaceDown | FaultKind::InterfaceUp);
        let change = e.kind == FaultKind::LinkChange;
        // Keys that do not apply to this kind.
        let stray: [(&str, bool); 7] = [
            ("link", e.link.is_some() && !wants_link),
            ("node", e.node.is_some() && !wants_node),
            ("radio", e.radio.is_some() && !iface),
            ("channel", e.channel.is_some() && e.radio != Some(true)),
            ("rate", e.rate.is_some() && !change),
            ("delay", e.delay.is_some() && !change),
            ("loss", e.loss.is_some() && !change),
        ];
        for (key, bad) in stray {
            if bad {
                let why = if iface && key == "link" {
                    " with `radio = true` (an interface is a link end or the radio, not both)".to_string()
                } else {
                    String::new()
                };
                err(p(key), format!("`{key}` does not apply to a `{kind}` event{why}"));
            }
        }
        if wants_link {
            match e.link {
                None if iface => err(
                    vec![k("events"), Seg::Index(i)],
                    format!("a `{kind}` event needs `link = <index>` (a link end of the node) or `radio = true`"),
                ),
                None => err(
                    vec![k("events"), Seg::Index(i)],
                    format!("a `{kind}` event needs `link = <index>`"),
                ),
                Some(l) if l >= nl => err(
                    p("link"),
                    if nl == 0 {
                        format!("link index {l} out of range: the scenario has no links")
                    } else {
                        format!("link index {l} out of range: expected 0..{}", nl - 1)
                    },
                ),
                Some(_) => {}
            }
        }
        if wants_node {
            match e.node {
                None => err(
                    vec![k("events"), Seg::Index(i)],
                    format!("a `{kind}` event needs `node = <index>`"),
                ),
                Some(v) if v >= n => err(
                    p("node"),
                    format!("node index {v} out of range: expected 0..{}", n.saturating_sub(1)),
                ),
                Some(_) => {}
            }
        }
        if iface {
            if e.radio == Some(false) {
                err(
                    p("radio"),
                    "expected `radio = true` (or no `radio` and `link = <index>`)".into(),
                );
            }
            if e.radio == Some(true) && sc.radio.is_none() {
                err(p("radio"), "the scenario has no radio (`[radio]`)".into());
            }
            let node_channels = sc
                .radio
                .as_ref()
                .and_then(|r| r.channels.as_ref())
                .zip(e.node)
                .and_then(|(c, v)| c.get(v as usize));
            // Without `[radio] channels` every node has one radio, on channel 1.
            let one_radio = sc.radio.as_ref().is_some_and(|r| r.channels.is_none());
            if let (Some(true), true, Some(c), Some(v)) = (e.radio, one_radio, e.channel, e.node) {
                if c != 1 && v < n {
                    err(
                        p("channel"),
                        format!("node {v} has no radio on channel {c}: without `radio.channels` every node has one radio, on channel 1"),
                    );
                }
            }
            if let (Some(true), Some(chans), Some(v)) = (e.radio, node_channels, e.node) {
                match e.channel {
                    None if chans.len() > 1 => err(
                        vec![k("events"), Seg::Index(i)],
                        format!("node {v} has radios on channels {chans:?}: the event needs `channel = <one of them>`"),
                    ),
                    Some(c) if !chans.contains(&c) => err(
                        p("channel"),
                        format!("node {v} has no radio on channel {c}: expected one of {chans:?}"),
                    ),
                    _ => {}
                }
            }
            if let (Some(l), Some(v)) = (e.link, e.node) {
                if let Some(link) = sc.links.get(l as usize) {
                    if !link.nodes.contains(&v) {
                        err(
                            p("node"),
                            format!(
                                "node {v} has no interface on link {l}: expected one of its ends, {} or {}",
                                link.nodes[0], link.nodes[1]
                            ),
                        );
                    }
                }
            }
        }
        if change {
            if e.rate.is_none() && e.delay.is_none() && e.loss.is_none() {
                err(
                    vec![k("events"), Seg::Index(i)],
                    "a `link_change` event needs at least one of `rate`, `delay`, `loss`".into(),
                );
            }
            if e.rate.is_some_and(|r| r.0 == 0) {
                err(p("rate"), "expected a rate greater than 0".into());
            }
            if let Some(v) = e.loss.filter(|v| !(v.is_finite() && (0.0..=1.0).contains(v))) {
                err(p("loss"), format!("expected a loss probability in [0, 1], found {v}"));
            }
        }
    }
}

//! The network movie's trace (`[output] animation = true`): what `tpsim animate` and the
//! report draw. Compact by construction: counts are aggregated per frame (a window of
//! `output.animation_step`, widened so that a run has at most [`MAX_FRAMES`] frames), and
//! node positions are kept as keyframes (a node's position at a frame start where its
//! velocity changes), between which the player interpolates linearly.
//!
//! Rows (columns: docs/workbench.md, "Network movie"), by `kind`:
//!
//! * `position`: a node's keyframe (`x_m`, `y_m`); `range` and `cs_range`: a radio node's
//!   receive and carrier-sense ranges at its transmit power (`range_m`, mean path loss).
//! * `hop`: in the frame starting at `time_s`, `packets` transport packets (`bytes` IP bytes)
//!   of flow direction (`flow`, `direction`) went from `node` to `peer` (received there; a
//!   null flow is a transport packet without data: a pure ACK, SYN, FIN).
//! * `drop`: `packets` drops of data and transport packets at `node` for `reason`.
//! * `delivery`: `packets` first arrivals of the direction's data at its destination `node`
//!   (`bytes`: their transport payload bytes).
//! * `route`: at `time_s`, a packet of the direction was received from `node` by `peer`
//!   where the last one had gone from `node` to `old_peer`: `node` changed its next hop.
//! * `node`: at `time_s`, `node` ran out of energy (`reason` `energy`), went down or up
//!   (`down`, `up`) or had its radio switched off or on (`radio_down`, `radio_up`).
//!
//! Everything is recorded from time 0 (the warm-up does not apply). The world holds an
//! `Option<MovieTrace>`: with the movie off each hook is one branch on that `None`.

use crate::energy::EnergyModel;
use crate::metrics::{DropReason, FlowKey};
use crate::mobility::Mobility;
use crate::packet::{Packet, NO_DIR};
use crate::pkttrace::{drop_name, PacketKind};
use crate::table::{Column, Table};
use crate::wifi::RadioParams;
use std::collections::{BTreeMap, HashMap};
use tpsim_core::SimTime;
use tpsim_scenario::{FaultKind, Scenario};

/// The most frames a run's movie has: a longer run gets a longer frame.
pub const MAX_FRAMES: u64 = 2000;

/// Smallest change of velocity that makes a position sample a keyframe, m/s.
const KEYFRAME_EPS_MPS: f64 = 1e-6;

/// What a row says (the `kind` column).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    Position = 0,
    Range = 1,
    CsRange = 2,
    Node = 3,
    Hop = 4,
    Drop = 5,
    Delivery = 6,
    Route = 7,
}

impl Kind {
    const NAMES: [&'static str; 8] = [
        "position", "range", "cs_range", "node", "hop", "drop", "delivery", "route",
    ];
}

/// One row of the movie's table.
#[derive(Clone, Copy, Debug)]
struct Row {
    time_ns: u64,
    kind: Kind,
    node: u32,
    peer: Option<u32>,
    old_peer: Option<u32>,
    /// Flow direction index (`NO_DIR`: none).
    dir: u32,
    reason: Option<&'static str>,
    packets: u64,
    bytes: u64,
    /// Whether the row counts over a frame (`span_s` is the frame length).
    span: bool,
    xy: Option<(f64, f64)>,
    range_m: Option<f64>,
}

impl Row {
    fn new(time_ns: u64, kind: Kind, node: u32) -> Row {
        Row {
            time_ns,
            kind,
            node,
            peer: None,
            old_peer: None,
            dir: NO_DIR,
            reason: None,
            packets: 0,
            bytes: 0,
            span: false,
            xy: None,
            range_m: None,
        }
    }
}

/// The movie's trace of one run.
#[derive(Clone, Debug)]
pub struct MovieTrace {
    /// Frame length, ns.
    step_ns: u64,
    /// End of the run (duration + drain).
    end: SimTime,
    /// The frame whose counts the maps below hold.
    frame: u64,
    /// (from, to, dir) → (packets, IP bytes) in the current frame.
    hops: BTreeMap<(u32, u32, u32), (u64, u64)>,
    /// (node, reason, dir) → drops in the current frame.
    drops: BTreeMap<(u32, u8, u32), u64>,
    /// dir → (packets, payload bytes) delivered in the current frame.
    deliveries: BTreeMap<u32, (u64, u64)>,
    /// (node, dir) → the node the direction's last data packet from `node` went to.
    next_hop: HashMap<(u32, u32), u32>,
    rows: Vec<Row>,
    /// Every node's movement as at t = 0 (replayed for the keyframes at the end).
    mobility: Vec<Mobility>,
    /// (receive, carrier-sense) range of every radio node, m (empty without a radio).
    ranges: Vec<(f64, f64)>,
    /// Node events the scenario schedules: (time, node, name).
    scheduled: Vec<(u64, u32, &'static str)>,
}

impl MovieTrace {
    /// The movie's trace for a run of `sc` that ends at `end`, with every node's movement
    /// `mobility` as at t = 0.
    pub fn new(sc: &Scenario, end: SimTime, mobility: Vec<Mobility>) -> MovieTrace {
        let step_ns = sc.output.animation_step.0.max(end.0.div_ceil(MAX_FRAMES)).max(1);
        let ranges = match &sc.radio {
            Some(r) => {
                let p = RadioParams::from_scenario(r);
                let range = |w: f64, thr: f64| p.prop.range_m(w, p.antenna, p.antenna, thr).unwrap_or(0.0);
                p.node_powers(r, sc.nodes.count as usize)
                    .into_iter()
                    .map(|w| (range(w, p.rx_threshold_w), range(w, p.cs_threshold_w)))
                    .collect()
            }
            None => Vec::new(),
        };
        let scheduled = sc
            .events
            .iter()
            .filter_map(|e| {
                let name = match (e.kind, e.radio) {
                    (FaultKind::NodeDown, _) => "down",
                    (FaultKind::NodeUp, _) => "up",
                    (FaultKind::InterfaceDown, Some(true)) => "radio_down",
                    (FaultKind::InterfaceUp, Some(true)) => "radio_up",
                    _ => return None,
                };
                Some((e.at.0, e.node?, name))
            })
            .collect();
        MovieTrace {
            step_ns,
            end,
            frame: 0,
            hops: BTreeMap::new(),
            drops: BTreeMap::new(),
            deliveries: BTreeMap::new(),
            next_hop: HashMap::new(),
            rows: Vec::new(),
            mobility,
            ranges,
            scheduled,
        }
    }

    /// The frame length, ns.
    pub fn step_ns(&self) -> u64 {
        self.step_ns
    }

    /// Moves to the frame of `now`, writing out the counts of the frame before.
    #[inline]
    fn roll(&mut self, now: SimTime) {
        let f = now.0 / self.step_ns;
        if f != self.frame {
            self.flush();
            self.frame = f;
        }
    }

    /// Whether the movie counts packet `p`: a transport packet (with or without data), not
    /// routing control, ARP or a beacon.
    #[inline]
    fn counts(p: &Packet) -> bool {
        matches!(PacketKind::of(p), PacketKind::Data | PacketKind::Transport)
    }

    /// Packet `p` sent by `from` was received by `to` (one hop).
    pub fn hop(&mut self, now: SimTime, from: u32, to: u32, p: &Packet) {
        if !Self::counts(p) {
            return;
        }
        self.roll(now);
        let e = self.hops.entry((from, to, p.dir)).or_insert((0, 0));
        e.0 += 1;
        e.1 += u64::from(p.ip.total_len);
        if p.dir == NO_DIR {
            return;
        }
        if let Some(old) = self.next_hop.insert((from, p.dir), to) {
            if old != to {
                self.rows.push(Row {
                    peer: Some(to),
                    old_peer: Some(old),
                    dir: p.dir,
                    ..Row::new(now.0, Kind::Route, from)
                });
            }
        }
    }

    /// Node `node` dropped packet `p` for `reason`.
    pub fn drop(&mut self, now: SimTime, node: u32, p: &Packet, reason: DropReason) {
        if !Self::counts(p) {
            return;
        }
        self.roll(now);
        *self.drops.entry((node, reason as u8, p.dir)).or_insert(0) += 1;
    }

    /// Data packet `p` arrived at its destination for the first time.
    pub fn delivered(&mut self, now: SimTime, p: &Packet) {
        if p.dir == NO_DIR {
            return;
        }
        self.roll(now);
        let e = self.deliveries.entry(p.dir).or_insert((0, 0));
        e.0 += 1;
        e.1 += u64::from(p.seg.payload_len);
    }

    /// Writes the current frame's counts as rows (in key order) and empties them.
    fn flush(&mut self) {
        let t = self.frame * self.step_ns;
        for ((from, to, dir), (packets, bytes)) in std::mem::take(&mut self.hops) {
            self.rows.push(Row {
                peer: Some(to),
                dir,
                packets,
                bytes,
                span: true,
                ..Row::new(t, Kind::Hop, from)
            });
        }
        for ((node, reason, dir), packets) in std::mem::take(&mut self.drops) {
            self.rows.push(Row {
                dir,
                reason: Some(drop_name(DropReason::ALL[reason as usize])),
                packets,
                span: true,
                ..Row::new(t, Kind::Drop, node)
            });
        }
        for (dir, (packets, bytes)) in std::mem::take(&mut self.deliveries) {
            // The node is filled in from the direction's key in `table`.
            self.rows.push(Row {
                dir,
                packets,
                bytes,
                span: true,
                ..Row::new(t, Kind::Delivery, u32::MAX)
            });
        }
    }

    /// Every node's keyframes: its position at the frame starts (and the end of the run)
    /// where its velocity changes, and at the first and the last.
    fn keyframes(&mut self) -> Vec<Row> {
        let (step, end) = (self.step_ns, self.end.0);
        let n_samples = end.div_ceil(step) + 1;
        let at = |k: u64| (k * step).min(end);
        let mut out = Vec::new();
        for (node, m) in self.mobility.iter_mut().enumerate() {
            let row = |t: u64, p: (f64, f64)| Row {
                xy: Some(p),
                ..Row::new(t, Kind::Position, node as u32)
            };
            let mut prev: Option<(u64, (f64, f64))> = None;
            let mut cur = (0, m.position(0.0));
            out.push(row(cur.0, cur.1));
            for k in 1..n_samples {
                let t = at(k);
                if t == cur.0 {
                    continue;
                }
                let next = (t, m.position(t as f64 * 1e-9));
                if let Some(p) = prev {
                    let v = |a: (u64, (f64, f64)), b: (u64, (f64, f64))| {
                        let dt = (b.0 - a.0) as f64 * 1e-9;
                        ((b.1 .0 - a.1 .0) / dt, (b.1 .1 - a.1 .1) / dt)
                    };
                    let (v1, v2) = (v(p, cur), v(cur, next));
                    let (dx, dy) = (v1.0 - v2.0, v1.1 - v2.1);
                    if dx * dx + dy * dy > KEYFRAME_EPS_MPS * KEYFRAME_EPS_MPS {
                        out.push(row(cur.0, cur.1));
                    }
                }
                prev = Some(cur);
                cur = next;
            }
            if cur.0 > 0 {
                out.push(row(cur.0, cur.1));
            }
        }
        out
    }

    /// The movie's trace as a table (columns: the module doc); `keys[dir]` names flow
    /// direction `dir`; `energy` gives the nodes' deaths.
    pub fn table(&mut self, keys: &[&FlowKey], energy: Option<&EnergyModel>) -> Table {
        self.flush();
        let mut rows = self.keyframes();
        for (i, &(rx, cs)) in self.ranges.iter().enumerate() {
            for (kind, r) in [(Kind::Range, rx), (Kind::CsRange, cs)] {
                rows.push(Row {
                    range_m: Some(r),
                    ..Row::new(0, kind, i as u32)
                });
            }
        }
        let mut events = self.scheduled.clone();
        if let Some(e) = energy {
            for (i, n) in e.nodes.iter().enumerate() {
                if let Some(t) = n.dead_at {
                    events.push((t.0, i as u32, "energy"));
                }
            }
        }
        events.retain(|e| e.0 <= self.end.0);
        events.sort_by_key(|e| (e.0, e.1));
        rows.extend(events.into_iter().map(|(t, node, name)| Row {
            reason: Some(name),
            ..Row::new(t, Kind::Node, node)
        }));
        rows.extend(self.rows.iter().map(|r| match r.kind {
            Kind::Delivery => Row {
                node: keys[r.dir as usize].dst,
                ..*r
            },
            _ => *r,
        }));
        let of_dir = |d: u32| (d != NO_DIR).then(|| keys[d as usize]);
        let step_s = self.step_ns as f64 * 1e-9;
        let mut t = Table::default();
        t.push(
            "time_s",
            Column::F64(rows.iter().map(|r| Some(r.time_ns as f64 / 1e9)).collect()),
        );
        t.push(
            "kind",
            Column::Text(rows.iter().map(|r| Kind::NAMES[r.kind as usize]).collect()),
        );
        t.push("node", Column::U64(rows.iter().map(|r| u64::from(r.node)).collect()));
        t.push("peer", Column::OptU32(rows.iter().map(|r| r.peer).collect()));
        t.push("old_peer", Column::OptU32(rows.iter().map(|r| r.old_peer).collect()));
        t.push(
            "flow",
            Column::OptU32(rows.iter().map(|r| of_dir(r.dir).map(|k| k.flow)).collect()),
        );
        t.push(
            "direction",
            Column::OptText(rows.iter().map(|r| of_dir(r.dir).map(|k| k.direction)).collect()),
        );
        t.push("reason", Column::OptText(rows.iter().map(|r| r.reason).collect()));
        t.push("packets", Column::U64(rows.iter().map(|r| r.packets).collect()));
        t.push("bytes", Column::U64(rows.iter().map(|r| r.bytes).collect()));
        t.push(
            "span_s",
            Column::F64(rows.iter().map(|r| r.span.then_some(step_s)).collect()),
        );
        t.push("x_m", Column::F64(rows.iter().map(|r| r.xy.map(|p| p.0)).collect()));
        t.push("y_m", Column::F64(rows.iter().map(|r| r.xy.map(|p| p.1)).collect()));
        t.push("range_m", Column::F64(rows.iter().map(|r| r.range_m).collect()));
        t
    }
}

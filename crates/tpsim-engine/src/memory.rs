//! An estimate of the memory one run of a scenario needs, from the scenario alone, so that a
//! run that cannot fit (a duration of 10⁹ s, 1 ns time-series bins over a long run, tens of
//! thousands of nodes with static routes) is refused before it starts, with the numbers,
//! instead of aborting halfway. The estimate counts what grows with the scenario's size: the
//! nodes' state, route tables, one record per message and segment, and the time series;
//! routing state that grows with the traffic (AODV's route and RREQ caches) is not predicted.
//! Per-item sizes are rounded up from the engine's structures (measured on x86_64).

use tpsim_scenario::topology::Paths;
use tpsim_scenario::{AppKind, Flow, RoutingProtocol, Scenario};

/// State of a radio node: 802.11 device and DCF, receiver, mobility, routing agent (about
/// 4 KB measured at build time with AODV; twice that for growth).
const RADIO_NODE_BYTES: u64 = 8 * 1024;
/// A node without a radio (addresses, routes, ports).
const WIRED_NODE_BYTES: u64 = 256;
/// One direction of a point-to-point link (queue, error model, counters).
const LINK_DEVICE_BYTES: u64 = 2 * 1024;
/// Per flow direction (background flows included): its sockets, application and counters in
/// the engine, and its row of the flows table in the engine and in the Python table built
/// from it (about 7 kB in all, measured as the growth of a whole `tpsim run` process's peak
/// between 10,000 and 40,000 background flows, less the time series' share).
const FLOW_BYTES: u64 = 7 * 1024;
/// Per message sent: its per-packet bookkeeping (send time 8 bytes, drop reason 1, arrival
/// bit) with the headroom of its growing vectors (measured: 15.5 bytes per message over
/// 2 × 10⁷ UDP messages, as the growth of a whole `tpsim run` process).
const MESSAGE_BYTES: u64 = 16;
/// AODV's state per (node, flow end whose route discoveries reach it): a route entry, its
/// expiry timer, the RREQ cache and the floods' pending events, at most
/// [`AODV_ENDS_PER_NODE`] ends a node. Both measured as the growth of a run's peak over the
/// same grid without flows, on static grids of 1,000-10,000 nodes 200 m apart with 10-2,000
/// CBR flows: 7-540 MB, within 1.6× of this.
const AODV_ROUTE_BYTES: u64 = 70;
const AODV_ENDS_PER_NODE: u64 = 700;
/// OLSR's state per pair of nodes: every node learns the topology of the whole network (its
/// topology and two-hop sets), so the state grows with the square of the nodes (measured:
/// 70, 237 and 697 MB peak on grids of 500, 1,000 and 2,000 nodes over 30 s).
const OLSR_PAIR_BYTES: u64 = 200;
/// Per row of the long time-series table, in the engine and in the Python tables built from
/// it.
const SERIES_ROW_BYTES: u64 = 300;
/// Per message with the packet trace on: rows (a send, a receive and a few forwards of it and
/// of its acknowledgement: 8) × bytes a row takes in the engine (31) and in the Python
/// columns built from it (about 120).
const TRACE_MESSAGE_BYTES: u64 = 8 * 160;
/// Per message with an ns-2 trace instead: also every hop's queue and MAC events (on a radio
/// hop the RTS, CTS, DATA and ACK frames, each sent and received: 32 rows for a few hops) ×
/// a row with the ns-2 columns (52 bytes in the engine, about 150 in Python).
const NS2_TRACE_MESSAGE_BYTES: u64 = 32 * 200;
/// At most what a streamed output holds while a run writes it to its file (how tpsim's runs
/// write the packet trace, its ns-2 text and the per-ACK samples): one batch of
/// [`crate::stream::BATCH_ROWS`] rows, twice over for the Parquet writer's row group, at up to
/// 128 bytes a row.
const STREAMED_BYTES: u64 = crate::stream::BATCH_ROWS as u64 * 2 * 128;
/// Per row of the network movie's trace, in the engine (about 80) and in the Python columns
/// built from it. Its rows are at most, per message, a few hops of it and of its
/// acknowledgement, a drop and a delivery (6, each in a frame of its own at worst), plus a
/// keyframe per node and frame.
const MOVIE_ROW_BYTES: u64 = 300;
const MOVIE_ROWS_PER_MESSAGE: u64 = 6;
/// Per row of the per-ACK samples: the engine's (76 bytes) and the Python columns built from
/// it (11 columns, about 100). A flow of a transport with acknowledgements or feedback has at
/// most about one row per message (one ACK per data segment; feedback is rarer).
const ACK_ROW_BYTES: u64 = crate::acktrace::ROW_BYTES + 100;
/// The channel's table of every sender's receivers on a static channel (at most 2²¹ pairs of
/// 16 bytes).
const REACH_MAX_BYTES: u64 = (1 << 21) * 16;

/// Where a run's memory goes, by part, bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryEstimate {
    /// (part, bytes), in a fixed order.
    pub parts: Vec<(&'static str, u64)>,
}

impl MemoryEstimate {
    /// The whole estimate, bytes.
    pub fn total(&self) -> u64 {
        self.parts.iter().fold(0u64, |a, (_, b)| a.saturating_add(*b))
    }
}

/// Messages flow `f` sends per direction at most within `duration_ns` (one-way flows have one
/// direction, `voip` two), with `rate_bps` the fastest a bulk sender could be served.
fn messages(f: &Flow, duration_ns: u64, rate_bps: f64) -> u64 {
    let a = &f.app;
    let start = a.start.0.min(duration_ns);
    let stop = a.stop.map(|s| s.0).unwrap_or(duration_ns).max(start);
    let active_s = (stop - start) as f64 * 1e-9;
    let size = a.size.map(|s| s.0).unwrap_or(1000).max(1) as f64;
    let per_dir = match a.kind {
        AppKind::Bulk => {
            let by_rate = active_s * rate_bps / 8.0 / size;
            a.bytes.map_or(by_rate, |b| (b.0 as f64 / size).min(by_rate.max(1.0)))
        }
        AppKind::Cbr | AppKind::Voip | AppKind::OnOff => {
            let interval_s = match (a.interval, a.rate) {
                (Some(iv), _) => iv.0 as f64 * 1e-9,
                (None, Some(r)) => size * 8.0 / r.0.max(1) as f64,
                (None, None) => 1.0,
            };
            // An on-off source sends only while on.
            let on_share = match (a.kind, a.on, a.off) {
                (AppKind::OnOff, Some(on), Some(off)) => on.secs() / (on.secs() + off.secs()).max(1e-12),
                _ => 1.0,
            };
            let n = active_s * on_share / interval_s.max(1e-12) + 1.0;
            a.count.map_or(n, |c| n.min(c as f64))
        }
    };
    let dirs = if a.kind == AppKind::Voip { 2.0 } else { 1.0 };
    (per_dir * dirs).min(u64::MAX as f64 / 2.0) as u64
}

/// The memory one run of validated scenario `sc` needs, by part.
pub fn estimate_memory(sc: &Scenario) -> MemoryEstimate {
    let n = sc.nodes.count as u64;
    let radio = sc.radio.is_some();
    let duration_ns = sc.simulation.duration.0;
    let end_ns = duration_ns.saturating_add(sc.simulation.drain.0);
    let mut parts = Vec::new();
    parts.push((
        "nodes",
        n.saturating_mul(if radio { RADIO_NODE_BYTES } else { WIRED_NODE_BYTES }),
    ));
    parts.push(("links", (sc.links.len() as u64).saturating_mul(2 * LINK_DEVICE_BYTES)));
    let linked = Paths::linked_nodes(sc.nodes.count, &sc.links);
    parts.push(("wired route tables", Paths::table_bytes(linked)));
    let protocol = sc.routing.as_ref().map(|r| r.protocol).unwrap_or_default();
    let mut endpoints: Vec<u32> = sc.flows.iter().flat_map(|f| [f.src, f.dst]).collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    let bg = sc.background.as_ref().map(|b| b.flows as u64).unwrap_or(0);
    if radio {
        parts.push(("channel", n.saturating_mul(64 * 16).min(REACH_MAX_BYTES)));
        let ends = (endpoints.len() as u64).saturating_add(2 * bg);
        match protocol {
            // A next-hop column of every node towards each flow end.
            RoutingProtocol::Static => parts.push(("radio static routes", ends.saturating_mul(n).saturating_mul(4))),
            RoutingProtocol::Aodv => parts.push((
                "routing state",
                n.saturating_mul(ends.min(AODV_ENDS_PER_NODE).min(n))
                    .saturating_mul(AODV_ROUTE_BYTES),
            )),
            RoutingProtocol::Olsr => parts.push(("routing state", n.saturating_mul(n).saturating_mul(OLSR_PAIR_BYTES))),
            RoutingProtocol::Oracle => {}
        }
    }
    // The fastest a bulk sender can be served: the radio's or the fastest link's rate.
    let rate_bps = match &sc.radio {
        Some(r) => r.data_rate.map(|d| d.0).unwrap_or(11_000_000) as f64,
        None => sc.links.iter().map(|l| l.rate.0).max().unwrap_or(0) as f64,
    };
    let mut msgs: u64 = sc.flows.iter().map(|f| messages(f, duration_ns, rate_bps)).sum();
    if let Some(b) = &sc.background {
        let size = b.size.0.max(1) as f64;
        let interval_s = match (b.interval, b.rate) {
            (Some(iv), _) => iv.0 as f64 * 1e-9,
            (None, Some(r)) => size * 8.0 / r.0.max(1) as f64,
            (None, None) => 1.0,
        };
        let per_flow = (duration_ns as f64 * 1e-9 / interval_s.max(1e-12)).min(u64::MAX as f64 / 4.0) as u64;
        msgs = msgs.saturating_add(per_flow.saturating_mul(b.flows as u64));
    }
    let directions: u64 = sc
        .flows
        .iter()
        .map(|f| if f.app.kind == AppKind::Voip { 2 } else { 1 })
        .sum::<u64>()
        .saturating_add(bg);
    parts.push(("flows", directions.saturating_mul(FLOW_BYTES)));
    parts.push(("messages", msgs.saturating_mul(MESSAGE_BYTES)));
    // The trace and the per-ACK samples are written to files while the run goes: at most a
    // batch of each is held.
    if sc.output.ns2_trace.is_some() {
        parts.push((
            "packet trace",
            msgs.saturating_mul(NS2_TRACE_MESSAGE_BYTES).min(STREAMED_BYTES),
        ));
    } else if sc.output.trace {
        parts.push((
            "packet trace",
            msgs.saturating_mul(TRACE_MESSAGE_BYTES).min(STREAMED_BYTES),
        ));
    }
    if sc.output.animation {
        let step = sc
            .output
            .animation_step
            .0
            .max(end_ns.div_ceil(crate::movie::MAX_FRAMES))
            .max(1);
        let keyframes = (end_ns.div_ceil(step) + 1).saturating_mul(n);
        let rows = msgs.saturating_mul(MOVIE_ROWS_PER_MESSAGE).saturating_add(keyframes);
        parts.push(("network movie", rows.saturating_mul(MOVIE_ROW_BYTES)));
    }
    if sc.output.ack_samples {
        let rows: u64 = sc
            .flows
            .iter()
            .filter(|f| f.transport.acknowledged())
            .map(|f| messages(f, duration_ns, rate_bps))
            .sum();
        parts.push(("ack samples", rows.saturating_mul(ACK_ROW_BYTES).min(STREAMED_BYTES)));
    }
    if sc.output.timeseries {
        let bins = end_ns.div_ceil(sc.output.bin.0.max(1)).max(1);
        let congestion_rows = sc
            .flows
            .iter()
            .map(|f| f.transport.congestion_series() * if f.app.kind == AppKind::Voip { 2 } else { 1 })
            .sum::<u64>();
        let devices = 2 * sc.links.len() as u64 + if radio { n } else { 0 };
        let mut rows = 2 * directions + congestion_rows + devices;
        if sc.energy.is_some() {
            rows += 2 * n;
        }
        if sc.output.positions {
            rows += 2 * n;
        }
        parts.push((
            "time series",
            bins.saturating_mul(rows).saturating_mul(SERIES_ROW_BYTES),
        ));
    }
    MemoryEstimate { parts }
}

/// A lower bound of [`estimate_memory`] from the scenario's text alone, before it is parsed:
/// its flows (counted from the TOML tokens, [`tpsim_scenario::count::count_flows`]), one
/// direction each. Parsing a file of 10⁶ flows takes seconds and gigabytes; this takes a
/// fraction of a second, so such a run is refused before the parse when even the bound
/// does not fit.
pub fn estimate_memory_floor(text: &str) -> MemoryEstimate {
    let flows = tpsim_scenario::count::count_flows(text);
    MemoryEstimate {
        parts: vec![("flows", flows.saturating_mul(FLOW_BYTES))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(text: &str) -> MemoryEstimate {
        estimate_memory(&tpsim_scenario::load(text, "<test>").unwrap())
    }

    const LINK: &str = "[nodes]\ncount = 2\n[[links]]\nnodes = [0, 1]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n";
    const CBR: &str = "[[flows]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = { kind = \"cbr\", size = \"100B\", interval = \"10ms\" }\n";

    #[test]
    fn messages_and_series_grow_with_duration_and_bins() {
        let small = est(&format!("[simulation]\nduration = \"10s\"\n{LINK}{CBR}"));
        let long = est(&format!("[simulation]\nduration = \"1000000000s\"\n{LINK}{CBR}"));
        let part = |e: &MemoryEstimate, name| e.parts.iter().find(|(n, _)| *n == name).map(|p| p.1);
        // 10 s / 10 ms + 1 messages of 16 bytes.
        assert_eq!(part(&small, "messages"), Some(1001 * MESSAGE_BYTES));
        assert!(long.total() > 1_000_000_000_000, "{long:?}");
        let fine = est(&format!(
            "[simulation]\nduration = \"1000s\"\n[output]\ntimeseries = true\nbin = \"1ns\"\n{LINK}{CBR}"
        ));
        // 10^12 bins of (2 rows of the flow + 2 queue rows).
        assert_eq!(part(&fine, "time series"), Some(1_000_000_000_000 * 4 * 300));
        assert_eq!(part(&small, "packet trace"), None);
        let traced = est(&format!(
            "[simulation]\nduration = \"10s\"\n[output]\ntrace = true\n{LINK}{CBR}"
        ));
        assert_eq!(part(&traced, "packet trace"), Some(1001 * TRACE_MESSAGE_BYTES));
        // A long traced run holds one batch of its trace, whatever its length: the rest is
        // in its file.
        let long = est(&format!(
            "[simulation]\nduration = \"100000s\"\n[output]\ntrace = true\nns2_trace = \"old\"\n{LINK}{CBR}"
        ));
        assert_eq!(part(&long, "packet trace"), Some(STREAMED_BYTES));
        assert_eq!(part(&traced, "network movie"), None);
        assert_eq!(part(&traced, "ack samples"), None);
        // Per-ACK samples: a row per message of a flow with acknowledgements, none for UDP.
        let tcp = CBR.replace("\"udp\"", "\"tcp\"");
        let acked = |flow: &str| {
            est(&format!(
                "[simulation]\nduration = \"10s\"\n[output]\nack_samples = true\n{LINK}{flow}"
            ))
        };
        assert_eq!(part(&acked(&tcp), "ack samples"), Some(1001 * ACK_ROW_BYTES));
        assert_eq!(part(&acked(CBR), "ack samples"), Some(0));
        // The movie: 10 s in 0.5 s frames (21 keyframes per node at most, 2 nodes).
        let movie = est(&format!(
            "[simulation]\nduration = \"10s\"\n[output]\nanimation = true\n{LINK}{CBR}"
        ));
        assert_eq!(
            part(&movie, "network movie"),
            Some((1001 * MOVIE_ROWS_PER_MESSAGE + 21 * 2) * MOVIE_ROW_BYTES)
        );
    }

    #[test]
    fn the_floor_from_the_text_is_at_most_the_estimate() {
        let voip = CBR.replace("kind = \"cbr\"", "kind = \"voip\"");
        for flows in [String::new(), CBR.repeat(3), format!("{CBR}{voip}")] {
            let text = format!("[simulation]\nduration = \"10s\"\n{LINK}{flows}");
            let floor = estimate_memory_floor(&text);
            let full = est(&text);
            let part = |e: &MemoryEstimate| e.parts.iter().find(|p| p.0 == "flows").map(|p| p.1);
            assert!(
                floor.total() <= full.total() && part(&floor) <= part(&full),
                "{floor:?} {full:?}"
            );
        }
        assert_eq!(estimate_memory_floor(&CBR.repeat(1000)).total(), 1000 * FLOW_BYTES);
    }

    #[test]
    fn dynamic_routing_state_grows_with_nodes_and_flow_ends() {
        let grid = |protocol: &str, flows: &str| {
            est(&format!(
                "[simulation]\nduration = \"1s\"\n[nodes]\ncount = 2000\nplacement = {{ kind = \"grid\", spacing = \"200m\" }}\n[radio]\n[routing]\nprotocol = \"{protocol}\"\n{flows}"
            ))
        };
        let state = |e: &MemoryEstimate| e.parts.iter().find(|p| p.0 == "routing state").map(|p| p.1);
        // AODV: one flow's two ends in every node; a node holds at most 700 ends.
        assert_eq!(state(&grid("aodv", CBR)), Some(2000 * 2 * AODV_ROUTE_BYTES));
        let many: String = (0..1000)
            .map(|i| {
                CBR.replace("src = 0", &format!("src = {i}"))
                    .replace("dst = 1", &format!("dst = {}", 1999 - i))
            })
            .collect();
        assert_eq!(
            state(&grid("aodv", &many)),
            Some(2000 * AODV_ENDS_PER_NODE * AODV_ROUTE_BYTES)
        );
        // OLSR: every node holds the whole topology, flows or not.
        assert_eq!(state(&grid("olsr", "")), Some(2000 * 2000 * OLSR_PAIR_BYTES));
        assert_eq!(state(&grid("static", CBR)), None);
    }

    #[test]
    fn static_radio_routes_grow_with_nodes_times_flow_ends() {
        let text = "[simulation]\nduration = \"1s\"\n[nodes]\ncount = 20000\nplacement = { kind = \"grid\", spacing = \"200m\" }\n[radio]\n";
        let e = est(&format!("{text}{CBR}"));
        assert_eq!(
            e.parts.iter().find(|p| p.0 == "radio static routes").map(|p| p.1),
            Some(2 * 20000 * 4)
        );
        assert!(e.total() > 20000 * RADIO_NODE_BYTES);
    }
}

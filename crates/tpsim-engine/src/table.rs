//! A run's result tables as plain named columns: what the Python binding hands to polars and
//! what the regression fingerprint hashes. The column names and their meaning are documented
//! in docs/metrics.md.

use crate::metrics::{DropReason, FlowKey, RunResult};

/// The values of one column.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    /// Unsigned counts and indices.
    U64(Vec<u64>),
    /// Optional indices (`None`: not applicable to the row).
    OptU32(Vec<Option<u32>>),
    /// Measurements (`None`: undefined for the row, e.g. no delivery).
    F64(Vec<Option<f64>>),
    /// Labels.
    Text(Vec<&'static str>),
    /// Optional labels (`None`: not applicable to the row).
    OptText(Vec<Option<&'static str>>),
    /// Flags.
    Bool(Vec<bool>),
}

impl Column {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::U64(v) => v.len(),
            Column::OptU32(v) => v.len(),
            Column::F64(v) => v.len(),
            Column::Text(v) => v.len(),
            Column::OptText(v) => v.len(),
            Column::Bool(v) => v.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` as CSV text (empty for `None`; floats in Rust's shortest round-trip form).
    fn cell(&self, i: usize) -> String {
        match self {
            Column::U64(v) => v[i].to_string(),
            Column::OptU32(v) => v[i].map(|x| x.to_string()).unwrap_or_default(),
            Column::F64(v) => v[i].map(|x| format!("{x:?}")).unwrap_or_default(),
            Column::Text(v) => v[i].to_string(),
            Column::OptText(v) => v[i].unwrap_or_default().to_string(),
            Column::Bool(v) => v[i].to_string(),
        }
    }
}

/// Named columns of equal length, in a fixed order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    /// (name, values) pairs.
    pub columns: Vec<(String, Column)>,
}

impl Table {
    pub(crate) fn push(&mut self, name: impl Into<String>, col: Column) {
        debug_assert!(self.columns.first().is_none_or(|(_, c)| c.len() == col.len()));
        self.columns.push((name.into(), col));
    }

    /// Appends `other`'s rows (a table with the same columns, in the same order).
    ///
    /// # Panics
    /// If the two tables' columns differ in name or kind.
    pub fn append(&mut self, other: &Table) {
        assert_eq!(self.columns.len(), other.columns.len(), "tables with other columns");
        for ((name, col), (other_name, other_col)) in self.columns.iter_mut().zip(&other.columns) {
            assert_eq!(name, other_name, "tables with other columns");
            match (col, other_col) {
                (Column::U64(a), Column::U64(b)) => a.extend_from_slice(b),
                (Column::OptU32(a), Column::OptU32(b)) => a.extend_from_slice(b),
                (Column::F64(a), Column::F64(b)) => a.extend_from_slice(b),
                (Column::Text(a), Column::Text(b)) => a.extend_from_slice(b),
                (Column::OptText(a), Column::OptText(b)) => a.extend_from_slice(b),
                (Column::Bool(a), Column::Bool(b)) => a.extend_from_slice(b),
                _ => panic!("column {name}: another kind of values"),
            }
        }
    }

    /// The column called `name`.
    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|(n, _)| n == name).map(|(_, c)| c)
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.columns.first().map(|(_, c)| c.len()).unwrap_or(0)
    }

    /// The table as CSV with its columns sorted by name: independent of the order in which
    /// the engine builds columns, so that two builds computing the same values give the same
    /// text (the regression fingerprint hashes it).
    pub fn canonical_csv(&self) -> String {
        let mut cols: Vec<&(String, Column)> = self.columns.iter().collect();
        cols.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = cols.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(",");
        out.push('\n');
        for i in 0..self.rows() {
            let row: Vec<String> = cols.iter().map(|(_, c)| c.cell(i)).collect();
            out += &row.join(",");
            out.push('\n');
        }
        out
    }
}

macro_rules! push_fields {
    ($table:expr, $rows:expr, $kind:ident, $($field:ident),* $(,)?) => {
        $( $table.push(stringify!($field), Column::$kind($rows.iter().map(|r| r.$field).collect())); )*
    };
}

impl RunResult {
    /// The flows table: one row per flow direction.
    pub fn flows_table(&self) -> Table {
        let rows = &self.flows;
        let mut t = Table::default();
        let keys: Vec<&FlowKey> = rows.iter().map(|r| &r.key).collect();
        t.push("flow", Column::U64(keys.iter().map(|k| k.flow as u64).collect()));
        push_fields!(t, keys, Text, direction);
        t.push("src", Column::U64(keys.iter().map(|k| k.src as u64).collect()));
        t.push("dst", Column::U64(keys.iter().map(|k| k.dst as u64).collect()));
        push_fields!(t, keys, Text, transport, app);
        push_fields!(t, rows, U64, tx_packets, tx_bytes, rx_packets, rx_bytes);
        push_fields!(
            t,
            rows,
            F64,
            pdr,
            loss_rate,
            goodput_kbps,
            delay_mean_s,
            delay_p50_s,
            delay_p95_s,
            delay_max_s,
            net_delay_mean_s,
            segment_loss_rate,
            jitter_ipdv_s,
            jitter_rfc3550_s,
            rtt_mean_s
        );
        push_fields!(t, rows, U64, retransmissions, rto_timeouts, fast_retransmits);
        push_fields!(t, rows, F64, rto_s);
        push_fields!(t, rows, U64, gave_up, ack_packets);
        push_fields!(t, rows, F64, ack_overhead);
        push_fields!(t, rows, U64, tx_segments, rx_segments, rx_duplicate_segments);
        push_fields!(t, rows, F64, hops_mean);
        push_fields!(
            t,
            rows,
            U64,
            dropped_segments,
            in_flight_segments,
            buffered_packets,
            tx_ip_bytes
        );
        push_fields!(t, rows, F64, packet_size_min_b, packet_size_max_b, packet_size_mean_b);
        push_fields!(t, rows, F64, throughput_ip_kbps, packet_delay_mean_s);
        push_fields!(t, rows, F64, queue_delay_mean_s, queue_delay_p95_s);
        // Transport-specific columns, in order of first appearance; empty for other flows.
        let mut extra: Vec<&'static str> = Vec::new();
        for (name, _) in rows.iter().flat_map(|r| r.extra.iter()) {
            if !extra.contains(name) {
                extra.push(name);
            }
        }
        for name in extra {
            let col = rows
                .iter()
                .map(|r| r.extra.iter().find(|(n, _)| *n == name).and_then(|&(_, v)| v))
                .collect();
            t.push(name, Column::F64(col));
        }
        t
    }

    /// The network table's one row.
    pub fn network_table(&self) -> Table {
        let n = &self.network;
        let mut t = Table::default();
        let u = |v: u64| Column::U64(vec![v]);
        let f = |v: Option<f64>| Column::F64(vec![v]);
        t.push("routing_packets", u(n.routing_packets));
        t.push("normalized_routing_load", f(n.normalized_routing_load));
        t.push("mac_frames", u(n.mac_frames));
        t.push("mac_load", f(n.mac_load));
        for reason in DropReason::ALL {
            t.push(reason.column(), u(n.drops[reason as usize]));
        }
        t.push("dropped_copies", u(n.dropped_copies));
        t.push("ecn_marks", u(n.ecn_marks));
        t.push("routing_drops", u(n.routing_drops));
        t.push("arp_requests", u(n.arp_requests));
        t.push("arp_replies", u(n.arp_replies));
        for (name, count) in crate::CTRL_TYPES.iter().zip(n.routing_by_type) {
            t.push(format!("routing_{name}"), u(count));
        }
        t.push("route_discovery_latency_s", f(n.route_discovery_latency_s));
        t.push("route_discoveries_failed", u(n.route_discoveries_failed));
        t.push("jain_fairness", f(n.jain_fairness));
        t.push("data_delivered", u(n.data_delivered));
        t.push("events", u(n.events));
        t.push("energy_consumed_j_mean", f(n.energy_consumed_j_mean));
        t.push("energy_consumed_j_total", f(n.energy_consumed_j_total));
        t.push("first_node_death_s", f(n.first_node_death_s));
        t.push("dead_nodes", u(n.dead_nodes));
        for (name, v) in [
            ("mac_data_frames", n.mac_data_frames),
            ("mac_ack_frames", n.mac_ack_frames),
            ("mac_rts_frames", n.mac_rts_frames),
            ("mac_cts_frames", n.mac_cts_frames),
            ("mac_retransmissions", n.mac_retransmissions),
            ("mac_ack_timeouts", n.mac_ack_timeouts),
            ("mac_cts_timeouts", n.mac_cts_timeouts),
            ("mac_rx_errors", n.mac_rx_errors),
        ] {
            t.push(name, u(v));
        }
        t.push("broadcasts_sent", u(n.broadcasts_sent));
        t.push("broadcast_receptions", u(n.broadcast_receptions));
        t.push("broadcast_missed", u(n.broadcast_missed));
        t
    }

    /// The time series in long format: one row per (series, owner, bin).
    pub fn series_table(&self) -> Table {
        let s = &self.timeseries;
        let mut t = Table::default();
        t.push("series", Column::Text(s.series.clone()));
        t.push("flow", Column::OptU32(s.flow.clone()));
        t.push("link", Column::OptU32(s.link.clone()));
        t.push("node", Column::OptU32(s.node.clone()));
        t.push("direction", Column::Text(s.direction.clone()));
        t.push("time_s", Column::F64(s.time_s.iter().map(|&x| Some(x)).collect()));
        t.push("value", Column::F64(s.value.clone()));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_csv_sorts_columns_and_leaves_none_empty() {
        let mut t = Table::default();
        t.push("b", Column::F64(vec![Some(0.1), None]));
        t.push("a", Column::U64(vec![3, 4]));
        t.push("c", Column::Text(vec!["x", "y"]));
        assert_eq!(t.canonical_csv(), "a,b,c\n3,0.1,x\n4,,y\n");
        assert_eq!(t.rows(), 2);
        assert_eq!(t.get("a"), Some(&Column::U64(vec![3, 4])));
    }

    #[test]
    fn a_transport_specific_column_is_filled_only_for_its_flows() {
        use crate::metrics::{FlowKey, FlowRow, NetworkRow, SeriesTable};
        let row = |transport, extra: Vec<(&'static str, Option<f64>)>| FlowRow {
            key: FlowKey {
                transport,
                ..FlowKey::default()
            },
            extra,
            ..FlowRow::default()
        };
        let r = RunResult {
            flows: vec![
                row("udp", vec![]),
                row("sctp", vec![("hol_blocking_s", Some(0.5))]),
                row("tcp", vec![]),
            ],
            network: NetworkRow::default(),
            timeseries: SeriesTable::default(),
            trace: None,
            animation: None,
            acks: None,
            engine_seconds: 0.0,
        };
        let t = r.flows_table();
        assert_eq!(t.get("hol_blocking_s"), Some(&Column::F64(vec![None, Some(0.5), None])));
        // Without such a flow there is no such column.
        let plain = RunResult {
            flows: vec![row("udp", vec![])],
            ..r
        };
        assert_eq!(plain.flows_table().get("hol_blocking_s"), None);
        assert_eq!(plain.flows_table().columns.len() + 1, t.columns.len());
    }
}

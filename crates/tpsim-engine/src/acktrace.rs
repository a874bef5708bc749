//! Per-ACK samples (`[output] ack_samples = true`): one row per acknowledgement or feedback
//! packet a flow direction's data sender processes, with the sender's state right after it
//! ([`tpsim_transport::AckSample`]), kept as column vectors while the run goes and turned
//! into a [`Table`] at its end (columns: docs/metrics.md, "Per-ACK samples"), or handed out
//! a batch at a time when the run streams them ([`crate::stream`]).
//!
//! The world holds an `Option<AckTrace>`: when the option is off, each received segment costs
//! one branch on that `None` and nothing else. Rows are recorded from the warm-up on.

use crate::metrics::FlowKey;
use crate::stream::{SinkState, TableSink};
use crate::table::{Column, Table};
use tpsim_core::SimTime;
use tpsim_transport::AckSample;

/// The per-ACK samples of one run, one vector per column; absent values are NaN (108 bytes a
/// row).
#[derive(Default)]
pub struct AckTrace {
    time_ns: Vec<u64>,
    dir: Vec<u32>,
    /// cwnd_bytes, ssthresh_bytes, cwnd_packets, ssthresh_packets, srtt_s, rtt_sample_s,
    /// x_bps, x_recv_bps, pacing_rate_bps, btlbw_bps, rtprop_s, bbr_state.
    values: [Vec<f64>; 12],
    /// Where the rows go while the run goes ([`Self::stream_to`]): the flow directions by
    /// index, the sink, rows per batch.
    out: Option<(Vec<FlowKey>, SinkState, usize)>,
}

impl std::fmt::Debug for AckTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AckTrace")
            .field("rows", &self.len())
            .field("streamed", &self.out.is_some())
            .finish()
    }
}

/// The value columns, in table order.
const NAMES: [&str; 12] = [
    "cwnd_bytes",
    "ssthresh_bytes",
    "cwnd_packets",
    "ssthresh_packets",
    "srtt_s",
    "rtt_sample_s",
    "x_bps",
    "x_recv_bps",
    "pacing_rate_bps",
    "btlbw_bps",
    "rtprop_s",
    "bbr_state",
];

/// Bytes a row takes in the engine.
pub const ROW_BYTES: u64 = 8 + 4 + 8 * 12;

impl AckTrace {
    /// Records the sender of direction `dir` after a segment: `before` and `after` are its
    /// samples around the segment. Nothing if the segment acknowledged nothing (the sample's
    /// acknowledgement count did not grow). The RTT sample is the one the segment gave (the
    /// mean if it gave several), else none.
    pub fn record(&mut self, now: SimTime, dir: u32, before: &AckSample, after: &AckSample) {
        if after.acks <= before.acks {
            return;
        }
        let n = after.rtt_samples.saturating_sub(before.rtt_samples);
        let rtt = (n > 0).then(|| after.rtt_sum_ns.saturating_sub(before.rtt_sum_ns) as f64 / n as f64 / 1e9);
        self.time_ns.push(now.0);
        self.dir.push(dir);
        let v = [
            after.cwnd_bytes,
            after.ssthresh_bytes,
            after.cwnd_packets,
            after.ssthresh_packets,
            after.srtt_s,
            rtt,
            after.x_bps,
            after.x_recv_bps,
            after.pacing_rate_bps,
            after.btlbw_bps,
            after.rtprop_s,
            after.bbr_state,
        ];
        for (col, x) in self.values.iter_mut().zip(v) {
            col.push(x.unwrap_or(f64::NAN));
        }
        if self.out.as_ref().is_some_and(|o| self.time_ns.len() >= o.2) {
            self.flush(false);
        }
    }

    /// Streams the rows from now on to `sink`, `batch_rows` at a time (see
    /// [`crate::stream`]); `keys[dir]` names flow direction `dir`.
    pub fn stream_to(&mut self, sink: Box<dyn TableSink>, keys: Vec<FlowKey>, batch_rows: usize) {
        self.out = Some((keys, SinkState::new(sink), batch_rows.max(1)));
    }

    /// Whether the rows are streamed (then [`Self::finish`] completes the stream).
    pub fn streamed(&self) -> bool {
        self.out.is_some()
    }

    /// Hands the rows recorded so far to the stream and forgets them.
    fn flush(&mut self, last: bool) {
        let Some((keys, mut sink, batch)) = self.out.take() else {
            return;
        };
        let refs: Vec<&FlowKey> = keys.iter().collect();
        sink.send(self.len(), last, || self.table(&refs));
        self.time_ns.clear();
        self.dir.clear();
        for col in &mut self.values {
            col.clear();
        }
        self.out = Some((keys, sink, batch));
    }

    /// Hands out the last rows and completes the stream (streamed samples; nothing
    /// otherwise).
    ///
    /// # Errors
    /// The first error the stream gave during the run.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if self.out.is_none() {
            return Ok(());
        }
        self.flush(true);
        match self.out.take() {
            Some((_, mut sink, _)) => sink.finish(),
            None => Ok(()),
        }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// The samples as a table; `keys[dir]` names flow direction `dir`. Columns: `time_s`,
    /// `flow`, `direction`, then [`NAMES`] (null where the transport has no such value).
    pub fn table(&self, keys: &[&FlowKey]) -> Table {
        let mut t = Table::default();
        t.push(
            "time_s",
            Column::F64(self.time_ns.iter().map(|&ns| Some(ns as f64 / 1e9)).collect()),
        );
        t.push(
            "flow",
            Column::U64(self.dir.iter().map(|&d| keys[d as usize].flow as u64).collect()),
        );
        t.push(
            "direction",
            Column::Text(self.dir.iter().map(|&d| keys[d as usize].direction).collect()),
        );
        for (name, col) in NAMES.iter().zip(&self.values) {
            t.push(
                *name,
                Column::F64(col.iter().map(|&x| (!x.is_nan()).then_some(x)).collect()),
            );
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_acknowledgements_make_rows_and_the_rtt_is_this_segments() {
        let mut t = AckTrace::default();
        let a = AckSample {
            acks: 3,
            rtt_samples: 2,
            rtt_sum_ns: 50_000_000,
            cwnd_bytes: Some(2920.0),
            ..AckSample::default()
        };
        // Not an acknowledgement: no row.
        t.record(SimTime(1), 0, &a, &a);
        assert!(t.is_empty());
        // An acknowledgement without an RTT sample, then one with a 30 ms sample.
        let b = AckSample { acks: 4, ..a };
        t.record(SimTime(2), 0, &a, &b);
        let c = AckSample {
            acks: 5,
            rtt_samples: 3,
            rtt_sum_ns: 80_000_000,
            ..b
        };
        t.record(SimTime(3), 0, &b, &c);
        assert_eq!(t.len(), 2);
        assert!(t.values[5][0].is_nan());
        assert!((t.values[5][1] - 0.03).abs() < 1e-12);
        assert!(t.values[1].iter().all(|x| x.is_nan()), "no ssthresh: NaN kept as null");
        assert_eq!(t.values[0], vec![2920.0, 2920.0]);
    }
}

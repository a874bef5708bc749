//! TCP Westwood+: Reno's growth, and after a loss a window from the bandwidth the ACKs
//! measured instead of a blind halving.
//!
//! Reading list:
//!
//! * S. Mascolo, C. Casetti, M. Gerla, M. Y. Sanadidi, R. Wang, "TCP Westwood: Bandwidth
//!   Estimation for Enhanced Transport over Wireless Links", MobiCom 2001 (the loss rule:
//!   `ssthresh = BWE · RTTmin`; after a timeout cwnd = 1 segment).
//! * L. A. Grieco, S. Mascolo, "Performance evaluation and comparison of Westwood+, New Reno,
//!   and Vegas TCP congestion control", ACM CCR 34(2), 2004 (Westwood+: one bandwidth sample
//!   per RTT, `bytes acknowledged in the RTT / RTT`, which ACK compression cannot inflate).
//! * The filter is ns-3's `TcpWestwoodPlus` default, the cross-check's reference: Tustin's
//!   discretisation of a first-order low-pass, `BWE ← 0.9·BWE + 0.1·(sample + last sample)/2`.
//!   A duplicate ACK counts one segment acknowledged, as in ns-3.
//!
//! A sample is taken at the first ACK one RTT (the sample that opened the interval) after the
//! interval began.

use super::cc::{AckEvent, Aimd, CcContext, CongestionController, CongestionEvent, Window};
use tpsim_core::{SimDuration, SimTime};

/// Weight of the previous estimate in the Tustin filter.
pub const FILTER_ALPHA: f64 = 0.9;

/// TCP Westwood+ (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct WestwoodPlus {
    /// Reno's growth.
    reno: Aimd,
    /// The bandwidth estimate BWE, bytes/s.
    bwe: f64,
    /// The previous sample, bytes/s.
    last_sample: f64,
    /// Bytes acknowledged in the interval being measured.
    acked: u64,
    /// The interval's end and length, once opened by an RTT sample.
    interval: Option<(SimTime, SimDuration)>,
    /// Smallest RTT seen (RTTmin).
    min_rtt: Option<SimDuration>,
    /// The last RTT sample, not yet used to open an interval.
    last_rtt: Option<SimDuration>,
}

impl WestwoodPlus {
    /// A controller; `byte_counting` selects RFC 3465 in Reno's slow start.
    pub fn new(byte_counting: bool) -> Self {
        WestwoodPlus {
            reno: Aimd::new(byte_counting),
            bwe: 0.0,
            last_sample: 0.0,
            acked: 0,
            interval: None,
            min_rtt: None,
            last_rtt: None,
        }
    }

    /// The bandwidth estimate BWE, bytes/s.
    pub fn bwe(&self) -> f64 {
        self.bwe
    }

    /// The window after a loss: BWE · RTTmin, at least 2 segments.
    fn ssthresh(&self, smss: u64) -> u64 {
        let rtt = self.min_rtt.map_or(0.0, |r| r.as_secs_f64());
        ((self.bwe * rtt) as u64).max(2 * smss)
    }
}

impl CongestionController for WestwoodPlus {
    fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        // RFC 5681 growth (ns-3's TcpWestwoodPlus grows as NewReno).
        self.reno.on_ack(now, acked, w, cx)
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, _w: Window, cx: &CcContext) -> Window {
        let ssthresh = self.ssthresh(cx.smss);
        let cwnd = match event {
            CongestionEvent::DupAcks | CongestionEvent::Ece => ssthresh,
            CongestionEvent::Timeout => cx.smss,
        };
        Window { cwnd, ssthresh }
    }

    fn on_rtt_sample(&mut self, _now: SimTime, rtt: SimDuration) {
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.last_rtt = Some(rtt);
    }

    fn on_ack_event(&mut self, now: SimTime, ev: &AckEvent, _w: Window, cx: &CcContext) -> Option<Window> {
        if let Some((end, len)) = self.interval {
            if now >= end {
                // One bandwidth sample per RTT (Westwood+), through the Tustin filter.
                let sample = self.acked as f64 / len.as_secs_f64().max(1e-9);
                self.bwe = FILTER_ALPHA * self.bwe + (1.0 - FILTER_ALPHA) * (sample + self.last_sample) / 2.0;
                self.last_sample = sample;
                self.acked = 0;
                self.interval = None;
            }
        }
        self.acked += if ev.duplicate { cx.smss } else { ev.acked };
        if self.interval.is_none() {
            if let Some(rtt) = self.last_rtt.filter(|r| r.0 > 0) {
                self.interval = Some((now + rtt, rtt));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMSS: u64 = 1000;

    fn cx() -> CcContext {
        CcContext {
            smss: SMSS,
            initial_window: 2 * SMSS,
            ..Default::default()
        }
    }
    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    fn ack(acked: u64) -> AckEvent {
        AckEvent {
            acked,
            ..Default::default()
        }
    }

    /// The filter against a hand-computed sequence: RTT 100 ms, 10 000 bytes acknowledged per
    /// RTT (samples 100 000 B/s): BWE 5000, 14 500, 23 050 B/s..., then ssthresh after a loss
    /// = BWE · RTTmin.
    #[test]
    fn bandwidth_filter_follows_tustins_rule() {
        let mut c = WestwoodPlus::new(false);
        let w = Window {
            cwnd: 10 * SMSS,
            ssthresh: u64::MAX,
        };
        c.on_rtt_sample(t(0), SimDuration::from_millis(100));
        let mut expected = vec![];
        let (mut bwe, mut last) = (0.0f64, 0.0f64);
        for _ in 0..4 {
            let s = 100_000.0;
            bwe = 0.9 * bwe + 0.1 * (s + last) / 2.0;
            last = s;
            expected.push(bwe);
        }
        assert_eq!(&expected[..3], &[5000.0, 14_500.0, 23_050.0]);
        let mut got = vec![];
        // Ten ACKs of 1000 bytes per 100 ms: at 0, 10, ..., 90 ms of each interval.
        for k in 0..41u64 {
            let before = c.bwe();
            c.on_ack_event(t(10 * k), &ack(SMSS), w, &cx());
            if c.bwe() != before {
                got.push(c.bwe());
            }
        }
        assert_eq!(got.len(), 4);
        for (g, e) in got.iter().zip(&expected) {
            assert!((g - e).abs() < 1e-6, "{got:?} vs {expected:?}");
        }
        let out = c.on_congestion_event(t(500), CongestionEvent::DupAcks, w, &cx());
        let want = (expected[3] * 0.1) as u64;
        assert_eq!((out.ssthresh, out.cwnd), (want, want));
    }

    /// Duplicate ACKs count one segment each; without an estimate the loss window is
    /// 2 segments; a timeout leaves one segment and ssthresh = BWE · RTTmin.
    #[test]
    fn duplicates_count_a_segment_and_the_floor_is_two_segments() {
        let mut c = WestwoodPlus::new(false);
        let w = Window {
            cwnd: 10 * SMSS,
            ssthresh: u64::MAX,
        };
        let out = c.on_congestion_event(t(0), CongestionEvent::Timeout, w, &cx());
        assert_eq!((out.cwnd, out.ssthresh), (SMSS, 2 * SMSS));
        c.on_rtt_sample(t(0), SimDuration::from_millis(50));
        let dup = AckEvent {
            duplicate: true,
            ..Default::default()
        };
        for k in 0..5 {
            c.on_ack_event(t(10 * k), &dup, w, &cx());
        }
        c.on_ack_event(t(50), &ack(0), w, &cx());
        // 5 duplicates = 5000 bytes in 50 ms: sample 100 000 B/s, BWE 5000 B/s.
        assert!((c.bwe() - 5000.0).abs() < 1e-9, "{}", c.bwe());
    }
}

//! Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation-02): what a sender
//! needs to measure how fast its data is being delivered, from ACKs alone.
//!
//! Reading list, with where each rule is implemented here:
//!
//! * §3.1 "Transmitting or retransmitting a data packet" ([`RateEstimator::on_send`]): each
//!   transmission snapshots the connection's `delivered`, `delivered_time`, `first_sent_time`
//!   and whether it was application-limited; an empty pipe restarts both clocks.
//! * §3.2 "Upon receiving an ACK" ([`RateEstimator::on_delivered`] for each newly acknowledged
//!   or SACKed transmission, then [`RateEstimator::sample`]): the sample is taken from the most
//!   recently sent of them; `interval = max(send_elapsed, ack_elapsed)`, and a sample whose
//!   interval is below the minimum RTT is discarded (§3.2 "GenerateRateSample").
//! * §3.3 "Detecting application-limited phases" ([`RateEstimator::on_app_limited`]).
//!
//! Offsets are the connection's stream offsets (bytes); one record per transmitted segment,
//! kept from `snd_una` to `snd_max` in a ring that is reused (no allocation once the window
//! has been reached).

use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};

/// One delivery-rate sample: `delivered` bytes over `interval` (draft §2.3 `rs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Bytes delivered over the interval.
    pub delivered: u64,
    /// The interval, max(send_elapsed, ack_elapsed).
    pub interval: SimDuration,
    /// `delivered` / `interval`, bytes/s; 0 when the interval is shorter than the minimum RTT
    /// (draft §3.2: not a reliable sample).
    pub delivery_rate: f64,
    /// The connection's delivered count when the sampled segment was sent (BBR's round
    /// counting: `rs.prior_delivered`), bytes.
    pub prior_delivered: u64,
    /// The sampled segment was sent in an application-limited phase.
    pub is_app_limited: bool,
    /// Bytes in flight when the sampled segment was sent, itself included (BBR v3's
    /// `RS.tx_in_flight`).
    pub tx_in_flight: u64,
    /// Bytes marked lost between the sampled segment's transmission and this ACK (BBR v3's
    /// `RS.lost`).
    pub lost: u64,
}

/// Send-time state of one transmitted segment (draft §2.2 `P.*`).
#[derive(Clone, Copy, Debug)]
struct TxRecord {
    start: u64,
    end: u64,
    sent_time: SimTime,
    delivered: u64,
    delivered_time: SimTime,
    first_sent_time: SimTime,
    is_app_limited: bool,
    /// Bytes in flight once it was sent, itself included.
    tx_in_flight: u64,
    /// The connection's lost count when it was sent.
    lost: u64,
    /// Already counted as delivered (SACKed before its cumulative ACK).
    done: bool,
}

/// The connection-wide state of the estimator (draft §2.1 `C.*`) and the per-segment records.
#[derive(Clone, Debug, Default)]
pub struct RateEstimator {
    records: VecDeque<TxRecord>,
    /// `C.delivered`: bytes delivered (cumulatively acknowledged or SACKed) so far.
    delivered: u64,
    /// `C.delivered_time`.
    delivered_time: SimTime,
    /// `C.first_sent_time`.
    first_sent_time: SimTime,
    /// `C.app_limited`: 0, or the delivered count at which the application-limited phase ends.
    app_limited: u64,
    /// The sample being assembled from this ACK's deliveries: (record of the newest segment).
    pending: Option<TxRecord>,
    /// `C.lost`: bytes marked lost so far.
    lost: u64,
}

impl RateEstimator {
    /// An estimator with room for `segments` records before it grows.
    pub fn with_capacity(segments: usize) -> Self {
        RateEstimator {
            records: VecDeque::with_capacity(segments),
            ..Default::default()
        }
    }

    /// Bytes delivered so far (`C.delivered`).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// §3.1: segment `[start, end)` is (re)transmitted at `now` with `in_flight` bytes already
    /// in flight before it.
    pub fn on_send(&mut self, now: SimTime, start: u64, end: u64, in_flight: u64) {
        if in_flight == 0 {
            // §3.1: the pipe was empty: both clocks restart now.
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        let rec = TxRecord {
            start,
            end,
            sent_time: now,
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited != 0,
            tx_in_flight: in_flight + (end - start),
            lost: self.lost,
            done: false,
        };
        match self.records.back() {
            Some(last) if start < last.end => {
                // A retransmission: refresh every record it covers.
                let i = self.records.partition_point(|r| r.end <= start);
                for r in self.records.range_mut(i..) {
                    if r.start >= end {
                        break;
                    }
                    if !r.done {
                        *r = TxRecord {
                            start: r.start,
                            end: r.end,
                            ..rec
                        };
                    }
                }
            }
            _ => self.records.push_back(rec),
        }
    }

    /// §3.2 UpdateRateSample for every segment wholly below `snd_una` (cumulatively
    /// acknowledged) at `now`; the records are dropped.
    pub fn on_cumulative_ack(&mut self, now: SimTime, snd_una: u64) {
        while let Some(r) = self.records.front() {
            if r.end > snd_una {
                break;
            }
            let r = self.records.pop_front().expect("front exists");
            self.deliver(now, r);
        }
    }

    /// §3.2 UpdateRateSample for every segment wholly inside the SACKed block `[l, r)`.
    pub fn on_sacked(&mut self, now: SimTime, l: u64, r: u64) {
        let i = self.records.partition_point(|x| x.end <= l);
        for x in self.records.range_mut(i..) {
            if x.start >= r {
                break;
            }
            if x.start >= l && x.end <= r && !x.done {
                x.done = true;
                let copy = *x;
                Self::count(
                    &mut self.delivered,
                    &mut self.delivered_time,
                    &mut self.pending,
                    now,
                    copy,
                );
            }
        }
    }

    fn deliver(&mut self, now: SimTime, r: TxRecord) {
        if !r.done {
            Self::count(&mut self.delivered, &mut self.delivered_time, &mut self.pending, now, r);
        }
    }

    /// §3.2 UpdateRateSample(P): count P's bytes and keep P if it is the most recently sent.
    fn count(
        delivered: &mut u64,
        delivered_time: &mut SimTime,
        pending: &mut Option<TxRecord>,
        now: SimTime,
        p: TxRecord,
    ) {
        *delivered += p.end - p.start;
        *delivered_time = now;
        let newest = match pending {
            None => true,
            // IsNewestPacket: sent later, or at the same time and higher in sequence.
            Some(q) => p.sent_time > q.sent_time || (p.sent_time == q.sent_time && p.end > q.end),
        };
        if newest {
            *pending = Some(p);
        }
    }

    /// §3.2 GenerateRateSample at the end of an ACK's processing: the sample of this ACK's
    /// deliveries (its `delivery_rate` 0 when the interval is 0 or below `min_rtt`: no
    /// reliable rate), or `None` when the ACK delivered nothing.
    pub fn sample(&mut self, min_rtt: Option<SimDuration>) -> Option<RateSample> {
        // §3.3: the application-limited phase ends once its data is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let p = self.pending.take()?;
        // The newest delivered segment's send time starts the next sample's send interval.
        self.first_sent_time = p.sent_time;
        let send_elapsed = p.sent_time.saturating_since(p.first_sent_time);
        let ack_elapsed = self.delivered_time.saturating_since(p.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        let delivered = self.delivered - p.delivered;
        // An interval below min_rtt gives no reliable rate: the sample keeps its other
        // fields (round counting needs `prior_delivered`) with a delivery rate of 0.
        let reliable = interval.0 != 0 && min_rtt.is_none_or(|m| interval >= m);
        Some(RateSample {
            delivered,
            interval,
            delivery_rate: if reliable {
                delivered as f64 / interval.as_secs_f64()
            } else {
                0.0
            },
            prior_delivered: p.delivered,
            is_app_limited: p.is_app_limited,
            tx_in_flight: p.tx_in_flight,
            lost: self.lost - p.lost,
        })
    }

    /// `bytes` of what is in flight were just marked lost (counted into the samples' `lost`).
    pub fn on_lost(&mut self, bytes: u64) {
        self.lost += bytes;
    }

    /// §3.3: the sender has less than a segment to send and room in its window: the phase
    /// until what is in flight now is delivered is application-limited.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited = (self.delivered + in_flight).max(1);
    }

    /// Whether no segment is recorded (sent, not yet cumulatively acknowledged).
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimTime {
        SimTime(x * 1_000_000)
    }

    /// Ten 1000-byte segments sent back to back at t = 0 from an empty pipe, acknowledged
    /// one by one every 10 ms from 100 ms: the k-th ACK's sample is k·1000 bytes over
    /// 100 + 10(k−1) ms (ack_elapsed: the delivered clock started at the send).
    #[test]
    fn back_to_back_window_acked_by_a_steady_ack_clock() {
        let mut e = RateEstimator::default();
        for k in 0..10u64 {
            e.on_send(ms(0), k * 1000, (k + 1) * 1000, k * 1000);
        }
        for k in 1..=10u64 {
            let now = ms(100 + 10 * (k - 1));
            e.on_cumulative_ack(now, k * 1000);
            let s = e.sample(None).unwrap();
            assert_eq!(s.delivered, k * 1000);
            assert_eq!(s.interval, now.saturating_since(ms(0)));
            assert_eq!(s.prior_delivered, 0);
        }
        assert!(e.is_empty());
        assert_eq!(e.delivered(), 10_000);
    }

    /// Steady state: a segment sent every 10 ms, each acknowledged 100 ms after it was sent:
    /// once the first round is over, each sample spans one RTT of deliveries, 10 segments per
    /// 100 ms = 100 000 B/s; an interval below the minimum RTT is discarded.
    #[test]
    fn steady_ack_clock_measures_the_sending_rate() {
        let mut e = RateEstimator::default();
        let mut inflight = 0;
        let mut last = None;
        for k in 0..40u64 {
            let now = ms(10 * k);
            if k >= 10 {
                e.on_cumulative_ack(now, (k - 9) * 1000);
                inflight -= 1000;
                last = e.sample(Some(SimDuration::from_millis(90)));
            }
            e.on_send(now, k * 1000, (k + 1) * 1000, inflight);
            inflight += 1000;
        }
        let s = last.unwrap();
        assert_eq!(s.interval, SimDuration::from_millis(100));
        assert!((s.delivery_rate - 100_000.0).abs() < 1e-6, "{s:?}");
        assert!(
            e.sample(Some(SimDuration::from_millis(90))).is_none(),
            "nothing newly delivered"
        );
    }

    /// §3.2: an interval shorter than the minimum RTT gives no rate (0), but the sample still
    /// says what was delivered and when its data was sent (`prior_delivered`).
    #[test]
    fn interval_below_min_rtt_has_no_rate_but_keeps_prior_delivered() {
        let mut e = RateEstimator::default();
        e.on_send(ms(0), 0, 1000, 0);
        e.on_cumulative_ack(ms(50), 1000);
        let s = e.sample(Some(SimDuration::from_millis(60))).unwrap();
        assert_eq!((s.delivery_rate, s.delivered, s.prior_delivered), (0.0, 1000, 0));
        assert_eq!(s.tx_in_flight, 1000);
        e.on_send(ms(50), 1000, 2000, 0);
        e.on_cumulative_ack(ms(120), 2000);
        let s = e.sample(Some(SimDuration::from_millis(60))).unwrap();
        assert!((s.delivery_rate - 1000.0 / 0.07).abs() < 1e-6, "{s:?}");
        assert_eq!(s.prior_delivered, 1000);
    }

    /// SACKed segments count once: delivered when SACKed, not again when the cumulative ACK
    /// passes them; a retransmission refreshes the hole's send time, so its delivery is
    /// sampled from the retransmission.
    #[test]
    fn sacked_segments_count_once_and_retransmissions_restart_their_clock() {
        let mut e = RateEstimator::default();
        for k in 0..4u64 {
            e.on_send(ms(0), k * 1000, (k + 1) * 1000, k * 1000);
        }
        e.on_sacked(ms(50), 1000, 4000);
        let s = e.sample(None).unwrap();
        assert_eq!((s.delivered, e.delivered()), (3000, 3000));
        e.on_send(ms(60), 0, 1000, 0);
        e.on_cumulative_ack(ms(110), 4000);
        let s = e.sample(None).unwrap();
        assert_eq!(e.delivered(), 4000, "segments 1..4 not counted twice");
        assert_eq!(s.prior_delivered, 3000, "the retransmission's snapshot");
        assert_eq!(s.interval, SimDuration::from_millis(50));
    }

    /// §3.3: samples taken while application-limited say so, until the data in flight at the
    /// start of the phase is delivered.
    #[test]
    fn app_limited_marks_samples_until_its_data_is_delivered() {
        let mut e = RateEstimator::default();
        e.on_send(ms(0), 0, 1000, 0);
        e.on_app_limited(1000);
        e.on_send(ms(1), 1000, 2000, 1000);
        e.on_cumulative_ack(ms(100), 1000);
        assert!(!e.sample(None).unwrap().is_app_limited, "sent before the phase");
        e.on_cumulative_ack(ms(101), 2000);
        assert!(e.sample(None).unwrap().is_app_limited);
        e.on_send(ms(102), 2000, 3000, 0);
        e.on_cumulative_ack(ms(202), 3000);
        assert!(!e.sample(None).unwrap().is_app_limited, "the phase ended at 1001 bytes");
    }
}

//! TCP Vegas: congestion avoidance that keeps a few segments queued at the bottleneck, judged
//! from the RTT, once per round trip.
//!
//! Reading list:
//!
//! * L. S. Brakmo, L. L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//!   Internet", IEEE JSAC 13(8), 1995: §3.2 (BaseRTT, Expected = cwnd/BaseRTT, Actual, and
//!   Diff = Expected − Actual in segments, kept between α and β), §3.3 (leaving slow start
//!   when Diff exceeds γ).
//! * The round-trip bookkeeping follows ns-3's `TcpVegas` (after Linux's `tcp_vegas.c`), the
//!   cross-check's reference: RTT samples give BaseRTT (minimum ever) and this round's
//!   minimum; once SND.UNA passes the SND.MAX of the round's start, cwnd is judged with
//!   `target = cwnd · BaseRTT / minRTT` and `diff = cwnd − target` (segments); with fewer
//!   than 3 samples in the round, Reno's growth is used instead.
//!
//! Between judgements Vegas grows cwnd only in slow start (RFC 5681's rule). A loss sets
//! `ssthresh = max(min(ssthresh, cwnd − 1 segment), 2 segments)` (ns-3's `GetSsThresh`).

use super::cc::{slow_start, Aimd, CcContext, CongestionController, CongestionEvent, Window};
use tpsim_core::{SimDuration, SimTime};

/// α: below this many segments queued, cwnd grows by one per RTT (ns-3 and Linux: 2).
pub const ALPHA: u64 = 2;
/// β: above this many, cwnd shrinks by one per RTT (4).
pub const BETA: u64 = 4;
/// γ: slow start ends when more than this many are queued (1).
pub const GAMMA: u64 = 1;

/// TCP Vegas (see the module docs).
#[derive(Clone, Copy, Debug)]
pub struct Vegas {
    byte_counting: bool,
    /// Reno's growth, for rounds with too few samples.
    reno: Aimd,
    /// Smallest RTT ever seen (BaseRTT).
    base_rtt: Option<SimDuration>,
    /// Smallest RTT of this round.
    min_rtt: Option<SimDuration>,
    /// RTT samples this round.
    cnt_rtt: u32,
    /// The round ends when SND.UNA reaches this offset (SND.MAX when it began).
    beg_snd_nxt: u64,
    /// Vegas is judging (off during loss recovery, on again once it is over).
    enabled: bool,
}

impl Vegas {
    /// A controller; `byte_counting` selects RFC 3465 in the slow start it keeps.
    pub fn new(byte_counting: bool) -> Self {
        Vegas {
            byte_counting,
            reno: Aimd::new(byte_counting),
            base_rtt: None,
            min_rtt: None,
            cnt_rtt: 0,
            beg_snd_nxt: 0,
            enabled: true,
        }
    }

    /// BaseRTT.
    pub fn base_rtt(&self) -> Option<SimDuration> {
        self.base_rtt
    }

    /// ns-3's `TcpVegas::GetSsThresh`.
    fn reduced_ssthresh(w: Window, smss: u64) -> u64 {
        w.ssthresh.min(w.cwnd.saturating_sub(smss)).max(2 * smss)
    }

    fn new_round(&mut self, cx: &CcContext) {
        self.beg_snd_nxt = cx.snd_max;
        self.cnt_rtt = 0;
        self.min_rtt = None;
    }
}

impl CongestionController for Vegas {
    fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        let smss = cx.smss;
        if !self.enabled {
            self.enabled = true;
            self.new_round(cx);
        }
        if cx.snd_una < self.beg_snd_nxt {
            // Inside a round: slow start only.
            let cwnd = if w.cwnd < w.ssthresh {
                slow_start(w, acked, self.byte_counting, cx)
            } else {
                w.cwnd
            };
            return Window { cwnd, ..w };
        }
        // A round trip is over: judge it.
        let (Some(base), Some(rtt), true) = (self.base_rtt, self.min_rtt, self.cnt_rtt > 2) else {
            let out = self.reno.on_ack(now, acked, w, cx);
            self.new_round(cx);
            return out;
        };
        self.new_round(cx);
        let seg = w.cwnd / smss;
        // Brakmo & Peterson §3.2: Expected − Actual, in segments queued.
        let target = (seg as f64 * base.as_secs_f64() / rtt.as_secs_f64()) as u64;
        let diff = seg.saturating_sub(target);
        let mut out = w;
        if diff > GAMMA && w.cwnd < w.ssthresh {
            // §3.3: leave slow start, down to the target plus one.
            out.cwnd = seg.min(target + 1) * smss;
            out.ssthresh = Self::reduced_ssthresh(out, smss);
        } else if w.cwnd < w.ssthresh {
            out.cwnd = slow_start(w, acked, self.byte_counting, cx);
        } else if diff > BETA {
            out.cwnd = (seg - 1) * smss;
            out.ssthresh = Self::reduced_ssthresh(out, smss);
        } else if diff < ALPHA {
            out.cwnd = (seg + 1) * smss;
        }
        out.cwnd = out.cwnd.max(2 * smss);
        // As Linux's tcp_current_ssthresh: at least 3/4 of cwnd.
        out.ssthresh = out.ssthresh.max(out.cwnd / 4 * 3);
        out
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        self.enabled = false;
        let ssthresh = Self::reduced_ssthresh(w, cx.smss);
        let cwnd = match event {
            CongestionEvent::DupAcks | CongestionEvent::Ece => ssthresh,
            CongestionEvent::Timeout => cx.smss,
        };
        Window { cwnd, ssthresh }
    }

    fn on_rtt_sample(&mut self, _now: SimTime, rtt: SimDuration) {
        self.base_rtt = Some(self.base_rtt.map_or(rtt, |b| b.min(rtt)));
        self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.cnt_rtt += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMSS: u64 = 1000;

    fn cx(snd_una: u64, snd_max: u64) -> CcContext {
        CcContext {
            smss: SMSS,
            snd_una,
            snd_max,
            initial_window: 2 * SMSS,
            ..Default::default()
        }
    }
    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }
    fn w(cwnd_seg: u64, ssthresh: u64) -> Window {
        Window {
            cwnd: cwnd_seg * SMSS,
            ssthresh,
        }
    }

    /// A round of three RTT samples then its closing ACK (SND.UNA at the round's end).
    fn round(v: &mut Vegas, rtts: [u64; 3], win: Window, una: u64) -> Window {
        for r in rtts {
            v.on_rtt_sample(SimTime::ZERO, ms(r));
        }
        v.on_ack(SimTime::ZERO, SMSS, win, &cx(una, una + win.cwnd))
    }

    /// Brakmo & Peterson §3.2 in congestion avoidance, cwnd 20 segments, BaseRTT 100 ms:
    /// minRTT 105 ms → target 19, diff 1 < α: +1 segment; 120 ms → target 16, diff 4:
    /// between α and β, unchanged; 130 ms → target 15, diff 5 > β: −1 segment, and ssthresh
    /// max(min(ssthresh, cwnd − 1), 2) then at least 3/4 cwnd.
    #[test]
    fn congestion_avoidance_keeps_diff_between_alpha_and_beta() {
        let mut v = Vegas::new(false);
        let ca = 10 * SMSS; // ssthresh below cwnd: avoidance
        let first = round(&mut v, [100, 100, 100], w(20, ca), 0);
        assert_eq!(first.cwnd, 21 * SMSS, "diff 0 < α");
        let r = round(&mut v, [105, 110, 106], w(20, ca), 30_000);
        assert_eq!(r.cwnd, 21 * SMSS, "target ⌊20·100/105⌋ = 19, diff 1");
        let r = round(&mut v, [120, 125, 121], w(20, ca), 60_000);
        assert_eq!(r.cwnd, 20 * SMSS, "target 16, diff 4: hold");
        let r = round(&mut v, [130, 140, 131], w(20, ca), 90_000);
        assert_eq!(r.cwnd, 19 * SMSS, "target 15, diff 5 > β");
        assert_eq!(
            r.ssthresh, 14_250,
            "max(min(10 000, 18 000), 2000), then at least 3/4 · 19 000"
        );
    }

    /// §3.3: in slow start, a diff above γ ends it: cwnd = min(cwnd, target + 1), ssthresh
    /// below it; inside a round, slow start grows as RFC 5681 does; fewer than three samples
    /// fall back to Reno.
    #[test]
    fn slow_start_ends_when_diff_exceeds_gamma() {
        let mut v = Vegas::new(false);
        let inf = u64::MAX;
        let r = round(&mut v, [100, 100, 100], w(8, inf), 0);
        assert_eq!(r.cwnd, 9 * SMSS, "diff 0: slow start goes on");
        let inside = v.on_ack(SimTime::ZERO, SMSS, w(9, inf), &cx(1000, 20_000));
        assert_eq!(inside.cwnd, 10 * SMSS, "within the round: +1 SMSS per ACK");
        let r = round(&mut v, [125, 130, 126], w(10, inf), 20_000);
        assert_eq!(r.cwnd, 9 * SMSS, "target ⌊10·100/125⌋ = 8, diff 2 > γ: 8 + 1");
        assert_eq!(r.ssthresh, 8000, "max(min(∞, 8000), 2000), at least 3/4 · 9000");
        let mut v = Vegas::new(false);
        v.on_rtt_sample(SimTime::ZERO, ms(100));
        let reno = v.on_ack(SimTime::ZERO, SMSS, w(20, 10_000), &cx(0, 20_000));
        assert_eq!(reno.cwnd, 20 * SMSS + 50, "one sample: RFC 5681 eq. (3)");
    }

    /// A loss: ssthresh = max(min(ssthresh, cwnd − 1 segment), 2 segments); Vegas pauses its
    /// judgement until recovery is over.
    #[test]
    fn loss_reduces_to_one_segment_below_cwnd() {
        let mut v = Vegas::new(false);
        let out = v.on_congestion_event(SimTime::ZERO, CongestionEvent::DupAcks, w(20, u64::MAX), &cx(0, 0));
        assert_eq!((out.cwnd, out.ssthresh), (19_000, 19_000));
        let out = v.on_congestion_event(SimTime::ZERO, CongestionEvent::Timeout, w(20, 5000), &cx(0, 0));
        assert_eq!((out.cwnd, out.ssthresh), (1000, 5000));
        assert!(!v.enabled);
    }
}

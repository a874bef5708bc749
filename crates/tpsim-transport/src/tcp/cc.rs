//! Congestion control behind a trait: controllers compute windows, the connection applies them.
//!
//! A [`CongestionController`] sees the current [`Window`] and returns the next one; it never
//! changes the connection's state itself (the design note of ns-3's `TcpCongestionOps`: the
//! algorithm *returns* ssthresh). The connection owns everything that is loss *recovery*: the
//! duplicate-ACK counter, fast retransmit, the `cwnd` inflation and deflation of fast recovery
//! (RFC 5681 §3.2, RFC 6582 §3.2) and the go-back-N after a timeout. A controller is asked
//!
//! * [`on_ack`](CongestionController::on_ack) for every ACK of new data outside fast
//!   recovery: slow start and congestion avoidance (RFC 5681 §3.1);
//! * [`on_congestion_event`](CongestionController::on_congestion_event) when loss is detected:
//!   it returns the new `ssthresh` and the `cwnd` to use once recovery is over (after a
//!   timeout, the loss window).
//!
//! Built-in controllers are dispatched through [`AnyController`] (no virtual call on the hot
//! path); [`AnyController::Custom`] takes a boxed controller for experiments. CUBIC (RFC 9438)
//! is meant to become a second built-in.

use std::fmt::Debug;
use tpsim_core::{SimDuration, SimTime};

/// Congestion window and slow-start threshold, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// Congestion window `cwnd`, bytes.
    pub cwnd: u64,
    /// Slow-start threshold `ssthresh`, bytes (`u64::MAX` before the first loss).
    pub ssthresh: u64,
}

/// What the controller may know about the connection when asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcContext {
    /// Sender maximum segment size SMSS, bytes.
    pub smss: u64,
    /// FlightSize (RFC 5681 §2): bytes sent and not yet cumulatively acknowledged.
    pub flight_size: u64,
    /// Smoothed RTT, if measured.
    pub srtt: Option<SimDuration>,
    /// Whether this slow start follows a retransmission timeout (RFC 3465 limits its byte
    /// counting to L = 1·SMSS).
    pub after_timeout: bool,
}

/// How loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CongestionEvent {
    /// `dupthresh` duplicate ACKs: fast retransmit (RFC 5681 §3.2).
    DupAcks,
    /// The retransmission timer expired (RFC 5681 §3.1, RFC 6298 §5).
    Timeout,
}

/// A congestion-control algorithm. Every method returns the window the connection should
/// use; the connection applies it.
pub trait CongestionController: Debug {
    /// `acked` bytes of new data were cumulatively acknowledged, outside fast recovery.
    fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window;
    /// Loss was detected. For [`CongestionEvent::DupAcks`] the returned `cwnd` is the window to
    /// use when fast recovery ends; for [`CongestionEvent::Timeout`] it is used at once.
    fn on_congestion_event(&mut self, now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window;
    /// `bytes` of data (new or retransmitted) were sent. Default: nothing.
    fn on_sent(&mut self, _now: SimTime, _bytes: u64) {}
}

/// Which built-in controller a connection uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CongestionAlgorithm {
    /// Slow start and congestion avoidance of RFC 5681 ([`Aimd`]), the window growth of Tahoe,
    /// Reno and NewReno alike.
    #[default]
    Aimd,
}

impl CongestionAlgorithm {
    /// A fresh controller. `byte_counting` selects RFC 3465 (L = 2·SMSS) growth.
    pub fn build(self, byte_counting: bool) -> AnyController {
        match self {
            CongestionAlgorithm::Aimd => AnyController::Aimd(Aimd::new(byte_counting)),
        }
    }
}

/// RFC 5681 §3.1 additive increase, multiplicative decrease.
///
/// * Slow start (`cwnd < ssthresh`): `cwnd += min(acked, SMSS)` per ACK (eq. 2); with byte
///   counting, `min(acked, L)` with L = 2·SMSS, or 1·SMSS after a timeout (RFC 3465 §2.2, §2.3).
/// * Congestion avoidance: `cwnd += max(1, SMSS·SMSS/cwnd)` per ACK (eq. 3); with byte counting,
///   one SMSS each time `cwnd` bytes have been acknowledged (RFC 3465 §2.1).
/// * Loss: `ssthresh = max(FlightSize/2, 2·SMSS)` (eq. 4); after fast recovery `cwnd =
///   ssthresh`; after a timeout `cwnd` = the loss window, 1·SMSS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aimd {
    byte_counting: bool,
    /// RFC 3465 §2.1 `bytes_acked` counter of congestion avoidance, bytes.
    bytes_acked: u64,
}

impl Aimd {
    /// A controller; `byte_counting` selects RFC 3465.
    pub fn new(byte_counting: bool) -> Self {
        Aimd {
            byte_counting,
            bytes_acked: 0,
        }
    }
}

impl CongestionController for Aimd {
    fn on_ack(&mut self, _now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        let smss = cx.smss;
        let cwnd = if w.cwnd < w.ssthresh {
            // RFC 5681 §3.1 eq. (2) / RFC 3465 §2.2: slow start.
            let l = if self.byte_counting && !cx.after_timeout {
                2 * smss
            } else {
                smss
            };
            w.cwnd + acked.min(l)
        } else if self.byte_counting {
            // RFC 3465 §2.1: one SMSS per cwnd bytes acknowledged.
            self.bytes_acked += acked;
            if self.bytes_acked >= w.cwnd {
                self.bytes_acked -= w.cwnd;
                w.cwnd + smss
            } else {
                w.cwnd
            }
        } else {
            // RFC 5681 §3.1 eq. (3): at least one byte per ACK.
            w.cwnd + (smss * smss / w.cwnd.max(1)).max(1)
        };
        Window {
            cwnd,
            ssthresh: w.ssthresh,
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, _w: Window, cx: &CcContext) -> Window {
        // RFC 5681 §3.1 eq. (4).
        let ssthresh = (cx.flight_size / 2).max(2 * cx.smss);
        self.bytes_acked = 0;
        let cwnd = match event {
            // RFC 5681 §3.2 step 6: cwnd = ssthresh when recovery ends.
            CongestionEvent::DupAcks => ssthresh,
            // RFC 5681 §3.1: after a timeout cwnd is the loss window LW = 1 full-sized segment.
            CongestionEvent::Timeout => cx.smss,
        };
        Window { cwnd, ssthresh }
    }
}

/// A congestion controller: a built-in one, or a boxed one for experiments.
#[derive(Debug)]
pub enum AnyController {
    /// [`Aimd`] (RFC 5681).
    Aimd(Aimd),
    /// A user-supplied controller (one virtual call per ACK).
    Custom(Box<dyn CongestionController + Send>),
}

impl AnyController {
    /// See [`CongestionController::on_ack`].
    #[inline]
    pub fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        match self {
            AnyController::Aimd(c) => c.on_ack(now, acked, w, cx),
            AnyController::Custom(c) => c.on_ack(now, acked, w, cx),
        }
    }
    /// See [`CongestionController::on_congestion_event`].
    #[inline]
    pub fn on_congestion_event(&mut self, now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        match self {
            AnyController::Aimd(c) => c.on_congestion_event(now, event, w, cx),
            AnyController::Custom(c) => c.on_congestion_event(now, event, w, cx),
        }
    }
    /// See [`CongestionController::on_sent`].
    #[inline]
    pub fn on_sent(&mut self, now: SimTime, bytes: u64) {
        match self {
            AnyController::Aimd(c) => c.on_sent(now, bytes),
            AnyController::Custom(c) => c.on_sent(now, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMSS: u64 = 1000;

    fn cx(flight_size: u64) -> CcContext {
        CcContext {
            smss: SMSS,
            flight_size,
            srtt: None,
            after_timeout: false,
        }
    }

    /// RFC 5681 §3.1 eq. (2): slow start adds at most SMSS per ACK, even for a stretch ACK.
    #[test]
    fn slow_start_adds_min_of_acked_and_smss() {
        let mut c = Aimd::new(false);
        let w = Window {
            cwnd: 2000,
            ssthresh: u64::MAX,
        };
        assert_eq!(c.on_ack(SimTime::ZERO, 2000, w, &cx(0)).cwnd, 3000);
        assert_eq!(c.on_ack(SimTime::ZERO, 500, w, &cx(0)).cwnd, 2500);
    }

    /// RFC 3465 §2.2: with byte counting, L = 2·SMSS, but 1·SMSS after a timeout (§2.3).
    #[test]
    fn byte_counting_limit_is_two_smss() {
        let mut c = Aimd::new(true);
        let w = Window {
            cwnd: 2000,
            ssthresh: u64::MAX,
        };
        assert_eq!(c.on_ack(SimTime::ZERO, 5000, w, &cx(0)).cwnd, 4000);
        let after_rto = CcContext {
            after_timeout: true,
            ..cx(0)
        };
        assert_eq!(c.on_ack(SimTime::ZERO, 5000, w, &after_rto).cwnd, 3000);
    }

    /// RFC 5681 §3.1 eq. (3) and RFC 3465 §2.1: about one SMSS per window in avoidance.
    #[test]
    fn congestion_avoidance_adds_one_smss_per_window() {
        let w0 = Window {
            cwnd: 4000,
            ssthresh: 4000,
        };
        let mut c = Aimd::new(false);
        assert_eq!(c.on_ack(SimTime::ZERO, 1000, w0, &cx(0)).cwnd, 4250);
        let mut c = Aimd::new(true);
        let mut w = w0;
        for _ in 0..3 {
            w = c.on_ack(SimTime::ZERO, 1000, w, &cx(0));
        }
        assert_eq!(w.cwnd, 4000);
        w = c.on_ack(SimTime::ZERO, 1000, w, &cx(0));
        assert_eq!(w.cwnd, 5000);
    }

    /// RFC 5681 §3.1 eq. (4) and the loss window.
    #[test]
    fn loss_halves_flight_size_with_a_two_segment_floor() {
        let mut c = Aimd::new(false);
        let w = Window {
            cwnd: 10_000,
            ssthresh: u64::MAX,
        };
        let r = c.on_congestion_event(SimTime::ZERO, CongestionEvent::DupAcks, w, &cx(9000));
        assert_eq!(
            r,
            Window {
                cwnd: 4500,
                ssthresh: 4500
            }
        );
        let r = c.on_congestion_event(SimTime::ZERO, CongestionEvent::Timeout, w, &cx(3000));
        assert_eq!(
            r,
            Window {
                cwnd: 1000,
                ssthresh: 2000
            }
        );
    }
}

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
//!   timeout, the loss window);
//! * [`on_rtt_sample`](CongestionController::on_rtt_sample) for every RTT sample an ACK of
//!   data gives (Vegas, Westwood+);
//! * [`on_ack_event`](CongestionController::on_ack_event) after every ACK, new or duplicate,
//!   with what it delivered ([`AckEvent`]): a controller that sets the window itself on every
//!   ACK (BBR) returns it here; and
//! * [`pacing_rate`](CongestionController::pacing_rate) for the rate the sender paces at.
//!
//! Built-in controllers are dispatched through [`AnyController`] (no virtual call on the hot
//! path); [`AnyController::Custom`] takes a boxed controller for experiments. Built in: [`Aimd`]
//! (RFC 5681), [`Cubic`] (RFC 9438), [`Bbr`] (BBR v1), [`Bbr3`] (BBR v3), [`Vegas`] and
//! [`WestwoodPlus`].

pub use super::bbr::{Bbr, BbrState};
pub use super::bbr3::{Bbr3, Bbr3State};
pub use super::rate::RateSample;
pub use super::vegas::Vegas;
pub use super::westwood::WestwoodPlus;
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
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// The initial window (RFC 5681 §3.1 IW), bytes.
    pub initial_window: u64,
    /// One past the highest offset sent (SND.MAX), bytes from the ISN.
    pub snd_max: u64,
    /// The oldest unacknowledged offset (SND.UNA), bytes from the ISN.
    pub snd_una: u64,
    /// Both ends negotiated SACK (RFC 2018): more than one loss per round trip can be seen.
    pub sack: bool,
}

/// What one ACK did, as [`CongestionController::on_ack_event`] sees it after the connection
/// processed it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AckEvent {
    /// Bytes newly cumulatively acknowledged (0 for a duplicate ACK).
    pub acked: u64,
    /// Bytes newly delivered: cumulatively acknowledged or SACKed, each once (with
    /// [`CongestionController::needs_rate_samples`]; else `acked`).
    pub newly_delivered: u64,
    /// Total bytes delivered so far (draft-cheng `C.delivered`; with rate samples).
    pub delivered: u64,
    /// A duplicate ACK (RFC 5681 §2, or RFC 6675 §2: it SACKed new data).
    pub duplicate: bool,
    /// The RTT sample this ACK gave, if any (RFC 6298 / RFC 7323 §4).
    pub rtt: Option<SimDuration>,
    /// The delivery-rate sample of this ACK, with rate samples.
    pub rate: Option<RateSample>,
    /// Bytes in flight before the ACK: `in_flight` plus `newly_delivered` (with rate
    /// samples, else 0).
    pub prior_in_flight: u64,
    /// Bytes in flight after it: RFC 6675's pipe with SACK, else SND.NXT − SND.UNA (with
    /// rate samples, else 0).
    pub in_flight: u64,
    /// Bytes the ACK made the connection deem lost (RFC 6675 IsLost, not yet retransmitted;
    /// with rate samples and SACK, else 0).
    pub newly_lost: u64,
    /// The connection is in loss recovery after the ACK.
    pub in_recovery: bool,
    /// The ACK made the connection detect a loss (recovery began).
    pub loss: bool,
}

/// A BBR controller's (v1 or v3) state and path model, as the time series report them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrModel {
    /// The state's code: v1 0 Startup, 1 Drain, 2 ProbeBW, 3 ProbeRTT ([`BbrState::code`]);
    /// v3 the same, ProbeBW being DOWN, and 4 CRUISE, 5 REFILL, 6 UP ([`Bbr3State::code`]).
    pub state: u8,
    /// The bottleneck-bandwidth estimate (v1 BtlBw, v3 max_bw), bytes/s.
    pub bw: f64,
    /// The propagation-delay estimate (v1 RTprop, v3 min_rtt).
    pub min_rtt: Option<SimDuration>,
}

/// How loss was detected.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CongestionEvent {
    /// `dupthresh` duplicate ACKs: fast retransmit (RFC 5681 §3.2).
    DupAcks,
    /// The retransmission timer expired (RFC 5681 §3.1, RFC 6298 §5).
    Timeout,
    /// An ACK echoed a Congestion Experienced mark (RFC 3168 §6.1.2): the reduction of a loss,
    /// applied at once, with nothing to retransmit.
    Ece,
}

/// A congestion-control algorithm. Every method returns the window the connection should
/// use; the connection applies it.
pub trait CongestionController: Debug {
    /// `acked` bytes of new data were cumulatively acknowledged, outside fast recovery.
    fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window;
    /// Loss (or an ECN mark) was detected. For [`CongestionEvent::DupAcks`] the returned `cwnd`
    /// is the window to use when fast recovery ends; for [`CongestionEvent::Timeout`] and
    /// [`CongestionEvent::Ece`] it is used at once.
    fn on_congestion_event(&mut self, now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window;
    /// `bytes` of data (new or retransmitted) were sent. Default: nothing.
    fn on_sent(&mut self, _now: SimTime, _bytes: u64) {}
    /// An RTT sample was taken (before the ACK that gave it is acted on). Default: nothing.
    fn on_rtt_sample(&mut self, _now: SimTime, _rtt: SimDuration) {}
    /// After every ACK (new or duplicate) the connection processed; returning a window makes
    /// the connection use it at once, in recovery too. Default: nothing.
    fn on_ack_event(&mut self, _now: SimTime, _ev: &AckEvent, _w: Window, _cx: &CcContext) -> Option<Window> {
        None
    }
    /// The rate to pace data at, bytes/s, given the current window (`None`: no pacing of
    /// the controller's own).
    fn pacing_rate(&self, _w: Window, _cx: &CcContext) -> Option<f64> {
        None
    }
    /// Whether [`AckEvent`]s need delivery-rate samples (the connection keeps a record per
    /// segment in flight for them). Default false.
    fn needs_rate_samples(&self) -> bool {
        false
    }
}

/// Which built-in controller a connection uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CongestionAlgorithm {
    /// Slow start and congestion avoidance of RFC 5681 ([`Aimd`]), the window growth of Tahoe,
    /// Reno and NewReno alike.
    #[default]
    Aimd,
    /// CUBIC (RFC 9438, [`Cubic`]). Its loss recovery is RFC 6675's SACK recovery when both
    /// ends negotiated SACK ([`TcpConfig::sack`](super::TcpConfig::sack)), else NewReno's.
    Cubic,
    /// BBR v1 ([`Bbr`]): model-based, paced; SACK recovery as [`Self::Cubic`].
    Bbr,
    /// BBR v3 ([`Bbr3`]): BBR with loss and ECN bounds; SACK recovery as [`Self::Cubic`].
    Bbr3,
    /// TCP Vegas ([`Vegas`]): delay-based congestion avoidance; SACK recovery as
    /// [`Self::Cubic`].
    Vegas,
    /// TCP Westwood+ ([`WestwoodPlus`]): AIMD growth, the window after a loss from the
    /// estimated bandwidth; SACK recovery as [`Self::Cubic`].
    WestwoodPlus,
}

impl CongestionAlgorithm {
    /// A fresh controller. `byte_counting` selects RFC 3465 (L = 2·SMSS) growth in slow start
    /// (and, for [`Aimd`], in congestion avoidance); `seed` feeds BBR's random choice of its
    /// first gain-cycle phase and BBR v3's waits between bandwidth probes.
    pub fn build(self, byte_counting: bool, seed: u64) -> AnyController {
        match self {
            CongestionAlgorithm::Aimd => AnyController::Aimd(Aimd::new(byte_counting)),
            CongestionAlgorithm::Cubic => AnyController::Cubic(Cubic::new(byte_counting)),
            CongestionAlgorithm::Bbr => AnyController::Bbr(Box::new(Bbr::new(seed))),
            CongestionAlgorithm::Bbr3 => AnyController::Bbr3(Box::new(Bbr3::new(seed))),
            CongestionAlgorithm::Vegas => AnyController::Vegas(Vegas::new(byte_counting)),
            CongestionAlgorithm::WestwoodPlus => AnyController::WestwoodPlus(WestwoodPlus::new(byte_counting)),
        }
    }

    /// Whether the connection recovers with RFC 6675 when SACK is negotiated, whatever its
    /// configured [`LossRecovery`](super::LossRecovery).
    pub fn wants_sack_recovery(self) -> bool {
        !matches!(self, CongestionAlgorithm::Aimd)
    }
}

/// RFC 5681 §3.1 eq. (2) slow start, with RFC 3465's limit L (§2.2, §2.3) if asked.
pub(super) fn slow_start(w: Window, acked: u64, byte_counting: bool, cx: &CcContext) -> u64 {
    let l = if byte_counting && !cx.after_timeout {
        2 * cx.smss
    } else {
        cx.smss
    };
    w.cwnd + acked.min(l)
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
            slow_start(w, acked, self.byte_counting, cx)
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
            // RFC 5681 §3.2 step 6: cwnd = ssthresh when recovery ends. RFC 3168 §6.1.2: an
            // ECE halves the window the same way.
            CongestionEvent::DupAcks | CongestionEvent::Ece => ssthresh,
            // RFC 5681 §3.1: after a timeout cwnd is the loss window LW = 1 full-sized segment.
            CongestionEvent::Timeout => cx.smss,
        };
        Window { cwnd, ssthresh }
    }
}

/// CUBIC's C, segments/s³ (RFC 9438 §4.2: 0.4).
pub const CUBIC_C: f64 = 0.4;
/// CUBIC's multiplicative decrease factor β_cubic (RFC 9438 §4.6: 0.7).
pub const CUBIC_BETA: f64 = 0.7;

/// CUBIC, RFC 9438. Windows are computed in segments, as the RFC's formulas are written, and
/// converted to bytes with SMSS; the window in segments is kept as a fraction between ACKs so
/// that growth of less than a byte per ACK is not lost.
///
/// * Slow start (`cwnd < ssthresh`): RFC 5681 (§4.10 of RFC 9438 allows HyStart++; not used).
/// * Congestion avoidance (§4.2): a stage starts at the first ACK of new data at or above
///   `ssthresh` after a congestion event; `t` counts from then, `cwnd_epoch` is the window then
///   and K = ∛((W_max − cwnd_epoch)/C) (Figure 2; with `cwnd_epoch` = β·W_max this is the
///   ∛(W_max·(1 − β)/C) of RFC 8312). W_cubic(t) = C·(t − K)³ + W_max (Figure 1).
/// * Per ACK acknowledging `n` segments' worth of bytes: the Reno-friendly estimate grows by
///   W_est += α·n/cwnd, α = 3(1 − β)/(1 + β), or 1 once W_est ≥ cwnd_prior (§4.3); if
///   W_cubic(t) < W_est the window is W_est (Reno-friendly region); otherwise (concave below
///   W_max, §4.4; convex above, §4.5) target = W_cubic(t + RTT) bounded to [cwnd, 1.5·cwnd]
///   (§4.2) and cwnd += n·(target − cwnd)/cwnd. The RFC says "per received ACK"; counting
///   acknowledged segments instead keeps the curve with delayed ACKs (as W_est's formula does).
/// * Loss (§4.6): ssthresh = max(FlightSize·β, 2·SMSS), cwnd = ssthresh after fast recovery,
///   W_max = cwnd at the event, or cwnd·(1 + β)/2 if below the previous W_max (fast
///   convergence, §4.7); cwnd_prior = cwnd.
/// * Timeout (§4.8): ssthresh as above, cwnd = 1·SMSS; in the first congestion avoidance stage
///   after it, K = 0 and W_max = the window at the start of that stage. Before any congestion
///   event the first stage does the same (no W_max is known yet).
/// * Not implemented: spurious-loss undo (§4.9), application-limited handling (§5.8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    byte_counting: bool,
    /// cwnd in segments, as last returned (resynchronised when the connection changed it).
    cwnd_seg: f64,
    /// W_max, segments (0 until known).
    w_max: f64,
    /// K, seconds.
    k: f64,
    /// Start of the current congestion avoidance stage.
    t_epoch: Option<SimTime>,
    /// cwnd at the start of the stage, segments.
    cwnd_epoch: f64,
    /// Reno-friendly estimate W_est, segments.
    w_est: f64,
    /// cwnd at the last congestion event, segments.
    cwnd_prior: f64,
    /// The next stage sets W_max = cwnd_epoch and K = 0 (after a timeout, or before any event).
    restart_k0: bool,
}

/// α_cubic of the Reno-friendly region (RFC 9438 §4.3): 3(1 − β)/(1 + β).
const CUBIC_ALPHA: f64 = 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);

impl Cubic {
    /// A controller; `byte_counting` selects RFC 3465 in slow start.
    pub fn new(byte_counting: bool) -> Self {
        Cubic {
            byte_counting,
            cwnd_seg: 0.0,
            w_max: 0.0,
            k: 0.0,
            t_epoch: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
            restart_k0: true,
        }
    }

    /// W_max in segments (0 before the first congestion avoidance stage or event).
    pub fn w_max(&self) -> f64 {
        self.w_max
    }
    /// K in seconds, of the current stage.
    pub fn k(&self) -> f64 {
        self.k
    }
    /// Start of the current congestion avoidance stage.
    pub fn epoch_start(&self) -> Option<SimTime> {
        self.t_epoch
    }

    /// RFC 9438 Figure 1: W_cubic(t), segments.
    pub fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        CUBIC_C * d * d * d + self.w_max
    }

    fn segments(&mut self, cwnd: u64, smss: u64) -> f64 {
        // The connection may have changed cwnd since we last returned it (recovery, restart
        // after idle): then start from its value.
        if (self.cwnd_seg * smss as f64) as u64 != cwnd {
            self.cwnd_seg = cwnd as f64 / smss as f64;
        }
        self.cwnd_seg
    }

    fn bytes(&self, smss: u64) -> u64 {
        (self.cwnd_seg * smss as f64) as u64
    }
}

impl CongestionController for Cubic {
    fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        let smss = cx.smss.max(1);
        let cwnd = self.segments(w.cwnd, smss);
        if w.cwnd < w.ssthresh {
            // RFC 9438 §4.10: standard slow start.
            self.cwnd_seg = slow_start(w, acked, self.byte_counting, cx) as f64 / smss as f64;
            return Window {
                cwnd: self.bytes(smss),
                ssthresh: w.ssthresh,
            };
        }
        let t_epoch = match self.t_epoch {
            Some(t) => t,
            None => {
                // RFC 9438 §4.2: a congestion avoidance stage begins.
                self.t_epoch = Some(now);
                self.cwnd_epoch = cwnd;
                self.w_est = cwnd;
                if self.restart_k0 || self.w_max <= cwnd {
                    // §4.8 (after a timeout; also before any congestion event, and when the
                    // window already passed W_max): W_max = cwnd_epoch, K = 0.
                    self.w_max = cwnd;
                    self.k = 0.0;
                    self.restart_k0 = false;
                } else {
                    // §4.2 Figure 2.
                    self.k = libm::cbrt((self.w_max - cwnd) / CUBIC_C);
                }
                now
            }
        };
        let n = acked as f64 / smss as f64;
        let t = now.saturating_since(t_epoch).as_secs_f64();
        let rtt = cx.srtt.map_or(0.0, |r| r.as_secs_f64());
        // §4.3: the Reno-friendly estimate.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            CUBIC_ALPHA
        };
        self.w_est += alpha * n / cwnd;
        if self.w_cubic(t) < self.w_est {
            // §4.3: Reno-friendly region: cwnd = W_est.
            self.cwnd_seg = cwnd.max(self.w_est);
        } else {
            // §4.4 concave / §4.5 convex region; target of §4.2 bounded to [cwnd, 1.5·cwnd].
            let target = self.w_cubic(t + rtt).max(cwnd).min(1.5 * cwnd);
            self.cwnd_seg = cwnd + n * (target - cwnd) / cwnd;
        }
        Window {
            cwnd: self.bytes(smss),
            ssthresh: w.ssthresh,
        }
    }

    fn on_congestion_event(&mut self, _now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        let smss = cx.smss.max(1);
        let cwnd = self.segments(w.cwnd, smss);
        // §4.7 fast convergence: a window below the last W_max releases bandwidth.
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + CUBIC_BETA) / 2.0
        } else {
            cwnd
        };
        self.cwnd_prior = cwnd;
        self.t_epoch = None;
        // §4.6: ssthresh = FlightSize·β_cubic, at least 2·SMSS.
        let ssthresh = ((cx.flight_size as f64 * CUBIC_BETA) as u64).max(2 * smss);
        let cwnd = match event {
            // §4.6: cwnd = ssthresh once recovery is over; an ECE (§4.6: a congestion event
            // detected by ECN) at once.
            CongestionEvent::DupAcks | CongestionEvent::Ece => {
                self.restart_k0 = false;
                ssthresh
            }
            // §4.8: Reno's loss window; the next stage uses K = 0.
            CongestionEvent::Timeout => {
                self.restart_k0 = true;
                smss
            }
        };
        self.cwnd_seg = cwnd as f64 / smss as f64;
        Window { cwnd, ssthresh }
    }
}

/// A congestion controller: a built-in one, or a boxed one for experiments.
#[derive(Debug)]
pub enum AnyController {
    /// [`Aimd`] (RFC 5681).
    Aimd(Aimd),
    /// [`Cubic`] (RFC 9438).
    Cubic(Cubic),
    /// [`Bbr`] (BBR v1), boxed: its state is the largest.
    Bbr(Box<Bbr>),
    /// [`Bbr3`] (BBR v3), boxed.
    Bbr3(Box<Bbr3>),
    /// [`Vegas`].
    Vegas(Vegas),
    /// [`WestwoodPlus`].
    WestwoodPlus(WestwoodPlus),
    /// A user-supplied controller (one virtual call per ACK).
    Custom(Box<dyn CongestionController + Send>),
}

/// Calls `$call` on whichever controller `$self` holds.
macro_rules! dispatch {
    ($self:expr, $c:ident => $call:expr) => {
        match $self {
            AnyController::Aimd($c) => $call,
            AnyController::Cubic($c) => $call,
            AnyController::Bbr($c) => $call,
            AnyController::Bbr3($c) => $call,
            AnyController::Vegas($c) => $call,
            AnyController::WestwoodPlus($c) => $call,
            AnyController::Custom($c) => $call,
        }
    };
}

impl AnyController {
    /// See [`CongestionController::on_ack`].
    #[inline]
    pub fn on_ack(&mut self, now: SimTime, acked: u64, w: Window, cx: &CcContext) -> Window {
        dispatch!(self, c => c.on_ack(now, acked, w, cx))
    }
    /// See [`CongestionController::on_congestion_event`].
    #[inline]
    pub fn on_congestion_event(&mut self, now: SimTime, event: CongestionEvent, w: Window, cx: &CcContext) -> Window {
        dispatch!(self, c => c.on_congestion_event(now, event, w, cx))
    }
    /// See [`CongestionController::on_sent`].
    #[inline]
    pub fn on_sent(&mut self, now: SimTime, bytes: u64) {
        dispatch!(self, c => c.on_sent(now, bytes))
    }
    /// See [`CongestionController::on_rtt_sample`].
    #[inline]
    pub fn on_rtt_sample(&mut self, now: SimTime, rtt: SimDuration) {
        dispatch!(self, c => c.on_rtt_sample(now, rtt))
    }
    /// See [`CongestionController::on_ack_event`].
    #[inline]
    pub fn on_ack_event(&mut self, now: SimTime, ev: &AckEvent, w: Window, cx: &CcContext) -> Option<Window> {
        dispatch!(self, c => c.on_ack_event(now, ev, w, cx))
    }
    /// See [`CongestionController::pacing_rate`].
    #[inline]
    pub fn pacing_rate(&self, w: Window, cx: &CcContext) -> Option<f64> {
        dispatch!(self, c => c.pacing_rate(w, cx))
    }
    /// See [`CongestionController::needs_rate_samples`].
    pub fn needs_rate_samples(&self) -> bool {
        dispatch!(self, c => c.needs_rate_samples())
    }
    /// Whether [`Self::on_ack_event`] does anything (the connection skips building the
    /// [`AckEvent`] otherwise).
    pub fn wants_ack_events(&self) -> bool {
        matches!(
            self,
            AnyController::Bbr(_) | AnyController::Bbr3(_) | AnyController::WestwoodPlus(_) | AnyController::Custom(_)
        )
    }
    /// The estimates of a model-based controller, as time-series values: BBR's state
    /// (`bbr_state`: [`BbrModel::state`]), `btlbw_bps` and `rtprop_s`, BBR v3's
    /// `inflight_hi_bytes` and `inflight_lo_bytes`; Westwood+'s `bwe_bps`; Vegas' `base_rtt_s`.
    pub fn model_series(&self, out: &mut Vec<(&'static str, Option<f64>)>) {
        if let Some(b) = self.bbr() {
            out.push(("bbr_state", Some(f64::from(b.state))));
            out.push(("btlbw_bps", Some(b.bw * 8.0)));
            out.push(("rtprop_s", b.min_rtt.map(|r| r.as_secs_f64())));
        }
        match self {
            AnyController::Bbr3(b) => {
                out.push(("inflight_hi_bytes", b.inflight_longterm().map(|v| v as f64)));
                out.push(("inflight_lo_bytes", b.inflight_shortterm().map(|v| v as f64)));
            }
            AnyController::WestwoodPlus(w) => out.push(("bwe_bps", Some(w.bwe() * 8.0))),
            AnyController::Vegas(v) => out.push(("base_rtt_s", v.base_rtt().map(|r| r.as_secs_f64()))),
            _ => {}
        }
    }
    /// BBR's (v1 or v3) state and estimates, for the report and the per-ACK samples.
    pub fn bbr(&self) -> Option<BbrModel> {
        match self {
            AnyController::Bbr(b) => Some(BbrModel {
                state: b.state().code(),
                bw: b.btlbw(),
                min_rtt: b.rtprop(),
            }),
            AnyController::Bbr3(b) => Some(BbrModel {
                state: b.state().code(),
                bw: b.max_bw(),
                min_rtt: b.min_rtt(),
            }),
            _ => None,
        }
    }
    /// CUBIC's W_max in bytes (`None` for other controllers, or before it is known).
    pub fn w_max_bytes(&self, smss: u64) -> Option<f64> {
        match self {
            AnyController::Cubic(c) if c.w_max > 0.0 => Some(c.w_max * smss as f64),
            _ => None,
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
            initial_window: 2 * SMSS,
            ..Default::default()
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

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    fn cubic_cx(flight_size: u64, srtt_ms: u64) -> CcContext {
        CcContext {
            smss: SMSS,
            flight_size,
            srtt: Some(SimDuration::from_millis(srtt_ms)),
            after_timeout: false,
            initial_window: 2 * SMSS,
            ..Default::default()
        }
    }

    /// RFC 9438 §4.6/§4.7: at a loss, W_max = cwnd, ssthresh = FlightSize·0.7 = cwnd after
    /// recovery; the next congestion avoidance stage has K = ∛((W_max − cwnd_epoch)/C) (§4.2),
    /// and W_cubic(0) = cwnd_epoch, W_cubic(K) = W_max.
    #[test]
    fn cubic_reduction_sets_w_max_and_k() {
        let mut c = Cubic::new(false);
        let w = Window {
            cwnd: 100_000,
            ssthresh: 50_000,
        };
        let r = c.on_congestion_event(at(0), CongestionEvent::DupAcks, w, &cubic_cx(100_000, 100));
        assert_eq!(
            r,
            Window {
                cwnd: 70_000,
                ssthresh: 70_000
            }
        );
        assert_eq!(c.w_max(), 100.0);
        c.on_ack(at(1000), SMSS, r, &cubic_cx(70_000, 100));
        let k = libm::cbrt(30.0 / CUBIC_C);
        assert!((c.k() - k).abs() < 1e-12, "K {} vs {k}", c.k());
        assert_eq!(c.epoch_start(), Some(at(1000)));
        assert!((c.w_cubic(0.0) - 70.0).abs() < 1e-9);
        assert!((c.w_cubic(k) - 100.0).abs() < 1e-9);
    }

    /// RFC 9438 §4.2: per ACK, cwnd moves (target − cwnd)/cwnd per segment acknowledged
    /// towards target = W_cubic(t + RTT), which is bounded by 1.5·cwnd; §4.4 concave region.
    #[test]
    fn cubic_grows_towards_w_cubic_of_t_plus_rtt_bounded_by_one_and_a_half() {
        let mut c = Cubic::new(false);
        let w = Window {
            cwnd: 100_000,
            ssthresh: 50_000,
        };
        let mut w = c.on_congestion_event(at(0), CongestionEvent::DupAcks, w, &cubic_cx(100_000, 100));
        // The epoch starts (t = 0, where W_cubic is still cwnd_epoch: the Reno-friendly W_est
        // is just above it); half a second later W_cubic(t + RTT) is well above.
        w = c.on_ack(at(1000), SMSS, w, &cubic_cx(70_000, 100));
        let k = c.k();
        let cwnd = w.cwnd as f64 / SMSS as f64;
        w = c.on_ack(at(1500), SMSS, w, &cubic_cx(70_000, 100));
        let target = c.w_cubic(0.6);
        assert!(target > cwnd && target < 1.5 * cwnd);
        let expect = cwnd + (target - cwnd) / cwnd;
        assert!(
            (w.cwnd as f64 / SMSS as f64 - expect).abs() < 2e-3,
            "{} vs {expect}",
            w.cwnd
        );
        // Far into the convex region the target is capped at 1.5·cwnd.
        let cwnd = w.cwnd as f64 / SMSS as f64;
        let later = at(1000 + (k * 1000.0) as u64 + 60_000);
        let w2 = c.on_ack(later, SMSS, w, &cubic_cx(70_000, 100));
        let grown = w2.cwnd as f64 / SMSS as f64 - cwnd;
        assert!(
            (grown - 0.5).abs() < 1e-3,
            "grew {grown} segments: (1.5·cwnd − cwnd)/cwnd"
        );
    }

    /// RFC 9438 §4.3: while W_cubic(t) is below the Reno-friendly estimate W_est (here with a
    /// tiny W_max − cwnd gap and a large RTT), cwnd = W_est, which grows by α = 3(1−β)/(1+β)
    /// per window.
    #[test]
    fn cubic_reno_friendly_region_follows_w_est() {
        let mut c = Cubic::new(false);
        let w = Window {
            cwnd: 10_000,
            ssthresh: 5_000,
        };
        let mut w = c.on_congestion_event(at(0), CongestionEvent::DupAcks, w, &cubic_cx(10_000, 100));
        assert_eq!(w.cwnd, 7000);
        // Within the first moments W_cubic(t) ≈ cwnd_epoch = W_est; after one window of ACKs
        // W_est has grown by α while W_cubic(t) has barely moved.
        for i in 0..7 {
            w = c.on_ack(at(1000 + i), SMSS, w, &cubic_cx(7000, 1));
        }
        let alpha = 3.0 * (1.0 - CUBIC_BETA) / (1.0 + CUBIC_BETA);
        let seg = w.cwnd as f64 / SMSS as f64;
        assert!(
            (seg - (7.0 + alpha)).abs() < 0.05,
            "cwnd {seg} segments, W_est 7 + {alpha}"
        );
    }

    /// RFC 9438 §4.7 fast convergence: a loss below the previous W_max sets W_max =
    /// cwnd·(1 + β)/2.
    #[test]
    fn cubic_fast_convergence() {
        let mut c = Cubic::new(false);
        let w = Window {
            cwnd: 100_000,
            ssthresh: 50_000,
        };
        let r = c.on_congestion_event(at(0), CongestionEvent::DupAcks, w, &cubic_cx(100_000, 100));
        let w = Window { cwnd: 80_000, ..r };
        c.on_congestion_event(at(5000), CongestionEvent::DupAcks, w, &cubic_cx(80_000, 100));
        assert!((c.w_max() - 80.0 * 1.7 / 2.0).abs() < 1e-9);
    }

    /// RFC 9438 §4.8: a timeout sets ssthresh from β and cwnd = 1 SMSS; the first congestion
    /// avoidance stage after it has K = 0 and W_max = the window at its start.
    #[test]
    fn cubic_after_timeout_k_is_zero() {
        let mut c = Cubic::new(false);
        let w = Window {
            cwnd: 100_000,
            ssthresh: u64::MAX,
        };
        let r = c.on_congestion_event(at(0), CongestionEvent::Timeout, w, &cubic_cx(100_000, 100));
        assert_eq!(
            r,
            Window {
                cwnd: 1000,
                ssthresh: 70_000
            }
        );
        let mut w = r;
        while w.cwnd < w.ssthresh {
            w = c.on_ack(at(100), SMSS, w, &cubic_cx(w.cwnd, 100));
        }
        assert_eq!(c.epoch_start(), None, "slow start is not a stage");
        c.on_ack(at(2000), SMSS, w, &cubic_cx(w.cwnd, 100));
        assert_eq!((c.k(), c.w_max()), (0.0, 70.0));
    }
}

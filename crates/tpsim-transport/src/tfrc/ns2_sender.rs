//! ns-2.35's TFRC sender (Agent/TFRC, `tcp/tfrc.cc`, with the defaults of `ns-default.tcl`
//! and `SndrType_ 1`: it sends what the application gives), for [`SenderRule::Ns2`].
//!
//! It is not RFC 5348's sender (see `sender.rs`), and differs from it in these rules:
//!
//! * **A send timer** runs from the first packet on at one packet per s/X_inst and keeps
//!   running while the sender has nothing to send (`nextpkt`): a tick with a message queued
//!   sends it; a tick with none marks the sender data-limited, and the next message is then
//!   sent at once, the timer left as it was (`advanceby`). A feedback in slow start and every
//!   expiry of the no-feedback timer also send a packet (if one is queued) and restart the
//!   send timer.
//! * **The first packet** goes at the initial rate of 300 B/s (`InitRate_`): the send timer
//!   first expires s/300 s later (3.3 s for 1000-byte packets) unless a feedback comes first.
//! * **The equation** (`p_to_b` in `formula.h`) takes t_RTO from a TCP-style estimate in
//!   100-ms ticks (`update_rtt`: SRTT + 4·RTTVAR, as TCP's 3-bit/2-bit fixed point), not 4R;
//!   no rate is above 25 MB/s (`MAXRATE`).
//! * **Slow start** (`slowstart`): the first two feedbacks set X to the initial window's rate
//!   (4, 3 or 2 packets per R, RFC 3390 by packet size); later ones double X at most once per
//!   R up to twice the reported receive rate (`ssmult_` 2), halve it to the receive rate when
//!   above twice that, and, after a data-limited period, keep it at least at the initial
//!   window's rate. While the rate grows in slow start, packets are spaced at a rate that
//!   climbs towards X by (X − X_old)/(X·R/s) per packet (`slow_increase_`). The first
//!   feedback reporting a loss ends slow start with X = the equation's rate.
//! * **After slow start** (`increase_rate`, `decrease_rate`): when the equation allows more
//!   than X, X grows by s/R per R elapsed since the last change (at most 2·s/R), capped by
//!   twice the receive rate (at least s/R, or the initial window's rate after a data-limited
//!   period) and by the equation; otherwise X is the equation's rate, capped by twice the
//!   receive rate (`maxHeavyRounds_` 0).
//! * **No feedback** for max(2R, 2s/X) (`reduce_rate_on_no_feedback`): X halves, except that
//!   a data-limited sender keeps at least the initial window's rate; the packets that follow
//!   ask for feedback at once (`UrgentFlag`) until a feedback comes.
//! * **Packet spacing** is s/X_inst with X_inst = X·R_sqmean/√R_sample (`ca_` 1) from the
//!   first feedback on; R and R_sqmean are filtered with `df_` 0.95.
//! * Every feedback is processed, a copy or a late one included.
//!
//! The receiver reports its receive rate as packets per second (`est_thput`); tpsim's
//! feedback carries bytes per second, packets per second times the mean message size, and
//! this sender divides by its own mean message size.

use super::sender::{data_segment, read_feedback, wire_us};
use super::TfrcConfig;
use crate::{Message, Segment, SendError, SocketConfig, TransportStats};
use std::collections::VecDeque;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::tfrc::TfrcRepr;

/// `tcp_tick_`: the granularity of the t_RTO estimate, s.
const TCP_TICK: f64 = 0.1;
/// `SMALLFLOAT` of tfrc.h: rates at or below it send nothing; the shortest timer, s.
const SMALLFLOAT: f64 = 1e-7;
/// `MAXRATE` of formula.h: the largest rate the equation gives, bytes/s.
const MAXRATE: f64 = 25_000_000.0;
/// `ssmult_`: the slow-start factor per R.
const SSMULT: f64 = 2.0;

/// tfrc.cc's `rate_change_`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    SlowStart,
    CongestionAvoidance,
    Decrease,
    SlowStartEnded,
}

/// The throughput equation of ns-2.35's `p_to_b` (formula.h), bytes/s: s / (R·√(2bp/3) +
/// min(1, 3·√(3bp/8))·t_RTO·p·(1 + 32p²)), at most [`MAXRATE`] (also for p = 0).
pub(super) fn p_to_b(p: f64, r: f64, t_rto: f64, s: f64, b: f64) -> f64 {
    if p < 0.0 || r < 0.0 {
        return MAXRATE;
    }
    let mut res = r * (2.0 * b * p / 3.0).sqrt();
    let tmp1 = (3.0 * (3.0 * b * p / 8.0).sqrt()).min(1.0);
    let tmp2 = t_rto * p * (1.0 + 32.0 * p * p);
    res += tmp1 * tmp2;
    if res < SMALLFLOAT {
        MAXRATE
    } else {
        (s / res).min(MAXRATE)
    }
}

#[derive(Debug)]
pub(super) struct Ns2Sender {
    pub(super) queue: VecDeque<Message>,
    /// Packets sent at this instant, not yet handed out by `poll_transmit`.
    out: VecDeque<(Message, TfrcRepr)>,
    started: bool,
    seq: u32,
    /// X (`rate_`), bytes/s.
    x: f64,
    /// `oldrate_` and `delta_` of the slow increase, bytes/s.
    x_old: f64,
    delta: f64,
    phase: Phase,
    urgent: bool,
    /// R (`rtt_`), R_sqmean (`sqrtrtt_`), R_sample (`rttcur_`), s; t_RTO (`tzero_`), s.
    r: f64,
    r_sqmean: f64,
    r_sample: f64,
    t_rto: f64,
    /// TCP's fixed-point SRTT (3 fraction bits) and RTTVAR (2), in ticks.
    t_srtt: i32,
    t_rttvar: i32,
    /// `last_change_`, s.
    last_change: f64,
    /// Twice the receive rate (`maxrate_`, `ss_maxrate_`), bytes/s; 0 until the second feedback.
    max_x: f64,
    /// The equation's rate at the last feedback (`rcvrate`), bytes/s.
    x_calc: f64,
    rounds: u64,
    heavy_rounds: u32,
    first_feedback: bool,
    data_limited: bool,
    all_idle: bool,
    /// `lastlimited_`: when a message last found the sender data-limited, s.
    last_limited: f64,
    send_at: Option<SimTime>,
    nofeedback_at: Option<SimTime>,
    p: f64,
    last_x_recv: Option<f64>,
    nofeedback_expiries: u64,
    msg_sum: u64,
    msg_count: u64,
    pub(super) rtt_samples: u64,
    pub(super) rtt_sum_ns: u64,
}

impl Ns2Sender {
    pub(super) fn new() -> Self {
        Ns2Sender {
            queue: VecDeque::with_capacity(8),
            out: VecDeque::with_capacity(2),
            started: false,
            seq: 0,
            x: 0.0,
            x_old: 0.0,
            delta: 0.0,
            phase: Phase::SlowStart,
            urgent: true,
            r: 0.0,
            r_sqmean: 1.0,
            r_sample: 1.0,
            t_rto: 0.0,
            t_srtt: 0,
            t_rttvar: 0,
            last_change: 0.0,
            max_x: 0.0,
            x_calc: 0.0,
            rounds: 0,
            heavy_rounds: 0,
            first_feedback: false,
            data_limited: false,
            all_idle: false,
            last_limited: 0.0,
            send_at: None,
            nofeedback_at: None,
            p: 0.0,
            last_x_recv: None,
            nofeedback_expiries: 0,
            msg_sum: 0,
            msg_count: 0,
            rtt_samples: 0,
            rtt_sum_ns: 0,
        }
    }

    /// X, bytes/s (0 before the first message).
    pub(super) fn x(&self) -> f64 {
        self.x
    }

    /// R, s; `None` before the first feedback.
    pub(super) fn r(&self) -> Option<f64> {
        (self.r > 0.0).then_some(self.r)
    }

    /// The loss event rate p of the last feedback.
    pub(super) fn p(&self) -> f64 {
        self.p
    }

    /// X_recv of the last feedback, bytes/s.
    pub(super) fn last_x_recv(&self) -> Option<f64> {
        self.last_x_recv
    }

    pub(super) fn nofeedback_expiries(&self) -> u64 {
        self.nofeedback_expiries
    }

    /// s (`packetSize_`), bytes: the configured segment or packet size, else the mean message.
    fn s(&self, cfg: &TfrcConfig) -> f64 {
        match cfg.segment_size.or(cfg.packet_size) {
            Some(s) => s as f64,
            None => self.msg_mean(),
        }
    }

    fn msg_mean(&self) -> f64 {
        if self.msg_count == 0 {
            1.0
        } else {
            self.msg_sum as f64 / self.msg_count as f64
        }
    }

    /// tfrc.cc `sendmsg`/`advanceby`: a message from the application.
    pub(super) fn send(&mut self, cfg: &TfrcConfig, now: SimTime, msg: Message) -> Result<(), SendError> {
        if cfg.send_queue.is_some_and(|limit| self.queue.len() >= limit) {
            return Err(SendError::QueueFull);
        }
        self.msg_sum += msg.len.max(1) as u64;
        self.msg_count += 1;
        self.queue.push_back(msg);
        if !self.started {
            self.start(cfg, now);
        } else if self.data_limited {
            // Data-limited: this message goes now, the send timer left running.
            self.data_limited = false;
            self.last_limited = now.as_secs_f64();
            self.all_idle = false;
            self.send_packet(now);
        }
        Ok(())
    }

    /// tfrc.cc `start`: the first packet at the initial rate.
    fn start(&mut self, cfg: &TfrcConfig, now: SimTime) {
        self.started = true;
        self.x = cfg.rate.initial_x.unwrap_or_else(|| self.s(cfg));
        self.x_old = self.x;
        let s = self.s(cfg);
        self.send_packet(now);
        self.send_at = Some(now + secs(s / self.x));
        self.nofeedback_at = Some(now + secs(2.0 * s / self.x));
    }

    /// tfrc.cc `sendpkt`: the next queued message goes now, stamped with R and the urgent flag.
    fn send_packet(&mut self, now: SimTime) {
        let Some(msg) = self.queue.pop_front() else {
            return;
        };
        let rtt_us = if self.r > 0.0 {
            (self.r * 1e6).round().clamp(1.0, u32::MAX as f64) as u32
        } else {
            0
        };
        let h = TfrcRepr::Data {
            seq: self.seq,
            timestamp: wire_us(now),
            rtt: rtt_us,
            urgent: self.urgent,
        };
        self.seq = self.seq.wrapping_add(1);
        self.out.push_back((msg, h));
    }

    /// tfrc.cc `nextpkt`: a packet if one is queued (else the sender is data-limited), and the
    /// send timer restarted at the current spacing.
    fn next_packet(&mut self, cfg: &TfrcConfig, now: SimTime) {
        if self.queue.is_empty() {
            self.data_limited = true;
        } else {
            self.send_packet(now);
        }
        let x_inst = if self.rounds > 2 && self.phase == Phase::SlowStart && self.x_old + SMALLFLOAT < self.x {
            // slow_increase_: the spacing's rate climbs towards X packet by packet.
            self.x_old += self.delta;
            self.x_old
        } else if cfg.rate.oscillation_prevention {
            self.x * self.r_sqmean / self.r_sample.sqrt()
        } else {
            self.x
        };
        if x_inst > SMALLFLOAT {
            self.send_at = Some(now + secs((self.s(cfg) / x_inst).max(SMALLFLOAT)));
        }
    }

    /// tfrc.cc `update_rtt`: t_RTO in 100-ms ticks as TCP's (RFC 6298's SRTT + 4·RTTVAR),
    /// R and R_sqmean filtered with `df_`.
    fn update_rtt(&mut self, cfg: &TfrcConfig, sample: f64) {
        let t_rtt = ((sample / TCP_TICK + 0.5) as i32).max(1);
        if self.t_srtt != 0 {
            let mut delta = t_rtt - (self.t_srtt >> 3);
            self.t_srtt += delta;
            if self.t_srtt <= 0 {
                self.t_srtt = 1;
            }
            delta = delta.abs() - (self.t_rttvar >> 2);
            self.t_rttvar += delta;
            if self.t_rttvar <= 0 {
                self.t_rttvar = 1;
            }
        } else {
            self.t_srtt = t_rtt << 3;
            self.t_rttvar = t_rtt << 1;
        }
        self.t_rto = (((self.t_rttvar << 3) + self.t_srtt) >> 3) as f64 * TCP_TICK;
        let q = cfg.rate.q;
        if self.r > 0.0 {
            self.r = q * self.r + (1.0 - q) * sample;
            self.r_sqmean = q * self.r_sqmean + (1.0 - q) * sample.sqrt();
        } else {
            self.r = sample;
            self.r_sqmean = sample.sqrt();
        }
        self.r_sample = sample;
    }

    /// tfrc.cc `recv`: a feedback packet.
    pub(super) fn on_feedback(&mut self, cfg: &TfrcConfig, now: SimTime, h: TfrcRepr) {
        let Some((_, sample_us, x_recv, p)) = read_feedback(now, h) else {
            return;
        };
        if !self.started {
            return;
        }
        self.rtt_samples += 1;
        self.rtt_sum_ns += sample_us as u64 * 1000;
        let s = self.s(cfg);
        self.last_x_recv = Some(x_recv);
        let packets_per_s = x_recv / self.msg_mean();
        self.p = p;
        self.rounds += 1;
        self.urgent = false;
        self.max_x = if self.rounds > 1 && packets_per_s > 0.0 {
            2.0 * packets_per_s * s
        } else {
            0.0
        };
        self.update_rtt(cfg, sample_us as f64 * 1e-6);
        self.x_calc = p_to_b(self.p, self.r, self.t_rto, s, cfg.rate.b);
        self.restart_nofeedback(now, s);
        let now_s = now.as_secs_f64();
        if !self.first_feedback {
            self.first_feedback = true;
            self.slow_start(cfg, now_s);
            self.next_packet(cfg, now);
        } else if self.phase == Phase::SlowStart {
            if self.p > 0.0 {
                self.phase = Phase::SlowStartEnded;
                self.x = self.x_calc;
                self.x_old = self.x;
            } else {
                self.slow_start(cfg, now_s);
                self.next_packet(cfg, now);
            }
        } else if self.x_calc > self.x {
            self.increase(cfg, now_s);
        } else {
            self.decrease(s, now_s);
        }
    }

    /// The no-feedback timer: max(2R, 2s/X) from now.
    fn restart_nofeedback(&mut self, now: SimTime, s: f64) {
        let t = (2.0 * self.r).max(2.0 * s / self.x);
        self.nofeedback_at = Some(now + secs(t));
    }

    /// Whether the sender was data-limited now or within the last 1.5·R.
    fn recently_limited(&self, now_s: f64) -> bool {
        self.data_limited || self.last_limited > now_s - 1.5 * self.r
    }

    /// The X_old/delta pair of the slow increase after X changed from `old`.
    fn set_slow_increase(&mut self, old: f64, s: f64, now_s: f64) {
        self.x_old = old;
        self.delta = (self.x - old) / (self.x * self.r / s);
        self.last_change = now_s;
    }

    /// tfrc.cc `slowstart`.
    fn slow_start(&mut self, cfg: &TfrcConfig, now_s: f64) {
        let s = self.s(cfg);
        let w_init = cfg.rate.initial_window.packets(s);
        let init_x = w_init * s / self.r;
        let old = self.x;
        if self.rounds <= 1 || (self.rounds == 2 && w_init > 1.0) {
            // No receive rate to trust yet: at least the initial window's rate.
            self.x = self.x.max(init_x);
            self.set_slow_increase(old, s, now_s);
        } else if self.max_x > 0.0 {
            if self.recently_limited(now_s) && self.max_x < init_x {
                self.x = self.x.max(init_x);
                self.set_slow_increase(old, s, now_s);
            } else if self.x < self.max_x && now_s - self.last_change > self.r {
                self.x = (SSMULT * self.x).min(self.max_x).max(s / self.r);
                self.set_slow_increase(old, s, now_s);
            } else if self.x > self.max_x {
                self.x = self.max_x / 2.0;
                self.x_old = self.x;
                self.delta = 0.0;
                self.last_change = now_s;
            }
        } else {
            // The receiver saw nothing: back to one packet per R.
            self.x_old = old;
            self.x = s / self.r;
            self.delta = 0.0;
            self.last_change = now_s;
        }
    }

    /// tfrc.cc `increase_rate`.
    fn increase(&mut self, cfg: &TfrcConfig, now_s: f64) {
        let s = self.s(cfg);
        let mult = ((now_s - self.last_change) / self.r).min(2.0);
        self.x += s / self.r * mult;
        let floor = if self.recently_limited(now_s) {
            cfg.rate.initial_window.packets(s) * s / self.r
        } else {
            s / self.r
        };
        let cap = self.max_x.max(floor).min(self.x_calc);
        self.x = self.x.min(cap);
        self.phase = Phase::CongestionAvoidance;
        self.last_change = now_s;
        self.heavy_rounds = 0;
    }

    /// tfrc.cc `decrease_rate` (`maxHeavyRounds_` 0: never above twice the receive rate).
    fn decrease(&mut self, s: f64, now_s: f64) {
        self.x = self.x_calc;
        let cap = self.max_x.max(s / self.r);
        if self.x > cap {
            self.heavy_rounds += 1;
            self.x = cap;
        } else {
            self.heavy_rounds = 0;
        }
        self.phase = Phase::Decrease;
        self.last_change = now_s;
    }

    /// tfrc.cc `reduce_rate_on_no_feedback`.
    fn on_nofeedback(&mut self, cfg: &TfrcConfig, now: SimTime) {
        self.nofeedback_expiries += 1;
        let s = self.s(cfg);
        if self.phase != Phase::SlowStart {
            self.phase = Phase::Decrease;
        }
        if !self.all_idle && !self.data_limited {
            self.x *= 0.5;
        } else {
            // A data-limited sender keeps the initial window's rate (infinite before the
            // first feedback: X stays).
            let w = cfg.rate.initial_window.packets(s) * s / self.r;
            if self.x > 2.0 * w {
                self.x *= 0.5;
            } else if self.x > w {
                self.x = w;
            }
        }
        self.urgent = true;
        self.rounds += 1;
        self.restart_nofeedback(now, s);
        if self.data_limited {
            self.all_idle = true;
        }
        self.next_packet(cfg, now);
    }

    /// The send timer and the no-feedback timer, each if due.
    pub(super) fn on_timeout(&mut self, cfg: &TfrcConfig, now: SimTime) {
        if self.send_at.is_some_and(|t| t <= now) {
            self.send_at = None;
            self.next_packet(cfg, now);
        }
        if self.nofeedback_at.is_some_and(|t| t <= now) {
            self.nofeedback_at = None;
            self.on_nofeedback(cfg, now);
        }
    }

    pub(super) fn poll_transmit(
        &mut self,
        sock: &SocketConfig,
        cfg: &TfrcConfig,
        now: SimTime,
        stats: &mut TransportStats,
    ) -> Option<Segment> {
        let (msg, tfrc) = self.out.pop_front()?;
        stats.tx_segments += 1;
        Some(data_segment(sock, cfg, tfrc, msg, now))
    }

    pub(super) fn poll_timeout(&self) -> Option<SimTime> {
        match (self.send_at, self.nofeedback_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// `s` seconds as a duration, at most 10^9 s (a rate halved towards 0 gives timers that
/// never come).
fn secs(s: f64) -> SimDuration {
    SimDuration::from_secs_f64(if s.is_finite() { s.min(1e9) } else { 1e9 })
}

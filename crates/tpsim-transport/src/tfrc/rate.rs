//! The sender's rate computation (RFC 5348 §4): the allowed transmit rate X from the
//! receiver's feedback, slow start, the X_recv set, the no-feedback timer and oscillation
//! prevention.

use super::equation::x_bytes_per_s;
use tpsim_core::{SimDuration, SimTime};

/// Entries kept in X_recv_set (RFC 5348 §4.3 keeps the receive rates of the last two RTTs: one
/// or two with feedback once per RTT, more with expedited feedback). When full, the oldest
/// entry goes.
pub const X_RECV_SET_CAP: usize = 8;

/// How the initial rate W_init/R is computed (RFC 5348 §4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialWindow {
    /// W_init = min(4·s, max(2·s, 4380)) bytes (RFC 5348 §4.2, from RFC 3390).
    Rfc5348,
    /// ns-2.35's `rfc3390()` in tfrc.cc: 4 packets if s ≤ 1095, 3 if s < 2190, else 2.
    Ns2Packets,
}

impl InitialWindow {
    /// W_init for segments of `s` bytes, bytes.
    pub fn bytes(self, s: f64) -> f64 {
        match self {
            InitialWindow::Rfc5348 => (4.0 * s).min((2.0 * s).max(4380.0)),
            InitialWindow::Ns2Packets => s * self.packets(s),
        }
    }

    /// W_init for segments of `s` bytes, packets (whole under ns-2's rule).
    pub fn packets(self, s: f64) -> f64 {
        match self {
            InitialWindow::Rfc5348 => self.bytes(s) / s,
            InitialWindow::Ns2Packets if s <= 1095.0 => 4.0,
            InitialWindow::Ns2Packets if s < 2190.0 => 3.0,
            InitialWindow::Ns2Packets => 2.0,
        }
    }
}

/// Parameters of the rate computation. Sources per field: "RFC 5348 / ns-2.35".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateConfig {
    /// Filter constant q of the RTT estimate R = q·R + (1 − q)·R_sample (RFC 5348 §4.3 step
    /// 1: 0.9) / ns-2.35 `df_` 0.95.
    pub q: f64,
    /// Filter constant q2 of R_sqmean (RFC 5348 §4.5: 0.9) / `df_` 0.95.
    pub q2: f64,
    /// b of the throughput equation (RFC 5348 §3.1: 1) / `bval_` 1.
    pub b: f64,
    /// t_mbi, the maximum back-off interval, s (RFC 5348 §4.3: 64). The rate never falls below
    /// s/t_mbi.
    pub t_mbi_s: f64,
    /// Oscillation prevention (RFC 5348 §4.5, optional: off) / `ca_ 1`: on.
    pub oscillation_prevention: bool,
    /// W_init (RFC 5348 §4.2) / ns-2's packet count (`rate_init_option_ 2`).
    pub initial_window: InitialWindow,
    /// X before the first feedback, bytes/s; `None`: one packet per second, s bytes/s
    /// (RFC 5348 §4.2) / ns-2.35 `InitRate_` 300.
    pub initial_x: Option<f64>,
}

impl RateConfig {
    /// RFC 5348's values.
    pub fn rfc5348() -> Self {
        RateConfig {
            q: 0.9,
            q2: 0.9,
            b: 1.0,
            t_mbi_s: 64.0,
            oscillation_prevention: false,
            initial_window: InitialWindow::Rfc5348,
            initial_x: None,
        }
    }
}

/// What a feedback packet tells the sender (RFC 5348 §3.2.2), decoded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedbackInfo {
    /// R_sample = (t_now − t_recvdata) − t_delay, s (RFC 5348 §4.3 step 1).
    pub r_sample_s: f64,
    /// X_recv, bytes/s.
    pub x_recv: f64,
    /// The loss event rate p.
    pub p: f64,
}

/// The sender's rate state of RFC 5348 §4: X, R, p, X_recv_set, tld.
#[derive(Clone, Debug)]
pub struct RateController {
    cfg: RateConfig,
    x: f64,
    r: Option<f64>,
    r_sample: f64,
    r_sqmean: Option<f64>,
    tld: Option<SimTime>,
    p: f64,
    x_calc: f64,
    recv_limit: f64,
    set: [(f64, SimTime); X_RECV_SET_CAP],
    set_len: usize,
    feedbacks: u64,
    nofeedback_expiries: u64,
    /// X_recv of the last feedback, bytes/s.
    last_x_recv: Option<f64>,
}

impl RateController {
    /// A sender starting at `now` with segment size `s` bytes: X is [`RateConfig::initial_x`]
    /// (s bytes/s, one packet per second, by default) and X_recv_set holds the single value
    /// Infinity (RFC 5348 §4.2).
    pub fn new(cfg: RateConfig, s: f64, now: SimTime) -> Self {
        let mut set = [(0.0, SimTime::ZERO); X_RECV_SET_CAP];
        set[0] = (f64::INFINITY, now);
        RateController {
            cfg,
            x: cfg.initial_x.unwrap_or(s),
            r: None,
            r_sample: 0.0,
            r_sqmean: None,
            tld: None,
            p: 0.0,
            x_calc: f64::INFINITY,
            recv_limit: f64::INFINITY,
            set,
            set_len: 1,
            feedbacks: 0,
            nofeedback_expiries: 0,
            last_x_recv: None,
        }
    }

    /// The parameters.
    pub fn config(&self) -> &RateConfig {
        &self.cfg
    }

    /// The allowed transmit rate X, bytes/s.
    pub fn x(&self) -> f64 {
        self.x
    }

    /// The rate packets are spaced at, bytes/s: X, or with oscillation prevention X_inst =
    /// X·R_sqmean/√R_sample, at least s/t_mbi (RFC 5348 §4.5).
    pub fn x_inst(&self, s: f64) -> f64 {
        match (self.cfg.oscillation_prevention, self.r_sqmean) {
            (true, Some(sq)) if self.r_sample > 0.0 => (self.x * sq / self.r_sample.sqrt()).max(s / self.cfg.t_mbi_s),
            _ => self.x,
        }
    }

    /// The RTT estimate R, s; `None` before the first feedback.
    pub fn r(&self) -> Option<f64> {
        self.r
    }

    /// The most recent RTT sample R_sample, s (0 before the first feedback).
    pub fn r_sample(&self) -> f64 {
        self.r_sample
    }

    /// R_sqmean of RFC 5348 §4.5, √s; `None` before the first feedback.
    pub fn r_sqmean(&self) -> Option<f64> {
        self.r_sqmean
    }

    /// The loss event rate p last reported by the receiver.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// X_Bps, the throughput equation's rate at the last feedback, bytes/s (infinite while
    /// p = 0).
    pub fn x_calc(&self) -> f64 {
        self.x_calc
    }

    /// recv_limit of RFC 5348 §4.3 at the last feedback, bytes/s.
    pub fn recv_limit(&self) -> f64 {
        self.recv_limit
    }

    /// max(X_recv_set), bytes/s (infinite while the initial entry is there).
    pub fn max_x_recv(&self) -> f64 {
        self.set[..self.set_len].iter().map(|e| e.0).fold(0.0, f64::max)
    }

    /// The X_recv_set entries: (X_recv bytes/s, time added).
    pub fn x_recv_set(&self) -> &[(f64, SimTime)] {
        &self.set[..self.set_len]
    }

    /// tld, the time X last doubled in slow start (RFC 5348 §4.2); `None` before the first
    /// feedback.
    pub fn tld(&self) -> Option<SimTime> {
        self.tld
    }

    /// X_recv the last feedback reported, bytes/s; `None` before the first.
    pub fn last_x_recv(&self) -> Option<f64> {
        self.last_x_recv
    }

    /// Feedback packets processed.
    pub fn feedbacks(&self) -> u64 {
        self.feedbacks
    }

    /// No-feedback timer expiries processed.
    pub fn nofeedback_expiries(&self) -> u64 {
        self.nofeedback_expiries
    }

    /// initial_rate = W_init/R, bytes/s (RFC 5348 §4.2); `None` without an RTT estimate.
    pub fn initial_rate(&self, s: f64) -> Option<f64> {
        let w_init = self.cfg.initial_window.bytes(s);
        self.r.map(|r| w_init / r)
    }

    /// How long the no-feedback timer runs from now: max(4R, 2s/X) (RFC 5348 §4.3 step 2 and
    /// 4, §4.4 step 2), or 2s/X before the first RTT estimate (2 s at the initial rate of one
    /// packet per second, §4.2).
    pub fn nofeedback_interval(&self, s: f64) -> SimDuration {
        let two_ipi = 2.0 * s / self.x;
        SimDuration::from_secs_f64(match self.r {
            Some(r) => (4.0 * r).max(two_ipi),
            None => two_ipi,
        })
    }

    fn add_x_recv(&mut self, x_recv: f64, now: SimTime) {
        if self.set_len == X_RECV_SET_CAP {
            self.set.copy_within(1.., 0);
            self.set_len -= 1;
        }
        self.set[self.set_len] = (x_recv, now);
        self.set_len += 1;
    }

    /// RFC 5348 §4.3, Update X_recv_set(): add X_recv, delete entries older than two RTTs.
    fn update_x_recv_set(&mut self, x_recv: f64, now: SimTime, r: f64) {
        self.add_x_recv(x_recv, now);
        let two_r = 2.0 * r;
        let mut j = 0;
        for i in 0..self.set_len {
            let e = self.set[i];
            if (now - e.1).as_secs_f64() <= two_r {
                self.set[j] = e;
                j += 1;
            }
        }
        self.set_len = j;
    }

    /// RFC 5348 §4.3, Maximize X_recv_set(): add X_recv, drop the initial Infinity, keep only
    /// the largest entry, stamped now.
    fn maximize_x_recv_set(&mut self, x_recv: f64, now: SimTime) {
        let max = self.set[..self.set_len]
            .iter()
            .map(|e| e.0)
            .filter(|v| v.is_finite())
            .fold(x_recv, f64::max);
        self.set[0] = (max, now);
        self.set_len = 1;
    }

    /// Step 3 of RFC 5348 §4.3 once recv_limit is known: in congestion avoidance (p > 0)
    /// X = max(min(X_Bps, recv_limit), s/t_mbi); in slow start, at most once per RTT,
    /// X = max(min(2X, recv_limit), initial_rate).
    fn apply(&mut self, now: SimTime, s: f64) {
        let r = self.r.expect("called with an RTT estimate");
        let floor = s / self.cfg.t_mbi_s;
        if self.p > 0.0 {
            self.x_calc = x_bytes_per_s(s, r, self.p, 4.0 * r, self.cfg.b);
            self.x = self.x_calc.min(self.recv_limit).max(floor);
        } else {
            self.x_calc = f64::INFINITY;
            let tld = self.tld.unwrap_or(now);
            if (now - tld).as_secs_f64() >= r {
                let init = self.initial_rate(s).unwrap_or(s);
                self.x = (2.0 * self.x).min(self.recv_limit).max(init);
                self.tld = Some(now);
            }
        }
    }

    /// Processes a feedback packet (RFC 5348 §4.3 steps 1, 3 and §4.5); the caller restarts
    /// the no-feedback timer with [`RateController::nofeedback_interval`] (steps 2, 4).
    /// `data_limited`: the whole interval this feedback covers was data-limited.
    pub fn on_feedback(&mut self, now: SimTime, s: f64, fb: FeedbackInfo, data_limited: bool) {
        self.feedbacks += 1;
        self.last_x_recv = Some(fb.x_recv);
        let r_sample = fb.r_sample_s.max(1e-9);
        self.r_sample = r_sample;
        // Step 1: the RTT estimate.
        let first = self.r.is_none();
        let r = match self.r {
            None => r_sample,
            Some(r) => self.cfg.q * r + (1.0 - self.cfg.q) * r_sample,
        };
        self.r = Some(r);
        // §4.5: R_sqmean = q2·R_sqmean + (1 − q2)·√R_sample.
        self.r_sqmean = Some(match self.r_sqmean {
            None => r_sample.sqrt(),
            Some(m) => self.cfg.q2 * m + (1.0 - self.cfg.q2) * r_sample.sqrt(),
        });
        // §4.2: the first RTT measurement sets X to the initial rate and tld to now.
        if first {
            self.tld = Some(now);
            self.x = self.initial_rate(s).unwrap_or(self.x);
        }
        // Step 3: recv_limit from X_recv_set.
        let p_increased = fb.p > self.p;
        self.p = fb.p;
        if data_limited {
            if p_increased {
                for e in &mut self.set[..self.set_len] {
                    e.0 /= 2.0;
                }
                self.maximize_x_recv_set(0.85 * fb.x_recv, now);
                self.recv_limit = self.max_x_recv();
            } else {
                self.maximize_x_recv_set(fb.x_recv, now);
                self.recv_limit = 2.0 * self.max_x_recv();
            }
        } else {
            self.update_x_recv_set(fb.x_recv, now, r);
            self.recv_limit = 2.0 * self.max_x_recv();
        }
        self.apply(now, s);
    }

    /// The no-feedback timer expired (RFC 5348 §4.4 step 1); the caller restarts it with
    /// [`RateController::nofeedback_interval`] (step 2). `idle`: the sender sent nothing
    /// since the timer was set.
    pub fn on_nofeedback_timer(&mut self, now: SimTime, s: f64, idle: bool) {
        self.nofeedback_expiries += 1;
        let floor = s / self.cfg.t_mbi_s;
        let x_recv = self.max_x_recv();
        let Some(recover_rate) = self.initial_rate(s) else {
            // No RTT sample and no feedback yet: halve X unless the sender was idle.
            if !idle {
                self.x = (self.x / 2.0).max(floor);
            }
            return;
        };
        if idle && ((self.p > 0.0 && x_recv < recover_rate) || (self.p == 0.0 && self.x < 2.0 * recover_rate)) {
            // Idle and already at or below the recover rate: do not halve.
        } else if self.p == 0.0 {
            self.x = (self.x / 2.0).max(floor);
        } else if self.x_calc > 2.0 * x_recv {
            // 2·X_recv was limiting the rate.
            self.update_limits(x_recv, now, s);
        } else {
            // X_Bps was limiting the rate.
            self.update_limits(self.x_calc / 2.0, now, s);
        }
    }

    /// RFC 5348 §4.4, Update_Limits(timer_limit): X_recv_set becomes {timer_limit/2} (at
    /// least s/(2·t_mbi)) and X is recomputed as in §4.3 step 3.
    fn update_limits(&mut self, timer_limit: f64, now: SimTime, s: f64) {
        let timer_limit = timer_limit.max(s / self.cfg.t_mbi_s);
        self.set[0] = (timer_limit / 2.0, now);
        self.set_len = 1;
        self.recv_limit = 2.0 * self.max_x_recv();
        self.apply(now, s);
    }
}

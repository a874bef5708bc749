//! Bianchi's analytic model of DCF saturation throughput (G. Bianchi, "Performance Analysis
//! of the IEEE 802.11 Distributed Coordination Function", IEEE JSAC 18(3):535–547, 2000;
//! IEEE JSAC 18(3), 2000), used to validate the MAC and the whole wireless stack.
//!
//! ```text
//! τ = Σ_i p^i / Σ_i p^i (W_i + 1)/2,   W_i = 2^min(i, m) W,   p = 1 − (1 − τ)^(n−1)
//! S = P_s P_tr E[P] / ((1 − P_tr) σ + P_tr P_s T_s + P_tr (1 − P_s) T_c)
//! ```
//!
//! The sums run over every backoff stage (infinite retries, the paper's eq. 7) or stop at the
//! retry limit. [`times`] gives T_s and T_c with the airtimes the MAC uses, either as in the
//! paper (T_c = DATA + DIFS) or with EIFS after a collision (T_c = DATA + EIFS, ns-3's "EIFS
//! variant"), which is what the DCF does.

use crate::DcfConfig;

/// Durations of the model, µs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Times {
    /// An idle slot σ.
    pub sigma: f64,
    /// A successful transmission T_s.
    pub ts: f64,
    /// A collision T_c.
    pub tc: f64,
    /// `E[P]`: the payload's airtime at the data rate.
    pub payload: f64,
}

/// The solved model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Attempt probability per slot τ.
    pub tau: f64,
    /// Conditional collision probability p.
    pub p: f64,
    /// Saturation throughput as a fraction of the data rate.
    pub s: f64,
}

/// Channel access method.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// DATA, then ACK.
    Basic,
    /// RTS, CTS, DATA, ACK.
    RtsCts,
}

/// τ(p) for CW_min + 1 = `w`, `m` doublings and `attempts` stages (`None` = infinite).
pub fn tau_of_p(p: f64, w: f64, m: u32, attempts: Option<u32>) -> f64 {
    let stage = |i: u32| (libm::pow(2.0, f64::from(i.min(m))) * w + 1.0) / 2.0;
    match attempts {
        Some(r) => {
            let (mut num, mut den, mut pi) = (0.0, 0.0, 1.0);
            for i in 0..r {
                num += pi;
                den += pi * stage(i);
                pi *= p;
            }
            num / den
        }
        None => {
            // Stages 0..m−1 explicitly, stage m and beyond as a geometric tail.
            let (mut den, mut pi) = (0.0, 1.0);
            for i in 0..m {
                den += pi * stage(i);
                pi *= p;
            }
            den += pi * stage(m) / (1.0 - p);
            (1.0 / (1.0 - p)) / den
        }
    }
}

/// Solves the fixed point for `n` saturated stations by bisection on p (the residual
/// decreases in p) and returns τ, p and S.
pub fn solve(n: u32, w: f64, m: u32, attempts: Option<u32>, t: Times) -> Model {
    let tau_p = |p: f64| tau_of_p(p, w, m, attempts);
    let (mut lo, mut hi) = (0.0f64, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        let residual = 1.0 - libm::pow(1.0 - tau_p(mid), f64::from(n) - 1.0) - mid;
        if residual > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let p = 0.5 * (lo + hi);
    let tau = tau_p(p);
    let ptr = 1.0 - libm::pow(1.0 - tau, f64::from(n));
    let ps = n as f64 * tau * libm::pow(1.0 - tau, f64::from(n) - 1.0) / ptr;
    let s = ps * ptr * t.payload / ((1.0 - ptr) * t.sigma + ptr * ps * t.ts + ptr * (1.0 - ps) * t.tc);
    Model { tau, p, s }
}

/// W = CW_min + 1 and m = log2((CW_max + 1) / W) of a configuration.
pub fn window(cfg: &DcfConfig) -> (f64, u32) {
    let w = (cfg.timing.cw_min + 1) as f64;
    let m = ((cfg.timing.cw_max + 1) / (cfg.timing.cw_min + 1)).trailing_zeros();
    (w, m)
}

/// The model's durations for `msdu_bytes` MSDUs under `cfg` (δ = 0); `eifs` selects
/// T_c = head + EIFS (what the DCF does) instead of the paper's head + DIFS.
pub fn times(cfg: &DcfConfig, msdu_bytes: u32, access: Access, eifs: bool) -> Times {
    let us = |d: tpsim_core::SimDuration| d.0 as f64 / 1000.0;
    let (sigma, sifs, difs) = (us(cfg.slot()), us(cfg.sifs()), us(cfg.difs()));
    let (data, ack, rts, cts) = (
        us(cfg.data_airtime(msdu_bytes)),
        us(cfg.ack_airtime()),
        us(cfg.rts_airtime()),
        us(cfg.cts_airtime()),
    );
    let (ts, head) = match access {
        Access::Basic => (data + sifs + ack + difs, data),
        Access::RtsCts => (rts + sifs + cts + sifs + data + sifs + ack + difs, rts),
    };
    let tc = head + if eifs { us(cfg.eifs()) } else { difs };
    Times {
        sigma,
        ts,
        tc,
        payload: (msdu_bytes * 8) as f64 * 1e6 / cfg.data_rate.bps() as f64,
    }
}

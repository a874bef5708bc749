//! The TCP throughput equation of RFC 5348 §3.1, and its inverse (§6.3.1).

/// The allowed transmit rate X of RFC 5348 §3.1, bytes/s:
///
/// X = s / (R·√(2bp/3) + t_RTO·(3·√(3bp/8))·p·(1 + 32p²))
///
/// for segment size `s_bytes` (bytes, headers excluded), round-trip time `rtt_s` (s), loss
/// event rate `p` (0 < p ≤ 1), retransmission timeout `t_rto_s` (s; RFC 5348 §3.1: SHOULD be
/// 4R) and packets acknowledged per TCP ACK `b` (SHOULD be 1). Infinite for p = 0.
#[inline]
pub fn x_bytes_per_s(s_bytes: f64, rtt_s: f64, p: f64, t_rto_s: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return f64::INFINITY;
    }
    let denom =
        rtt_s * (2.0 * b * p / 3.0).sqrt() + t_rto_s * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    s_bytes / denom
}

/// The loss event rate p at which [`x_bytes_per_s`] with t_RTO = 4R gives `x` bytes/s: what
/// the receiver needs to seed its first loss interval (RFC 5348 §6.3.1, "the loss interval
/// that would be required to produce the data rate X_recv"). Found by bisection on log p over
/// [1e-12, 1] (X is strictly decreasing in p); 1 if even p = 1 allows more than `x`, and
/// 1e-12 if `x` is infinite or `rtt_s` is not positive.
pub fn p_for_x(s_bytes: f64, rtt_s: f64, x: f64, b: f64) -> f64 {
    const P_MIN: f64 = 1e-12;
    if rtt_s <= 0.0 || rtt_s.is_nan() || !x.is_finite() {
        return P_MIN;
    }
    let f = |p: f64| x_bytes_per_s(s_bytes, rtt_s, p, 4.0 * rtt_s, b);
    if f(1.0) >= x {
        return 1.0;
    }
    if f(P_MIN) <= x {
        return P_MIN;
    }
    let (mut lo, mut hi) = (libm::log(P_MIN), 0.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(libm::exp(mid)) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    libm::exp(0.5 * (lo + hi))
}

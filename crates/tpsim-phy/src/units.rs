//! Power unit conversions.

/// dBm → W: P(W) = 10^(dBm/10) / 1000.
#[inline]
pub fn dbm_to_w(dbm: f64) -> f64 {
    libm::pow(10.0, dbm / 10.0) * 1e-3
}

/// W → dBm: 10·log10(P(W) · 1000). Zero or negative power gives −∞.
#[inline]
pub fn w_to_dbm(w: f64) -> f64 {
    if w > 0.0 {
        10.0 * libm::log10(w * 1e3)
    } else {
        f64::NEG_INFINITY
    }
}

/// A ratio in dB → linear: 10^(dB/10).
#[inline]
pub fn db_to_linear(db: f64) -> f64 {
    libm::pow(10.0, db / 10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert!((dbm_to_w(30.0) - 1.0).abs() < 1e-12);
        // ns-2 quotes Pt_ to 8 digits: 24.4999978 dBm.
        assert!((w_to_dbm(0.28183815) - 24.5).abs() < 1e-5);
        assert!((w_to_dbm(dbm_to_w(-64.37)) + 64.37).abs() < 1e-9);
        assert_eq!(w_to_dbm(0.0), f64::NEG_INFINITY);
        assert!((db_to_linear(10.0) - 10.0).abs() < 1e-12);
    }
}

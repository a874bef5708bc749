//! Bit error rates of the 802.11b (DSSS / HR-DSSS) modulations as functions of the SINR: the
//! theory behind the SINR receiver's `ber` error model ([`crate::sinr::ErrorModel::Ber`]).
//!
//! # Read first
//!
//! * J. G. Proakis, M. Salehi, *Digital Communications*, 5th ed., McGraw-Hill 2008, §4.5
//!   (differentially coherent PSK): the bit error probability of binary DPSK,
//!   P_b = ½·exp(−E_b/N_0), exact on AWGN; the symbol error probability of M-ary DPSK at high
//!   SNR, P_s ≈ 2·Q(√(2·γ_s)·sin(π/(√2·M))).
//! * IEEE Std 802.11-2020 clause 15 (DSSS: 1 Mbit/s DBPSK, 2 Mbit/s DQPSK, 11-chip Barker
//!   spreading at 11 Mchip/s) and clause 16 (HR/DSSS: CCK at 5.5 and 11 Mbit/s).
//!
//! # Model
//!
//! The SINR is measured in the channel's noise bandwidth B (22 MHz for 802.11b). The energy
//! per bit over the noise density of a bit rate R_b is then
//! **E_b/N_0 = SINR · B / R_b**: the spreading (processing) gain of DSSS is what lets a
//! 1 Mbit/s frame survive a SINR below 0 dB. Interference is treated as white noise
//! (the usual Gaussian approximation).
//!
//! | Rate | Modulation | P_b(γ_b), γ_b = SINR·B/R_b |
//! |---|---|---|
//! | 1 Mbit/s | DBPSK | ½·exp(−γ_b) (exact) |
//! | 2 Mbit/s | DQPSK, Gray | Q(2·sin(π/(4√2))·√γ_b) = Q(1.0546·√γ_b): the M-DPSK symbol error approximation with γ_s = 2γ_b, halved (one bit wrong per symbol error); 2.3 dB worse than coherent QPSK |
//! | 5.5, 11 Mbit/s | CCK | Q(√(2·γ_b)): coherent QPSK at the CCK bit energy — an approximation that ignores CCK's code gain (about 2 dB; so slightly pessimistic) |
//!
//! The OFDM rates (802.11a/g) are not covered: their convolutional code's error rate needs
//! the code's distance spectrum, which tpsim does not model yet, so [`bit_error_rate`]
//! returns `None` for them and the scenario validator rejects the `ber` model with an OFDM
//! standard.
//!
//! A frame's success probability is the product over its pieces of constant SINR of
//! (1 − P_b)^bits (bit errors independent, no FEC for 802.11b), computed in logs by
//! [`log_success`].

use crate::timing::WifiRate;

/// The Gaussian tail function Q(x) = P(N(0,1) > x) = ½·erfc(x/√2).
#[inline]
pub fn q(x: f64) -> f64 {
    0.5 * libm::erfc(x * core::f64::consts::FRAC_1_SQRT_2)
}

/// sin(π/(4√2)): the DQPSK distance factor (module doc).
const DQPSK_SIN: f64 = 0.527_249_542_282_298_6;

/// Bit error probability of `rate` at a SINR of `sinr` (linear, measured in `bandwidth_hz`,
/// Hz), from the formulas of the module doc; `None` for the OFDM rates (not modelled).
/// Always within [0, ½].
pub fn bit_error_rate(rate: WifiRate, sinr: f64, bandwidth_hz: f64) -> Option<f64> {
    let gamma_b = (sinr * bandwidth_hz / rate.bps() as f64).max(0.0);
    let p = match rate {
        WifiRate::Dsss1 => 0.5 * libm::exp(-gamma_b),
        WifiRate::Dsss2 => q(2.0 * DQPSK_SIN * libm::sqrt(gamma_b)),
        WifiRate::Cck5_5 | WifiRate::Cck11 => q(libm::sqrt(2.0 * gamma_b)),
        _ => return None,
    };
    Some(p.min(0.5))
}

/// ln of the probability that `bits` bits sent at `rate` all arrive intact at a constant
/// SINR `sinr` (linear, in `bandwidth_hz`, Hz): bits · ln(1 − P_b). 0 for 0 bits; `None` for
/// the OFDM rates.
#[inline]
pub fn log_success(rate: WifiRate, sinr: f64, bandwidth_hz: f64, bits: f64) -> Option<f64> {
    let p = bit_error_rate(rate, sinr, bandwidth_hz)?;
    Some(if bits <= 0.0 { 0.0 } else { bits * libm::log1p(-p) })
}

/// The SINR (linear) at which a run of `bits` bits at `rate` has the success probability
/// `success` (0 < success < 1), found by bisection on the decreasing error rate; `None` for
/// the OFDM rates. Used to state the model's operating points (docs, tests).
pub fn sinr_for_success(rate: WifiRate, bandwidth_hz: f64, bits: f64, success: f64) -> Option<f64> {
    bit_error_rate(rate, 1.0, bandwidth_hz)?;
    let target = libm::log(success);
    // Bisection in dB between −30 and +40 dB.
    let (mut lo, mut hi) = (-30.0_f64, 40.0_f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        let ls = log_success(rate, crate::units::db_to_linear(mid), bandwidth_hz, bits)?;
        if ls < target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(crate::units::db_to_linear(0.5 * (lo + hi)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::db_to_linear;

    const B: f64 = 22e6;

    fn db(x: f64) -> f64 {
        10.0 * libm::log10(x)
    }

    #[test]
    fn q_function_matches_known_values() {
        // Standard normal tail probabilities (tabulated to 4 significant digits).
        for (x, p) in [
            (0.0, 0.5),
            (1.0, 0.158_655),
            (2.0, 0.022_750),
            (3.0, 0.001_349_9),
            (4.0, 3.167e-5),
        ] {
            assert!((q(x) / p - 1.0).abs() < 1e-3, "Q({x}) = {}", q(x));
        }
    }

    #[test]
    fn dbpsk_is_half_exp_of_the_spread_bit_energy() {
        // 0 dB SINR in 22 MHz at 1 Mbit/s: Eb/N0 = 22, P_b = ½e^−22.
        let p = bit_error_rate(WifiRate::Dsss1, 1.0, B).unwrap();
        assert!((p / (0.5 * libm::exp(-22.0)) - 1.0).abs() < 1e-12);
        // The sin constant is what it says.
        let s = libm::sin(std::f64::consts::PI / (4.0 * 2f64.sqrt()));
        assert!((s - DQPSK_SIN).abs() < 1e-15);
    }

    #[test]
    fn error_rates_fall_with_sinr_and_faster_rates_need_more() {
        for rate in [WifiRate::Dsss1, WifiRate::Dsss2, WifiRate::Cck5_5, WifiRate::Cck11] {
            let mut last = 0.5;
            for i in -200..=300 {
                let p = bit_error_rate(rate, db_to_linear(i as f64 / 10.0), B).unwrap();
                assert!(
                    (0.0..=0.5).contains(&p) && p <= last,
                    "{rate:?} at {} dB",
                    i as f64 / 10.0
                );
                last = p;
            }
        }
        // Operating points: 10 % loss of a 1024-octet frame (the standard's sensitivity
        // criterion). Each faster rate needs more SINR, 1 Mbit/s works below 0 dB (spreading
        // gain), and every point lies below the step threshold derived from the standard's
        // sensitivity (theory has no implementation margin).
        let bits = 8.0 * 1024.0;
        let pts: Vec<f64> = [WifiRate::Dsss1, WifiRate::Dsss2, WifiRate::Cck5_5, WifiRate::Cck11]
            .iter()
            .map(|&r| db(sinr_for_success(r, B, bits, 0.9).unwrap()))
            .collect();
        assert!(pts.windows(2).all(|w| w[0] < w[1]), "{pts:?}");
        assert!(pts[0] < -2.0 && pts[0] > -4.5, "1 Mbit/s: {}", pts[0]);
        for (r, p) in [WifiRate::Dsss1, WifiRate::Dsss2, WifiRate::Cck5_5, WifiRate::Cck11]
            .iter()
            .zip(&pts)
        {
            assert!(*p < crate::sinr::default_sinr_threshold_db(*r), "{r:?}: {p}");
        }
        // The operating points docs/models.md states.
        for (p, doc) in pts.iter().zip([-3.2, 1.6, 3.5, 6.5]) {
            assert!((p - doc).abs() < 0.05, "{p} vs the documented {doc} dB");
        }
        // DBPSK by hand: P_b = 1 − 0.9^(1/8192) → γ_b = −ln(2 P_b) → SINR = γ_b/22.
        let pb = 1.0 - libm::pow(0.9, 1.0 / bits);
        let expect = db(-libm::log(2.0 * pb) / 22.0);
        assert!((pts[0] - expect).abs() < 1e-6, "{} vs {expect}", pts[0]);
    }

    #[test]
    fn ofdm_is_not_modelled() {
        assert_eq!(bit_error_rate(WifiRate::Ofdm6, 10.0, 20e6), None);
        assert_eq!(sinr_for_success(WifiRate::Ofdm54, 20e6, 8000.0, 0.9), None);
    }

    #[test]
    fn log_success_is_bits_times_log_of_one_minus_ber() {
        let p = bit_error_rate(WifiRate::Dsss2, db_to_linear(-2.0), B).unwrap();
        let ls = log_success(WifiRate::Dsss2, db_to_linear(-2.0), B, 1000.0).unwrap();
        assert!((libm::exp(ls) - libm::pow(1.0 - p, 1000.0)).abs() < 1e-12);
        assert_eq!(log_success(WifiRate::Dsss1, 0.01, B, 0.0), Some(0.0));
    }
}

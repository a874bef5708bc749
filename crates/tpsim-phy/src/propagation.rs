//! Radio propagation: received power from transmit power, antennas and distance.
//!
//! Sources: Friis (1946) free-space equation; Two-Ray Ground reflection as in Rappaport,
//! *Wireless Communications* §4.6 and ns-2's `tworayground.cc` (Friis below the crossover
//! distance, the d⁻⁴ ground-reflection law above it); log-distance path loss with log-normal
//! shadowing as in Rappaport §4.9 and ns-2's `shadowing.cc`.
//!
//! Speed of light is 3·10⁸ m/s, as in ns-2's `propagation.h` (so ns-2's thresholds come out
//! exactly).

use tpsim_core::RngStream;

/// Speed of light used for wavelengths and propagation delay, m/s.
pub const SPEED_OF_LIGHT: f64 = 3.0e8;

/// A node's antenna.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Antenna {
    /// Gain (linear, 1 = isotropic/omni).
    pub gain: f64,
    /// Height above ground, m.
    pub height_m: f64,
}

impl Default for Antenna {
    /// ns-2's `Antenna/OmniAntenna`: gain 1, height 1.5 m.
    fn default() -> Self {
        Antenna {
            gain: 1.0,
            height_m: 1.5,
        }
    }
}

/// A propagation model.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Propagation {
    /// Friis free space: Pr = Pt·Gt·Gr·λ² / ((4π d)²·L).
    Friis {
        /// Carrier frequency, Hz.
        freq_hz: f64,
        /// System loss L (linear, ≥ 1).
        system_loss: f64,
    },
    /// Two-Ray Ground: Friis below the crossover distance d_c = 4π·ht·hr/λ, and
    /// Pr = Pt·Gt·Gr·ht²·hr² / (d⁴·L) at and beyond it.
    TwoRayGround {
        /// Carrier frequency, Hz.
        freq_hz: f64,
        /// System loss L (linear, ≥ 1).
        system_loss: f64,
    },
    /// Log-distance: Pr(d) (dB) = Pr_Friis(d0) (dB) − 10·n·log10(d/d0) + X, X ~ N(0, σ²) dB
    /// drawn per reception when σ > 0 (ns-2 `Propagation/Shadowing`).
    LogDistance {
        /// Carrier frequency, Hz (for the reference power at d0).
        freq_hz: f64,
        /// System loss L (linear, ≥ 1).
        system_loss: f64,
        /// Path-loss exponent n (2 = free space).
        exponent: f64,
        /// Reference distance d0, m.
        ref_distance_m: f64,
        /// Shadowing standard deviation σ, dB (0 = none).
        shadowing_std_db: f64,
    },
}

fn friis(pt_w: f64, gt: f64, gr: f64, lambda: f64, d: f64, l: f64) -> f64 {
    let denom = 4.0 * core::f64::consts::PI * d;
    pt_w * gt * gr * lambda * lambda / (denom * denom * l)
}

impl Propagation {
    /// Wavelength λ = c / f, m.
    pub fn wavelength_m(&self) -> f64 {
        let f = match *self {
            Propagation::Friis { freq_hz, .. }
            | Propagation::TwoRayGround { freq_hz, .. }
            | Propagation::LogDistance { freq_hz, .. } => freq_hz,
        };
        SPEED_OF_LIGHT / f
    }

    /// Two-Ray Ground's crossover distance 4π·ht·hr/λ, m (`None` for the other models).
    pub fn crossover_m(&self, tx: Antenna, rx: Antenna) -> Option<f64> {
        match self {
            Propagation::TwoRayGround { .. } => {
                Some(4.0 * core::f64::consts::PI * tx.height_m * rx.height_m / self.wavelength_m())
            }
            _ => None,
        }
    }

    /// Whether the model draws random numbers per reception.
    pub fn is_random(&self) -> bool {
        matches!(self, Propagation::LogDistance { shadowing_std_db, .. } if *shadowing_std_db > 0.0)
    }

    /// The deterministic received power, W, at distance `d_m` (shadowing excluded). At d = 0
    /// the transmit power is returned (no gain from the model's singularity).
    #[inline]
    pub fn mean_rx_power_w(&self, pt_w: f64, tx: Antenna, rx: Antenna, d_m: f64) -> f64 {
        if d_m <= 0.0 {
            return pt_w;
        }
        let lambda = self.wavelength_m();
        match *self {
            Propagation::Friis { system_loss, .. } => friis(pt_w, tx.gain, rx.gain, lambda, d_m, system_loss),
            Propagation::TwoRayGround { system_loss, .. } => {
                let dc = self.crossover_m(tx, rx).expect("two-ray");
                if d_m < dc {
                    friis(pt_w, tx.gain, rx.gain, lambda, d_m, system_loss)
                } else {
                    let (ht, hr) = (tx.height_m, rx.height_m);
                    pt_w * tx.gain * rx.gain * ht * ht * hr * hr / (d_m * d_m * d_m * d_m * system_loss)
                }
            }
            Propagation::LogDistance {
                system_loss,
                exponent,
                ref_distance_m,
                ..
            } => {
                let p0 = friis(pt_w, tx.gain, rx.gain, lambda, ref_distance_m, system_loss);
                if d_m <= ref_distance_m {
                    return p0;
                }
                p0 * libm::pow(ref_distance_m / d_m, exponent)
            }
        }
    }

    /// The received power, W, with shadowing drawn from `rng` when the model has it.
    #[inline]
    pub fn rx_power_w(&self, pt_w: f64, tx: Antenna, rx: Antenna, d_m: f64, rng: &mut RngStream) -> f64 {
        let mean = self.mean_rx_power_w(pt_w, tx, rx, d_m);
        match *self {
            Propagation::LogDistance { shadowing_std_db, .. } if shadowing_std_db > 0.0 => {
                mean * crate::units::db_to_linear(shadowing_std_db * standard_normal(rng))
            }
            _ => mean,
        }
    }

    /// The distance, m, at which the deterministic received power falls to `threshold_w`
    /// (the "range" of a receive or carrier-sense threshold). Found by bisection on the
    /// monotone power-distance curve; `None` if the threshold is above `pt_w`.
    pub fn range_m(&self, pt_w: f64, tx: Antenna, rx: Antenna, threshold_w: f64) -> Option<f64> {
        if threshold_w >= pt_w || threshold_w <= 0.0 {
            return None;
        }
        let (mut lo, mut hi) = (1e-6, 1.0);
        while self.mean_rx_power_w(pt_w, tx, rx, hi) > threshold_w {
            hi *= 2.0;
            if hi > 1e9 {
                return None;
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.mean_rx_power_w(pt_w, tx, rx, mid) > threshold_w {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Some(0.5 * (lo + hi))
    }
}

/// A standard normal draw (Box–Muller, cosine branch; one draw consumes two uniforms).
pub fn standard_normal(rng: &mut RngStream) -> f64 {
    let u1 = 1.0 - rng.uniform(); // (0, 1]
    let u2 = rng.uniform();
    libm::sqrt(-2.0 * libm::log(u1)) * libm::cos(2.0 * core::f64::consts::PI * u2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ns2;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs()
    }

    // Reference values: ns-2.35's tworayground.cc / threshold.cc arithmetic.
    #[test]
    fn two_ray_ground_reproduces_ns2_thresholds() {
        let m = ns2::TWO_RAY;
        let a = Antenna::default();
        assert!(rel(m.crossover_m(a, a).unwrap(), 86.14) < 1e-3);
        assert!(rel(m.mean_rx_power_w(ns2::PT_W, a, a, 250.0), 3.6526e-10) < 1e-4);
        assert!(rel(m.mean_rx_power_w(ns2::PT_W, a, a, 550.0), 1.5592e-11) < 1e-4);
        assert!(rel(m.mean_rx_power_w(ns2::PT_W, a, a, 100.0), 1.4268e-8) < 1e-4);
        assert!(rel(m.mean_rx_power_w(ns2::PT_W, a, a, 300.0), 1.7615e-10) < 1e-4);
        // Below the crossover it is Friis.
        let f = Propagation::Friis {
            freq_hz: ns2::FREQ_HZ,
            system_loss: 1.0,
        };
        assert_eq!(
            m.mean_rx_power_w(ns2::PT_W, a, a, 50.0),
            f.mean_rx_power_w(ns2::PT_W, a, a, 50.0)
        );
        assert!(rel(m.range_m(ns2::PT_W, a, a, ns2::RX_THRESH_W).unwrap(), 250.0) < 1e-3);
        assert!(rel(m.range_m(ns2::PT_W, a, a, ns2::CS_THRESH_W).unwrap(), 550.0) < 1e-3);
    }

    #[test]
    fn friis_reproduces_reference_values_and_ranges() {
        let f = Propagation::Friis {
            freq_hz: ns2::FREQ_HZ,
            system_loss: 1.0,
        };
        let a = Antenna::default();
        for (d, p) in [
            (100.0, 1.9228e-8),
            (200.0, 4.8070e-9),
            (300.0, 2.1364e-9),
            (500.0, 7.6911e-10),
        ] {
            assert!(rel(f.mean_rx_power_w(ns2::PT_W, a, a, d), p) < 1e-4, "{d} m");
        }
        // "Under FreeSpace with the same Pt and thresholds, ranges become 725.6 m and 3512 m".
        assert!(rel(f.range_m(ns2::PT_W, a, a, ns2::RX_THRESH_W).unwrap(), 725.6) < 1e-3);
        assert!(rel(f.range_m(ns2::PT_W, a, a, ns2::CS_THRESH_W).unwrap(), 3512.0) < 1e-3);
    }

    #[test]
    fn log_distance_with_exponent_two_is_friis_beyond_d0_and_shadowing_has_the_right_spread() {
        let a = Antenna::default();
        let f = Propagation::Friis {
            freq_hz: 2.4e9,
            system_loss: 1.0,
        };
        let l = Propagation::LogDistance {
            freq_hz: 2.4e9,
            system_loss: 1.0,
            exponent: 2.0,
            ref_distance_m: 1.0,
            shadowing_std_db: 0.0,
        };
        for d in [2.0, 10.0, 123.0] {
            assert!(rel(l.mean_rx_power_w(0.1, a, a, d), f.mean_rx_power_w(0.1, a, a, d)) < 1e-12);
        }
        let l3 = Propagation::LogDistance {
            freq_hz: 2.4e9,
            system_loss: 1.0,
            exponent: 3.0,
            ref_distance_m: 1.0,
            shadowing_std_db: 4.0,
        };
        let mut rng = RngStream::new(tpsim_core::StreamKey {
            seed: 1,
            run: 0,
            kind: tpsim_core::OwnerKind::Node,
            owner_id: 0,
            module: tpsim_core::Module::Mobility,
        });
        let mean_db = crate::units::w_to_dbm(l3.mean_rx_power_w(0.1, a, a, 100.0));
        let n = 20_000;
        let xs: Vec<f64> = (0..n)
            .map(|_| crate::units::w_to_dbm(l3.rx_power_w(0.1, a, a, 100.0, &mut rng)) - mean_db)
            .collect();
        let m = xs.iter().sum::<f64>() / n as f64;
        let sd = (xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1) as f64).sqrt();
        assert!(m.abs() < 0.1, "mean {m}");
        assert!((sd - 4.0).abs() < 0.1, "sd {sd}");
    }
}

//! The `[radio]` checks.

// `!(x > 0.0)` is meant: it also rejects NaN, which `x <= 0.0` would let through.
#![allow(clippy::neg_cmp_op_on_partial_ord)]

use super::k;
use crate::error::Seg;

/// The key path of `radio.<f>`.
fn p(f: &str) -> Vec<Seg> {
    vec![k("radio"), k(f)]
}

pub(super) fn validate_radio(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    rates(r, err);
    reception(r, err);
    ranges(r, err);
    propagation(r, err);
    power(r, err);
}

/// The 802.11 rates: `data_rate` and `basic_rate` must be rates of the standard.
fn rates(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    use tpsim_phy::timing::{PhyStandard, WifiRate};
    let std = match r.standard {
        crate::WifiStandard::B => PhyStandard::Dsss,
        crate::WifiStandard::A => PhyStandard::Ofdm,
    };
    for (name, rate) in [("data_rate", r.data_rate), ("basic_rate", r.basic_rate)] {
        if let Some(rate) = rate {
            if WifiRate::from_bps(rate.0, std).is_none() {
                let list: Vec<String> = WifiRate::ALL
                    .iter()
                    .filter(|w| w.standard() == std)
                    .map(|w| format!("{}Mbps", w.bps() as f64 / 1e6))
                    .collect();
                err(
                    p(name),
                    format!(
                        "{} is not a rate of this standard; expected one of {}",
                        rate,
                        list.join(", ")
                    ),
                );
            }
        }
    }
}

/// Keys that exclude each other or apply to one reception or error model only.
fn reception(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    if r.range.is_some() && r.rx_threshold.is_some() {
        err(p("range"), "give `range` or `rx_threshold`, not both".into());
    }
    if r.tx_range.is_some() && r.tx_power.is_some() {
        err(p("tx_range"), "give `tx_range` or `tx_power`, not both".into());
    }
    if r.noise_figure_db.is_some() && r.reception != crate::ReceptionKind::Sinr {
        err(
            p("noise_figure_db"),
            "`noise_figure_db` applies to reception = \"sinr\"".into(),
        );
    }
    for (key, given) in [
        ("error_model", r.error_model.is_some()),
        ("preamble_detection_db", r.preamble_detection_db.is_some()),
        ("preamble_detection_window", r.preamble_detection_window.is_some()),
    ] {
        if given && r.reception != crate::ReceptionKind::Sinr {
            err(p(key), format!("`{key}` applies to reception = \"sinr\""));
        }
    }
    if r.error_model == Some(crate::ErrorModelKind::Ber) && r.standard != crate::WifiStandard::B {
        err(
            p("error_model"),
            "error_model = \"ber\" covers the 802.11b rates only (no OFDM error rates yet); \
             use error_model = \"threshold\" with this standard"
                .into(),
        );
    }
    if r.queue_max_delay.is_some_and(|d| d.0 == 0) {
        err(
            p("queue_max_delay"),
            "expected a queue delay limit greater than 0".into(),
        );
    }
    if r.preamble_detection_db.is_some()
        && r.reception == crate::ReceptionKind::Sinr
        && r.error_model != Some(crate::ErrorModelKind::Ber)
    {
        err(
            p("preamble_detection_db"),
            "`preamble_detection_db` applies to error_model = \"ber\"".into(),
        );
    }
    if r.preamble_detection_window.is_some()
        && r.reception == crate::ReceptionKind::Sinr
        && r.error_model != Some(crate::ErrorModelKind::Ber)
    {
        err(
            p("preamble_detection_window"),
            "`preamble_detection_window` applies to error_model = \"ber\"".into(),
        );
    }
    if r.preamble_detection_db.is_some_and(|d| !d.is_finite()) {
        err(p("preamble_detection_db"), "expected a finite SINR in dB".into());
    }
    if r.noise_figure_db.is_some_and(|nf| !(nf.is_finite() && nf >= 0.0)) {
        err(p("noise_figure_db"), "expected a noise figure of at least 0 dB".into());
    }
}

/// The transmission, decode and carrier-sense ranges and the antenna height.
fn ranges(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    if r.tx_range.is_some_and(|m| m.0 <= 0.0) {
        err(p("tx_range"), "expected `tx_range` greater than 0".into());
    }
    if r.cs_range.is_some() && r.cs_threshold.is_some() {
        err(p("cs_range"), "give `cs_range` or `cs_threshold`, not both".into());
    }
    for (name, v) in [
        ("range", r.range),
        ("cs_range", r.cs_range),
        ("antenna_height", r.antenna_height),
    ] {
        if v.is_some_and(|m| m.0 <= 0.0) {
            err(p(name), format!("expected `{name}` greater than 0"));
        }
    }
    if let (Some(rx), Some(cs)) = (r.range, r.cs_range) {
        if cs.0 < rx.0 {
            err(
                p("cs_range"),
                format!(
                    "the carrier-sense range ({} m) is shorter than the decode range ({} m)",
                    cs.0, rx.0
                ),
            );
        }
    }
}

/// Capture, the propagation model's parameters and the interface queue.
fn propagation(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    if r.capture_ratio.is_some_and(|c| !(c >= 1.0 && c.is_finite())) {
        err(p("capture_ratio"), "expected a capture ratio of at least 1".into());
    }
    if r.exponent.is_some_and(|e| !(e > 0.0 && e.is_finite())) {
        err(p("exponent"), "expected a path-loss exponent greater than 0".into());
    }
    if r.shadowing_db.is_some_and(|s| !(s >= 0.0 && s.is_finite())) {
        err(
            p("shadowing_db"),
            "expected a shadowing deviation of at least 0 dB".into(),
        );
    }
    if r.propagation != crate::PropagationKind::LogDistance {
        for (name, present) in [
            ("exponent", r.exponent.is_some()),
            ("shadowing_db", r.shadowing_db.is_some()),
        ] {
            if present {
                err(
                    p(name),
                    format!("`{name}` applies to propagation = \"log-distance\" only"),
                );
            }
        }
    }
    if r.queue == Some(0) {
        err(p("queue"), "expected a queue limit of at least 1 packet".into());
    }
}

/// The transmit power against the thresholds, the frequency and the retry limits.
fn power(r: &crate::Radio, err: &mut impl FnMut(Vec<Seg>, String)) {
    let pt = r.tx_power.map(|w| w.0).unwrap_or(tpsim_phy::ns2::PT_W);
    if r.tx_power.is_some_and(|w| !(w.0 > 0.0)) {
        err(p("tx_power"), "expected a transmit power greater than 0".into());
    } else {
        for (name, v) in [("rx_threshold", r.rx_threshold), ("cs_threshold", r.cs_threshold)] {
            match v {
                Some(w) if !(w.0 > 0.0) => err(p(name), format!("expected `{name}` greater than 0")),
                Some(w) if w.0 >= pt => err(
                    p(name),
                    format!(
                        "`{name}` ({:e} W) is not below the transmit power ({pt:e} W): no link could exist",
                        w.0
                    ),
                ),
                _ => {}
            }
        }
    }
    if r.frequency.is_some_and(|f| !(f.0 > 0.0)) {
        err(p("frequency"), "expected a frequency greater than 0".into());
    }
    for (name, v) in [
        ("short_retry_limit", r.short_retry_limit),
        ("long_retry_limit", r.long_retry_limit),
    ] {
        if v == Some(0) {
            err(p(name), "expected a retry limit of at least 1".into());
        }
    }
}

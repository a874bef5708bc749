//! The receiving side of a radio in ns-2's threshold mode: carrier sense, reception, capture
//! and collisions, per signal, with no event of its own (the channel calls it at each
//! signal's start and end).
//!
//! Rules (ns-2.35 `WirelessPhy::sendUp` and `Mac802_11::recv`/`capture`/`collision`, with
//! the thresholds of `ns-default.tcl`):
//! * a signal below the carrier-sense threshold is not seen at all;
//! * a signal at or above it makes the medium busy for its whole duration;
//! * a signal at or above the receive threshold that arrives while the radio is idle (not
//!   transmitting, not already receiving) is received;
//! * a signal arriving during a reception is *captured* away (ignored, though it keeps the
//!   medium busy) if the frame being received is at least `capture_ratio` times stronger;
//!   otherwise both are lost: the reception is corrupted and continues until the later of the
//!   two ends (the MAC then sees one erroneous frame and uses EIFS);
//! * a radio that is transmitting receives nothing (half duplex); signals that started during
//!   its transmission are not received even after it ends.

use tpsim_core::SimTime;

use crate::wifi::flags::{CORRUPTED, RX, TRANSMITTING};
use crate::wifi::RadioState;

pub use tpsim_phy::sinr::{Cca, RxOutcome};

/// The thresholds of ns-2's reception model, shared by every radio of a channel (kept apart
/// from the per-radio state in [`RadioState`], so that the dense radio array stays small).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Receive threshold (ns-2 `RXThresh_`), W.
    pub rx_w: f64,
    /// Carrier-sense threshold (ns-2 `CSThresh_`), W.
    pub cs_w: f64,
    /// Capture ratio (ns-2 `CPThresh_`), linear.
    pub capture_ratio: f64,
}

impl Thresholds {
    /// Whether a signal of this power is seen at all (and so must be reported at its end).
    #[inline]
    pub fn senses(&self, power_w: f64) -> bool {
        power_w >= self.cs_w
    }
}

/// The threshold receiver's part of a radio record ([`RadioState`]: the channel keeps it and
/// the carrier-sense bookkeeping of the device in one 32-byte record per radio).
impl RadioState {
    /// Whether the medium is busy by carrier sense.
    #[inline]
    pub fn busy(&self) -> bool {
        self.sensed > 0
    }

    /// A signal of `power_w` for frame `frame` begins, lasting until `end`. Returns a CCA
    /// transition if the medium turned busy. Only call for signals that `th`
    /// [senses](Thresholds::senses).
    pub fn on_signal_start(&mut self, th: &Thresholds, frame: u32, power_w: f64, end: SimTime) -> Option<Cca> {
        debug_assert!(th.senses(power_w));
        let was_busy = self.busy();
        self.sensed += 1;
        if !self.flag(TRANSMITTING) {
            if !self.flag(RX) {
                // Lock on: decodable or not, the radio is now receiving this frame; one too
                // weak to decode ends as an error (ns-2 marks it so).
                self.raise(RX);
                self.put(CORRUPTED, power_w < th.rx_w);
                self.rx_frame = frame;
                self.rx_power_w = power_w;
                self.rx_end = end;
            } else if self.rx_power_w >= th.capture_ratio * power_w {
                // Capture: the new signal is only noise.
            } else {
                // Collision: the reception is lost; it lasts until the later end.
                self.raise(CORRUPTED);
                if end > self.rx_end {
                    self.rx_frame = frame;
                    self.rx_end = end;
                }
            }
        }
        (!was_busy).then_some(Cca::Busy)
    }

    /// The signal of frame `frame` ends (call for every signal that was started). Returns the
    /// reception outcome if the radio was locked on it, and a CCA transition if the medium
    /// turned idle.
    pub fn on_signal_end(&mut self, frame: u32) -> (Option<RxOutcome>, Option<Cca>) {
        debug_assert!(self.sensed > 0);
        self.sensed -= 1;
        let mut outcome = None;
        if self.flag(RX) && self.rx_frame == frame {
            self.lower(RX);
            outcome = Some(if self.flag(CORRUPTED) {
                RxOutcome::Error
            } else {
                RxOutcome::Ok { frame }
            });
        }
        (outcome, (!self.busy()).then_some(Cca::Idle))
    }

    /// Our own transmission starts: any reception in progress is abandoned (half duplex).
    pub fn on_tx_start(&mut self) {
        self.raise(TRANSMITTING);
        self.lower(RX);
    }

    /// Our own transmission ends.
    pub fn on_tx_end(&mut self) {
        self.lower(TRANSMITTING);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RX: f64 = 3.652e-10;
    const CS: f64 = 1.559e-11;

    const TH: Thresholds = Thresholds {
        rx_w: RX,
        cs_w: CS,
        capture_ratio: 10.0,
    };

    fn phy() -> RadioState {
        RadioState::new()
    }

    #[test]
    fn a_strong_frame_alone_is_received_and_toggles_carrier_sense() {
        let mut p = phy();
        assert_eq!(p.on_signal_start(&TH, 1, 1e-9, SimTime(100)), Some(Cca::Busy));
        assert!(p.busy());
        assert_eq!(p.on_signal_end(1), (Some(RxOutcome::Ok { frame: 1 }), Some(Cca::Idle)));
    }

    #[test]
    fn a_frame_between_the_thresholds_is_sensed_but_ends_in_error() {
        let mut p = phy();
        assert!(TH.senses(1e-10) && !TH.senses(1e-11));
        p.on_signal_start(&TH, 1, 1e-10, SimTime(100));
        assert_eq!(p.on_signal_end(1), (Some(RxOutcome::Error), Some(Cca::Idle)));
    }

    #[test]
    fn capture_keeps_the_stronger_frame() {
        let mut p = phy();
        p.on_signal_start(&TH, 1, 1e-8, SimTime(100));
        // 10x weaker or less: captured away, but it keeps the medium busy.
        assert_eq!(p.on_signal_start(&TH, 2, 1e-9, SimTime(150)), None);
        assert_eq!(p.on_signal_end(1), (Some(RxOutcome::Ok { frame: 1 }), None));
        assert_eq!(p.on_signal_end(2), (None, Some(Cca::Idle)));
    }

    #[test]
    fn a_collision_loses_both_and_lasts_until_the_later_end() {
        let mut p = phy();
        p.on_signal_start(&TH, 1, 1e-8, SimTime(100));
        p.on_signal_start(&TH, 2, 5e-9, SimTime(150));
        assert_eq!(p.on_signal_end(1), (None, None));
        assert_eq!(p.on_signal_end(2), (Some(RxOutcome::Error), Some(Cca::Idle)));
        // A later, stronger arrival than the current one also collides.
        let mut p = phy();
        p.on_signal_start(&TH, 1, 1e-9, SimTime(200));
        p.on_signal_start(&TH, 2, 5e-9, SimTime(150));
        assert_eq!(p.on_signal_end(2), (None, None));
        assert_eq!(p.on_signal_end(1), (Some(RxOutcome::Error), Some(Cca::Idle)));
    }

    #[test]
    fn nothing_is_received_while_or_since_transmitting() {
        let mut p = phy();
        p.on_signal_start(&TH, 1, 1e-8, SimTime(100));
        p.on_tx_start();
        assert_eq!(p.on_signal_end(1), (None, Some(Cca::Idle)));
        p.on_signal_start(&TH, 2, 1e-8, SimTime(300));
        p.on_tx_end();
        assert_eq!(p.on_signal_end(2), (None, Some(Cca::Idle)));
    }
}

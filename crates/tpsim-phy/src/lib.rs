//! tpsim-phy: the wireless physical layer's models (no events, no nodes).
//!
//! * [`propagation`]: Friis free space, Two-Ray Ground with its crossover distance, and
//!   log-distance path loss with optional log-normal shadowing; received power in W.
//! * [`ns2`]: ns-2's default radio (914 MHz, Pt 0.28183815 W, RXThresh 3.652e-10 W ⇒ 250 m,
//!   CSThresh 1.559e-11 W ⇒ 550 m under Two-Ray Ground, CPThresh 10).
//! * [`sinr`]: an SINR receiver (interference accumulated over each frame, thermal noise,
//!   per-rate SINR thresholds derived from the standard's minimum sensitivities), an
//!   alternative to ns-2's threshold/capture receiver.
//! * [`timing`]: IEEE 802.11 PHY frame durations (DSSS/HR-DSSS 802.11b with long and short
//!   preamble, OFDM 802.11a/g) and the MAC timing constants (slot, SIFS, DIFS, EIFS, CW).
//!
//! The channel (who hears a frame) and the DCF state machine build on these in later crates.
//! Transcendental functions go through `libm` so results do not depend on the platform.

pub mod error_rate;
pub mod ns2;
pub mod propagation;
pub mod sinr;
pub mod timing;
pub mod units;

pub use propagation::{Antenna, Propagation};
pub use timing::{PhyStandard, Preamble, WifiRate};

//! ns-2.35's default wireless radio (`tcl/lib/ns-default.tcl`), so that the
//! reference studies can be reproduced.

use crate::propagation::Propagation;

/// `Phy/WirelessPhy set freq_ 914e6`, Hz.
pub const FREQ_HZ: f64 = 914e6;
/// `Phy/WirelessPhy set Pt_ 0.28183815`, W (24.5 dBm).
pub const PT_W: f64 = 0.28183815;
/// `Phy/WirelessPhy set RXThresh_ 3.652e-10`, W: 250 m under Two-Ray Ground.
pub const RX_THRESH_W: f64 = 3.652e-10;
/// `Phy/WirelessPhy set CSThresh_ 1.559e-11`, W: 550 m under Two-Ray Ground.
pub const CS_THRESH_W: f64 = 1.559e-11;
/// `Phy/WirelessPhy set CPThresh_ 10.0`: capture ratio (linear).
pub const CP_THRESH: f64 = 10.0;
/// `Phy/WirelessPhy set L_ 1.0`: system loss.
pub const SYSTEM_LOSS: f64 = 1.0;
/// ns-2's Two-Ray Ground model with its defaults.
pub const TWO_RAY: Propagation = Propagation::TwoRayGround {
    freq_hz: FREQ_HZ,
    system_loss: SYSTEM_LOSS,
};

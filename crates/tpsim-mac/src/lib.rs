//! tpsim-mac: medium access control as sans-IO state machines.
//!
//! # Read first
//!
//! * IEEE Std 802.11-2020 §10.3, the distributed coordination function (DCF): carrier sense
//!   (§10.3.2.1), interframe spaces (§10.3.2.3), the NAV (§10.3.2.4), retransmit limits
//!   (§10.3.2.12), duplicate detection (§10.3.2.14), random backoff (§10.3.3), basic access and
//!   the backoff procedure (§10.3.4.2, §10.3.4.3), group-addressed transfer (§10.3.6).
//! * G. Bianchi, "Performance analysis of the IEEE 802.11 distributed coordination function",
//!   IEEE JSAC 18(3):535–547, 2000: the saturation-throughput model that `tests/saturation.rs`
//!   checks [`Dcf`] against.
//! * A. Kamerman, L. Monteban, Bell Labs Technical Journal 2(3), 1997 (ARF), and M. Lacage,
//!   M. H. Manshaei, T. Turletti, ACM MSWiM 2004 (AARF): the rate adaptation of [`rate`].
//! * [`dcf`]'s module doc: how the backoff is computed from timestamps instead of one event per
//!   slot, and what is simplified.
//!
//! # Shape
//!
//! [`Dcf`] follows the sans-IO contract of every tpsim protocol (docs/models.md): it never reads a
//! clock or schedules events. The engine feeds it the upper layer's MSDUs ([`Dcf::send`], one
//! at a time; the interface queue is the engine's), the PHY's carrier-sense changes and
//! receptions ([`Dcf::on_medium_busy`], [`Dcf::on_medium_idle`], [`Dcf::on_rx`],
//! [`Dcf::on_rx_error`], [`Dcf::on_tx_end`]) and timer expiries ([`Dcf::on_timeout`]), and after
//! every input polls [`Dcf::poll_transmit`], [`Dcf::poll_event`] and [`Dcf::poll_timeout`] in
//! that order. PHY timing comes from [`tpsim_phy::timing`].
//!
//! Depends only on `tpsim-core` and `tpsim-phy`.

pub mod arp;
pub mod bianchi;
pub mod config;
pub mod dcf;
pub mod dup_cache;
pub mod frame;
pub mod rate;

pub use config::DcfConfig;
pub use dcf::{Dcf, DcfStats};
pub use frame::{Frame, FrameKind, MacAddr, MacEvent, Msdu, BROADCAST};
pub use rate::{RateControl, RateState};

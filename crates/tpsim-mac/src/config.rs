//! DCF configuration: PHY timing, rates, frame sizes and retry limits, with the standard's
//! defaults and an ns-2-like preset.

use tpsim_core::SimDuration;
use tpsim_phy::timing::MacTiming;
use tpsim_phy::{PhyStandard, Preamble, WifiRate};

use crate::rate::RateControl;

/// DATA frame overhead of IEEE 802.11: 24-byte MAC header (three addresses, no QoS) + 4-byte
/// FCS (§9.2.3 general frame format, §9.3.2 Data frames).
pub const DATA_OVERHEAD_BYTES: u32 = 28;
/// Ack frame: Frame Control 2 + Duration 2 + RA 6 + FCS 4 (§9.3.1).
pub const ACK_BYTES: u32 = 14;
/// CTS frame: same layout as the Ack frame (§9.3.1).
pub const CTS_BYTES: u32 = 14;
/// RTS frame: Frame Control 2 + Duration 2 + RA 6 + TA 6 + FCS 4 (§9.3.1).
pub const RTS_BYTES: u32 = 20;

/// Configuration of one [`Dcf`](crate::Dcf). All durations are [`SimDuration`]s (ns), all
/// sizes bytes.
///
/// [`DcfConfig::new`] gives the standard's values for a data rate;
/// [`DcfConfig::ns2`] reproduces ns-2.35's `Mac/802_11` defaults (`tcl/lib/ns-default.tcl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcfConfig {
    /// aSlotTime, aSIFSTime, aCWmin, aCWmax of the PHY (IEEE 802.11-2020 Tables 15-5, 16-4,
    /// 17-21). DIFS = SIFS + 2·slot (§10.3.2.3.5).
    pub timing: MacTiming,
    /// Rate of DATA frames: the only one with [`RateControl::Constant`], the starting rate of
    /// every destination with ARF/AARF, and always the rate of broadcast DATA frames.
    pub data_rate: WifiRate,
    /// Rate of control frames (RTS, CTS, ACK). The standard sends a control response at the
    /// highest basic rate not above the eliciting frame's rate (§10.6, multirate support); tpsim uses one
    /// configured basic rate for all control frames, as ns-2 does.
    pub basic_rate: WifiRate,
    /// PLCP preamble of DSSS/HR-DSSS frames (ignored by OFDM and by 1 Mbit/s, which is always
    /// long).
    pub preamble: Preamble,
    /// dot11RTSThreshold: unicast DATA frames (MAC header + MSDU + FCS) longer than this many
    /// bytes are preceded by RTS/CTS. `None` = never (the standard's default, 65535, in effect);
    /// `Some(0)` = always (ns-2's default). Default `None`.
    pub rts_threshold_bytes: Option<u32>,
    /// dot11ShortRetryLimit: transmission attempts of a frame not longer than the RTS threshold,
    /// and of RTS frames, before the MSDU is discarded. Default 7 (§10.3.2.12; as in ns-2 and
    /// the WARP reference design, the limit counts attempts: 7 = one transmission + 6 retries).
    pub short_retry_limit: u32,
    /// dot11LongRetryLimit: attempts of a DATA frame longer than the RTS threshold. Default 4.
    pub long_retry_limit: u32,
    /// Bytes the MAC adds to an MSDU to make the DATA frame. Default 28 (24-byte header +
    /// 4-byte FCS). ns-2 counts 58 bytes, of which 24 stand in for the PLCP preamble and header
    /// that tpsim already counts as airtime ([`WifiRate::ppdu_duration`]); use 34 (ns-2's
    /// 30-byte header + FCS) to reproduce ns-2's airtimes, as [`DcfConfig::ns2`] does.
    pub mac_header_bytes: u32,
    /// Ack frame size. Default 14.
    pub ack_bytes: u32,
    /// CTS frame size. Default 14.
    pub cts_bytes: u32,
    /// RTS frame size. Default 20.
    pub rts_bytes: u32,
    /// Wait EIFS instead of DIFS after a frame that could not be decoded (§10.3.2.3.7).
    /// Default true.
    pub use_eifs: bool,
    /// The optional NAV reset of §10.3.2.4: a station whose NAV was set by an RTS may reset it
    /// when no reception starts within 2·SIFS + CTS time + aRxPHYStartDelay + 2·slot after
    /// the RTS (the CTS never came). Default true; ns-2 does not do this.
    pub rts_nav_reset: bool,
    /// Rate adaptation of unicast DATA frames ([`crate::rate`]): constant (the default), ARF
    /// or AARF, per destination, within `data_rate`'s PHY family.
    pub rate_control: RateControl,
    /// A frame that finds the medium idle still draws a backoff of 0 to CW − 1 slots after
    /// DIFS, as ns-2.35's `Mac802_11::send` does (`bugFix_timer_ 1`), instead of going out
    /// after DIFS (§10.3.4.2). Default false; ns-2's true. Two stations answering the same
    /// broadcast at once collide every time without it.
    pub idle_backoff: bool,
}

impl DcfConfig {
    /// The standard's defaults for `data_rate`: the PHY family's timing, the family's lowest
    /// mandatory rate (1 Mbit/s DSSS, 6 Mbit/s OFDM) for control frames, long preamble, no
    /// RTS/CTS, retry limits 7/4, 28-byte DATA overhead, EIFS and the RTS NAV reset on, constant
    /// rate.
    pub fn new(data_rate: WifiRate) -> DcfConfig {
        let standard = data_rate.standard();
        DcfConfig {
            timing: MacTiming::of(standard),
            data_rate,
            basic_rate: lowest_rate(standard),
            preamble: Preamble::Long,
            rts_threshold_bytes: None,
            short_retry_limit: 7,
            long_retry_limit: 4,
            mac_header_bytes: DATA_OVERHEAD_BYTES,
            ack_bytes: ACK_BYTES,
            cts_bytes: CTS_BYTES,
            rts_bytes: RTS_BYTES,
            use_eifs: true,
            rts_nav_reset: true,
            rate_control: RateControl::Constant,
            idle_backoff: false,
        }
    }

    /// ns-2.35's `Mac/802_11` defaults (`tcl/lib/ns-default.tcl`): DSSS timing (slot 20 µs, SIFS 10 µs,
    /// CW 31–1023), data and basic rate 1 Mbit/s, long preamble, RTS/CTS for every unicast
    /// frame (`RTSThreshold_ 0`), retry limits 7/4, EIFS on, no RTS NAV reset, a backoff even
    /// for a frame that finds the medium idle (`bugFix_timer_`), and a 34-byte
    /// DATA overhead so that DATA airtimes equal ns-2's (its 58-byte count minus the 24-byte
    /// PLCP stand-in, which is airtime here).
    pub fn ns2() -> DcfConfig {
        DcfConfig {
            rts_threshold_bytes: Some(0),
            mac_header_bytes: 34,
            rts_nav_reset: false,
            idle_backoff: true,
            ..DcfConfig::new(WifiRate::Dsss1)
        }
    }

    /// aSlotTime.
    #[inline]
    pub fn slot(&self) -> SimDuration {
        self.timing.slot
    }
    /// aSIFSTime (§10.3.2.3.3).
    #[inline]
    pub fn sifs(&self) -> SimDuration {
        self.timing.sifs
    }
    /// DIFS = aSIFSTime + 2·aSlotTime (§10.3.2.3.5).
    #[inline]
    pub fn difs(&self) -> SimDuration {
        self.timing.difs()
    }
    /// EIFS = aSIFSTime + DIFS + AckTxTime, with AckTxTime the duration of an Ack frame at the
    /// PHY's lowest mandatory rate with the long preamble (§10.3.2.3.7): 364 µs for 802.11b,
    /// 94 µs for 802.11a.
    pub fn eifs(&self) -> SimDuration {
        let standard = self.data_rate.standard();
        let ack = lowest_rate(standard).ppdu_duration(self.ack_bytes, Preamble::Long);
        self.timing.eifs(ack)
    }
    /// PPDU duration of a frame of `bytes` at `rate` with the configured preamble.
    #[inline]
    pub fn airtime(&self, rate: WifiRate, bytes: u32) -> SimDuration {
        rate.ppdu_duration(bytes, self.preamble)
    }
    /// Size of the DATA frame carrying an MSDU of `msdu_bytes`.
    #[inline]
    pub fn data_bytes(&self, msdu_bytes: u32) -> u32 {
        msdu_bytes + self.mac_header_bytes
    }
    /// Airtime of the DATA frame carrying an MSDU of `msdu_bytes`, at the data rate.
    #[inline]
    pub fn data_airtime(&self, msdu_bytes: u32) -> SimDuration {
        self.airtime(self.data_rate, self.data_bytes(msdu_bytes))
    }
    /// Airtime of the DATA frame carrying an MSDU of `msdu_bytes` at `rate` (the rate chosen
    /// by rate control).
    #[inline]
    pub fn data_airtime_at(&self, rate: WifiRate, msdu_bytes: u32) -> SimDuration {
        self.airtime(rate, self.data_bytes(msdu_bytes))
    }
    /// Airtime of an Ack frame at the basic rate.
    #[inline]
    pub fn ack_airtime(&self) -> SimDuration {
        self.airtime(self.basic_rate, self.ack_bytes)
    }
    /// Airtime of a CTS frame at the basic rate.
    #[inline]
    pub fn cts_airtime(&self) -> SimDuration {
        self.airtime(self.basic_rate, self.cts_bytes)
    }
    /// Airtime of an RTS frame at the basic rate.
    #[inline]
    pub fn rts_airtime(&self) -> SimDuration {
        self.airtime(self.basic_rate, self.rts_bytes)
    }
    /// aRxPHYStartDelay: from the start of a PPDU to the PHY's PHY-RXSTART.indication. DSSS:
    /// the PLCP preamble and header, 192 µs long / 96 µs short (Tables 15-5, 16-4); OFDM
    /// 20 MHz: 25 µs (Table 17-21).
    pub fn rx_phy_start_delay(&self) -> SimDuration {
        match self.basic_rate.standard() {
            PhyStandard::Ofdm => SimDuration::from_micros(25),
            PhyStandard::Dsss => match self.preamble {
                Preamble::Short if self.basic_rate != WifiRate::Dsss1 => SimDuration::from_micros(96),
                _ => SimDuration::from_micros(192),
            },
        }
    }
    /// How long after the end of a unicast DATA frame the sender waits for the Ack to *end*:
    /// aSIFSTime + aSlotTime + Ack airtime.
    ///
    /// The standard's AckTimeout, aSIFSTime + aSlotTime + aRxPHYStartDelay (§10.3.2, Ack
    /// procedure), is the
    /// deadline for the *start* of the Ack's reception (PHY-RXSTART). tpsim's channel reports
    /// only complete receptions ([`Dcf::on_rx`](crate::Dcf::on_rx) at the frame's end), so the
    /// deadline is moved to the end of the Ack: the Ack airtime contains the PLCP preamble and
    /// header that aRxPHYStartDelay stands for, and the slot is the margin for propagation and
    /// CCA delay. 802.11b 1 Mbit/s: 10 + 20 + 304 = 334 µs; 802.11a 6 Mbit/s: 16 + 9 + 44 =
    /// 69 µs.
    ///
    /// It does not depend on the DATA frame's rate (with rate adaptation too): tpsim sends every
    /// Ack at the one basic rate.
    pub fn ack_timeout(&self) -> SimDuration {
        self.sifs() + self.slot() + self.ack_airtime()
    }
    /// CTSTimeout, with the same construction as [`DcfConfig::ack_timeout`] (§10.3.2, RTS/CTS):
    /// aSIFSTime + aSlotTime + CTS airtime after the end of the RTS.
    pub fn cts_timeout(&self) -> SimDuration {
        self.sifs() + self.slot() + self.cts_airtime()
    }
    /// The RTS NAV reset window of §10.3.2.4: 2·aSIFSTime + CTS airtime + aRxPHYStartDelay +
    /// 2·aSlotTime after the end of the RTS.
    pub fn rts_nav_reset_after(&self) -> SimDuration {
        SimDuration(2 * self.sifs().0 + self.cts_airtime().0 + self.rx_phy_start_delay().0 + 2 * self.slot().0)
    }
}

/// The lowest mandatory rate of a PHY family (the rate EIFS's AckTxTime is computed at).
pub fn lowest_rate(standard: PhyStandard) -> WifiRate {
    match standard {
        PhyStandard::Dsss => WifiRate::Dsss1,
        PhyStandard::Ofdm => WifiRate::Ofdm6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsss_1mbps_timing() {
        let c = DcfConfig::new(WifiRate::Dsss1);
        assert_eq!(c.difs(), SimDuration::from_micros(50));
        assert_eq!(c.eifs(), SimDuration::from_micros(364));
        assert_eq!(c.ack_airtime(), SimDuration::from_micros(304));
        assert_eq!(c.rts_airtime(), SimDuration::from_micros(352));
        assert_eq!(c.ack_timeout(), SimDuration::from_micros(334));
        assert_eq!(c.data_airtime(1500), SimDuration::from_micros(192 + 1528 * 8));
        // ns-2: 512 + 20 B packet → 192 + (590 − 24)·8 = 4720 µs (ns-2's `mac-802_11.cc` arithmetic).
        assert_eq!(DcfConfig::ns2().data_airtime(532), SimDuration::from_micros(4720));
    }

    #[test]
    fn ofdm_6mbps_timing() {
        let c = DcfConfig::new(WifiRate::Ofdm6);
        assert_eq!(c.difs(), SimDuration::from_micros(34));
        assert_eq!(c.eifs(), SimDuration::from_micros(16 + 34 + 44));
        assert_eq!(c.ack_timeout(), SimDuration::from_micros(69));
        assert_eq!(c.basic_rate, WifiRate::Ofdm6);
    }
}

//! The IEEE 802.11 distributed coordination function (DCF) as a sans-IO state machine.
//!
//! # Read these first
//!
//! * IEEE Std 802.11-2020 §10.3, DCF: the carrier-sense mechanism, physical and virtual
//!   (§10.3.2.1), interframe spaces SIFS/DIFS/EIFS (§10.3.2.3), setting and resetting the NAV
//!   (§10.3.2.4), retransmit limits (§10.3.2.12), duplicate detection (§10.3.2.14), the random
//!   backoff time (§10.3.3), basic access (§10.3.4.2), the backoff procedure (§10.3.4.3), and
//!   group-addressed transfer (§10.3.6).
//! * G. Bianchi, "Performance analysis of the IEEE 802.11 distributed coordination function",
//!   IEEE JSAC 18(3), 2000: the saturation model this crate's tests check the DCF against
//!   (`tests/saturation.rs`).
//!
//! # How the backoff is computed (lazily)
//!
//! No event is scheduled per slot. The DCF keeps timestamps, in the manner of ns-3's
//! `ChannelAccessManager` (STYLE §4):
//!
//! * `cca_idle_since`: when physical carrier sense last went idle; `nav_until`: the NAV;
//!   `exchange_end`: when our last transmission ended, or our last CTS/ACK timeout expired;
//!   `eifs_pending`: the last reception failed.
//! * The countdown may run from `access_start = max(cca_idle_since + DIFS or EIFS,
//!   nav_end + DIFS, exchange_end + DIFS)` while the medium stays idle.
//! * `backoff_slots` is the counter as of `backoff_start` (a slot boundary, or the time it was
//!   drawn); counting proceeds from `max(access_start, backoff_start)` and the backoff ends at
//!   that time + `backoff_slots`·slot, which [`Dcf::poll_timeout`] reports.
//! * When the medium becomes busy, the whole idle slots elapsed since then are subtracted (the
//!   counter *freezes*, §10.3.4.3: a slot in which the medium turned busy does not count) and
//!   `backoff_start` moves to the last slot boundary. Counting resumes after the next DIFS/EIFS.
//!
//! A backoff that reaches zero at the very instant the medium turns busy still transmits: CCA
//! cannot detect a transmission that starts at the same instant (it needs aCCATime, §10.3.7),
//! which is how two stations whose counters end together collide. Every input first settles
//! any access grant due at or before its `now`, so the result does not depend on the order in
//! which the engine delivers events that fall at the same time.
//!
//! # Post-backoff and immediate access
//!
//! After every completed MSDU (acknowledged, broadcast sent, or dropped) a new backoff is drawn
//! from `[0, cw_min]` and counted down even if no MSDU is waiting (post-backoff, §10.3.4.3).
//! A new MSDU is sent without backoff once the medium has been idle for DIFS (EIFS) only when no
//! backoff is pending and the medium is idle when it arrives (§10.3.4.2); if the medium is busy
//! then, or turns busy before that DIFS is over, a backoff is drawn. A pending post-backoff is
//! finished lazily when the next input arrives, so an idle station costs no events.
//!
//! # Timing
//!
//! * DIFS = SIFS + 2·slot; EIFS = SIFS + DIFS + Ack airtime at the PHY's lowest mandatory rate
//!   ([`DcfConfig::eifs`]), used instead of DIFS from the end of an undecodable reception until a
//!   frame is received correctly.
//! * ACK timeout = SIFS + slot + Ack airtime after the end of our DATA frame, CTS timeout the
//!   same with the CTS ([`DcfConfig::ack_timeout`] explains the choice); after a timeout the
//!   backoff needs DIFS of idle medium from the timeout. The senders of a collision then resume
//!   exactly one slot after the bystanders, who wait EIFS from the end of the collided frames.
//! * Responses (ACK, CTS, DATA after CTS) go out SIFS after the end of the frame that elicits
//!   them, without carrier sense; a CTS only if our NAV is clear.
//! * Duration fields: DATA SIFS + Ack (0 for broadcast), RTS 3·SIFS + CTS + DATA + Ack, CTS the
//!   RTS's value − SIFS − CTS, Ack 0 (§9.2.5).
//!
//! # Rate adaptation
//!
//! With [`DcfConfig::rate_control`] = ARF or AARF ([`crate::rate`]), each unicast DATA frame
//! goes at its destination's current rate, which the outcome of every DATA attempt (Ack
//! received, or Ack timeout / another frame instead of the Ack) moves up or down. The chosen
//! rate gives the DATA frame's [`Frame::rate`] and [`Frame::airtime`], and the DATA airtime in
//! the RTS's Duration field (the rate cannot change between an RTS and its DATA frame: RTS
//! outcomes are not reported). The DATA frame's Duration (SIFS + Ack), the ACK and CTS
//! timeouts, EIFS and every control frame do not depend on it, because control frames all go at
//! the one basic rate. Broadcast DATA frames always go at [`DcfConfig::data_rate`]. The
//! per-destination state lives in a `BTreeMap` (deterministic, no hasher), created at the
//! first outcome reported for a destination; with [`RateControl::Constant`] it stays empty.
//!
//! # Simplifications
//!
//! No fragmentation, no power save, no PCF/HCF/EDCA, one basic rate for all control frames
//! (rate adaptation, if any, only changes unicast DATA frames), no MSDU lifetime; one MSDU in
//! service at a time (the engine keeps the interface queue), so the station retry counters
//! SSRC/SLRC are also the MSDU's retry counters.

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use tpsim_core::{RngStream, SimDuration, SimTime};
use tpsim_phy::WifiRate;

use crate::config::DcfConfig;
use crate::dup_cache::DupCache;
use crate::frame::{Frame, FrameKind, MacAddr, MacEvent, Msdu, BROADCAST};
use crate::rate::{RateChange, RateControl, RateState};

/// Plain counters of one DCF, collected at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
// `repr(C)`: the counters that change at every frame first, next to the DCF's hot fields.
#[repr(C)]
pub struct DcfStats {
    /// Frames received correctly, whatever their destination.
    pub rx_frames: u64,
    /// Receptions that could not be decoded ([`Dcf::on_rx_error`]): collisions seen.
    pub rx_errors: u64,
    /// MSDUs handed up ([`MacEvent::Delivered`]).
    pub delivered: u64,
    /// MSDUs handed to the MAC by [`Dcf::send`].
    pub msdus: u64,
    /// MSDUs acknowledged, or broadcast; each gave a [`MacEvent::TxOk`].
    pub tx_ok: u64,
    /// DATA frames transmitted: first attempts, retransmissions and broadcasts.
    pub data_sent: u64,
    /// DATA frames transmitted with the Retry bit set.
    pub data_retries: u64,
    /// Ack frames transmitted.
    pub ack_sent: u64,
    /// RTS frames transmitted (first attempts and retries).
    pub rts_sent: u64,
    /// CTS frames transmitted.
    pub cts_sent: u64,
    /// Failed attempts (ACK or CTS missing) followed by another attempt: increments of
    /// SSRC/SLRC below the limit.
    pub retries: u64,
    /// Ack timeouts (and other frames received instead of the Ack).
    pub ack_timeouts: u64,
    /// CTS timeouts (and other frames received instead of the CTS).
    pub cts_timeouts: u64,
    /// MSDUs discarded at the retry limit (§10.3.2.12); each gave a [`MacEvent::TxFailed`].
    pub drops_retry_limit: u64,
    /// Retransmitted DATA frames recognised as duplicates (acknowledged, not delivered).
    pub duplicates: u64,
    /// RTS frames for us not answered because our NAV was set (§10.3.2.4).
    pub cts_suppressed_by_nav: u64,
    /// Rate control ([`crate::rate`]) moved a destination up one rate.
    pub rate_increases: u64,
    /// Rate control moved a destination down one rate (failed probe or consecutive failures).
    pub rate_decreases: u64,
}

impl DcfStats {
    /// All MAC frames transmitted: DATA, ACK, RTS, CTS (the `mac_frames` metric, docs/metrics.md).
    pub fn frames_sent(&self) -> u64 {
        self.data_sent + self.ack_sent + self.rts_sent + self.cts_sent
    }

    /// The counts since `earlier`, a snapshot of the same counters (every field is a count
    /// that only grows).
    pub fn since(&self, earlier: &DcfStats) -> DcfStats {
        DcfStats {
            rx_frames: self.rx_frames - earlier.rx_frames,
            rx_errors: self.rx_errors - earlier.rx_errors,
            delivered: self.delivered - earlier.delivered,
            msdus: self.msdus - earlier.msdus,
            tx_ok: self.tx_ok - earlier.tx_ok,
            data_sent: self.data_sent - earlier.data_sent,
            data_retries: self.data_retries - earlier.data_retries,
            ack_sent: self.ack_sent - earlier.ack_sent,
            rts_sent: self.rts_sent - earlier.rts_sent,
            cts_sent: self.cts_sent - earlier.cts_sent,
            retries: self.retries - earlier.retries,
            ack_timeouts: self.ack_timeouts - earlier.ack_timeouts,
            cts_timeouts: self.cts_timeouts - earlier.cts_timeouts,
            drops_retry_limit: self.drops_retry_limit - earlier.drops_retry_limit,
            duplicates: self.duplicates - earlier.duplicates,
            cts_suppressed_by_nav: self.cts_suppressed_by_nav - earlier.cts_suppressed_by_nav,
            rate_increases: self.rate_increases - earlier.rate_increases,
            rate_decreases: self.rate_decreases - earlier.rate_decreases,
        }
    }
}

/// Where the exchange for the MSDU in service stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exchange {
    /// No frame exchange in progress; the MSDU, if any, contends for the medium.
    Idle,
    /// Our RTS is scheduled or on the air.
    Rts,
    /// RTS sent; waiting for the CTS to end by `deadline`.
    WaitCts { deadline: SimTime },
    /// Our DATA frame is scheduled or on the air.
    Data,
    /// DATA sent; waiting for the Ack to end by `deadline`.
    WaitAck { deadline: SimTime },
}

/// What a frame we put on the air is, for [`Dcf::on_tx_end`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TxKind {
    Rts,
    Data {
        broadcast: bool,
    },
    /// A SIFS response: Ack or CTS.
    Response,
}

/// The DCF of one station (one interface).
///
/// # Driving it (the engine's contract)
///
/// * **Upper layer:** the engine keeps the interface queue and calls [`Dcf::send`] with one
///   MSDU whenever [`Dcf::ready`] is true.
/// * **PHY inputs:** [`Dcf::on_medium_busy`] / [`Dcf::on_medium_idle`] when the aggregate
///   clear-channel assessment changes (energy above the carrier-sense threshold, or a
///   reception in progress); [`Dcf::on_rx`] at the end of every frame received correctly,
///   whatever its destination; [`Dcf::on_rx_error`] at the end of a frame that could not be
///   decoded; [`Dcf::on_tx_end`] when our own transmission leaves the air. Whether our own
///   transmission is also reported as CCA busy does not matter. At the end of a reception the
///   order of `on_rx`/`on_rx_error` and `on_medium_idle` at the same instant does not matter.
/// * **Timer:** [`Dcf::on_timeout`] at (or after) [`Dcf::poll_timeout`]; safe to call
///   spuriously.
/// * **Outputs**, polled in this order after every input: [`Dcf::poll_transmit`] (a frame to
///   put on the air now, for [`Frame::airtime`]), [`Dcf::poll_event`], [`Dcf::poll_timeout`].
#[derive(Clone, Debug)]
// `repr(C)`: fields in this order, so that what every carrier-sense change and reception
// touches (the first two lines, then the RTS NAV, the output events and the first counters)
// shares four cache lines instead of spreading over the whole struct (a station at rest in a
// large network is a cold cache miss per line). The pending frame's body, written and read
// only by a sender, comes after them.
#[repr(C)]
pub struct Dcf {
    // Carrier sense (§10.3.2.1), backoff (§10.3.3, §10.3.4.3) and the exchange: read or
    // written at every input.
    /// Physical CS: the PHY reports the medium busy.
    cca_busy: bool,
    /// The last reception failed and no correct frame followed: EIFS instead of DIFS
    /// (§10.3.2.3.7).
    eifs_pending: bool,
    /// A backoff (regular or post-backoff) is counting down or frozen.
    backoff_pending: bool,
    /// The MSDU in service found the medium idle and waits DIFS/EIFS without a backoff
    /// (§10.3.4.2); if the medium turns busy first, it draws one.
    immediate_access: bool,
    uses_rts: bool,
    /// `cfg.use_eifs`, cached here (read at every failed reception).
    use_eifs: bool,
    /// Contention window, in slots minus one: the backoff is drawn from [0, cw].
    cw: u32,
    /// Remaining backoff slots as of `backoff_start`.
    backoff_slots: u32,
    /// End of the last CCA-busy period (the time the medium last went idle).
    cca_idle_since: SimTime,
    /// Virtual CS: the NAV (§10.3.2.4) expires at this time.
    nav_until: SimTime,
    /// End of our own medium activity: our last transmission, or the CTS/ACK timeout that
    /// ended our last failed exchange. DIFS is counted from here too.
    exchange_end: SimTime,
    /// Counting of `backoff_slots` may not start before this time.
    backoff_start: SimTime,
    exchange: Exchange,
    // Second line: what every input reads after the first, and the sender's interframe spaces.
    /// When the next frame goes on the air (`NEVER`: none is pending); the frame itself is
    /// `next_tx_frame`, read only when it is due.
    next_tx_at: SimTime,
    /// Our frame on the air.
    tx_in_flight: Option<TxKind>,
    addr: MacAddr,
    msdu: Option<Msdu>,
    difs: SimDuration,
    eifs: SimDuration,
    slot: SimDuration,
    /// A NAV set by an RTS that may be reset (§10.3.2.4): (time of the check, NAV before the
    /// RTS). Resolved by the next busy indication.
    rts_nav: Option<(SimTime, SimTime)>,
    /// Output events, oldest first (inline: one or two wait at a time, so no separate heap
    /// buffer, which in a large network would be one more cold line per reception).
    events: smallvec::SmallVec<[MacEvent; 2]>,
    /// Counters (the reception counters change at every reception).
    stats: DcfStats,

    /// The next frame to put on the air at `next_tx_at` (meaningless when none is pending):
    /// a SIFS response, DATA after CTS, or the frame that won contention.
    next_tx_frame: Frame,
    next_tx_kind: TxKind,

    // Durations derived from the configuration, cached.
    sifs: SimDuration,
    ack_airtime: SimDuration,
    cts_airtime: SimDuration,
    ack_timeout: SimDuration,
    cts_timeout: SimDuration,
    rts_nav_reset_after: SimDuration,

    // Sequence numbers, retry counters, and what is read rarely.
    msdu_seq: u16,
    next_seq: u16,
    /// DATA transmissions of the MSDU so far (for the Retry bit).
    data_attempts: u32,
    /// Station short retry count (§10.3.2.12).
    ssrc: u32,
    /// Station long retry count (§10.3.2.12).
    slrc: u32,
    rng: RngStream,
    cfg: DcfConfig,
    /// Boxed: half a kilobyte read only for unicast DATA frames to us, kept out of the state
    /// that every carrier-sense change and reception touches.
    dup_cache: Box<DupCache>,
    /// ARF/AARF state per destination ([`crate::rate`]); empty with a constant rate.
    rates: BTreeMap<MacAddr, RateState>,
}

impl Dcf {
    /// A station with address `addr` whose backoff draws come from `rng` (the node's
    /// [`Module::MacBackoff`](tpsim_core::Module::MacBackoff) stream). The medium is taken to
    /// have been idle since time zero.
    ///
    /// # Panics
    /// If `cw_min > cw_max`, a retry limit is zero, the slot is zero, or `addr` is
    /// [`BROADCAST`].
    pub fn new(cfg: DcfConfig, addr: MacAddr, rng: RngStream) -> Self {
        assert!(cfg.timing.cw_min <= cfg.timing.cw_max, "cw_min > cw_max");
        assert!(
            cfg.short_retry_limit >= 1 && cfg.long_retry_limit >= 1,
            "retry limits must be at least 1"
        );
        assert!(cfg.timing.slot.0 > 0, "slot must be positive");
        assert_ne!(addr, BROADCAST, "a station cannot have the broadcast address");
        // Stands in `next_tx_frame` while no frame is pending (never read then).
        let no_frame = Frame {
            kind: FrameKind::Ack,
            src: addr,
            dst: addr,
            bytes: 0,
            rate: cfg.basic_rate,
            airtime: SimDuration::ZERO,
            duration_nav: SimDuration::ZERO,
            seq: 0,
            retry: false,
            handle: 0,
        };
        Dcf {
            slot: cfg.slot(),
            sifs: cfg.sifs(),
            difs: cfg.difs(),
            eifs: cfg.eifs(),
            ack_airtime: cfg.ack_airtime(),
            cts_airtime: cfg.cts_airtime(),
            ack_timeout: cfg.ack_timeout(),
            cts_timeout: cfg.cts_timeout(),
            rts_nav_reset_after: cfg.rts_nav_reset_after(),
            use_eifs: cfg.use_eifs,
            cw: cfg.timing.cw_min,
            cfg,
            addr,
            rng,
            cca_busy: false,
            cca_idle_since: SimTime::ZERO,
            nav_until: SimTime::ZERO,
            rts_nav: None,
            eifs_pending: false,
            exchange_end: SimTime::ZERO,
            backoff_pending: false,
            backoff_slots: 0,
            backoff_start: SimTime::ZERO,
            immediate_access: false,
            msdu: None,
            msdu_seq: 0,
            next_seq: 0,
            uses_rts: false,
            data_attempts: 0,
            ssrc: 0,
            slrc: 0,
            exchange: Exchange::Idle,
            next_tx_at: SimTime::NEVER,
            next_tx_frame: no_frame,
            next_tx_kind: TxKind::Response,
            tx_in_flight: None,
            dup_cache: Box::default(),
            rates: BTreeMap::new(),
            events: smallvec::SmallVec::new(),
            stats: DcfStats::default(),
        }
    }

    // ---------------------------------------------------------------- getters

    /// This station's address.
    pub fn addr(&self) -> MacAddr {
        self.addr
    }
    /// The configuration.
    pub fn config(&self) -> &DcfConfig {
        &self.cfg
    }
    /// True when no MSDU is in service: [`Dcf::send`] may be called.
    pub fn ready(&self) -> bool {
        self.msdu.is_none()
    }
    /// The current contention window (the backoff is drawn from `[0, cw]` slots).
    pub fn cw(&self) -> u32 {
        self.cw
    }
    /// The pending backoff counter, in slots, as of its last update (it is updated when the
    /// medium turns busy, not slot by slot); `None` if no backoff is pending.
    pub fn backoff_slots(&self) -> Option<u32> {
        self.backoff_pending.then_some(self.backoff_slots)
    }
    /// When the NAV expires (§10.3.2.4), before any RTS NAV reset.
    pub fn nav_until(&self) -> SimTime {
        self.nav_until
    }
    /// Station short and long retry counts (SSRC, SLRC).
    pub fn retry_counts(&self) -> (u32, u32) {
        (self.ssrc, self.slrc)
    }
    /// Counters.
    pub fn stats(&self) -> DcfStats {
        self.stats
    }
    /// The rate the next DATA frame to `dst` would be sent at: the configured data rate for
    /// [`BROADCAST`], with a constant rate, or before any outcome to `dst`; otherwise the
    /// rate control's current rate for `dst`.
    pub fn data_rate_for(&self, dst: MacAddr) -> WifiRate {
        match self.rates.get(&dst) {
            Some(state) if dst != BROADCAST => state.rate(),
            _ => self.cfg.data_rate,
        }
    }
    /// The ARF/AARF state of `dst`, once an outcome has been reported for it.
    pub fn rate_state(&self, dst: MacAddr) -> Option<&RateState> {
        self.rates.get(&dst)
    }

    // ---------------------------------------------------------------- upper layer

    /// Hands the MAC one MSDU to send (§10.3.4.2 basic access): if no backoff is pending and
    /// the medium is idle, it goes out as soon as the medium has been idle for DIFS (EIFS);
    /// if the medium is busy, a backoff is drawn; a pending (post-)backoff is finished first.
    ///
    /// # Panics
    /// If an MSDU is already in service ([`Dcf::ready`] is false): the engine must wait.
    pub fn send(&mut self, now: SimTime, msdu: Msdu) {
        assert!(self.ready(), "Dcf::send while an MSDU is in service");
        self.settle(now);
        self.stats.msdus += 1;
        self.msdu = Some(msdu);
        self.msdu_seq = self.next_seq;
        self.next_seq = (self.next_seq + 1) & 0x0FFF;
        self.data_attempts = 0;
        self.ssrc = 0;
        self.slrc = 0;
        self.exchange = Exchange::Idle;
        let data_bytes = self.cfg.data_bytes(msdu.bytes);
        self.uses_rts = msdu.dst != BROADCAST && self.cfg.rts_threshold_bytes.is_some_and(|t| data_bytes > t);
        if !self.backoff_pending {
            // §10.3.4.2: transmit after DIFS of idle medium if idle now, else back off (ns-2
            // backs off in both cases: `idle_backoff`).
            self.immediate_access = self.medium_idle(now) && !self.cfg.idle_backoff;
            self.backoff_slots = if self.immediate_access { 0 } else { self.draw_backoff() };
            self.backoff_pending = true;
            self.backoff_start = now;
        }
        self.try_grant(now);
    }

    // ---------------------------------------------------------------- PHY inputs

    /// Physical carrier sense turned busy (§10.3.2.1). A backoff that ends exactly now still
    /// transmits (see the module doc); otherwise the countdown freezes.
    pub fn on_medium_busy(&mut self, now: SimTime) {
        if self.cca_busy {
            return;
        }
        self.settle(now);
        self.freeze_backoff(now);
        if self.immediate_access {
            // §10.3.4.2: the medium turned busy before the DIFS without backoff was over.
            self.immediate_access = false;
            self.start_backoff(now);
        }
        self.resolve_rts_nav(now);
        self.cca_busy = true;
    }

    /// Whether the station is at rest: no MSDU in service, no backoff (post-backoff included)
    /// pending, no frame exchange, nothing scheduled for or on the air, no RTS NAV reset
    /// pending, no event to poll. At rest, [`Dcf::on_medium_busy`] and
    /// [`Dcf::on_medium_idle`] only record the carrier-sense state and the station stays at
    /// rest, so an engine may hold such transitions back and hand over their net effect with
    /// [`Dcf::sync_medium`] before the next input.
    #[inline]
    pub fn at_rest(&self) -> bool {
        self.msdu.is_none()
            && !self.backoff_pending
            && !self.immediate_access
            && self.exchange == Exchange::Idle
            && !self.next_tx_pending()
            && self.tx_in_flight.is_none()
            && self.rts_nav.is_none()
            && self.events.is_empty()
    }

    /// The net effect of carrier-sense transitions and failed receptions held back while the
    /// station was at rest ([`Dcf::at_rest`]): the medium is now busy or not (`busy`), the
    /// last transition to idle among them, if any, was at `idle_since`, and `rx_errors`
    /// receptions failed. Gives the same state as calling [`Dcf::on_medium_busy`],
    /// [`Dcf::on_medium_idle`] and [`Dcf::on_rx_error`] as each happened (at rest a failed
    /// reception only counts and makes the next deferral EIFS).
    pub fn sync_medium(&mut self, busy: bool, idle_since: Option<SimTime>, rx_errors: u32) {
        debug_assert!(
            self.at_rest(),
            "carrier-sense transitions held back from a busy station"
        );
        self.cca_busy = busy;
        if let Some(t) = idle_since {
            self.cca_idle_since = t;
        }
        if rx_errors > 0 {
            self.stats.rx_errors += rx_errors as u64;
            if self.use_eifs {
                self.eifs_pending = true;
            }
        }
    }

    /// Physical carrier sense turned idle.
    pub fn on_medium_idle(&mut self, now: SimTime) {
        if !self.cca_busy {
            return;
        }
        self.settle(now);
        self.cca_busy = false;
        self.cca_idle_since = now;
    }

    /// A frame was received correctly; `now` is the end of the frame. Frames for others set
    /// the NAV (§10.3.2.4); DATA for us is acknowledged after SIFS and delivered unless it is a
    /// duplicate (§10.3.2.14); an RTS for us is answered with a CTS after SIFS if our NAV is
    /// clear; a CTS or Ack we wait for continues or completes our exchange, and any other frame
    /// received while we wait counts as a failed attempt.
    pub fn on_rx(&mut self, now: SimTime, frame: &Frame) {
        self.settle(now);
        self.freeze_backoff(now);
        // The frame's reception started at now − airtime: that is the PHY-RXSTART an RTS NAV
        // reset looks for (normally already seen as `on_medium_busy`).
        self.resolve_rts_nav(SimTime(now.0.saturating_sub(frame.airtime.0)));
        self.stats.rx_frames += 1;
        // §10.3.2.3.7: a correctly received frame ends the EIFS; DIFS applies again.
        self.eifs_pending = false;
        let for_me = frame.dst == self.addr;

        match (self.exchange, frame.kind) {
            (Exchange::WaitCts { .. }, FrameKind::Cts) if for_me => {
                // The RTS succeeded: SSRC is reset (§10.3.2.12); DATA follows after SIFS.
                self.ssrc = 0;
                self.exchange = Exchange::Data;
                let data = self.data_frame();
                self.set_next_tx(now + self.sifs, data, TxKind::Data { broadcast: false });
                return;
            }
            (Exchange::WaitAck { .. }, FrameKind::Ack) if for_me => {
                self.report_data_outcome(true);
                self.complete(now, None);
                return;
            }
            (Exchange::WaitCts { .. } | Exchange::WaitAck { .. }, _) => {
                // Any other valid frame means our attempt failed; then process the frame.
                self.attempt_failed(now);
            }
            _ => {}
        }

        if !for_me && frame.dst != BROADCAST {
            // §10.3.2.4: update the NAV only if the new value is later.
            let until = now + frame.duration_nav;
            if until > self.nav_until {
                self.rts_nav = (frame.kind == FrameKind::Rts && self.cfg.rts_nav_reset)
                    .then_some((now + self.rts_nav_reset_after, self.nav_until));
                self.nav_until = until;
            }
            return;
        }

        match frame.kind {
            FrameKind::Data if for_me => {
                // Acknowledge after SIFS regardless of the NAV and CCA, duplicates included.
                let ack = self.control_frame(FrameKind::Ack, frame.src, self.ack_airtime, SimDuration::ZERO, frame);
                self.schedule_response(now, ack);
                if self.dup_cache.check_and_insert(frame.src, frame.seq, frame.retry) {
                    self.stats.duplicates += 1;
                } else {
                    self.deliver(frame);
                }
            }
            FrameKind::Data => self.deliver(frame), // broadcast: no ACK, no duplicate check
            FrameKind::Rts if for_me => {
                if self.nav_end() <= now {
                    let nav = SimDuration(frame.duration_nav.0.saturating_sub(self.sifs.0 + self.cts_airtime.0));
                    let cts = self.control_frame(FrameKind::Cts, frame.src, self.cts_airtime, nav, frame);
                    self.schedule_response(now, cts);
                } else {
                    self.stats.cts_suppressed_by_nav += 1;
                }
            }
            _ => {} // a late or unexpected CTS/Ack
        }
    }

    /// A reception ended that could not be decoded (collision, or too weak to capture): the
    /// next access waits EIFS instead of DIFS (§10.3.2.3.7) until a frame is received
    /// correctly.
    pub fn on_rx_error(&mut self, now: SimTime) {
        self.settle(now);
        self.freeze_backoff(now);
        self.stats.rx_errors += 1;
        if self.use_eifs {
            self.eifs_pending = true;
        }
    }

    /// Our transmission has left the air. After an RTS the CTS timeout starts, after a unicast
    /// DATA frame the ACK timeout; a broadcast is complete.
    pub fn on_tx_end(&mut self, now: SimTime) {
        let Some(kind) = self.tx_in_flight.take() else {
            return;
        };
        self.exchange_end = now;
        match kind {
            TxKind::Rts => {
                self.exchange = Exchange::WaitCts {
                    deadline: now + self.cts_timeout,
                }
            }
            TxKind::Data { broadcast: false } => {
                self.exchange = Exchange::WaitAck {
                    deadline: now + self.ack_timeout,
                }
            }
            TxKind::Data { broadcast: true } => self.complete(now, None),
            TxKind::Response => {}
        }
    }

    /// The station is switched off and on again at `now` (an interface that goes down or
    /// comes back up): the MSDU in service, the exchange, the backoff, a frame scheduled or on
    /// the air, the NAV and the pending events are forgotten; the contention window and the
    /// station retry counts start over (§10.3.3), and the medium counts as idle since `now`.
    /// Kept: the counters, the sequence numbers, the duplicate cache, the rate control state
    /// and the random stream. The engine takes the MSDU in service back itself.
    pub fn power_cycle(&mut self, now: SimTime) {
        self.cca_busy = false;
        self.eifs_pending = false;
        self.backoff_pending = false;
        self.immediate_access = false;
        self.uses_rts = false;
        self.cw = self.cfg.timing.cw_min;
        self.backoff_slots = 0;
        self.cca_idle_since = now;
        self.nav_until = now;
        self.exchange_end = now;
        self.backoff_start = now;
        self.exchange = Exchange::Idle;
        self.next_tx_at = SimTime::NEVER;
        self.tx_in_flight = None;
        self.msdu = None;
        self.rts_nav = None;
        self.events.clear();
        self.data_attempts = 0;
        self.ssrc = 0;
        self.slrc = 0;
    }

    /// The timer: the CTS or ACK timeout, or the end of the backoff. Safe to call early or
    /// repeatedly.
    pub fn on_timeout(&mut self, now: SimTime) {
        self.settle(now);
    }

    // ---------------------------------------------------------------- outputs

    /// The frame to put on the air at `now`, if one is due. The engine keeps it on the air
    /// for [`Frame::airtime`] and then calls [`Dcf::on_tx_end`].
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Frame> {
        if !self.next_tx_pending() || self.next_tx_at > now {
            return None;
        }
        self.next_tx_at = SimTime::NEVER;
        let (frame, kind) = (self.next_tx_frame, self.next_tx_kind);
        self.tx_in_flight = Some(kind);
        self.exchange_end = now + frame.airtime;
        match frame.kind {
            FrameKind::Data => {
                self.stats.data_sent += 1;
                self.stats.data_retries += frame.retry as u64;
            }
            FrameKind::Ack => self.stats.ack_sent += 1,
            FrameKind::Rts => self.stats.rts_sent += 1,
            FrameKind::Cts => self.stats.cts_sent += 1,
        }
        Some(frame)
    }

    /// The next event for the upper layer or the engine.
    pub fn poll_event(&mut self) -> Option<MacEvent> {
        if self.events.is_empty() {
            return None;
        }
        let ev = self.events.remove(0);
        if self.events.is_empty() && self.events.spilled() {
            // More than two waited at once: back inline for the next ones.
            self.events.shrink_to_fit();
        }
        Some(ev)
    }

    /// The next time [`Dcf::on_timeout`] (or [`Dcf::poll_transmit`], for a scheduled SIFS
    /// response) has something to do. A post-backoff without an MSDU waiting needs no timer.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let mut next = self.next_tx_pending().then_some(self.next_tx_at);
        if let Exchange::WaitCts { deadline } | Exchange::WaitAck { deadline } = self.exchange {
            next = Some(next.map_or(deadline, |t| t.min(deadline)));
        }
        if self.msdu.is_some() {
            if let Some(end) = self.backoff_end() {
                next = Some(next.map_or(end, |t| t.min(end)));
            }
        }
        next
    }

    // ---------------------------------------------------------------- internals

    /// A frame waits to go on the air (at `next_tx_at`).
    #[inline]
    fn next_tx_pending(&self) -> bool {
        self.next_tx_at != SimTime::NEVER
    }

    /// `frame` (of kind `kind`) goes on the air at `at`.
    #[inline]
    fn set_next_tx(&mut self, at: SimTime, frame: Frame, kind: TxKind) {
        debug_assert!(at != SimTime::NEVER);
        self.next_tx_at = at;
        self.next_tx_frame = frame;
        self.next_tx_kind = kind;
    }

    /// Handles everything due at or before `now`: a response timeout, then the end of the
    /// backoff. Called first by every input, so that same-instant inputs see a settled state.
    fn settle(&mut self, now: SimTime) {
        if let Exchange::WaitCts { deadline } | Exchange::WaitAck { deadline } = self.exchange {
            if deadline <= now {
                self.attempt_failed(now);
            }
        }
        self.try_grant(now);
    }

    /// The medium is idle for a new MSDU (§10.3.4.2): CCA idle, NAV clear, and we are neither
    /// transmitting nor about to.
    fn medium_idle(&self, now: SimTime) -> bool {
        !self.cca_busy && self.nav_end() <= now && self.tx_in_flight.is_none() && !self.next_tx_pending()
    }

    /// The NAV's end, with a pending RTS NAV reset (§10.3.2.4) applied: if no reception starts
    /// before the check time, the NAV falls back to its value before the RTS at that time.
    fn nav_end(&self) -> SimTime {
        match self.rts_nav {
            Some((check, before)) => self.nav_until.min(check.max(before)),
            None => self.nav_until,
        }
    }

    /// A reception (or energy) started at `at`: decide a pending RTS NAV reset.
    fn resolve_rts_nav(&mut self, at: SimTime) {
        if let Some((check, before)) = self.rts_nav.take() {
            if at >= check {
                self.nav_until = self.nav_until.min(check.max(before));
            }
        }
    }

    /// From when the backoff may count down, if the medium is idle and we contend: DIFS (EIFS)
    /// after physical CS went idle, DIFS after the NAV, and DIFS after our own last activity
    /// (transmission or response timeout).
    fn access_start(&self) -> Option<SimTime> {
        if self.cca_busy || self.tx_in_flight.is_some() || self.next_tx_pending() || self.exchange != Exchange::Idle {
            return None;
        }
        let ifs = if self.eifs_pending { self.eifs } else { self.difs };
        let physical = self.cca_idle_since + ifs;
        let virtual_cs = self.nav_end() + self.difs;
        let own = self.exchange_end + self.difs;
        Some(physical.max(virtual_cs).max(own))
    }

    /// When the pending backoff reaches zero if the medium stays idle.
    fn backoff_end(&self) -> Option<SimTime> {
        if !self.backoff_pending {
            return None;
        }
        let start = self.access_start()?.max(self.backoff_start);
        Some(start + SimDuration(self.slot.0 * self.backoff_slots as u64))
    }

    /// Counts the whole idle slots elapsed by `now` and freezes the counter there (§10.3.4.3).
    /// Called before anything that makes the medium busy for us.
    fn freeze_backoff(&mut self, now: SimTime) {
        if !self.backoff_pending {
            return;
        }
        let Some(start) = self.access_start() else {
            return;
        };
        let start = start.max(self.backoff_start);
        if now <= start {
            return;
        }
        let elapsed = ((now.0 - start.0) / self.slot.0).min(self.backoff_slots as u64);
        self.backoff_slots -= elapsed as u32;
        self.backoff_start = start + SimDuration(elapsed * self.slot.0);
    }

    /// If the backoff has reached zero by `now`, ends it and, with an MSDU waiting, schedules
    /// its first frame (RTS or DATA) for `now`.
    fn try_grant(&mut self, now: SimTime) {
        let Some(end) = self.backoff_end() else {
            return;
        };
        if end > now {
            return;
        }
        self.backoff_pending = false;
        self.backoff_slots = 0;
        self.backoff_start = end;
        self.immediate_access = false;
        if self.msdu.is_none() {
            return; // post-backoff complete
        }
        if self.uses_rts {
            let frame = self.rts_frame();
            self.exchange = Exchange::Rts;
            self.set_next_tx(now, frame, TxKind::Rts);
        } else {
            let frame = self.data_frame();
            let broadcast = frame.dst == BROADCAST;
            self.exchange = Exchange::Data;
            self.set_next_tx(now, frame, TxKind::Data { broadcast });
        }
    }

    /// A uniform draw from [0, cw] (§10.3.3).
    fn draw_backoff(&mut self) -> u32 {
        ((self.rng.next_u64() as u128 * (self.cw as u128 + 1)) >> 64) as u32
    }

    /// Starts a new backoff from `now` with the current CW.
    fn start_backoff(&mut self, now: SimTime) {
        self.backoff_slots = self.draw_backoff();
        self.backoff_pending = true;
        self.backoff_start = now;
    }

    /// The CTS or Ack did not come (or another frame came instead): count the failure against
    /// SSRC (RTS, or DATA not longer than the RTS threshold) or SLRC (DATA longer than it),
    /// then retry with a doubled CW or discard the MSDU at the limit (§10.3.2.12, §10.3.3).
    fn attempt_failed(&mut self, now: SimTime) {
        let rts = matches!(self.exchange, Exchange::WaitCts { .. });
        let long = match self.exchange {
            Exchange::WaitCts { .. } => {
                self.stats.cts_timeouts += 1;
                false
            }
            Exchange::WaitAck { .. } => {
                self.stats.ack_timeouts += 1;
                self.report_data_outcome(false);
                self.uses_rts
            }
            _ => return,
        };
        self.exchange = Exchange::Idle;
        // The failed exchange ends here; the backoff then needs DIFS of idle medium like any
        // other (§10.3.4.3). With ACK timeout = SIFS + slot + Ack, this puts the senders of a
        // collision exactly one slot behind the bystanders, who wait EIFS = SIFS + Ack + DIFS:
        // everyone stays on one slot grid.
        self.exchange_end = self.exchange_end.max(now);
        let (count, limit) = if long {
            self.slrc += 1;
            (self.slrc, self.cfg.long_retry_limit)
        } else {
            self.ssrc += 1;
            (self.ssrc, self.cfg.short_retry_limit)
        };
        if count >= limit {
            self.complete(now, Some(rts));
        } else {
            self.stats.retries += 1;
            self.cw = (2 * self.cw + 1).min(self.cfg.timing.cw_max);
            self.start_backoff(now);
        }
    }

    /// The MSDU in service is done: acknowledged or broadcast (`failed` is `None`), or
    /// discarded at the retry limit (`Some(rts)`: whether its last attempt was an RTS that
    /// drew no CTS). CW and the retry counts are reset and a post-backoff is drawn
    /// (§10.3.4.3).
    fn complete(&mut self, now: SimTime, failed: Option<bool>) {
        let Some(msdu) = self.msdu.take() else {
            return;
        };
        if let Some(rts) = failed {
            self.stats.drops_retry_limit += 1;
            self.events.push(MacEvent::TxFailed {
                handle: msdu.handle,
                dst: msdu.dst,
                rts,
            });
        } else {
            self.stats.tx_ok += 1;
            self.events.push(MacEvent::TxOk { handle: msdu.handle });
        }
        self.exchange = Exchange::Idle;
        self.cw = self.cfg.timing.cw_min;
        self.ssrc = 0;
        self.slrc = 0;
        self.start_backoff(now);
    }

    /// Reports the outcome of the unicast DATA attempt just ended to rate control
    /// ([`crate::rate`]); nothing with a constant rate.
    fn report_data_outcome(&mut self, acked: bool) {
        if self.cfg.rate_control == RateControl::Constant {
            return;
        }
        let Some(msdu) = self.msdu else {
            return;
        };
        if msdu.dst == BROADCAST {
            return;
        }
        let (start, algo) = (self.cfg.data_rate, self.cfg.rate_control);
        let state = self
            .rates
            .entry(msdu.dst)
            .or_insert_with(|| RateState::new(start, algo));
        let change = if acked { state.on_success() } else { state.on_failure() };
        match change {
            RateChange::Up => self.stats.rate_increases += 1,
            RateChange::Down => self.stats.rate_decreases += 1,
            RateChange::None => {}
        }
    }

    fn deliver(&mut self, frame: &Frame) {
        self.stats.delivered += 1;
        self.events.push(MacEvent::Delivered {
            handle: frame.handle,
            src: frame.src,
        });
    }

    /// Schedules a SIFS response (Ack or CTS), unless we are transmitting or already have a
    /// frame scheduled (the PHY is half duplex; the engine should not deliver frames then).
    fn schedule_response(&mut self, now: SimTime, frame: Frame) {
        if self.tx_in_flight.is_some() || self.next_tx_pending() {
            return;
        }
        self.set_next_tx(now + self.sifs, frame, TxKind::Response);
    }

    /// The DATA frame for the MSDU in service, at the destination's current rate
    /// ([`Dcf::data_rate_for`]). Duration: SIFS + Ack for unicast, 0 for broadcast (§9.2.5).
    /// Sets the Retry bit on retransmissions.
    fn data_frame(&mut self) -> Frame {
        let msdu = self.msdu.expect("DATA frame without an MSDU");
        let bytes = self.cfg.data_bytes(msdu.bytes);
        let rate = self.data_rate_for(msdu.dst);
        let duration_nav = if msdu.dst == BROADCAST {
            SimDuration::ZERO
        } else {
            self.sifs + self.ack_airtime
        };
        let retry = self.data_attempts > 0;
        self.data_attempts += 1;
        Frame {
            kind: FrameKind::Data,
            src: self.addr,
            dst: msdu.dst,
            bytes,
            rate,
            airtime: self.cfg.airtime(rate, bytes),
            duration_nav,
            seq: self.msdu_seq,
            retry,
            handle: msdu.handle,
        }
    }

    /// The RTS for the MSDU in service. Duration: 3·SIFS + CTS + DATA + Ack (§9.2.5), the
    /// DATA frame at the rate it will be sent at.
    fn rts_frame(&self) -> Frame {
        let msdu = self.msdu.expect("RTS without an MSDU");
        let data_airtime = self.cfg.data_airtime_at(self.data_rate_for(msdu.dst), msdu.bytes);
        let duration_nav = SimDuration(3 * self.sifs.0 + self.cts_airtime.0 + data_airtime.0 + self.ack_airtime.0);
        Frame {
            kind: FrameKind::Rts,
            src: self.addr,
            dst: msdu.dst,
            bytes: self.cfg.rts_bytes,
            rate: self.cfg.basic_rate,
            airtime: self.cfg.rts_airtime(),
            duration_nav,
            seq: self.msdu_seq,
            retry: self.ssrc > 0,
            handle: msdu.handle,
        }
    }

    /// An Ack or CTS answering `to`.
    fn control_frame(
        &self,
        kind: FrameKind,
        dst: MacAddr,
        airtime: SimDuration,
        duration_nav: SimDuration,
        to: &Frame,
    ) -> Frame {
        let bytes = if kind == FrameKind::Ack {
            self.cfg.ack_bytes
        } else {
            self.cfg.cts_bytes
        };
        Frame {
            kind,
            src: self.addr,
            dst,
            bytes,
            rate: self.cfg.basic_rate,
            airtime,
            duration_nav,
            seq: to.seq,
            retry: false,
            handle: to.handle,
        }
    }
}

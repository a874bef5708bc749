//! Multi-homing (RFC 9260 §5.1.2, §5.4, §6.4, §8.2, §8.3): the peer's addresses as paths, their
//! verification by HEARTBEAT, where new DATA goes (the primary while it is active, else an
//! active alternate), retransmission of timed-out chunks to an alternate, and the HEARTBEAT
//! period with its jitter.
//!
//! With [`SctpConfig::pf_max_retrans`](crate::sctp::SctpConfig::pf_max_retrans), the
//! potentially-failed (PF) state of RFC 7829 §3: a confirmed active destination whose error
//! counter (T3-rtx expiries, unanswered HEARTBEATs) exceeds PFMR is potentially failed. New DATA
//! and retransmissions leave it at once for an active destination that is not, if one exists
//! (with none, they go to the potentially-failed destination with the fewest errors); it gets
//! a HEARTBEAT at once and then one per RTO, each unanswered one an error that backs the RTO
//! off; a HEARTBEAT ACK, or a SACK newly acknowledging DATA sent to it, makes it active with
//! its error counter cleared (new DATA returns if it is the primary), and past
//! Path.Max.Retrans it is inactive as without PF. Its cwnd is whatever RFC 9260 §7.2 makes of
//! it (the timeout's one PMDCS, the idle rule of §7.2.1). Off (`None`), nothing here changes.
//!
//! A socket that is never told addresses ([`SctpSocket::set_addresses`]) has one path and
//! behaves as a single-homed endpoint: nothing here changes its packets.

use super::SctpSocket;
use crate::sctp::path::Path;
use std::net::Ipv4Addr;
use tpsim_core::{SimDuration, SimTime};
use tpsim_wire::sctp::{AddrList, MAX_INIT_ADDRS};

/// Paths an association keeps at most: the address it was opened with and the addresses of
/// the peer's INIT or INIT ACK.
pub(crate) const MAX_PATHS: usize = MAX_INIT_ADDRS + 1;

/// Bits of a HEARTBEAT's information that hold its send time, ns (the top byte holds the path:
/// RFC 9260 §5.4's path indicator).
const HB_TIME_MASK: u64 = (1 << 56) - 1;

impl SctpSocket {
    /// Makes the endpoint multi-homed (RFC 9260 §6.4): `local` are its own addresses, announced
    /// in INIT or INIT ACK when there are several (§5.1.2); `peer` is the address the active end
    /// opens the association to (path 0); `primary`, if given, the peer address to use as the
    /// primary path once the peer has announced it (RFC 9260 §6.4: the upper layer chooses the
    /// primary). Call before any input.
    pub fn set_addresses(&mut self, local: &[Ipv4Addr], peer: Option<Ipv4Addr>, primary: Option<Ipv4Addr>) {
        self.local_addrs = if local.len() > 1 {
            AddrList::from_slice(local)
        } else {
            AddrList::default()
        };
        if let Some(a) = peer {
            self.paths[0].addr = Some(a);
        }
        self.primary_addr = primary;
        // The INIT queued by an active open announces the addresses.
        for c in self.ctrl.iter_mut() {
            if let tpsim_wire::sctp::ControlChunk::Init(i) = &mut c.chunk {
                i.addresses = self.local_addrs;
            }
        }
    }

    /// The path whose address is `a` (path 0 if unknown or not given).
    #[inline]
    pub(super) fn path_of(&self, a: Option<Ipv4Addr>) -> usize {
        if self.paths.len() == 1 || a.is_none() {
            return 0;
        }
        self.paths.iter().position(|p| p.addr == a).unwrap_or(0)
    }

    /// Adds the peer's announced addresses `list` and the packet's source `src` (RFC 9260
    /// §5.1.2: with address parameters present, the source address belongs to the peer too).
    /// New addresses are UNCONFIRMED (§5.4); path 0 keeps its state.
    pub(super) fn add_peer_addresses(&mut self, list: AddrList, src: Option<Ipv4Addr>) {
        if self.paths[0].addr.is_none() {
            self.paths[0].addr = src;
        }
        if list.is_empty() {
            return; // §5.1.2: no address parameters: the source address is the only one
        }
        for a in src.into_iter().chain(list.iter()) {
            if self.paths.len() == MAX_PATHS || self.paths.iter().any(|p| p.addr == Some(a)) {
                continue;
            }
            let mut p = self.new_path();
            p.addr = Some(a);
            p.confirmed = false;
            self.paths.push(p);
        }
        if let Some(k) = self
            .primary_addr
            .and_then(|a| self.paths.iter().position(|p| p.addr == Some(a)))
        {
            self.primary = k;
            self.choose_data_path();
        }
    }

    /// A fresh path: RTO.Initial, the initial cwnd, ssthresh as path 0's was set (§7.2.1).
    fn new_path(&self) -> Path {
        let s = &self.sctp;
        let rtt = s.rto_estimator();
        let ssthresh = s.initial_ssthresh_bytes.unwrap_or(self.paths[0].ssthresh);
        Path::new(rtt, self.initial_cwnd(), ssthresh)
    }

    /// Whether DATA may go to path `k`: confirmed (§5.4) and active (§8.2).
    #[inline]
    pub(super) fn usable(&self, k: usize) -> bool {
        let p = &self.paths[k];
        p.confirmed && p.active
    }

    /// Whether DATA (new or retransmitted) may go to path `k` while an active destination that
    /// is not potentially failed exists: usable and not potentially failed (RFC 7829 §3). Without
    /// the PF state, [`usable`](Self::usable).
    #[inline]
    pub(super) fn takes_data(&self, k: usize) -> bool {
        self.usable(k) && !self.paths[k].potentially_failed
    }

    /// RFC 9260 §6.4/§6.4.1: new DATA goes to the primary while it is usable, else stays on
    /// the alternate in use, else to the first usable alternate (with none, to the primary).
    /// With the PF state (RFC 7829 §3) potentially-failed destinations count as unusable here,
    /// and when every destination is potentially failed or inactive new DATA goes to the
    /// potentially-failed one with the fewest errors ([`least_failed`](Self::least_failed)).
    pub(super) fn choose_data_path(&mut self) {
        if self.paths.len() == 1 {
            return;
        }
        let next = if self.takes_data(self.primary) {
            self.primary
        } else if self.data_path != self.primary && self.takes_data(self.data_path) {
            self.data_path
        } else {
            (0..self.paths.len())
                .find(|&k| k != self.primary && self.takes_data(k))
                .or_else(|| self.least_failed())
                .unwrap_or(self.primary)
        };
        if next != self.data_path {
            if self.data_path == self.primary {
                self.failovers += 1;
                self.failover_acked_at = None;
            }
            self.data_path = next;
        }
    }

    /// RFC 7829 §3: with every destination potentially failed or inactive, the potentially-failed
    /// one with the lowest error counter; among equals the one new DATA goes to now, then the
    /// primary, then the first (tpsim's tie-break). `None` if none is potentially failed.
    fn least_failed(&self) -> Option<usize> {
        (0..self.paths.len())
            .filter(|&k| self.usable(k) && self.paths[k].potentially_failed)
            .min_by_key(|&k| (self.paths[k].error_count, k != self.data_path, k != self.primary, k))
    }

    /// RFC 9260 §6.4: where chunks that timed out on path `pi` are retransmitted: an active
    /// destination other than `pi` if there is one (with the PF state, one not potentially
    /// failed if there is one, else the potentially-failed one new DATA goes to, RFC 7829 §3).
    pub(super) fn alternate_for(&self, pi: usize) -> Option<usize> {
        if self.paths.len() == 1 {
            return None;
        }
        if self.data_path != pi && self.takes_data(self.data_path) {
            return Some(self.data_path);
        }
        (0..self.paths.len())
            .find(|&k| k != pi && self.takes_data(k))
            .or_else(|| (self.data_path != pi && self.usable(self.data_path)).then_some(self.data_path))
    }

    /// RFC 7829 §3: whether one more error on path `pi` (counted already) makes it potentially
    /// failed: the PF state is on, the peer multi-homed, the path CONFIRMED (an unconfirmed
    /// address is only probed, RFC 9260 §5.4), active and not yet potentially failed, and its
    /// error counter above PFMR. The caller has checked Path.Max.Retrans.
    pub(super) fn becomes_potentially_failed(&self, pi: usize) -> bool {
        let p = &self.paths[pi];
        self.sctp.pf_max_retrans.is_some_and(|pfmr| p.error_count > pfmr)
            && self.paths.len() > 1
            && p.confirmed
            && p.active
            && !p.potentially_failed
    }

    /// RFC 7829 §3: path `pi` is potentially failed: new DATA leaves it for an active
    /// destination (if one is not potentially failed), and it is heartbeated at once (unless a
    /// HEARTBEAT to it awaits its ACK, whose check stays), then once per RTO.
    pub(super) fn enter_potentially_failed(&mut self, now: SimTime, pi: usize) {
        self.sstats.pf_entries += 1;
        let p = &mut self.paths[pi];
        p.potentially_failed = true;
        if p.hb_outstanding.is_none() {
            // Due now: the heartbeat timer sends it, after a T3-rtx expiry has backed off the
            // RTO (RFC 9260 §6.3.3 E2) in the same `on_timeout`.
            p.hb_at = Some(now);
        }
        self.choose_data_path();
    }

    /// Where a SACK goes: the path the last DATA came from (§6.4), if we may send there.
    pub(super) fn sack_dest(&self) -> usize {
        if self.usable(self.sack_path) {
            self.sack_path
        } else {
            self.data_path
        }
    }

    /// HB.interval plus the path's RTO, the RTO jittered by ±50 % when configured (RFC 9260
    /// §8.3). The jitter comes from a generator seeded by the verification tag: runs repeat.
    pub(super) fn hb_period(&mut self, pi: usize, iv: SimDuration) -> SimDuration {
        let rto = self.paths[pi].rtt.rto().0;
        if !self.sctp.hb_jitter {
            return SimDuration(iv.0 + rto);
        }
        // xorshift64* (Marsaglia; Vigna's multiplier): u uniform in [0, 1).
        let mut x = self.hb_rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.hb_rng = x;
        let u = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
        SimDuration(iv.0 + (rto as f64 * (0.5 + u)).round() as u64)
    }

    /// RFC 9260 §5.4, §8.3: the HEARTBEAT timers start with the association: every confirmed
    /// path is heartbeated when idle (with HB.interval set), every unconfirmed one probed at
    /// once.
    pub(super) fn start_heartbeats(&mut self, now: SimTime) {
        let iv = self.sctp.hb_interval;
        for k in 0..self.paths.len() {
            self.paths[k].hb_at = if !self.paths[k].confirmed {
                Some(now)
            } else {
                iv.map(|iv| now + self.hb_period(k, iv))
            };
        }
    }

    /// A HEARTBEAT's information for path `pi` sent at `now`.
    pub(super) fn hb_info(pi: usize, now: SimTime) -> u64 {
        (pi as u64) << 56 | (now.0 & HB_TIME_MASK)
    }

    /// RFC 9260 §8.3: a HEARTBEAT ACK. The path its information names is confirmed (§5.4),
    /// measured, its error counter cleared and, if inactive or potentially failed (RFC 7829 §3),
    /// made active; the association's counter is cleared too. New DATA returns to the primary if
    /// it was the one restored. The path's cwnd stays as RFC 9260 §7.2 left it (RFC 7829 §3:
    /// data resumes following §7.2).
    pub(super) fn on_heartbeat_ack(&mut self, now: SimTime, info: u64) {
        let pi = (info >> 56) as usize;
        if pi >= self.paths.len() || self.paths[pi].hb_outstanding != Some(info) {
            return;
        }
        let sent = info & HB_TIME_MASK;
        let p = &mut self.paths[pi];
        p.hb_outstanding = None;
        p.rtt.on_sample(SimDuration(now.0.saturating_sub(sent)));
        p.error_count = 0;
        p.active = true;
        p.potentially_failed = false;
        if !p.confirmed {
            p.confirmed = true;
            // Verified: from now on heartbeated like any path (if idle paths are).
            self.paths[pi].hb_at = self.sctp.hb_interval.map(|iv| now + self.hb_period(pi, iv));
        }
        self.assoc_errors = 0;
        self.choose_data_path();
    }

    /// The paths (path 0 first; see [`Path`]).
    pub fn paths(&self) -> &[Path] {
        &self.paths
    }

    /// Index of the primary path.
    pub fn primary_path(&self) -> usize {
        self.primary
    }

    /// Index of the path new DATA goes to now.
    pub fn data_path(&self) -> usize {
        self.data_path
    }

    /// Failovers so far: times new DATA moved from the primary to an alternate.
    pub fn failovers(&self) -> u64 {
        self.failovers
    }

    /// When new DATA first sent to an alternate after the last failover was acknowledged.
    pub fn failover_acked_at(&self) -> Option<SimTime> {
        self.failover_acked_at
    }
}

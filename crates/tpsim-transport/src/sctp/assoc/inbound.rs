//! The data receiver's side of the association (RFC 9260 §6.2): DATA chunks in, when to SACK
//! (delayed SACK, at once on gaps and duplicates), the advertised window with silly-window
//! avoidance, delivery of complete messages.

use super::{Ctrl, SctpSocket};
use crate::sctp::recv::{Accept, Complete};
use crate::sctp::State;
use crate::{Message, TransportEvent};
use std::collections::VecDeque;
use tpsim_core::SimTime;
use tpsim_wire::sctp::{ControlChunk, DataFlags, ErrorCause, SackChunk, SctpRepr};

impl SctpSocket {
    /// RFC 9260 §6.2: DATA chunks of a packet, and when to SACK them.
    #[inline]
    pub(super) fn on_data(&mut self, now: SimTime, p: &SctpRepr) {
        if !matches!(
            self.state,
            State::Established | State::ShutdownPending | State::ShutdownSent | State::ShutdownReceived
        ) {
            return;
        }
        let Some(r) = self.recv.as_mut() else { return };
        let had_gaps = r.has_gaps();
        let cum_before = r.cum_tsn();
        let (mut new, mut dup, mut immediate, mut dropped, mut bad_stream) = (0, 0, false, false, None);
        for c in p.data.as_slice() {
            immediate |= c.flags.contains(DataFlags::IMMEDIATE);
            if let Some(m) = r.take_in_sequence(now, c) {
                // In sequence and deliverable: to the application at once (the common case).
                new += 1;
                deliver(&mut self.events, &mut self.rx_id_hint, &m);
                continue;
            }
            match r.on_data(now, c) {
                Accept::New => new += 1,
                Accept::Duplicate => dup += 1,
                Accept::NoRoom => dropped = true,
                Accept::BadStream => bad_stream = Some(c.stream_id),
            }
        }
        let gaps = r.has_gaps();
        let filled = had_gaps && r.cum_tsn() != cum_before;
        self.sstats.duplicate_tsns += dup;
        if let Some(sid) = bad_stream {
            // RFC 9260 §6.5: ERROR "Invalid Stream Identifier" naming the stream (§3.3.10.1).
            self.ctrl.push_back(Ctrl {
                chunk: ControlChunk::Error(ErrorCause::invalid_stream(sid)),
                tag: self.peer_tag,
                path: self.rx_path,
            });
        }
        self.drain_ready();
        if self.state == State::ShutdownSent {
            // RFC 9260 §9.2: answer DATA with SHUTDOWN (and a SACK if it cannot say everything),
            // T2 restarted.
            self.ctrl.retain(|c| !matches!(c.chunk, ControlChunk::Shutdown(_)));
            self.queue_shutdown(now);
            if gaps || dup > 0 {
                self.sack_now = true;
            }
            return;
        }
        self.packets_unacked += 1;
        self.sack_pending = true;
        // §6.4: the SACK goes back to the address this DATA came from.
        self.sack_path = self.rx_path;
        // RFC 9260 §6.2: SACK at once on duplicates without new data, on a gap (or when one is
        // filled), for the I bit, when a chunk was dropped for lack of room; otherwise at least
        // every second packet or within the delayed-SACK time.
        if (dup > 0 && new == 0)
            || gaps
            || filled
            || immediate
            || dropped
            || self.sctp.sack_delay.is_none()
            || self.packets_unacked >= self.sctp.sack_every
        {
            self.sack_now = true;
        } else if self.delayed_sack.is_none() {
            self.delayed_sack = self.sctp.sack_delay.map(|d| now + d);
        }
    }

    /// Moves complete messages to the application.
    #[inline]
    pub(super) fn drain_ready(&mut self) {
        let Some(r) = self.recv.as_mut() else { return };
        while let Some(m) = r.pop_ready() {
            deliver(&mut self.events, &mut self.rx_id_hint, &m);
        }
    }

    /// The receive window to advertise (RFC 9260 §6.2), with receiver silly-window avoidance:
    /// free space below min(buffer/2, PMDCS) is advertised as 0.
    pub(super) fn adv_window(&self) -> u64 {
        let Some(r) = self.recv.as_ref() else {
            return self.sctp.recv_buffer_bytes as u64;
        };
        let free = r.free();
        let small = (self.sctp.recv_buffer_bytes as u64 / 2).min(self.pmdcs() as u64);
        if free < small {
            0
        } else {
            free
        }
    }

    /// RFC 9260 §6.2: a window that reopens after being advertised closed is announced.
    pub(super) fn window_update_check(&mut self) {
        if self.last_adv == 0 && self.adv_window() > 0 && self.recv.is_some() {
            self.sack_now = true;
        }
    }

    pub(super) fn make_sack(&mut self) -> SackChunk {
        let a_rwnd = self.adv_window();
        self.last_adv = a_rwnd;
        self.sack_now = false;
        self.sack_pending = false;
        self.packets_unacked = 0;
        self.delayed_sack = None;
        self.recv
            .as_mut()
            .expect("caller checked")
            .build_sack(a_rwnd.min(u32::MAX as u64) as u32)
    }
}

/// Hands complete message `m` to the application: a `Delivered` event. The PPID holds the id's
/// low 32 bits: the id is the one nearest `hint`, the id last delivered (updated).
#[inline]
fn deliver(events: &mut VecDeque<TransportEvent>, hint: &mut u64, m: &Complete) {
    let h = *hint;
    let id = (h & !0xffff_ffff) | m.msg_id as u64;
    // The next id (or the same) is the nearest at once: the other candidates are 2^32 away
    // from it.
    let id = if id == h || id == h.wrapping_add(1) {
        id
    } else {
        [id.wrapping_sub(1 << 32), id, id.wrapping_add(1 << 32)]
            .into_iter()
            .min_by_key(|&c| c.abs_diff(h))
            .expect("three candidates")
    };
    *hint = id;
    events.push_back(TransportEvent::Delivered {
        message: Message {
            id,
            len: m.len,
            created: SimTime(m.payload.created_ns),
        },
        first_tx: SimTime(m.payload.first_tx_ns),
    });
}

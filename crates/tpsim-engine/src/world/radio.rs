//! 802.11 glue: each radio's interface queue feeds its DCF; the DCF's frames go onto the
//! shared channel, which gives every radio in carrier-sense range a signal start and end; the
//! receivers' outcomes go back to their DCFs, and the packets they deliver go up to IP.
//!
//! A radio whose DCF is at rest (nothing queued, nothing in progress) is not woken by every
//! signal: its carrier-sense transitions are held at the radio record and handed over
//! (`sync_medium`) before its DCF's next input.

use super::{Event, World};
use crate::metrics::DropReason;
use crate::packet::PacketId;
use crate::phyrx::{Cca, RxOutcome};
use crate::pkttrace::TraceEvent;
use crate::wifi::{AirFrame, AirRx, WifiChannel, WifiDevice, DEVICE_HOT_LINES, LLC_SNAP_LEN};
use tpsim_mac::{MacEvent, Msdu};

/// Hands the carrier-sense transitions held back at `d`'s radio (see [`crate::wifi::RadioState`])
/// to its DCF: call before every input to the DCF.
#[inline]
fn sync_medium(wifi: &mut Option<WifiChannel>, d: &mut WifiDevice, radio: u32) {
    if let Some(ch) = wifi {
        if let Some((busy, idle_since, rx_errors)) = ch.radios[radio as usize].take_held() {
            d.dcf.sync_medium(busy, idle_since, rx_errors);
        }
    }
}

impl World {
    /// Applies a state change of radio `radio` to its node's energy account (`f` gets the
    /// model, the node's index and now). With `[energy]` every node has one radio.
    #[inline]
    fn radio_energy(
        &mut self,
        radio: u32,
        f: impl FnOnce(&mut crate::energy::EnergyModel, usize, tpsim_core::SimTime),
    ) {
        let v = self.rmap.node(radio);
        self.energy_change(v, |e, now| f(e, v as usize, now));
    }

    /// The address of node `dst`'s radio that node `src` reaches: on the first channel of
    /// `dst`'s that `src` has a radio on (else `dst`'s first radio).
    pub(super) fn radio_addr_of(&self, src: u32, dst: u32) -> std::net::Ipv4Addr {
        let theirs = self.rmap.radios(dst);
        let r = theirs
            .iter()
            .copied()
            .find(|&r| self.rmap.toward(src, r).is_some())
            .unwrap_or(theirs[0]);
        crate::wifi::wifi_addr(r)
    }

    /// The time-series device index of radio `radio` (after every link direction).
    #[inline]
    fn radio_dev(&self, radio: u32) -> u32 {
        self.links.len() as u32 + radio
    }

    /// Queues `id` at radio `radio` (routing control first if `priority`); a unicast packet
    /// first resolves its next hop's address if the scenario has ARP (RFC 826).
    pub(super) fn radio_send(&mut self, radio: u32, id: PacketId, priority: bool) {
        let d = &self.radios[radio as usize];
        let id = if self.arp.is_some() && !d.dead && self.packets.get(id).link_dst != tpsim_mac::BROADCAST {
            match self.arp_resolve(radio, id) {
                Some(id) => id,
                None => return, // held or dropped by ARP
            }
        } else {
            id
        };
        self.radio_enqueue(radio, id, priority);
    }

    /// Puts `id` into radio `radio`'s interface queue (routing control first if `priority`), past
    /// ARP.
    pub(super) fn radio_enqueue(&mut self, radio: u32, id: PacketId, priority: bool) {
        let now = self.now;
        let dev = self.radio_dev(radio);
        let d = &mut self.radios[radio as usize];
        if d.dead {
            let reason = self.radio_off_reason(radio);
            self.drop_packet(self.rmap.node(radio), id, reason);
            return;
        }
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        // The wait runs from here until the MAC takes the packet (`serve_next`) or it is
        // taken out (`radio_take_queued_to`).
        self.packets.enter_queue(id, now);
        if let (false, Some(q)) = (priority, &mut d.aqm) {
            let p = self.packets.get(id);
            let pkt = crate::aqm::pkt(q, id, p, p.seg.ip_len);
            q.enqueue(pkt, now, &mut self.aqm_out);
            self.aqm_verdicts(dev, self.rmap.node(radio), crate::pkttrace::NO_NODE);
        } else if let Err(id) = d.queue.push(id, priority, now) {
            self.drop_packet(self.rmap.node(radio), id, DropReason::Queue);
            return;
        }
        self.serve_next(radio);
    }

    /// Takes every packet waiting in radio `radio`'s interface queue for neighbour `hop` out.
    pub(super) fn radio_take_queued_to(&mut self, radio: u32, hop: u32) -> Vec<PacketId> {
        let now = self.now;
        let dev = self.radio_dev(radio);
        let d = &mut self.radios[radio as usize];
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        let packets = &self.packets;
        let mut taken = d.queue.remove_where(|id| packets.get(id).link_dst == hop);
        if let Some(q) = &mut d.aqm {
            let mut out = Vec::new();
            q.remove_where(|p| packets.get(PacketId(p.id)).link_dst == hop, &mut out);
            taken.extend(out.iter().map(|p| PacketId(p.id)));
        }
        for &id in &taken {
            self.packets.leave_queue(id, now);
        }
        taken
    }

    /// Hands the next waiting packet to an idle 802.11 MAC.
    fn serve_next(&mut self, radio: u32) {
        let now = self.now;
        let dev = self.radio_dev(radio);
        let d = &mut self.radios[radio as usize];
        if d.in_service.is_some() || !d.dcf.ready() || d.dead {
            return;
        }
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        // Packets that waited longer than the limit are dropped as they reach the head (as
        // ns-3's WifiMacQueue drops those older than its MaxDelay).
        if let Some(max) = self.wifi.as_ref().and_then(|ch| ch.params.queue_max_delay) {
            let deadline = tpsim_core::SimTime(now.0.saturating_sub(max.0));
            while let Some(id) = self.radios[radio as usize].queue.pop_queued_before(deadline) {
                self.drop_packet(self.rmap.node(radio), id, DropReason::QueueTimeout);
            }
        }
        let d = &mut self.radios[radio as usize];
        let next = match (d.queue.pop(), &mut d.aqm) {
            (Some(id), _) => Some(id),
            // Routing control first, then what the discipline lets through.
            (None, Some(q)) => q.dequeue(now, &mut self.aqm_out).map(|p| PacketId(p.id)),
            (None, None) => None,
        };
        if !self.aqm_out.is_empty() {
            self.aqm_verdicts(dev, self.rmap.node(radio), crate::pkttrace::NO_NODE);
        }
        let Some(id) = next else { return };
        self.packets.leave_queue(id, now);
        let d = &mut self.radios[radio as usize];
        d.in_service = Some(id);
        let p = self.packets.get(id);
        let llc = if self.sizes_standard { LLC_SNAP_LEN } else { 0 };
        sync_medium(&mut self.wifi, d, radio);
        d.dcf.send(
            now,
            Msdu {
                dst: p.link_dst,
                bytes: p.seg.ip_len + llc,
                handle: id.0 as u64,
            },
        );
        self.pump_mac(radio);
    }

    /// Moves an 802.11 MAC's outputs: frames onto the air, delivered packets up, finished
    /// packets out of the queue; then its deadline.
    fn pump_mac(&mut self, radio: u32) {
        let now = self.now;
        if self.radios[radio as usize].dead {
            return;
        }
        while let Some(frame) = self.radios[radio as usize].dcf.poll_transmit(now) {
            self.start_air(radio, frame);
        }
        while let Some(ev) = self.radios[radio as usize].dcf.poll_event() {
            match ev {
                MacEvent::Delivered { handle, src } => {
                    let id = self.packets.share(PacketId(handle as u32));
                    self.ip_input(self.rmap.node(radio), id, Some(src));
                }
                MacEvent::TxOk { handle } => {
                    self.radios[radio as usize].in_service = None;
                    self.packets.release(PacketId(handle as u32));
                }
                MacEvent::TxFailed { handle, dst, rts } => {
                    self.radios[radio as usize].in_service = None;
                    if rts {
                        self.trace_rts_discard(radio, dst);
                    }
                    if let Some(id) = self.link_failed(radio, PacketId(handle as u32)) {
                        // The frame went to `dst` (unicast: only unicast frames fail).
                        let hop = self.rmap.node(dst);
                        self.drop_packet_hop(self.rmap.node(radio), id, DropReason::MacRetry, hop);
                    }
                }
            }
        }
        let d = &mut self.radios[radio as usize];
        if let Some(t) = d.dcf.poll_timeout() {
            if t != d.timer_at {
                d.timer_gen = d.timer_gen.wrapping_add(1);
                d.timer_at = t;
                let gen = d.timer_gen;
                self.queue.push(t.max(now), Event::MacTimer { radio, gen });
            }
        }
        self.serve_next(radio);
        // Whether signals may skip the device until its next input (see `RadioState`).
        let d = &self.radios[radio as usize];
        let rest = !d.dead && d.in_service.is_none() && d.waiting() == 0 && d.dcf.at_rest();
        if let Some(ch) = &mut self.wifi {
            ch.radios[radio as usize].set_rest(rest);
        }
    }

    /// Radio `radio`'s MAC deadline fired.
    pub(super) fn on_mac_timer(&mut self, radio: u32, gen: u32) {
        let t = self.now;
        let Some(d) = self.radios.get_mut(radio as usize) else {
            return;
        };
        if d.timer_gen == gen && !d.dead {
            d.timer_at = tpsim_core::SimTime::NEVER;
            sync_medium(&mut self.wifi, d, radio);
            d.dcf.on_timeout(t);
            self.pump_mac(radio);
        }
    }

    /// Radio `radio` finished sending air frame `frame`.
    pub(super) fn on_air_tx_end(&mut self, radio: u32, frame: u32) {
        let t = self.now;
        let dead = self.node_dead(self.rmap.node(radio));
        // A radio switched off by a fault event while sending has forgotten the frame.
        if let Some(d) = self.radios.get_mut(radio as usize).filter(|d| d.on_air == Some(frame)) {
            d.on_air = None;
            if !dead {
                sync_medium(&mut self.wifi, d, radio);
                if let Some(ch) = &mut self.wifi {
                    ch.set_transmitting(radio, false);
                }
                d.dcf.on_tx_end(t);
                self.radio_energy(radio, |e, v, now| e.set_tx(v, now, false));
                self.pump_mac(radio);
            }
        }
        self.air_frame_done(frame);
    }

    /// Puts a frame on the air: every radio within carrier-sense range that senses it gets a
    /// signal start and end, after the propagation delay.
    fn start_air(&mut self, sender: u32, frame: tpsim_mac::Frame) {
        let now = self.now;
        let pcap = self.radios[sender as usize].pcap;
        if let Some(ch) = &mut self.wifi {
            ch.set_transmitting(sender, true);
        }
        let data = (frame.kind == tpsim_mac::FrameKind::Data).then_some(PacketId(frame.handle as u32));
        if let Some(t) = pcap {
            self.trace_wifi(t, &frame, data);
        }
        self.trace_mac(TraceEvent::MacSend, sender, &frame, data);
        self.metrics.mac_frame();
        let Some(ch) = &mut self.wifi else { return };
        let slot = match ch.free.pop() {
            Some(s) => s,
            None => {
                ch.frames.push(AirFrame {
                    frame,
                    pkt: None,
                    rx: Vec::new(),
                    shared: None,
                    sent: now,
                    seq0: 0,
                    pending: 0,
                    cut: false,
                });
                ch.frames.len() as u32 - 1
            }
        };
        let pkt = (frame.kind == tpsim_mac::FrameKind::Data).then(|| self.packets.share(PacketId(frame.handle as u32)));
        let mut rx = std::mem::take(&mut ch.frames[slot as usize].rx);
        rx.clear();
        ch.refresh(now);
        let shared = ch.find_receivers(sender, now.as_secs_f64(), &mut rx);
        ch.frames[slot as usize] = AirFrame {
            frame,
            pkt,
            rx,
            shared,
            sent: now,
            seq0: 0,
            pending: 0,
            cut: false,
        };
        let rx = ch.receivers(slot);
        let p = &ch.params;
        if frame.dst == tpsim_mac::BROADCAST
            && frame.kind == tpsim_mac::FrameKind::Data
            && pkt.is_some_and(|id| self.packets.get(id).is_data())
        {
            let thr = p.rx_threshold_w;
            self.metrics
                .broadcast_expected(rx.iter().filter(|r| r.power_w >= thr).count() as u64);
        }
        let airtime = frame.airtime;
        // Each receiver's signal start and end keep the place in the event order they would
        // have if queued now, one by one in signal order (sequence numbers reserved here), but
        // only the first start and the first end are queued: the rest follow in that order.
        // Every receiver's radio record is read at its signal start, and the device of each
        // that may decode the frame at its end (its first lines: the device's and the DCF's
        // hot fields): start their cache misses together now.
        for r in rx {
            ch.prefetch_receiver(r.radio);
            if r.power_w >= p.rx_threshold_w {
                tpsim_core::prefetch(&self.radios[r.radio as usize], DEVICE_HOT_LINES);
            }
        }
        let (n, first) = (rx.len() as u32, rx.first().copied());
        let seq0 = self.queue.reserve(2 * n as u64);
        let af = &mut ch.frames[slot as usize];
        (af.seq0, af.pending) = (seq0, n + 1);
        if let Some(r) = first {
            let ((t0, s0), (t1, s1)) = (af.start_key(&r, 0), af.end_key(&r, 0));
            self.queue
                .push_reserved(t0, s0, Event::SignalStart { frame: slot, k: 0 });
            self.queue.push_reserved(t1, s1, Event::SignalEnd { frame: slot, k: 0 });
        }
        self.radios[sender as usize].on_air = Some(slot);
        self.radio_energy(sender, |e, v, now| e.set_tx(v, now, true));
        self.queue.push(
            now + airtime,
            Event::AirTxEnd {
                radio: sender,
                frame: slot,
            },
        );
    }

    /// Signal starts (`ends` false) or ends of air frame `frame` from its `k`-th receiver on,
    /// in arrival order: each runs in place while it comes before every queued event; the walk
    /// is queued again at the first that does not. The frame's slot lives until its last signal
    /// end (k = n − 1), after every start, and that end may release it.
    pub(super) fn walk_signals(&mut self, frame: u32, mut k: u32, ends: bool) {
        let Some(ch) = &self.wifi else { return };
        let rx = ch.receivers(frame);
        let (n, mut r) = (rx.len() as u32, rx[k as usize]);
        if ends && k == 0 {
            // The radio records were read at the signal starts, a frame's airtime ago: start
            // their misses together again.
            for r in rx {
                ch.prefetch_receiver(r.radio);
            }
        }
        if !ends && k == 0 {
            // The routing state the receivers will read when the frame ends, an airtime from
            // now. Here rather than with the radios' and devices' prefetches at the start of
            // the transmission: issued together with those, N = 800 ran 3-7 % slower.
            self.prefetch_routing_rx(frame);
        }
        loop {
            if ends {
                if self.faults.is_some() && self.signal_predates_radio(frame, r.radio, k) {
                    self.air_frame_done(frame);
                } else {
                    self.on_signal_end(frame, r.radio);
                }
            } else {
                self.on_signal_start(frame, r);
            }
            k += 1;
            if k == n {
                return;
            }
            let Some(ch) = &self.wifi else { return };
            r = ch.receivers(frame)[k as usize];
            let af = &ch.frames[frame as usize];
            let (t, seq) = if ends { af.end_key(&r, k) } else { af.start_key(&r, k) };
            if !self.take_in_place(t, seq) {
                let ev = if ends {
                    Event::SignalEnd { frame, k }
                } else {
                    Event::SignalStart { frame, k }
                };
                self.queue.push_reserved(t, seq, ev);
                return;
            }
        }
    }

    /// Receiver `rx` of air frame `frame` starts to hear it. If the medium turns busy, its DCF
    /// is told, unless it is at rest: then the transition is only held at the radio.
    fn on_signal_start(&mut self, frame: u32, rx: AirRx) {
        let now = self.now;
        let AirRx { radio, power_w, .. } = rx;
        let Some(ch) = &mut self.wifi else { return };
        let af = &ch.frames[frame as usize];
        let (end, rate) = (now + af.frame.airtime, af.frame.rate);
        if ch.radios[radio as usize].dead() {
            return;
        }
        self.radio_energy(radio, |e, v, now| e.sense(v, now, true));
        let Some(ch) = &mut self.wifi else { return };
        if ch.signal_start(radio, now, frame, power_w, end, rate) != Some(Cca::Busy) {
            return;
        }
        let r = &mut ch.radios[radio as usize];
        if r.rest() {
            // A DCF at rest only records the transition (`Dcf::at_rest`).
            r.hold(true, now);
            return;
        }
        let d = &mut self.radios[radio as usize];
        sync_medium(&mut self.wifi, d, radio);
        d.dcf.on_medium_busy(now);
        self.pump_mac(radio);
    }

    /// The radio of `radio`, a receiver of air frame `frame`, stops hearing it: the reception's
    /// outcome, if any, goes to the DCF, and the medium may turn idle (held at the radio if the
    /// DCF is at rest and nothing was received).
    fn on_signal_end(&mut self, frame: u32, radio: u32) {
        let now = self.now;
        let Some(ch) = &mut self.wifi else { return };
        let af = &ch.frames[frame as usize];
        let (f, cut, pkt) = (af.frame, af.cut, af.pkt);
        if ch.radios[radio as usize].dead() {
            self.air_frame_done(frame);
            return;
        }
        self.radio_energy(radio, |e, v, now| e.sense(v, now, false));
        let Some(ch) = &mut self.wifi else { return };
        let (mut outcome, cca) = ch.signal_end(radio, now, frame);
        let r = &mut ch.radios[radio as usize];
        // A frame whose sender died while sending it is cut short: nobody decodes it.
        if cut && matches!(outcome, Some(RxOutcome::Ok { .. })) {
            outcome = Some(RxOutcome::Error);
        }
        if r.rest() && !matches!(outcome, Some(RxOutcome::Ok { .. })) {
            // A failed reception at rest only counts and makes the next deferral EIFS
            // (`Dcf::sync_medium`): held like the transitions.
            if outcome == Some(RxOutcome::Error) {
                r.hold_rx_error();
            }
            if cca == Some(Cca::Idle) {
                r.hold(false, now);
            }
            // Nothing for the DCF: polling a device at rest would find nothing to do either.
            self.air_frame_done(frame);
            return;
        }
        let d = &mut self.radios[radio as usize];
        sync_medium(&mut self.wifi, d, radio);
        match outcome {
            Some(RxOutcome::Ok { .. }) => d.dcf.on_rx(now, &f),
            Some(RxOutcome::Error) => d.dcf.on_rx_error(now),
            None => {}
        }
        if cca == Some(Cca::Idle) {
            d.dcf.on_medium_idle(now);
        }
        if let (Some(RxOutcome::Ok { .. }), Some(t)) = (outcome, d.pcap) {
            self.trace_wifi(t, &f, pkt);
        }
        if matches!(outcome, Some(RxOutcome::Ok { .. })) {
            self.trace_mac(TraceEvent::MacReceive, radio, &f, pkt);
        }
        self.pump_mac(radio);
        self.air_frame_done(frame);
    }

    /// Writes frame `f` (carrying packet `pkt`, if DATA) to pcap writer `t`, with the real
    /// bytes of a routing control message.
    fn trace_wifi(&mut self, t: u32, f: &tpsim_mac::Frame, pkt: Option<PacketId>) {
        let p = pkt.map(|id| self.packets.get(id));
        let payload = p
            .filter(|p| p.is_ctrl())
            .and_then(|p| self.routing.as_ref().map(|r| r.payload(p.ctrl)));
        self.pcap.write_wifi(t, self.now, f, p, payload.as_deref());
    }

    /// One receiver (or the sender) is done with air frame `frame`; the last one frees it.
    fn air_frame_done(&mut self, frame: u32) {
        let Some(ch) = &mut self.wifi else { return };
        let af = &mut ch.frames[frame as usize];
        af.pending -= 1;
        if af.pending == 0 {
            if let Some(p) = af.pkt.take() {
                self.packets.release(p);
            }
            ch.free.push(frame);
        }
    }

    /// Radio `radio` stops for good (its energy is spent): a frame it is sending is cut
    /// short, and its queued packets are dropped (`energy`).
    pub(super) fn radio_off(&mut self, radio: u32) {
        let now = self.now;
        let dev = self.radio_dev(radio);
        let Some(ch) = &mut self.wifi else { return };
        let d = &mut self.radios[radio as usize];
        d.dead = true;
        ch.radios[radio as usize].set_dead();
        if let Some(slot) = d.on_air {
            ch.frames[slot as usize].cut = true;
        }
        self.drop_radio_queue(radio, dev, now, DropReason::Energy);
    }

    /// Drops the packet in service at radio `radio` (device `dev`) and every queued one for
    /// `reason` (its radio went off).
    fn drop_radio_queue(&mut self, radio: u32, dev: u32, now: tpsim_core::SimTime, reason: DropReason) {
        let d = &mut self.radios[radio as usize];
        self.metrics.queue_changed(dev, d.waiting(), &mut d.q_changed, now);
        let mut doomed: Vec<PacketId> = d.in_service.take().into_iter().collect();
        while let Some(id) = d.queue.pop() {
            doomed.push(id);
        }
        if let Some(q) = &mut d.aqm {
            let mut waiting = Vec::new();
            q.purge(&mut waiting);
            doomed.extend(waiting.iter().map(|p| PacketId(p.id)));
        }
        for id in doomed {
            self.drop_packet(self.rmap.node(radio), id, reason);
        }
    }

    /// Radio `radio` is switched off (`on` false) or on again by a fault event. Either way
    /// its DCF starts over ([`tpsim_mac::Dcf::power_cycle`]) and its pending MAC deadline is
    /// dropped. Switched off, it senses nothing, a frame it is sending is cut short, and the
    /// packet in service and the queued ones are dropped for `reason`.
    pub(super) fn radio_power(&mut self, radio: u32, on: bool, reason: DropReason) {
        let now = self.now;
        let dev = self.radio_dev(radio);
        let d = &mut self.radios[radio as usize];
        // The failed receptions held at the radio count in the DCF's statistics.
        sync_medium(&mut self.wifi, d, radio);
        d.dcf.power_cycle(now);
        d.timer_gen = d.timer_gen.wrapping_add(1);
        d.timer_at = tpsim_core::SimTime::NEVER;
        d.dead = !on;
        let Some(ch) = &mut self.wifi else { return };
        ch.switch(radio, on);
        if on {
            self.pump_mac(radio);
            return;
        }
        if let Some(slot) = d.on_air.take() {
            ch.frames[slot as usize].cut = true;
        }
        self.radio_energy(radio, |e, v, now| e.radio_idle(v, now));
        self.drop_radio_queue(radio, dev, now, reason);
    }

    /// Every radio's final queue length is settled into the time series.
    pub(super) fn settle_radio_queues(&mut self) {
        let end = self.end_run;
        let first = self.links.len() as u32;
        for (i, d) in self.radios.iter_mut().enumerate() {
            self.metrics
                .queue_changed(first + i as u32, d.waiting(), &mut d.q_changed, end);
        }
    }

    /// The 802.11 counters summed over radios, with the failed receptions still held at
    /// radios at rest.
    pub(super) fn mac_stats(&self) -> tpsim_mac::DcfStats {
        let mut mac = tpsim_mac::DcfStats::default();
        for (r, w) in self.radios.iter().enumerate() {
            let st = w.dcf.stats();
            mac.data_sent += st.data_sent;
            mac.ack_sent += st.ack_sent;
            mac.rts_sent += st.rts_sent;
            mac.cts_sent += st.cts_sent;
            mac.data_retries += st.data_retries;
            mac.ack_timeouts += st.ack_timeouts;
            mac.cts_timeouts += st.cts_timeouts;
            mac.rx_errors += st.rx_errors;
            if let Some(ch) = &self.wifi {
                mac.rx_errors += ch.radios[r].held_rx_errors as u64;
            }
        }
        mac
    }
}

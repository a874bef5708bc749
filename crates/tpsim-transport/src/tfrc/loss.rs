//! The receiver's loss history (RFC 5348 §5): loss detection, loss events, loss intervals,
//! the average loss interval with history discounting, and the loss event rate p.

/// Packets received after a missing one before it is declared lost: 3 (RFC 5348 §5.1,
/// NDUPACK).
pub const NDUPACK_RFC5348: u32 = 3;
/// Loss intervals averaged (RFC 5348 §5.4: n SHOULD be 8).
pub const N_INTERVALS: usize = 8;
/// Sequence numbers remembered below the highest one received, for loss detection and
/// duplicate suppression. An arrival this far or farther below the highest is ignored
/// ([`Arrival::Stale`]).
pub const SEQ_WINDOW: u64 = 1024;
const WORDS: usize = (SEQ_WINDOW / 64) as usize;

/// The weights w_0 … w_7 of RFC 5348 §5.4 for n = 8: 1 for i < n/2, then
/// 2(n − i)/(n + 2).
pub const WEIGHTS: [f64; N_INTERVALS] = {
    let mut w = [1.0; N_INTERVALS];
    let n = N_INTERVALS;
    let mut i = n / 2;
    while i < n {
        w[i] = 2.0 * (n - i) as f64 / (n + 2) as f64;
        i += 1;
    }
    w
};

/// The smallest general discount factor DF (RFC 5348 §5.5: DF = max(0.5, 2·I_mean/I_0)).
pub const MIN_DISCOUNT: f64 = 0.5;

/// What an arriving data packet was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Not seen before: deliver it.
    New {
        /// A new loss event began while processing it (RFC 5348 §5.2).
        new_loss_event: bool,
        /// That new loss event is the first one (the receiver seeds the history, §6.3.1).
        first_loss_event: bool,
    },
    /// Seen before (a duplicate): drop it.
    Duplicate,
    /// [`SEQ_WINDOW`] or more below the highest sequence number: too old to tell, dropped.
    Stale,
}

/// Receiver-side loss history of RFC 5348 §5. Sequence numbers are the data packets' 32-bit
/// ones, extended to 64 bits around the highest received; timestamps are the sender's (µs,
/// wrapping), used to place a lost packet in time by interpolation (§5.2).
#[derive(Clone, Debug)]
pub struct LossHistory {
    ndupack: u32,
    discounting: bool,
    started: bool,
    first_seq: u64,
    highest: u64,
    /// Lowest sequence number not yet classified as received or lost.
    next_check: u64,
    /// The last received packet below `next_check`: (seq, unwrapped timestamp µs).
    before: (u64, i64),
    last_ts: (u32, i64),
    rtt_us: u32,
    bits: [u64; WORDS],
    ts: Box<[i64]>,
    /// Start of the current loss event: (seq of its first lost packet, its interpolated
    /// time, µs).
    event: Option<(u64, f64)>,
    /// Closed loss intervals I_1 … I_k, packets, most recent first.
    closed: [f64; N_INTERVALS],
    /// Their discount factors DF_i (§5.5).
    df: [f64; N_INTERVALS],
    closed_len: usize,
    loss_events: u64,
    lost_packets: u64,
}

impl LossHistory {
    /// An empty history declaring a packet lost once `ndupack` later packets have arrived
    /// (3 in RFC 5348 §5.1, 1 in ns-2.35's TFRCSink `numPkts_`), with or without history
    /// discounting (§5.5).
    pub fn new(ndupack: u32, discounting: bool) -> Self {
        LossHistory {
            ndupack: ndupack.max(1),
            discounting,
            started: false,
            first_seq: 0,
            highest: 0,
            next_check: 0,
            before: (0, 0),
            last_ts: (0, 0),
            rtt_us: 0,
            bits: [0; WORDS],
            ts: vec![0; SEQ_WINDOW as usize].into_boxed_slice(),
            event: None,
            closed: [0.0; N_INTERVALS],
            df: [1.0; N_INTERVALS],
            closed_len: 0,
            loss_events: 0,
            lost_packets: 0,
        }
    }

    #[inline]
    fn received(&self, seq: u64) -> bool {
        let slot = seq % SEQ_WINDOW;
        self.bits[(slot / 64) as usize] & (1 << (slot % 64)) != 0
    }

    #[inline]
    fn set(&mut self, seq: u64, ts: i64) {
        let slot = seq % SEQ_WINDOW;
        self.bits[(slot / 64) as usize] |= 1 << (slot % 64);
        self.ts[slot as usize] = ts;
    }

    #[inline]
    fn clear(&mut self, seq: u64) {
        let slot = seq % SEQ_WINDOW;
        self.bits[(slot / 64) as usize] &= !(1 << (slot % 64));
    }

    /// Processes the data packet `seq` sent at `timestamp` (µs, the sender's clock) carrying
    /// the sender's RTT estimate `rtt_us` (0: none yet).
    pub fn on_packet(&mut self, seq: u32, timestamp: u32, rtt_us: u32) -> Arrival {
        if rtt_us > 0 {
            self.rtt_us = rtt_us;
        }
        let ts = self.last_ts.1 + timestamp.wrapping_sub(self.last_ts.0) as i32 as i64;
        if !self.started {
            self.started = true;
            let s = seq as u64 + SEQ_WINDOW; // room below the first packet for late ones
            self.first_seq = s;
            self.highest = s;
            self.next_check = s + 1;
            self.before = (s, ts);
            self.last_ts = (timestamp, ts);
            self.set(s, ts);
            return Arrival::New {
                new_loss_event: false,
                first_loss_event: false,
            };
        }
        // Internal numbers are the wire's plus SEQ_WINDOW (room below the first packet).
        let ext = self.highest as i64 + seq.wrapping_sub((self.highest - SEQ_WINDOW) as u32) as i32 as i64;
        if ext < 0 || ext as u64 + SEQ_WINDOW <= self.highest {
            return Arrival::Stale;
        }
        let ext = ext as u64;
        let events_before = self.loss_events;
        if ext > self.highest {
            self.last_ts = (timestamp, ts);
            // Packets about to leave the window are classified now (lost if missing).
            while self.next_check + SEQ_WINDOW <= ext && self.next_check <= self.highest {
                let m = self.next_check;
                if self.received(m) {
                    self.before = (m, self.ts[(m % SEQ_WINDOW) as usize]);
                } else {
                    self.declare_lost(m, None);
                }
                self.next_check += 1;
            }
            while self.next_check + SEQ_WINDOW <= ext {
                let m = self.next_check;
                self.declare_lost(m, Some((ext, ts)));
                self.next_check += 1;
            }
            let from = self.highest + 1;
            if ext - self.highest >= SEQ_WINDOW {
                self.bits = [0; WORDS];
            } else {
                for s in from..ext {
                    self.clear(s);
                }
            }
            self.set(ext, ts);
            self.highest = ext;
        } else {
            if self.received(ext) {
                return Arrival::Duplicate;
            }
            self.set(ext, ts);
        }
        self.classify();
        let new_loss_event = self.loss_events > events_before;
        Arrival::New {
            new_loss_event,
            first_loss_event: new_loss_event && events_before == 0,
        }
    }

    /// RFC 5348 §5.1: a missing packet is lost once `ndupack` packets with higher sequence
    /// numbers have arrived; classification goes in sequence order.
    fn classify(&mut self) {
        while self.next_check < self.highest {
            let m = self.next_check;
            if self.received(m) {
                self.before = (m, self.ts[(m % SEQ_WINDOW) as usize]);
                self.next_check += 1;
                continue;
            }
            let mut later = 0;
            let mut s = m + 1;
            while s <= self.highest && later < self.ndupack {
                later += self.received(s) as u32;
                s += 1;
            }
            if later < self.ndupack {
                break;
            }
            self.declare_lost(m, None);
            self.next_check += 1;
        }
    }

    /// Packet `m` is lost: place it in time between its received neighbours (RFC 5348 §5.2)
    /// and decide whether it starts a new loss event (more than one RTT after the start of
    /// the current one).
    fn declare_lost(&mut self, m: u64, after: Option<(u64, i64)>) {
        self.lost_packets += 1;
        let (s_before, t_before) = self.before;
        let (s_after, t_after) = after.unwrap_or_else(|| {
            let mut s = m + 1;
            while s < self.highest && !self.received(s) {
                s += 1;
            }
            (s, self.ts[(s % SEQ_WINDOW) as usize])
        });
        // RFC 5348 §5.2: t_loss = t_before + (t_after − t_before)·(S_loss − S_before)/(S_after − S_before).
        let t_loss =
            t_before as f64 + (t_after - t_before) as f64 * (m - s_before) as f64 / (s_after - s_before) as f64;
        match self.event {
            None => {
                // The first loss event: the interval before it is the packets since the first
                // one (§5.3), until the receiver seeds it (§6.3.1).
                self.push_closed((m - self.first_seq) as f64);
                self.event = Some((m, t_loss));
                self.loss_events += 1;
            }
            Some((start, t_start)) => {
                // RFC 5348 §5.2: losses within one RTT of the first loss of an event belong
                // to that event.
                if t_loss - t_start > self.rtt_us as f64 {
                    self.push_closed((m - start) as f64);
                    self.event = Some((m, t_loss));
                    self.loss_events += 1;
                }
            }
        }
    }

    /// RFC 5348 §5.3, §5.5: the open interval becomes I_1, older ones shift; with
    /// discounting, older intervals keep their discount multiplied by the current DF.
    fn push_closed(&mut self, len: f64) {
        if self.discounting && self.closed_len > 0 {
            let df = self.general_discount(len);
            for d in &mut self.df[..self.closed_len] {
                *d *= df;
            }
        }
        self.closed.copy_within(0..N_INTERVALS - 1, 1);
        self.df.copy_within(0..N_INTERVALS - 1, 1);
        self.closed[0] = len;
        self.df[0] = 1.0;
        self.closed_len = (self.closed_len + 1).min(N_INTERVALS);
    }

    /// RFC 5348 §5.5: the general discount factor for an open interval of `i0` packets:
    /// DF = max(0.5, 2·I_mean/I_0) when I_0 > 2·I_mean (I_mean of the closed intervals), else 1.
    fn general_discount(&self, i0: f64) -> f64 {
        if !self.discounting || self.closed_len == 0 {
            return 1.0;
        }
        let (i_tot1, w_tot1) = self.tot1();
        let i_mean = i_tot1 / w_tot1;
        if i0 > 2.0 * i_mean {
            (2.0 * i_mean / i0).max(MIN_DISCOUNT)
        } else {
            1.0
        }
    }

    /// I_tot1 and W_tot1 of RFC 5348 §5.4 (with §5.5's DF_i): the closed intervals I_1 … I_k
    /// weighted w_0 … w_(k−1).
    fn tot1(&self) -> (f64, f64) {
        let mut i_tot = 0.0;
        let mut w_tot = 0.0;
        for ((i, df), w) in self.closed.iter().zip(&self.df).zip(WEIGHTS).take(self.closed_len) {
            let w = w * df;
            i_tot += i * w;
            w_tot += w;
        }
        (i_tot, w_tot)
    }

    /// The open interval I_0: packets from the start of the most recent loss event to the
    /// highest sequence number received (RFC 5348 §5.3); `None` before the first loss event.
    pub fn open_interval(&self) -> Option<f64> {
        self.event.map(|(start, _)| (self.highest - start + 1) as f64)
    }

    /// The average loss interval I_mean of RFC 5348 §5.4 (with §5.5's discounting when
    /// enabled): max(I_tot0/W_tot0, I_tot1/W_tot1), packets; `None` before the first loss
    /// event.
    pub fn mean_interval(&self) -> Option<f64> {
        let i0 = self.open_interval()?;
        let k = self.closed_len;
        let df = self.general_discount(i0);
        let (i_tot1, w_tot1) = self.tot1();
        let mut i_tot0 = i0 * WEIGHTS[0];
        let mut w_tot0 = WEIGHTS[0];
        // I_i (i = 1 … k−1) is closed[i − 1], weighted w_i.
        for ((i, dfi), w) in self
            .closed
            .iter()
            .zip(&self.df)
            .zip(&WEIGHTS[1..])
            .take(k.saturating_sub(1))
        {
            let w = w * dfi * df;
            i_tot0 += i * w;
            w_tot0 += w;
        }
        Some((i_tot0 / w_tot0).max(i_tot1 / w_tot1))
    }

    /// The loss event rate p = 1/I_mean (RFC 5348 §5.4); 0 before the first loss event.
    pub fn loss_event_rate(&self) -> f64 {
        self.mean_interval().map_or(0.0, |m| 1.0 / m)
    }

    /// RFC 5348 §6.3.1: replaces the first loss interval (the packets before the first loss
    /// event) by `packets`, the interval the throughput equation needs to give the receive
    /// rate measured before that loss. Only while that interval is the only closed one.
    pub fn seed_first_interval(&mut self, packets: f64) {
        if self.closed_len == 1 && packets.is_finite() && packets > 0.0 {
            self.closed[0] = packets;
        }
    }

    /// The closed loss intervals I_1, I_2, …, packets (most recent first).
    pub fn closed_intervals(&self) -> &[f64] {
        &self.closed[..self.closed_len]
    }

    /// Loss events so far.
    pub fn loss_events(&self) -> u64 {
        self.loss_events
    }

    /// Packets declared lost so far.
    pub fn lost_packets(&self) -> u64 {
        self.lost_packets
    }

    /// Packets in the sequence space from the first one received to the highest (received
    /// or not): the denominator of "loss events / packets".
    pub fn packets(&self) -> u64 {
        if self.started {
            self.highest - self.first_seq + 1
        } else {
            0
        }
    }

    /// The sender's most recent RTT estimate carried by a data packet, µs (0: none yet).
    pub fn rtt_us(&self) -> u32 {
        self.rtt_us
    }
}

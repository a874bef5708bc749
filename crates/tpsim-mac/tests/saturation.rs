//! Saturation throughput of the DCF against Bianchi's model (G. Bianchi, IEEE JSAC 18(3),
//! 2000).
//!
//! # The harness
//!
//! `n` stations and one receiver share an ideal medium: every station hears every other, there
//! is no propagation delay, no noise and no capture. Transmissions that overlap in time collide
//! and are decoded by nobody (everyone not transmitting during them gets `on_rx_error`); a clean
//! one is received by everyone (its destination uses it, the others set their NAV). Each station
//! always has a 1500-byte MSDU for the receiver (address 0), which only answers with ACK/CTS.
//! Throughput = MSDU bits delivered to the receiver after a 1 s warm-up ÷ the measured time ÷
//! the data rate.
//!
//! # The model
//!
//! Bianchi's fixed point for the attempt probability τ and the conditional collision
//! probability p, solved by bisection, with
//!
//! ```text
//! τ = Σ_i p^i / Σ_i p^i (W_i + 1)/2,   W_i = 2^min(i, m) W,   p = 1 − (1 − τ)^(n−1)
//! S = P_s P_tr E[P] / ((1 − P_tr) σ + P_tr P_s T_s + P_tr (1 − P_s) T_c)
//! ```
//!
//! (the renewal form of Bianchi's eq. 7: expected attempts per MSDU over expected backoff
//! slots plus attempts; summed over all i ≥ 0 it *is* eq. 7). The airtimes are the ones the MAC
//! uses, from [`DcfConfig`], with δ = 0:
//!
//! * basic: T_s = DATA + SIFS + ACK + DIFS;
//! * RTS/CTS: T_s = RTS + SIFS + CTS + SIFS + DATA + SIFS + ACK + DIFS.
//!
//! The classic model (infinite retries, T_c = DATA + DIFS or RTS + DIFS) is printed and, for
//! 802.11b, asserted. Two refinements make the model describe the protocol that is simulated;
//! this "model" is asserted for every case:
//!
//! * **EIFS.** In a collision every bystander decodes nothing and waits EIFS = SIFS + ACK +
//!   DIFS (364 µs at 1 Mbit/s) before counting down; the colliding senders wait for their ACK
//!   (CTS) timeout, SIFS + slot + ACK, and then DIFS, which puts them exactly one slot behind the
//!   bystanders on the same slot grid. So T_c = DATA + EIFS (RTS + EIFS), ns-3's "EIFS variant"
//!   of the model (Bianchi 2000, §IV). For 802.11b basic access it lowers S by 0.1 % (n = 2) to
//!   0.8 % (n = 50).
//! * **Finite retry limit.** Bianchi assumes infinite retries (stage m repeats forever). The MAC
//!   discards an MSDU after 7 attempts (the short retry limit, which covers RTS frames and
//!   basic-access DATA) and the next MSDU starts again at CW_min, so the sums over i stop at
//!   i = 6. The more often CW_min returns, the more the stations collide: for 802.11b at n = 50
//!   (p ≈ 0.55) this lowers S by 1.7 %; for 802.11a (W = 16, m = 6, p ≈ 0.6) by 5.7 %, which is
//!   why the classic model is not asserted there (`TPSIM_MAC_RETRY_LIMIT=100000` runs the MAC
//!   with effectively unlimited retries: then 802.11a lands within +1.3 % of the classic model).
//!
//! What remains unmodelled and explains the residual errors: after every busy period a
//! bystander's counter resumes one slot later than Bianchi's chain assumes (the standard
//! decrements only at the end of a whole idle slot after DIFS, §10.3.4.3), while a station that
//! has just transmitted may use the first slot boundary; the colliding senders lag the
//! bystanders by one slot. These lower the simulated p slightly for small W (802.11a), and at
//! n = 2 they raise it (p 0.064 vs 0.057 for 802.11b): the largest deviations are +2.3 %
//! (802.11a, basic, n = 50) and −0.6 % (n = 2).
//!
//! n = 1 needs no wider tolerance: with a post-backoff after every MSDU each cycle is exactly
//! DIFS + uniform[0, 31] slots + T_s, Bianchi's n = 1 cycle, and the simulation agrees to 0.1 %.
//!
//! # Gating and run time
//!
//! `cargo test` runs 802.11b 1 Mbit/s (W = 32, m = 5) for n ∈ {1, 2, 5, 10, 20, 50} with basic
//! and RTS/CTS access, 100 s simulated each (plus 1 s warm-up): about 3 s in a debug build.
//! Environment variables: `TPSIM_MAC_FULL=1` adds 802.11a 6 Mbit/s (W = 16, m = 6, control
//! frames at 6 Mbit/s) for the same n; `TPSIM_MAC_SECONDS=<s>` changes the measured time;
//! `TPSIM_MAC_RETRY_LIMIT=<k>` changes the short retry limit (the model follows). Run with
//! `-- --nocapture` to see the tables.

use tpsim_core::{Module, OwnerKind, RngStream, SimDuration, SimTime, StreamKey};
use tpsim_mac::bianchi::{solve as bianchi, tau_of_p, times, window, Access as ModelAccess, Times};
use tpsim_mac::{Dcf, DcfConfig, Frame, MacEvent, Msdu};
use tpsim_phy::WifiRate;

const MSDU_BYTES: u32 = 1500;
const RECEIVER: usize = 0;
const TOLERANCE: f64 = 0.03;

// ------------------------------------------------------------ the ideal shared medium

struct OnAir {
    sender: usize,
    frame: Frame,
    end: SimTime,
    collided: bool,
    /// Other stations that transmitted during this frame (they cannot receive it).
    overlapping: Vec<usize>,
}

struct Medium {
    stations: Vec<Dcf>,
    timeouts: Vec<Option<SimTime>>,
    /// Frames on the air heard by each station (its own excluded): CCA is busy while > 0.
    heard: Vec<u32>,
    on_air: Vec<OnAir>,
    work: Vec<usize>,
    next_handle: u64,
    warmup_end: SimTime,
    delivered: u64,
}

impl Medium {
    fn new(n: usize, cfg: DcfConfig, seed: u64, warmup_end: SimTime) -> Medium {
        let stations = (0..=n)
            .map(|i| {
                let key = StreamKey {
                    seed,
                    run: 0,
                    kind: OwnerKind::Node,
                    owner_id: i as u64,
                    module: Module::MacBackoff,
                };
                Dcf::new(cfg, i as u32, RngStream::new(key))
            })
            .collect();
        Medium {
            stations,
            timeouts: vec![None; n + 1],
            heard: vec![0; n + 1],
            on_air: Vec::with_capacity(8),
            work: Vec::with_capacity(64),
            next_handle: 0,
            warmup_end,
            delivered: 0,
        }
    }

    fn saturate(&mut self, k: usize, now: SimTime) {
        if k != RECEIVER && self.stations[k].ready() {
            self.next_handle += 1;
            self.stations[k].send(
                now,
                Msdu {
                    dst: RECEIVER as u32,
                    bytes: MSDU_BYTES,
                    handle: self.next_handle,
                },
            );
        }
    }

    /// Polls every station touched by an input until nothing more comes out.
    fn drain(&mut self, now: SimTime) {
        while let Some(k) = self.work.pop() {
            loop {
                if let Some(frame) = self.stations[k].poll_transmit(now) {
                    self.start_tx(k, frame, now);
                    continue;
                }
                match self.stations[k].poll_event() {
                    Some(MacEvent::Delivered { .. }) => {
                        if now >= self.warmup_end {
                            self.delivered += 1;
                        }
                    }
                    Some(MacEvent::TxOk { .. } | MacEvent::TxFailed { .. }) => self.saturate(k, now),
                    None => break,
                }
            }
            self.timeouts[k] = self.stations[k].poll_timeout();
        }
    }

    fn start_tx(&mut self, k: usize, frame: Frame, now: SimTime) {
        let collided = !self.on_air.is_empty();
        let mut overlapping = Vec::new();
        for f in &mut self.on_air {
            f.collided = true;
            f.overlapping.push(k);
            overlapping.push(f.sender);
        }
        self.on_air.push(OnAir {
            sender: k,
            frame,
            end: now + frame.airtime,
            collided,
            overlapping,
        });
        for j in 0..self.stations.len() {
            if j == k {
                continue;
            }
            self.heard[j] += 1;
            if self.heard[j] == 1 {
                self.stations[j].on_medium_busy(now);
                self.work.push(j);
            }
        }
    }

    fn end_tx(&mut self, i: usize, now: SimTime) {
        let f = self.on_air.swap_remove(i);
        self.stations[f.sender].on_tx_end(now);
        self.work.push(f.sender);
        for j in 0..self.stations.len() {
            if j == f.sender {
                continue;
            }
            let transmitting = f.overlapping.contains(&j) || self.on_air.iter().any(|g| g.sender == j);
            if !transmitting {
                if f.collided {
                    self.stations[j].on_rx_error(now);
                } else {
                    self.stations[j].on_rx(now, &f.frame);
                }
            }
            self.heard[j] -= 1;
            if self.heard[j] == 0 {
                self.stations[j].on_medium_idle(now);
            }
            self.work.push(j);
        }
    }

    /// Runs until `end`; returns MSDUs delivered after the warm-up.
    fn run(&mut self, end: SimTime) -> u64 {
        let now = SimTime::ZERO;
        for k in 0..self.stations.len() {
            self.saturate(k, now);
            self.work.push(k);
        }
        self.drain(now);
        loop {
            let next_end = self.on_air.iter().map(|f| f.end).min();
            let next_timer = self.timeouts.iter().flatten().min().copied();
            let now = match (next_end, next_timer) {
                (Some(a), Some(b)) => a.min(b),
                (a, b) => a.or(b).expect("a saturated network always has something to do"),
            };
            if now > end {
                return self.delivered;
            }
            while let Some(i) = self.on_air.iter().position(|f| f.end == now) {
                self.end_tx(i, now);
                self.drain(now);
            }
            for k in 0..self.stations.len() {
                if self.timeouts[k].is_some_and(|t| t <= now) {
                    self.stations[k].on_timeout(now);
                    self.work.push(k);
                    self.drain(now);
                }
            }
        }
    }
}

// ------------------------------------------------------------ Bianchi's model

#[derive(Clone, Copy, Debug, PartialEq)]
enum Access {
    Basic,
    RtsCts,
}

struct Row {
    n: u32,
    access: Access,
    classic: f64,
    model: f64,
    sim: f64,
    tau: f64,
    p_model: f64,
    p_sim: f64,
}

fn run_case(rate: WifiRate, n: u32, access: Access, measured_s: u64) -> Row {
    let mut cfg = DcfConfig::new(rate);
    cfg.rts_threshold_bytes = match access {
        Access::Basic => None,
        Access::RtsCts => Some(0),
    };
    if let Some(limit) = std::env::var("TPSIM_MAC_RETRY_LIMIT").ok().and_then(|s| s.parse().ok()) {
        cfg.short_retry_limit = limit;
    }
    let (w, m) = window(&cfg);
    let model_access = match access {
        Access::Basic => ModelAccess::Basic,
        Access::RtsCts => ModelAccess::RtsCts,
    };
    // The paper's model (infinite retries, T_c = head + DIFS) and the one describing the
    // simulated protocol (retry limit, T_c = head + EIFS).
    let classic = bianchi(n, w, m, None, times(&cfg, MSDU_BYTES, model_access, false));
    let model = bianchi(
        n,
        w,
        m,
        Some(cfg.short_retry_limit),
        times(&cfg, MSDU_BYTES, model_access, true),
    );

    let warmup = SimTime(SimDuration::from_secs(1).0);
    let end = warmup + SimDuration::from_secs(measured_s);
    let mut medium = Medium::new(n as usize, cfg, 0x5EED_0000 + n as u64, warmup);
    let delivered = medium.run(end);
    let sim = delivered as f64 * (MSDU_BYTES * 8) as f64 / (measured_s as f64 * rate.bps() as f64);
    // The simulated conditional collision probability: failed attempts (DATA in basic access,
    // RTS with RTS/CTS) / attempts.
    let (mut attempts, mut failures) = (0u64, 0u64);
    for st in &medium.stations[1..] {
        let x = st.stats();
        attempts += match access {
            Access::Basic => x.data_sent,
            Access::RtsCts => x.rts_sent,
        };
        failures += x.ack_timeouts + x.cts_timeouts;
    }
    let p_sim = failures as f64 / attempts as f64;
    Row {
        n,
        access,
        classic: classic.s,
        model: model.s,
        sim,
        tau: model.tau,
        p_model: model.p,
        p_sim,
    }
}

fn measured_seconds() -> u64 {
    std::env::var("TPSIM_MAC_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100)
}

/// Runs n ∈ {1, 2, 5, 10, 20, 50}, prints the table and asserts |sim − model| ≤ 3 % of the
/// model (and of the classic model too when `classic_too`).
fn check_matrix(rate: WifiRate, access: Access, classic_too: bool) {
    let secs = measured_seconds();
    let rows: Vec<Row> = [1, 2, 5, 10, 20, 50]
        .into_iter()
        .map(|n| run_case(rate, n, access, secs))
        .collect();
    let mut out = format!("{rate:?}, {access:?} access, {secs} s measured (S as a fraction of the data rate)\n");
    out += &format!(
        "{:>4} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9}\n",
        "n", "tau_mod", "p_model", "p_sim", "S_classic", "S_model", "S_sim", "err_cls%", "err_mod%"
    );
    let mut failures = vec![];
    for r in &rows {
        let e_classic = 100.0 * (r.sim - r.classic) / r.classic;
        let e_model = 100.0 * (r.sim - r.model) / r.model;
        out += &format!(
            "{:>4} {:>8.5} {:>8.4} {:>8.4} {:>9.4} {:>9.4} {:>9.4} {:>+9.2} {:>+9.2}\n",
            r.n, r.tau, r.p_model, r.p_sim, r.classic, r.model, r.sim, e_classic, e_model
        );
        if e_model.abs() > 100.0 * TOLERANCE || (classic_too && e_classic.abs() > 100.0 * TOLERANCE) {
            failures.push(format!(
                "n={} {:?}: sim {:.4} vs model {:.4} / classic {:.4}",
                r.n, r.access, r.sim, r.model, r.classic
            ));
        }
    }
    eprint!("{out}");
    assert!(failures.is_empty(), "outside ±3 %: {failures:?}");
}

fn full() -> bool {
    std::env::var("TPSIM_MAC_FULL").is_ok_and(|v| v != "0")
}

#[test]
fn model_reproduces_the_reference_fixed_points() {
    const UNIT: Times = Times {
        sigma: 20.0,
        ts: 1.0,
        tc: 1.0,
        payload: 1.0,
    };
    // Bianchi's model solved for DSSS W = 32, m = 5: n = 10 τ = 0.03731, p = 0.2898; n = 50 τ = 0.01539.
    let m = bianchi(10, 32.0, 5, None, UNIT);
    assert!(
        (m.tau - 0.03731).abs() < 5e-5 && (m.p - 0.2898).abs() < 5e-4,
        "τ {} p {}",
        m.tau,
        m.p
    );
    let m = bianchi(50, 32.0, 5, None, UNIT);
    assert!((m.tau - 0.01539).abs() < 5e-5, "τ {}", m.tau);
    // The closed form of Bianchi's eq. 7 agrees with the renewal form.
    for p in [0.1f64, 0.3, 0.49, 0.51, 0.7] {
        let closed = 2.0 * (1.0 - 2.0 * p) / ((1.0 - 2.0 * p) * 33.0 + p * 32.0 * (1.0 - libm::pow(2.0 * p, 5.0)));
        assert!((tau_of_p(p, 32.0, 5, None) - closed).abs() < 1e-12);
    }
    // 802.11b, 1500 B, basic access, n = 1: 0.9166 of 1 Mbit/s.
    let m = bianchi(
        1,
        32.0,
        5,
        None,
        Times {
            sigma: 20.0,
            ts: 12416.0 + 10.0 + 304.0 + 50.0,
            tc: 0.0,
            payload: 12000.0,
        },
    );
    assert!((m.s - 0.9166).abs() < 2e-4, "S {}", m.s);
}

#[test]
fn dsss_1mbps_basic_access_matches_bianchi() {
    check_matrix(WifiRate::Dsss1, Access::Basic, true);
}

#[test]
fn dsss_1mbps_rts_cts_matches_bianchi() {
    check_matrix(WifiRate::Dsss1, Access::RtsCts, true);
}

#[test]
fn ofdm_6mbps_matches_bianchi_when_full() {
    if !full() {
        eprintln!("802.11a matrix skipped: set TPSIM_MAC_FULL=1");
        return;
    }
    // Checked against the refined model only: with W = 16 and p ≈ 0.6 at n = 50, the retry
    // limit alone moves the model by 5.7 % (see the module doc).
    check_matrix(WifiRate::Ofdm6, Access::Basic, false);
    check_matrix(WifiRate::Ofdm6, Access::RtsCts, false);
}

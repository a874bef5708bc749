//! The ns-2-style radio energy model: each node's radio draws a constant power in each state
//! (transmitting, receiving, idle; sleeping is not entered by the 802.11 DCF without power
//! save), and its energy is the integral of that power over time, settled exactly at every
//! state change (times are integer nanoseconds, so a scripted schedule gives its energy to
//! floating-point rounding).
//!
//! States: *tx* while the node's own frame is on the air; otherwise *rx* while at least one
//! frame above the carrier-sense threshold is on the air at the node (decodable or not: the
//! receiver is busy either way, as ns-2's `WirelessPhy` charges reception for every packet it
//! senses); otherwise *idle*. With death enabled, a node dies at the instant its energy
//! reaches zero, which [`EnergyModel::death_time`] predicts after every change.

use tpsim_core::{SimDuration, SimTime};

/// One node's energy account.
#[derive(Clone, Copy, Debug, Default)]
pub struct NodeEnergy {
    /// Energy spent up to `since`, J.
    pub consumed_j: f64,
    /// Time of the last settlement.
    pub since: SimTime,
    /// Own transmission on the air.
    pub tx: bool,
    /// Frames above the carrier-sense threshold on the air here.
    pub sensing: u32,
    /// When the node died, if it did.
    pub dead_at: Option<SimTime>,
    /// Generation of the pending death event (stale events are skipped).
    pub gen: u32,
}

/// Energy accounts of all nodes.
#[derive(Clone, Debug)]
pub struct EnergyModel {
    /// Initial energy of every node, J.
    pub initial_j: f64,
    /// Power while transmitting, receiving, idle, W.
    pub tx_w: f64,
    pub rx_w: f64,
    pub idle_w: f64,
    /// Whether nodes die when their energy is spent.
    pub death: bool,
    pub nodes: Vec<NodeEnergy>,
    /// Consumed energy per node and time-series bin, J (empty when not recorded).
    pub bins: Vec<Vec<f64>>,
    pub bin_ns: u64,
}

impl EnergyModel {
    /// `n` nodes with `initial_j` each and powers [tx, rx, idle, sleep] (W).
    pub fn new(n: usize, initial_j: f64, powers: [f64; 4], death: bool, bins: Option<(u64, usize)>) -> Self {
        EnergyModel {
            initial_j,
            tx_w: powers[0],
            rx_w: powers[1],
            idle_w: powers[2],
            death,
            nodes: vec![NodeEnergy::default(); n],
            bins: match bins {
                Some((_, nb)) => vec![vec![0.0; nb]; n],
                None => Vec::new(),
            },
            bin_ns: bins.map(|b| b.0).unwrap_or(1),
        }
    }

    /// The power node `i` draws now, W.
    #[inline]
    pub fn power(&self, i: usize) -> f64 {
        let e = &self.nodes[i];
        if e.dead_at.is_some() {
            0.0
        } else if e.tx {
            self.tx_w
        } else if e.sensing > 0 {
            self.rx_w
        } else {
            self.idle_w
        }
    }

    /// Charges node `i` for the time since its last settlement (up to `now`).
    pub fn settle(&mut self, i: usize, now: SimTime) {
        let p = self.power(i);
        let e = &mut self.nodes[i];
        if now <= e.since {
            return;
        }
        let from = e.since;
        e.consumed_j += p * (now - from).as_secs_f64();
        e.since = now;
        if p > 0.0 && !self.bins.is_empty() {
            // Split the interval over the bins it covers.
            let row = &mut self.bins[i];
            let (mut a, b) = (from.0, now.0);
            while a < b {
                let bin = (a / self.bin_ns) as usize;
                let end = ((bin as u64 + 1) * self.bin_ns).min(b);
                if let Some(x) = row.get_mut(bin) {
                    *x += p * (end - a) as f64 * 1e-9;
                }
                a = end;
            }
        }
    }

    /// Node `i` starts (`on`) or stops transmitting at `now`.
    pub fn set_tx(&mut self, i: usize, now: SimTime, on: bool) {
        self.settle(i, now);
        self.nodes[i].tx = on;
    }

    /// A sensed frame starts (`+1`) or ends (`-1`) at node `i` at `now`.
    pub fn sense(&mut self, i: usize, now: SimTime, start: bool) {
        self.settle(i, now);
        let e = &mut self.nodes[i];
        e.sensing = if start {
            e.sensing + 1
        } else {
            e.sensing.saturating_sub(1)
        };
    }

    /// Node `i`'s radio is switched off at `now` (a fault event): it stops transmitting and
    /// sensing; it draws idle power until it senses or sends again.
    pub fn radio_idle(&mut self, i: usize, now: SimTime) {
        self.settle(i, now);
        let e = &mut self.nodes[i];
        e.tx = false;
        e.sensing = 0;
    }

    /// When node `i` runs out at its current power (`None`: never, or death disabled).
    pub fn death_time(&self, i: usize) -> Option<SimTime> {
        let e = &self.nodes[i];
        let p = self.power(i);
        if !self.death || e.dead_at.is_some() || p <= 0.0 {
            return None;
        }
        let left = (self.initial_j - e.consumed_j).max(0.0);
        // Round up: the node is dead at the first nanosecond its energy is gone.
        Some(e.since + SimDuration((left / p * 1e9).ceil() as u64))
    }

    /// Marks node `i` dead at `now`: its account stops at exactly the initial energy.
    pub fn kill(&mut self, i: usize, now: SimTime) {
        self.settle(i, now);
        let e = &mut self.nodes[i];
        e.consumed_j = self.initial_j;
        e.dead_at = Some(now);
    }

    /// Whether node `i` is dead.
    #[inline]
    pub fn dead(&self, i: usize) -> bool {
        self.nodes[i].dead_at.is_some()
    }
}

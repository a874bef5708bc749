//! Deterministic random streams.
//!
//! Every consumer of randomness (a flow's traffic generator, a link's error model, later a
//! node's mobility or a MAC's backoff) owns its own [`RngStream`]. The stream's seed is a
//! stable function of a [`StreamKey`] = (master seed, run index, owner kind, owner id, module):
//!
//! ```text
//! mix(x)  = SplitMix64 finalizer: z = x + 0x9E3779B97F4A7C15;
//!           z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; z = (z ^ z>>27) * 0x94D049BB133111EB;
//!           z ^ z>>31                                          (wrapping arithmetic)
//! h = mix(seed); h = mix(h ^ run); h = mix(h ^ kind); h = mix(h ^ owner_id); h = mix(h ^ module)
//! stream = Xoshiro256++ seeded from h with SplitMix64 (rand_core's `seed_from_u64`)
//! ```
//!
//! The numeric tags of [`OwnerKind`] and [`Module`] are part of this contract and never change.
//! Because no stream depends on how many other streams exist or in which order they were
//! created, adding a flow leaves every other flow's, link's and node's draws unchanged (unlike
//! ns-3's order-dependent `AssignStreams`). Floating-point transforms use `libm` so the draws
//! are the same on every platform.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// Who owns a stream. The discriminants are part of the seed derivation; never renumber.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum OwnerKind {
    /// A node (mobility, routing jitter, MAC backoff of its radios ...).
    Node = 1,
    /// An interface or the link/channel attached to it (error models).
    Interface = 2,
    /// A flow (traffic generation, transport randomness).
    Flow = 3,
    /// The scenario as a whole (placement of all nodes, random flow endpoints).
    Scenario = 4,
}

/// What a stream is used for. The discriminants are part of the seed derivation; never
/// renumber, only append.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u64)]
pub enum Module {
    /// Application traffic: inter-arrival times, sizes.
    Traffic = 1,
    /// A link's error model (Bernoulli loss).
    ErrorModel = 2,
    /// Node movement.
    Mobility = 3,
    /// MAC backoff draws.
    MacBackoff = 4,
    /// Routing protocol jitter.
    Routing = 5,
    /// Initial placement.
    Placement = 6,
    /// Transport protocol randomness (initial sequence numbers ...).
    Transport = 7,
    /// Reverse direction of a two-way application.
    TrafficReverse = 8,
    /// A sender's propagation draws (log-normal shadowing).
    Channel = 9,
    /// A radio's reception draws (the SINR receiver's `ber` error model).
    PhyReception = 10,
    /// ARP request jitter.
    Arp = 11,
    /// A queue discipline's random drops and marks (RED, PIE).
    Aqm = 12,
    /// An application's start-time draw (`app.start_jitter`).
    AppStart = 13,
}

/// The identity of a random stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StreamKey {
    /// The scenario's master seed.
    pub seed: u64,
    /// Replication index (0-based).
    pub run: u64,
    /// Kind of owner.
    pub kind: OwnerKind,
    /// Index of the owner among owners of its kind (node index, interface index, flow index).
    pub owner_id: u64,
    /// Purpose of the stream.
    pub module: Module,
}

/// SplitMix64's output function (Steele, Lea, Flood 2014), used to derive stream seeds.
#[inline]
pub const fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl StreamKey {
    /// The 64-bit seed of this stream (see the module doc for the function).
    pub fn derive(&self) -> u64 {
        let mut h = splitmix64(self.seed);
        h = splitmix64(h ^ self.run);
        h = splitmix64(h ^ self.kind as u64);
        h = splitmix64(h ^ self.owner_id);
        splitmix64(h ^ self.module as u64)
    }
}

/// One independent random stream (Xoshiro256++).
#[derive(Clone, Debug)]
pub struct RngStream {
    inner: Xoshiro256PlusPlus,
}

impl RngStream {
    /// The stream identified by `key`.
    pub fn new(key: StreamKey) -> Self {
        RngStream {
            inner: Xoshiro256PlusPlus::seed_from_u64(key.derive()),
        }
    }

    /// The stream of a seed already derived from a key ([`StreamKey::derive`]).
    pub fn from_seed(seed: u64) -> Self {
        RngStream {
            inner: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    /// 64 uniformly random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.inner.next_u64()
    }

    /// A uniform draw in [0, 1) with 53 bits of precision.
    #[inline]
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform draw in [lo, hi).
    #[inline]
    pub fn uniform_range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// `true` with probability `p` (p ≤ 0 never, p ≥ 1 always).
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.uniform() < p
    }

    /// An exponential draw with the given mean (inverse transform, `libm::log`).
    #[inline]
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - u lies in (0, 1], so the log is finite.
        -mean * libm::log(1.0 - self.uniform())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(owner_id: u64, module: Module) -> StreamKey {
        StreamKey {
            seed: 1,
            run: 0,
            kind: OwnerKind::Flow,
            owner_id,
            module,
        }
    }

    #[test]
    fn splitmix64_matches_reference_vector() {
        // First outputs of the reference SplitMix64 generator seeded with 0 are
        // mix(0x9E3779B97F4A7C15·k - 0x9E37..) i.e. mix applied to 0, γ, 2γ...
        assert_eq!(splitmix64(0), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn same_key_same_stream_and_keys_differ() {
        let a: Vec<u64> = (0..4)
            .scan(RngStream::new(key(3, Module::Traffic)), |r, _| Some(r.next_u64()))
            .collect();
        let b: Vec<u64> = (0..4)
            .scan(RngStream::new(key(3, Module::Traffic)), |r, _| Some(r.next_u64()))
            .collect();
        assert_eq!(a, b);
        for other in [key(4, Module::Traffic), key(3, Module::ErrorModel)] {
            assert_ne!(RngStream::new(other).next_u64(), a[0]);
        }
        let mut run1 = key(3, Module::Traffic);
        run1.run = 1;
        assert_ne!(RngStream::new(run1).next_u64(), a[0]);
    }

    #[test]
    fn exponential_mean_is_close() {
        let mut r = RngStream::new(key(0, Module::Traffic));
        let n = 200_000;
        let m: f64 = (0..n).map(|_| r.exponential(2.0)).sum::<f64>() / n as f64;
        assert!((m - 2.0).abs() < 0.02, "mean {m}");
    }

    #[test]
    fn uniform_is_in_unit_interval() {
        let mut r = RngStream::new(key(9, Module::ErrorModel));
        for _ in 0..10_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
        }
    }
}

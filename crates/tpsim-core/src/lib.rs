//! tpsim-core: the pieces every other tpsim crate stands on.
//!
//! * [`SimTime`] and [`SimDuration`]: simulation time as integer nanoseconds (never `f64`).
//! * [`EventQueue`]: a priority queue ordered by (time, insertion order) that refuses to go
//!   backwards in time.
//! * [`rng`]: deterministic random streams keyed by (seed, run, owner kind, owner id, module),
//!   so that adding a flow or a node leaves every unrelated stream unchanged.
//!
//! Protocol crates depend on this crate and on `tpsim-wire` only; nothing here knows about
//! events of a particular kind, nodes or Python.

pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod time;

pub use prefetch::{prefetch, prefetch_slice};
pub use queue::EventQueue;
pub use rng::{Module, OwnerKind, RngStream, StreamKey};
pub use time::{SimDuration, SimTime};

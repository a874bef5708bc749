//! tpsim-engine: one simulation run as a single-threaded, deterministic event loop.
//!
//! [`run`] takes a validated [`Scenario`](tpsim_scenario::Scenario) and [`RunOptions`]
//! (seed, replication index, pcap directory) and returns a [`RunResult`]: the flows table (one
//! row per flow direction), the network row and the binned time series. Only this crate
//! knows about events; protocols are sans-IO state machines in their own crates.
//!
//! The run's parts each live in a module of their own with private state (applications
//! [`apps`], transport endpoints [`sockets`], IP [`net`], point-to-point [`device`], 802.11
//! [`wifi`], [`energy`], the metrics [`collect`]); [`world`] owns them and moves packets and
//! events between them, one glue file per layer (its module doc has the map). The result
//! tables go out as plain named columns ([`table`]).

pub mod acktrace;
pub mod apps;
pub mod aqm;
pub mod collect;
pub mod device;
pub mod energy;
pub mod grid;
pub mod memory;
pub mod metrics;
pub mod mobility;
pub mod movie;
pub mod net;
pub mod packet;
pub mod phyrx;
pub mod pkttrace;
pub mod priqueue;
pub mod sockets;
pub mod stream;
pub mod table;
pub mod trace;
pub mod wifi;
pub mod world;

pub use world::CTRL_TYPES;

pub use metrics::{DropReason, FlowKey, FlowRow, NetworkRow, RunResult, SeriesTable};
pub use stream::{Streams, TableSink};
pub use table::{Column, Table};
pub use world::{RunOptions, World};

/// What can go wrong while running a valid scenario.
#[derive(Debug)]
pub enum EngineError {
    /// Writing a trace file or a streamed output failed.
    Io(std::io::Error),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Io(e) => write!(f, "trace output failed: {e}"),
        }
    }
}

impl std::error::Error for EngineError {}

impl From<EngineError> for std::io::Error {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Io(e) => e,
        }
    }
}

impl From<std::io::Error> for EngineError {
    fn from(e: std::io::Error) -> Self {
        EngineError::Io(e)
    }
}

/// Builds, runs and collects one run of a validated scenario.
///
/// # Errors
/// [`EngineError::Io`] if a requested pcap file cannot be written.
pub fn run(sc: &tpsim_scenario::Scenario, opts: &RunOptions) -> Result<RunResult, EngineError> {
    world::run_world(sc, opts)
}

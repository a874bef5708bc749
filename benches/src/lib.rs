//! Benchmarks crate: see benches/.

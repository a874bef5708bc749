//! Streamed outputs: the tables that grow with the length of a run (the packet trace, its
//! ns-2 text, the per-ACK samples) handed out in batches while the run goes, as ns-2 and
//! ns-3 write their traces, instead of being held until its end.
//!
//! A caller gives a [`World`](crate::World) its [`Streams`] before running it. Each stream
//! it gives receives that table's rows in batches of [`Streams::batch_rows`] rows (and the
//! rest at the end of the run); a table without a stream is kept in memory and returned in
//! the [`RunResult`](crate::RunResult) as before. The engine's memory for a streamed table
//! is then one batch, whatever the run's duration or size. Rows, their order and their
//! values do not depend on the batch size.

use crate::table::Table;
use std::io::{self, Write};

/// Rows a streamed table hands out at a time (64 Ki: a few megabytes of columns).
pub const BATCH_ROWS: usize = 1 << 16;

/// Receives a table's rows in batches, in order.
///
/// The engine calls [`TableSink::write_batch`] once per batch, with every batch having the
/// same columns, at least once (a run without rows gives one empty batch, so that the sink
/// knows the columns), then [`TableSink::finish`] once at the end of the run.
pub trait TableSink: Send {
    /// The next rows of the table.
    ///
    /// # Errors
    /// Whatever writing them fails with; the engine then stops streaming that table and
    /// reports the error at the end of the run.
    fn write_batch(&mut self, batch: &Table) -> io::Result<()>;

    /// The table is complete.
    ///
    /// # Errors
    /// Whatever completing the output fails with.
    fn finish(&mut self) -> io::Result<()>;
}

/// Where a run streams its growing outputs (see the module doc). A `None` keeps that table
/// in memory.
pub struct Streams {
    /// The packet trace (`[output] trace`, or `ns2_trace`, whose rows and columns it then
    /// has), columns as [`crate::pkttrace::PacketTrace::table`].
    pub trace: Option<Box<dyn TableSink>>,
    /// The ns-2 trace text (`[output] ns2_trace`) in the scenario's format, one `\n`-ended
    /// ASCII line per row that the format shows (docs/ns2-trace.md).
    pub ns2: Option<Box<dyn Write + Send>>,
    /// The per-ACK samples (`[output] ack_samples`), columns as
    /// [`crate::acktrace::AckTrace::table`].
    pub acks: Option<Box<dyn TableSink>>,
    /// Rows per batch ([`BATCH_ROWS`] by default; at least 1).
    pub batch_rows: usize,
}

impl Default for Streams {
    fn default() -> Self {
        Streams {
            trace: None,
            ns2: None,
            acks: None,
            batch_rows: BATCH_ROWS,
        }
    }
}

impl std::fmt::Debug for Streams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Streams")
            .field("trace", &self.trace.is_some())
            .field("ns2", &self.ns2.is_some())
            .field("acks", &self.acks.is_some())
            .field("batch_rows", &self.batch_rows)
            .finish()
    }
}

/// A table sink that keeps every batch in memory, concatenated: for tests, and for callers
/// that want a streamed run's table back in one piece.
#[derive(Clone, Debug, Default)]
pub struct MemorySink {
    /// The rows received so far (the columns of the first batch).
    pub table: Table,
    /// Batches received.
    pub batches: usize,
    /// Whether [`TableSink::finish`] was called.
    pub finished: bool,
}

impl TableSink for MemorySink {
    fn write_batch(&mut self, batch: &Table) -> io::Result<()> {
        if self.batches == 0 {
            self.table = batch.clone();
        } else {
            self.table.append(batch);
        }
        self.batches += 1;
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.finished = true;
        Ok(())
    }
}

/// A [`TableSink`] or writer shared with the caller, so that it can be read after the run
/// (`Arc<Mutex<_>>` inside): `Shared::new(MemorySink::default())`, hand a clone to
/// [`Streams`], read the original when the run is done.
#[derive(Debug, Default)]
pub struct Shared<T>(pub std::sync::Arc<std::sync::Mutex<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(self.0.clone())
    }
}

impl<T> Shared<T> {
    /// `inner`, shared.
    pub fn new(inner: T) -> Self {
        Shared(std::sync::Arc::new(std::sync::Mutex::new(inner)))
    }

    /// The inner value, locked.
    ///
    /// # Panics
    /// If a thread panicked while holding it.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, T> {
        self.0.lock().expect("a shared sink's lock is never poisoned")
    }
}

impl<T: TableSink> TableSink for Shared<T> {
    fn write_batch(&mut self, batch: &Table) -> io::Result<()> {
        self.lock().write_batch(batch)
    }

    fn finish(&mut self) -> io::Result<()> {
        self.lock().finish()
    }
}

impl<T: Write + Send> Write for Shared<T> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock().write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.lock().flush()
    }
}

/// A streamed table's state in the engine: its sink, the first error, whether a batch went
/// out.
pub(crate) struct SinkState {
    sink: Box<dyn TableSink>,
    error: Option<io::Error>,
    sent: bool,
}

impl SinkState {
    pub(crate) fn new(sink: Box<dyn TableSink>) -> SinkState {
        SinkState {
            sink,
            error: None,
            sent: false,
        }
    }

    /// Hands `batch()` to the sink unless an earlier batch failed (the error is kept for
    /// [`Self::finish`]). `last`: the end of the run; an empty batch is then sent only if
    /// none was.
    pub(crate) fn send(&mut self, rows: usize, last: bool, batch: impl FnOnce() -> Table) {
        if self.error.is_some() || (rows == 0 && (!last || self.sent)) {
            return;
        }
        self.sent = true;
        if let Err(e) = self.sink.write_batch(&batch()) {
            self.error = Some(e);
        }
    }

    /// Completes the sink; the first error of the run, if any.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        self.sink.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::Column;

    fn batch(rows: usize) -> Table {
        let mut t = Table::default();
        t.push("x", Column::U64(vec![7; rows]));
        t
    }

    #[test]
    fn an_empty_batch_goes_out_only_to_name_the_columns_of_a_table_without_rows() {
        let sink = Shared::new(MemorySink::default());
        let mut s = SinkState::new(Box::new(sink.clone()));
        s.send(0, false, || batch(0));
        assert_eq!(sink.lock().batches, 0, "an empty batch mid-run is not sent");
        s.send(0, true, || batch(0));
        s.finish().unwrap();
        assert_eq!(sink.lock().batches, 1, "the run had no rows: its columns go out once");
        assert_eq!(sink.lock().table, batch(0));

        let sink = Shared::new(MemorySink::default());
        let mut s = SinkState::new(Box::new(sink.clone()));
        s.send(3, false, || batch(3));
        s.send(0, true, || batch(0));
        assert_eq!(sink.lock().batches, 1, "no empty batch after rows");
        assert_eq!(sink.lock().table.rows(), 3);
    }
}

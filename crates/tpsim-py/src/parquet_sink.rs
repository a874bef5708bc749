//! A [`TableSink`] that writes a table to a Parquet file as it streams, one row group per
//! batch, so that a run's trace goes to disk while it runs and never reaches Python as
//! values. Columns map to Parquet as: unsigned counts `INT64` (unsigned), optional indices
//! `INT32` (unsigned, nullable), measurements `DOUBLE` (nullable), labels `BYTE_ARRAY`
//! strings (dictionary-encoded by the writer), flags `BOOLEAN`. The Python side reads these
//! files lazily and casts each column to its documented type.

use parquet::basic::{LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tpsim_engine::{Column, Table, TableSink};

/// Rows per row group when a whole table is written at once ([`write_table`]).
const ROW_GROUP_ROWS: usize = 1 << 20;

/// Writes the batches it receives to a Parquet file, created at the first batch.
pub struct ParquetSink {
    path: PathBuf,
    writer: Option<SerializedFileWriter<BufWriter<File>>>,
}

impl ParquetSink {
    /// A sink writing `path` (created, or truncated, at the first batch).
    pub fn new(path: impl Into<PathBuf>) -> ParquetSink {
        ParquetSink {
            path: path.into(),
            writer: None,
        }
    }

    /// An error naming the file (its kind and OS error kept: a full disk stays one).
    fn err(&self, e: io::Error) -> io::Error {
        crate::file_error(&self.path, e)
    }
}

fn io_or(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(io) => *io,
            Err(other) => io::Error::other(other),
        },
        other => io::Error::other(other),
    }
}

/// The Parquet field of a column.
fn field(name: &str, col: &Column) -> Result<TypePtr, ParquetError> {
    let unsigned = |bits| Some(LogicalType::integer(bits, false));
    let (physical, logical, repetition) = match col {
        Column::U64(_) => (PhysicalType::INT64, unsigned(64), Repetition::REQUIRED),
        Column::OptU32(_) => (PhysicalType::INT32, unsigned(32), Repetition::OPTIONAL),
        Column::F64(_) => (PhysicalType::DOUBLE, None, Repetition::OPTIONAL),
        Column::Text(_) => (
            PhysicalType::BYTE_ARRAY,
            Some(LogicalType::String),
            Repetition::REQUIRED,
        ),
        Column::OptText(_) => (
            PhysicalType::BYTE_ARRAY,
            Some(LogicalType::String),
            Repetition::OPTIONAL,
        ),
        Column::Bool(_) => (PhysicalType::BOOLEAN, None, Repetition::REQUIRED),
    };
    Ok(Arc::new(
        Type::primitive_type_builder(name, physical)
            .with_repetition(repetition)
            .with_logical_type(logical)
            .build()?,
    ))
}

fn schema(t: &Table) -> Result<TypePtr, ParquetError> {
    let fields = t
        .columns
        .iter()
        .map(|(name, col)| field(name, col))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(
        Type::group_type_builder("schema").with_fields(fields).build()?,
    ))
}

/// Definition levels of an optional column (1: a value, 0: null) and its values.
fn split<T: Copy, U>(v: &[Option<T>], f: impl Fn(T) -> U) -> (Vec<U>, Vec<i16>) {
    let defs = v.iter().map(|x| i16::from(x.is_some())).collect();
    let values = v.iter().filter_map(|x| x.map(&f)).collect();
    (values, defs)
}

fn text(s: &'static str) -> ByteArray {
    ByteArray::from(bytes::Bytes::from_static(s.as_bytes()))
}

/// Rows `rows` of `t` as one row group of `w`.
fn write_rows(
    w: &mut SerializedFileWriter<BufWriter<File>>,
    t: &Table,
    rows: std::ops::Range<usize>,
) -> Result<(), ParquetError> {
    let mut group = w.next_row_group()?;
    for (_, col) in &t.columns {
        let Some(mut c) = group.next_column()? else {
            return Err(ParquetError::General(
                "fewer columns in the file than in the table".into(),
            ));
        };
        let r = rows.clone();
        match col {
            // Unsigned values are stored in the signed physical type, bit for bit.
            Column::U64(v) => {
                let vals: Vec<i64> = v[r].iter().map(|&x| x as i64).collect();
                c.typed::<Int64Type>().write_batch(&vals, None, None)?;
            }
            Column::OptU32(v) => {
                let (vals, defs) = split(&v[r], |x| x as i32);
                c.typed::<Int32Type>().write_batch(&vals, Some(&defs), None)?;
            }
            Column::F64(v) => {
                let (vals, defs) = split(&v[r], |x| x);
                c.typed::<DoubleType>().write_batch(&vals, Some(&defs), None)?;
            }
            Column::Text(v) => {
                let vals: Vec<ByteArray> = v[r].iter().map(|&s| text(s)).collect();
                c.typed::<ByteArrayType>().write_batch(&vals, None, None)?;
            }
            Column::OptText(v) => {
                let (vals, defs) = split(&v[r], text);
                c.typed::<ByteArrayType>().write_batch(&vals, Some(&defs), None)?;
            }
            Column::Bool(v) => {
                c.typed::<BoolType>().write_batch(&v[r], None, None)?;
            }
        }
        c.close()?;
    }
    group.close()?;
    Ok(())
}

impl TableSink for ParquetSink {
    fn write_batch(&mut self, batch: &Table) -> io::Result<()> {
        if self.writer.is_none() {
            let file = File::create(&self.path).map_err(|e| self.err(e))?;
            let props = WriterProperties::builder()
                .set_created_by(format!("tpsim {}", env!("CARGO_PKG_VERSION")))
                .build();
            let schema = schema(batch).map_err(|e| self.err(io::Error::other(e)))?;
            let w = SerializedFileWriter::new(BufWriter::new(file), schema, Arc::new(props))
                .map_err(|e| self.err(io_or(e)))?;
            self.writer = Some(w);
        }
        let Some(w) = self.writer.as_mut() else { return Ok(()) };
        // An empty batch only names the columns: the file has them without a row group.
        let n = batch.rows();
        let mut start = 0;
        while start < n {
            let end = (start + ROW_GROUP_ROWS).min(n);
            if let Err(e) = write_rows(w, batch, start..end) {
                return Err(self.err(io_or(e)));
            }
            start = end;
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        match self.writer.take() {
            Some(mut w) => {
                w.finish().map_err(|e| self.err(io_or(e)))?;
                Ok(())
            }
            None => Err(self.err(io::Error::other("no rows nor columns were written"))),
        }
    }
}

/// Writes a whole table to `path` as Parquet (row groups of at most 2^20 rows).
///
/// # Errors
/// An I/O error naming the file.
pub fn write_table(t: &Table, path: &Path) -> io::Result<()> {
    let mut sink = ParquetSink::new(path);
    sink.write_batch(t)?;
    sink.finish()
}
